"""Language bias removed from an encoder's embeddings: each language's mean and the shared language directions,
learned from pair files with the encoder being scored (relkt.analysis.language_subspace), and an encoder wrapper that
takes them out. Scoring applies it (`score(..., language_pairs=DIR)`); `relkt debias` builds it into an export
(relkt.jobs.language_bias). The pairs are never the scored pool's: a pair holding any text of the pool (or of a named
test source) is dropped before anything is learned from it."""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np

from relkt.analysis.language_subspace import LanguageSubspace
from relkt.data.alignment_pairs import PAIRS_PER_LANG, AlignmentPairs, language_pairs
from relkt.data.text import normal_text
from relkt.metrics.evaluator import TextEncoder

log = logging.getLogger("relkt.language_bias")


def fit_language_subspace(
    encoder: TextEncoder,
    pairs_dir: str,
    langs: Sequence[str] | None,
    rank: int,
    exclude_texts: Collection[str] = (),
    per_lang: int = PAIRS_PER_LANG,
    seed: int = 0,
    batch_size: int = 64,
) -> tuple[LanguageSubspace, dict[str, Any]]:
    """Each language's mean and the shared directions, from `per_lang` pairs a language of `pairs_dir` (the X sides;
    English from the English sides), encoded with `encoder`, and what they were learned from ({"sentences": per
    language, "dropped": pairs holding any of `exclude_texts`, dropped first}). `langs`: those of them with a pair
    file (None: every file's)."""
    pairs = language_pairs(pairs_dir, langs, exclude_texts, per_lang, seed)
    return fit_on_pairs(encoder, pairs, rank, per_lang, seed, batch_size)


def fit_on_pairs(
    encoder: TextEncoder,
    pairs: AlignmentPairs,
    rank: int,
    per_lang: int = PAIRS_PER_LANG,
    seed: int = 0,
    batch_size: int = 64,
) -> tuple[LanguageSubspace, dict[str, Any]]:
    """The language means and shared directions learned with `encoder` from pairs read already
    (relkt.data.alignment_pairs.language_pairs)."""
    by_lang = {
        lang: encoder.encode(list(pairs.xx[pairs.lang_of == k]), batch_size=batch_size)
        for k, lang in enumerate(pairs.langs)
    }
    english = list(dict.fromkeys(pairs.en.tolist()))
    pick = np.random.default_rng([seed, 53]).permutation(len(english))[:per_lang]
    by_lang["en"] = encoder.encode([english[i] for i in sorted(pick)], batch_size=batch_size)
    learned = {"sentences": {lang: len(e) for lang, e in by_lang.items()}, "dropped": sum(pairs.dropped.values())}
    log.info("language subspace: rank %d from %s (pairs dropped: a scored text holds them)", rank, learned)
    return LanguageSubspace.fit(by_lang, rank), learned


def source_texts(folders: Sequence[str]) -> set[str]:
    """Every question and candidate sentence of the QA sources at `folders`, in the normal form: what a pair must
    not hold to be learned from."""
    from relkt.data.qa_source import QaSource  # deferred: only the export reads whole sources

    texts: set[str] = set()
    for folder in folders:
        for data in QaSource.open(folder).read():
            texts |= {normal_text(q.text) for q in data.questions} | {normal_text(c.sentence) for c in data.candidates}
    return texts


class LanguageBiasRemoved:
    """A text encoder for scoring: `encoder`'s embeddings less each text's language mean (`remove_means`, the
    language from `lang_of`, text -> code) and/or with the shared directions projected out (`project`)."""

    def __init__(self, encoder: Any, space: LanguageSubspace, lang_of: dict[str, str], means: bool, project: bool):
        self.encoder, self.space, self.lang_of, self.means, self.project = encoder, space, lang_of, means, project
        self.dim, self.max_length = getattr(encoder, "dim", None), getattr(encoder, "max_length", None)

    def encode(self, texts: Sequence[str], batch_size: int = 64, progress: bool | str = False) -> np.ndarray:
        emb = self.encoder.encode(texts, batch_size=batch_size, progress=progress)
        if self.means:
            emb = self.space.remove_means(emb, [self.lang_of.get(normal_text(t), "") for t in texts])
        return self.space.project(emb) if self.project else emb
