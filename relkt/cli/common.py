"""What every command line shares: the opening (logging; a RelktError is one `error:` line and exit code 2; Ctrl-C
exit 130) and the trainers' `--config/--set/--smoke/--print-config` door onto `relkt.api`'s stages."""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from relkt import api
from relkt.cli import quiet_tensorflow
from relkt.config.config_io import config_yaml, run_config
from relkt.config.reference import help_text
from relkt.errors import ConfigError, Interrupted, RelktError, WriteError, catch_sigint, is_interrupt
from relkt.io import os_reason, trusting_models
from relkt.jobs.pool import check_formats
from relkt.names import PAPER_WEIGHTS, TERM_OF_WEIGHT

EXIT_INTERRUPTED = 130  # what a shell reports for a command stopped by SIGINT


class Parser(argparse.ArgumentParser):
    """argparse's parser whose error is one line naming the flag, and where to read the rest (not the whole usage)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (`{self.prog} --help` lists every flag)\n")

    def add_argument(self, *args, **kwargs):
        """argparse's, refusing a bare `int` or `float` type: every number a flag takes has a range
        (relkt.cli.types), so `--bootstrap 0` or `--seed -5` is one usage line, never a traceback later."""
        if kwargs.get("type") in (int, float):
            raise TypeError(
                f"{self.prog} {args[0] if args else ''}: a bare {kwargs['type'].__name__} flag; give it a ranged type "
                "from relkt.cli.types (positive_int, non_negative_int, seed_int, int_in, non_negative_float)"
            )
        return super().add_argument(*args, **kwargs)


def run_cli(
    body: Callable[[], int],
    verbose: bool = True,
    interrupted: str = "interrupted; nothing was written",
    request: type | None = None,
    trusted: bool = False,
) -> int:
    """Run a CLI's work: relkt's log lines at INFO (`verbose`), others at WARNING. Each way it can fail is one line on
    stderr, never a traceback: a RelktError (bad input) is `error: ...` and exit code 2; an OS error (a write to a
    read-only folder, a full disk, a file-size limit) is `error: PATH: cannot write (REASON)` and exit code 1;
    Ctrl-C prints `interrupted` (or the trainer's own line, with its step) and exits 130, also when it first lands in
    a finalizer that swallows it (`relkt.errors.catch_sigint`). `trusted` (`--trust-model`): model folders load
    without the scan for ops that touch files. TensorFlow's C++ start-up
    logs are off here (a CLI's choice; `import relkt` leaves its user's process alone) unless RELKT_VERBOSE=1."""
    quiet_tensorflow.install()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if verbose:
        logging.getLogger("relkt").setLevel(logging.INFO)
    try:
        with catch_sigint(), trusting_models(trusted):
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
        print(clipped(f"error: {where}{e if isinstance(e, WriteError) else os_reason(e)}"), file=sys.stderr)
        return 1
    except RelktError as e:
        print(clipped(f"error: {as_flags(str(e), request) if request else e}"), file=sys.stderr)
        return 2


LONGEST_WORD = 200  # characters of one unbroken run an error line shows whole


def clipped(message: str) -> str:
    """An error line with each unbroken run of more than LONGEST_WORD characters and no `/` (a 400-digit number a file
    held, a pasted text) shown by its ends and its length, so the line stays readable; a path is always shown whole,
    since it names the place at fault."""

    def shown(run: str) -> str:
        return run if "/" in run else f"{run[:120]}...({len(run)} characters)...{run[-40:]}"

    return re.sub(rf"\S{{{LONGEST_WORD + 1},}}", lambda m: shown(m[0]), message)


def add_trust_flag(p: argparse.ArgumentParser) -> None:
    """`--trust-model`: load model folders whose graphs hold ops that touch files (a SavedModel is code)."""
    p.add_argument(
        "--trust-model",
        action="store_true",
        help="load model folders (hub:, muse:, bert: specs and teachers) whose graphs read or write files, print or "
        "run Python; a model folder is code (default: refuse them, naming the op)",
    )


def as_flags(message: str, request: type) -> str:
    """A library message naming a request's fields (`CoverageRequest.new_lang 'xx'`) as the command line names them
    (`--new-lang 'xx'`): the user typed flags."""
    for f in dataclasses.fields(request):
        flag = "--" + f.name.replace("_", "-")
        message = re.sub(rf"\b\w+Request\.{f.name}\b", flag, message)
    return message


def trainer_main(argv: Sequence[str] | None, stage: str, doc: str) -> int:
    """The command line of both stages (`teacher`, `student`): --config, --set, --smoke, --print-config; a bad flag or
    config answers before TensorFlow loads, then `relkt.api.train_teacher` / `train_student`."""
    config_cls, train = api.STAGES[stage], api.TRAINERS[stage]
    prog = f"python -m relkt.train_{stage}"

    def train_fn(config):
        return train(config).summary

    p = Parser(
        prog=prog,
        description=doc.split("\n")[0],
        epilog=help_text(config_cls),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--config",
        default=None,
        help="YAML config, e.g. configs/quickstart/teacher.yaml (default: none, every key at its default)",
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
    add_trust_flag(p)
    args = p.parse_args(argv)

    def body() -> int:
        config = run_config(config_cls, args.config, args.set, args.smoke)
        check_formats(config.data)
        if stage == "student":  # the command line trains the shipped term table: its weight keys, before anything
            check_weight_keys(config.distill.weights)
        if args.print_config:
            print(config_yaml(config), end="")
            return 0
        print(final_line(stage, train_fn(config), Path(config.output_dir) / "best"))
        return 0

    return run_cli(
        body,
        interrupted="interrupted before training started; rerun the same command to resume",
        trusted=args.trust_model,
    )


def check_weight_keys(weights: dict) -> None:
    """`distill.weights` names only the shipped loss terms' weights (relkt.losses.loss_terms.TERMS, whose keys are
    the paper's three, `PAPER_WEIGHTS`): what the stage refuses when it builds its loss, said here before anything is
    written, `--print-config` included."""
    known = set(PAPER_WEIGHTS)
    unknown = sorted(set(weights) - known)
    if unknown:
        raise ConfigError(
            f"distill.weights.{unknown[0]}: no loss term reads this weight; the terms' weights are "
            + ", ".join(f"{w} ({TERM_OF_WEIGHT[w]})" for w in PAPER_WEIGHTS)
        )


def shown(path: str | Path) -> str:
    """A path as the last lines print it: absolute, whatever folder the command ran in (config paths other than `base:`
    are read from the current folder, so a relative one alone does not say where a file went)."""
    return str(Path(os.path.abspath(path)))


def final_line(stage: str, summary: dict[str, Any], best_dir: Path) -> str:
    """A trainer's last line: its best dev score and where the model is, and, when the run scored its starting point
    (`summary["start"]`), whether training beat it: a best/ worse than the model it started from is said here."""
    best, start = summary.get("best", {}), summary.get("start")
    at = f"{best.get('metric')} = {best.get('value')} at step {best.get('step')}"
    line = f"{stage} done: best dev {at}; model: {shown(best_dir)}"
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
