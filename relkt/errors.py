"""Error types. Each message names the file/field/option at fault and, where it helps, the valid choices."""

import contextlib
import signal
import threading
from collections.abc import Iterator


class RelktError(Exception):
    """Base class for errors relkt raises on bad input (data, config, encoder specs)."""


class DataError(RelktError, ValueError):
    """A data file or directory is missing, malformed or lacks a field."""


class ConfigError(RelktError, ValueError):
    """An unknown option or an invalid value."""


class EncoderError(RelktError, ValueError):
    """An encoder spec that cannot be resolved or a model that cannot be loaded."""


class NonFiniteError(RelktError, ArithmeticError):
    """A loss, weight or embedding is NaN or infinite: training stops (nothing non-finite becomes best/) and
    scoring refuses (NaN scores would rank by index and look like a result)."""


class CheckpointError(RelktError):
    """A run folder's checkpoint cannot be read (and no earlier one can either)."""


class DegenerateError(RelktError, ArithmeticError):
    """Embeddings that carry no ranking: zero-norm rows, or every row (nearly) the same vector. Every score then
    ties and the ranking falls back to candidate order, which looks like a result; a collapsed model is never
    exported as best/ nor scored."""


class WriteError(RelktError, OSError):
    """A write of a run folder or an output failed (read-only, no space, file too large); nothing half-written is
    left behind. The message names the path and the OS reason."""


class Interrupted(RelktError):
    """Ctrl-C: the command stopped where it stood; what it wrote before is whole, and a trainer resumes from it."""


def is_interrupt(error: BaseException) -> bool:
    """Ctrl-C, also when it lands inside TensorFlow and comes out as another error: pybind11's RuntimeError saying
    the active exception was replaced by KeyboardInterrupt, or any error raised while a Ctrl-C is latched (an export
    interrupted while tracing its function unwinds as "AssertionError: Nesting violated ... FuncGraph", seen in CI)."""
    return (
        isinstance(error, KeyboardInterrupt)
        or (isinstance(error, RuntimeError) and "REPLACED BY KeyboardInterrupt" in str(error))
        or (isinstance(error, Exception) and not isinstance(error, RelktError) and _SIGINT_PENDING[0])
    )


_SIGINT_PENDING: list[bool] = [False]


def _on_sigint(signum, frame) -> None:
    _SIGINT_PENDING[0] = True
    raise KeyboardInterrupt


@contextlib.contextmanager
def catch_sigint() -> Iterator[None]:
    """Latch Ctrl-C as well as raising it, for the duration: a KeyboardInterrupt raised while Python runs a finalizer
    (TensorFlow's `AtomicFunction.__del__`, seen in CI) is printed as "Exception ignored" and lost, and the run would
    train on to exit 0. The latch stays set, and `raise_if_interrupted` (called at every training step) raises it
    again. Only where Python's own handler is in place (a CLI's main thread); the handler before is put back."""
    before = signal.getsignal(signal.SIGINT)
    mine = threading.current_thread() is threading.main_thread() and before is signal.default_int_handler
    _SIGINT_PENDING[0] = False
    if mine:
        signal.signal(signal.SIGINT, _on_sigint)
    try:
        yield
    except Exception as e:
        if _SIGINT_PENDING[0] and not isinstance(e, RelktError):  # a Ctrl-C TensorFlow turned into another error
            raise KeyboardInterrupt from e
        raise
    finally:
        _SIGINT_PENDING[0] = False
        if mine:
            signal.signal(signal.SIGINT, before)


def raise_if_interrupted() -> None:
    """KeyboardInterrupt when a Ctrl-C arrived that nothing has acted on yet (see `catch_sigint`)."""
    if _SIGINT_PENDING[0]:
        _SIGINT_PENDING[0] = False
        raise KeyboardInterrupt
