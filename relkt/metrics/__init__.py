"""Retrieval metrics: vectorized gold-rank computation and LAReQA / XX->EN evaluators."""

from relkt.metrics.corpus_bitext_evaluator import CorpusBitextEvaluator
from relkt.metrics.evaluator import EVALUATORS, Evaluator, TextEncoder, run_evaluators
from relkt.metrics.joint_evaluator import JointEvaluator
from relkt.metrics.lareqa_evaluator import LareqaEvaluator
from relkt.metrics.ranking import gold_matrix, gold_ranks, per_question_metrics, summarize
from relkt.metrics.retrieval_evaluator import RetrievalEvaluator
from relkt.metrics.xx_en_unit_evaluator import XxEnUnitEvaluator

__all__ = [
    "EVALUATORS",
    "JointEvaluator",
    "CorpusBitextEvaluator",
    "Evaluator",
    "LareqaEvaluator",
    "RetrievalEvaluator",
    "TextEncoder",
    "XxEnUnitEvaluator",
    "gold_matrix",
    "gold_ranks",
    "per_question_metrics",
    "run_evaluators",
    "summarize",
]
