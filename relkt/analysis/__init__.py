"""Coverage and language-bias analyses (LAReQA Sec. 5 / App. B), significance tests, tokenizer audits."""

from relkt.analysis.embedding_views import language_id_probe, pca_2d
from relkt.analysis.language_bias import limit_to_one_target, monolingual_pool, remove_one_target, top_k_language_distribution
from relkt.analysis.significance import mcnemar, paired_bootstrap
from relkt.analysis.tokenizer_audit import audit_tokenizer, tokenizer_of

__all__ = [
    "audit_tokenizer", "language_id_probe", "limit_to_one_target", "mcnemar", "monolingual_pool", "paired_bootstrap",
    "pca_2d", "remove_one_target", "tokenizer_of", "top_k_language_distribution",
]
