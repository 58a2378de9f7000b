"""A sentence-transformers-style evaluator: `qid->text`, `cid->text`, `qid->set(cid)` in, flat metrics out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from relkt.metrics.embedding_checks import check_embeddings
from relkt.metrics.evaluator import TextEncoder, register_evaluator
from relkt.metrics.ranking import gold_ranks, per_question_metrics, summarize


@register_evaluator
class RetrievalEvaluator:
    """Rank the whole corpus for every query and report mAP (primary), mAP@k, P@k, R@k, hit@k, MRR; with a `name`,
    every key is prefixed `NAME_`."""

    name = "retrieval"  # the table's name; an instance's own name, when given, prefixes its keys

    def __init__(
        self,
        queries: Mapping[str, str],
        corpus: Mapping[str, str],
        relevant: Mapping[str, set[str]],
        ks: Sequence[int] = (1, 5, 10),
        map_ks: Sequence[int] = (20,),
        name: str = "",
        batch_size: int = 64,
    ):
        if not queries or not corpus:
            raise ValueError(f"empty evaluation set: {len(queries)} queries, {len(corpus)} corpus entries")
        self.query_ids = list(queries)
        self.query_texts = [queries[q] for q in self.query_ids]
        self.corpus_ids = list(corpus)
        self.corpus_texts = [corpus[c] for c in self.corpus_ids]
        position = {cid: j for j, cid in enumerate(self.corpus_ids)}
        unknown = {c for q in self.query_ids for c in relevant.get(q, ()) if c not in position}
        if unknown:
            raise ValueError(f"relevant ids not in the corpus: {sorted(unknown)[:5]}")
        self.gold = [np.array(sorted(position[c] for c in relevant.get(q, ())), dtype=np.int64) for q in self.query_ids]
        self.ks, self.map_ks, self.batch_size = tuple(ks), tuple(map_ks), batch_size
        self.name, self.prefix = name or "retrieval", f"{name}_" if name else ""
        self.primary_metric = f"{self.prefix}mAP"

    def compute(self, query_emb: np.ndarray, corpus_emb: np.ndarray) -> dict[str, float]:
        """Metrics from precomputed embeddings (rows aligned with the query/corpus dicts); embeddings that cannot rank
        raise (`check_embeddings`)."""
        check_embeddings(query_emb, "query")
        check_embeddings(corpus_emb, "corpus")
        per_q = per_question_metrics(gold_ranks(query_emb, corpus_emb, self.gold), self.ks, self.map_ks)
        return {self.prefix + k: v for k, v in summarize(per_q).items()}

    def __call__(self, encoder: TextEncoder) -> dict[str, float]:
        q = encoder.encode(self.query_texts, batch_size=self.batch_size, progress="questions")
        c = encoder.encode(self.corpus_texts, batch_size=self.batch_size, progress="candidates")
        return self.compute(q, c)
