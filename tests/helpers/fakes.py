"""Fakes and independent references for the metric tests: answers worked out by hand, or the papers' way."""

import numpy as np


class LookupEncoder:
    """A fake encoder: each text maps to a fixed vector chosen by hand."""

    def __init__(self, table):
        self.table = table

    def encode(self, texts, batch_size=64, progress=False):
        return np.array([self.table[t] for t in texts], np.float32)


def paper_reference(q, c, gold, ks=(1, 5, 10)):
    """An independent implementation, the way the papers' scripts did it: one question at a time,
    stable argsort of the scores, list.index of each gold; AP per LAReQA Eq. 1."""
    out = {"AP": [], "RR": [], **{f"P@{k}": [] for k in ks}, "AP@20": []}
    for i in range(len(q)):
        order = list(np.argsort(-(c @ q[i]), kind="stable"))
        positions = sorted(order.index(j) + 1 for j in gold[i])
        hits = 0
        ap = ap20 = 0.0
        for pos in positions:
            hits += 1
            ap += hits / pos
            if pos <= 20:
                ap20 += hits / pos
        out["AP"].append(ap / len(positions))
        out["AP@20"].append(ap20 / min(len(positions), 20))
        out["RR"].append(1 / positions[0])
        for k in ks:
            out[f"P@{k}"].append(sum(p <= k for p in positions) / k)
    return {k: np.array(v) for k, v in out.items()}
