"""Negative mining: BM25 (bm25s) and online hard / semi-hard mining with the current model."""

from relkt.mining.bm25_negatives import Bm25Index, bm25_negatives, bm25_tokenize
from relkt.mining.online_mining import MiningResult, mine_negatives
from relkt.mining.triplet_negatives import TripletNegatives

__all__ = ["Bm25Index", "MiningResult", "bm25_negatives", "bm25_tokenize", "mine_negatives", "TripletNegatives"]
