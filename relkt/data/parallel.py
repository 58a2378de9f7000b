"""Parallel (q_en, q_x, d) examples for distillation: from the dataset's shared qas_ids, or translated."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from relkt.data.code_switch import CodeSwitcher
from relkt.data.lareqa_pool import LareqaPool
from relkt.data.parallel_corpus import PairFiles, ParallelCorpus, pair_file, pair_languages, read_pairs
from relkt.data.romanize import romanized_rows
from relkt.data.translate import TRANSLATORS, CachedTranslator
from relkt.errors import DataError
from relkt.names import ALL, chosen, named


@dataclass
class ParallelExamples:
    """Row i: the teacher sees `q_source[i]` and `d_teacher[i]`; the student sees `q_target[i]` and `d_student[i]`."""

    q_source: list[str] = field(default_factory=list)
    q_target: list[str] = field(default_factory=list)
    d_teacher: list[str] = field(default_factory=list)
    d_student: list[str] = field(default_factory=list)
    lang: list[str] = field(default_factory=list)
    qas_id: list[str] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.q_source)

    def extend(self, other: ParallelExamples) -> None:
        for name in ("q_source", "q_target", "d_teacher", "d_student", "lang", "qas_id"):
            getattr(self, name).extend(getattr(other, name))

    def has_document(self) -> list[bool]:
        """Whether each row has an answer document (a corpus pair has none: its document texts are "")."""
        return [bool(d) for d in self.d_teacher]

    def repeated(self, times: int) -> ParallelExamples:
        """Each row `times` times, next to itself (a weight: the trainer shuffles)."""
        out = ParallelExamples()
        for name in ("q_source", "q_target", "d_teacher", "d_student", "lang", "qas_id"):
            setattr(out, name, [x for x in getattr(self, name) for _ in range(times)])
        return out

    def append(self, q_source, q_target, d_teacher, d_student, lang, qas_id) -> None:
        for name, value in zip(
            ("q_source", "q_target", "d_teacher", "d_student", "lang", "qas_id"),
            (q_source, q_target, d_teacher, d_student, lang, qas_id),
        ):
            getattr(self, name).append(value)


def parallel_from_pool(
    pool: LareqaPool,
    langs: Sequence[str],
    source_lang: str = "en",
    document: str = "en",
    with_context: bool = False,
) -> ParallelExamples:
    """Human-translated pairs: for every qas_id asked in `source_lang` and in x (each x in `langs`,
    `source_lang` itself allowed), one example (q_source, q_x, d).

    `document="en"` (the paper): teacher and student both see the source-language answer sentence.
    `document="parallel"`: the student sees the answer sentence in x (teacher target still the
    source sentence), so candidates of language x are pulled onto the teacher's space as well.
    """
    if document not in ("en", "parallel"):
        raise ValueError(f"unknown document {document!r}; valid: en, parallel")
    texts = pool.candidate_texts(with_context)
    by_lang_qas = {(q.lang, q.qas_id): (q, g) for q, g in zip(pool.questions, pool.gold)}

    def answer_in(lang: str, gold) -> str | None:
        hit = [j for j in gold if pool.candidates[j].lang == lang]
        return texts[hit[0]] if hit else None

    out = ParallelExamples()
    source = [(q, g) for q, g in zip(pool.questions, pool.gold) if q.lang == source_lang]
    if not source:
        raise DataError(f"no {source_lang} questions in the pool: parallel pairs need the source language")
    for lang in langs:
        for q_src, gold in source:
            target = by_lang_qas.get((lang, q_src.qas_id))
            d_src = answer_in(source_lang, gold)
            if target is None or d_src is None:
                continue
            d_tgt = answer_in(lang, gold) if document == "parallel" else d_src
            if d_tgt is None:
                continue
            out.append(q_src.text, target[0].text, d_src, d_tgt, lang, q_src.qas_id)
    return out


def parallel_from_translation(
    pool: LareqaPool, langs: Sequence[str], translator, source_lang: str = "en", with_context: bool = False
) -> ParallelExamples:
    """Machine-translated pairs for languages without parallel questions: q_x = translate(q_source);
    teacher and student both see the source-language answer."""
    texts = pool.candidate_texts(with_context)
    source = [(q, g) for q, g in zip(pool.questions, pool.gold) if q.lang == source_lang]
    rows = [
        (q, texts[next(j for j in g if pool.candidates[j].lang == source_lang)])
        for q, g in source
        if any(pool.candidates[j].lang == source_lang for j in g)
    ]
    out = ParallelExamples()
    for lang in langs:
        translated = (
            translator.translate([q.text for q, _ in rows], source_lang, lang)
            if lang != source_lang
            else [q.text for q, _ in rows]
        )
        for (q, d), q_x in zip(rows, translated):
            out.append(q.text, q_x, d, d, lang, q.qas_id)
    return out


def student_examples(
    pool: LareqaPool, langs: Sequence[str], data, document: str, output_dir: str | Path, seed: int = 0
) -> ParallelExamples:
    """The student's parallel examples as its config's `data` section asks: the dataset's human-translated
    questions (`parallel: dataset`), or machine translations cached in `data.translation_cache` (default
    OUTPUT_DIR/translations.json), plus machine translations into `data.translate_langs` and code-switched source
    questions in `data.code_switch_langs` (switched at `seed`)."""
    cache = Path(data.translation_cache) if data.translation_cache else Path(output_dir) / "translations.json"
    if data.parallel == "dataset":
        examples = parallel_from_pool(pool, langs, data.source_lang, document, data.with_context)
    else:
        translator = CachedTranslator(TRANSLATORS[data.translator](), cache)
        examples = parallel_from_translation(pool, langs, translator, data.source_lang, data.with_context)
    if data.translate_langs:  # the paper's kind of pair, beside the others
        translator = CachedTranslator(TRANSLATORS[data.translator](), cache)
        examples.extend(
            parallel_from_translation(pool, data.translate_langs, translator, data.source_lang, data.with_context)
        )
    if data.code_switch_langs:  # question-shaped pairs without a translator
        switcher = CodeSwitcher(data.code_switch_dir, data.code_switch_ratio, seed, named(data.code_switch_sources))
        examples.extend(
            parallel_from_translation(pool, data.code_switch_langs, switcher, data.source_lang, data.with_context)
        )
    if not len(examples):
        raise DataError(f"no parallel examples for languages {list(langs)} (data.student_langs)")
    return examples


def pair_files_read(data, langs: Sequence[str]) -> dict[str, Path]:
    """Every pair file a student run with `data` reads for `langs`, by `FOLDER/LANG.tsv`: `data.corpus_dir`'s and each
    `data.more_pairs` folder's (the languages `corpus_examples` takes), and the code-switching dictionaries. What a
    resumed run must find unchanged (run fingerprints)."""
    out: dict[str, Path] = {}
    folders = ([(data.corpus_dir, data.corpus_langs)] if data.corpus_dir else []) + [
        (folder, ALL) for folder in data.more_pairs
    ]
    for folder, wanted in folders:
        have = pair_languages(folder)
        for lang in chosen(wanted, [x for x in langs if x != data.source_lang and x in have]):
            out[f"{Path(folder).name}/{lang}.tsv"] = pair_file(folder, lang)
    for lang in data.code_switch_langs:
        out[f"{Path(data.code_switch_dir).name}/{lang}.tsv"] = pair_file(data.code_switch_dir, lang)
    return {k: v for k, v in out.items() if v.is_file()}


def held_out_rule(data) -> str:
    """How `data.corpus_dir`'s pairs are split (`ParallelCorpus.split`), recorded beside their fingerprints: a run
    resumed under another rule would train on other pairs. An older relkt held out a hashed slice of lines and
    recorded no rule, so such a run is refused rather than resumed on a different split."""
    rule = (
        "whole sources: " + ",".join(data.corpus_held_out_sources)
        if data.corpus_held_out_sources
        else "each source's last rows"
    )
    other = getattr(data, "corpus_other_domain", {})
    if other:  # recorded only when set: a run from before the setting resumes under the same rule
        rule += "; another domain: " + ",".join(f"{lang}:{source}" for lang, source in sorted(other.items()))
    return rule


def corpus_examples(
    data,
    langs: Sequence[str],
    seed: int,
    pairs_per_lang: Mapping[str, int] | None = None,
    pair_files: PairFiles | None = None,
) -> tuple[ParallelExamples, dict[str, ParallelCorpus]]:
    """Pairs of general parallel text as document-less examples (q_source = en, q_target = xx, no document), up to
    `data.corpus_pairs_per_lang` per language (or `pairs_per_lang[lang]`, 0 = all) drawn with the seed, and each
    language's held-out slice
    (`data.corpus_dev_pairs`) for the dev metric. Languages: `data.corpus_langs`, or every one of `langs` except the
    source language that has a `{lang}.tsv` in `data.corpus_dir`. Then each folder of `data.more_pairs` adds its
    share; no training pair may hold a question a question file keeps for scoring (refused, naming the first).
    `pair_files`: the files a caller read already (relkt.data.parallel_corpus.PairFiles), read through it."""
    read = pair_files.read if pair_files is not None else read_pairs
    out, dev, held = ParallelExamples(), {}, {}
    folders = ([(data.corpus_dir, data.corpus_pairs_per_lang, "corpus_dir")] if data.corpus_dir else []) + [
        (folder, share, f"more_pairs.{folder}") for folder, share in data.more_pairs.items()
    ]
    for folder, share, key in folders:
        try:
            have = pair_languages(folder)
        except DataError as e:
            raise DataError(f"data.{key}: {e}") from None
        if key == "corpus_dir":
            wanted = chosen(data.corpus_langs, [x for x in langs if x != data.source_lang and x in have])
        else:
            wanted = [x for x in langs if x != data.source_lang and x in have]
            if not wanted:  # a source named and nothing taken from it is said, never passed over
                raise DataError(
                    f"data.{key}: {folder} holds no pair file of a student language ({', '.join(have) or 'none'}; "
                    f"the students: {', '.join(x for x in langs if x != data.source_lang)})"
                )
        for lang in wanted:
            pairs = read(folder, lang)
            if pairs.splits is not None:  # a question file: its rows kept for scoring
                scored = pairs.held_out()
                held.setdefault(lang, {}).update({x: f"{pairs.path}:{n}" for x, n in zip(scored.xx, scored.lines)})
            if key == "corpus_dir":
                other = data.corpus_other_domain.get(lang, "")
                train, lang_dev = pairs.split(data.corpus_dev_pairs, data.corpus_held_out_sources, other)
            else:
                train, lang_dev = pairs.split(0)
                if not len(train):
                    raise DataError(
                        f"data.{key}: {pairs.path} gives no training row (every row is kept for scoring: none is "
                        "marked `split = train`); mark some train, or leave the folder out"
                    )
            if key == "corpus_dir":
                dev[lang] = lang_dev
            question = [en.rstrip().endswith("?") for en in train.en]
            order = np.random.default_rng([seed, 11, sum(lang.encode())]).permutation(len(train))
            if data.corpus_questions == "only":
                order = order[[question[i] for i in order]] if len(order) else order
            take = pairs_per_lang.get(lang, share) if key == "corpus_dir" and pairs_per_lang else share
            if take:
                order = order[:take]
            tag = "corpus" if key == "corpus_dir" else f"pairs:{Path(folder).name}"
            times = data.corpus_lang_repeat.get(lang, 1)
            for i in sorted(order):
                for _ in range(times * (data.corpus_question_repeat if question[i] else 1)):
                    out.append(train.en[i], train.xx[i], "", "", lang, f"{tag}:{lang}:{i}")
    for i, roman in romanized_rows(out.q_target, out.lang, data.romanize_langs):  # a second, Latin-letter view
        out.append(out.q_source[i], roman, "", "", out.lang[i], f"{out.qas_id[i]}:roman")
    for q, lang in zip(out.q_target, out.lang):
        if q in held.get(lang, {}):
            raise DataError(
                f"a training pair ({lang}) holds {q!r}, a question kept for scoring at {held[lang][q]}: drop it from "
                "the training folders, or mark that row `train`"
            )
    return out, dev
