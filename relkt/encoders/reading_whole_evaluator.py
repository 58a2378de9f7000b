"""An evaluator run while a model reads texts whole: the XX->EN protocol's English units (paragraphs, articles) are
longer than the questions and sentences a run trains on, so they are scored at SCORING_MAX_LENGTH pieces."""

from __future__ import annotations

from relkt.encoders.sentence_encoder import SentenceEncoder, reading_whole


class ReadingWholeEvaluator:
    """`evaluator` (relkt.metrics.evaluator's protocol) called inside `reading_whole(model, max_length)`; its name
    and primary metric are the evaluator's."""

    def __init__(self, evaluator, model: SentenceEncoder, max_length: int):
        self.evaluator, self.model, self.max_length = evaluator, model, max_length
        self.name, self.primary_metric = evaluator.name, evaluator.primary_metric

    def __call__(self, encoder) -> dict[str, float]:
        with reading_whole(self.model, self.max_length):
            return self.evaluator(encoder)

    def __getattr__(self, name: str):
        """The wrapped evaluator's results (`last_results`, `per_question`) read through the wrapper."""
        if name == "evaluator":  # not set yet (unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.evaluator, name)
