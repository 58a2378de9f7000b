"""A compiled `strategy.run` training loop for inputs Keras `fit` cannot distribute (raw strings).

Keras 3.15's `fit` under MirroredStrategy reduces the first batch with AddN, which has no string
kernel; encoders that tokenize inside their SavedModel (`hub:`) feed strings, so they train here, as
does everything under MultiWorkerMirroredStrategy and TPUStrategy.
Each replica computes per-example losses and divides by the *global* batch size (all-reduced, so a
short last batch is scaled right); the optimizer sums gradients across replicas.
"""

from __future__ import annotations

import sys

import keras
import tensorflow as tf


def _with_static_shape(grad, variable):
    """Restored SavedModel functions leave an IndexedSlices gradient's dense shape unknown, which breaks
    the cross-replica sum; give it the variable's shape and keep it sparse, so the optimizer applies
    exactly the update Keras `fit` applies without a strategy."""
    if isinstance(grad, tf.IndexedSlices):
        return tf.IndexedSlices(grad.values, grad.indices, dense_shape=tf.constant(list(variable.shape), tf.int64))
    return grad


def has_string_inputs(dataset: tf.data.Dataset) -> bool:
    """Whether the dataset yields strings (a strategy's `fit` cannot split those across replicas)."""
    return any(spec.dtype == tf.string for spec in tf.nest.flatten(dataset.element_spec))


class DistributedFit:
    """`fit(dataset, callbacks)` for a compiled model (its loss and optimizer). A loss with `components(y, y_pred)`
    (`DistillationLoss`) has its terms logged beside the loss, averaged as the loss is."""

    def __init__(self, model: keras.Model, loss: keras.losses.Loss, strategy: tf.distribute.Strategy):
        self.model, self.loss, self.strategy = model, loss, strategy
        self._step = None

    def _replica_step(self, x, y):
        ctx = tf.distribute.get_replica_context()
        optimizer = self.model.optimizer
        with tf.GradientTape() as tape:
            y_pred = self.model(x, training=True)
            if hasattr(self.loss, "components"):
                per_example, parts = self.loss.components(y, y_pred)
            else:
                per_example, parts = self.loss.call(y, y_pred), {}
            per_example = tf.cast(per_example, tf.float32)
            global_bs = ctx.all_reduce(tf.distribute.ReduceOp.SUM, tf.shape(per_example)[0])
            loss = tf.reduce_sum(per_example) / tf.cast(global_bs, tf.float32)
            scaled = optimizer.scale_loss(loss) if hasattr(optimizer, "scale_loss") else loss
        variables = self.model.trainable_variables
        grads = [_with_static_shape(g, v) for g, v in zip(tape.gradient(scaled, variables), variables)]
        optimizer.apply_gradients(zip(grads, variables))  # sums gradients across replicas
        logs = {"loss": loss}
        for name, value in parts.items():
            logs[name] = tf.reduce_sum(tf.cast(value, tf.float32)) / tf.cast(global_bs, tf.float32)
        return logs

    def _build(self, dataset: tf.data.Dataset) -> None:
        """Create the model's and the optimizer's variables now, under the strategy, not lazily inside
        a replica step (a lazily built optimizer would not know the variables)."""
        if self.model.optimizer.built:
            return
        with self.strategy.scope():
            if not self.model.trainable_variables:  # e.g. an n-gram encoder before its first call
                x, _ = next(iter(dataset.take(1)))
                self.model(x, training=False)
            self.model.optimizer.build(self.model.trainable_variables)

    def _compiled_step(self):
        if self._step is None:

            @tf.function
            def step(x, y):
                per_replica = self.strategy.run(self._replica_step, args=(x, y))
                return {
                    k: self.strategy.reduce(tf.distribute.ReduceOp.SUM, v, axis=None) for k, v in per_replica.items()
                }

            self._step = step
        return self._step

    def fit(self, dataset: tf.data.Dataset, callbacks=(), verbose: int = 1) -> dict:
        self._build(dataset)
        step = self._compiled_step()
        progbar = keras.utils.Progbar(None, verbose=verbose) if verbose else None
        totals, n = {}, 0
        for callback in callbacks:
            callback.set_model(self.model)
        self.model.stop_training = False
        for i, (x, y) in enumerate(self.strategy.experimental_distribute_dataset(dataset)):
            for callback in callbacks:
                callback.on_train_batch_begin(i)
            logs = {k: float(v) for k, v in step(x, y).items()}
            n += 1
            for k, v in logs.items():
                totals[k] = totals.get(k, 0.0) + v
            running = {k: v / n for k, v in totals.items()}  # like Keras: means over the epoch so far
            if progbar:
                progbar.update(i + 1, list(running.items()))
            for callback in callbacks:
                callback.on_train_batch_end(i, logs)  # this batch's values, as HarnessCallback makes Keras's
            if self.model.stop_training:
                break
        return {k: v / max(n, 1) for k, v in totals.items()}


class StepsRunProgbar(keras.callbacks.ProgbarLogger):
    """Keras's progress line, ending at the steps actually run: a pass stopped by `schedule.max_steps` or early
    stopping shows 4/52, where Keras's own would show 52/52."""

    def on_epoch_end(self, epoch, logs=None):
        if self.progbar is not None and self.target and self.seen < self.target:
            self.progbar.update(self.seen, list((logs or {}).items()), finalize=True)
        else:
            super().on_epoch_end(epoch, logs)


def is_distributed(strategy: tf.distribute.Strategy) -> bool:
    """Whether `strategy` spreads a step over several replicas."""
    return isinstance(
        strategy, (tf.distribute.MirroredStrategy, tf.distribute.MultiWorkerMirroredStrategy, tf.distribute.TPUStrategy)
    )


def progress_verbosity(verbose: int) -> int:
    """Keras's progress bar (verbose 1) on a terminal only; redirected output gets one line per pass (2)."""
    return 2 if verbose == 1 and not sys.stdout.isatty() else verbose


def fit(model: keras.Model, strategy: tf.distribute.Strategy, dataset: tf.data.Dataset, callback, verbose: int) -> None:
    """One pass over `dataset`: Keras `fit` where it works (no strategy; MirroredStrategy over tokenized
    inputs), else the `strategy.run` loop (string inputs; MultiWorkerMirrored and TPU strategies, which
    Keras 3.15's `fit` does not distribute over dict inputs). The compiled loop is kept on the model."""
    verbose = progress_verbosity(verbose)
    keras_fit_ok = not is_distributed(strategy) or (
        type(strategy) is tf.distribute.MirroredStrategy and not has_string_inputs(dataset)
    )
    if keras_fit_ok:
        model.fit(dataset, epochs=1, verbose=verbose, shuffle=False, callbacks=[callback, StepsRunProgbar()])
        return
    loop = model.__dict__.get("_relkt_distributed_fit")
    if loop is None:
        loop = model.__dict__["_relkt_distributed_fit"] = DistributedFit(model, model.loss, strategy)
    loop.fit(dataset, [callback], verbose=verbose)
