"""One encoder scored on what a scoring read (relkt.data.scored_pool): LAReQA's pool, CL-ReLKT's XX->EN at its answer
units, held-out translation pairs and any named evaluators, every text encoded once for all of them; the pool ranked
language-aware beside the raw ranking when asked. Numbers only: the scoring job (relkt.jobs.scoring) checks the
arguments, reads, claims the output and writes what this returns."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from relkt.analysis.language_bias_removal import LanguageBiasRemoved, fit_on_pairs
from relkt.analysis.scoring_encoder import scoring_encoder
from relkt.analysis.tokenizer_audit import audit_tokenizer, max_length_of, tokenizer_of
from relkt.data.english_answer_units import EnglishAnswerUnits
from relkt.data.scored_pool import ScoredPool
from relkt.metrics.answer_context import context_weight
from relkt.metrics.corpus_bitext_evaluator import CorpusBitextEvaluator
from relkt.metrics.evaluation import Evaluation, adjusted_evaluation, per_question_arrays
from relkt.metrics.evaluator import EncodingCache, TextEncoder, pool_evaluators, run_evaluators
from relkt.metrics.lareqa_evaluator import LareqaEvaluator
from relkt.metrics.xx_en_unit_evaluator import XxEnUnitEvaluator

log = logging.getLogger("relkt.evaluate")
SPLITTER = "relkt.data.sentence_splitter (the source has no sentence breaks)"


@dataclass(frozen=True)
class PoolScoreOptions:
    """How to score (relkt.jobs.scoring.score's arguments, checked there)."""

    settings: Any  # the pool's settings (relkt.config.PoolSection), recorded with the results
    max_length: int | None = None
    batch_size: int = 64
    progress: bool = True
    language_pairs: str | None = None
    remove_language_subspace: int = 0
    remove_language_means: bool = False
    answer_context: bool = True
    evaluators: Sequence[str] = ()
    rank_adjust: str = "none"
    corpus_dir: str | None = None
    corpus_dev_pairs: int | None = None


def score_pool(encoder: str | TextEncoder, scored: ScoredPool, options: PoolScoreOptions) -> Evaluation:
    """`encoder` (a spec, built here once the data is read, or a built one) on `scored`: the raw `Evaluation`, and
    with `options.rank_adjust` the language-aware one in its `adjusted`."""
    from relkt.encoders import QuietEncoder  # deferred: heavy (TensorFlow)

    encoder, spec = scoring_encoder(encoder, options.max_length)
    warn_cut_units(encoder, scored.units)
    bias = None
    if options.language_pairs:
        encoder, bias = without_language_bias(encoder, scored, options)
    pool, settings = scored.pool, options.settings
    evaluator = LareqaEvaluator(
        pool, with_context=settings.with_context, batch_size=options.batch_size, answer_context=options.answer_context
    )
    unit_evaluator = XxEnUnitEvaluator(pool.questions, scored.units, batch_size=options.batch_size)
    more = pool_evaluators(list(options.evaluators), pool, options.batch_size)
    cached = EncodingCache(encoder if options.progress else QuietEncoder(encoder))
    t0 = time.perf_counter()
    flat = run_evaluators([evaluator, unit_evaluator, *more], cached)  # the questions are encoded once for all
    results = dict(evaluator.last_results)
    if more:
        results["more_metrics"] = {k: v for k, v in flat.items() if k.split("/")[0] in {e.name for e in more}}
    results.update({f"xx_en_{unit}": block for unit, block in unit_evaluator.last_results.items()})
    if scored.corpus is not None:
        bitext = CorpusBitextEvaluator(scored.corpus, options.batch_size)(cached)
        results["corpus"] = {
            lang: {"P@1": bitext[f"corpus/{lang}/P@1"], "n_pairs": len(scored.corpus[lang])}
            for lang in sorted(scored.corpus)
        }
    t2 = time.perf_counter()
    t1 = t0 + cached.seconds  # encoding, then ranking and counting
    results["setup"] = {
        "encoder": spec,
        "source": str(scored.source.path),
        "format": scored.source.format,
        "split": scored.split,
        "scored_whole": scored.within == "all",
        "split_unit": settings.split_unit,
        # the unit and the measured share of test questions whose context / article trains (relkt.data.splits)
        "split_cut": scored.split_cut,
        "split_fractions": list(settings.split_fractions),
        "split_seed": settings.split_seed,
        "folds": settings.folds,
        "fold": settings.fold,
        "langs": pool.langs,
        # where the candidate sentences come from: the files' own sentence breaks, or relkt's splitter
        "sentence_splitter": SPLITTER if pool.split_by_relkt else "the source's sentence_breaks",
        "with_context": settings.with_context,
        # the learned weight each candidate's paragraph was mixed in with (None: candidates as sentences alone)
        "answer_context": context_weight(encoder) if options.answer_context else None,
        "max_length": getattr(encoder, "max_length", None),
        "xx_en_units": {unit: len(x.texts) for unit, x in scored.units.items()},
        "corpus_dir": options.corpus_dir,
        "corpus_dev_pairs": options.corpus_dev_pairs if options.corpus_dir else None,
        "language_bias_removed": bias,
        "encode_seconds": round(t1 - t0, 2),
        "score_seconds": round(t2 - t1, 2),
    }
    result = Evaluation(results, per_question_arrays(evaluator, unit_evaluator))
    if options.rank_adjust != "none":
        result.adjusted = adjusted_evaluation(
            result, evaluator, unit_evaluator, cached, scored.dev_pool, options.rank_adjust
        )
    return result


def warn_cut_units(encoder, units: dict[str, EnglishAnswerUnits]) -> None:
    """Log how many unit texts the encoder's max_length cuts (a cut article is scored on its first paragraphs):
    a BERT reads at most 512 positions, and a hub export keeps the length it was exported with."""
    max_length, tokenizer = max_length_of(encoder), tokenizer_of(encoder)
    if max_length is None or tokenizer is None:
        return
    for unit, u in units.items():
        cut = round(audit_tokenizer(tokenizer, list(u.texts), max_length=max_length)["texts_cut"] * len(u.texts))
        if cut:
            log.warning(
                "XX->EN %s unit: %d of %d English %ss are longer than max_length %d and are cut (a muse "
                "export scores them whole as muse:DIR; a BERT cannot)",
                unit,
                cut,
                len(u.texts),
                unit,
                max_length,
            )


def without_language_bias(
    encoder: TextEncoder, scored: ScoredPool, options: PoolScoreOptions
) -> tuple[TextEncoder, dict]:
    """`encoder` wrapped to remove the language bias learned from the pairs read (never the pool's texts), and the
    record the results' setup keeps of it."""
    pairs, rank, means = options.language_pairs, options.remove_language_subspace, options.remove_language_means
    space, learned = fit_on_pairs(encoder, scored.bias_pairs, rank, batch_size=options.batch_size)
    missing = sorted(set(scored.pool.langs) - set(space.means))
    if means and missing:
        log.warning("no pair file for %s: their texts keep their own mean", ", ".join(missing))
    record = {"pairs": str(pairs), "rank": rank, "means": means, "unmatched": missing, **learned}
    return LanguageBiasRemoved(encoder, space, scored.lang_of, means, rank > 0), record
