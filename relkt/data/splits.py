"""Deterministic article-level splits, so no paragraph of a test article is ever trained on."""

from __future__ import annotations

import numpy as np

from relkt.errors import ConfigError

SPLITS = ("train", "dev", "test", "all")


def article_split(
    articles: list[str],
    fractions: tuple[float, float, float] = (0.7, 0.1, 0.2),
    seed: int = 0,
    folds: int = 0,
    fold: int = 0,
) -> dict[str, set[str]]:
    """Assign each article to train/dev/test: shuffle the sorted titles with `seed`, cut by `fractions`.

    Sorting first makes the split independent of file order and of which languages are loaded.
    Each split gets at least one article when there are enough articles.

    With `folds` = K > 1 (k-fold cross-validation) the shuffled titles are cut into K folds of near-equal size;
    fold `fold` is test, and dev is carved from the other folds' articles in the ratio of the dev and train
    fractions (at least one article), so across the K folds every article is test exactly once.
    """
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-6:
        raise ConfigError(f"split fractions must be three non-negative numbers summing to 1, got {fractions}")
    titles = sorted(set(articles))
    order = np.random.default_rng(seed).permutation(len(titles))
    if folds:
        return _fold_split([titles[i] for i in order], fractions, folds, fold)
    n = len(titles)
    n_train = int(round(fractions[0] * n))
    n_dev = int(round(fractions[1] * n))
    if n >= 3:  # keep every non-empty fraction non-empty
        n_dev = max(n_dev, 1 if fractions[1] > 0 else 0)
        n_test = max(n - n_train - n_dev, 1 if fractions[2] > 0 else 0)
        n_train = n - n_dev - n_test
    shuffled = [titles[i] for i in order]
    return {
        "train": set(shuffled[:n_train]),
        "dev": set(shuffled[n_train : n_train + n_dev]),
        "test": set(shuffled[n_train + n_dev :]),
        "all": set(titles),
    }


def _fold_split(
    shuffled: list[str], fractions: tuple[float, float, float], folds: int, fold: int
) -> dict[str, set[str]]:
    if folds < 2 or not 0 <= fold < folds:
        raise ConfigError(f"k-fold split: need folds >= 2 and 0 <= fold < folds, got folds={folds}, fold={fold}")
    if len(shuffled) < folds + 1:
        raise ConfigError(f"k-fold split: {len(shuffled)} articles cannot make {folds} test folds and a train split")
    bounds = np.linspace(0, len(shuffled), folds + 1).round().astype(int)
    test = shuffled[bounds[fold] : bounds[fold + 1]]
    rest = shuffled[: bounds[fold]] + shuffled[bounds[fold + 1] :]
    dev_share = fractions[1] / max(fractions[0] + fractions[1], 1e-12)
    n_dev = max(int(round(dev_share * len(rest))), 1 if fractions[1] > 0 else 0)
    n_dev = min(n_dev, len(rest) - 1)
    return {"train": set(rest[n_dev:]), "dev": set(rest[:n_dev]), "test": set(test), "all": set(shuffled)}
