"""The evaluator protocol: every evaluator is encoder in, flat prefixed metrics out, with a primary metric among them;
`run_evaluators` encodes each distinct list of texts once and refuses two evaluators giving one key."""

import pytest

from relkt.metrics import EVALUATORS, CorpusBitextEvaluator, RetrievalEvaluator, XxEnUnitEvaluator, run_evaluators
from tests.helpers.fakes import LookupEncoder, units_by_hand

UNITS, QUESTIONS, TABLE = units_by_hand()  # de P@1 = 1/2, en P@1 = 1/2 on English articles A and B


class CountingEncoder(LookupEncoder):
    def __init__(self, table):
        super().__init__(table)
        self.calls = []

    def encode(self, texts, batch_size=64, progress=False):
        self.calls.append(tuple(texts))
        return super().encode(texts, batch_size, progress)


class Pairs:
    def __init__(self, en, xx):
        self.en, self.xx = en, xx


def test_the_table_holds_every_evaluator():
    assert set(EVALUATORS) == {"lareqa", "xx_en_units", "corpus", "retrieval", "joint"}


def test_the_joint_metric_is_the_mean_of_the_qa_figure_and_each_language():
    from relkt.metrics.joint_evaluator import JointEvaluator

    class Fixed:
        def __init__(self, name, metrics):
            self.name, self.primary_metric, self.metrics = name, next(iter(metrics)), metrics

        def __call__(self, encoder):
            return dict(self.metrics)

    qa = Fixed("lareqa", {"xx_en/en/P@1": 0.6, "lareqa/mAP": 0.3})
    corpus = Fixed("corpus", {"corpus/de/P@1": 0.9, "corpus/el/P@1": 0.0, "corpus/P@1": 0.45})
    out = JointEvaluator(qa, corpus)(None)
    assert out["joint/P@1"] == pytest.approx((0.6 + 0.9 + 0.0) / 3) and out["corpus/el/P@1"] == 0.0


def test_each_evaluator_gives_flat_prefixed_metrics_with_its_primary_among_them():
    enc = LookupEncoder(TABLE)
    units = XxEnUnitEvaluator(QUESTIONS, UNITS)
    # Corpus: de1 -> "en1" is [0.2, 0.8]; de1 = [0.9, 0.1] is nearer "A text"? Only the slice's English side ranks:
    # en = [en1, en2] = [[0.2, 0.8], [0, 1]]; de1 scores 0.26 vs 0.1 -> en1 first (hit); de2 scores 0.32 vs 0.2 ->
    # en1 first, but its translation is en2 (miss): P@1 = 1/2.
    corpus = CorpusBitextEvaluator({"de": Pairs(["en1", "en2"], ["de1", "de2"])})
    # Retrieval: query de1 against A/B with gold A: hit, so mAP = 1.
    retrieval = RetrievalEvaluator({"q": "de1"}, {"a": "A text", "b": "B text"}, {"q": {"a"}}, name="toy")
    for evaluator, primary, value in (
        (units, "xx_en_article/P@1", 0.5),
        (corpus, "corpus/P@1", 0.5),
        (retrieval, "toy_mAP", 1.0),
    ):
        metrics = evaluator(enc)
        assert all(isinstance(v, float | int) for v in metrics.values())
        assert evaluator.primary_metric == primary and metrics[primary] == pytest.approx(value)


def test_run_evaluators_encodes_each_text_list_once_and_refuses_a_repeated_key():
    enc = CountingEncoder(TABLE)
    units = XxEnUnitEvaluator(QUESTIONS, UNITS)
    metrics = run_evaluators([units, RetrievalEvaluator({"q": "de1"}, {"a": "A text"}, {"q": {"a"}})], enc)
    assert metrics["xx_en_article/de/P@1"] == 0.5 and metrics["mAP"] == 1.0
    # Questions and English articles once each; the retrieval evaluator's two lists are new.
    assert enc.calls == [("de1", "de2", "en1", "en2"), ("A text", "B text"), ("de1",), ("A text",)]
    with pytest.raises(ValueError, match="evaluator 'xx_en_units' repeats metric"):
        run_evaluators([units, XxEnUnitEvaluator(QUESTIONS, UNITS)], enc)
