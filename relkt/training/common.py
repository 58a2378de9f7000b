"""Helpers both trainer CLIs use: config guard on resume, logging to the run folder, dev pools."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from relkt.config import save_config, to_dict
from relkt.data.lareqa_pool import LareqaPool
from relkt.errors import ConfigError

# A moved run folder still resumes; `verbose` changes no result.
IGNORED_ON_RESUME = {"verbose", "output_dir"}
# Epoch counts may grow on resume: training a finished run further (the same run, as if it had been
# started with the larger count: the data order of epoch e depends only on (seed, e)). They may not shrink.
# (A teacher grows its online epochs only: more BM25 epochs would re-label epochs already trained.)
GROWABLE_ON_RESUME = {"distill.epochs", "mining.online_epochs"}


def _flatten(d: dict, prefix: str = "") -> dict[str, Any]:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        out.update(_flatten(v, key + ".") if isinstance(v, dict) and k != "options" else {key: v})
    return out


def _grows(before: Any, now: Any) -> bool:
    return isinstance(before, int) and isinstance(now, int) and now > before


def prepare_output_dir(config: Any) -> Path:
    """Create the run folder and write config.yaml; an existing run must have the same config
    (re-running the same command resumes it; a changed setting needs a new output_dir), except that
    its epoch counts may grow (`--set distill.epochs=4` trains a finished 2-epoch run two epochs more)."""
    out = Path(config.output_dir)
    saved = out / "config.yaml"
    if saved.exists():
        before = _flatten(yaml.safe_load(saved.read_text()) or {})
        now = _flatten(to_dict(config))
        # Keys the saved run lacks are options added by a later relkt: not a change of settings.
        changed = sorted(k for k in before if k not in IGNORED_ON_RESUME and before.get(k) != now.get(k)
                         and not (k in GROWABLE_ON_RESUME and _grows(before.get(k), now.get(k))))
        if changed:
            raise ConfigError(
                f"{out} holds a run with other settings ({', '.join(changed[:6])}); re-run with the same "
                f"config to resume, or choose another output_dir"
            )
    out.mkdir(parents=True, exist_ok=True)
    save_config(config, saved)
    return out


def log_to_file(out: Path) -> logging.Handler:
    handler = logging.FileHandler(out / "train.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger("relkt").addHandler(handler)
    logging.getLogger("relkt").setLevel(logging.INFO)
    return handler


def sample_questions(pool: LareqaPool, n: int, seed: int) -> LareqaPool:
    """Keep `n` questions drawn at random (seeded); all candidates stay."""
    if n <= 0 or n >= len(pool.questions):
        return pool
    keep = np.sort(np.random.default_rng(seed).choice(len(pool.questions), n, replace=False))
    return LareqaPool([pool.questions[i] for i in keep], pool.candidates, [pool.gold[i] for i in keep], pool.unmatched_answers)


def dev_pool(config: Any) -> LareqaPool:
    d = config.data
    pool = LareqaPool.load(d.data_dir, langs=config.eval.langs or None, split="dev",
                           fractions=tuple(d.split_fractions), seed=d.split_seed)
    if getattr(d, "answer_unit", "sentence") == "passage":
        pool = pool.to_passages()
    return sample_questions(pool, config.eval.max_questions, config.seed)


class QuietEncoder:
    """Encoder view without progress bars (evaluation inside training)."""

    def __init__(self, encoder, batch_size: int):
        self.encoder, self.batch_size = encoder, batch_size

    def encode(self, texts, batch_size=None, progress=False):
        return self.encoder.encode(texts, batch_size=self.batch_size)


def run_trainer(trainer_cls, config) -> dict:
    """Prepare the run folder, log into it, run `trainer_cls(config)`; the precision policy is reset after."""
    import keras

    out = prepare_output_dir(config)
    handler = log_to_file(out)
    try:
        return trainer_cls(config).run()
    finally:
        keras.mixed_precision.set_dtype_policy("float32")  # the precision policy is process-global
        logging.getLogger("relkt").removeHandler(handler)
        handler.close()


def trainer_main(argv, prog: str, doc: str, config_cls, train_fn, stage: str) -> int:
    """The shared CLI of both trainers: --config, --set, --smoke; errors on bad input exit with 2."""
    import argparse
    import sys

    from relkt.config import load_config
    from relkt.errors import RelktError

    p = argparse.ArgumentParser(prog=prog, description=doc.split("\n")[0])
    p.add_argument("--config", default=None, help="YAML config (see configs/)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a config key (dotted)")
    p.add_argument("--smoke", action="store_true", help="shrink data, batch and evaluation for a quick check")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("relkt").setLevel(logging.INFO)
    try:
        config = load_config(config_cls, args.config, args.set + (["smoke=true"] if args.smoke else []))
        config.apply_smoke()
        summary = train_fn(config)
    except RelktError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    best = summary.get("best", {})
    print(f"{stage} done: best dev {best.get('metric')} = {best.get('value')} at step {best.get('step')}; "
          f"model: {Path(config.output_dir) / 'best'}")
    return 0
