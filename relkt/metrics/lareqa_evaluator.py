"""LAReQA scoring (the full multilingual pool) and the CL-ReLKT XX->EN protocol, from one encoding pass."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from relkt.data.lareqa_pool import LareqaPool
from relkt.metrics.answer_context import context_weight, encode_candidates
from relkt.metrics.embedding_checks import check_embeddings
from relkt.metrics.evaluator import TextEncoder, register_evaluator
from relkt.metrics.ranking import gold_matrix, gold_ranks, per_question_metrics, summarize

log = logging.getLogger(__name__)

LAREQA_KEYS = ("mAP", "mAP@20", "P@1", "P@5", "P@10", "R@10", "hit@1", "hit@10", "MRR", "n_questions")


@register_evaluator
class LareqaEvaluator:
    """Encode a pool once; score LAReQA (all candidates) and XX->EN (English candidates only).

    LAReQA `P@k` is precision (gold found in the top k / k; 11 golds per question). XX->EN
    `P@k` follows CL-ReLKT's scripts: the share of questions whose English answer is in the
    top k (one gold, so it equals hit@k and R@k). `primary_metric` names a key of `flat()`.

    `bitext` (translation retrieval) asks whether a model has learned the language, not the task:
    each non-English question retrieves among the pool's English questions, and P@1 is the share
    whose human translation (same qas_id) ranks first; `cos` is the mean cosine to that translation.
    Distillation pulls q_x onto T(q_en), so on held-out articles this separates "the student learned
    to translate x" from "it fitted its training pairs".

    Called with an encoder it returns `flat()`'s metrics (the evaluator protocol, relkt.metrics.evaluator);
    `results(encoder)` gives the nested blocks reports render.
    """

    name = "lareqa"

    def __init__(
        self,
        pool: LareqaPool,
        with_context: bool = False,
        batch_size: int = 64,
        ks: Sequence[int] = (1, 5, 10),
        map_ks: Sequence[int] = (20,),
        xx_en: bool = True,
        bitext: bool = True,
        primary_metric: str = "lareqa/mAP",
        answer_context: bool = True,
    ):
        self.pool, self.with_context, self.batch_size = pool, with_context, batch_size
        self.answer_context = answer_context
        self.ks, self.map_ks, self.xx_en, self.bitext = tuple(ks), tuple(map_ks), xx_en, bitext
        self.primary_metric = primary_metric
        self.per_question: dict[str, np.ndarray] = {}

    def encode(self, encoder: TextEncoder) -> tuple[np.ndarray, np.ndarray]:
        """The pool's question and candidate embeddings; candidates mixed with their paragraphs when the encoder
        learned an answer-context weight and `answer_context` is on (relkt.encoders.answer_context)."""
        q = encoder.encode(self.pool.question_texts(), batch_size=self.batch_size, progress="questions")
        weight = context_weight(encoder) if self.answer_context else None
        if weight is None:
            texts = self.pool.candidate_texts(self.with_context)
            return q, encoder.encode(texts, batch_size=self.batch_size, progress="candidates")
        sentences = [c.sentence for c in self.pool.candidates]
        contexts = [c.context for c in self.pool.candidates]
        return q, encode_candidates(encoder, sentences, contexts, weight, self.batch_size, progress="candidates")

    def compute(self, question_emb: np.ndarray, candidate_emb: np.ndarray, ranking=None) -> dict:
        """Nested results: {"lareqa": {..., "per_language": {lang: {...}}}, "xx_en": {lang: {...}}}.
        Embeddings that cannot rank raise NonFiniteError or DegenerateError (`check_embeddings`). `ranking` (a
        `LanguageAwareRanking`) adjusts the scores before they rank, in the pool and in XX->EN."""
        pool = self.pool
        check_embeddings(question_emb, "question")
        check_embeddings(candidate_emb, "candidate")
        q_langs, c_langs = pool.question_langs, pool.candidate_langs
        ranks = gold_ranks(question_emb, candidate_emb, pool.gold, adjust=ranking)
        per_q = per_question_metrics(ranks, self.ks, self.map_ks)
        self.per_question = {"lareqa": per_q}
        lareqa = summarize(per_q)
        lareqa["n_candidates"] = len(pool.candidates)
        per_language = {lang: summarize(per_q, q_langs == lang) for lang in sorted(set(q_langs))}
        lareqa["per_language"] = {lang: x for lang, x in per_language.items() if x["n_questions"]}
        results = {"lareqa": lareqa}
        en = np.flatnonzero(c_langs == "en")
        if self.xx_en and len(en):
            remap = np.full(len(pool.candidates), -1, dtype=np.int64)
            remap[en] = np.arange(len(en))
            g = gold_matrix(pool.gold)
            en_gold = np.where(g >= 0, remap[np.maximum(g, 0)], -1)
            en_gold = np.sort(en_gold, axis=1)[:, ::-1][:, :1]  # the (single) English gold, or -1
            adjust_en = ranking.subset(en) if ranking is not None else None
            en_ranks = gold_ranks(question_emb, candidate_emb[en], en_gold, adjust=adjust_en)
            per_q_en = per_question_metrics(en_ranks, self.ks, ())
            self.per_question["xx_en"] = per_q_en
            xx, unscored = {}, []
            for lang in sorted(set(q_langs)):
                s = summarize(per_q_en, q_langs == lang)
                if not s["n_questions"]:  # no question of it has an English answer: named, not a NaN in the means
                    unscored.append(lang)
                    continue
                xx[lang] = {f"P@{k}": s[f"hit@{k}"] for k in self.ks}
                xx[lang].update(MRR=s["MRR"], n_questions=s["n_questions"])
            results["xx_en"] = xx
            if unscored:
                results["unscored"] = {"xx_en": unscored}
                log.warning(
                    "XX->EN: %s left out: none of its questions has an English answer in the pool (its qas_ids "
                    "have no English twin)",
                    ", ".join(unscored),
                )
        if self.bitext:
            bitext = self._bitext(question_emb)
            if bitext:
                results["bitext"] = bitext
        return results

    def _bitext(self, question_emb: np.ndarray) -> dict:
        """Per non-English language: P@1 of finding the parallel English question among all English ones."""
        pool, q_langs = self.pool, self.pool.question_langs
        en = np.flatnonzero(q_langs == "en")
        en_of = {pool.questions[i].qas_id: k for k, i in enumerate(en)}
        rows = np.array(
            [i for i, q in enumerate(pool.questions) if q.lang != "en" and q.qas_id in en_of], dtype=np.int64
        )
        hit = np.full(len(pool.questions), np.nan)
        if not len(rows):
            return {}
        target = np.array([en_of[pool.questions[i].qas_id] for i in rows], dtype=np.int64)
        q = np.asarray(question_emb, dtype=np.float32)
        ranks = gold_ranks(q[rows], q[en], target[:, None])
        hit[rows] = (ranks[:, 0] == 1).astype(np.float64)
        unit = q / np.maximum(np.linalg.norm(q, axis=1, keepdims=True), 1e-12)
        cos = np.full(len(pool.questions), np.nan)
        cos[rows] = np.sum(unit[rows] * unit[en[target]], axis=1)
        self.per_question["bitext"] = {"hit@1": hit}
        out = {}
        for lang in sorted(set(q_langs[rows])):
            m = (q_langs == lang) & np.isfinite(hit)
            out[lang] = {"P@1": float(hit[m].mean()), "cos": float(cos[m].mean()), "n_questions": int(m.sum())}
        return out

    def results(self, encoder: TextEncoder) -> dict:
        """The nested results of `compute` for `encoder`."""
        return self.compute(*self.encode(encoder))

    def scored_embeddings(self, encoder: TextEncoder) -> tuple[dict, tuple[np.ndarray, np.ndarray]]:
        """The nested results (kept in `last_results`, each question's in `per_question`) and the question and
        candidate embeddings they were computed from: for analyses that must read the vectors that were scored."""
        q, c = self.encode(encoder)
        self.last_results = self.compute(q, c)
        return self.last_results, (q, c)

    def __call__(self, encoder: TextEncoder) -> dict[str, float]:
        """The protocol: flat metrics; the nested ones stay in `last_results`, each question's in `per_question`."""
        self.last_results = self.results(encoder)
        return self.flat(self.last_results)

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
        for lang, metrics in results.get("bitext", {}).items():
            out.update({f"bitext/{lang}/{m}": x for m, x in metrics.items()})
        if results.get("bitext"):
            for m in ("P@1", "cos"):
                out[f"bitext/{m}"] = float(np.mean([v[m] for v in results["bitext"].values()]))
        return out
