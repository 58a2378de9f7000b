"""The pool and split flags every scoring command shares, and how they become a `PoolRequest` (left out, a flag is
None: the job fills it from the `--config` run, else `PoolSection`'s defaults, in `relkt.jobs.pool`)."""

from __future__ import annotations

import argparse
import dataclasses

from relkt.cli.types import language_list, non_negative_int, seed_int, split_fractions
from relkt.config import PoolSection
from relkt.data.qa_format import format_names
from relkt.data.sources import ENV_VAR
from relkt.data.splits import SPLIT_UNITS, SPLITS
from relkt.jobs.requests import PoolRequest

_POOL = PoolSection()
POOL_FLAGS = tuple(f.name for f in dataclasses.fields(PoolRequest))


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
        type=seed_int,
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
        type=non_negative_int,
        default=None,
        help="k-fold split: K folds of the shuffled units (default: 0, none, or the --config run's)",
    )
    p.add_argument(
        "--fold",
        type=non_negative_int,
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


def pool_fields(args: argparse.Namespace) -> dict:
    """The `PoolRequest` fields the parsed flags give (those a command has)."""
    return {name: getattr(args, name) for name in POOL_FLAGS if hasattr(args, name)}
