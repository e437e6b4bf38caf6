"""The :class:`NeuronGraph` type: an undirected graph with vertex sizes and edge weights,
stored as symmetric CSR numpy arrays, and the numba kernels of its operations.

Storage: symmetric CSR — every undirected edge ``{u, v}`` is stored twice (``v`` in the
row of ``u`` and ``u`` in the row of ``v``) with the same weight; no self-loops, no
duplicate entries, weights > 0. ``indices`` are ``int32`` (``int64`` beyond 2³¹
vertices), ``indptr``, ``sizes`` and ``weights`` ``int64``. A graph with 100 M edges
takes 200 M entries: 0.8 GB of indices and 1.6 GB of weights.

Direction convention: an edge ``{u, v}`` with ``u < v`` carries its weight from ``u`` to
``v``. Graphs built from a workload number the neurons layer by layer in topological
order, so this is the direction of the spikes/activations; only the per-link loads
under XY routing depend on it (cut weight and hop-weighted traffic do not).

:func:`merge_rows` is the row merge behind :meth:`NeuronGraph.contract`; the on-disk
coarsening (``chipsched.heuristics.core_assignment.streaming``) calls it on batches of
rows read from files, so that both give the same coarse graph edge for edge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numba as nb
import numpy as np

from chipsched.errors import InputError

#: Graphs with up to this many CSR entries are contracted in one walk over the edges into
#: scratch buffers of their size (≤ 768 MiB); larger ones in two walks with the output
#: allocated exactly, so that contraction never needs more than the coarse graph.
ONE_PASS_MAX_ENTRIES = 2**26


def index_dtype(n: int) -> type:
    """The dtype of ``NeuronGraph.indices`` for ``n`` vertices (int32 below 2³¹ − 1:
    half the bytes of the largest array)."""
    return np.int32 if n < 2**31 - 1 else np.int64


# ---------------------------------------------------------------------------------------
# numba kernels


@nb.njit(cache=True, inline="always")
def _add_entry(pos, start, k, d, w, out_i, out_w):  # pragma: no cover - numba
    """Add weight ``w`` towards neighbour ``d`` to the CSR row being built from slot
    ``start`` (``pos[d] >= start``: d already has a slot in it, the weights are summed),
    ``k`` the next free slot; returns the new next free slot."""
    if pos[d] >= start:
        out_w[pos[d]] += w
        return k
    pos[d] = k
    out_i[k] = d
    out_w[k] = w
    return k + 1


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
            k = _add_entry(pos, start, k, tmp_i[j], tmp_w[j], out_i, out_w)
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
def merge_rows(indptr, indices, weights, rows, rptr, label, n_labels, c0,
               proto):  # pragma: no cover - numba
    """Rows of the quotient vertices ``c0, c0 + 1, …, c0 + len(rptr) - 2`` of a CSR graph
    under the vertex labelling ``label`` (values in ``0..n_labels-1``).

    Row ``c0 + i`` merges the rows ``rows[rptr[i]:rptr[i + 1]]`` of
    ``(indptr, indices, weights)``, which must be the members of that label: neighbours
    mapped by ``label``, edges inside the label dropped, parallel edges summed in order
    of first occurrence (members in the given order, each row in stored order). Returns
    ``(optr, out_indices, out_weights)`` with ``optr[0] = 0``; ``out_indices`` has the
    dtype of ``proto``. Two passes (count, then fill) so that the output is allocated
    at its exact size: one CSR entry per coarse edge end, never per fine one."""
    nc = rptr.shape[0] - 1
    marker = np.full(n_labels, -1, np.int64)
    optr = np.zeros(nc + 1, np.int64)
    for i in range(nc):
        c = c0 + i
        k = 0
        for r in range(rptr[i], rptr[i + 1]):
            v = rows[r]
            for j in range(indptr[v], indptr[v + 1]):
                d = label[indices[j]]
                if d != c and marker[d] != c:
                    marker[d] = c
                    k += 1
        optr[i + 1] = optr[i] + k
    out_i = np.empty(optr[nc], proto.dtype)
    out_w = np.zeros(optr[nc], np.int64)
    # pos[d] < optr[i] means d has not been seen yet in row i (set by an earlier row)
    pos = np.full(n_labels, -1, np.int64)
    for i in range(nc):
        c = c0 + i
        k = optr[i]
        for r in range(rptr[i], rptr[i + 1]):
            v = rows[r]
            for j in range(indptr[v], indptr[v + 1]):
                d = label[indices[j]]
                if d != c:
                    k = _add_entry(pos, optr[i], k, d, weights[j], out_i, out_w)
    return optr, out_i, out_w


@nb.njit(cache=True)
def _contract(indptr, indices, weights, sizes, label, n_labels, one_pass
              ):  # pragma: no cover - numba
    """Quotient graph by ``label``: vertex sizes summed, parallel edges merged (weights
    summed), edges inside a label dropped. Rows are built label by label from the
    members' rows in vertex order (counting sort); with ``one_pass`` into buffers of the
    fine graph's size, trimmed at the end (one walk over the edges instead of two, for
    12 bytes per fine edge end of scratch), else in two passes (count, fill) that
    allocate the output at its exact size."""
    mptr, members = _members_by_label(label, n_labels)
    csizes = np.zeros(n_labels, np.int64)
    for v in range(label.shape[0]):
        csizes[label[v]] += sizes[v]
    if not one_pass:
        cdeg, out_i, out_w = merge_rows(indptr, indices, weights, members, mptr, label,
                                        n_labels, 0, indices)
        return cdeg, out_i, out_w, csizes
    optr = np.zeros(n_labels + 1, np.int64)
    buf_i = np.empty(indices.shape[0], indices.dtype)
    buf_w = np.empty(indices.shape[0], np.int64)
    # pos[d] < optr[c] means d has not been seen yet in row c
    pos = np.full(n_labels, -1, np.int64)
    k = 0
    for c in range(n_labels):
        start = k
        for r in range(mptr[c], mptr[c + 1]):
            v = members[r]
            for j in range(indptr[v], indptr[v + 1]):
                d = label[indices[j]]
                if d != c:
                    k = _add_entry(pos, start, k, d, weights[j], buf_i, buf_w)
        optr[c + 1] = k
    return optr, buf_i[:k].copy(), buf_w[:k].copy(), csizes


@nb.njit(cache=True)
def _directed_flows(indptr, indices, weights, label, n_labels, multicast=False,
                    source_weight=None):  # pragma: no cover - numba
    """Aggregate the weight of edges ``{u, v}``, ``u < v``, with different labels into
    directed flows ``label[u] -> label[v]``. Returns (src, dst, w) sorted by (src, dst)
    of first occurrence per source label. ``multicast``: count one packet per vertex
    ``u`` and other label holding any of its targets instead of the edge weights
    (``source_weight[u]`` packets when given: u's spike count)."""
    mptr, members = _members_by_label(label, n_labels)
    acc = np.zeros(n_labels, np.int64)
    last = np.full(n_labels, -1, np.int64)
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
                if multicast:
                    # a silent source sends nothing (and a zero must not enter acc)
                    if last[d] == u or (source_weight is not None and
                                        source_weight[u] == 0):
                        continue
                    last[d] = u
                if acc[d] == 0:
                    touched[t] = d
                    t += 1
                if not multicast:
                    acc[d] += weights[j]
                elif source_weight is None:
                    acc[d] += 1
                else:
                    acc[d] += source_weight[u]
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
    distinct = 0
    for i in range(verts.shape[0]):
        if loc[verts[i]] < 0:
            distinct += 1
        loc[verts[i]] = i
    m = verts.shape[0]
    ptr = np.zeros(m + 1, np.int64)
    # every vertex kept once (a renumbering): rows keep their degrees, no counting pass
    whole = m == n and distinct == n
    for i in range(m):
        v = verts[i]
        k = indptr[v + 1] - indptr[v] if whole else 0
        if not whole:
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
        indices = np.ascontiguousarray(self.indices, dtype=index_dtype(n))
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
        # bincount, not reduceat: reduceat refuses the start index nnz of trailing
        # vertices without edges
        rows = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(self.indptr))
        return np.bincount(rows, weights=self.weights, minlength=self.n).astype(np.int64)

    def neighbors(self, v: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.indptr[v], self.indptr[v + 1]
        return self.indices[a:b], self.weights[a:b]

    def read_rows(self, vertices: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """CSR rows ``(indptr, indices, weights)`` of the given vertices (any order) — the
        interface of the on-disk readers (``SeedZipReader.read_rows``), so that code
        taking rows works on a graph in memory and on one on disk alike."""
        v = np.asarray(vertices, dtype=np.int64)
        lo, hi = self.indptr[v], self.indptr[v + 1]
        ptr = np.zeros(v.size + 1, np.int64)
        np.cumsum(hi - lo, out=ptr[1:])
        sel = np.repeat(lo - ptr[:-1], hi - lo) + np.arange(ptr[-1], dtype=np.int64)
        return ptr, self.indices[sel], self.weights[sel]

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
                                    label, L, self.indices.shape[0] <= ONE_PASS_MAX_ENTRIES)
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


def multicast_flows(graph: NeuronGraph, label: np.ndarray, n_labels: int,
                    spikes: np.ndarray | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Packets between labels on a multicast NoC (SpiNNaker-style routing tables): a
    vertex ``u`` sends one packet per spike to every other label holding any of its
    targets ``v > u`` (the direction convention of the module docstring), however many
    synapses it feeds there; ``spikes[u]`` spikes per vertex (one when not given).
    Returns ``(src, dst, packets)`` with ``src != dst``. O(nnz + n + labels)."""
    sw = None if spikes is None else np.ascontiguousarray(spikes, dtype=np.int64)
    return _directed_flows(graph.indptr, graph.indices, graph.weights,
                           np.ascontiguousarray(label, dtype=np.int64), int(n_labels), True,
                           sw)


def multicast_quotient(graph: NeuronGraph, label: np.ndarray, n_labels: int,
                       spikes: np.ndarray | None = None) -> NeuronGraph:
    """The quotient graph by ``label`` whose edge {g, h} weighs the multicast packets
    between g and h in both directions (:func:`multicast_flows`): Σ weight·hops of a
    placement of the labels is then its multicast traffic, so any placement method
    minimizes it exactly for a fixed labelling. Vertex sizes are summed."""
    lab = np.ascontiguousarray(label, dtype=np.int64)
    src, dst, pk = multicast_flows(graph, lab, n_labels, spikes)
    sizes = np.bincount(lab, weights=graph.sizes, minlength=n_labels).astype(np.int64)
    return NeuronGraph.from_edges(sizes, src, dst, pk, name=f"{graph.name}/multicast")


def spike_weighted(graph: NeuronGraph, spikes: Any) -> NeuronGraph:
    """Edge weights from spike activity: the edge {u, v}, u < v (direction u → v, see the
    module docstring), carries ``synapses × spikes[u]`` — the spikes u fires over the
    profiling window times the synapses they cross. Edges of silent sources drop out.
    ``spikes``: one non-negative integer per vertex (a rate times the window, rounded by
    the caller); a bad entry raises a one-line :class:`InputError`."""
    s = np.asarray(spikes)
    if s.shape != (graph.n,):
        raise InputError("spikes", f"has {s.size} entries, the graph has {graph.n} vertices",
                         "give one spike count per vertex")
    if s.dtype.kind == "f":
        if not np.all(np.isfinite(s)) or np.any(s != np.round(s)):
            bad = int(np.flatnonzero(~np.isfinite(s) | (s != np.round(s)))[0])
            raise InputError(f"spikes[{bad}]", f"{s[bad]!r} is not a whole spike count",
                             "give counts over the profiling window (rate × window, "
                             "rounded)")
    elif s.dtype.kind not in "iu":
        raise InputError("spikes", f"must be integers, got {s.dtype}",
                         "give one spike count per vertex")
    s = s.astype(np.int64)
    if s.size and s.min() < 0:
        bad = int(np.argmin(s))
        raise InputError(f"spikes[{bad}]", f"negative spike count {int(s[bad])}")
    rows = np.repeat(np.arange(graph.n, dtype=np.int64), np.diff(graph.indptr))
    w = graph.weights * s[np.minimum(rows, graph.indices.astype(np.int64))]
    keep = w > 0
    ptr = np.zeros(graph.n + 1, np.int64)
    np.cumsum(np.bincount(rows[keep], minlength=graph.n), out=ptr[1:])
    return NeuronGraph(graph.sizes, ptr, graph.indices[keep], w[keep], name=graph.name,
                       meta=graph.meta)
