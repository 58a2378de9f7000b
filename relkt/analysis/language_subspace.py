"""Language-bias removal: the directions along which an encoder's languages differ, learned from translation pairs
and taken out of its embeddings, so that a question's nearest answers are chosen by meaning more than by language.

Two ways, both learned from pair files (never from the pool being scored):

- per-language mean removal: each text less its language's mean embedding (it needs each text's language, so it lives
  in scoring only);
- one shared projection (LSAR, Xie et al. 2022): the top `rank` directions of the centred matrix of language means
  projected out of every embedding, whatever its language. It needs no language, so an export can carry it inside its
  SavedModel (`relkt.encoders.subspace_removed_encoder`).

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> by_lang = {"en": rng.normal(size=(50, 8)), "de": rng.normal(size=(50, 8)) + 3.0}
    >>> space = LanguageSubspace.fit(by_lang, rank=1)
    >>> space.basis.shape
    (1, 8)

Reference: Xie et al. 2022, "Discovering Low-rank Subspaces for Language-agnostic Multilingual Representations"
(LSAR); Yang et al. 2021, "A Simple and Effective Method To Eliminate the Self Language Bias in Multilingual
Representations" (LIR).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from relkt.errors import ConfigError, DataError
from relkt.io import atomic_files, read_npz


@dataclass(frozen=True)
class LanguageSubspace:
    """Each language's mean embedding (`means`) and the shared language directions (`basis`: `rank` orthonormal rows
    of the embedding size, the top right-singular vectors of the language means less their average)."""

    means: Mapping[str, np.ndarray]
    basis: np.ndarray

    @classmethod
    def fit(cls, by_lang: Mapping[str, np.ndarray], rank: int) -> LanguageSubspace:
        """From each language's embeddings (`by_lang`: lang -> [n, dim]); `rank` directions, at most one fewer than
        the languages (the centred means span no more)."""
        if len(by_lang) < 2:
            raise ConfigError(f"language subspace: needs two languages or more, got {sorted(by_lang)}")
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < len(by_lang):
            raise ConfigError(f"language subspace rank: a whole number in 0 .. {len(by_lang) - 1}, got {rank!r}")
        means = {lang: np.asarray(e, dtype=np.float64).mean(axis=0) for lang, e in sorted(by_lang.items())}
        matrix = np.stack(list(means.values()))
        _, _, vt = np.linalg.svd(matrix - matrix.mean(axis=0), full_matrices=False)
        return cls({k: v.astype(np.float32) for k, v in means.items()}, vt[:rank].astype(np.float32))

    @property
    def rank(self) -> int:
        return int(self.basis.shape[0])

    def project(self, emb: np.ndarray) -> np.ndarray:
        """`emb` with the shared language directions projected out, each row L2-normalised again."""
        out = emb - (emb @ self.basis.T) @ self.basis
        return _normalised(out)

    def remove_means(self, emb: np.ndarray, langs: Sequence[str]) -> np.ndarray:
        """Each row less its language's mean (`langs[i]`; a language with no mean keeps its row), L2-normalised."""
        if len(langs) != len(emb):
            raise ValueError(f"remove_means: {len(emb)} embeddings, {len(langs)} languages")
        shift = np.stack([self.means.get(lang, np.zeros(emb.shape[1], np.float32)) for lang in langs])
        return _normalised(emb - shift) if len(emb) else emb

    def save(self, path: str | Path) -> Path:
        """The means and basis as one `.npz` (the language codes in `langs`)."""
        path = Path(path)
        with atomic_files([path]) as (f,):
            np.savez(f, langs=np.array(list(self.means)), means=np.stack(list(self.means.values())), basis=self.basis)
        return path

    @classmethod
    def load(cls, path: str | Path) -> LanguageSubspace:
        z = read_npz(path, "language subspace file")
        try:
            return cls(dict(zip(z["langs"].tolist(), z["means"])), z["basis"])
        except (KeyError, ValueError) as e:
            raise DataError(f"{path}: not a language subspace file ({e})") from None


def _normalised(x: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return (x / np.maximum(norms, 1e-12)).astype(np.float32)
