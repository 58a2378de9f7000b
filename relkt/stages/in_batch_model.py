"""Trains an encoder with the in-batch softmax, optionally with the batch's embeddings cached (gradient caching)."""

from __future__ import annotations

import keras
import tensorflow as tf

from relkt.encoders.sentence_encoder import SentenceEncoder
from relkt.losses.in_batch_softmax_loss import InBatchSoftmaxLoss
from relkt.metrics.answer_context import SUFFIX
from relkt.names import ANSWER_CONTEXT_WEIGHT

# Ids at or past this one are translation pairs' English texts (the alignment task's rows), never a candidate's.
PAIR_ID_START = 1 << 30


def _rows(features, lo: int, hi: int):
    return tf.nest.map_structure(lambda t: t[lo:hi], features)


def _add(total, grad):
    """Sum two gradients of one variable; sparse ones (an embedding lookup's) stay sparse, their slices joined."""
    if total is None:
        return grad
    if grad is None:
        return total
    if isinstance(total, tf.IndexedSlices) or isinstance(grad, tf.IndexedSlices):
        total, grad = (g if isinstance(g, tf.IndexedSlices) else _as_slices(g) for g in (total, grad))
        return tf.IndexedSlices(
            tf.concat([total.values, grad.values], 0), tf.concat([total.indices, grad.indices], 0), total.dense_shape
        )
    return total + grad


def _as_slices(dense) -> tf.IndexedSlices:
    rows = tf.shape(dense, out_type=tf.int64)[0]
    return tf.IndexedSlices(dense, tf.range(rows), tf.shape(dense, out_type=tf.int64))


class InBatchModel(keras.Model):
    """Input: {"anchor", "positive", "negative_0", ...} features (the encoder's `preprocess` output), every batch of
    exactly `batch_size` rows; targets: the ids `InBatchSoftmaxLoss` reads. `train_step` takes one optimizer step.

    With `chunk_size` > 0 the step is gradient caching (Gao et al. 2021): every text is embedded once without a
    graph (a chunk at a time), the loss's gradient with respect to each embedding is taken, then the encoder runs
    again `chunk_size` rows at a time, each chunk's graph freed before the next, and the chunks' gradients (the
    embeddings' gradients pushed through) add up to the gradient of the whole batch. Memory then grows with
    `chunk_size`, not the batch; the cost is a second forward pass. The encoder must be deterministic in training
    (mUSE, MiniLM without dropout).

    A row whose answer id is at or past `pair_id_start` is a translation pair (the alignment task: a sentence in X,
    its English twin as the answer); its loss counts `pair_weight` times a QA row's.

    The scale is a variable beside the encoder (its log, so it stays positive), trained by plain gradient steps of
    `scale_learning_rate` when `scale_trainable`; the run's checkpoint carries it among the trainer's arrays.

    With `answer_context` every answer and negative comes with its paragraph (the inputs `positive_context`,
    `negative_J_context`): a candidate is `normalize(e(sentence) + w * e(paragraph))`, w a variable from
    `context_weight`, trained like the scale (plain steps of `context_learning_rate`, kept >= 0) when
    `context_trainable`. The encoder carries w (relkt.names.ANSWER_CONTEXT_WEIGHT), so dev scoring, online mining
    and the export mix candidates the same way. A translation pair's English twin has no paragraph: its row is unmixed.
    """

    def __init__(
        self,
        encoder: SentenceEncoder,
        batch_size: int,
        negatives_per_row: int = 0,
        chunk_size: int = 0,
        scale: float = 20.0,
        scale_trainable: bool = True,
        scale_learning_rate: float = 1e-3,
        symmetric: bool = False,
        pair_id_start: int = PAIR_ID_START,
        pair_weight: float = 1.0,
        answer_context: bool = False,
        context_weight: float = 0.5,
        context_trainable: bool = True,
        context_learning_rate: float = 1e-3,
        **kwargs,
    ):
        super().__init__(**kwargs)
        self.pair_id_start, self.pair_weight = int(pair_id_start), float(pair_weight)
        self.encoder = encoder
        self.batch_size, self.negatives_per_row, self.chunk_size = int(batch_size), int(negatives_per_row), chunk_size
        self.scale_trainable, self.scale_learning_rate = bool(scale_trainable), float(scale_learning_rate)
        self.in_batch_loss = InBatchSoftmaxLoss(self.negatives_per_row, symmetric)
        self.log_scale = tf.Variable(tf.math.log(float(scale)), trainable=False, dtype=tf.float32, name="log_scale")
        self.answer_context = bool(answer_context)
        self.context_trainable, self.context_learning_rate = bool(context_trainable), float(context_learning_rate)
        self.context_weight = None
        if self.answer_context:
            self.context_weight = tf.Variable(float(context_weight), trainable=False, name="context_weight")
            setattr(encoder, ANSWER_CONTEXT_WEIGHT, self.context_weight)

    @property
    def candidate_names(self) -> list[str]:
        """The inputs that are candidates (mixed with their paragraphs under answer context)."""
        return ["positive", *(f"negative_{j}" for j in range(self.negatives_per_row))]

    @property
    def input_names(self) -> list[str]:
        """Every input a batch carries: questions, candidates, and the candidates' paragraphs under answer context."""
        contexts = [f"{name}{SUFFIX}" for name in self.candidate_names] if self.answer_context else []
        return ["anchor", *self.candidate_names, *contexts]

    def embeddings(self, x, training: bool = False) -> dict[str, tf.Tensor]:
        """The loss's inputs: questions, answers, the negatives row-major (row r's j-th at r * k + j), the scale."""
        emb = {name: self.encoder(x[name], training=training) for name in self.input_names}
        return self._pred(emb)

    def _mixed(self, emb: dict[str, tf.Tensor], name: str, has_context=None) -> tf.Tensor:
        """Candidate `name`'s embedding: its sentence's, or mixed with its paragraph's (answer context)."""
        if not self.answer_context:
            return emb[name]
        weight = tf.cast(self.context_weight, emb[name].dtype)
        if has_context is not None:  # rows without a paragraph (translation pairs) stay unmixed
            weight = weight * tf.cast(has_context, emb[name].dtype)[:, None]
        return tf.math.l2_normalize(emb[name] + weight * emb[f"{name}{SUFFIX}"], axis=-1)

    def _pred(self, emb: dict[str, tf.Tensor], has_context=None) -> dict[str, tf.Tensor]:
        k = self.negatives_per_row
        dim = tf.shape(emb["anchor"])[-1]
        negatives = (
            tf.reshape(tf.stack([self._mixed(emb, f"negative_{j}") for j in range(k)], axis=1), [-1, dim])
            if k
            else tf.zeros([0, dim], emb["anchor"].dtype)
        )
        return {
            "questions": emb["anchor"],
            "answers": self._mixed(emb, "positive", has_context),
            "negatives": negatives,
            "scale": tf.exp(self.log_scale),
        }

    def batch_loss(self, y, emb: dict[str, tf.Tensor]) -> tf.Tensor:
        """The rows' mean loss, a translation pair's row (its answer id at or past `pair_id_start`) weighted by
        `pair_weight`."""
        pair = tf.cast(y[:, 0], tf.int64) >= self.pair_id_start
        per_row = self.in_batch_loss.call(y, self._pred(emb, has_context=tf.logical_not(pair)))
        return tf.reduce_mean(per_row * tf.where(pair, self.pair_weight, 1.0))

    @property
    def scalars(self) -> list[tf.Variable]:
        """The variables beside the encoder that the loss reads: the log scale, the context weight."""
        return [self.log_scale, *([self.context_weight] if self.answer_context else [])]

    def gradients(self, x, y) -> tuple[tf.Tensor, list, list]:
        """(loss, the encoder's trainable variables' gradients, the gradients of `scalars`) of one batch."""
        scalars = self.scalars
        if not self.chunk_size:
            with tf.GradientTape() as tape:
                tape.watch(scalars)
                emb = {name: self.encoder(x[name], training=True) for name in self.input_names}
                loss = self.batch_loss(y, emb)
            variables = self.encoder.trainable_variables  # read after a call: an encoder may build on its first
            grads = tape.gradient(loss, [*variables, *scalars])
            return loss, grads[: len(variables)], grads[len(variables) :]
        emb = {name: tf.stop_gradient(self._chunked(x[name])) for name in self.input_names}
        variables = self.encoder.trainable_variables
        with tf.GradientTape() as tape:
            tape.watch(list(emb.values()))
            tape.watch(scalars)
            loss = self.batch_loss(y, emb)
        names = self.input_names
        g_all = tape.gradient(loss, [emb[n] for n in names] + scalars)
        g_emb, g_scalars = g_all[: len(names)], g_all[len(names) :]
        grads, done = [None] * len(variables), []
        for name, g in zip(names, g_emb):
            for lo in range(0, self.batch_size, self.chunk_size):
                hi = min(lo + self.chunk_size, self.batch_size)
                # one chunk after another: a graph runs independent ops together, which would hold every chunk's
                # activations at once, the memory this step exists to save
                with tf.control_dependencies(done), tf.GradientTape() as tape:
                    part = self.encoder(_rows(x[name], lo, hi), training=True)
                    surrogate = tf.reduce_sum(tf.cast(part, tf.float32) * g[lo:hi])
                chunk_grads = tape.gradient(surrogate, variables)
                done = [d.values if isinstance(d, tf.IndexedSlices) else d for d in chunk_grads if d is not None]
                grads = [_add(t, d) for t, d in zip(grads, chunk_grads)]
        return loss, grads, g_scalars

    def _chunked(self, features) -> tf.Tensor:
        """The batch's embeddings without a graph to keep, `chunk_size` rows at a time, one chunk after another: the
        first pass of a cached step then holds one chunk's activations, not the whole batch's."""
        parts, done = [], []
        for lo in range(0, self.batch_size, self.chunk_size):
            with tf.control_dependencies(done):
                part = self.encoder(_rows(features, lo, min(lo + self.chunk_size, self.batch_size)), training=True)
            parts.append(part)
            done = [part]
        return tf.concat(parts, axis=0)

    def train_step(self, data):
        """One optimizer step on the encoder, plain steps on the scale and the context weight; logs all three."""
        x, y, _ = keras.utils.unpack_x_y_sample_weight(data)
        loss, grads, g_scalars = self.gradients(x, y)
        variables = self.encoder.trainable_variables
        if not self.optimizer.built:
            self.optimizer.build(variables)
        self.optimizer.apply_gradients(zip(grads, variables))
        g_scale, *g_context = g_scalars
        if self.scale_trainable and g_scale is not None:
            self.log_scale.assign_sub(self.scale_learning_rate * g_scale)
        logs = {"loss": loss, "scale": tf.exp(self.log_scale)}
        if self.answer_context:
            if self.context_trainable and g_context[0] is not None:
                self.context_weight.assign(
                    tf.maximum(self.context_weight - self.context_learning_rate * g_context[0], 0)
                )
            logs["context_weight"] = tf.identity(self.context_weight)
        return logs

    def call(self, inputs, training=False):
        """The loss's inputs for `inputs` (questions, answers, negatives, scale), as `embeddings`."""
        return self.embeddings(inputs, training=training)
