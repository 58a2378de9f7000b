"""What both stages set up and run the same way: strategy, precision and seed; the dev evaluator and run harness;
the tf.data pipeline over texts; and the epoch loop with resume and "train on"."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from relkt.config import StageConfig, to_dict
from relkt.data.english_answer_units import SCORING_MAX_LENGTH, english_units
from relkt.data.selection import dev_pool, train_source
from relkt.encoders.reading_whole_evaluator import ReadingWholeEvaluator
from relkt.encoders.sentence_encoder import QuietEncoder
from relkt.errors import CheckpointError, Interrupted, is_interrupt
from relkt.io import read_json
from relkt.metrics import LareqaEvaluator, XxEnUnitEvaluator
from relkt.metrics.evaluator import Evaluator, TextEncoder, pool_evaluators
from relkt.training.distribute import make_strategy, set_precision, worker
from relkt.training.run_folder import run_trainer
from relkt.training.run_harness import RunHarness

log = logging.getLogger("relkt.training")


class Stage:
    """What makes a trainer class a stage: `train(config)` runs it in its run folder (lock, config guard,
    fingerprints, log file: relkt.training.run_folder) and returns the summary (its CLI is relkt.cli.trainer_main).
    A subclass sets `config_class` and `name` and builds its run in `__init__`."""

    config_class: type
    name: str

    @classmethod
    def train(cls, config, **given) -> dict[str, Any]:
        """Train with `config` (a `config_class`); returns the run summary. `given`: parts built already (the
        stage's constructor names them: data, encoders, evaluators), used in place of what the config would build."""
        return run_trainer(cls, config, **given)

    @classmethod
    def epochs_of(cls, config) -> int | None:
        """The epochs `config` asks for, when the stage can tell them before it is built (None: it cannot)."""
        return None

    @classmethod
    def config_fingerprints(cls, config) -> dict[str, dict] | None:
        """The fingerprints besides the training source's (`fingerprints()`), when the config alone gives them
        (None: they need the stage built, e.g. a teacher's weights). With `epochs_of`, a finished run is known finished
        before anything is built (relkt.training.run_folder.finished_unbuilt)."""
        return None


def start_run(config: StageConfig) -> tuple[tf.distribute.Strategy, bool]:
    """The run's strategy (made first: multi-worker collectives are set up at startup), precision policy and
    seed; returns (strategy, whether this process is the chief)."""
    strategy = make_strategy(config.distribute)
    set_precision(config.distribute.mixed_precision)
    chief, _ = worker(strategy)
    keras.utils.set_random_seed(config.seed)
    return strategy, chief


def stage_harness(
    config: StageConfig,
    encoder,
    optimizer,
    chief: bool,
    training_info: dict[str, Any],
    more_evaluators: Sequence[Evaluator] = (),
    compare_with_start: bool = False,
) -> RunHarness:
    """The run harness of `config.output_dir`, scoring `encoder` with `dev_evaluators(config)` and `more_evaluators`
    every `eval.every_steps` steps (no progress bars) and recording `training_info` and the config in each export
    (`compare_with_start`: the starting point is scored and reported even without `eval.at_start`; see
    RunHarness.evaluate_at_start)."""
    return RunHarness(
        config.output_dir,
        encoder,
        optimizer,
        evaluators=[*dev_evaluators(config, encoder), *more_evaluators],
        primary_metric=config.eval.primary_metric,
        eval_every=config.eval.every_steps,
        schedule=config.schedule,
        training_info={**training_info, "config": to_dict(config)},
        checkpoint_every=config.schedule.checkpoint_every,
        chief=chief,
        eval_at_start=config.eval.at_start,
        eval_within_epoch=config.eval.within_epoch,
        eval_per_epoch=config.eval.per_epoch,
        compare_with_start=compare_with_start,
        score_with=QuietEncoder(encoder, config.eval.batch_size),
    )


def dev_evaluators(config: StageConfig, encoder: TextEncoder) -> list[Evaluator]:
    """The dev metrics the config asks for, as a list of evaluators: LAReQA and XX->EN over the run's dev split
    (`lareqa/...`, `xx_en/...`, `bitext/...`); with `eval.xx_en_units` the dev questions ranking every English unit
    of the data set, read whole (`reading_whole` on `encoder`) as relkt evaluate reads them; `eval.evaluators` by
    name."""
    pool = dev_pool(config.data, config.eval, config.seed)
    evaluators: list[Evaluator] = [
        LareqaEvaluator(pool, with_context=config.data.with_context, batch_size=config.eval.batch_size)
    ]
    units = english_units(train_source(config.data), config.eval.xx_en_units, scored=[q.qas_id for q in pool.questions])
    if units:
        unit_evaluator = XxEnUnitEvaluator(pool.questions, units, batch_size=config.eval.batch_size)
        evaluators.append(ReadingWholeEvaluator(unit_evaluator, encoder, SCORING_MAX_LENGTH))
    return evaluators + pool_evaluators(config.eval.evaluators, pool, config.eval.batch_size, "eval.evaluators")


PRESENT = "_present"  # a batch's `{name}_present`: which rows hold a text of input `name` (text_dataset's `present`)


def length_sorted(
    order: np.ndarray, lengths: np.ndarray, batch_size: int, window: int, rng: np.random.Generator
) -> np.ndarray:
    """`order` regrouped so a batch holds examples of like length: each run of `window` batches' examples sorted by
    `lengths` (stable), cut into batches, and those batches shuffled with `rng` (so no epoch goes short to long). The
    same examples, each once; a last partial batch stays in its window."""
    out = []
    for lo in range(0, len(order), window * batch_size):
        chunk = order[lo : lo + window * batch_size]
        chunk = chunk[np.argsort(lengths[chunk], kind="stable")]
        batches = [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
        out.extend(batches[i] for i in rng.permutation(len(batches)))
    return np.concatenate(out) if out else order


def text_dataset(
    texts: dict[str, list[str]],
    targets: np.ndarray,
    encoder,
    batch_size: int,
    target_table: np.ndarray | None = None,
    present: dict[str, Sequence[bool]] | None = None,
) -> tf.data.Dataset:
    """Batches of `{name: encoder features}` and their targets, tokenized inside tf.data (in parallel, and so
    that MirroredStrategy's `fit` never sees strings). With `target_table`, `targets` are row indices into it and each
    batch gathers its rows (the table is held once, however many examples share a row: as a variable, since a
    constant captured by tf.data is copied into its graph several times, and a graph is limited to 2 GB).
    `present` (by input name, one flag an example) adds `{name}_present` to each batch: which rows have that text at
    all, so a model can encode those rows only (relkt.stages.pair_model.PairModel).

    Every batch is tokenized here, once, before training reads the first (held in memory: ids and masks, ~5 bytes a
    piece): tokenizing in tf.data while the steps run competed with them for 2 CPU cores, 0.5-1.9 s over a 30-step
    `muse` pass (docs/results/scale.md, "Where a step goes"). Targets are still gathered per batch, so the table is
    never copied an example."""
    flags = {name + PRESENT: np.asarray(rows, bool) for name, rows in (present or {}).items()}
    unknown = sorted(set(present or {}) - set(texts))
    if unknown:
        raise ValueError(f"text_dataset: present names inputs {unknown} that `texts` lacks ({sorted(texts)})")
    features = (
        tf.data.Dataset.from_tensor_slices({**texts, **flags})
        .batch(batch_size)
        .map(
            lambda f: {k: v if k in flags else encoder.preprocess(v) for k, v in f.items()},
            num_parallel_calls=tf.data.AUTOTUNE,
        )
        .cache()
    )
    for _ in features:  # fill the cache now, at full speed, so that no step waits on or competes with it
        pass
    ys = tf.data.Dataset.from_tensor_slices(targets).batch(batch_size)
    if target_table is not None:
        table = tf.Variable(target_table, trainable=False, name="teacher_targets")
        ys = ys.map(lambda y: tf.gather(table, y))
    return tf.data.Dataset.zip((features, ys)).prefetch(2)


def _finished_without_checkpoint(harness: RunHarness, epochs: int) -> dict[str, Any]:
    """A finished run whose checkpoint/ was deleted (to free disk; best/ and last/ are the results) is left as it is:
    training it again from scratch would overwrite best/. Training it on to more epochs needs the checkpoint."""
    summary = read_json(harness.out / "summary.json", "run summary")
    if not isinstance(summary, dict) or "epochs_completed" not in summary:
        raise CheckpointError(
            f"{harness.out / 'summary.json'}: not a relkt run summary (no epochs_completed) in a folder with no "
            "checkpoint/: remove it to train, or use a new output_dir"
        )
    if summary.get("stopped_early") or summary.get("epochs_completed", 0) >= epochs:
        log.info("%s: this run already finished (summary.json; its checkpoint/ is gone); nothing to do", harness.out)
        return {**summary, "already_finished": True}
    raise CheckpointError(
        f"{harness.out}: the run finished after {summary.get('epochs_completed')} epochs "
        f"(summary.json) but its checkpoint/ is gone, so it cannot train on to {epochs}: restore "
        f"checkpoint/, or use a new output_dir (training from scratch would overwrite best/)"
    )


def run_epochs(
    harness: RunHarness,
    epochs: int,
    train_epoch: Callable[[int, int], None],
    summary: Callable[[], dict[str, Any]],
    restore: Callable[[dict], None] | None = None,
) -> dict[str, Any]:
    """Resume from the last checkpoint (handing its arrays to `restore`), or start; train epochs until `epochs` or an
    early stop, `train_epoch(epoch, first_step)` running the epoch from step `first_step` of it; finish with
    `summary()`. A finished run whose config now asks for more epochs trains on; otherwise it is left as it is."""
    arrays = harness.restore()
    if arrays is None and (harness.out / "summary.json").exists():
        return _finished_without_checkpoint(harness, epochs)
    if arrays is not None and restore is not None:
        restore(arrays)
    if not harness.reopen(epochs):
        log.info("%s: this run already finished (summary.json); nothing to do", harness.out)
        return {**read_json(harness.out / "summary.json", "run summary"), "already_finished": True}
    try:
        harness.evaluate_at_start()
        while harness.state.epoch < epochs and not harness.state.stopped_early:
            train_epoch(harness.state.epoch, harness.state.step_in_epoch)
            if not harness.state.stopped_early:
                harness.end_epoch()
        return harness.finish(summary())
    except (KeyboardInterrupt, Exception) as e:  # the last checkpoint is whole: say where a rerun goes on
        if not is_interrupt(e):
            raise
        saved = harness.checkpointed_step()
        resume = "from the start (no checkpoint yet)" if saved is None else f"from its checkpoint of step {saved}"
        raise Interrupted(
            f"interrupted at step {harness.state.global_step}; rerun the same command to resume ({resume})"
        ) from None
