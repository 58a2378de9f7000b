"""Does an encoder serve language X? The one coverage command: languages from pair files, and LAReQA's language bias.

    # languages from pair files: tokenizer, held-out pairs and questions both ways, a test source whole
    relkt coverage --encoder zero-shot=muse --encoder student=muse:runs/new_languages/student/best \
        --langs bn,te,fi,ja --pairs-dir ../shared/data/parallel --questions-dir ../shared/data/xor-questions \
        --test-dir ../shared/data/xquad-r --learned bn,te,fi,ja --output reports/new_languages
    # LAReQA's language-bias analyses on a QA pool (the default without --pairs-dir; --bias adds them to the above)
    relkt coverage --encoder zero-shot=minilm --encoder student=hub:runs/x/student/best \
        --split test --new-lang th --output reports/x

With `--pairs-dir`, per language and encoder (relkt.jobs.pair_coverage): how the tokenizer reads it, translation
retrieval on the held-out pairs both ways, XOR-TyDi-style question retrieval (`--questions-dir`, the rows not marked
`train`), and with `--test-dir` the test source whole; each encoder's difference from the first with McNemar's p.
Without it, or with `--bias`: LAReQA's analyses on the pool (limit/remove one target, monolingual pool, top-k
languages, PCA, language-ID probe, each encoder's tokenizer on the pool's questions), with paired bootstrap and
McNemar between encoders. Writes one OUTPUT/report.md and OUTPUT/report.json (the bias analyses under `bias` when
both ran), with figures beside them.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from relkt.cli.common import Parser, add_trust_flag, run_cli, shown
from relkt.cli.pool_flags import add_pool_arguments
from relkt.cli.types import comma_list, lang_sources, named_specs, positive_int, seed_int
from relkt.config.student_config import StudentDataSection
from relkt.jobs.audit import TEXTS
from relkt.jobs.coverage import run
from relkt.jobs.requests import CoverageRequest


def build_parser(prog: str = "relkt coverage") -> argparse.ArgumentParser:
    """`relkt coverage`'s flags."""
    p = Parser(prog=prog, description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument(
        "--encoder",
        action="append",
        required=True,
        metavar="NAME=SPEC",
        help="an encoder to report on (repeat; the first is the baseline), e.g. teacher=hub:runs/t/best",
    )
    add_pool_arguments(p)
    add_language_arguments(p)
    p.add_argument(
        "--tokenizers-only",
        action="store_true",
        help="each encoder's tokenizer on the pool's --texts alone, nothing encoded (the tokenizer audit's table; "
        "default: off)",
    )
    p.add_argument("--texts", default="questions", choices=TEXTS, help="with --tokenizers-only (default: questions)")
    p.add_argument(
        "--bias",
        action="store_true",
        help="with --pairs-dir, also LAReQA's language-bias analyses on the QA pool (without --pairs-dir they run "
        "anyway; default: off)",
    )
    p.add_argument(
        "--new-lang",
        default=None,
        help="a language to report coverage for: its row and column, forgetting "
        "elsewhere, its tokenizer (default: none)",
    )
    p.add_argument(
        "--pca-langs", type=comma_list, default=["en", "de"], help="two languages for the PCA view (default: en,de)"
    )
    p.add_argument(
        "--top-k", type=positive_int, default=100, help="depth of the top-k language distribution (default: 100)"
    )
    p.add_argument(
        "--bootstrap",
        type=positive_int,
        default=1000,
        help="bootstrap resamples for the mAP confidence intervals (default: 1000)",
    )
    p.add_argument("--batch-size", type=positive_int, default=128, help="texts per encoding batch (default: 128)")
    p.add_argument(
        "--seed", type=seed_int, default=0, help="seed of the bootstrap, probe and remove-one-target draws (default: 0)"
    )
    p.add_argument("--output", default="reports/coverage", help="report folder (default: reports/coverage)")
    add_trust_flag(p)
    return p


def add_language_arguments(p: argparse.ArgumentParser) -> None:
    """The pair-file flags of relkt coverage: --pairs-dir, --dev-pairs, --held-out-sources, --questions-dir,
    --qa-test-dir, --learned (--langs, --test-dir, --batch-size and --output are the command's own)."""
    p.add_argument(
        "--pairs-dir",
        default=None,
        help="folder of {lang}.tsv pair files (source, en, xx), e.g. ../shared/data/parallel: report on the --langs "
        "languages from them (default: none)",
    )
    p.add_argument(
        "--dev-pairs",
        type=positive_int,
        default=StudentDataSection.corpus_dev_pairs,
        help="held-out pairs per language: each source's last rows in its share, whole documents, the ones a "
        "student with this data.corpus_dev_pairs never trained on "
        f"(default: {StudentDataSection.corpus_dev_pairs})",
    )
    p.add_argument(
        "--held-out-sources",
        type=comma_list,
        default=[],
        help="comma-separated sources (the `source` column, e.g. tico19) held out whole: every pair of them is scored, "
        "none of another; what a student with data.corpus_held_out_sources never trained on (default: none: "
        "--dev-pairs of each file's last rows)",
    )
    p.add_argument(
        "--questions-dir",
        default=None,
        help="folder of {lang}.tsv question files with English translations "
        "(id, split, xx, en), e.g. ../shared/data/xor-questions (default: none)",
    )
    p.add_argument(
        "--other-domain",
        type=lang_sources,
        default={},
        help="LANG:SOURCE,... (e.g. te:tatoeba): every pair of that source scored as another domain, the other "
        "sources' last --dev-pairs rows as held-out pairs; what a student with data.corpus_other_domain never trained "
        "on (default: none)",
    )
    p.add_argument(
        "--qa-test-dir",
        default=None,
        help="a QA source scored whole (any format relkt reads, e.g. ../shared/data/mlqa/dev): each question "
        "language's answer retrieval, against its own paragraphs and articles and against English ones (default: none)",
    )
    p.add_argument(
        "--center",
        action="store_true",
        help="also score the questions with each side less its language's mean embedding over the file's "
        "`split = train` rows (language-mean removal): whether a student's questions crowd onto a few English hubs "
        "(the report gives each language's hub share); needs the query's language, so a diagnosis beside the plain "
        "figures, not a replacement",
    )
    p.add_argument(
        "--learned",
        type=comma_list,
        default=[],
        help="comma-separated languages the later encoders were taught; the "
        "--test-dir table marks the others, where a change is forgetting (default: none)",
    )


def request(args: argparse.Namespace) -> CoverageRequest:
    """The parsed flags as the job's request."""
    fields = {k: v for k, v in vars(args).items() if k != "encoder"}
    return CoverageRequest(encoders=named_specs(args.encoder), **fields)


def main(argv: Sequence[str] | None = None) -> int:
    """`relkt coverage`: flags in, one library call, the exit code out."""
    args = build_parser().parse_args(argv)
    trusted = vars(args).pop("trust_model")

    def body() -> int:
        result = run(request(args))
        if result.table:
            print(result.table)
            for line in result.report.get("skipped", {}).values():
                print(line, file=sys.stderr)
        figures = len(list(result.output.rglob("*.png")))
        print(
            f"wrote {shown(result.output / 'report.md')} and {shown(result.output / 'report.json')} ({figures} figures)"
        )
        return 0

    return run_cli(body, request=CoverageRequest, trusted=trusted)


if __name__ == "__main__":
    sys.exit(main())
