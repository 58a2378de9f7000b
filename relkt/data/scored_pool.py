"""Everything one scoring reads, read once and before any model loads: the split's pool, the source it was cut from,
the English answer units of the XX->EN protocol, the measured split, the dev pool a language-aware ranking is chosen
on, and each language's held-out translation pairs. A bad file is one error here, never after the encoding."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from relkt.data.alignment_pairs import PAIRS_PER_LANG, AlignmentPairs, language_pairs
from relkt.data.english_answer_units import EnglishAnswerUnits, english_units
from relkt.data.lareqa_pool import LareqaPool
from relkt.data.parallel_corpus import ParallelCorpus, pair_languages, read_pairs
from relkt.data.qa_source import QaSource
from relkt.data.selection import PoolSettings, load_split, measured_split, scored_source
from relkt.data.text import normal_text
from relkt.errors import ConfigError


@dataclass
class ScoredPool:
    """One split of a source as a scoring reads it. `within`: the split the pool was cut by (`all`: scored whole);
    `dev_pool`: the same source's dev split, for a ranking chosen on dev; `corpus`: lang -> held-out pairs."""

    pool: LareqaPool
    source: QaSource
    split: str
    within: str
    units: dict[str, EnglishAnswerUnits]
    described: str
    split_cut: dict[str, Any]
    dev_pool: LareqaPool | None = None
    corpus: dict[str, ParallelCorpus] | None = None
    # the language bias's pairs (none holding a scored text) and every scored text with its language
    bias_pairs: AlignmentPairs | None = None
    lang_of: dict[str, str] | None = None


def read_scored_pool(
    settings: PoolSettings,
    split: str,
    langs: Sequence[str] | None = None,
    xx_en_units: Sequence[str] = (),
    choose_on_dev: bool = False,
    corpus_dir: str | None = None,
    corpus_dev_pairs: int = 500,
    language_pairs_dir: str | None = None,
    with_context: bool = False,
) -> ScoredPool:
    """The split `split` of `settings`' source in `langs` (None: all) with its `xx_en_units`; `choose_on_dev`: also
    the dev split when the test split of a cut source is scored (a ranking chosen there, never on the test pool);
    `corpus_dir`: each pool language's last `corpus_dev_pairs` pairs, held out as a student holds them out;
    `language_pairs_dir`: the pairs a language bias is learned from, none holding a text the scoring encodes."""
    pool = load_split(settings, split, langs=list(langs) if langs else None)
    source, within = scored_source(settings, split)
    units = english_units(source, xx_en_units, scored=[q.qas_id for q in pool.questions])
    cut = measured_split(settings, pool.langs) if within != "all" else {"unit": "article", "overlap": None}
    dev = None
    if choose_on_dev and within == "test" and split == "test":
        dev = load_split(settings, "dev", langs=pool.langs)
        if sorted(dev.langs) != sorted(pool.langs):
            raise ConfigError(
                f"rank_adjust auto: the dev split holds {', '.join(dev.langs)}, the scored pool "
                f"{', '.join(pool.langs)}: not a pool of the same kind to choose on; score the pool whole (split all, "
                "cross-fitted) or fix a setting (center, knn:K, csls:K, margin:K)"
            )
    corpus = held_out_pairs(corpus_dir, corpus_dev_pairs, pool.langs) if corpus_dir else None
    described = pool_line(pool, source, split, within, langs)
    scored = ScoredPool(pool, source, split, within, units, described, cut, dev, corpus)
    if language_pairs_dir:
        scored.lang_of = scored_texts(pool, units, with_context)
        scored.bias_pairs = language_pairs(language_pairs_dir, pool.langs, scored.lang_of.keys(), PAIRS_PER_LANG, 0)
    return scored


def scored_texts(pool: LareqaPool, units: dict[str, EnglishAnswerUnits], with_context: bool) -> dict[str, str]:
    """Every text a scoring of `pool` encodes, in the normal form, with its language: what no pair learned from may
    hold."""
    texts = {normal_text(q.text): q.lang for q in pool.questions}
    for c, text in zip(pool.candidates, pool.candidate_texts(with_context)):
        texts.setdefault(normal_text(text), c.lang)
        texts.setdefault(normal_text(c.sentence), c.lang)
        texts.setdefault(normal_text(c.context), c.lang)  # a paragraph is a scored text when candidates are mixed
    for unit in units.values():
        texts.update({normal_text(t): "en" for t in unit.texts})
    return texts


def held_out_pairs(folder: str, dev_pairs: int, langs: Sequence[str]) -> dict[str, ParallelCorpus]:
    """Each pool language's held-out pairs in `folder` (languages without a file: skipped; none at all: an error)."""
    have = pair_languages(folder)
    dev = {lang: read_pairs(folder, lang).split(dev_pairs)[1] for lang in langs if lang != "en" and lang in have}
    if not dev:
        raise ConfigError(f"corpus_dir {folder}: no {{lang}}.tsv for any of {', '.join(langs)}")
    return dev


def pool_line(pool: LareqaPool, source: QaSource, split: str, within: str, langs: Sequence[str] | None) -> str:
    """What was scored, said once: the split and, for a cut of a source, how many of its questions it holds (a user's
    own file scored without `--split all` is its test split alone, and this line says so)."""
    what = f"{len(pool.questions)} questions, {len(pool.candidates)} candidates, {','.join(pool.langs)}"
    if split == "all" or within != split:
        return f"{what} ({'every question of ' if split == 'all' else 'the test source, whole: '}{source.path})"
    total = sum(len(data.questions) for data in source.read(list(langs) if langs else None))
    return f"{what}: the {split} split of {source.path}, {len(pool.questions)} of its {total} (--split all: every one)"
