"""Language-bias removal learned from pairs: the shared projection (LSAR) and per-language means, worked on arrays
whose language directions are known."""

import numpy as np
import pytest

from relkt.analysis.language_subspace import LanguageSubspace
from relkt.errors import ConfigError, DataError


def languages(rng, shift: dict[str, float], n: int = 40, dim: int = 6) -> dict[str, np.ndarray]:
    """Random meanings plus a language offset along axis 0 (and axis 1 for `zh`): the language directions."""
    out = {}
    for lang, s in shift.items():
        x = rng.normal(size=(n, dim))
        x[:, 0] += s
        x[:, 1] += 2.0 * s if lang == "zh" else 0.0
        out[lang] = x
    return out


def test_the_projection_takes_out_the_direction_the_languages_differ_in_and_only_it():
    rng = np.random.default_rng(0)
    space = LanguageSubspace.fit(languages(rng, {"en": 0.0, "de": 5.0}), rank=1)
    assert space.rank == 1 and abs(abs(space.basis[0, 0]) - 1.0) < 0.05  # axis 0 found
    probe = np.eye(6, dtype=np.float32)
    out = space.project(probe)
    assert abs(out[0] @ space.basis[0]) < 1e-5  # nothing left along the language direction
    assert np.allclose(np.linalg.norm(out[2:], axis=1), 1.0)  # other axes keep their length
    assert np.allclose(np.abs(out[2:] @ probe[2:].T), np.eye(4), atol=0.1)


def test_two_directions_need_three_languages_and_the_rank_is_checked():
    rng = np.random.default_rng(1)
    by_lang = languages(rng, {"en": 0.0, "de": 4.0, "zh": -4.0})
    space = LanguageSubspace.fit(by_lang, rank=2)
    assert np.allclose(space.basis @ space.basis.T, np.eye(2), atol=1e-5)  # orthonormal rows
    assert np.linalg.norm(space.basis[:, :2]) > 1.35  # the two language axes, nearly all of them
    for bad in (3, -1, True):
        with pytest.raises(ConfigError, match="rank: a whole number in 0 .. 2"):
            LanguageSubspace.fit(by_lang, rank=bad)
    with pytest.raises(ConfigError, match="needs two languages or more"):
        LanguageSubspace.fit({"en": by_lang["en"]}, rank=0)


def test_mean_removal_moves_each_row_by_its_own_languages_mean(tmp_path):
    rng = np.random.default_rng(2)
    by_lang = languages(rng, {"en": 0.0, "de": 5.0})
    space = LanguageSubspace.fit(by_lang, rank=1)
    rows = np.array([[5.0, 0, 0, 0, 0, 1.0], [0.0, 0, 0, 0, 0, 1.0]], np.float32)
    out = space.remove_means(rows, ["de", "fr"])  # fr has no mean: its row only normalised
    expected_de = rows[0] - space.means["de"]
    assert np.allclose(out[0], expected_de / np.linalg.norm(expected_de), atol=1e-5)
    assert np.allclose(out[1], rows[1])
    again = LanguageSubspace.load(space.save(tmp_path / "space.npz"))
    assert sorted(again.means) == ["de", "en"] and np.array_equal(again.basis, space.basis)
    (tmp_path / "other.npz").write_bytes(b"not an npz")
    with pytest.raises(DataError, match="other.npz: not a language subspace file"):
        LanguageSubspace.load(tmp_path / "other.npz")
