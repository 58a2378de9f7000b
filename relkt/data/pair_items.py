"""What a language report scores from pair files, read once and strictly: each language's held-out pairs, the question
files' rows kept for scoring (and their `train` rows, to centre them), and the checks a teach run makes of its pair
folders before anything trains. Every read goes through one `PairFiles`, so a file is parsed once whoever asks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from relkt.data.parallel_corpus import PairFiles, ParallelCorpus, pair_languages
from relkt.errors import ConfigError, DataError


@dataclass
class PairItems:
    """Every item a languages' report scores: {task: {lang: pairs}} (`pairs`, `questions`, `centers`), and the
    languages."""

    langs: list[str]
    items: dict[str, dict[str, ParallelCorpus]]


def read_pair_items(
    langs: Sequence[str],
    pairs_dir: str,
    dev_pairs: int,
    held_out_sources: Sequence[str] = (),
    questions_dir: str | None = None,
    center: bool = False,
    reader: PairFiles | None = None,
    where: str = "",
    other_domain: Mapping[str, str] | None = None,
) -> PairItems:
    """Each language's held-out pairs (whole sources `held_out_sources`, else each source's last `dev_pairs` rows, as a
    student holds them out), with `other_domain` ({lang: source}) every pair of that source apart (`pairs_other_domain`,
    the other sources' last rows still `pairs`), and, from `questions_dir`, the rows not marked `train`; every file
    read strictly (a broken line is an error naming it: a figure must count every item it was given). `where` names
    the request in errors."""
    reader = reader or PairFiles()
    langs = list(langs)
    if not langs:
        raise ConfigError(f"{where}langs: name at least one language")
    have = pair_languages(pairs_dir)
    missing = [x for x in langs if x not in have]
    if missing:
        raise DataError(
            f"{where}pairs_dir {pairs_dir}: no pairs for {', '.join(missing)}; it holds {', '.join(have) or 'none'}"
        )
    sources, other = list(held_out_sources), dict(other_domain or {})
    files = {lang: reader.read(pairs_dir, lang, 0.0) for lang in langs}
    pairs = {lang: f.split(0 if sources else dev_pairs, sources, other.get(lang, ""))[1] for lang, f in files.items()}
    items = {"pairs": pairs}
    if other:  # a whole source of each such language, never trained on: bitext of another domain
        outside = [x for x in other if x not in files]
        if outside:
            raise ConfigError(f"{where}other_domain: {', '.join(outside)} is not one of {where}langs")
        items = {"pairs_other_domain": {x: files[x].of_source(s, f"{where}other_domain: ") for x, s in other.items()}}
        items["pairs"] = pairs
    if questions_dir:
        asked = pair_languages(questions_dir)
        # The rows not marked `split = train` (all rows of a file without the column): what no student may train on
        items["questions"] = {lang: reader.read(questions_dir, lang, 0.0).held_out() for lang in langs if lang in asked}
        if not items["questions"]:
            raise DataError(
                f"{where}questions_dir {questions_dir}: no question file for any of {', '.join(langs)} (it holds "
                f"{', '.join(asked) or 'none'})"
            )
        if center:
            items["centers"] = {lang: train_rows(reader, questions_dir, lang, where) for lang in items["questions"]}
    elif center:
        raise ConfigError(f"{where}center centres question files: give {where}questions_dir")
    return PairItems(langs, items)


def train_rows(reader: PairFiles, folder: str, lang: str, where: str = "") -> ParallelCorpus:
    """A question file's `split = train` rows, whose mean embeddings centre its scored rows (center)."""
    pairs = reader.read(folder, lang, max_bad_share=0.0)
    if pairs.splits is None:
        raise DataError(f"{pairs.path}: {where}center needs a `split` column to take the means from `train` rows")
    train = pairs.trainable()
    if not len(train):
        raise DataError(f"{pairs.path}: no `split = train` row to centre its questions with ({where}center)")
    return train


def check_taught_pairs(
    pairs_dir: str,
    trained: Sequence[str],
    watched: Sequence[str],
    dev_pairs: int,
    held_out_sources: Sequence[str],
    questions_dir: str | None,
    reader: PairFiles,
    where: str = "",
    other_domain: Mapping[str, str] | None = None,
) -> None:
    """The pair folders of a run that teaches languages, before it trains: every language has pairs; each holds some
    out for the report (what the student never saw) and, unless only watched, keeps some to train; a question file
    of a trained language has `train` rows."""
    have = pair_languages(pairs_dir)
    missing = [x for x in [*trained, *watched] if x not in have]
    if missing:
        raise DataError(
            f"{where}pairs_dir {pairs_dir}: no pairs for {', '.join(missing)} (no "
            f"{', '.join(x + '.tsv' for x in missing)}); it holds {', '.join(have) or 'no .tsv files'}"
        )
    for lang in [*trained, *watched]:
        other = (other_domain or {}).get(lang, "")
        train, held = reader.read(pairs_dir, lang, max_bad_share=0.0).split(dev_pairs, held_out_sources, other)
        if not len(held):
            raise DataError(
                f"{Path(pairs_dir) / f'{lang}.tsv'}: no held-out document to score (data.corpus_dev_pairs = "
                f"{dev_pairs}): the report would have nothing the student never saw; hold out some pairs"
            )
        if not len(train) and lang not in watched:
            raise DataError(f"{Path(pairs_dir) / f'{lang}.tsv'}: every pair is held out; none left to train")
    if questions_dir:
        asked = pair_languages(questions_dir)
        for lang in [x for x in trained if x in asked]:
            pairs = reader.read(questions_dir, lang, max_bad_share=0.0)
            if pairs.splits is None or not len(pairs.trainable()):
                raise DataError(
                    f"{pairs.path}: no `split = train` row: a teach run trains on a question file's train rows alone "
                    f"(the others are scored); mark some rows train, or move the file out of {where}questions_dir"
                )
