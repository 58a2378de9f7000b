"""One dev figure over every language a run is judged on: the QA dev's P@1 beside each language's translation
retrieval on held-out pairs, so a teacher that learns English QA while forgetting the other languages is not chosen."""

from __future__ import annotations

import numpy as np

from relkt.metrics.evaluator import Evaluator, TextEncoder, register_evaluator


@register_evaluator
class JointEvaluator:
    """`joint/P@1`: the mean of the QA evaluator's `qa_metric` and each language's `corpus/LANG/P@1` from `corpus`
    (English counts once, as each other language does), beside `corpus`'s own metrics. `qa` is called again for its
    figure; inside one round of `run_evaluators` its texts are encoded once, so that costs only the ranking."""

    name, primary_metric = "joint", "joint/P@1"

    def __init__(self, qa: Evaluator, corpus: Evaluator, qa_metric: str = "xx_en/en/P@1"):
        self.qa, self.corpus, self.qa_metric = qa, corpus, qa_metric

    def __call__(self, encoder: TextEncoder) -> dict[str, float]:
        qa = self.qa(encoder)
        if self.qa_metric not in qa:
            raise ValueError(f"joint: the QA evaluator reports no {self.qa_metric} (it has {sorted(qa)[:5]} ...)")
        corpus = self.corpus(encoder)
        langs = [v for k, v in corpus.items() if k.count("/") == 2]
        return {**corpus, "joint/P@1": float(np.mean([qa[self.qa_metric], *langs]))}
