"""What scoring one encoder on one split gives (`Evaluation`): the results in relkt evaluate's JSON layout and each
question's scores, flattened to one key a metric."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from relkt.data.lareqa_pool import LareqaPool
from relkt.metrics import language_aware_ranking as lar
from relkt.metrics.lareqa_evaluator import LareqaEvaluator
from relkt.metrics.xx_en_unit_evaluator import XxEnUnitEvaluator

log = logging.getLogger("relkt.evaluate")


@dataclass
class Evaluation:
    """What scoring one encoder on one split gives: `results` in relkt evaluate's JSON layout (LAReQA per language,
    `xx_en`, `xx_en_UNIT`, `bitext`, `corpus`, `setup`), `per_question` the arrays McNemar and the bootstrap compare
    (qas_id, lang, AP, xx_en_hit1, xx_en_UNIT_hit1 ...), and `output` where both were written, if they were."""

    results: dict[str, Any]
    per_question: dict[str, np.ndarray] = field(default_factory=dict)
    output: Path | None = None
    # the same pool ranked language-aware (`score(rank_adjust=...)`): always beside the raw scores, never instead
    adjusted: Evaluation | None = None

    def flat(self) -> dict[str, float]:
        """Every metric under one flat key: `lareqa/mAP`, `lareqa/de/P@1`, `xx_en/de/P@1`, `xx_en_article/el/P@1`."""
        out = LareqaEvaluator.flat(self.results)
        out.update(XxEnUnitEvaluator.flat({k[6:]: v for k, v in self.results.items() if k.startswith("xx_en_")}))
        out.update(self.results.get("more_metrics", {}))
        return out

    def metric(self, key: str) -> float:
        """One flat metric; a KeyError lists a few of the keys there are."""
        flat = self.flat()
        if key not in flat:
            raise KeyError(f"no metric {key!r}; e.g. {', '.join(sorted(flat)[:6])} ({len(flat)} in all)")
        return flat[key]


def per_question_arrays(evaluator, unit_evaluator=None) -> dict[str, np.ndarray]:
    """Per-question LAReQA AP, XX->EN (per unit) and bitext hit@1 with each question's qas_id and language, so two
    runs over the same split can be compared question by question without encoding again."""
    pool, per_q = evaluator.pool, evaluator.per_question
    arrays = {
        "qas_id": np.array([q.qas_id for q in pool.questions]),
        "lang": np.asarray(pool.question_langs, dtype=str),
        "AP": per_q["lareqa"]["AP"],
    }
    if "xx_en" in per_q:
        arrays["xx_en_hit1"] = per_q["xx_en"]["hit@1"]
    if "bitext" in per_q:
        arrays["bitext_hit1"] = per_q["bitext"]["hit@1"]  # NaN for English and questions with no English twin
    for unit, hit in (unit_evaluator.per_question if unit_evaluator else {}).items():
        arrays[f"xx_en_{unit}_hit1"] = hit
    return arrays


def rank_choice_line(record: dict) -> str:
    """The setting(s) a language-aware ranking used, in a few words."""
    if record["mode"] == "crossfit":
        halves = [(k, v) for k, v in record.items() if k.startswith("half")]
        return ", ".join(f"{k} {v['chosen']} ({v['questions']} questions)" for k, v in halves)
    return record["chosen"]


def adjusted_evaluation(
    raw: Evaluation, evaluator, unit_evaluator, cached, dev_pool: LareqaPool | None, rank_adjust: str
) -> Evaluation:
    """The raw evaluation's pool ranked language-aware: the setting fixed, chosen on the same source's dev split
    (`dev_pool`, read beside the test split), or cross-fitted by article halves (a pool scored whole). The
    embeddings are the raw scoring's (the cache encodes nothing again); the answer-unit XX->EN blocks rank English
    units alone and stay the raw ones."""
    pool = evaluator.pool
    q, c = evaluator.encode(cached)
    if rank_adjust != "auto":
        chosen: Any = lar.RankSetting.parse(rank_adjust)
        record: dict[str, Any] = {"mode": "fixed", "chosen": chosen.name}
    elif dev_pool is not None:
        dev_eval = LareqaEvaluator(
            dev_pool, evaluator.with_context, evaluator.batch_size, answer_context=evaluator.answer_context
        )
        qd, cd = dev_eval.encode(cached)
        chosen, maps = lar.choose_setting(qd, cd, dev_pool.gold, dev_pool.candidate_langs)
        record = {"mode": "dev", "chosen": chosen.name, "dev_questions": len(dev_pool.questions), "chosen_on": maps}
    else:
        halves = lar.article_halves([x.qas_id for x in pool.questions], [x.article for x in pool.questions])
        chosen, choice = lar.crossfit_settings(q, c, pool.gold, pool.candidate_langs, halves)
        record = {"mode": "crossfit", "folds": 2, **choice}
    ranking = lar.LanguageAwareRanking(q, c, pool.candidate_langs, chosen)
    context = evaluator.answer_context
    adjusted = LareqaEvaluator(pool, evaluator.with_context, evaluator.batch_size, answer_context=context)
    results = adjusted.compute(q, c, ranking)
    results.update({k: v for k, v in raw.results.items() if k.startswith("xx_en_") or k == "corpus"})
    results["setup"] = dict(raw.results["setup"])
    results["rank_adjust"] = record
    log.info("language-aware ranking (%s): %s", record["mode"], rank_choice_line(record))
    return Evaluation(results, per_question_arrays(adjusted, unit_evaluator))
