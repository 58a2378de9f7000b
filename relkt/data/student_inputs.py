"""Everything a student trains on, built in one place, top to bottom, from its config's `data` section: the QA pool
and the student's languages (`selection.student_pool`), the QA examples with their translations and code-switched
questions (`parallel.student_examples`), the questions written in student languages
(`native_questions.native_examples`), the pair folders' examples with their romanized rows and the held-out pairs
of the dev metric (`parallel.corpus_examples`). The trainer receives the one `StudentInputs` object."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from relkt.data.lareqa_pool import LareqaPool
from relkt.data.native_questions import native_examples
from relkt.data.parallel import ParallelExamples, corpus_examples, student_examples
from relkt.data.parallel_corpus import PairFiles, ParallelCorpus
from relkt.data.selection import student_pool
from relkt.errors import ConfigError


@dataclass
class StudentInputs:
    """| field | what |
    |---|---|
    | `pool` | the train split's QA pool the examples come from |
    | `langs` | every student language; `qa_langs` those whose examples come from QA data |
    | `language_texts` | every training text of those languages (what vocabulary extension reads) |
    | `examples` | the parallel examples, QA and pair rows together (`ParallelExamples`) |
    | `corpus_dev` | per language, the held-out pairs of the `corpus/P@1` dev metric ({} without pair folders) |
    """

    pool: LareqaPool
    langs: list[str]
    qa_langs: list[str]
    language_texts: list[str]
    examples: ParallelExamples
    corpus_dev: dict[str, ParallelCorpus] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        data: Any,
        document: str,
        output_dir: str | Path,
        seed: int,
        taught: Sequence[str] = (),
        replay_pairs: int = 0,
        pair_files: PairFiles | None = None,
    ) -> StudentInputs:
        """The inputs `data` (a StudentDataSection) asks for; `document` is `distill.document` (which answer the
        student reads), `output_dir` where a translation cache defaults to. With `taught` (language rows' languages)
        and `replay_pairs` > 0, every other student language draws that many corpus_dir pairs, not
        `data.corpus_pairs_per_lang` (`student.language_rows.replay_pairs_per_lang`). `pair_files`: pair files a caller
        read already, handed on (each file read once)."""
        if replay_pairs and not taught:  # nothing is replayed without taught languages: say so, never ignore it
            raise ConfigError(
                "student.language_rows.replay_pairs_per_lang is set but student.language_rows.langs is empty: "
                "replayed languages are the student languages those rows do not teach"
            )
        pool, qa_langs, langs, language_texts = student_pool(data, seed)
        replayed = [x for x in langs if x not in taught] if taught and replay_pairs else []
        pairs_per_lang = dict.fromkeys(replayed, replay_pairs)
        examples = student_examples(pool, qa_langs, data, document, output_dir, seed).repeated(data.qa_repeat)
        if getattr(data, "native_qa", None):  # questions written in the student languages, against their answers
            native = native_examples(data, langs, seed, taught)
            examples.extend(native)
            language_texts = sorted(set(language_texts) | set(native.q_target) | set(native.d_student))
        corpus_dev: dict[str, ParallelCorpus] = {}
        if data.corpus_dir or data.more_pairs:  # general parallel text: question-side pairs, a held-out slice for dev
            corpus, corpus_dev = corpus_examples(data, langs, seed, pairs_per_lang, pair_files)
            examples.extend(corpus)
        return cls(pool, list(langs), list(qa_langs), language_texts, examples, corpus_dev)

    @classmethod
    def for_config(cls, config: Any, pair_files: PairFiles | None = None) -> StudentInputs:
        """The inputs a student config (`StudentConfig`) trains on, as `StudentTrainer` builds them."""
        rows = config.student.language_rows
        return cls.build(
            config.data,
            config.distill.document,
            config.output_dir,
            config.seed,
            rows.langs,
            rows.replay_pairs_per_lang,
            pair_files,
        )
