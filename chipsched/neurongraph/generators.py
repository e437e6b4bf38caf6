"""Synthetic neuron graphs large enough for the scale tests: :func:`layered_random` (a
feed-forward network with 1-D receptive fields) and :func:`stencil` (a grid with its
Moore neighbourhood). Both reach 1 M+ vertices and 100 M+ edges: they are built directly
as symmetric CSR by numba kernels in O(nnz) memory, without an edge list.
"""

from __future__ import annotations

from collections.abc import Iterator

import numba as nb
import numpy as np

from chipsched.errors import InputError

from .graph import NeuronGraph, index_dtype


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
def _sample_sources(d, width, fanin, window, seed, max_weight, chosen, src, wts, k0
                    ):  # pragma: no cover - numba
    """The ``fanin`` distinct sources of target ``d`` (0-based over layers 1..L−1) in the
    previous layer, from a window of ``window`` neurons centred on its own position
    (Floyd's sampling), weights 1..max_weight, written to ``src/wts[k0:k0+fanin]``. A
    counter-based stream per target: any target's sources can be drawn on their own."""
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
        src[k0 + q] = base + chosen[q]
        if max_weight > 1:
            state = _splitmix(state)
            wts[k0 + q] = 1 + np.int64(state % np.uint64(max_weight))
        else:
            wts[k0 + q] = 1


@nb.njit(cache=True)
def _layered_sources(layers, width, fanin, window, seed, max_weight):  # pragma: no cover
    """For every neuron of layers 1..L-1, its sources (:func:`_sample_sources`). Returns
    (dst-major) src, w."""
    n_dst = (layers - 1) * width
    src = np.empty(n_dst * fanin, np.int64)
    wts = np.empty(n_dst * fanin, np.int64)
    chosen = np.empty(fanin, np.int64)
    for d in range(n_dst):
        _sample_sources(d, width, fanin, window, seed, max_weight, chosen, src, wts,
                        d * fanin)
    return src, wts


@nb.njit(cache=True)
def _layered_rows(layers, width, fanin, window, seed, max_weight, v0, v1
                  ):  # pragma: no cover - numba
    """CSR rows of vertices v0..v1−1 (one layer) of :func:`layered_random`'s graph,
    entries in its order (sources, then targets by increasing id), without building the
    rest: the targets of a neuron are the next layer's neurons within a window of its
    position whose drawn sources include it."""
    layer = v0 // width
    p0 = v0 - layer * width
    p1 = v1 - layer * width
    nv = v1 - v0
    chosen = np.empty(fanin, np.int64)
    deg = np.zeros(nv + 1, np.int64)
    in_src = np.empty(nv * fanin if layer >= 1 else 0, np.int64)
    in_w = np.empty(in_src.shape[0], np.int64)
    if layer >= 1:
        for i in range(nv):
            _sample_sources(v0 + i - width, width, fanin, window, seed, max_weight,
                            chosen, in_src, in_w, i * fanin)
            deg[i + 1] += fanin
    lo_t = 0
    hi_t = 0
    if layer + 1 < layers:
        lo_t = max(0, p0 - window)
        hi_t = min(width, p1 + window)
    nt = hi_t - lo_t
    t_src = np.empty(nt * fanin, np.int64)
    t_w = np.empty(nt * fanin, np.int64)
    for k in range(nt):
        d = layer * width + lo_t + k  # target id among layers 1..L-1
        _sample_sources(d, width, fanin, window, seed, max_weight, chosen, t_src, t_w,
                        k * fanin)
        for q in range(fanin):
            s = t_src[k * fanin + q]
            if v0 <= s < v1:
                deg[s - v0 + 1] += 1
    for i in range(nv):
        deg[i + 1] += deg[i]
    idx = np.empty(deg[nv], np.int64)
    w = np.empty(deg[nv], np.int64)
    fill = deg[:nv].copy()
    if layer >= 1:
        for i in range(nv):
            for q in range(fanin):
                idx[fill[i]] = in_src[i * fanin + q]
                w[fill[i]] = in_w[i * fanin + q]
                fill[i] += 1
    for k in range(nt):
        v = width + layer * width + lo_t + k
        for q in range(fanin):
            s = t_src[k * fanin + q]
            if v0 <= s < v1:
                idx[fill[s - v0]] = v
                w[fill[s - v0]] = t_w[k * fanin + q]
                fill[s - v0] += 1
    return deg, idx, w


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


def _layered_window(layers: int, width: int, fanin: int, window: int | None,
                    max_weight: int) -> int:
    """Check :func:`layered_random`'s arguments; returns the window (default 4·fanin)."""
    window = 4 * fanin if window is None else int(window)
    for k, v in (("layers", layers), ("width", width), ("fanin", fanin),
                 ("max_weight", max_weight)):
        if int(v) < 1:
            raise InputError(f"layered_random.{k}", f"must be >= 1, got {v}")
    window = min(window, width)
    if fanin > window:
        raise InputError("layered_random.fanin", f"{fanin} exceeds the window {window}",
                         "lower fanin or widen the window/layers")
    return window


def layered_random_batches(layers: int = 10, width: int = 1000, fanin: int = 16,
                           window: int | None = None, max_weight: int = 1, seed: int = 0,
                           batch: int = 65536) -> Iterator[tuple[int, np.ndarray, np.ndarray,
                                                                 np.ndarray]]:
    """:func:`layered_random`'s graph as consecutive CSR row batches ``(v0, indptr,
    indices, weights)`` (at most ``batch`` vertices, never across a layer boundary), the
    same rows in the same order, generated without the rest of the graph: memory
    O(batch·fanin) — for writing graphs larger than memory to disk
    (:func:`chipsched.instances.core_assignment.write_layered_zip`)."""
    window = _layered_window(layers, width, fanin, window, max_weight)
    if int(batch) < 1:
        raise InputError("layered_random_batches.batch", f"must be >= 1, got {batch}")
    sd = int(seed) & (2**63 - 1)
    for layer in range(int(layers)):
        for p0 in range(0, int(width), int(batch)):
            v0 = layer * width + p0
            v1 = v0 + min(int(batch), int(width) - p0)
            ptr, idx, w = _layered_rows(int(layers), int(width), int(fanin), int(window), sd,
                                        int(max_weight), v0, v1)
            yield v0, ptr, idx, w


def layered_random(layers: int = 10, width: int = 1000, fanin: int = 16,
                   window: int | None = None, max_weight: int = 1, seed: int = 0,
                   name: str | None = None) -> NeuronGraph:
    """A feed-forward neuron graph: ``layers`` layers of ``width`` neurons (size 1); each
    neuron of layer l ≥ 1 has ``fanin`` distinct random sources in layer l−1, drawn from a
    window of ``window`` neurons (default ``4·fanin``) around its own position — a 1-D
    receptive field. Weights uniform in 1..``max_weight``. Vertices ``layers·width``,
    edges ``(layers−1)·width·fanin``: ``layered_random(20, 100_000, 50)`` has 2 M vertices
    and 95 M edges. Built directly as CSR (memory O(edges)); same seed ⇒ same graph."""
    window = _layered_window(layers, width, fanin, window, max_weight)
    n = layers * width
    src, wts = _layered_sources(int(layers), int(width), int(fanin), int(window),
                                int(seed) & (2**63 - 1), int(max_weight))
    indptr, indices, weights = _bipartite_csr(n, int(width), int(fanin), src, wts,
                                              np.empty(0, index_dtype(n)))
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
                                   np.empty(0, index_dtype(n)))
    return NeuronGraph(np.ones(n, np.int64), indptr, indices,
                       np.ones(indices.shape[0], np.int64),
                       name or f"stencil-{nx}x{ny}x{nz}-r{radius}",
                       {"generator": "stencil", "nx": nx, "ny": ny, "nz": nz,
                        "radius": radius})
