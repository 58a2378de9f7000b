"""A SavedModel is code: before relkt loads one, every op its graphs and functions can run is checked against an
allowlist of ops that only compute (`ALLOWED_OPS`), and a model holding any other op is refused unless the caller
says it trusts it.

Which functions can run is read from the model's structure, never from a function's name: whatever the object graph,
the signatures or the graph's own nodes reach must be on the allowlist. The checkpoint ops (`RESTORE_OPS`,
`SAVE_OPS`) are allowed only on the saver's own paths (`saver_def`): a loader may run the restore path, which reads
the model's variables; the save path, which writes a checkpoint, is never run by loading or encoding."""

from __future__ import annotations

from pathlib import Path

from relkt.errors import EncoderError
from relkt.io import models_trusted, read_bytes

# Ops that compute and nothing else: relkt's own exports (muse and bert kinds, their projections and answer-context
# endpoints) use a subset; the rest are the everyday math, array, string, ragged and TF Text tokenizer ops of a
# sentence encoder. No op here opens a file, prints, runs Python, or reaches the network.
ALLOWED_OPS = frozenset(
    """
    Const Identity IdentityN NoOp Placeholder PlaceholderWithDefault StopGradient PreventGradient Snapshot
    Assert CheckNumerics CheckNumericsV2 EnsureShape PartitionedCall StatefulPartitionedCall
    If StatelessIf While StatelessWhile Case StatelessCase Switch Merge Enter Exit NextIteration LoopCond
    VarHandleOp ReadVariableOp AssignVariableOp AssignAddVariableOp AssignSubVariableOp VarIsInitializedOp
    ResourceGather ResourceGatherNd DisableCopyOnRead DestroyResourceOp VariableV2 Assign
    Abs Add AddV2 AddN Sub Mul MulNoNan Div DivNoNan RealDiv FloorDiv FloorMod Mod TruncateDiv Neg
    Reciprocal Square SquaredDifference Sqrt Rsqrt Pow Exp Expm1 Log Log1p Tanh Sigmoid Erf Erfc Sin Cos
    Maximum Minimum Sign Floor Ceil Round Rint ClipByValue IsNan IsFinite IsInf Cast ZerosLike OnesLike
    Greater GreaterEqual Less LessEqual Equal NotEqual LogicalAnd LogicalOr LogicalNot Select SelectV2
    Sum Mean Max Min Prod All Any ArgMax ArgMin Cumsum Cumprod EuclideanNorm L2Loss
    MatMul BatchMatMul BatchMatMulV2 BatchMatMulV3 Einsum BiasAdd Conv2D Conv3D DepthwiseConv2dNative
    MaxPool MaxPoolV2 AvgPool Relu Relu6 Elu Selu LeakyRelu Softplus Softsign Softmax LogSoftmax
    SegmentSum SegmentMean SegmentMax UnsortedSegmentSum UnsortedSegmentMax UnsortedSegmentMin
    SparseSegmentSum SparseSegmentMean SparseSegmentSqrtN MatrixBandPart TopKV2
    Shape ShapeN Size Rank Reshape Squeeze ExpandDims Transpose ConcatV2 Concat Pack Unpack Split SplitV
    Slice StridedSlice Gather GatherV2 GatherNd ScatterNd TensorScatterUpdate Tile Fill Range Pad PadV2
    MirrorPad BroadcastTo BroadcastArgs Where OneHot ReverseV2 Unique SparseToDense InvertPermutation
    RaggedGather RaggedRange RaggedTensorToTensor RaggedTensorToSparse RaggedTensorFromVariant
    RaggedTensorToVariant
    StringJoin StringSplit StringSplitV2 StringLower StringUpper StringLength StringStrip Substr AsString
    StringNGrams StringToNumber Bucketize
    StaticRegexReplace StaticRegexFullMatch RegexReplace RegexFullMatch StringToHashBucketFast
    StringToHashBucketStrong UnicodeDecode UnicodeDecodeWithOffsets UnicodeEncode UnicodeScript
    UnicodeTranscode CaseFoldUTF8 NormalizeUTF8 NormalizeUTF8WithOffsetsMap RegexSplitWithOffsets
    SentencepieceOp SentencepieceTokenizeOp SentencepieceDetokenizeOp SentencepieceIdToStringOp
    FastWordpieceTokenizeWithOffsets WordpieceTokenizeWithOffsets WhitespaceTokenizeWithOffsets
    WhitespaceTokenizeWithOffsetsV2 UnicodeScriptTokenizeWithOffsets SplitMergeTokenizeWithOffsets
    HashTableV2 LookupTableFindV2 LookupTableImportV2 LookupTableSizeV2 InitializeTableV2
    """.split()
)
# The checkpoint's ops, on the saver's paths only: restoring reads the model's own variables; saving is never run.
RESTORE_OPS = frozenset({"RestoreV2", "ShardedFilename", "ShardedFilespec"})
SAVE_OPS = RESTORE_OPS | {"SaveV2", "MergeV2Checkpoints"}


def _called(node) -> set[str]:
    """The functions a node calls (its function-valued attributes)."""
    out = set()
    for value in node.attr.values():
        if value.func.name:
            out.add(value.func.name)
        out.update(f.name for f in value.list.func)
    return out


def _node_name(tensor: str) -> str:
    return tensor.lstrip("^").split(":")[0]


def _ancestors(nodes: dict, start: str) -> set[str]:
    """The graph nodes `start` depends on, itself included."""
    seen, stack = set(), [_node_name(start)] if start else []
    while stack:
        name = stack.pop()
        if name in seen or name not in nodes:
            continue
        seen.add(name)
        stack.extend(_node_name(i) for i in nodes[name].input)
    return seen


def _reach(functions: dict, roots: set[str]) -> set[str]:
    """Every function the `roots` can call, themselves included."""
    seen, stack = set(), list(roots)
    while stack:
        name = stack.pop()
        if name in seen or name not in functions:
            continue
        seen.add(name)
        stack.extend(n for node in functions[name].node_def for n in _called(node))
    return seen


def _object_graph_functions(meta) -> set[str]:
    """Every function the object graph lets a loader restore and a caller run."""
    graph = meta.object_graph_def
    out = set(graph.concrete_functions)
    for node in graph.nodes:
        kind = node.WhichOneof("kind")
        if kind == "function":
            out.update(node.function.concrete_functions)
        elif kind == "bare_concrete_function":
            out.add(node.bare_concrete_function.concrete_function_name)
        for saveable in node.saveable_objects.values():  # run by a checkpoint restore: checked as code
            out.update(
                graph.nodes[i].bare_concrete_function.concrete_function_name
                for i in (saveable.save_function, saveable.restore_function)
                if 0 < i < len(graph.nodes)
            )
    return out


def refused_ops(path: str | Path) -> list[tuple[str, str]]:
    """(op, where) of every op in the SavedModel at `path` that the allowlist does not hold where it sits."""
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
        nodes = {node.name: node for node in meta.graph_def.node}
        functions = {f.signature.name: f for f in meta.graph_def.library.function}
        save_nodes = _ancestors(nodes, meta.saver_def.save_tensor_name)
        restore_nodes = _ancestors(nodes, meta.saver_def.restore_op_name)
        other_nodes = set(nodes) - save_nodes - restore_nodes
        # each node and function is held to the strictest rule of any path that reaches it
        run = _reach(functions, _object_graph_functions(meta) | {f for n in other_nodes for f in _called(nodes[n])})
        restore = _reach(functions, {f for n in restore_nodes for f in _called(nodes[n])}) - run
        save = _reach(functions, {f for n in save_nodes for f in _called(nodes[n])}) - run - restore
        never = set(functions) - run - restore - save  # a function nothing names: held to the strictest rule
        for name, node in nodes.items():
            if name in other_nodes:
                allowed = ALLOWED_OPS
            else:
                allowed = ALLOWED_OPS | (RESTORE_OPS if name in restore_nodes else SAVE_OPS)
            if node.op not in allowed and node.op not in functions:
                found.append((node.op, f"graph node {name}"))
        for names, allowed in (
            (run | never, ALLOWED_OPS),
            (restore, ALLOWED_OPS | RESTORE_OPS),
            (save, ALLOWED_OPS | SAVE_OPS),
        ):
            for name in sorted(names):
                found.extend(
                    (node.op, f"function {name}")
                    for node in functions[name].node_def
                    if node.op not in allowed and node.op not in functions
                )
    return found


def check_model(path: str | Path, spec: str) -> None:
    """Refuse the SavedModel at `path` (named `spec`) when it holds an op off the allowlist, naming the first, unless
    the caller trusts models (`relkt.io.trusting_models`)."""
    if models_trusted():
        return
    found = refused_ops(path)
    if found:
        op, where = found[0]
        more = f" and {len(found) - 1} more" if len(found) > 1 else ""
        raise EncoderError(
            f"{spec}: the SavedModel runs {op} ({where}{more}), an op outside relkt's allowlist of ops that only "
            "compute (relkt.encoders.model_scan.ALLOWED_OPS); a model folder is code. Load it only if you trust "
            "where it came from: --trust-model on the command line, trust_model=True from Python"
        )
