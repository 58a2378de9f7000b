"""CL-ReLKT's XX->EN document protocol: questions in language X rank every English answer unit of the data set."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from relkt.data.english_answer_units import EnglishAnswerUnits
from relkt.data.records import Question
from relkt.metrics.embedding_checks import check_embeddings
from relkt.metrics.evaluator import TextEncoder, register_evaluator
from relkt.metrics.ranking import gold_ranks, per_question_metrics, summarize


@register_evaluator
class XxEnUnitEvaluator:
    """Score questions against English units (sentence, paragraph, article), one result block per unit.

    `P@k` is the paper's: the share of questions whose English answer unit ranks in the top k (one gold, so it
    equals hit@k). Results: {unit: {lang: {"P@1", "P@5", "P@10", "MRR", "n_questions"}}}; `flat()` names them
    `xx_en_article/de/P@1` and `xx_en_article/P@1` (mean over question languages). `per_question[unit]` holds each
    question's hit@1 for McNemar's test between two encoders. Called with an encoder it returns `flat()`'s metrics
    (the evaluator protocol, relkt.metrics.evaluator; primary: the first unit's mean P@1); `results` the blocks.
    """

    name = "xx_en_units"

    def __init__(
        self,
        questions: Sequence[Question],
        units: Mapping[str, EnglishAnswerUnits],
        batch_size: int = 64,
        ks: Sequence[int] = (1, 5, 10),
    ):
        self.questions, self.units = list(questions), dict(units)
        self.batch_size, self.ks = batch_size, tuple(ks)
        self.per_question: dict[str, np.ndarray] = {}
        self.primary_metric = f"xx_en_{next(iter(self.units), 'article')}/P@1"

    def encode_units(self, encoder: TextEncoder) -> dict[str, np.ndarray]:
        """Each unit's English texts encoded (whole, as the encoder reads them)."""
        return {
            unit: encoder.encode(list(u.texts), batch_size=self.batch_size, progress=f"English {unit}s")
            for unit, u in self.units.items()
        }

    def compute(self, question_emb: np.ndarray, unit_emb: Mapping[str, np.ndarray]) -> dict:
        """Per unit and question language, P@k and MRR of the questions against every English unit."""
        langs = np.array([q.lang for q in self.questions])
        qas_ids = [q.qas_id for q in self.questions]
        results = {}
        check_embeddings(question_emb, "question")
        for unit, u in self.units.items():
            check_embeddings(unit_emb[unit], f"English {unit}")
            per_q = per_question_metrics(gold_ranks(question_emb, unit_emb[unit], u.gold(qas_ids)), self.ks, ())
            self.per_question[unit] = per_q["hit@1"]
            block = {}
            for lang in sorted(set(langs)):
                s = summarize(per_q, langs == lang)
                if not s["n_questions"]:  # no English answer unit for any of its questions: left out of the means
                    continue
                block[lang] = {f"P@{k}": s[f"hit@{k}"] for k in self.ks}
                block[lang].update(MRR=s["MRR"], n_questions=s["n_questions"])
            results[unit] = block
        return results

    def results(self, encoder: TextEncoder, question_emb: np.ndarray | None = None) -> dict:
        """The nested results of `compute` for `encoder` (its question embeddings given, or encoded here)."""
        if question_emb is None:
            question_emb = encoder.encode(
                [q.text for q in self.questions], batch_size=self.batch_size, progress="questions"
            )
        return self.compute(question_emb, self.encode_units(encoder))

    def __call__(self, encoder: TextEncoder) -> dict[str, float]:
        """The protocol: flat metrics; the nested blocks stay in `last_results`, hits in `per_question`."""
        self.last_results = self.results(encoder)
        return self.flat(self.last_results)

    @staticmethod
    def flat(results: Mapping[str, Mapping[str, Mapping[str, float]]]) -> dict[str, float]:
        """Nested unit results as flat keys: `xx_en_UNIT/P@1`, `xx_en_UNIT/LANG/P@1`, ..."""
        out = {}
        for unit, block in results.items():
            for lang, metrics in block.items():
                out.update({f"xx_en_{unit}/{lang}/{m}": x for m, x in metrics.items()})
            for m in next(iter(block.values()), {}):
                if m != "n_questions":
                    out[f"xx_en_{unit}/{m}"] = float(np.mean([v[m] for v in block.values()]))
        return out
