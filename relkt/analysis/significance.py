"""Significance of differences between two encoders on the same questions."""

from __future__ import annotations

import numpy as np


def paired_bootstrap(a: np.ndarray, b: np.ndarray, n_boot: int = 1000, alpha: float = 0.05, seed: int = 0) -> dict:
    """CI of mean(b - a) by resampling questions (the same resample for both encoders)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    diff = b - a
    idx = np.random.default_rng(seed).integers(0, len(diff), size=(n_boot, len(diff)))
    boots = diff[idx].mean(axis=1)
    low, high = np.quantile(boots, [alpha / 2, 1 - alpha / 2])
    return {
        "delta": float(diff.mean()),
        "low": float(low),
        "high": float(high),
        "significant": bool(low > 0 or high < 0),
        "n": int(len(diff)),
    }


def mcnemar(a_correct: np.ndarray, b_correct: np.ndarray) -> dict:
    """McNemar's test on paired right/wrong outcomes (e.g. P@1): exact binomial when the discordant
    pairs are fewer than 25, else chi-squared with continuity correction."""
    from scipy import stats  # deferred: heavy (scipy.stats), only McNemar's exact test needs it

    a, b = np.asarray(a_correct, bool), np.asarray(b_correct, bool)
    only_a, only_b = int((a & ~b).sum()), int((~a & b).sum())
    n = only_a + only_b
    if n == 0:
        return {"only_a": 0, "only_b": 0, "statistic": 0.0, "p_value": 1.0, "method": "none"}
    if n < 25:
        p = stats.binomtest(min(only_a, only_b), n, 0.5).pvalue
        return {
            "only_a": only_a,
            "only_b": only_b,
            "statistic": float(min(only_a, only_b)),
            "p_value": float(p),
            "method": "exact",
        }
    stat = (abs(only_a - only_b) - 1) ** 2 / n
    return {
        "only_a": only_a,
        "only_b": only_b,
        "statistic": float(stat),
        "p_value": float(stats.chi2.sf(stat, 1)),
        "method": "chi2",
    }
