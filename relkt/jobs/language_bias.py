"""Language-bias removal as a job: the language directions learned from pair files with the encoder being scored
(relkt.analysis.language_subspace), applied in scoring (`score(..., language_pairs=DIR)`), or built into an export
(`export_without_language_subspace`, `relkt debias`) so that `hub.load` users get the same vectors.

    relkt evaluate --encoder muse:RUN/best --split all --language-pairs ../shared/data/parallel \
        --remove-language-subspace 1                            # scored with the shared projection
    relkt debias --encoder muse:RUN/best --pairs-dir ../shared/data/parallel --rank 1 --output RUN/best_debiased

The pairs are never the scored pool's: a pair holding any text of the pool (or of a named test source) is dropped
before anything is learned from it.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from relkt.analysis.language_subspace import LanguageSubspace
from relkt.data.alignment_pairs import AlignmentPairs
from relkt.data.parallel_corpus import pair_languages
from relkt.data.text import normal_text
from relkt.errors import ConfigError
from relkt.io import refuse_writing_into
from relkt.jobs.interpolate import claim_export_dir
from relkt.metrics.evaluator import TextEncoder

log = logging.getLogger("relkt.language_bias")

PAIRS_PER_LANG = 1000  # sentences a language's mean is taken over


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
    have = set(pair_languages(pairs_dir))
    chosen = sorted(have if langs is None else {lang for lang in langs if lang in have and lang != "en"})
    if not chosen:
        raise ConfigError(
            f"language pairs: {pairs_dir} has no pair file for {', '.join(langs or []) or 'any language'}"
        )
    pairs = AlignmentPairs.read(pairs_dir, chosen, per_lang, 0, exclude_texts, seed)
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


def export_without_language_subspace(
    spec: str,
    pairs_dir: str,
    output: str | Path,
    rank: int = 1,
    langs: Sequence[str] | None = None,
    exclude_texts: Collection[str] = (),
    per_lang: int = PAIRS_PER_LANG,
) -> tuple[Path, LanguageSubspace]:
    """The encoder `spec` with the shared language directions built in, exported to `output` (a new or empty folder,
    or an earlier relkt export); the subspace as `language_subspace.npz` beside it."""
    from relkt.encoders.export import export_encoder  # deferred: heavy (TensorFlow)
    from relkt.encoders.subspace_removed_encoder import SubspaceRemovedEncoder  # deferred: heavy (TensorFlow)
    from relkt.jobs.scoring_encoder import scoring_encoder  # deferred: the scorer loads TensorFlow

    claim_export_dir(output, "language_subspace_removed", reads=(spec, str(pairs_dir)))
    refuse_writing_into(output, [pairs_dir])
    if rank < 1:
        raise ConfigError(f"rank: the directions projected out of the export, a whole number >= 1, got {rank}")
    # built as the scorer builds it: a kind scored whole (muse) is exported reading whole texts, so an article reads
    # the same through `hub.load` as in `relkt evaluate`, not cut at the training length
    encoder, _ = scoring_encoder(spec)
    space, learned = fit_language_subspace(encoder, pairs_dir, langs, rank, exclude_texts, per_lang)
    training = {
        "stage": "language_subspace_removed",
        "base_encoder": spec,
        "language_pairs": str(pairs_dir),
        "rank": rank,
        "languages": sorted(space.means),
        **learned,
    }
    path = export_encoder(SubspaceRemovedEncoder(encoder, space.basis), output, training=training)
    space.save(Path(path) / "language_subspace.npz")
    return Path(path), space
