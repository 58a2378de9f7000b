"""`hub:HANDLE`: a TF2 SavedModel taking a 1-D batch of strings (mUSE, or any relkt export), trainable in Keras 3."""

from __future__ import annotations

import re
from pathlib import Path

import keras
import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the sentencepiece ops mUSE's graph holds)

from relkt.encoders.export import read_metadata
from relkt.encoders.model_scan import check_model
from relkt.encoders.sentence_encoder import SentenceEncoder, l2_normalize
from relkt.errors import EncoderError

# The TF Hub originals (need network once); `muse` without "-hub" is the offline wheel (relkt.encoders.muse_encoder).
MUSE_HANDLES = {
    "muse-hub": "https://tfhub.dev/google/universal-sentence-encoder-multilingual/3",
    "muse-large-hub": "https://tfhub.dev/google/universal-sentence-encoder-multilingual-large/3",
}


def load_saved_model(handle: str):
    """`hub.load(handle)` with tensorflow_text's ops registered first, once its graphs passed the scan for ops that
    touch files (relkt.encoders.model_scan; a URL is fetched to TF Hub's cache first); a clear error when it fails."""
    import tensorflow_hub as hub  # deferred: optional (only hub: specs use it; it needs tf-keras)

    try:
        local = hub.resolve(handle)
    except Exception as e:  # OSError, ValueError, URLError ... all mean "not loadable"
        raise _not_loadable(handle, e) from e
    check_model(local, f"hub:{handle}")
    try:
        return hub.load(local)
    except Exception as e:  # OSError, ValueError, NotFoundError ... all mean "not loadable"
        raise _not_loadable(handle, e) from e


def _not_loadable(handle: str, e: Exception) -> EncoderError:
    """The one error of a handle that cannot be loaded, with what to do about it."""
    local = Path(handle).expanduser()
    if "://" in handle:
        hint = (
            f"could not fetch {handle} (offline?). Download it where you are online and point relkt "
            "at the copy: set TFHUB_CACHE_DIR to a cache that holds it, or pass hub:/path/to/savedmodel"
        )
    elif not local.exists():
        hint = f"{handle}: no such SavedModel directory (and not a TF Hub URL)"
    else:
        hint = f"{handle}: not a loadable TF2 SavedModel"
    return EncoderError(f"{hint} ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})")


def _clean_name(name: str) -> str:
    """Keras variable names may hold neither '/' nor ':'."""
    return re.sub(r"[/:]", "_", name.rsplit(":", 1)[0])


class HubEncoder(SentenceEncoder):
    """A SavedModel's `__call__(tf.string[None]) -> [None, D]`, wrapped as a Keras 3 model.

    Its Keras weights *are* the SavedModel's variables (`keras.Variable` around each
    `tf.Variable`, no copy), so the optimizer updates the loaded model in place and export sees
    the trained values. Two loads give two independent sets of variables (teacher and student).
    Variables the SavedModel lists as non-trainable stay frozen; `trainable=False` freezes all.
    """

    kind = "hub"

    def __init__(self, handle: str, trainable: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.handle = handle
        self._loaded = load_saved_model(handle)
        if not callable(self._loaded):
            raise EncoderError(f"{handle}: the SavedModel has no __call__ endpoint (strings -> embeddings)")
        trainable_ids = {id(v) for v in getattr(self._loaded, "trainable_variables", [])}
        self._wrapped = []
        for v in getattr(self._loaded, "variables", []):
            wrapped = keras.Variable(
                initializer=v,
                shape=v.shape,
                dtype=v.dtype.name,
                trainable=id(v) in trainable_ids,
                name=_clean_name(v.name),
            )
            self._wrapped.append(wrapped)
        self._track_variables()
        self.trainable = trainable
        self.metadata = read_metadata(handle)
        # A relkt export says what it is (relkt.json); any other SavedModel is tried on one text first
        self._dim = int(self.metadata["dim"]) if self.metadata.get("dim") else self._probe_dim()
        self.built = True

    def _probe_dim(self) -> int | None:
        """One text through the SavedModel: it must take a batch of strings and give (batch, dim) embeddings; else one
        EncoderError naming the folder and what it does instead."""
        try:
            out = self._loaded(tf.constant(["a probe sentence"]))
        except tf.errors.OpError:  # it takes strings but cannot run here yet (e.g. placed by a strategy): later
            return None
        except (TypeError, ValueError) as e:  # no concrete function for a batch of strings
            reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise EncoderError(
                f"{self.handle}: its __call__ does not take a batch of strings ({reason[:200]}); relkt reads a "
                "SavedModel whose __call__ maps tf.string[batch] to float embeddings[batch, dim]"
            ) from None
        shape, dtype = tuple(getattr(out, "shape", ())), getattr(out, "dtype", None)
        if dtype is not None and not dtype.is_floating:
            raise EncoderError(
                f"{self.handle}: its __call__ gives {dtype.name} for one text; relkt needs float embeddings[batch, dim]"
            )
        if len(shape) != 2 or shape[0] != 1:
            raise EncoderError(
                f"{self.handle}: its __call__ gives shape {shape} for one text; relkt needs (batch, dim) embeddings"
            )
        return int(shape[1])

    def _track_variables(self):
        for v in self._wrapped:
            self._track_variable(v)

    @classmethod
    def from_spec(cls, spec: str, trainable: bool = True, **kwargs) -> HubEncoder:
        kind, _, arg = spec.partition(":")
        if kind in MUSE_HANDLES and not arg:
            return cls(MUSE_HANDLES[kind], trainable=trainable, **kwargs)
        if kind == "hub" and arg:
            return cls(arg, trainable=trainable, **kwargs)
        raise EncoderError(f"bad hub spec {spec!r}: use hub:URL_OR_DIR, muse-hub or muse-large-hub")

    @property
    def dim(self) -> int:
        if self._dim is None:
            self._dim = int(self._loaded(tf.constant(["x"])).shape[-1])
        return self._dim

    def dim_mismatch(self, width: int) -> str:
        if "dim" not in self.metadata:
            return f"{self.handle}: the SavedModel gave {self._dim} dimensions for one text but {width} for a batch"
        return (
            f"{Path(self.handle) / 'relkt.json'}: dim: says {self.metadata.get('dim')!r}, but the SavedModel's "
            f"embeddings have {width} dimensions; the export was edited or its files mixed: export it again"
        )

    def _preprocess(self, strings: tf.Tensor) -> tf.Tensor:
        return strings  # the SavedModel tokenizes inside its own graph

    def call(self, strings, training=False):
        return l2_normalize(self._loaded(strings))

    def get_config(self):
        return {**super().get_config(), "handle": self.handle, "trainable": self.trainable}
