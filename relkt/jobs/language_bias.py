"""Language-bias removal built into an export (`export_without_language_subspace`, `relkt debias`), so that
`hub.load` users get the vectors scoring gives with `score(..., language_pairs=DIR)`; what is learned and removed is
relkt.analysis.language_bias_removal's.

    relkt evaluate --encoder muse:RUN/best --split all --language-pairs ../shared/data/parallel \
        --remove-language-subspace 1                            # scored with the shared projection
    relkt debias --encoder muse:RUN/best --pairs-dir ../shared/data/parallel --rank 1 --output RUN/best_debiased

The pairs are never the scored pool's: a pair holding any text of the pool (or of a named test source) is dropped
before anything is learned from it.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from relkt.analysis.language_bias_removal import (
    PAIRS_PER_LANG,
    LanguageBiasRemoved,
    fit_language_subspace,
    source_texts,
)
from relkt.analysis.language_subspace import LanguageSubspace
from relkt.errors import ConfigError
from relkt.io import refuse_writing_into
from relkt.jobs.interpolate import claim_export_dir

__all__ = ["LanguageBiasRemoved", "export_without_language_subspace", "fit_language_subspace", "source_texts"]


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
    from relkt.analysis.scoring_encoder import scoring_encoder  # deferred: the scorer loads TensorFlow
    from relkt.encoders.export import export_encoder  # deferred: heavy (TensorFlow)
    from relkt.encoders.subspace_removed_encoder import SubspaceRemovedEncoder  # deferred: heavy (TensorFlow)

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
