"""Every figure of one encoder on a language report's items (relkt.jobs.pair_coverage), and the McNemar comparisons
between encoders: how its tokenizer reads each language, retrieval between the two sides of held-out pairs and
questions (both directions), a QA test source whole (did a student forget?), and answer retrieval in a QA source's
languages. `quiet` is the encoder without progress bars; `encoder` itself reads units whole (`reading_whole`)."""

from __future__ import annotations

import numpy as np

from relkt.analysis.significance import mcnemar
from relkt.data.english_answer_units import QA_UNITS, SCORING_MAX_LENGTH, EnglishAnswerUnits, ScoredSource
from relkt.metrics import LareqaEvaluator
from relkt.metrics.evaluator import EncodingCache, TextEncoder
from relkt.metrics.pair_retrieval import centered, hub_share, pair_retrieval
from relkt.metrics.xx_en_unit_evaluator import XxEnUnitEvaluator


def pair_scores(
    encoder: TextEncoder, quiet: TextEncoder, items: dict, batch_size: int
) -> tuple[dict, dict[str, np.ndarray]]:
    """(figures, per-item hits) of one encoder (`quiet`: it without progress bars): tokenizer, and each task's
    retrieval in both directions."""
    from relkt.analysis.tokenizer_audit import audit_tokenizer, tokenizer_of, unreadable_scripts  # deferred: TensorFlow

    tokenizer, figures, hits = tokenizer_of(encoder), {}, {}
    for lang, pairs in items.get("pairs", {}).items() if tokenizer is not None else ():
        figures[lang] = {  # the tokenizer audit reads the same-source rows
            "tokenizer": {
                **audit_tokenizer(tokenizer, pairs.xx),
                "unreadable_scripts": unreadable_scripts(tokenizer, pairs.xx),
            }
        }
    centers = items.get("centers", {})
    for task, by_lang in items.items():
        if task == "centers":
            continue
        for lang, pairs in by_lang.items():
            xx = quiet.encode(pairs.xx, batch_size=batch_size)
            en = quiet.encode(pairs.en, batch_size=batch_size)
            entry = figures.setdefault(lang, {})
            tasks = {task: (xx, en)}
            if task == "questions" and lang in centers:
                train = centers[lang]
                means = [np.mean(quiet.encode(side, batch_size=batch_size), axis=0) for side in (train.xx, train.en)]
                tasks["questions_centered"] = (centered(xx, means[0]), centered(en, means[1]))
            for name, (a, b) in tasks.items():
                result = pair_retrieval(a, b, pairs.xx, pairs.en, f"{name} {lang}")
                entry[name] = {
                    d: {"P@1": r["P@1"], "MRR": r["MRR"], "margin P@1": r["margin P@1"], "n": len(pairs)}
                    for d, r in result.items()
                }
                entry[name]["hub_share"] = hub_share(a, b)
                hits.update({f"{name}/{lang}/{d}": r["hit1"] for d, r in result.items()})
    return figures, hits


def test_source_scores(
    encoder: TextEncoder, quiet: TextEncoder, source: ScoredSource, batch_size: int
) -> tuple[dict, dict[str, np.ndarray]]:
    """{lang: {"mAP", "article P@1"}} on the whole test source (`source`: its pool and English article units, read
    once), and per-question article hits (for McNemar); articles are read whole (`reading_whole`), as relkt evaluate
    reads them."""
    from relkt.encoders.reading_whole_evaluator import ReadingWholeEvaluator  # deferred: TensorFlow

    cache = EncodingCache(quiet)  # the questions encoded once for both evaluators
    pool, english = source
    evaluator = LareqaEvaluator(pool, batch_size=batch_size)
    units = XxEnUnitEvaluator(pool.questions, english, batch_size=batch_size)
    whole = ReadingWholeEvaluator(units, encoder, SCORING_MAX_LENGTH)  # questions from the cache, articles whole
    evaluator(cache)
    whole(cache)
    results, article = evaluator.last_results, units.last_results["article"]
    langs = np.asarray(pool.question_langs)
    hit = units.per_question["article"]
    figures = {
        lang: {
            "mAP": results["lareqa"]["per_language"][lang]["mAP"],
            "article P@1": article[lang]["P@1"],
            "n": int((langs == lang).sum()),
        }
        for lang in sorted(set(langs))
    }
    return figures, {f"test/{lang}": hit[langs == lang] > 0 for lang in figures}


def qa_source_scores(
    encoder: TextEncoder, quiet: TextEncoder, source: ScoredSource, batch_size: int
) -> tuple[dict, dict[str, np.ndarray]]:
    """Answer retrieval on a QA test source whole, each question language L both ways the paper ranks documents:
    in-language (L's questions against every paragraph / article in L) and XX->EN (against every English one, where
    the source has English). {lang: {"in-language paragraph P@1", ..., "XX->EN article P@1", "n"}} and per-question
    hits `qa/L/in_UNIT`, `qa/L/en_UNIT` (for McNemar). `source`: its pool and English QA_UNITS ({} without English),
    read once. Units are read whole, as relkt evaluate reads them."""
    from relkt.encoders.reading_whole_evaluator import ReadingWholeEvaluator  # deferred: TensorFlow

    whole, english = source
    langs = sorted(set(whole.question_langs))
    evaluators = {}
    for lang in langs:
        own = whole.subset(question_langs=[lang], candidate_langs=[lang])
        if len(own.questions):
            units = {u: EnglishAnswerUnits.from_pool(own, u, lang=lang) for u in QA_UNITS}
            evaluators[("in", lang)] = XxEnUnitEvaluator(own.questions, units, batch_size=batch_size)
    asked = [q for q in whole.questions if q.lang != "en"]
    if english and asked:
        evaluators[("en", "")] = XxEnUnitEvaluator(asked, english, batch_size=batch_size)
    cache = EncodingCache(quiet)  # each language's blocks name the same metrics: run one by one on one cache
    for evaluator in evaluators.values():
        ReadingWholeEvaluator(evaluator, encoder, SCORING_MAX_LENGTH)(cache)
    figures: dict[str, dict] = {lang: {"n": int(np.sum(whole.question_langs == lang))} for lang in langs}
    hits: dict[str, np.ndarray] = {}
    for (kind, _), evaluator in evaluators.items():
        asked_langs = np.array([q.lang for q in evaluator.questions])
        for unit in QA_UNITS:
            for x, block in evaluator.last_results[unit].items():
                name = "in-language" if kind == "in" else "XX->EN"
                figures[x][f"{name} {unit} P@1"] = block["P@1"]
                hits[f"qa/{x}/{kind}_{unit}"] = evaluator.per_question[unit][asked_langs == x] > 0
    return figures, hits


def compare_hits(hits: dict[str, dict[str, np.ndarray]], names: list[str]) -> dict:
    """{"later vs first": {item key: {"difference", "p_value", "only_first", "only_later"}}}: McNemar on paired hits."""
    base, out = names[0], {}
    for name in names[1:]:
        out[f"{name} vs {base}"] = {
            key: {"difference": float(np.mean(hits[name][key]) - np.mean(a)), **_mcnemar(a, hits[name][key])}
            for key, a in hits[base].items()
        }
    return out


def _mcnemar(a: np.ndarray, b: np.ndarray) -> dict:
    test = mcnemar(a, b)
    return {"p_value": test["p_value"], "only_first": test["only_a"], "only_later": test["only_b"]}
