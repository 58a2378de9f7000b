"""Deterministic article-level splits, so no paragraph of a test article is ever trained on."""

from __future__ import annotations

import numpy as np

from relkt.errors import ConfigError

SPLITS = ("train", "dev", "test", "all")


def article_split(
    articles: list[str], fractions: tuple[float, float, float] = (0.7, 0.1, 0.2), seed: int = 0
) -> dict[str, set[str]]:
    """Assign each article to train/dev/test: shuffle the sorted titles with `seed`, cut by `fractions`.

    Sorting first makes the split independent of file order and of which languages are loaded.
    Each split gets at least one article when there are enough articles.
    """
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-6:
        raise ConfigError(f"split fractions must be three non-negative numbers summing to 1, got {fractions}")
    titles = sorted(set(articles))
    order = np.random.default_rng(seed).permutation(len(titles))
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
