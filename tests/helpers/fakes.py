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


def units_by_hand():
    """XX->EN units worked out by hand: two English articles, A = [1, 0] and B = [0, 1]; gold q1 -> A, q2 -> B.
    de:q1 = [0.9, 0.1] scores A 0.9 > B 0.1: hit. de:q2 = [0.8, 0.2] scores A 0.8 > B 0.2: gold B at rank 2.
    en:q1 = [0.2, 0.8]: miss (rank 2); en:q2 = [0, 1]: hit. So de P@1 = 1/2, MRR = 3/4; en the same.
    Returns (units, questions, the encoder's table)."""
    from relkt.data.english_answer_units import EnglishAnswerUnits
    from relkt.data.records import Question

    units = {"article": EnglishAnswerUnits("article", ("A text", "B text"), ("A", "B"), {"q1": 0, "q2": 1})}
    questions = [
        Question("q1", "de", "de1", "A", 0, 0),
        Question("q2", "de", "de2", "B", 0, 0),
        Question("q1", "en", "en1", "A", 0, 0),
        Question("q2", "en", "en2", "B", 0, 0),
    ]
    table = {"A text": [1, 0], "B text": [0, 1], "de1": [0.9, 0.1], "de2": [0.8, 0.2], "en1": [0.2, 0.8], "en2": [0, 1]}
    return units, questions, table
