"""NeuronGraph: large undirected graphs with vertex sizes and edge weights, as CSR numpy arrays.

The graph of the ``core_assignment`` decision (seed 004, ``../shared/SEEDS.md`` section
004): vertices are neurons (or groups of neurons), a vertex's *size* is its neuron count,
an edge's *weight* is the number of synapses between its two ends (the traffic it
carries per inference, in units of ``Instance.weight_bytes``).

Storage (:class:`NeuronGraph`): symmetric CSR — every undirected edge ``{u, v}`` is
stored twice (``v`` in the row of ``u`` and ``u`` in the row of ``v``) with the same
weight; no self-loops, no duplicate entries, weights > 0. ``indices`` are ``int32``
(``int64`` beyond 2³¹ vertices), ``indptr``, ``sizes`` and ``weights`` ``int64``. A graph
with 100 M edges takes 200 M entries: 0.8 GB of indices and 1.6 GB of weights.

Direction convention: an edge ``{u, v}`` with ``u < v`` carries its weight from ``u`` to
``v``. Graphs built from a workload number the neurons layer by layer in topological
order, so this is the direction of the spikes/activations; only the per-link loads
under XY routing depend on it (cut weight and hop-weighted traffic do not).

Builders:

* :meth:`NeuronGraph.from_edges` — from ``(u, v, w)`` arrays (symmetrized, duplicates
  summed, self-loops dropped);
* :func:`from_workload` — expand a :class:`~chipsched.workload.Workload` into neurons and
  receptive-field connections (conv, depthwise, fc, pool, eltwise, concat), with a
  channel-grouping granularity ``channels_per_vertex``;
* :func:`layered_random` and :func:`stencil` — synthetic generators that reach 1 M+
  vertices and 100 M+ edges (built directly as CSR by numba kernels, O(nnz) memory).

Operations used by the decision: :meth:`NeuronGraph.contract` (quotient by a vertex
labelling: coarsening, groups), :func:`directed_flows` (traffic between labels in the
``u < v`` direction, for the evaluator), :meth:`NeuronGraph.validate` (symmetry check for
graphs read from files).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numba as nb
import numpy as np

from chipsched.errors import InputError
from chipsched.workload import OpKind, Workload


def _index_dtype(n: int) -> type:
    return np.int32 if n < 2**31 - 1 else np.int64


# ---------------------------------------------------------------------------------------
# numba kernels


@nb.njit(cache=True)
def _csr_from_edges(n, u, v, w):  # pragma: no cover - numba
    """Symmetric CSR from an edge list: self-loops dropped, duplicates summed,
    zero-weight results dropped. Rows keep the order of first occurrence."""
    deg = np.zeros(n + 1, np.int64)
    for e in range(u.shape[0]):
        if u[e] != v[e]:
            deg[u[e] + 1] += 1
            deg[v[e] + 1] += 1
    for i in range(n):
        deg[i + 1] += deg[i]
    tmp_i = np.empty(deg[n], np.int64)
    tmp_w = np.empty(deg[n], np.int64)
    fill = deg[:n].copy()
    for e in range(u.shape[0]):
        a, b = u[e], v[e]
        if a != b:
            tmp_i[fill[a]] = b
            tmp_w[fill[a]] = w[e]
            fill[a] += 1
            tmp_i[fill[b]] = a
            tmp_w[fill[b]] = w[e]
            fill[b] += 1
    pos = np.full(n, -1, np.int64)
    indptr = np.zeros(n + 1, np.int64)
    out_i = np.empty(deg[n], np.int64)
    out_w = np.empty(deg[n], np.int64)
    k = 0
    for a in range(n):
        start = k
        for j in range(deg[a], deg[a + 1]):
            b = tmp_i[j]
            if pos[b] >= start:
                out_w[pos[b]] += tmp_w[j]
            else:
                pos[b] = k
                out_i[k] = b
                out_w[k] = tmp_w[j]
                k += 1
        # drop entries whose summed weight is 0
        kk = start
        for j in range(start, k):
            if out_w[j] != 0:
                out_i[kk] = out_i[j]
                out_w[kk] = out_w[j]
                kk += 1
        k = kk
        indptr[a + 1] = k
    return indptr, out_i[:k], out_w[:k]


@nb.njit(cache=True)
def _check_symmetric(indptr, indices, weights):  # pragma: no cover - numba
    """Return (-1, -1, 0) if the CSR is symmetric without self-loops or duplicates;
    else ``(u, v, code)`` of the first offending entry (1 self-loop, 2 out of range,
    3 duplicate, 4 missing reverse, 5 reverse has another weight, 6 weight <= 0).
    O(nnz): rows are compared with the rows of the transpose (counting sort)."""
    n = indptr.shape[0] - 1
    seen = np.full(n, -1, np.int64)
    for a in range(n):
        for j in range(indptr[a], indptr[a + 1]):
            b = indices[j]
            if b < 0 or b >= n:
                return a, b, 2
            if b == a:
                return a, b, 1
            if seen[b] == a:
                return a, b, 3
            seen[b] = a
            if weights[j] <= 0:
                return a, b, 6
    cnt = np.zeros(n + 1, np.int64)
    for j in range(indices.shape[0]):
        cnt[indices[j] + 1] += 1
    for a in range(n):
        cnt[a + 1] += cnt[a]
    fill = cnt[:n].copy()
    t_src = np.empty(indices.shape[0], np.int64)
    t_w = np.empty(indices.shape[0], np.int64)
    for a in range(n):
        for j in range(indptr[a], indptr[a + 1]):
            b = indices[j]
            t_src[fill[b]] = a
            t_w[fill[b]] = weights[j]
            fill[b] += 1
    wmap = np.zeros(n, np.int64)
    hit = np.full(n, -1, np.int64)
    for a in range(n):
        # row a as a map, then every transposed entry (b -> a) must be in it
        for j in range(indptr[a], indptr[a + 1]):
            wmap[indices[j]] = weights[j]
            seen[indices[j]] = n + a
        for j in range(cnt[a], cnt[a + 1]):
            b = t_src[j]
            if seen[b] != n + a:
                return b, a, 4
            if wmap[b] != t_w[j]:
                return a, b, 5
            hit[b] = a
        for j in range(indptr[a], indptr[a + 1]):
            if hit[indices[j]] != a:
                return a, indices[j], 4
    return -1, -1, 0


@nb.njit(cache=True)
def _members_by_label(label, n_labels):  # pragma: no cover - numba
    """Counting sort of the vertices by label: the members of label c are
    ``members[mptr[c]:mptr[c + 1]]``, in vertex order."""
    n = label.shape[0]
    mptr = np.zeros(n_labels + 1, np.int64)
    for v in range(n):
        mptr[label[v] + 1] += 1
    for c in range(n_labels):
        mptr[c + 1] += mptr[c]
    members = np.empty(n, np.int64)
    fill = mptr[:n_labels].copy()
    for v in range(n):
        members[fill[label[v]]] = v
        fill[label[v]] += 1
    return mptr, members


@nb.njit(cache=True)
def _contract(indptr, indices, weights, sizes, label, n_labels):  # pragma: no cover - numba
    """Quotient graph by ``label``: vertex sizes summed, parallel edges merged (weights
    summed), edges inside a label dropped. Rows are built label by label from the
    members' rows in vertex order (counting sort), two passes (count, fill)."""
    mptr, members = _members_by_label(label, n_labels)
    csizes = np.zeros(n_labels, np.int64)
    for v in range(label.shape[0]):
        csizes[label[v]] += sizes[v]
    marker = np.full(n_labels, -1, np.int64)
    cdeg = np.zeros(n_labels + 1, np.int64)
    for c in range(n_labels):
        k = 0
        for mi in range(mptr[c], mptr[c + 1]):
            v = members[mi]
            for j in range(indptr[v], indptr[v + 1]):
                d = label[indices[j]]
                if d != c and marker[d] != c:
                    marker[d] = c
                    k += 1
        cdeg[c + 1] = cdeg[c] + k
    nnz = cdeg[n_labels]
    out_i = np.empty(nnz, indices.dtype)
    out_w = np.zeros(nnz, np.int64)
    pos = np.full(n_labels, -1, np.int64)
    for c in range(n_labels):
        k = cdeg[c]
        for mi in range(mptr[c], mptr[c + 1]):
            v = members[mi]
            for j in range(indptr[v], indptr[v + 1]):
                d = label[indices[j]]
                if d == c:
                    continue
                if pos[d] >= cdeg[c]:
                    out_w[pos[d]] += weights[j]
                else:
                    pos[d] = k
                    out_i[k] = d
                    out_w[k] = weights[j]
                    k += 1
    return cdeg, out_i, out_w, csizes


@nb.njit(cache=True)
def _directed_flows(indptr, indices, weights, label, n_labels):  # pragma: no cover - numba
    """Aggregate the weight of edges ``{u, v}``, ``u < v``, with different labels into
    directed flows ``label[u] -> label[v]``. Returns (src, dst, w) sorted by (src, dst)
    of first occurrence per source label."""
    mptr, members = _members_by_label(label, n_labels)
    acc = np.zeros(n_labels, np.int64)
    touched = np.empty(n_labels, np.int64)
    cap = 1024
    src = np.empty(cap, np.int64)
    dst = np.empty(cap, np.int64)
    ww = np.empty(cap, np.int64)
    k = 0
    for c in range(n_labels):
        t = 0
        for mi in range(mptr[c], mptr[c + 1]):
            u = members[mi]
            for j in range(indptr[u], indptr[u + 1]):
                v = indices[j]
                if v <= u:
                    continue
                d = label[v]
                if d == c:
                    continue
                if acc[d] == 0:
                    touched[t] = d
                    t += 1
                acc[d] += weights[j]
        if k + t > cap:
            while k + t > cap:
                cap *= 2
            src2 = np.empty(cap, np.int64)
            dst2 = np.empty(cap, np.int64)
            ww2 = np.empty(cap, np.int64)
            src2[:k] = src[:k]
            dst2[:k] = dst[:k]
            ww2[:k] = ww[:k]
            src, dst, ww = src2, dst2, ww2
        for i in range(t):
            d = touched[i]
            src[k] = c
            dst[k] = d
            ww[k] = acc[d]
            acc[d] = 0
            k += 1
    return src[:k], dst[:k], ww[:k]


@nb.njit(cache=True)
def _cut_weight(indptr, indices, weights, label):  # pragma: no cover - numba
    n = indptr.shape[0] - 1
    cut = 0
    for u in range(n):
        lu = label[u]
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            if v > u and label[v] != lu:
                cut += weights[j]
    return cut


@nb.njit(cache=True)
def _induced(indptr, indices, weights, verts, n):  # pragma: no cover - numba
    loc = np.full(n, -1, np.int64)
    for i in range(verts.shape[0]):
        loc[verts[i]] = i
    m = verts.shape[0]
    ptr = np.zeros(m + 1, np.int64)
    for i in range(m):
        v = verts[i]
        k = 0
        for j in range(indptr[v], indptr[v + 1]):
            if loc[indices[j]] >= 0:
                k += 1
        ptr[i + 1] = ptr[i] + k
    oi = np.empty(ptr[m], indices.dtype)
    ow = np.empty(ptr[m], np.int64)
    for i in range(m):
        v = verts[i]
        k = ptr[i]
        for j in range(indptr[v], indptr[v + 1]):
            lj = loc[indices[j]]
            if lj >= 0:
                oi[k] = lj
                ow[k] = weights[j]
                k += 1
    return ptr, oi, ow


# ---------------------------------------------------------------------------------------
# the graph type


@dataclass(frozen=True, eq=False)
class NeuronGraph:
    """An undirected graph with integer vertex sizes and edge weights, in symmetric CSR.

    ``sizes[v]`` neurons in vertex ``v``; the neighbours of ``v`` are
    ``indices[indptr[v]:indptr[v+1]]`` with weights ``weights[...]`` (each undirected
    edge stored in both rows). Build with :meth:`from_edges`, :func:`from_workload`,
    the generators or the readers of ``chipsched.instances.core_assignment``.
    """

    sizes: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    weights: np.ndarray
    name: str = "graph"
    meta: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        sizes = np.ascontiguousarray(self.sizes, dtype=np.int64)
        indptr = np.ascontiguousarray(self.indptr, dtype=np.int64)
        n = sizes.shape[0]
        indices = np.ascontiguousarray(self.indices, dtype=_index_dtype(n))
        weights = np.ascontiguousarray(self.weights, dtype=np.int64)
        for k, v in (("sizes", sizes), ("indptr", indptr), ("indices", indices),
                     ("weights", weights)):
            object.__setattr__(self, k, v)
            if v.ndim != 1:
                raise InputError(f"graph {self.name!r}.{k}", "must be one-dimensional")
        if indptr.shape[0] != n + 1 or indptr[0] != 0 or indptr[-1] != indices.shape[0]:
            raise InputError(f"graph {self.name!r}.indptr",
                             f"must have n+1 = {n + 1} entries from 0 to len(indices)")
        if indices.shape[0] != weights.shape[0]:
            raise InputError(f"graph {self.name!r}.weights", "must be as long as indices")
        if n and sizes.min() < 0:
            v = int(np.argmin(sizes))
            raise InputError(f"graph {self.name!r}.sizes[{v}]",
                             f"negative size {int(sizes[v])}", "sizes are neuron counts >= 0")
        if weights.shape[0] and weights.min() <= 0:
            j = int(np.argmin(weights))
            u = int(np.searchsorted(indptr, j, side="right") - 1)
            raise InputError(f"graph {self.name!r}.edges",
                             f"non-positive weight {int(weights[j])} on edge ({u}, "
                             f"{int(indices[j])})",
                             "weights are synapse counts or bytes > 0 (drop zero edges)")

    # -- construction -------------------------------------------------------------------
    @classmethod
    def from_edges(cls, sizes: Any, u: Any, v: Any, w: Any = None, name: str = "graph",
                   meta: Mapping[str, Any] | None = None) -> NeuronGraph:
        """Build from an edge list (either direction, duplicates summed, self-loops dropped).

        ``w`` defaults to 1 per edge. Negative weights or sizes raise :class:`InputError`;
        edges whose weights sum to 0 are dropped.
        """
        sizes = np.asarray(sizes)
        if sizes.ndim != 1:
            raise InputError(f"graph {name!r}.sizes", "must be a list of integers")
        n = sizes.shape[0]
        u = np.asarray(u, dtype=np.int64).ravel()
        v = np.asarray(v, dtype=np.int64).ravel()
        w = np.ones(u.shape[0], np.int64) if w is None else np.asarray(w)
        if u.shape != v.shape or w.shape != u.shape:
            raise InputError(f"graph {name!r}.edges", "u, v and w differ in length")
        if w.dtype.kind == "f":
            if not np.all(np.isfinite(w)) or np.any(w != np.round(w)):
                raise InputError(f"graph {name!r}.edges", "weights must be integers",
                                 "scale them (e.g. bytes instead of KB)")
        if sizes.dtype.kind == "f" and np.any(sizes != np.round(sizes)):
            raise InputError(f"graph {name!r}.sizes", "sizes must be integers")
        w = w.astype(np.int64)
        if w.shape[0] and w.min() < 0:
            e = int(np.argmin(w))
            raise InputError(f"graph {name!r}.edges[{e}]",
                             f"negative weight {int(w[e])} on edge ({int(u[e])}, {int(v[e])})",
                             "weights are synapse counts or bytes >= 0")
        if u.shape[0] and (min(u.min(), v.min()) < 0 or max(u.max(), v.max()) >= n):
            bad = int(np.flatnonzero((u < 0) | (u >= n) | (v < 0) | (v >= n))[0])
            raise InputError(f"graph {name!r}.edges[{bad}]",
                             f"vertex out of range in ({int(u[bad])}, {int(v[bad])})",
                             f"vertex ids are 0..{n - 1}")
        keep = w > 0
        if not keep.all():
            u, v, w = u[keep], v[keep], w[keep]
        indptr, indices, weights = _csr_from_edges(n, u, v, w)
        return cls(sizes.astype(np.int64), indptr, indices, weights, name, dict(meta or {}))

    # -- size ---------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of vertices."""
        return int(self.sizes.shape[0])

    @property
    def nnz(self) -> int:
        """Stored entries (twice the number of edges)."""
        return int(self.indices.shape[0])

    @property
    def m(self) -> int:
        """Number of undirected edges."""
        return self.nnz // 2

    @property
    def total_size(self) -> int:
        return int(self.sizes.sum())

    @property
    def total_weight(self) -> int:
        """Sum of the weights of the undirected edges."""
        return int(self.weights.sum()) // 2

    @property
    def nbytes(self) -> int:
        return sum(int(a.nbytes) for a in (self.sizes, self.indptr, self.indices,
                                           self.weights))

    def degree(self) -> np.ndarray:
        return np.diff(self.indptr)

    def weighted_degree(self) -> np.ndarray:
        """Sum of the weights of the edges at each vertex."""
        return np.add.reduceat(self.weights, self.indptr[:-1]) * (np.diff(self.indptr) > 0) \
            if self.nnz else np.zeros(self.n, np.int64)

    def neighbors(self, v: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.indptr[v], self.indptr[v + 1]
        return self.indices[a:b], self.weights[a:b]

    def edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The undirected edges as ``(u, v, w)`` arrays with ``u < v``."""
        rows = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.indptr))
        mask = rows < self.indices
        return rows[mask], self.indices[mask].astype(np.int64), self.weights[mask]

    def __repr__(self) -> str:
        return (f"NeuronGraph({self.name!r}, n={self.n:,}, m={self.m:,}, "
                f"total_size={self.total_size:,})")

    # -- checks and operations ----------------------------------------------------------
    def validate(self, source: str | None = None) -> NeuronGraph:
        """Check symmetry, no self-loops, no duplicates, positive weights (O(nnz));
        raise a one-line :class:`InputError` naming the first offending edge."""
        a, b, code = _check_symmetric(self.indptr, self.indices, self.weights)
        if code:
            what = {1: "self-loop", 2: "neighbour id out of range", 3: "duplicate edge",
                    4: "edge listed in one direction only", 5: "the two directions of the "
                    "edge have different weights", 6: "non-positive weight"}[int(code)]
            raise InputError(source or f"graph {self.name!r}",
                             f"{what} at edge ({int(a)}, {int(b)})",
                             "every undirected edge must appear in both rows with one weight")
        return self

    def contract(self, label: Any, n_labels: int | None = None, name: str | None = None
                 ) -> NeuronGraph:
        """The quotient graph by ``label`` (vertex → 0..L-1): sizes summed, parallel edges
        merged, edges inside a label dropped. Used by coarsening and for groups."""
        label = np.ascontiguousarray(label, dtype=np.int64)
        if label.shape != (self.n,):
            raise InputError("label", f"needs one entry per vertex ({self.n})")
        L = int(label.max()) + 1 if n_labels is None else int(n_labels)
        if self.n and (label.min() < 0 or label.max() >= L):
            raise InputError("label", f"entries must be in 0..{L - 1}")
        ptr, idx, w, sz = _contract(self.indptr, self.indices, self.weights, self.sizes,
                                    label, L)
        return NeuronGraph(sz, ptr, idx, w, name or f"{self.name}/quotient")

    def induced(self, vertices: Any, name: str | None = None) -> NeuronGraph:
        """The subgraph induced by ``vertices`` (renumbered in the given order)."""
        verts = np.ascontiguousarray(vertices, dtype=np.int64)
        ptr, idx, w = _induced(self.indptr, self.indices, self.weights, verts, self.n)
        return NeuronGraph(self.sizes[verts], ptr, idx, w, name or f"{self.name}/induced")

    def cut_weight(self, label: Any) -> int:
        """Weight of the edges whose ends have different labels."""
        return int(_cut_weight(self.indptr, self.indices, self.weights,
                               np.ascontiguousarray(label, dtype=np.int64)))

    def to_networkx(self) -> Any:
        """A ``networkx.Graph`` with ``size`` on nodes and ``weight`` on edges (small graphs)."""
        import networkx as nx

        g = nx.Graph(name=self.name)
        for v in range(self.n):
            g.add_node(v, size=int(self.sizes[v]))
        u, v, w = self.edges()
        g.add_weighted_edges_from(zip(u.tolist(), v.tolist(), w.tolist(), strict=True))
        return g

    def dense_weights(self) -> np.ndarray:
        """``n × n`` symmetric weight matrix (small graphs only)."""
        if self.n > 20000:
            raise InputError(f"graph {self.name!r}", f"too large for a dense matrix ({self.n})")
        a = np.zeros((self.n, self.n), np.int64)
        rows = np.repeat(np.arange(self.n), np.diff(self.indptr))
        a[rows, self.indices] = self.weights
        return a


def directed_flows(graph: NeuronGraph, label: np.ndarray, n_labels: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Traffic between labels: ``(src, dst, w)`` with ``src != dst``, aggregated over the
    edges ``{u, v}``, ``u < v``, that go from ``label[u]`` to ``label[v]`` (the direction
    convention of the module docstring). O(nnz + n + labels)."""
    return _directed_flows(graph.indptr, graph.indices, graph.weights,
                           np.ascontiguousarray(label, dtype=np.int64), int(n_labels))


# ---------------------------------------------------------------------------------------
# expansion of a workload into neurons


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


def from_workload(workload: Workload, channels_per_vertex: int = 1, include_input: bool = True,
                  name: str | None = None) -> NeuronGraph:
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


# ---------------------------------------------------------------------------------------
# synthetic generators


@nb.njit(cache=True)
def _splitmix(x):  # pragma: no cover - numba
    x = (x + np.uint64(0x9E3779B97F4A7C15)) & np.uint64(0xFFFFFFFFFFFFFFFF)
    z = x
    z = ((z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & \
        np.uint64(0xFFFFFFFFFFFFFFFF)
    z = ((z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & \
        np.uint64(0xFFFFFFFFFFFFFFFF)
    return z ^ (z >> np.uint64(31))


@nb.njit(cache=True)
def _layered_sources(layers, width, fanin, window, seed, max_weight):  # pragma: no cover
    """For every neuron of layers 1..L-1, ``fanin`` distinct sources in the previous
    layer drawn from a window of ``window`` neurons centred on its own position
    (Floyd's sampling), with weights 1..max_weight. Returns (dst-major) src, w."""
    n_dst = (layers - 1) * width
    src = np.empty(n_dst * fanin, np.int64)
    wts = np.empty(n_dst * fanin, np.int64)
    chosen = np.empty(fanin, np.int64)
    for d in range(n_dst):
        layer = d // width + 1
        pos = d % width
        lo = pos - window // 2
        if lo < 0:
            lo = 0
        if lo + window > width:
            lo = width - window
        state = np.uint64(seed) * np.uint64(0x100000001B3) ^ np.uint64(d)
        # Floyd: choose fanin distinct offsets in [0, window)
        k = 0
        for j in range(window - fanin, window):
            state = _splitmix(state)
            t = np.int64(state % np.uint64(j + 1))
            dup = False
            for q in range(k):
                if chosen[q] == t:
                    dup = True
                    break
            chosen[k] = j if dup else t
            k += 1
        base = (layer - 1) * width + lo
        for q in range(fanin):
            src[d * fanin + q] = base + chosen[q]
            if max_weight > 1:
                state = _splitmix(state)
                wts[d * fanin + q] = 1 + np.int64(state % np.uint64(max_weight))
            else:
                wts[d * fanin + q] = 1
    return src, wts


@nb.njit(cache=True)
def _bipartite_csr(n, width, fanin, src, wts, proto):  # pragma: no cover - numba
    """Symmetric CSR of the layered graph: row v = its sources (previous layer), then
    its targets (next layer). No duplicates by construction (distinct sources)."""
    deg = np.zeros(n + 1, np.int64)
    n_dst = src.shape[0] // fanin
    for d in range(n_dst):
        v = width + d
        deg[v + 1] += fanin
        for q in range(fanin):
            deg[src[d * fanin + q] + 1] += 1
    for i in range(n):
        deg[i + 1] += deg[i]
    indices = np.empty(deg[n], proto.dtype)
    weights = np.empty(deg[n], np.int64)
    fill = deg[:n].copy()
    for d in range(n_dst):
        v = width + d
        for q in range(fanin):
            s = src[d * fanin + q]
            indices[fill[v]] = s
            weights[fill[v]] = wts[d * fanin + q]
            fill[v] += 1
    for d in range(n_dst):
        v = width + d
        for q in range(fanin):
            s = src[d * fanin + q]
            indices[fill[s]] = v
            weights[fill[s]] = wts[d * fanin + q]
            fill[s] += 1
    return deg, indices, weights


def layered_random(layers: int = 10, width: int = 1000, fanin: int = 16,
                   window: int | None = None, max_weight: int = 1, seed: int = 0,
                   name: str | None = None) -> NeuronGraph:
    """A feed-forward neuron graph: ``layers`` layers of ``width`` neurons (size 1); each
    neuron of layer l ≥ 1 has ``fanin`` distinct random sources in layer l−1, drawn from a
    window of ``window`` neurons (default ``4·fanin``) around its own position — a 1-D
    receptive field. Weights uniform in 1..``max_weight``. Vertices ``layers·width``,
    edges ``(layers−1)·width·fanin``: ``layered_random(20, 100_000, 50)`` has 2 M vertices
    and 95 M edges. Built directly as CSR (memory O(edges)); same seed ⇒ same graph."""
    window = 4 * fanin if window is None else int(window)
    for k, v in (("layers", layers), ("width", width), ("fanin", fanin),
                 ("max_weight", max_weight)):
        if int(v) < 1:
            raise InputError(f"layered_random.{k}", f"must be >= 1, got {v}")
    window = min(window, width)
    if fanin > window:
        raise InputError("layered_random.fanin", f"{fanin} exceeds the window {window}",
                         "lower fanin or widen the window/layers")
    n = layers * width
    src, wts = _layered_sources(int(layers), int(width), int(fanin), int(window),
                                int(seed) & (2**63 - 1), int(max_weight))
    indptr, indices, weights = _bipartite_csr(n, int(width), int(fanin), src, wts,
                                              np.empty(0, _index_dtype(n)))
    del src, wts
    return NeuronGraph(np.ones(n, np.int64), indptr, indices, weights,
                       name or f"layered-{layers}x{width}-f{fanin}",
                       {"generator": "layered_random", "layers": layers, "width": width,
                        "fanin": fanin, "window": window, "max_weight": max_weight,
                        "seed": seed})


@nb.njit(cache=True)
def _stencil_csr(nx, ny, nz, radius, proto):  # pragma: no cover - numba
    n = nx * ny * nz
    rz = radius if nz > 1 else 0
    deg = np.zeros(n + 1, np.int64)
    for z in range(nz):
        for y in range(ny):
            for x in range(nx):
                v = (z * ny + y) * nx + x
                k = 0
                for dz in range(-rz, rz + 1):
                    for dy in range(-radius, radius + 1):
                        for dx in range(-radius, radius + 1):
                            if dx == 0 and dy == 0 and dz == 0:
                                continue
                            if 0 <= x + dx < nx and 0 <= y + dy < ny and 0 <= z + dz < nz:
                                k += 1
                deg[v + 1] = k
    for i in range(n):
        deg[i + 1] += deg[i]
    indices = np.empty(deg[n], proto.dtype)
    for z in range(nz):
        for y in range(ny):
            for x in range(nx):
                v = (z * ny + y) * nx + x
                k = deg[v]
                for dz in range(-rz, rz + 1):
                    for dy in range(-radius, radius + 1):
                        for dx in range(-radius, radius + 1):
                            if dx == 0 and dy == 0 and dz == 0:
                                continue
                            if 0 <= x + dx < nx and 0 <= y + dy < ny and 0 <= z + dz < nz:
                                indices[k] = ((z + dz) * ny + y + dy) * nx + x + dx
                                k += 1
    return deg, indices


def stencil(nx: int, ny: int, nz: int = 1, radius: int = 1, name: str | None = None
            ) -> NeuronGraph:
    """A grid graph: vertex (x, y, z) joined to every vertex within Chebyshev distance
    ``radius`` (the Moore neighbourhood: 8 neighbours in 2-D and 26 in 3-D for radius 1),
    unit sizes and weights. ``stencil(120, 120, 120, radius=2)`` has 1.73 M vertices and
    about 105 M edges."""
    for k, v in (("nx", nx), ("ny", ny), ("nz", nz), ("radius", radius)):
        if int(v) < 1:
            raise InputError(f"stencil.{k}", f"must be >= 1, got {v}")
    n = int(nx) * int(ny) * int(nz)
    indptr, indices = _stencil_csr(int(nx), int(ny), int(nz), int(radius),
                                   np.empty(0, _index_dtype(n)))
    return NeuronGraph(np.ones(n, np.int64), indptr, indices,
                       np.ones(indices.shape[0], np.int64),
                       name or f"stencil-{nx}x{ny}x{nz}-r{radius}",
                       {"generator": "stencil", "nx": nx, "ny": ny, "nz": nz,
                        "radius": radius})
