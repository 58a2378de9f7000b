"""The teacher's triplets and their negatives as one checkpointable state: anchors (question, gold answer), the
negatives of each anchor (BM25 rounds, then online rounds with the current model), and the epoch's order."""

from __future__ import annotations

from typing import Any

import numpy as np

from relkt.errors import DataError
from relkt.metrics.answer_context import SUFFIX, context_weight, encode_candidates
from relkt.metrics.ranking import gold_matrix
from relkt.mining.bm25_negatives import Bm25Index, bm25_negatives
from relkt.mining.online_mining import mine_negatives


class TripletNegatives:
    """Anchors of a pool and their negatives.

    One anchor per (question, gold answer), or per question the answer in its own language plus
    `positives_per_question - 1` drawn from the rest (seeded). Each anchor has `n_slots` negative slots, -1 where
    empty. A round (`bm25_round`, `online_round`) replaces an anchor's negatives when it found new ones; an anchor
    that found none keeps its last (counted in the round's report, not dropped). `arrays()` / `load_arrays()` carry
    the negatives and the epoch's order through a checkpoint; everything else is rebuilt from the pool and seed.
    """

    def __init__(
        self,
        pool,
        candidate_texts: list[str],
        triplet: Any,
        mining: Any,
        seed: int,
        candidate_contexts: list[str] | None = None,
    ):
        """`candidate_contexts`: each candidate's paragraph, for an encoder that mixes answers with their context
        (in-batch rows then carry `positive_context`, `negative_J_context`; online mining encodes mixed)."""
        self.triplet, self.mining, self.seed = triplet, mining, seed
        self.c_contexts = None if candidate_contexts is None else np.array(candidate_contexts, dtype=object)
        positives = self.positives(pool, triplet.positives_per_question, seed, getattr(triplet, "pairing", "any"))
        self.anchor_q = np.array([i for i, g in enumerate(positives) for _ in g], dtype=np.int64)
        if not len(self.anchor_q):
            raise DataError(
                "no training anchors: no question of the training split has a gold answer among its candidates"
                + (f" (triplet.pairing: {triplet.pairing})" if getattr(triplet, "pairing", "any") != "any" else "")
            )
        self.anchor_pos = np.concatenate([g for g in positives if len(g)]).astype(np.int64)
        self.anchor_gold = gold_matrix(pool.gold)[self.anchor_q]
        self.q_texts = np.array(pool.question_texts(), dtype=object)
        self.c_texts = np.array(candidate_texts, dtype=object)
        # one id a distinct candidate text (the first candidate holding it): a duplicate is never another's negative
        first: dict[str, int] = {}
        self.canonical = np.array([first.setdefault(t, i) for i, t in enumerate(candidate_texts)], dtype=np.int64)
        self.anchor_gold_ids = canonical_gold(self.anchor_gold, self.canonical)
        m = mining
        self.n_slots = max(m.bm25_negatives if m.bm25_epochs else 0, (m.hard + m.semi_hard) if m.online_epochs else 0)
        self.negatives = np.full((len(self.anchor_q), self.n_slots), -1, dtype=np.int64)
        self.epoch_pairs = np.zeros(0, dtype=np.int64)  # (anchor, slot) pairs of this epoch, flattened, in order
        self.bm25_top = None
        if m.bm25_epochs:
            index = Bm25Index(self.c_texts.tolist(), k1=m.bm25_k1, b=m.bm25_b)
            self.bm25_top = index.top(self.q_texts[self.anchor_q].tolist(), m.bm25_top_end)

    def __len__(self) -> int:
        return len(self.anchor_q)

    @staticmethod
    def positives(pool, per_question: int, seed: int, pairing: str = "any") -> list[np.ndarray]:
        """Each question's positives among its gold answers of `pairing` (any language; `same`: the question's own;
        `cross`: the others, X-Y): all of them, or (per_question = N > 0) the one in its own language plus N-1 drawn
        from the rest; fixed by the seed so a resumed run sees the same anchors."""
        c_langs = pool.candidate_langs
        golds = list(pool.gold)
        if pairing != "any":
            own = pairing == "same"
            golds = [g[(c_langs[g] == q.lang) == own] for q, g in zip(pool.questions, golds)]
        if per_question <= 0:
            return golds
        rng = np.random.default_rng([seed, 7])
        out = []
        for q, g in zip(pool.questions, golds):
            own = g[c_langs[g] == q.lang]
            rest = g[c_langs[g] != q.lang]
            k = max(per_question - len(own[:1]), 0)
            out.append(np.concatenate([own[:1], rng.permutation(rest)[:k]]).astype(np.int64))
        return out

    # ----- rounds ---------------------------------------------------------------------------------------------
    def bm25_round(self, rng: np.random.Generator) -> dict:
        m = self.mining
        picked = bm25_negatives(self.bm25_top, self.anchor_gold, m.bm25_negatives, m.bm25_top_start, rng)
        new = np.full_like(self.negatives, -1)
        new[:, : picked.shape[1]] = picked
        return self._merge(new, "bm25")

    def online_round(self, encoder, rng: np.random.Generator) -> dict:
        """Hard and semi-hard negatives with the current `encoder` (anything with `encode(texts, batch_size)`)."""
        m, t = self.mining, self.triplet
        uniq_q, inverse = np.unique(self.anchor_q, return_inverse=True)
        q_emb = encoder.encode(self.q_texts[uniq_q].tolist(), batch_size=m.encode_batch_size)[inverse]
        weight = context_weight(encoder) if self.c_contexts is not None else None
        if weight is None:
            c_emb = encoder.encode(self.c_texts.tolist(), batch_size=m.encode_batch_size)
        else:  # the candidates as the model now scores them: each mixed with its paragraph
            c_emb = encode_candidates(
                encoder, self.c_texts.tolist(), self.c_contexts.tolist(), weight, m.encode_batch_size
            )
        result = mine_negatives(
            q_emb, c_emb, self.anchor_pos, self.anchor_gold, t.margin, m.hard, m.semi_hard, t.distance, m.pick, rng
        )
        new = np.full_like(self.negatives, -1)
        new[:, : result.negatives.shape[1]] = result.negatives
        report = self._merge(new, "online")
        report.update(
            mean_hard_available=float(result.n_hard.mean()), mean_semi_hard_available=float(result.n_semi_hard.mean())
        )
        return report

    def _merge(self, new: np.ndarray, source: str) -> dict:
        """Take the new negatives; an anchor that got none keeps its last ones (reported, not dropped)."""
        none_new = (new < 0).all(axis=1)
        self.negatives = np.where(none_new[:, None], self.negatives, new)
        return {
            "source": source,
            "anchors": int(len(new)),
            "anchors_without_new_negative": int(none_new.sum()),
            "anchors_without_any_negative": int((self.negatives < 0).all(axis=1).sum()),
            "triplets": int((self.negatives >= 0).sum()),
        }

    # ----- epochs ---------------------------------------------------------------------------------------------
    def shuffle_epoch(self, epoch: int) -> None:
        """This epoch's triplets (every filled slot) in an order fixed by (seed, epoch)."""
        valid = np.flatnonzero((self.negatives >= 0).ravel())
        self.epoch_pairs = np.random.default_rng([self.seed, epoch, 10**6]).permutation(valid)

    def shuffle_anchors(self, epoch: int, batch_size: int) -> None:
        """This epoch's anchors (the in-batch objective's rows, each once) in an order fixed by (seed, epoch), cut to
        whole batches: the last partial batch's anchors wait for another epoch's order."""
        order = np.random.default_rng([self.seed, epoch, 10**6]).permutation(len(self.anchor_q))
        self.epoch_pairs = order[: len(order) // batch_size * batch_size]

    def in_batch_rows(self, anchors: np.ndarray, k: int) -> tuple[dict[str, list[str]], np.ndarray]:
        """The texts and ids of the in-batch objective's rows `anchors`: each question, its answer and its first `k`
        negatives ("" where a slot is empty), with their paragraphs when the candidates have them; ids (rows, 1 + k +
        G) as `InBatchSoftmaxLoss` reads them: the answer's canonical id, the negatives' (-1: none), then the
        question's gold ids (padded with -2)."""
        negatives = np.full((len(anchors), k), -1, dtype=np.int64)
        taken = min(k, self.n_slots)
        negatives[:, :taken] = self.negatives[anchors, :taken]
        texts = {
            "anchor": self.q_texts[self.anchor_q[anchors]].tolist(),
            "positive": self.c_texts[self.anchor_pos[anchors]].tolist(),
        }
        for j in range(k):
            texts[f"negative_{j}"] = [self.c_texts[n] if n >= 0 else "" for n in negatives[:, j]]
        if self.c_contexts is not None:
            texts[f"positive{SUFFIX}"] = self.c_contexts[self.anchor_pos[anchors]].tolist()
            for j in range(k):
                texts[f"negative_{j}{SUFFIX}"] = [self.c_contexts[n] if n >= 0 else "" for n in negatives[:, j]]
        negative_ids = np.where(negatives >= 0, self.canonical[np.maximum(negatives, 0)], -1)
        ids = np.concatenate(
            [self.canonical[self.anchor_pos[anchors]][:, None], negative_ids, self.anchor_gold_ids[anchors]], axis=1
        )
        return texts, ids.astype(np.int32)

    def triplet_texts(self, pairs: np.ndarray) -> dict[str, list[str]]:
        """The texts of the triplets `pairs` (indices into the flattened (anchor, slot) grid)."""
        anchor, slot = pairs // self.n_slots, pairs % self.n_slots
        return {
            "anchor": self.q_texts[self.anchor_q[anchor]].tolist(),
            "positive": self.c_texts[self.anchor_pos[anchor]].tolist(),
            "negative": self.c_texts[self.negatives[anchor, slot]].tolist(),
        }

    def arrays(self) -> dict[str, np.ndarray]:
        return {"negatives": self.negatives, "epoch_pairs": self.epoch_pairs}

    def load_arrays(self, arrays: dict[str, np.ndarray]) -> None:
        self.negatives, self.epoch_pairs = arrays["negatives"], arrays["epoch_pairs"]


def canonical_gold(gold: np.ndarray, canonical: np.ndarray) -> np.ndarray:
    """Each row's gold candidates (-1 padded) as canonical ids, -2 padded (never a column's id)."""
    return np.where(gold >= 0, canonical[np.maximum(gold, 0)], -2)
