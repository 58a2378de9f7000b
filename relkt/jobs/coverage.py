"""Does an encoder serve language X? The coverage job: languages from pair files, and LAReQA's language bias.

    from relkt import api
    from relkt.jobs.requests import CoverageRequest

    # languages from pair files: tokenizer, held-out pairs and questions both ways, a test source whole
    api.coverage(CoverageRequest(encoders={"zero-shot": "muse", "student": "muse:runs/s/best"}, langs=["bn", "fi"],
                                 pairs_dir="../shared/data/parallel", output="reports/new_languages"))
    # LAReQA's language-bias analyses on a QA pool (the default without pairs_dir; bias=True adds them to the above)
    api.coverage(CoverageRequest(encoders={"zero-shot": "minilm"}, split="test", new_lang="th", output="reports/x"))

One pass, top to bottom: the request checked, every input read once (the QA pool, the pair files, the test sources)
before any model loads, the output claimed, then each encoder built once and scored on all of them
(relkt.analysis.pair_scores, relkt.analysis.pool_bias_scores), and the report written once.

With `pairs_dir`, per language and encoder (relkt.jobs.pair_coverage): how the tokenizer reads it, translation
retrieval on the held-out pairs both ways, XOR-TyDi-style question retrieval (`questions_dir`, the rows not marked
`train`), and with `test_dir` the test source whole; each encoder's difference from the first with McNemar's p.
Without it, or with `bias`: LAReQA's analyses on the pool (limit/remove one target, monolingual pool, top-k
languages, PCA, language-ID probe, each encoder's tokenizer on the pool's questions), with paired bootstrap and
McNemar between encoders. `tokenizers_only`: the tokenizer audit of the pool alone. Writes one OUTPUT/report.md and
OUTPUT/report.json (the bias analyses' figures under `bias` when both ran), and returns them as a `CoverageResult`.
"""

from __future__ import annotations

import dataclasses
import logging

from relkt.analysis.coverage_scores import CoverageInputs, coverage_comparisons, encoder_coverage
from relkt.data.english_answer_units import QA_UNITS, english_units, scored_source
from relkt.data.lareqa_pool import LareqaPool
from relkt.data.pair_items import PairItems, read_pair_items
from relkt.data.qa_source import QaSource
from relkt.data.selection import load_split
from relkt.errors import ConfigError
from relkt.io import claim_dir, data_paths
from relkt.jobs.audit import encoder_specs
from relkt.jobs.pair_coverage import held_out_how
from relkt.jobs.pool import pool_settings
from relkt.jobs.requests import CoverageRequest
from relkt.jobs.results import CoverageResult
from relkt.reports.coverage_writer import write_coverage

log = logging.getLogger("relkt.coverage")


def run(request: CoverageRequest, items: PairItems | None = None) -> CoverageResult:
    """Languages from pair files (`pairs_dir`), the bias analyses (without it, or with `bias`), or both as one
    report: the languages' report.md with the bias sections after it, their figures in OUTPUT/bias/. With
    `tokenizers_only`, the tokenizer audit of the pool alone. `items`: the pair files already read
    (`relkt.jobs.pair_coverage.read_items`), so a caller that checked them hands them on instead of a second read."""
    specs = encoder_specs(request)
    inputs = CoverageInputs(
        tokenizers_only=request.tokenizers_only,
        languages=bool(request.pairs_dir) and not request.tokenizers_only,
        bias=not request.tokenizers_only and (request.bias or not request.pairs_dir),
        texts=request.texts,
        top_k=request.top_k,
        pca_langs=list(request.pca_langs),
        seed=request.seed,
        bootstrap=request.bootstrap,
        batch_size=request.batch_size,
    )
    if inputs.languages and not request.langs:
        raise ConfigError("CoverageRequest.langs: name the languages to report on with pairs_dir (e.g. bn, fi)")
    held_out = held_out_how(request) if inputs.languages else ""
    # the pool of the bias analyses and of the tokenizer audit; beside pair files `langs` names those, not the pool's
    pool_request = dataclasses.replace(request, langs=None) if inputs.languages else request
    settings = pool_settings(pool_request) if inputs.bias or inputs.tokenizers_only else None
    inputs.pool = None if settings is None else load_split(settings, request.split, langs=pool_request.langs)
    _check_new_lang(request.new_lang, inputs.pool)
    if inputs.languages:
        inputs.items = items or read_pair_items(
            request.langs or [],
            request.pairs_dir,
            request.dev_pairs,
            request.held_out_sources,
            request.questions_dir,
            request.center,
            where="CoverageRequest.",
            other_domain=request.other_domain,
        )
        if request.test_dir:  # read once here, not once an encoder
            test = QaSource.open(request.test_dir)
            inputs.test = (LareqaPool.from_source(test), english_units(test, ["article"]))
        if request.qa_test_dir:
            inputs.qa_test = scored_source(QaSource.open(request.qa_test_dir), QA_UNITS)
    setup = {**dataclasses.asdict(request), "specs": specs, "held_out": held_out, **_items_setup(inputs.items)}
    # every input read and checked; nothing written yet
    out = claim_dir(request.output, "coverage", reads=data_paths(request))
    from relkt.encoders import build_encoder  # deferred: heavy (TensorFlow); bad input failed before it loads

    scores = {}
    for name, spec in specs.items():
        log.info("scoring %s (%s)", name, spec)
        scores[name] = encoder_coverage(build_encoder(spec, trainable=False), inputs)
    comparisons = coverage_comparisons(scores, inputs)
    report, markdown, table = write_coverage(out, scores, comparisons, setup, inputs.pool)
    return CoverageResult(out, report, markdown, table)


def _items_setup(items: PairItems | None) -> dict:
    """The languages' report's setup entries of the pair files' items: their languages, and the questions scored."""
    if items is None:
        return {}
    asked = items.items.get("questions", {})
    return {"langs": items.langs, "questions_scored": {lang: len(q) for lang, q in asked.items()}}  # not `train` rows


def _check_new_lang(new_lang: str | None, pool: LareqaPool | None) -> None:
    if new_lang and pool is not None and new_lang not in pool.langs:
        raise ConfigError(f"CoverageRequest.new_lang {new_lang!r} is not in the pool; valid: {', '.join(pool.langs)}")
