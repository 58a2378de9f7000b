"""Translation retrieval on held-out parallel text: does the student find an X sentence's English translation among
the slice's English sentences? The dev metric of corpus-trained students (`corpus/LANG/P@1`, `corpus/P@1`)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from relkt.metrics.embedding_checks import check_embeddings
from relkt.metrics.evaluator import register_evaluator
from relkt.metrics.ranking import gold_ranks


@register_evaluator
class CorpusBitextEvaluator:
    """`dev`: {lang: pairs with `.en` and `.xx` lists} (e.g. `ParallelCorpus` slices). Each X sentence ranks every
    English sentence of its language's slice; a hit is an English sentence that is its translation ranked first
    (an English sentence with two translations in the slice is gold for both). Ties rank by index."""

    name, primary_metric = "corpus", "corpus/P@1"

    def __init__(self, dev: Mapping[str, object], batch_size: int = 128):
        self.dev, self.batch_size = dict(dev), batch_size

    def __call__(self, encoder) -> dict[str, float]:
        out = {}
        for lang, pairs in sorted(self.dev.items()):
            en, xx = list(pairs.en), list(pairs.xx)
            if not en:
                continue
            first = {}
            gold_of = [first.setdefault(text, []) for text in en]
            for j, text in enumerate(en):
                first[text].append(j)
            gold = [np.array(g, dtype=np.int64) for g in gold_of]
            xx_emb, en_emb = (
                encoder.encode(xx, batch_size=self.batch_size),
                encoder.encode(en, batch_size=self.batch_size),
            )
            check_embeddings(xx_emb, f"corpus {lang}")
            check_embeddings(en_emb, f"corpus {lang} English")
            ranks = gold_ranks(xx_emb, en_emb, gold)
            out[f"corpus/{lang}/P@1"] = float(np.mean(ranks[:, 0] == 1))
        if out:
            out["corpus/P@1"] = float(np.mean(list(out.values())))
        return out
