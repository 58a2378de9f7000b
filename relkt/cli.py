"""The CLIs' shared layer: the pool and split flags (defaults from the config's `PoolSection`, or a run's own
settings with `--config RUN/config.yaml`), the opening every CLI has (logging; a RelktError is one `error:` line
and exit code 2), and the trainers' `--config/--set/--smoke` entry point."""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from relkt import quiet_tensorflow
from relkt.cli_types import language_list, split_fractions
from relkt.config import PoolSection, read_config_file
from relkt.config.config_io import config_yaml, run_config
from relkt.config.reference import help_text
from relkt.data.english_answer_units import UNITS
from relkt.data.qa_format import check_format_name, format_names
from relkt.data.selection import load_split
from relkt.data.sources import ENV_VAR
from relkt.data.splits import SPLIT_UNITS, SPLITS
from relkt.errors import ConfigError, Interrupted, RelktError, WriteError, catch_sigint, is_interrupt
from relkt.io import os_reason

_POOL = PoolSection()


def add_pool_arguments(
    p: argparse.ArgumentParser, split: str = "test", langs: bool = True, config: bool = True
) -> None:
    """--data-dir, --format, --test-dir, --test-format, --split, --split-fractions, --split-seed (and --langs,
    --config RUN/config.yaml)."""
    p.add_argument(
        "--data-dir",
        default=None,
        help=f"the training source: a folder of XQuAD-R/SQuAD {{lang}}.json files, "
        f"an MLQA folder or a .jsonl file (default: the --config run's, ${ENV_VAR}, cache, download)",
    )
    p.add_argument(
        "--format",
        default=None,
        choices=format_names(),
        help="the --data-dir format (default: auto, told by the files, or the --config run's)",
    )
    p.add_argument(
        "--test-dir",
        default=None,
        help="a test source apart from the training one, scored whole with --split "
        "test; one sharing an article, context or question id with --data-dir is refused (default: the "
        "--config run's data.test_dir, else none: the test split of --data-dir)",
    )
    p.add_argument("--test-format", default=None, choices=format_names(), help="the --test-dir format (default: auto)")
    p.add_argument("--split", default=split, choices=SPLITS, help=f"article-level split to score (default: {split})")
    fractions = ",".join(f"{x:g}" for x in _POOL.split_fractions)
    p.add_argument(
        "--split-fractions",
        type=split_fractions,
        default=None,
        help=f"train,dev,test article fractions (default: {fractions}, or the --config run's)",
    )
    p.add_argument(
        "--split-seed",
        type=int,
        default=None,
        help=f"seed of the article split (default: {_POOL.split_seed}, or the --config run's)",
    )
    p.add_argument(
        "--split-unit",
        default=None,
        choices=SPLIT_UNITS,
        help="what the split keeps together: article, context or question (the latter two let test questions' "
        "paragraphs or articles train: add --allow-test-overlap) (default: article, or the --config run's)",
    )
    p.add_argument(
        "--allow-test-overlap",
        action="store_true",
        default=None,
        help="accept a --split-unit whose test questions' contexts or articles are in training (default: refused, "
        "or the --config run's)",
    )
    p.add_argument(
        "--folds",
        type=int,
        default=None,
        help="k-fold split: K folds of the shuffled units (default: 0, none, or the --config run's)",
    )
    p.add_argument(
        "--fold",
        type=int,
        default=None,
        help="with --folds: the fold scored as test (default: 0, or the --config run's)",
    )
    if langs:
        p.add_argument(
            "--langs", type=language_list, default=None, help="comma-separated language codes (default: all found)"
        )
    if config:
        p.add_argument(
            "--config",
            default=None,
            metavar="RUN/config.yaml",
            help="a run's config: its data folder, article split and candidate text (with_context) are used "
            "unless given here, so the run is scored on the split it trained with (default: none)",
        )


def xx_en_units(text: str) -> tuple[str, ...]:
    """The `--xx-en-unit` type: `article,paragraph` -> ("article", "paragraph"); `none` -> ()."""
    names = tuple(x.strip() for x in text.split(",") if x.strip())
    if names == ("none",):
        return ()
    bad = [x for x in names if x not in UNITS]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"expected units among {', '.join(UNITS)} (or none), got {text!r}")
    return tuple(dict.fromkeys(names))


def pool_settings(args: argparse.Namespace) -> PoolSection:
    """The pool settings of the command line: flags given, else the `--config` run's, else the defaults."""
    run = _run_data(args.config) if getattr(args, "config", None) else {}
    settings = PoolSection(
        data_dir=run.get("data_dir"),
        split_fractions=list(run.get("split_fractions", _POOL.split_fractions)),
        split_seed=run.get("split_seed", _POOL.split_seed),
        with_context=bool(run.get("with_context", False)),
        folds=int(run.get("folds", 0)),
        fold=int(run.get("fold", 0)),
        split_unit=run.get("split_unit", _POOL.split_unit),
        allow_test_overlap=bool(run.get("allow_test_overlap", False)),
    )
    for key in ("format", "test_dir", "test_format"):
        setattr(settings, key, run.get(key, getattr(_POOL, key)))
    for key in ("data_dir", "format", "test_dir", "test_format"):
        if getattr(args, key, None) is not None:
            setattr(settings, key, getattr(args, key))
    if getattr(args, "test_dir", None) and args.split != "test":
        raise ConfigError(
            f"--test-dir {args.test_dir} is scored as the test split, not --split {args.split}; dev and train "
            "come from the training source (drop --test-dir, or score --split test)"
        )
    if args.split_fractions is not None:
        settings.split_fractions = list(args.split_fractions)
    if args.split_seed is not None:
        settings.split_seed = args.split_seed
    if getattr(args, "with_context", False):
        settings.with_context = True
    for key in ("folds", "fold", "split_unit", "allow_test_overlap"):
        if getattr(args, key, None) is not None:
            setattr(settings, key, getattr(args, key))
    settings.validate()
    check_formats(settings)
    return settings


def check_formats(data: PoolSection) -> None:
    """`data.format` and `data.test_format` are `auto` or registered formats: answered before TensorFlow loads."""
    for key in ("format", "test_format"):
        check_format_name(getattr(data, key), f"data.{key}")


def _run_data(path: str) -> dict[str, Any]:
    try:
        data = read_config_file(path).get("data")
    except ConfigError as e:
        raise ConfigError(f"--config {path}: cannot read it ({e})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"--config {path}: no `data` section; pass a run folder's config.yaml")
    return data


def load_pool(args: argparse.Namespace, settings: PoolSection | None = None):
    """The LareqaPool the pool flags name (`settings`: their `pool_settings`, when the caller has them already)."""
    langs = [x.strip() for x in args.langs.split(",") if x.strip()] if getattr(args, "langs", None) else None
    return load_split(settings or pool_settings(args), args.split, langs=langs)


EXIT_INTERRUPTED = 130  # what a shell reports for a command stopped by SIGINT


def run_cli(
    body: Callable[[], int], verbose: bool = True, interrupted: str = "interrupted; nothing was written"
) -> int:
    """Run a CLI's work: relkt's log lines at INFO (`verbose`), others at WARNING. Each way it can fail is one line on
    stderr, never a traceback: a RelktError (bad input) is `error: ...` and exit code 2; an OS error (a write to a
    read-only folder, a full disk, a file-size limit) is `error: PATH: cannot write (REASON)` and exit code 1;
    Ctrl-C prints `interrupted` (or the trainer's own line, with its step) and exits 130, also when it first lands in
    a finalizer that swallows it (`relkt.errors.catch_sigint`). TensorFlow's C++ start-up
    logs are off here (a CLI's choice; `import relkt` leaves its user's process alone) unless RELKT_VERBOSE=1."""
    quiet_tensorflow.install()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if verbose:
        logging.getLogger("relkt").setLevel(logging.INFO)
    try:
        with catch_sigint():
            return body()
    except Interrupted as e:
        print(str(e), file=sys.stderr)
        return EXIT_INTERRUPTED
    except (KeyboardInterrupt, RuntimeError) as e:
        if not is_interrupt(e):
            raise
        print(interrupted, file=sys.stderr)
        return EXIT_INTERRUPTED
    except OSError as e:  # WriteError included: it names its path and reason already
        where = f"{e.filename}: " if getattr(e, "filename", None) and not isinstance(e, WriteError) else ""
        print(f"error: {where}{e if isinstance(e, WriteError) else os_reason(e)}", file=sys.stderr)
        return 1
    except RelktError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def trainer_main(argv: Sequence[str] | None, prog: str, doc: str, config_cls, train_fn, stage: str) -> int:
    """The CLI of both trainers: --config, --set, --smoke."""
    p = argparse.ArgumentParser(
        prog=prog,
        description=doc.split("\n")[0],
        epilog=help_text(config_cls),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--config",
        default=None,
        help="YAML config, e.g. configs/quickstart.yaml (default: none, every key at its default)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a config key (dotted, value parsed as YAML; repeat; default: none)",
    )
    p.add_argument(
        "--smoke", action="store_true", help="shrink data, batch and evaluation for a quick check (default: off)"
    )
    p.add_argument(
        "--print-config",
        action="store_true",
        help="print the resolved config (base chain, --set and --smoke applied; what the run folder stores) and exit",
    )
    args = p.parse_args(argv)

    def body() -> int:
        config = run_config(config_cls, args.config, args.set, args.smoke)
        check_formats(config.data)
        if args.print_config:
            print(config_yaml(config), end="")
            return 0
        print(final_line(stage, train_fn(config), Path(config.output_dir) / "best"))
        return 0

    return run_cli(body, interrupted="interrupted before training started; rerun the same command to resume")


def final_line(stage: str, summary: dict[str, Any], best_dir: Path) -> str:
    """A trainer's last line: its best dev score and where the model is, and, when the run scored its starting point
    (`summary["start"]`), whether training beat it: a best/ worse than the model it started from is said here."""
    best, start = summary.get("best", {}), summary.get("start")
    at = f"{best.get('metric')} = {best.get('value')} at step {best.get('step')}"
    line = f"{stage} done: best dev {at}; model: {best_dir}"
    if not start or best.get("value") is None:
        return line
    if best["value"] < start["value"]:
        return (
            f"{line}. WORSE than its starting point (dev {start['metric']} = {start['value']} at step 0): no "
            "trained step beat the model it started from; set eval.at_start: true to keep that one as best/, or "
            "lower schedule.learning_rate"
        )
    if best.get("step") == 0:
        return f"{line}. No trained step beat its starting point: best/ is the model it started from"
    return line


def named_specs(items: list[str]) -> dict[str, str]:
    """`--encoder NAME=SPEC` arguments of the report CLIs as {name: spec}; names unique, order kept."""
    specs: dict[str, str] = {}
    for item in items:
        name, sep, spec = item.partition("=")
        if not sep or not name or not spec:
            raise ConfigError(f"--encoder {item!r}: expected NAME=SPEC, e.g. student=hub:runs/s/best")
        if name in specs:
            raise ConfigError(f"--encoder: the name {name!r} is used twice")
        specs[name] = spec
    return specs
