"""Import an ONNX model as a :class:`~chipsched.workload.Workload`.

:func:`load_onnx` reads a model (a path or an ``onnx.ModelProto``), runs ONNX shape
inference and turns the nodes (which ONNX keeps in topological order) into layers of
our IR, **per sample**: the first dimension of every graph input is the batch
dimension. It must be 1 or symbolic; a symbolic batch is set to 1 *before* shape
inference, so every tensor gets concrete dims. A fixed batch > 1 is rejected with
an :class:`~chipsched.errors.InputError` (we do not divide: once a graph reshapes
the batch into other dims, e.g. ``[B·h, T, d]``, there is no reliable way to tell
which factor was the batch). Other dims of the inputs must be fixed. Shapes that
inference cannot derive (custom-domain ops) are taken from the exporter's
``value_info``, its symbolic batch dim read as 1. Shape arithmetic that ONNX's data
propagation does not follow — TorchScript exports compute reshape targets with
Shape → Gather → Div → Cast → Concat, ranges and masks with Range / Equal / Where — is
folded to constants (numpy, small integer tensors only) and inference run again, until
nothing more folds, so such exports import as their dynamo or onnxsim versions do.
Layers are named after their node, or — for dynamo exports, whose nodes are called
``node_Conv_292`` — after the PyTorch module path the exporter records in the node's
``pkg.torch.onnx.name_scopes`` metadata (``layer1.0.conv1``); repeated names get
``_2``, ``_3`` ….

Op mapping
----------

==========================================  =================================================
ONNX op                                     workload
==========================================  =================================================
Conv                                        ``conv``; ``depthwise`` when group == C == K > 1,
                                            otherwise ``groups`` = group. R, S from the
                                            kernel, ``stride`` = first stride, H, W from the
                                            inferred output (so pads and dilations count
                                            only through it). 1-D conv: S = W = 1; 3-D+
                                            conv: the leading spatial dims are folded
                                            into R and H (MACs stay exact)
Gemm, MatMul with a constant operand        ``fc``: K = output features, C = reduction
                                            depth, H = product of the leading dims
                                            (rows/tokens); a batched weight ``[G, C, K]``
                                            gives ``groups`` = G
Gemm, MatMul of two activations             ``matmul``: K = N, C = reduction depth, H = M,
                                            leading (batch) dims such as heads become
                                            ``groups`` (K and C are then G·N and G·depth)
MaxPool, AveragePool, LpPool,               ``pool`` (window R×S, ops = out·R·S); the
Global{Average,Max,Lp}Pool                  global kinds pool the whole plane
Add, Sub, Mul, Div, Sum, Max, Min, Mean,    ``eltwise`` when its activation operands come
Pow, Where (and the unary ops below)        from different producers (residual add,
                                            attention mask); ops = out (Sum, Max, Min,
                                            Mean: out·(inputs − 1))
Concat                                      ``concat``
Softmax, LogSoftmax                         ``softmax`` (3 ops per element)
LayerNormalization, RMSNormalization,       ``norm`` (5 ops per element; weights = the
LpNormalization, InstanceNormalization,     scale/bias(/mean/var) initializers)
GroupNormalization, BatchNormalization
not folded
Gather of a constant table by activations   ``embed`` (weights = the table)
==========================================  =================================================

Folded: no layer; consumers are wired to the producer of the op's input:

* **element-wise ops on one producer**: unary activations (Relu, LeakyRelu, PRelu,
  Sigmoid, HardSigmoid, HardSwish, Tanh, Clip, Gelu, Erf, Elu, Selu, Celu, Softplus,
  Softsign, Mish, ThresholdedRelu; com.microsoft Gelu, FastGelu, QuickGelu, BiasGelu),
  value conversions (Cast, CastLike, QuantizeLinear, DequantizeLinear), binary ops
  whose other operand is a constant (bias add, scale, mask) and binary ops whose
  activation operands all come from the same producer (``x·Φ(x)`` of an Erf-based
  GELU, ``x·sigmoid(x)``). They run in the producer's output stage whatever its
  kind (e.g. the ReLU after a residual add, as the built-in networks do) and cost
  nothing; an op applied to a graph input directly also vanishes.
* **BatchNormalization** right after a conv/depthwise/fc (possibly through a bias
  add or scale): absorbed into its weights; adds K bias elements when the layer had
  no bias.
* **layout and view ops**: Reshape, Flatten, Transpose, Squeeze, Unsqueeze, Identity,
  Dropout, Split, Slice, Expand, Tile, Pad, DepthToSpace, SpaceToDepth, and Gather
  of an activation by constant indices.
* **what today's exporters write** (torch.export / dynamo): ReduceMean (or ReduceMax)
  over an image's spatial axes is a global pool, like GlobalAveragePool; other
  reductions (ReduceSum, ReduceL2, ArgMax, …) are ``eltwise`` layers of one op per
  input element; element-wise math and logic (Exp, Sqrt, IsNaN, IsInf, And, Or, Not,
  Equal, Less, …, Trilu, CumSum) and indexed data movement (GatherND, GatherElements,
  ScatterND, ScatterElements, OneHot) are ``eltwise`` of one op per output element
  (folded into the producer when it reads one producer, like Relu); GatherND /
  GatherElements of a constant table by computed indices are embedding lookups;
  Range, ConstantOfShape and EyeLike are constant-folded when their inputs are
  constant (static shapes) and sized like the fallback otherwise.
* **constants**: Constant, Shape, Size and every node whose inputs are all constant
  (shape arithmetic, Transpose/DequantizeLinear of a weight, ...) are folded at
  import time, whatever their op type.

Fallback: any other op on activations raises ``InputError("<source> node <name>
(<op>)", "unsupported ONNX op", ...)``. With ``fallback=True`` (on the command line
and in bench files: ``model.onnx:fallback=true``) it becomes an
``eltwise`` layer with **one op per output element** (all outputs together); when
shape inference cannot size an output (data-dependent shapes such as
NonMaxSuppression), the output is taken to be as large as the op's activation
inputs. This keeps the graph connected at a nominal cost; it is wrong for ops that
do real MAC work (Einsum, ConvTranspose, QLinearConv, LSTM, ...).

Sizes: an edge carries the element count of the tensor the consumer reads
(summed over the distinct tensors it reads from one producer, capped at the
producer's output). ``in_elems`` is the sum of a layer's distinct activation
inputs (graph inputs included). ``weight_elems`` are initializer (or Constant)
sizes: a MAC op's weight and bias operands, a norm's parameters, an embedding
table, plus constant operands of more than one element folded into a layer (a
MatMul's separate bias Add, a PRelu slope); scalars (eps, scale factors, clip
bounds) are not weights. An initializer used by several layers (tied embeddings)
counts in each of them. External weight data is not loaded; only its dims are used.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import onnx

from chipsched.errors import InputError
from chipsched.workload import MAC_KINDS, OPS_PER_ELEMENT, Layer, OpKind, Workload

__all__ = ["load_onnx", "SUPPORTED_OPS"]

_MS = "com.microsoft."

_UNARY = frozenset({
    "Relu", "LeakyRelu", "PRelu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh", "Clip",
    "Gelu", "Erf", "Elu", "Selu", "Celu", "Softplus", "Softsign", "Mish", "ThresholdedRelu",
    "Cast", "CastLike", "QuantizeLinear", "DequantizeLinear",
    _MS + "Gelu", _MS + "FastGelu", _MS + "QuickGelu", _MS + "BiasGelu",
})
_BINARY = frozenset({"Add", "Sub", "Mul", "Div", "Sum", "Max", "Min", "Mean", "Pow", "Where"})
#: element-wise math and logic of today's exporters (torch.export / dynamo writes
#: attention masks and GELU/LayerNorm pieces with them): one op per output element
_ELEMENTWISE_MORE = frozenset({
    "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round", "Sign",
    "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh",
    "IsNaN", "IsInf", "Not", "And", "Or", "Xor", "Equal", "Less", "Greater",
    "LessOrEqual", "GreaterOrEqual", "Mod", "BitShift", "BitwiseAnd", "BitwiseOr",
    "BitwiseXor", "BitwiseNot", "Trilu", "CumSum", "Swish", "BiasGelu",
})
#: data movement by index (a gather or scatter of activations): one op per output element
_INDEXED = frozenset({"GatherND", "GatherElements", "ScatterND", "ScatterElements",
                      "OneHot"})
#: reductions: a global pool when they reduce an image's spatial axes, otherwise one op
#: per input element
_REDUCE = frozenset({"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd",
                     "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                     "ReduceSumSquare", "ArgMax", "ArgMin"})
#: shape and index generators: constant-folded when their inputs are constant (the usual
#: case: shapes of static models); otherwise sized like the fallback
_GENERATORS = frozenset({"Range", "ConstantOfShape", "EyeLike"})
_VARIADIC = frozenset({"Sum", "Max", "Min", "Mean"})
_AFFINE = frozenset({"Add", "Sub", "Mul", "Div"})  # keep a MAC output BN-foldable
_VIEW = frozenset({
    "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze", "Identity", "Dropout", "Split",
    "Slice", "Expand", "Tile", "Pad", "DepthToSpace", "SpaceToDepth",
})
_SHAPE = frozenset({"Shape", "Size"})
_POOL = frozenset({"MaxPool", "AveragePool", "LpPool"})
_GLOBAL_POOL = frozenset({"GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool"})
_SOFTMAX = frozenset({"Softmax", "LogSoftmax"})
_NORM_LAST = frozenset({"LayerNormalization", "RMSNormalization", "LpNormalization"})
_NORM_FIRST = frozenset({"InstanceNormalization", "GroupNormalization", "BatchNormalization"})
_LAYER_OPS = frozenset({"Conv", "Gemm", "MatMul", "Concat", "Gather"})

#: Every op type :func:`load_onnx` understands (custom domains prefixed).
SUPPORTED_OPS = frozenset(
    _UNARY | _BINARY | _VIEW | _SHAPE | _POOL | _GLOBAL_POOL | _SOFTMAX | _NORM_LAST
    | _NORM_FIRST | _LAYER_OPS | _ELEMENTWISE_MORE | _INDEXED | _REDUCE | _GENERATORS
    | {"Constant"}
)

_BN_TARGETS = (OpKind.CONV, OpKind.DEPTHWISE, OpKind.FC)

Shape = tuple[int | None, ...]


@dataclass
class _Act:
    """An activation tensor: which layer produced it (None: a graph input)."""

    origin: int | None
    key: str  # producer identity for the same-producer test ("L3", "I:input_ids")
    shape: Shape | None
    numel: int | None
    bn_ok: bool = False  # a MAC output, at most bias-added/scaled: BN can fold into it


@dataclass
class _Rec:
    """A layer under construction."""

    name: str
    kind: OpKind
    dims: dict[str, int]
    ops: int
    where: str
    inputs: dict[str, _Act] = field(default_factory=dict)
    weights: dict[str, int] = field(default_factory=dict)
    has_bias: bool = False

    @property
    def out_elems(self) -> int:
        return self.dims.get("K", 1) * self.dims.get("H", 1) * self.dims.get("W", 1)


def load_onnx(source: str | os.PathLike[str] | onnx.ModelProto, name: str | None = None,
              precision_bytes: int = 1, fallback: bool = False) -> Workload:
    """Read an ONNX model (path or ``ModelProto``) as a per-sample :class:`Workload`.

    ``name`` defaults to the file stem (or the graph name); ``fallback=True`` turns
    unsupported ops into generic element-wise layers instead of raising. See the
    module docstring for the op mapping. The caller's ``ModelProto`` is not modified.
    """
    model, label, default_name = _read(source)
    batch_params = _fix_batch(model.graph, label)
    model = _infer(model, label)
    # TorchScript exports compute reshape targets from Shape → Gather → Div → Concat
    # chains that ONNX's data propagation does not follow (Div, Cast, Range, …): fold
    # them to constants, then infer again, until nothing more folds
    for _ in range(MAX_FOLD_ROUNDS):
        if not _fold_shape_arithmetic(model):
            break
        model = _infer(model, label)
    recs = _Converter(model.graph, label, fallback, batch_params).run()
    if not recs:
        raise InputError(label, "no layers: every node is constant or was folded",
                         "the model has no compute ops this importer maps")
    layers = []
    for r in recs:
        try:
            layers.append(Layer(r.name, r.kind, **r.dims,
                                in_elems=sum(a.numel or 0 for a in r.inputs.values()),
                                weight_elems=sum(r.weights.values()), ops=r.ops))
        except InputError as exc:
            raise InputError(r.where, exc.problem, exc.fix) from None
    acc: dict[tuple[int, int], int] = {}
    for d, r in enumerate(recs):
        for a in r.inputs.values():
            if a.origin is not None:
                acc[(a.origin, d)] = acc.get((a.origin, d), 0) + (a.numel or 0)
    edges = tuple(sorted((s, d, min(e, layers[s].out_elems)) for (s, d), e in acc.items()))
    return Workload(name or default_name, tuple(layers), edges, precision_bytes,
                    meta={"source": f"onnx:{label}"})


# ---------------------------------------------------------------------------------------
# reading


#: rounds of constant folding and shape inference at most (each folds every node whose
#: inputs became known in the previous round)
MAX_FOLD_ROUNDS = 8
#: the largest integer tensor folded (shape arithmetic is a few elements; masks larger)
MAX_FOLD_ELEMS = 1 << 16


def _infer(model: onnx.ModelProto, label: str) -> onnx.ModelProto:
    try:
        return onnx.shape_inference.infer_shapes(model, check_type=False, strict_mode=False,
                                                 data_prop=True)
    except Exception as exc:  # any inference failure is a bad model
        raise InputError(label, f"ONNX shape inference failed: {_reason(exc)}",
                         "check the model with onnx.checker.check_model") from None


def _static_shape(model: onnx.ModelProto, name: str) -> list[int] | None:
    g = model.graph
    for vi in (*g.input, *g.value_info, *g.output):
        if vi.name == name and vi.type.HasField("tensor_type") and \
                vi.type.tensor_type.HasField("shape"):
            dims = vi.type.tensor_type.shape.dim
            if all(d.HasField("dim_value") for d in dims):
                return [d.dim_value for d in dims]
            return None
    for t in g.initializer:
        if t.name == name:
            return list(t.dims)
    return None


def _fold_one(op: str, node: onnx.NodeProto, vals: list[Any]) -> Any:
    """numpy value of a shape-arithmetic node from its input values (None: not folded)."""
    if op == "Gather":
        return np.take(vals[0], vals[1], axis=int(_attr(node, "axis", 0)))
    if op == "Unsqueeze":
        axes = vals[1] if len(vals) > 1 else _attr(node, "axes")
        out = vals[0]
        for ax in sorted(int(x) % (out.ndim + len(axes)) for x in np.atleast_1d(axes)):
            out = np.expand_dims(out, ax)
        return out
    if op == "Squeeze":
        axes = vals[1] if len(vals) > 1 else _attr(node, "axes")
        return np.squeeze(vals[0]) if axes is None else \
            np.squeeze(vals[0], axis=tuple(int(x) for x in np.atleast_1d(axes)))
    if op == "Concat":
        return np.concatenate([np.atleast_1d(v) for v in vals], axis=int(_attr(node, "axis", 0)))
    if op in ("Add", "Sub", "Mul"):
        return {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}[op](vals[0], vals[1])
    if op == "Div":
        x, y = vals
        if np.issubdtype(x.dtype, np.integer) and np.issubdtype(y.dtype, np.integer):
            return (np.trunc(x / y)).astype(np.result_type(x, y))  # ONNX: truncation
        return x / y
    if op == "Floor":
        return np.floor(vals[0])
    if op == "Ceil":
        return np.ceil(vals[0])
    if op == "Sqrt":
        return np.sqrt(vals[0])
    if op == "Neg":
        return -vals[0]
    if op == "Cast":
        return vals[0].astype(onnx.helper.tensor_dtype_to_np_dtype(int(_attr(node, "to"))))
    if op == "Slice":
        x, starts, ends = vals[0], vals[1], vals[2]
        axes = vals[3] if len(vals) > 3 and vals[3] is not None else range(len(starts))
        steps = vals[4] if len(vals) > 4 and vals[4] is not None else [1] * len(starts)
        sl = [slice(None)] * x.ndim
        for st_, en, ax, sp in zip(starts, ends, axes, steps, strict=False):
            sl[int(ax)] = slice(int(st_), int(en), int(sp))
        return x[tuple(sl)]
    if op == "Range":
        return np.arange(vals[0], vals[1], vals[2])
    if op in ("Equal", "Less", "Greater"):
        return {"Equal": np.equal, "Less": np.less, "Greater": np.greater}[op](vals[0], vals[1])
    if op == "Where":
        return np.where(vals[0], vals[1], vals[2])
    if op == "ReduceProd":
        return np.prod(vals[0], keepdims=bool(_attr(node, "keepdims", 1)))
    if op == "Identity":
        return vals[0]
    return None


_FOLDABLE = {"Shape", "Size", "Gather", "Unsqueeze", "Squeeze", "Concat", "Add", "Sub",
             "Mul", "Div", "Floor", "Ceil", "Sqrt", "Neg", "Cast", "Slice", "Range",
             "Equal", "Less", "Greater", "Where", "ReduceProd", "Identity", "Constant"}


def _fold_shape_arithmetic(model: onnx.ModelProto) -> bool:
    """Replace every node of shape arithmetic whose inputs are known (constants, or
    Shape/Size of a tensor of static shape) by an initializer holding its value; True
    when anything was folded. Only small tensors are folded, and only the default
    domain's ops listed in ``_FOLDABLE``."""
    from onnx import numpy_helper

    g = model.graph
    known: dict[str, np.ndarray] = {}
    for t in g.initializer:
        if int(np.prod(t.dims)) <= MAX_FOLD_ELEMS:
            known[t.name] = numpy_helper.to_array(t)
    folded: list[onnx.NodeProto] = []
    new_inits: list[Any] = []
    graph_outputs = {o.name for o in g.output}
    for node in g.node:
        op = node.op_type
        if node.domain not in ("", "ai.onnx") or op not in _FOLDABLE or \
                len(node.output) != 1 or node.output[0] in graph_outputs:
            continue
        val: Any = None
        try:
            if op == "Constant":
                at = node.attribute[0] if node.attribute else None
                if at is not None and at.name == "value":
                    val = numpy_helper.to_array(at.t)
            elif op in ("Shape", "Size"):
                shp = _static_shape(model, node.input[0])
                if shp is not None:
                    if op == "Size":
                        val = np.array(int(np.prod(shp)), np.int64)
                    else:
                        start = int(_attr(node, "start", 0))
                        end = _attr(node, "end")
                        val = np.array(shp[start:None if end is None else int(end)],
                                       np.int64)
            else:
                ins = [None if n == "" else known.get(n, False) for n in node.input]
                if all(v is not False for v in ins) and ins and ins[0] is not None:
                    val = _fold_one(op, node, ins)
        except Exception:  # noqa: BLE001 - an op we cannot fold stays as it is
            val = None
        if val is None:
            continue
        val = np.asarray(val)
        if val.size > MAX_FOLD_ELEMS:
            continue
        known[node.output[0]] = val
        new_inits.append(numpy_helper.from_array(val, node.output[0]))
        folded.append(node)
    if not folded:
        return False
    keep = [n for n in g.node if all(n is not f for f in folded)]
    del g.node[:]
    g.node.extend(keep)
    g.initializer.extend(new_inits)
    return True


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    msg = text[0] if text else type(exc).__name__
    return msg if len(msg) <= 160 else msg[:157] + "..."


def _read(source: Any) -> tuple[onnx.ModelProto, str, str]:
    """The model (a private copy), its label for messages and its default name."""
    if isinstance(source, onnx.ModelProto):
        model = onnx.ModelProto()
        model.CopyFrom(source)
        gname = model.graph.name if model.HasField("graph") else ""
        label = gname or "onnx model"
        default = gname or "onnx_model"
    elif isinstance(source, (str, os.PathLike)):
        path = Path(source)
        label = str(source)
        default = path.stem or "onnx_model"
        if not path.exists():
            raise InputError(label, "no such file", "give the path of an .onnx model")
        if not path.is_file():
            raise InputError(label, "is not a file", "give the path of an .onnx model")
        try:
            model = onnx.load(str(path), load_external_data=False)
        except Exception as exc:  # protobuf/JSON/text parse errors
            raise InputError(label, f"not a valid ONNX model: {_reason(exc)}",
                             "export it again (e.g. torch.onnx.export) or check the file "
                             "with onnx.checker.check_model") from None
    else:
        raise InputError("source", f"must be a path or an onnx.ModelProto, got "
                         f"{type(source).__name__}")
    if not model.HasField("graph") or not model.graph.node:
        what = "no graph" if not model.HasField("graph") else "the graph has no nodes"
        raise InputError(label, f"not a valid ONNX model: {what}",
                         "export it again or check it with onnx.checker.check_model")
    _check_versions(model, label)
    return model, label, default


def _check_versions(model: onnx.ModelProto, label: str) -> None:
    """Refuse an IR version or a default-domain opset newer than the installed onnx
    knows (onnx.checker refuses them too): their ops' meaning is unknown here."""
    from onnx import defs

    if model.ir_version > onnx.IR_VERSION:
        raise InputError(f"{label}: ir_version", f"{model.ir_version} is newer than the "
                         f"{onnx.IR_VERSION} this onnx {onnx.__version__} reads",
                         "export with an older IR version or upgrade onnx")
    newest = defs.onnx_opset_version()
    for imp in model.opset_import:
        if imp.domain in ("", "ai.onnx") and imp.version > newest:
            raise InputError(f"{label}: opset_import", f"opset {imp.version} is newer "
                             f"than the {newest} this onnx {onnx.__version__} knows",
                             "export with an older opset (e.g. opset_version=17)")


def _fix_batch(graph: onnx.GraphProto, label: str) -> set[str]:
    """Set a symbolic batch (first) dim of the graph inputs to 1; reject others.

    Returns the names of the symbolic batch dims, so that exporter-written shapes
    that inference leaves alone (custom-domain ops) can still be read with batch 1.
    """
    inits = {t.name for t in graph.initializer}
    params: set[str] = set()
    for vi in graph.input:
        if vi.name in inits:
            continue
        where = f"{label} input {vi.name!r}"
        if not vi.type.HasField("tensor_type"):
            raise InputError(where, "is not a tensor", "only tensor inputs are supported")
        tt = vi.type.tensor_type
        if not tt.HasField("shape") or not tt.shape.dim:
            continue
        dims = tt.shape.dim
        first = dims[0]
        if first.HasField("dim_value"):
            if first.dim_value != 1:
                raise InputError(where, f"batch dimension (the first) is {first.dim_value}",
                                 "export with batch size 1 or a symbolic batch dim; the "
                                 "workload is per sample")
        else:
            if first.dim_param:
                params.add(first.dim_param)
            first.Clear()
            first.dim_value = 1
        for i, d in enumerate(dims[1:], 1):
            if not d.HasField("dim_value") or d.dim_value < 1:
                what = repr(d.dim_param) if d.dim_param else "unknown"
                raise InputError(where, f"dimension {i} is {what}",
                                 "export with fixed shapes; only the first (batch) dim may "
                                 "be symbolic")
    return params


def _dims(vi: onnx.ValueInfoProto, batch_params: set[str]) -> Shape | None:
    t = vi.type
    if not t.HasField("tensor_type") or not t.tensor_type.HasField("shape"):
        return None
    return tuple(d.dim_value if d.HasField("dim_value") else
                 (1 if d.dim_param and d.dim_param in batch_params else None)
                 for d in t.tensor_type.shape.dim)


def _numel(shape: Shape | None) -> int | None:
    if shape is None or any(d is None for d in shape):
        return None
    return math.prod(shape)  # type: ignore[arg-type]


def _weight_operands(op: str, node: onnx.NodeProto, const_in: list[str]) -> list[str]:
    """The constant operands of an element-wise-class op that count as parameters: not
    the indices of a gather/scatter (input 1) nor OneHot's depth and values."""
    if op == "OneHot":
        return []
    if op in _INDEXED:
        skip = {node.input[1]} if len(node.input) > 1 else set()
        return [t for t in const_in if t not in skip]
    return const_in


def _fold2(dims: Iterable[int]) -> tuple[int, int]:
    """Spatial dims → (height, width): 1-D gives (L, 1), 3-D+ folds the leading dims."""
    d = list(dims)
    if not d:
        return 1, 1
    if len(d) == 1:
        return d[0], 1
    return math.prod(d[:-1]), d[-1]


def _khw(shape: tuple[int, ...]) -> dict[str, int]:
    """Output dims of a non-MAC op: (C, H, W) for images, (d, T, 1) for tokens."""
    s = list(shape[1:]) if len(shape) >= 2 and shape[0] == 1 else list(shape)
    if not s:
        return {"K": 1, "C": 1, "H": 1, "W": 1}
    if len(s) == 1:
        k, h, w = s[0], 1, 1
    elif len(s) == 2:
        k, h, w = s[1], s[0], 1
    else:
        k, h, w = s[0], math.prod(s[1:-1]), s[-1]
    return {"K": k, "C": k, "H": h, "W": w}


def _cfirst(shape: tuple[int, ...]) -> dict[str, int]:
    """Dims of a channels-first tensor ``(N, C, spatial...)``."""
    if len(shape) < 2:
        return _khw(shape)
    h, w = _fold2(shape[2:])
    return {"K": shape[1], "C": shape[1], "H": h, "W": w}


#: the dynamo exporter's record of the PyTorch module a node came from: the repr of a
#: list of cumulative module paths, root '' first, the node's own name last
NAME_SCOPES_KEY = "pkg.torch.onnx.name_scopes"


def _module_path(node: onnx.NodeProto) -> str | None:
    """The module path (``layer1.0.conv1``) dynamo exports record for a node whose own
    name (``node_Conv_292``) says nothing; None without that metadata."""
    import ast

    for prop in node.metadata_props:
        if prop.key != NAME_SCOPES_KEY:
            continue
        try:
            scopes = ast.literal_eval(prop.value)
        except (ValueError, SyntaxError):
            return None  # malformed metadata: the node's own name stands
        if isinstance(scopes, (list, tuple)) and len(scopes) >= 2 and \
                isinstance(scopes[-2], str) and scopes[-2]:
            return scopes[-2]
        return None
    return None


def _attr(node: onnx.NodeProto, name: str, default: Any = None) -> Any:
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


# ---------------------------------------------------------------------------------------
# conversion


class _Converter:
    def __init__(self, graph: onnx.GraphProto, label: str, fallback: bool,
                 batch_params: set[str]):
        self.graph = graph
        self.batch_params = batch_params
        self.label = label
        self.fallback = fallback
        self.shapes: dict[str, Shape | None] = {}
        self.consts: dict[str, dict[str, int]] = {}  # tensor → base initializers and sizes
        self.acts: dict[str, _Act] = {}
        self.recs: list[_Rec] = []
        self.names: set[str] = set()

    # -- bookkeeping ------------------------------------------------------------------
    def run(self) -> list[_Rec]:
        g = self.graph
        for t in g.initializer:
            self.consts[t.name] = {t.name: math.prod(t.dims)}
            self.shapes[t.name] = tuple(t.dims)
        for sp in g.sparse_initializer:
            self.consts[sp.values.name] = {sp.values.name: math.prod(sp.dims)}
            self.shapes[sp.values.name] = tuple(sp.dims)
        for vi in (*g.input, *g.value_info, *g.output):
            shape = _dims(vi, self.batch_params)
            if vi.name not in self.consts and (shape is not None or vi.name not in self.shapes):
                self.shapes[vi.name] = shape
        for vi in g.input:
            if vi.name not in self.consts:
                shape = self.shapes.get(vi.name)
                self.acts[vi.name] = _Act(None, f"I:{vi.name}", shape, _numel(shape))
        for index, node in enumerate(g.node):
            self._node(index, node)
        return self.recs

    def _shape(self, tensor: str, where: str) -> tuple[int, ...]:
        s = self.shapes.get(tensor)
        if s is None or any(d is None for d in s):
            raise InputError(where, f"the shape of tensor {tensor!r} is unknown after shape "
                             f"inference ({s})",
                             "export with static shapes (or simplify with onnxsim)")
        return s  # type: ignore[return-value]

    def _const_weights(self, rec: _Rec | None, tensor: str, explicit: bool) -> int:
        """Add the initializers behind a constant operand to ``rec``'s weights.

        ``explicit``: a weight/bias/parameter operand, counted whatever its size when
        it is an initializer itself; otherwise only tensors of more than one element
        count (scalars are immediates). Returns the elements added.
        """
        added = 0
        for base, n in self.consts.get(tensor, {}).items():
            if (n > 1 or (explicit and base == tensor)) and rec is not None:
                if base not in rec.weights:
                    rec.weights[base] = n
                    added += n
        return added

    def _new(self, index: int, node: onnx.NodeProto, kind: OpKind, dims: dict[str, int],
             ops: int, where: str, act_inputs: Iterable[str]) -> _Rec:
        base = _module_path(node) or node.name or f"{node.op_type}_{index}"
        name, k = base, 2
        while name in self.names:
            name, k = f"{base}_{k}", k + 1
        self.names.add(name)
        rec = _Rec(name, kind, dims, ops, where)
        for t in act_inputs:
            a = self.acts[t]
            if a.numel is None:
                self._shape(t, where)  # raises
            rec.inputs[t] = a
        idx = len(self.recs)
        self.recs.append(rec)
        outs = [o for o in node.output if o]
        known = [_numel(self.shapes.get(o)) for o in outs]
        for o, n in zip(outs, known, strict=True):
            if n is None:
                n = rec.out_elems if len(outs) == 1 else None
            self.acts[o] = _Act(idx, f"L{idx}", self.shapes.get(o), n,
                                bn_ok=kind in _BN_TARGETS)
        return rec

    # -- dispatch ---------------------------------------------------------------------
    def _node(self, index: int, node: onnx.NodeProto) -> None:
        op = node.op_type if node.domain in ("", "ai.onnx") else f"{node.domain}.{node.op_type}"
        where = f"{self.label} node {node.name or index} ({op})"
        ins = list(node.input)
        for t in ins:
            if t and t not in self.acts and t not in self.consts:
                raise InputError(where, f"input {t!r} is not produced by an earlier node",
                                 "ONNX graphs must be topologically sorted; re-export the model")
        outs = [o for o in node.output if o]
        if op == "Constant":
            for o in outs:
                self.consts[o] = {o: _numel(self.shapes.get(o)) or 1}
            return
        if not any(t in self.acts for t in ins if t) or op in _SHAPE:
            bases: dict[str, int] = {}
            if op not in _SHAPE:
                # a gather of a constant by constant indices keeps the table's elements,
                # not the indices' (position ids are not parameters)
                data_only = op in ("Gather", "GatherND", "GatherElements")
                for t in ins[:1] if data_only else ins:
                    if t:
                        bases.update(self.consts[t])
            for o in outs:
                self.consts[o] = dict(bases)
            return
        data = ins[0] if ins else ""
        index_in = ins[1] if len(ins) > 1 else ""
        gather_view = (op == "Gather" or op in ("GatherND", "GatherElements")) and \
            data in self.acts and index_in in self.consts
        if op in _VIEW or gather_view:
            self._view(node, op, where)
        elif op in ("GatherND", "GatherElements") and data in self.consts:
            self._embed(index, node, where)  # rows of a constant table by computed indices
        elif op in _UNARY or op in _BINARY or op in _ELEMENTWISE_MORE or op in _INDEXED:
            self._elementwise(index, node, op, where)
        elif op in _REDUCE:
            self._reduce(index, node, op, where)
        elif op in _GENERATORS:
            self._generic(index, node, op, where)
        elif op == "Conv":
            self._conv(index, node, where)
        elif op in ("Gemm", "MatMul"):
            self._matmul(index, node, op, where)
        elif op in _POOL or op in _GLOBAL_POOL:
            self._pool(index, node, op, where)
        elif op == "Concat":
            self._concat(index, node, where)
        elif op in _SOFTMAX:
            self._softmax(index, node, where)
        elif op in _NORM_LAST or op in _NORM_FIRST:
            self._norm(index, node, op, where)
        elif op == "Gather" and data in self.consts:
            self._embed(index, node, where)
        else:
            self._unsupported(index, node, op, where)

    # -- folded ops -------------------------------------------------------------------
    def _view(self, node: onnx.NodeProto, op: str, where: str) -> None:
        data = node.input[0]
        if data in self.consts:  # a view of a constant (e.g. of a weight)
            for o in node.output:
                if o:
                    self.consts[o] = dict(self.consts[data])
            return
        src = self.acts[data]
        for o in node.output:
            if o:
                shape = self.shapes.get(o)
                n = _numel(shape)
                self.acts[o] = _Act(src.origin, src.key, shape, src.numel if n is None else n,
                                    bn_ok=src.bn_ok and op in ("Identity", "Dropout"))

    def _elementwise(self, index: int, node: onnx.NodeProto, op: str, where: str) -> None:
        ins = [t for t in node.input if t]
        act_in = list(dict.fromkeys(t for t in ins if t in self.acts))
        const_in = [t for t in ins if t in self.consts]
        out = node.output[0]
        shape = self.shapes.get(out)
        if len({self.acts[t].key for t in act_in}) == 1:  # one producer: fold
            src = self.acts[act_in[0]]
            rec = self.recs[src.origin] if src.origin is not None else None
            added = sum(self._const_weights(rec, t, explicit=False)
                        for t in _weight_operands(op, node, const_in))
            if rec is not None and added and op in ("Add", "Sub") and rec.kind in MAC_KINDS:
                rec.has_bias = True
            n = _numel(shape)
            self.acts[out] = _Act(src.origin, src.key, shape, src.numel if n is None else n,
                                  bn_ok=src.bn_ok and op in _AFFINE and len(act_in) == 1)
            return
        dims = _khw(self._shape(out, where))
        n_ops = max(1, len(ins) - 1) if op in _VARIADIC else 1
        rec = self._new(index, node, OpKind.ELTWISE, dims,
                        dims["K"] * dims["H"] * dims["W"] * n_ops, where, act_in)
        for t in _weight_operands(op, node, const_in):
            self._const_weights(rec, t, explicit=False)

    # -- MAC ops ------------------------------------------------------------------------
    def _conv(self, index: int, node: onnx.NodeProto, where: str) -> None:
        x, w = node.input[0], node.input[1]
        b = node.input[2] if len(node.input) > 2 else ""
        sx, sw, so = (self._shape(t, where) for t in (x, w, node.output[0]))
        if len(sx) < 3 or len(sw) != len(sx) or len(so) != len(sx):
            raise InputError(where, f"expected (N, C, spatial...) tensors, got input {sx}, "
                             f"weight {sw}, output {so}")
        group = int(_attr(node, "group", 1))
        C, K = sx[1], sw[0]
        if sw[1] * group != C:
            raise InputError(where, f"weight {sw} with group={group} does not match {C} "
                             "input channels")
        R, S = _fold2(sw[2:])
        H, W = _fold2(so[2:])
        strides = list(_attr(node, "strides", None) or [1])
        kind = OpKind.DEPTHWISE if group > 1 and group == C == K else OpKind.CONV
        dims = {"K": K, "C": C, "H": H, "W": W, "R": R, "S": S, "stride": int(strides[0]),
                "groups": group}
        acts = [t for t in (x, w, b) if t in self.acts]
        rec = self._new(index, node, kind, dims, 0, where, acts)
        self._const_weights(rec, w, explicit=True)
        if b:
            self._const_weights(rec, b, explicit=True)
            rec.has_bias = True

    def _matmul(self, index: int, node: onnx.NodeProto, op: str, where: str) -> None:
        a, b = node.input[0], node.input[1]
        c = node.input[2] if op == "Gemm" and len(node.input) > 2 else ""
        sa, sb = self._shape(a, where), self._shape(b, where)
        if op == "Gemm":
            ta, tb = int(_attr(node, "transA", 0)), int(_attr(node, "transB", 0))
            if len(sa) != 2 or len(sb) != 2:
                raise InputError(where, f"Gemm needs 2-D operands, got {sa} and {sb}")
            depth, M = (sa[0], sa[1]) if ta else (sa[1], sa[0])
            N = sb[0] if tb else sb[1]
            total, ga, gb = M * N, 1, 1
        else:
            if not sa or not sb:
                raise InputError(where, "MatMul of a scalar")
            depth = sa[-1]
            M = sa[-2] if len(sa) >= 2 else 1
            N = sb[-1] if len(sb) >= 2 else 1
            total = math.prod(self._shape(node.output[0], where))
            ga, gb = math.prod(sa[:-2]), math.prod(sb[:-2])
        a_act, b_act = a in self.acts, b in self.acts
        if a_act and b_act:
            kind, G, feat = OpKind.MATMUL, total // (M * N), N
            rows = M
        elif b_act:  # constant on the left: W @ x, features come from W's rows
            kind, G, feat = OpKind.FC, ga, M
            rows = total // (M * G)
        else:
            kind, G, feat = OpKind.FC, gb, N
            rows = total // (N * G)
        if G < 1 or rows * feat * G != total:
            raise InputError(where, f"cannot map operands {sa} × {sb} to a matrix product")
        dims = {"K": feat * G, "C": depth * G, "H": rows, "W": 1, "groups": G}
        rec = self._new(index, node, kind, dims, 0, where,
                        [t for t in (a, b, c) if t in self.acts])
        for t in (a, b):
            if t in self.consts:
                self._const_weights(rec, t, explicit=True)
        if c:
            self._const_weights(rec, c, explicit=True)
            rec.has_bias = True

    # -- other layers -------------------------------------------------------------------
    def _pool(self, index: int, node: onnx.NodeProto, op: str, where: str) -> None:
        x = node.input[0]
        sx, so = self._shape(x, where), self._shape(node.output[0], where)
        if len(sx) < 3:
            raise InputError(where, f"expected an (N, C, spatial...) input, got {sx}")
        if op in _GLOBAL_POOL:
            R, S = _fold2(sx[2:])
            stride = 1
        else:
            R, S = _fold2(_attr(node, "kernel_shape", None) or [1])
            stride = int((_attr(node, "strides", None) or [1])[0])
        dims = _cfirst(so)
        dims.update(R=R, S=S, stride=stride)
        out = dims["K"] * dims["H"] * dims["W"]
        self._new(index, node, OpKind.POOL, dims, out * R * S, where, [x])

    def _reduce(self, index: int, node: onnx.NodeProto, op: str, where: str) -> None:
        """ReduceMean over an image's spatial axes is how torch.export writes a global
        average pool: it becomes the same pool layer as GlobalAveragePool. Any other
        reduction is an element-wise-class op of one op per input element."""
        x = node.input[0]
        sx = self._shape(x, where)
        axes = _attr(node, "axes", None)
        if axes is None and len(node.input) > 1 and node.input[1]:
            axes = self._const_ints(node.input[1])
        if axes is not None:
            spatial = {a % len(sx) for a in axes} == set(range(2, len(sx)))
            # rank ≥ 4 (N, C, H, W…): a (B, T, D) mean over D is LayerNorm's, not a pool
            if len(sx) >= 4 and spatial and op in ("ReduceMean", "ReduceMax"):
                R, S = _fold2(sx[2:])
                dims = {"K": sx[1], "C": sx[1], "H": 1, "W": 1, "R": R, "S": S}
                self._new(index, node, OpKind.POOL, dims, sx[1] * R * S, where, [x])
                return
        dims = _khw(self._shape(node.output[0], where))
        self._new(index, node, OpKind.ELTWISE, dims, max(1, math.prod(sx)), where, [x])

    def _const_ints(self, tensor: str) -> list[int] | None:
        """The values of a small integer initializer (e.g. a Reduce op's axes input)."""
        for t in self.graph.initializer:
            if t.name == tensor:
                from onnx import numpy_helper

                return [int(v) for v in numpy_helper.to_array(t).ravel()]
        for n in self.graph.node:
            if n.op_type == "Constant" and tensor in n.output:
                for a in n.attribute:
                    if a.name == "value":
                        from onnx import numpy_helper

                        return [int(v) for v in numpy_helper.to_array(a.t).ravel()]
                    if a.name == "value_ints":
                        return list(a.ints)
        return None

    def _concat(self, index: int, node: onnx.NodeProto, where: str) -> None:
        ins = [t for t in node.input if t]
        dims = _khw(self._shape(node.output[0], where))
        rec = self._new(index, node, OpKind.CONCAT, dims, 0, where,
                        dict.fromkeys(t for t in ins if t in self.acts))
        for t in ins:
            if t in self.consts:
                self._const_weights(rec, t, explicit=False)

    def _softmax(self, index: int, node: onnx.NodeProto, where: str) -> None:
        dims = _khw(self._shape(node.output[0], where))
        ops = OPS_PER_ELEMENT[OpKind.SOFTMAX] * dims["K"] * dims["H"] * dims["W"]
        self._new(index, node, OpKind.SOFTMAX, dims, ops, where, [node.input[0]])

    def _norm(self, index: int, node: onnx.NodeProto, op: str, where: str) -> None:
        x = node.input[0]
        src = self.acts.get(x)
        if op == "BatchNormalization" and src is not None and src.bn_ok and \
                src.origin is not None and self.recs[src.origin].kind in _BN_TARGETS:
            rec = self.recs[src.origin]
            if not rec.has_bias:
                rec.weights[f"{node.output[0]}:folded_bn_shift"] = rec.dims["K"]
                rec.has_bias = True
            shape = self.shapes.get(node.output[0])
            self.acts[node.output[0]] = _Act(src.origin, src.key, shape,
                                             _numel(shape) or src.numel)
            return
        so = self._shape(node.output[0], where)
        dims = _cfirst(so) if op in _NORM_FIRST else _khw(so)
        ops = OPS_PER_ELEMENT[OpKind.NORM] * dims["K"] * dims["H"] * dims["W"]
        params = [t for t in node.input[1:] if t]
        rec = self._new(index, node, OpKind.NORM, dims, ops, where,
                        dict.fromkeys(t for t in [x, *params] if t in self.acts))
        for t in params:
            if t in self.consts:
                self._const_weights(rec, t, explicit=True)

    def _embed(self, index: int, node: onnx.NodeProto, where: str) -> None:
        table, ids = node.input[0], node.input[1]
        so = self._shape(node.output[0], where)
        K = so[-1] if so else 1
        dims = {"K": K, "C": 1, "H": math.prod(so) // K, "W": 1}
        rec = self._new(index, node, OpKind.EMBED, dims, 0, where, [ids])
        self._const_weights(rec, table, explicit=True)

    def _unsupported(self, index: int, node: onnx.NodeProto, op: str, where: str) -> None:
        if not self.fallback:
            raise InputError(f"{self.label} node {node.name or index} ({op})",
                             "unsupported ONNX op",
                             "supported: Conv, Gemm, MatMul, pools, reductions, element-wise "
                             "math and logic, Concat, Softmax, norms, Gather/GatherND and "
                             "layout ops (the full list: chipsched.instances.onnx_import."
                             "SUPPORTED_OPS); or append :fallback=true to the file name "
                             "(Python: fallback=True) to treat it as a generic element-wise op")
        self._generic(index, node, op, where)

    def _generic(self, index: int, node: onnx.NodeProto, op: str, where: str) -> None:
        """One op per output element; an output shape inference cannot size is taken to
        be as large as the op's activation inputs."""
        ins = [t for t in node.input if t]
        act_in = list(dict.fromkeys(t for t in ins if t in self.acts))
        outs = [o for o in node.output if o]
        sizes = [_numel(self.shapes.get(o)) for o in outs]
        if len(outs) == 1 and sizes[0] is not None:
            dims = _khw(self._shape(outs[0], where))
        else:
            total = sum(s for s in sizes if s is not None)
            if any(s is None for s in sizes):  # data-dependent output shape
                total = max(total, sum(self.acts[t].numel or 0 for t in act_in), 1)
            dims = {"K": max(total, 1), "C": max(total, 1), "H": 1, "W": 1}
        out = dims["K"] * dims["H"] * dims["W"]
        rec = self._new(index, node, OpKind.ELTWISE, dims, out, where, act_in)
        for o, s in zip(outs, sizes, strict=True):
            if s is None:
                self.acts[o].numel = out
        for t in ins:
            if t in self.consts:
                self._const_weights(rec, t, explicit=False)
