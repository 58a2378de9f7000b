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


def proportion_difference(hits_a: int, n_a: int, hits_b: int, n_b: int, z: float = 1.959964) -> dict:
    """b - a between two independent proportions (two models on different questions, e.g. two splits of one data
    set), with Newcombe's hybrid score interval (1998, method 10: from each proportion's Wilson interval), which
    keeps its coverage near 0 and 1 where the plain normal interval does not."""
    if not (0 < n_a and 0 < n_b and 0 <= hits_a <= n_a and 0 <= hits_b <= n_b):
        raise ValueError(f"need 0 <= hits <= n and n > 0, got {hits_a}/{n_a}, {hits_b}/{n_b}")

    def wilson(hits: int, n: int) -> tuple[float, float, float]:
        p = hits / n
        centre, half = p + z * z / (2 * n), z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
        return p, (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)

    pa, la, ua = wilson(hits_a, n_a)
    pb, lb, ub = wilson(hits_b, n_b)
    d = pb - pa
    return {
        "difference": d,
        "low": float(d - np.sqrt((pb - lb) ** 2 + (ua - pa) ** 2)),
        "high": float(d + np.sqrt((ub - pb) ** 2 + (pa - la) ** 2)),
    }
