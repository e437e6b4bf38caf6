"""Expansion of a :class:`~chipsched.workload.Workload` into a neuron graph: one vertex per
group of channels of one layer at one pixel, edges along the receptive fields (conv,
depthwise, fc, pool, eltwise, concat). See :func:`from_workload`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.workload import OpKind, Workload

from .graph import NeuronGraph

_SUPPORTED = (OpKind.CONV, OpKind.DEPTHWISE, OpKind.FC, OpKind.POOL, OpKind.ELTWISE,
              OpKind.CONCAT)


@dataclass(frozen=True)
class _Tensor:
    base: int  # first vertex id
    C: int
    H: int
    W: int
    g: int  # channels per vertex

    @property
    def groups(self) -> int:
        return -(-self.C // self.g)

    @property
    def n(self) -> int:
        return self.groups * self.H * self.W

    def group_sizes(self) -> np.ndarray:
        """Channels in each channel group (the last may be smaller)."""
        s = np.full(self.groups, self.g, np.int64)
        s[-1] = self.C - self.g * (self.groups - 1)
        return s

    def vertex_sizes(self) -> np.ndarray:
        return np.repeat(self.group_sizes(), self.H * self.W)

    def vid(self, cg: np.ndarray, y: np.ndarray, x: np.ndarray) -> np.ndarray:
        return self.base + (cg * self.H + y) * self.W + x


def _overlap(out: _Tensor, inp: _Tensor, offset: int = 0) -> np.ndarray:
    """``M[kg, cg]`` = number of channels k of output group kg whose input channel
    ``k - offset`` lies in input group cg (a channel-wise op: pool, eltwise, depthwise,
    concat)."""
    k = np.arange(out.C, dtype=np.int64)
    c = k - offset
    ok = (c >= 0) & (c < inp.C)
    m = np.zeros((out.groups, inp.groups), np.int64)
    np.add.at(m, (k[ok] // out.g, c[ok] // inp.g), 1)
    return m


def _conv_channels(out: _Tensor, inp: _Tensor, conv_groups: int) -> np.ndarray:
    """``M[kg, cg]`` = synapses per filter tap between output channel group kg and input
    channel group cg of a grouped convolution (dense conv: |kg|·|cg|)."""
    K, C = out.C, inp.C
    if conv_groups == 1:
        return np.outer(out.group_sizes(), inp.group_sizes())
    kper, cper = K // conv_groups, C // conv_groups
    # channels of output group kg in conv-group j: count via a (K,) -> (groups) histogram
    k = np.arange(K, dtype=np.int64)
    a = np.zeros((out.groups, conv_groups), np.int64)
    np.add.at(a, (k // out.g, k // kper), 1)
    c = np.arange(C, dtype=np.int64)
    b = np.zeros((conv_groups, inp.groups), np.int64)
    np.add.at(b, (c // cper, c // inp.g), 1)
    return a @ b


def _window_pairs(out: _Tensor, inp: _Tensor, R: int, S: int, stride: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Output pixels (y, x) and the input pixels (iy, ix) of their receptive fields.

    Padding is inferred as the smallest symmetric padding that gives the output size:
    ``pad = max(0, ((H-1)·stride + R - Hin + 1) // 2)`` (exact for the usual
    ``(kernel-1)//2`` padding and for valid convolutions)."""
    ph = max(0, ((out.H - 1) * stride + R - inp.H + 1) // 2)
    pw = max(0, ((out.W - 1) * stride + S - inp.W + 1) // 2)
    y, x, dy, dx = np.meshgrid(np.arange(out.H), np.arange(out.W), np.arange(R), np.arange(S),
                               indexing="ij")
    iy = y * stride - ph + dy
    ix = x * stride - pw + dx
    ok = (iy >= 0) & (iy < inp.H) & (ix >= 0) & (ix < inp.W)
    return y[ok].ravel(), x[ok].ravel(), iy[ok].ravel(), ix[ok].ravel()


def _connect(out: _Tensor, inp: _Tensor, m: np.ndarray, y: np.ndarray, x: np.ndarray,
             iy: np.ndarray, ix: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Edges input vertex (cg, iy, ix) -> output vertex (kg, y, x) with weight M[kg, cg]
    for every pixel pair and every nonzero channel-group pair."""
    kg, cg = np.nonzero(m)
    w = m[kg, cg]
    src = inp.vid(cg[None, :], iy[:, None], ix[:, None]).ravel()
    dst = out.vid(kg[None, :], y[:, None], x[:, None]).ravel()
    return src, dst, np.broadcast_to(w[None, :], (y.shape[0], w.shape[0])).ravel()


#: the most edges a neuron graph built from a network may have: 150 M edges take
#: ≈ 16 GiB on the way (measured ≈ 0.11 GiB per million edges end to end)
MAX_NEURON_EDGES = 150_000_000


def estimate_edges(workload: Workload, channels_per_vertex: int = 1) -> float:
    """An estimate of the edges :func:`from_workload` builds, from the layer dims alone:
    MACs / g² for conv and fc (g channels per vertex on both ends of a synapse), the
    window per output vertex for pools, one edge per input for eltwise and concat.
    0–30 % above the built graph on LeNet-5, VGG-11 and ResNet-20 (CIFAR)."""
    g = max(1, int(channels_per_vertex))
    total = 0.0
    for i, ly in enumerate(workload.layers):
        if ly.kind in (OpKind.CONV, OpKind.DEPTHWISE, OpKind.FC):
            total += ly.macs / g ** 2
        elif ly.kind is OpKind.POOL:
            total += ly.out_elems / g * ly.R * ly.S
        else:
            total += ly.out_elems / g * max(1, len(workload.preds[i]))
    return total


def _check_size(workload: Workload, g: int, max_edges: int) -> None:
    est = estimate_edges(workload, g)
    if est <= max_edges:
        return
    need = g
    while estimate_edges(workload, need) > max_edges:
        need *= 2
    raise InputError("channels_per_vertex",
                     f"network {workload.name!r} with {g} channel(s) per vertex makes "
                     f"≈{est:.3g} neuron-graph edges (≈{0.11e-6 * est:.0f} GiB), more than "
                     f"the {max_edges:,} chipsched builds",
                     f"group channels: -O channels_per_vertex={need} (≈"
                     f"{estimate_edges(workload, need):.3g} edges)")


def from_workload(workload: Workload, channels_per_vertex: int = 1, include_input: bool = True,
                  name: str | None = None, max_edges: int = MAX_NEURON_EDGES) -> NeuronGraph:
    """Expand a workload into a neuron graph: one vertex per ``channels_per_vertex``
    channels of one layer at one pixel, edges along receptive fields.

    Granularity: ``channels_per_vertex = g`` groups g consecutive channels (features) of a
    tensor at one pixel into one vertex of size g (the last group of a layer may be
    smaller). ``g = 1`` is the neuron graph; larger g shrinks the graph about g-fold in
    vertices and g²-fold in edges, so the size is the user's choice.

    Connections (edge weight = number of synapses between the two vertices):

    * conv / depthwise (grouped conv): output neuron (k, y, x) ← input neurons
      (c, y·s − pad + dy, x·s − pad + dx) for every filter tap (dy, dx) inside the input
      and every input channel c of k's channel group;
    * pool: the same window, channel k ← channel k (global pooling: the whole plane);
    * fc: on a 1×1 output every output feature ← every input neuron (flatten); per
      pixel (tokens) every output feature ← every input feature at the same pixel;
    * eltwise (residual add): (k, y, x) ← (k, y, x) of every input;
    * concat: channel k ← channel k − offset of the input that holds it.

    Other kinds (matmul, norm, softmax, embed, scalar) raise :class:`InputError`. Network
    inputs (the image) become input neurons when ``include_input`` (one input tensor per
    distinct shape read by layers without producers, square planes assumed); otherwise
    their synapses are left out (inputs then come from off-chip). Vertex ids follow the
    tensors in topological order (input tensors first), within a tensor channel group,
    then row, then column — so every edge goes from a lower to a higher id.
    Padding is inferred from the shapes (see :func:`_window_pairs`).
    """
    g = int(channels_per_vertex)
    if g < 1:
        raise InputError("channels_per_vertex", f"must be >= 1, got {channels_per_vertex}")
    if all(ly.kind in _SUPPORTED for ly in workload.layers):
        _check_size(workload, g, max_edges)  # before anything is allocated
    tensors: list[_Tensor] = []
    base = 0
    inputs: dict[tuple[int, int, int], _Tensor] = {}
    layer_in: list[list[tuple[_Tensor | None, int]]] = []

    def new_tensor(C: int, H: int, W: int) -> _Tensor:
        nonlocal base
        t = _Tensor(base, C, H, W, g)
        base += t.n
        tensors.append(t)
        return t

    out_t: list[_Tensor] = []
    for i, ly in enumerate(workload.layers):
        if ly.kind not in _SUPPORTED:
            kinds = ", ".join(k.value for k in _SUPPORTED)
            raise InputError(f"network {workload.name!r} layer {ly.name!r}",
                             f"kind {ly.kind.value!r} cannot be expanded into neurons",
                             f"neuron graphs support {kinds}")
        preds = workload.preds[i]
        ins: list[tuple[_Tensor | None, int]] = []
        if not preds:
            C = ly.C
            plane = ly.in_elems // max(1, C)
            side = math.isqrt(plane)
            if side * side != plane or C * plane != ly.in_elems:
                raise InputError(f"network {workload.name!r} layer {ly.name!r}",
                                 f"cannot infer a square input plane from in_elems="
                                 f"{ly.in_elems} and C={C}")
            key = (C, side, side)
            if include_input and key not in inputs:
                inputs[key] = new_tensor(C, side, side)
            ins.append((inputs.get(key) if include_input else _Tensor(-1, C, side, side, g),
                        0))
        else:
            for p in preds:
                ins.append((out_t[p], 0))
        layer_in.append(ins)
        out_t.append(new_tensor(ly.K, ly.H, ly.W))
    sizes = np.concatenate([t.vertex_sizes() for t in tensors]) if tensors else \
        np.zeros(0, np.int64)
    us, vs, ws = [], [], []
    for i, ly in enumerate(workload.layers):
        out = out_t[i]
        offset = 0
        for inp, _ in layer_in[i]:
            if inp is None or inp.base < 0:
                if ly.kind is OpKind.CONCAT and inp is not None:
                    offset += inp.C
                continue
            s, d, w = _layer_edges(workload, ly, out, inp, offset)
            offset += inp.C
            us.append(s)
            vs.append(d)
            ws.append(w)
    u = np.concatenate(us) if us else np.zeros(0, np.int64)
    v = np.concatenate(vs) if vs else np.zeros(0, np.int64)
    w = np.concatenate(ws) if ws else np.zeros(0, np.int64)
    return NeuronGraph.from_edges(sizes, u, v, w, name=name or f"{workload.name}-neurons"
                                  + (f"-g{g}" if g > 1 else ""),
                                  meta={"network": workload.name, "channels_per_vertex": g,
                                        "precision_bytes": workload.precision_bytes,
                                        "include_input": include_input})


def _layer_edges(workload: Workload, ly: Any, out: _Tensor, inp: _Tensor, offset: int
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    kind = ly.kind
    where = f"network {workload.name!r} layer {ly.name!r}"
    if kind in (OpKind.CONV, OpKind.DEPTHWISE):
        if inp.C != ly.C:
            raise InputError(where, f"input has {inp.C} channels, the layer expects {ly.C}")
        m = _conv_channels(out, inp, ly.groups)
        y, x, iy, ix = _window_pairs(out, inp, ly.R, ly.S, ly.stride)
        return _connect(out, inp, m, y, x, iy, ix)
    if kind is OpKind.POOL:
        m = _overlap(out, inp)
        y, x, iy, ix = _window_pairs(out, inp, ly.R, ly.S, ly.stride)
        return _connect(out, inp, m, y, x, iy, ix)
    if kind is OpKind.FC:
        if out.H * out.W == inp.H * inp.W and inp.C == ly.C and out.H * out.W > 1:
            m = np.outer(out.group_sizes(), inp.group_sizes())
            yy, xx = np.divmod(np.arange(out.H * out.W), out.W)
            iy, ix = np.divmod(np.arange(inp.H * inp.W), inp.W)
            return _connect(out, inp, m, yy, xx, iy, ix)
        if out.H * out.W != 1:
            raise InputError(where, "fc over several pixels needs an input with the same "
                             "pixels")
        # flatten: every output feature group <- every input vertex
        in_ids = np.arange(inp.base, inp.base + inp.n, dtype=np.int64)
        in_sz = inp.vertex_sizes()
        og = out.group_sizes()
        src = np.tile(in_ids, out.groups)
        dst = np.repeat(out.base + np.arange(out.groups, dtype=np.int64), inp.n)
        w = (og[:, None] * in_sz[None, :]).ravel()
        return src, dst, w
    # eltwise, concat: channel-wise at the same pixel
    if (inp.H, inp.W) != (out.H, out.W):
        raise InputError(where, f"input plane {inp.H}×{inp.W} differs from the output "
                         f"{out.H}×{out.W}")
    m = _overlap(out, inp, offset if kind is OpKind.CONCAT else 0)
    yy, xx = np.divmod(np.arange(out.H * out.W), out.W)
    return _connect(out, inp, m, yy, xx, yy, xx)
