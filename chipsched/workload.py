"""Workload IR: a DAG of layers (ops) with loop dims, derived MACs and bytes.

Every op, whatever its kind, is described by one grouped-convolution loop nest per
sample (the Timeloop convention), so that cost tables can be built for all kinds
with the same vectorized code:

============  =====================================================================
field         meaning
============  =====================================================================
``K``         output channels (conv) / output features (fc) / output columns N (matmul)
``C``         input channels (conv) / input features (fc) / reduction depth K (matmul)
``H``, ``W``  output height and width (conv); rows M and 1 (fc on tokens, matmul)
``R``, ``S``  filter height and width (1 for fc and matmul); window for pooling
``stride``    convolution / pooling stride
``groups``    channel groups: depthwise conv has ``groups == C == K``; a multi-head
              attention matmul has ``groups == heads``
============  =====================================================================

MACs per sample are ``H·W·K·(C/groups)·R·S`` for the MAC kinds (conv, depthwise, fc,
matmul). Non-MAC kinds (pool, eltwise, norm, softmax, scalar) carry ``ops``, their
count of vector/scalar operations per sample. Sizes are in elements; bytes are
elements × ``Workload.precision_bytes`` (int8, 1 byte, by default).

A :class:`Workload` keeps its layers in a topological order (every edge goes from a
lower to a higher index); :class:`WorkloadBuilder` tracks tensor shapes so that
network definitions read like a PyTorch ``forward``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from enum import Enum
from functools import cached_property
from typing import Any

import numpy as np

from chipsched.errors import InputError


class OpKind(str, Enum):
    """What an op computes; decides which hardware resources it uses."""

    CONV = "conv"
    DEPTHWISE = "depthwise"
    FC = "fc"  # matmul with a weight matrix
    MATMUL = "matmul"  # matmul of two activations (attention)
    POOL = "pool"
    ELTWISE = "eltwise"  # add, mul, activation functions not fused into a MAC op
    CONCAT = "concat"
    NORM = "norm"  # batch/layer norm not folded into a conv
    SOFTMAX = "softmax"
    EMBED = "embed"  # table lookup: weights, no MACs
    SCALAR = "scalar"  # scalar/control work a compiler creates (seed 003)

    def __str__(self) -> str:
        return self.value


MAC_KINDS = frozenset({OpKind.CONV, OpKind.DEPTHWISE, OpKind.FC, OpKind.MATMUL})

#: Vector operations per output element charged to the non-MAC kinds when a file
#: does not give ``ops``: softmax = exp + running sum + divide; layer norm = mean,
#: variance, subtract, scale, shift. Our choice; see docs/cost-model.md.
OPS_PER_ELEMENT = {OpKind.SOFTMAX: 3, OpKind.NORM: 5, OpKind.ELTWISE: 1}


def _kind(value: Any, where: str) -> OpKind:
    if isinstance(value, OpKind):
        return value
    try:
        return OpKind(str(value).lower())
    except ValueError:
        known = ", ".join(k.value for k in OpKind)
        raise InputError(where, f"unknown op kind {value!r}", f"use one of {known}") from None


#: Plausibility limits of a layer's loop dims (2²⁴: 16.7 M channels, features or
#: pixels) and of its element counts per sample (2⁴⁰ ≈ 1.1 T): a value beyond them is a
#: typo or a unit error, and would overflow the cost model's int64 products.
MAX_DIM = 1 << 24
MAX_ELEMS = 1 << 40
#: Largest batch a decision takes (SET's experiments go to 64; tile_groups enumerates
#: the divisors of B and region_split's tables multiply by it).
MAX_BATCH = 1 << 16


def check_batch(batch: object) -> int:
    """``batch`` as an int in 1..MAX_BATCH, or a one-line :class:`InputError`."""
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or \
            not 1 <= batch <= MAX_BATCH:
        raise InputError("batch", f"must be an integer in 1..{MAX_BATCH:,}, got {batch!r}",
                         "give the number of samples, e.g. --batch 8")
    return int(batch)


@dataclass(frozen=True)
class Layer:
    """One op of a workload: kind, per-sample loop dims and sizes in elements."""

    name: str
    kind: OpKind
    K: int = 1
    C: int = 1
    H: int = 1
    W: int = 1
    R: int = 1
    S: int = 1
    stride: int = 1
    groups: int = 1
    in_elems: int = 0  # all input activations read per sample (weights excluded)
    weight_elems: int = 0  # parameters, biases included
    ops: int = 0  # non-MAC vector/scalar operations per sample
    control_flow: bool = False  # scalar op that steers control flow (seed 003)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", _kind(self.kind, f"layer {self.name!r}.kind"))
        if not isinstance(self.name, str) or not self.name:
            raise InputError("layer.name", "must be a non-empty string")
        for f in ("K", "C", "H", "W", "R", "S", "stride", "groups"):
            v = getattr(self, f)
            if not _is_int(v) or v < 1:
                raise InputError(f"layer {self.name!r}.{f}",
                                 f"must be a positive integer, got {v!r}")
            if v > MAX_DIM:
                raise InputError(f"layer {self.name!r}.{f}", f"{v:,} is implausibly large "
                                 f"(more than {MAX_DIM:,})", "check the value and its unit")
        for f in ("in_elems", "weight_elems", "ops"):
            v = getattr(self, f)
            if not _is_int(v) or v < 0:
                raise InputError(
                    f"layer {self.name!r}.{f}", f"must be a non-negative integer, got {v!r}"
                )
            if v > MAX_ELEMS:
                raise InputError(f"layer {self.name!r}.{f}", f"{v:,} is implausibly large "
                                 f"(more than {MAX_ELEMS:,})", "check the value and its unit")
        if self.kind in MAC_KINDS and (self.C % self.groups or self.K % self.groups):
            raise InputError(
                f"layer {self.name!r}.groups",
                f"groups={self.groups} must divide C={self.C} and K={self.K}",
            )
        if self.control_flow and self.kind is not OpKind.SCALAR:
            raise InputError(
                f"layer {self.name!r}.control_flow", "only scalar ops can be control flow"
            )

    # -- derived sizes -------------------------------------------------------------
    @property
    def macs(self) -> int:
        """Multiply-accumulates per sample."""
        if self.kind not in MAC_KINDS:
            return 0
        return self.H * self.W * self.K * (self.C // self.groups) * self.R * self.S

    @property
    def out_elems(self) -> int:
        """Output activation elements per sample."""
        return self.K * self.H * self.W

    @property
    def gathered_elems(self) -> int:
        """Table elements an embedding lookup reads per sample: one ``K``-wide row per
        token, ``K·H·W`` (its output size), at most the table (``weight_elems``, when the
        layer owns it); 0 for every other kind. The rows come from DRAM every run; the
        table never sits in a buffer (docs/cost-model.md §3)."""
        if self.kind is not OpKind.EMBED:
            return 0
        return min(self.out_elems, self.weight_elems) if self.weight_elems else self.out_elems

    @property
    def resident_weight_elems(self) -> int:
        """Weights the units hold while the layer runs: its parameters, except for an
        embedding lookup, which holds none (it gathers rows, :attr:`gathered_elems`)."""
        return 0 if self.kind is OpKind.EMBED else self.weight_elems

    @property
    def work(self) -> int:
        """Operations per sample as seed 000 counts them: MACs plus non-MAC ops."""
        return self.macs + self.ops

    @property
    def is_tensor(self) -> bool:
        """Tensor class (vector/matrix/conv work) vs scalar class (seed 003)."""
        return self.kind is not OpKind.SCALAR

    @property
    def dims(self) -> dict[str, int]:
        """Loop dims under the field's usual names (conv: K C H W R S; matmul: M K N)."""
        if self.kind in (OpKind.FC, OpKind.MATMUL):
            d = {"M": self.H * self.W, "K": self.C, "N": self.K}
            if self.groups > 1:
                d = {"G": self.groups, "M": self.H * self.W, "K": self.C // self.groups,
                     "N": self.K // self.groups}
            return d
        return {"K": self.K, "C": self.C, "H": self.H, "W": self.W, "R": self.R, "S": self.S,
                "stride": self.stride, "groups": self.groups}

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name, "kind": self.kind.value}
        # Sizes are always written: from_dict would otherwise fill in defaults by kind
        # (a tied fc with weight_elems=0 would regain K·C weights).
        always = ("in_elems", "weight_elems", "ops")
        for f in fields(self)[2:]:
            v = getattr(self, f.name)
            if v != f.default or f.name in always:
                d[f.name] = int(v) if _is_int(v) else v
        return d


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


@dataclass(frozen=True)
class Workload:
    """A DAG of layers in topological order; ``edges`` are ``(src, dst, elems)``.

    ``elems`` is the size of the tensor that flows along the edge per sample
    (normally the producer's whole output). Bytes = elems × ``precision_bytes``.
    """

    name: str
    layers: tuple[Layer, ...]
    edges: tuple[tuple[int, int, int], ...] = ()
    precision_bytes: int = 1
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "layers", tuple(self.layers))
        # canonical order, so that equal graphs compare equal
        object.__setattr__(self, "edges",
                           tuple(sorted(tuple(int(x) for x in e) for e in self.edges)))
        if not self.layers:
            raise InputError(f"network {self.name!r}.layers", "is empty", "give at least one layer")
        if not _is_int(self.precision_bytes) or self.precision_bytes < 1:
            raise InputError(
                "network.precision_bytes",
                f"must be a positive integer, got {self.precision_bytes!r}",
                "use 1 for int8, 2 for fp16/bf16, 4 for fp32",
            )
        seen: set[str] = set()
        for layer in self.layers:
            if layer.name in seen:
                raise InputError(f"network {self.name!r}.layers", f"duplicate name {layer.name!r}")
            seen.add(layer.name)
        n = len(self.layers)
        pairs = set()
        for s, d, e in self.edges:
            if not (0 <= s < n and 0 <= d < n):
                raise InputError(f"network {self.name!r}.edges", f"edge ({s}, {d}) out of range")
            if s >= d:
                raise InputError(
                    f"network {self.name!r}.edges",
                    f"edge {self.layers[s].name} -> {self.layers[d].name} goes backwards",
                    "layers must be in topological order (use Workload.from_dict to sort)",
                )
            if (s, d) in pairs:
                raise InputError(
                    f"network {self.name!r}.edges",
                    f"duplicate edge {self.layers[s].name} -> {self.layers[d].name}",
                )
            if e < 0:
                raise InputError(f"network {self.name!r}.edges",
                                 f"negative size on edge ({s}, {d})")
            pairs.add((s, d))

    # -- graph structure -------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.layers)

    @cached_property
    def _index(self) -> dict[str, int]:
        return {layer.name: i for i, layer in enumerate(self.layers)}

    def index(self, name: str) -> int:
        """Index of the layer called ``name``."""
        try:
            return self._index[name]
        except KeyError:
            from chipsched.errors import UnknownNameError

            raise UnknownNameError(f"network {self.name!r} layer", name, self._index) from None

    @cached_property
    def preds(self) -> tuple[tuple[int, ...], ...]:
        p: list[list[int]] = [[] for _ in self.layers]
        for s, d, _ in self.edges:
            p[d].append(s)
        return tuple(tuple(sorted(x)) for x in p)

    @cached_property
    def succs(self) -> tuple[tuple[int, ...], ...]:
        p: list[list[int]] = [[] for _ in self.layers]
        for s, d, _ in self.edges:
            p[s].append(d)
        return tuple(tuple(sorted(x)) for x in p)

    @cached_property
    def edge_elems(self) -> dict[tuple[int, int], int]:
        return {(s, d): e for s, d, e in self.edges}

    def edge_bytes(self, src: int, dst: int) -> int:
        return self.edge_elems[(src, dst)] * self.precision_bytes

    @property
    def sources(self) -> tuple[int, ...]:
        return tuple(i for i, p in enumerate(self.preds) if not p)

    @property
    def sinks(self) -> tuple[int, ...]:
        return tuple(i for i, s in enumerate(self.succs) if not s)

    def is_chain(self) -> bool:
        """True when the layers form one path 0 → 1 → … → n-1."""
        return len(self.edges) == len(self.layers) - 1 and all(
            s + 1 == d for s, d, _ in self.edges
        )

    def to_networkx(self):
        """A ``networkx.DiGraph`` with layer attributes on nodes and ``bytes`` on edges."""
        import networkx as nx

        g = nx.DiGraph(name=self.name)
        for i, layer in enumerate(self.layers):
            g.add_node(i, name=layer.name, kind=layer.kind.value, macs=layer.macs, ops=layer.ops,
                       work=layer.work)
        for s, d, e in self.edges:
            g.add_edge(s, d, elems=e, bytes=e * self.precision_bytes)
        return g

    # -- totals -----------------------------------------------------------------------
    @cached_property
    def arrays(self) -> dict[str, np.ndarray]:
        """Per-layer columns as int64 numpy arrays (for vectorized cost tables)."""
        cols = ("K", "C", "H", "W", "R", "S", "stride", "groups", "in_elems", "weight_elems", "ops")
        out = {c: np.array([getattr(ly, c) for ly in self.layers], dtype=np.int64) for c in cols}
        out["macs"] = np.array([ly.macs for ly in self.layers], dtype=np.int64)
        out["out_elems"] = np.array([ly.out_elems for ly in self.layers], dtype=np.int64)
        out["mac_kind"] = np.array([ly.kind in MAC_KINDS for ly in self.layers])
        out["resident_weight_elems"] = np.array([ly.resident_weight_elems
                                                 for ly in self.layers], dtype=np.int64)
        out["gathered_elems"] = np.array([ly.gathered_elems for ly in self.layers],
                                         dtype=np.int64)
        return out

    @property
    def total_macs(self) -> int:
        return int(sum(ly.macs for ly in self.layers))

    @property
    def total_params(self) -> int:
        return int(sum(ly.weight_elems for ly in self.layers))

    @property
    def total_ops(self) -> int:
        return int(sum(ly.ops for ly in self.layers))

    def summary(self) -> dict[str, Any]:
        kinds: dict[str, int] = {}
        for ly in self.layers:
            kinds[ly.kind.value] = kinds.get(ly.kind.value, 0) + 1
        return {
            "name": self.name,
            "layers": len(self.layers),
            "edges": len(self.edges),
            "macs": self.total_macs,
            "params": self.total_params,
            "weight_bytes": self.total_params * self.precision_bytes,
            "activation_bytes": int(sum(ly.out_elems for ly in self.layers)) * self.precision_bytes,
            "non_mac_ops": self.total_ops,
            "precision_bytes": self.precision_bytes,
            "kinds": kinds,
            **({"source": self.meta["source"]} if "source" in self.meta else {}),
        }

    def with_precision(self, precision_bytes: int) -> Workload:
        return replace(self, precision_bytes=precision_bytes)

    # -- files -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The network file form (YAML/JSON): layers with ``inputs`` by name."""
        layers = []
        for i, ly in enumerate(self.layers):
            d = ly.to_dict()
            ins: list[Any] = []
            for p in self.preds[i]:
                e = self.edge_elems[(p, i)]
                name = self.layers[p].name
                ins.append(name if e == self.layers[p].out_elems else {"layer": name, "elems": e})
            d["inputs"] = ins
            layers.append(d)
        out: dict[str, Any] = {"name": self.name, "precision_bytes": self.precision_bytes,
                               "layers": layers}
        if self.meta:
            out["meta"] = dict(self.meta)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], source: str = "network") -> Workload:
        """Build from the network file form; layers may come in any order.

        Defaults when a field is absent: ``in_elems`` = sum of the producers' tensors
        (required for layers without producers), ``weight_elems`` by kind (conv:
        K·C/groups·R·S + K bias, fc: K·C + K, others 0), ``ops`` by kind.
        """
        if not isinstance(data, Mapping):
            raise InputError(source, "must be a mapping with 'name' and 'layers'")
        raw_layers = data.get("layers")
        if not isinstance(raw_layers, list) or not raw_layers:
            raise InputError(f"{source}.layers", "missing or empty", "give a list of layers")
        name = str(data.get("name", "network"))
        precision = data.get("precision_bytes", 1)
        by_name: dict[str, dict[str, Any]] = {}
        inputs: dict[str, list[tuple[str, int | None]]] = {}
        allowed = {f.name for f in fields(Layer)} | {"inputs"}
        for k, raw in enumerate(raw_layers):
            where = f"{source}.layers[{k}]"
            if not isinstance(raw, Mapping):
                raise InputError(where, "must be a mapping")
            if "name" not in raw:
                raise InputError(f"{where}.name", "is required")
            lname = str(raw["name"])
            where = f"{source}.layers[{lname}]"
            extra = set(raw) - allowed
            if extra:
                raise InputError(f"{where}.{sorted(extra)[0]}", "unknown field",
                                 f"allowed: {', '.join(sorted(allowed))}")
            if "kind" not in raw:
                raise InputError(f"{where}.kind", "is required")
            if lname in by_name:
                raise InputError(where, "duplicate layer name")
            ins = []
            for x in raw.get("inputs", []) or []:
                if isinstance(x, Mapping):
                    ins.append((str(x.get("layer")), x.get("elems")))
                else:
                    ins.append((str(x), None))
            inputs[lname] = ins
            by_name[lname] = {k2: v for k2, v in raw.items() if k2 != "inputs"}
        for lname, ins in inputs.items():
            for src, _ in ins:
                if src not in by_name:
                    from chipsched.errors import UnknownNameError

                    raise UnknownNameError(f"{source}.layers[{lname}].inputs", src, by_name)
        order = _toposort(list(by_name), {n: [s for s, _ in inputs[n]] for n in by_name}, source)
        layers: list[Layer] = []
        made: dict[str, Layer] = {}
        for lname in order:
            spec = dict(by_name[lname])
            kind = _kind(spec["kind"], f"{source}.layers[{lname}].kind")
            spec["kind"] = kind
            try:
                layer = Layer(**spec)
            except TypeError as exc:
                raise InputError(f"{source}.layers[{lname}]", str(exc)) from None
            upd: dict[str, int] = {}
            if "in_elems" not in spec:
                if not inputs[lname]:
                    raise InputError(f"{source}.layers[{lname}].in_elems",
                                     "is required for a layer without inputs")
                upd["in_elems"] = sum(e if e is not None else made[s].out_elems
                                      for s, e in inputs[lname])
            if "weight_elems" not in spec:
                upd["weight_elems"] = default_weight_elems(layer)
            if "ops" not in spec:
                upd["ops"] = default_ops(layer, len(inputs[lname]))
            layer = replace(layer, **upd) if upd else layer
            made[lname] = layer
            layers.append(layer)
        for lname, ins in inputs.items():
            _check_channels(made, lname, ins, "C" in by_name[lname], source)
        pos = {ly.name: i for i, ly in enumerate(layers)}
        edges = []
        for lname, ins in inputs.items():
            seen: set[str] = set()
            for src, e in ins:
                if src in seen:
                    continue
                seen.add(src)
                edges.append((pos[src], pos[lname], made[src].out_elems if e is None else int(e)))
        edges.sort()
        return cls(name=name, layers=tuple(layers), edges=tuple(edges), precision_bytes=precision,
                   meta=dict(data.get("meta", {}) or {}))


#: kinds whose output is a K-channel feature map (what a convolution reads as C)
_CHANNEL_KINDS = frozenset({OpKind.CONV, OpKind.DEPTHWISE, OpKind.POOL, OpKind.ELTWISE,
                            OpKind.CONCAT, OpKind.NORM})


def _check_channels(made: Mapping[str, Layer], lname: str,
                    ins: Sequence[tuple[str, int | None]], c_given: bool, source: str) -> None:
    """A convolution's C given in the file must match what its inputs deliver: the sum
    of the producers' K (inputs concatenated) or each producer's K (inputs of one
    width). Edges with explicit ``elems`` and producers that are not feature maps
    (fc, matmul, embed, …) are the file's own business and are not checked."""
    layer = made[lname]
    if not c_given or layer.kind not in (OpKind.CONV, OpKind.DEPTHWISE) or not ins:
        return
    if any(e is not None or made[s].kind not in _CHANNEL_KINDS for s, e in ins):
        return
    ks = [made[s].K for s, _ in ins]
    if layer.C == sum(ks) or all(k == layer.C for k in ks):
        return
    names = ", ".join(f"{s} (K={made[s].K})" for s, _ in ins)
    raise InputError(f"{source}.layers[{lname}].C",
                     f"is {layer.C} but its input{'s' if len(ins) > 1 else ''} {names} "
                     f"deliver{'' if len(ins) > 1 else 's'} {sum(ks)} channels",
                     f"set C to {sum(ks)}, or give the edge's elems explicitly")


def default_weight_elems(layer: Layer, bias: bool = True) -> int:
    """Parameters of a layer from its dims (bias included when ``bias``)."""
    if layer.kind in (OpKind.CONV, OpKind.DEPTHWISE):
        return layer.K * (layer.C // layer.groups) * layer.R * layer.S + (layer.K if bias else 0)
    if layer.kind is OpKind.FC:
        return layer.K * layer.C + (layer.K if bias else 0)
    return 0


def default_ops(layer: Layer, n_inputs: int = 1) -> int:
    """Non-MAC operations per sample for the non-MAC kinds (see OPS_PER_ELEMENT)."""
    out = layer.out_elems
    if layer.kind is OpKind.POOL:
        return out * layer.R * layer.S
    if layer.kind is OpKind.ELTWISE:
        return out * max(1, n_inputs - 1)
    if layer.kind in OPS_PER_ELEMENT:
        return out * OPS_PER_ELEMENT[layer.kind]
    return 0


def _toposort(names: list[str], preds: dict[str, list[str]], source: str) -> list[str]:
    """Kahn's algorithm, stable in file order; a cycle is reported by its layers."""
    indeg = {n: len(set(preds[n])) for n in names}
    succ: dict[str, list[str]] = {n: [] for n in names}
    for n in names:
        for p in set(preds[n]):
            succ[p].append(n)
    rank = {n: i for i, n in enumerate(names)}
    import heapq

    ready = [(rank[n], n) for n in names if indeg[n] == 0]
    heapq.heapify(ready)
    order = []
    while ready:
        _, n = heapq.heappop(ready)
        order.append(n)
        for s in succ[n]:
            indeg[s] -= 1
            if indeg[s] == 0:
                heapq.heappush(ready, (rank[s], s))
    if len(order) < len(names):
        left = {n for n in names if indeg[n] > 0}
        cycle = _find_cycle(left, preds)
        raise InputError(f"{source}.layers", "the network has a cycle: " + " -> ".join(cycle),
                         "a workload must be a DAG")
    return order


def _find_cycle(nodes: set[str], preds: dict[str, list[str]]) -> list[str]:
    start = min(nodes)
    path, seen = [start], {start: 0}
    cur = start
    while True:
        nxt = next(p for p in sorted(set(preds[cur])) if p in nodes)
        if nxt in seen:
            cyc = path[seen[nxt]:] + [nxt]
            return list(reversed(cyc))
        seen[nxt] = len(path)
        path.append(nxt)
        cur = nxt


# ---------------------------------------------------------------------------------------
# Builder


Shape = tuple[int, int, int]  # (channels/features, height/tokens, width)


def conv_out(size: int, kernel: int, stride: int, pad: int | str, ceil_mode: bool = False
             ) -> int:
    """Output extent of a convolution/pooling window along one axis.

    ``pad`` is an int (PyTorch semantics), ``"same"`` (TensorFlow: ceil(size/stride))
    or ``"valid"`` (no padding). ``ceil_mode`` is PyTorch's pooling option: round up,
    but the last window must start inside the input or the left padding.
    """
    if pad == "same":
        return math.ceil(size / stride)
    if pad == "valid":
        pad = 0
    pad = int(pad)
    if ceil_mode:
        out = -(-(size + 2 * pad - kernel) // stride) + 1
        if (out - 1) * stride >= size + pad:
            out -= 1
    else:
        out = (size + 2 * pad - kernel) // stride + 1
    if out < 1:
        raise InputError("layer", f"window {kernel} stride {stride} does not fit input {size}")
    return out


class WorkloadBuilder:
    """Incremental construction of a :class:`Workload` with shape tracking.

    Tensors are named by the layer that produced them, or by :meth:`input`. Shapes
    are ``(C, H, W)``; a token sequence of length T with d features is ``(d, T, 1)``.
    Activation functions and batch norm are folded into the preceding MAC layer
    (as accelerators execute them), so they are not separate layers.
    """

    def __init__(self, name: str, precision_bytes: int = 1, meta: Mapping[str, Any] | None = None):
        self.name = name
        self.precision_bytes = precision_bytes
        self.meta = dict(meta or {})
        self._layers: list[Layer] = []
        self._index: dict[str, int] = {}
        self._shape: dict[str, Shape] = {}
        self._edges: dict[tuple[int, int], int] = {}

    # -- tensors ------------------------------------------------------------------------
    def input(self, name: str, shape: Sequence[int]) -> str:
        """Declare a network input tensor (read from DRAM by its consumers)."""
        s = tuple(int(x) for x in shape) + (1,) * (3 - len(shape))
        if name in self._shape:
            raise InputError(f"network {self.name!r}", f"tensor {name!r} defined twice")
        self._shape[name] = s  # type: ignore[assignment]
        return name

    def shape(self, tensor: str) -> Shape:
        try:
            return self._shape[tensor]
        except KeyError:
            raise InputError(f"network {self.name!r}", f"unknown tensor {tensor!r}") from None

    @staticmethod
    def elems(shape: Shape) -> int:
        return shape[0] * shape[1] * shape[2]

    def add_layer(self, layer: Layer, inputs: Iterable[str], out_shape: Shape | None = None,
                  edge_elems: Mapping[str, int] | None = None) -> str:
        """Append a fully specified layer; ``inputs`` are tensor names."""
        if layer.name in self._shape:
            raise InputError(f"network {self.name!r}", f"tensor {layer.name!r} defined twice")
        idx = len(self._layers)
        for t in inputs:
            self.shape(t)
            if t in self._index:
                e = (edge_elems or {}).get(t, self._layers[self._index[t]].out_elems)
                key = (self._index[t], idx)
                self._edges[key] = max(self._edges.get(key, 0), e)
        self._layers.append(layer)
        self._index[layer.name] = idx
        self._shape[layer.name] = out_shape or (layer.K, layer.H, layer.W)
        return layer.name

    def _in_elems(self, inputs: Iterable[str]) -> int:
        return sum(self.elems(self.shape(t)) for t in dict.fromkeys(inputs))

    # -- layer kinds ---------------------------------------------------------------------
    def conv(self, name: str, x: str, K: int, kernel: int | tuple[int, int], stride: int = 1,
             pad: int | str | None = None, groups: int = 1, bias: bool = False) -> str:
        """Convolution (BN and activation folded in). ``pad`` defaults to (kernel-1)//2."""
        C, H, W = self.shape(x)
        R, S = (kernel, kernel) if isinstance(kernel, int) else kernel
        ph = (R - 1) // 2 if pad is None else pad
        pw = (S - 1) // 2 if pad is None else pad
        Ho, Wo = conv_out(H, R, stride, ph), conv_out(W, S, stride, pw)
        kind = OpKind.DEPTHWISE if groups > 1 and groups == C == K else OpKind.CONV
        layer = Layer(name, kind, K=K, C=C, H=Ho, W=Wo, R=R, S=S, stride=stride, groups=groups,
                      in_elems=C * H * W)
        layer = replace(layer, weight_elems=default_weight_elems(layer, bias))
        return self.add_layer(layer, [x])

    def dwconv(self, name: str, x: str, kernel: int | tuple[int, int], stride: int = 1,
               pad: int | str | None = None, bias: bool = False) -> str:
        """Depthwise convolution (one filter per channel)."""
        C = self.shape(x)[0]
        return self.conv(name, x, K=C, kernel=kernel, stride=stride, pad=pad, groups=C, bias=bias)

    def fc(self, name: str, x: str, K: int, bias: bool = True, flatten: bool = False) -> str:
        """Fully connected layer. Applied per token on ``(d, T, 1)``; ``flatten`` first
        flattens ``(C, H, W)`` into ``C·H·W`` features (VGG's fc6)."""
        C, H, W = self.shape(x)
        if flatten:
            C, H, W = C * H * W, 1, 1
        layer = Layer(name, OpKind.FC, K=K, C=C, H=H, W=W, in_elems=C * H * W,
                      weight_elems=K * C + (K if bias else 0))
        return self.add_layer(layer, [x])

    def matmul(self, name: str, a: str, b: str, N: int, groups: int = 1) -> str:
        """Activation × activation product, ``groups`` independent heads.

        ``a`` is ``(C, M, 1)``: M rows of C = groups·k features. The result is
        ``(N, M, 1)`` with N = groups·n columns; ``b`` holds the groups k×n matrices
        (its size must be C·N/groups elements).
        """
        C, M, Wa = self.shape(a)
        if Wa != 1:
            raise InputError(f"layer {name!r}", "matmul input a must be (features, rows, 1)")
        need = C * N // groups
        if self.elems(self.shape(b)) != need:
            raise InputError(f"layer {name!r}",
                             f"input b has {self.elems(self.shape(b))} elements, expected {need}")
        layer = Layer(name, OpKind.MATMUL, K=N, C=C, H=M, W=1, groups=groups,
                      in_elems=self._in_elems([a, b]))
        return self.add_layer(layer, [a, b])

    def pool(self, name: str, x: str, kernel: int | None = None, stride: int | None = None,
             pad: int | str = 0, global_: bool = False, ceil_mode: bool = False) -> str:
        """Max/average pooling; ``global_`` pools the whole plane to 1×1 (no kernel needed);
        ``ceil_mode`` rounds the output size up as PyTorch does."""
        C, H, W = self.shape(x)
        if global_:
            R, S, stride, Ho, Wo = H, W, 1, 1, 1
        else:
            if kernel is None:
                raise InputError(f"layer {name!r}.kernel", "is required unless global_=True")
            stride = stride or kernel
            R = S = kernel
            Ho = conv_out(H, kernel, stride, pad, ceil_mode)
            Wo = conv_out(W, kernel, stride, pad, ceil_mode)
        layer = Layer(name, OpKind.POOL, K=C, C=C, H=Ho, W=Wo, R=R, S=S, stride=stride,
                      in_elems=C * H * W)
        layer = replace(layer, ops=default_ops(layer))
        return self.add_layer(layer, [x])

    def add(self, name: str, *xs: str) -> str:
        """Element-wise sum of same-shaped tensors (residual connection)."""
        shapes = {self.shape(t) for t in xs}
        if len(shapes) != 1:
            raise InputError(f"layer {name!r}", f"eltwise inputs differ in shape: {sorted(shapes)}")
        C, H, W = shapes.pop()
        layer = Layer(name, OpKind.ELTWISE, K=C, C=C, H=H, W=W, in_elems=self._in_elems(xs),
                      ops=C * H * W * max(1, len(set(xs)) - 1))
        return self.add_layer(layer, xs)

    def eltwise(self, name: str, x: str, ops_per_element: int = 1) -> str:
        """A unary element-wise op that is not folded (e.g. a standalone activation)."""
        C, H, W = self.shape(x)
        layer = Layer(name, OpKind.ELTWISE, K=C, C=C, H=H, W=W, in_elems=C * H * W,
                      ops=C * H * W * ops_per_element)
        return self.add_layer(layer, [x])

    def concat(self, name: str, *xs: str) -> str:
        """Concatenation along channels (features)."""
        shapes = [self.shape(t) for t in xs]
        if len({s[1:] for s in shapes}) != 1:
            raise InputError(f"layer {name!r}", f"concat inputs differ in H×W: {shapes}")
        C = sum(s[0] for s in shapes)
        H, W = shapes[0][1:]
        layer = Layer(name, OpKind.CONCAT, K=C, C=C, H=H, W=W, in_elems=self._in_elems(xs))
        return self.add_layer(layer, xs)

    def norm(self, name: str, x: str, affine: bool = True) -> str:
        """Layer norm over the feature dim (2·d parameters when ``affine``)."""
        C, H, W = self.shape(x)
        layer = Layer(name, OpKind.NORM, K=C, C=C, H=H, W=W, in_elems=C * H * W,
                      weight_elems=2 * C if affine else 0,
                      ops=OPS_PER_ELEMENT[OpKind.NORM] * C * H * W)
        return self.add_layer(layer, [x])

    def softmax(self, name: str, x: str) -> str:
        C, H, W = self.shape(x)
        layer = Layer(name, OpKind.SOFTMAX, K=C, C=C, H=H, W=W, in_elems=C * H * W,
                      ops=OPS_PER_ELEMENT[OpKind.SOFTMAX] * C * H * W)
        return self.add_layer(layer, [x])

    def embed(self, name: str, ids: str, vocab: int, dim: int, *extra: str) -> str:
        """Embedding lookup of ``ids`` (shape ``(1, T, 1)``) in a vocab×dim table.

        ``extra`` tensors of shape ``(dim, T, 1)`` are added in (position/segment
        embeddings computed elsewhere); their sums count as ops.
        """
        T = self.shape(ids)[1]
        layer = Layer(name, OpKind.EMBED, K=dim, C=1, H=T, W=1,
                      in_elems=self._in_elems([ids, *extra]), weight_elems=vocab * dim,
                      ops=dim * T * len(extra))
        return self.add_layer(layer, [ids, *extra])

    def scalar(self, name: str, inputs: Sequence[str], ops: int, out_elems: int = 1,
               control_flow: bool = False) -> str:
        """A scalar op (shape arithmetic, loop control, parameter setup — seed 003)."""
        layer = Layer(name, OpKind.SCALAR, K=out_elems, C=1, H=1, W=1,
                      in_elems=self._in_elems(inputs) if inputs else 1, ops=ops,
                      control_flow=control_flow)
        return self.add_layer(layer, inputs, out_shape=(out_elems, 1, 1))

    def build(self) -> Workload:
        edges = tuple(sorted((s, d, e) for (s, d), e in self._edges.items()))
        return Workload(self.name, tuple(self._layers), edges, self.precision_bytes,
                        dict(self.meta))
