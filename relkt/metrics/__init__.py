"""Retrieval metrics: vectorized gold-rank computation and LAReQA / XX->EN evaluators."""

from relkt.metrics.corpus_bitext_evaluator import CorpusBitextEvaluator
from relkt.metrics.lareqa_evaluator import LareqaEvaluator
from relkt.metrics.ranking import gold_matrix, gold_ranks, per_question_metrics, summarize
from relkt.metrics.retrieval_evaluator import RetrievalEvaluator, TextEncoder

__all__ = [
    "CorpusBitextEvaluator", "LareqaEvaluator", "RetrievalEvaluator", "TextEncoder", "gold_matrix", "gold_ranks",
    "per_question_metrics", "summarize",
]
