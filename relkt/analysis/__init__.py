"""Coverage and language-bias analyses (LAReQA Sec. 5 / App. B), significance tests, embedding views.

TensorFlow-free at import (trainers/compare.py uses the tests); the tokenizer audit is
`relkt.analysis.tokenizer_audit`."""

from relkt.analysis.embedding_views import language_id_probe, pca_2d
from relkt.analysis.english_gap import gap_to_english
from relkt.analysis.language_bias import (
    limit_to_one_target,
    monolingual_pool,
    remove_one_target,
    top_k_language_distribution,
)
from relkt.analysis.significance import mcnemar, paired_bootstrap, proportion_difference

__all__ = [
    "gap_to_english",
    "language_id_probe",
    "limit_to_one_target",
    "mcnemar",
    "proportion_difference",
    "monolingual_pool",
    "paired_bootstrap",
    "pca_2d",
    "remove_one_target",
    "top_k_language_distribution",
]
