"""A SavedModel is code: before relkt loads one, its graphs are read for ops that touch files, print, or run Python,
and a model holding one is refused unless the caller says it trusts it."""

from __future__ import annotations

import re
from pathlib import Path

from relkt.errors import EncoderError
from relkt.io import models_trusted, read_bytes

# TensorFlow's own `saved_model_cli scan` denylist (WriteFile, ReadFile, PrintV2) and the other ops that read or write
# files, print, or call back into Python; loading or calling a model runs whatever its functions hold.
DENIED_OPS = frozenset(
    {
        "WriteFile",
        "ReadFile",
        "PrintV2",
        "Print",
        "MatchingFiles",
        "Save",
        "SaveV2",
        "SaveSlices",
        "Restore",
        "RestoreV2",
        "RestoreSlice",
        "MergeV2Checkpoints",
        "ImmutableConst",
        "InitializeTableFromTextFile",
        "InitializeTableFromTextFileV2",
        "CreateSummaryFileWriter",
        "CreateSummaryDbWriter",
        "WriteSummary",
        "WriteRawProtoSummary",
        "WriteScalarSummary",
        "WriteHistogramSummary",
        "WriteImageSummary",
        "WriteAudioSummary",
        "WriteGraphSummary",
        "FlushSummaryWriter",
        "TFRecordDataset",
        "TFRecordDatasetV2",
        "TextLineDataset",
        "TextLineDatasetV2",
        "FixedLengthRecordDataset",
        "FixedLengthRecordDatasetV2",
        "DatasetToTFRecord",
        "ExperimentalDatasetToTFRecord",
        "SaveDataset",
        "SaveDatasetV2",
        "LoadDataset",
        "SnapshotDataset",
        "SnapshotDatasetV2",
        "CSVDataset",
        "CSVDatasetV2",
        "ExperimentalCSVDataset",
        "SqlDataset",
        "ExperimentalSqlDataset",
        "PyFunc",
        "PyFuncStateless",
        "EagerPyFunc",
        "DebugIdentity",
        "DebugIdentityV2",
        "DebugIdentityV3",
    }
)
# The checkpoint's own save and restore functions, which TensorFlow writes into every SavedModel and loading never
# calls: exempt only while nothing else in the model calls them.
_CHECKPOINT_FUNCTION = re.compile(r"^__inference__traced_(save|restore)_\d+$")


def _called(node) -> set[str]:
    """The functions a node calls (its function-valued attributes)."""
    out = set()
    for value in node.attr.values():
        if value.func.name:
            out.add(value.func.name)
        out.update(f.name for f in value.list.func)
    return out


def denied_ops(path: str | Path) -> list[tuple[str, str]]:
    """(op, where) of every denied op in the SavedModel at `path`: its graphs and every function of its library,
    the checkpoint's own save/restore functions aside when no other function calls them."""
    from tensorflow.core.protobuf import saved_model_pb2  # deferred: TensorFlow's protos, only when a model loads

    pb = Path(path) / "saved_model.pb"
    model = saved_model_pb2.SavedModel()
    try:
        model.ParseFromString(read_bytes(pb, "saved_model.pb", EncoderError))
    except OSError as e:
        raise EncoderError(f"{path}: no readable saved_model.pb ({e.strerror or e})") from None
    except Exception as e:  # a protobuf DecodeError: not a SavedModel
        raise EncoderError(f"{pb}: not a SavedModel ({type(e).__name__})") from None
    found = []
    for meta in model.meta_graphs:
        functions = {f.signature.name: f for f in meta.graph_def.library.function}
        called_by_functions = {name for f in functions.values() for node in f.node_def for name in _called(node)}
        for node in meta.graph_def.node:
            saver = node.name.startswith(("save/", "save_1/")) and node.op in {
                "SaveV2",
                "RestoreV2",
                "MergeV2Checkpoints",
            }
            if node.op in DENIED_OPS and not saver:
                found.append((node.op, f"graph node {node.name}"))
        for name, function in functions.items():
            if _CHECKPOINT_FUNCTION.match(name) and name not in called_by_functions:
                continue
            found.extend((node.op, f"function {name}") for node in function.node_def if node.op in DENIED_OPS)
    return found


def check_model(path: str | Path, spec: str) -> None:
    """Refuse the SavedModel at `path` (named `spec`) when it holds a denied op, naming the first, unless the caller
    trusts models (`relkt.io.trusting_models`)."""
    if models_trusted():
        return
    found = denied_ops(path)
    if found:
        op, where = found[0]
        more = f" and {len(found) - 1} more" if len(found) > 1 else ""
        raise EncoderError(
            f"{spec}: the SavedModel runs {op} ({where}{more}), an op that reads or writes files, prints or runs "
            "Python; a model folder is code. Load it only if you trust where it came from: --trust-model on the "
            "command line, trust_model=True from Python"
        )
