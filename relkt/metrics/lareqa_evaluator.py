"""LAReQA scoring (the full multilingual pool) and the CL-ReLKT XX->EN protocol, from one encoding pass."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from relkt.data.lareqa_pool import LareqaPool
from relkt.metrics.ranking import gold_ranks, gold_matrix, per_question_metrics, summarize
from relkt.metrics.retrieval_evaluator import TextEncoder

LAREQA_KEYS = ("mAP", "mAP@20", "P@1", "P@5", "P@10", "R@10", "hit@1", "hit@10", "MRR", "n_questions")


class LareqaEvaluator:
    """Encode a pool once; score LAReQA (all candidates) and XX->EN (English candidates only).

    LAReQA `P@k` is precision (gold found in the top k / k; 11 golds per question). XX->EN
    `P@k` follows CL-ReLKT's scripts: the share of questions whose English answer is in the
    top k (one gold, so it equals hit@k and R@k). `primary_metric` names a key of `flat()`.
    """

    def __init__(
        self,
        pool: LareqaPool,
        with_context: bool = False,
        batch_size: int = 64,
        ks: Sequence[int] = (1, 5, 10),
        map_ks: Sequence[int] = (20,),
        xx_en: bool = True,
        primary_metric: str = "lareqa/mAP",
    ):
        self.pool, self.with_context, self.batch_size = pool, with_context, batch_size
        self.ks, self.map_ks, self.xx_en = tuple(ks), tuple(map_ks), xx_en
        self.primary_metric = primary_metric
        self.per_question: dict[str, np.ndarray] = {}

    def encode(self, encoder: TextEncoder) -> tuple[np.ndarray, np.ndarray]:
        q = encoder.encode(self.pool.question_texts(), batch_size=self.batch_size, progress="questions")
        c = encoder.encode(self.pool.candidate_texts(self.with_context), batch_size=self.batch_size, progress="candidates")
        return q, c

    def compute(self, question_emb: np.ndarray, candidate_emb: np.ndarray) -> dict:
        """Nested results: {"lareqa": {..., "per_language": {lang: {...}}}, "xx_en": {lang: {...}}}."""
        pool = self.pool
        q_langs, c_langs = pool.question_langs, pool.candidate_langs
        per_q = per_question_metrics(gold_ranks(question_emb, candidate_emb, pool.gold), self.ks, self.map_ks)
        self.per_question = {"lareqa": per_q}
        lareqa = summarize(per_q)
        lareqa["n_candidates"] = len(pool.candidates)
        lareqa["per_language"] = {lang: summarize(per_q, q_langs == lang) for lang in sorted(set(q_langs))}
        results = {"lareqa": lareqa}
        en = np.flatnonzero(c_langs == "en")
        if self.xx_en and len(en):
            remap = np.full(len(pool.candidates), -1, dtype=np.int64)
            remap[en] = np.arange(len(en))
            g = gold_matrix(pool.gold)
            en_gold = np.where(g >= 0, remap[np.maximum(g, 0)], -1)
            en_gold = np.sort(en_gold, axis=1)[:, ::-1][:, :1]  # the (single) English gold, or -1
            per_q_en = per_question_metrics(gold_ranks(question_emb, candidate_emb[en], en_gold), self.ks, ())
            self.per_question["xx_en"] = per_q_en
            xx = {}
            for lang in sorted(set(q_langs)):
                s = summarize(per_q_en, q_langs == lang)
                xx[lang] = {f"P@{k}": s[f"hit@{k}"] for k in self.ks}
                xx[lang].update(MRR=s["MRR"], n_questions=s["n_questions"])
            results["xx_en"] = xx
        return results

    def __call__(self, encoder: TextEncoder) -> dict:
        return self.compute(*self.encode(encoder))

    @staticmethod
    def flat(results: dict) -> dict[str, float]:
        """`lareqa/mAP`, `lareqa/ar/mAP`, `xx_en/ar/P@1`, `xx_en/P@1` (mean over languages) ..."""
        out = {}
        lareqa = results["lareqa"]
        for k, v in lareqa.items():
            if k == "per_language":
                for lang, metrics in v.items():
                    out.update({f"lareqa/{lang}/{m}": x for m, x in metrics.items()})
            else:
                out[f"lareqa/{k}"] = v
        for lang, metrics in results.get("xx_en", {}).items():
            out.update({f"xx_en/{lang}/{m}": x for m, x in metrics.items()})
        if results.get("xx_en"):
            for m in next(iter(results["xx_en"].values())):
                if m != "n_questions":
                    out[f"xx_en/{m}"] = float(np.mean([v[m] for v in results["xx_en"].values()]))
        return out
