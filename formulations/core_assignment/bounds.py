"""Lower bounds for core_assignment that apply at every size (docs/core_assignment.md,
"Bounds").

Joint problem (partition + placement on the mesh), valid for every mapping:

* :func:`ring_bound` — the ring-capacity (local packing) relaxation: each vertex's
  synapses, packed on their own around it;
* :func:`cut_bound` — the Donath–Hoffman eigenvalue bound on the capacity-constrained
  k-way cut, with its diagonal optimised by supergradient ascent; every cut synapse
  travels at least one hop;
* :func:`density_cut_bound` — the density relaxation of the cut: a core's internal
  synapses, bounded per vertex with Mantel's theorem on a two-colouring of the graph
  (a layered network's consecutive layers); every cut synapse travels at least one hop;
* :func:`ring_cut_bound` — the ring bound and the better cut bound on disjoint sets of
  synapses, summed.

Placement of a fixed quotient (a QAP on the mesh), valid for that partition only:

* Gilmore–Lawler (:func:`.bnb.gilmore_lawler_bound`), :func:`projection_bound` (Hadley,
  Rendl and Wolkowicz 1992), :func:`rlt1_bound` (the level-1 reformulation-
  linearization LP of Adams and Johnson 1994) and :func:`dnn_bound` (the facially
  reduced doubly nonnegative relaxation of Zhao, Karisch, Rendl and Wolkowicz 1998,
  solved by the ADMM of Oliveira, Wolkowicz and Xu 2018, its bound read off the dual);
  :func:`qap_bounds` reports the best.

All values are in traffic units (Σ weight·hops) or cut units (Σ weight of cut synapses).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

import numba as nb
import numpy as np
import scipy.linalg as sl
import scipy.sparse as sp

from chipsched.budget import Budget
from chipsched.neurongraph.graph import NeuronGraph

__all__ = ["BoundReport", "cut_bound", "density_cut_bound", "dnn_bound", "mesh_ball_counts",
           "projection_bound", "qap_bounds", "ring_bound", "ring_cut_bound", "rlt1_bound",
           "rlt1_size", "size_parts"]

#: a computed float bound is lowered by this relative margin before an integer objective
#: rounds it up: the sums run in floating point
FLOAT_MARGIN = 1e-9
#: largest graph whose eigenvalues come from a dense solver (exact up to rounding);
#: above it, ARPACK's Lanczos iteration
DENSE_MAX = 3000
#: eigenvalues per ARPACK call at most; the parts beyond share the next eigenvalue
MAX_EIGS = 48
#: largest RLT-1 LP (y variables) built by default: n = 15 groups on 15 cores (22,050;
#: ~40 s here); nug20 (72,200) took 684 s for a bound below the projection bound
RLT1_MAX = 25_000
#: seconds the RLT-1 LP may take at most (HiGHS's interior point on scr15: > 16 min)
RLT1_SECONDS = 120.0
#: largest mesh (cores) whose DNN bound is computed by default: each ADMM iteration
#: diagonalises a ((N − 1)² + 1)-square matrix (N = 20: ~25 ms, N = 30: ~0.2 s here)
DNN_MAX_CORES = 30
#: Donath–Hoffman steps in a row without a gain before the Polyak target comes closer (a
#: subgradient ascent does not gain on every step; coming closer after each miss made
#: the steps too short: ca-lenet5-c4's ring + cut in 60 steps 128,319 with 1, 131,455
#: with 3, 5 or 10)
DH_PATIENCE = 3
#: supergradient steps on the ring bound's split (vgg-cifar-neurons: +11 % in 40, ~18 s)
RING_STEPS = 40
#: ADMM iterations of the DNN bound when no budget stops it first (nug20: ~25 s here)
DNN_ITERATIONS = 1000


@dataclass(frozen=True)
class BoundReport:
    """A lower bound (``value``), the method that gave it and the figures of each bound
    tried (``parts``: name → value or None when not run, ``seconds``: name → time)."""

    value: float
    by: str
    parts: dict[str, float | None] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------
# ring capacity


def mesh_ball_counts(rows: int, cols: int) -> np.ndarray:
    """``c[d]`` = the most cores any core of a rows×cols mesh has within d hops
    (itself included), for d = 0 … rows + cols − 2."""
    dmax = rows + cols - 2
    r = np.arange(rows)
    c = np.arange(cols)
    # per position, how many rows (columns) lie at each distance
    hr = np.zeros((rows, dmax + 1), np.int64)
    np.add.at(hr, (np.repeat(r, rows), np.abs(r[:, None] - r[None, :]).ravel()), 1)
    hc = np.zeros((cols, dmax + 1), np.int64)
    np.add.at(hc, (np.repeat(c, cols), np.abs(c[:, None] - c[None, :]).ravel()), 1)
    cum_c = np.cumsum(hc, axis=1)
    best = np.zeros(dmax + 1, np.int64)
    for d in range(dmax + 1):
        # cores within d of (i, j): Σ_a hr[i, a] · cum_c[j, d − a]
        a = np.arange(d + 1)
        cnt = hr[:, a] @ cum_c[:, d - a].T  # (rows, cols)
        best[d] = int(cnt.max())
    return best


@nb.njit(cache=True)
def _star_hops(indptr, indices, weights, sizes, share, ring_cap, total_cap, cut_only,
               hops):  # pragma: no cover - numba
    """Σ over vertices v of the cheapest fractional packing of v's (shared) synapses
    into the rings around v's core — ring d holds ``ring_cap[d] − size(v)`` units of
    size in all (cumulative), a unit at ring d costs d hops (1 when ``cut_only``; past
    the mesh one ring more) — and, per CSR slot e of v, the mean ring of e's size in
    that packing (``hops[e]``): the supergradient of v's cost in e's weight."""
    n = sizes.shape[0]
    D = ring_cap.shape[0]
    total = 0.0
    for v in range(n):
        a, b = indptr[v], indptr[v + 1]
        k = b - a
        if k == 0:
            continue
        dens = np.empty(k)
        for t in range(k):
            e = a + t
            sz = sizes[indices[e]]
            dens[t] = weights[e] * share[e] / sz if sz > 0 else np.inf
        order = np.argsort(-dens)
        caps = np.empty(D)
        for d in range(D):
            c = min(ring_cap[d], total_cap) - sizes[v]
            caps[d] = c if c > 0.0 else 0.0
        x = 0.0  # size packed so far, nearest first
        d = 0
        for t in range(k):
            e = a + order[t]
            sz = sizes[indices[e]]
            # the mean ring over the interval [x, x + sz] of packed size
            lo = x
            hi = x + sz
            acc = 0.0
            while lo < hi:
                while d < D and lo >= caps[d]:
                    d += 1
                if d == D:  # beyond the mesh (no mapping): one ring more
                    ring = D if not cut_only else 1
                    top = hi
                else:
                    ring = d if not cut_only else min(d, 1)
                    top = min(hi, caps[d])
                acc += (top - lo) * ring
                lo = top
            h = acc / sz if sz > 0 else 0.0
            hops[e] = h
            total += weights[e] * share[e] * h
            x = hi
    return total


def _heavier_end(src: np.ndarray, dst: np.ndarray, weights: np.ndarray, n: int
                 ) -> np.ndarray:
    """Per CSR slot (src → dst): whether src owns the synapse — the end of larger
    weighted degree, the lower index on ties (each synapse has exactly one owner)."""
    wdeg = np.bincount(src, weights=weights, minlength=n)
    return (wdeg[src] > wdeg[dst]) | ((wdeg[src] == wdeg[dst]) & (src < dst))


def ring_bound(graph: NeuronGraph, rows: int, cols: int, capacity: int,
               cut_only: bool = False, ascent: int = 0, budget: Budget | None = None
               ) -> tuple[float, str]:
    """The ring-capacity (local packing) lower bound on Σ weight·hops (on the cut weight
    with ``cut_only``) of every mapping of ``graph`` on the mesh; returns (bound, which
    share of the synapses gave it).

    Relaxation: the synapses are split between their two ends (each end owns a share,
    the shares of a synapse summing to 1), and each vertex v packs the synapses it owns
    alone, ignoring every other vertex: the neighbours on v's core have total size at
    most capacity − size(v), those within d hops at most capacity × (the most cores
    any core has within d hops) − size(v); the cheapest fractional packing puts the
    heaviest synapse per unit of size nearest. Any mapping pays at least this for each
    vertex's share, hence at least the sum, whatever the split. Two splits are tried —
    halves, and each synapse to its end of larger weighted degree — and the better is
    improved by ``ascent`` steps of projected supergradient ascent on the split (each
    step moves a synapse's share towards the end whose packing charges it more hops;
    every step's sum is a bound, the largest is returned), stopped by the budget or
    after eight steps without a gain."""
    n = graph.n
    if graph.m == 0 or n == 0:
        return 0.0, "no synapses"
    ring_cap = (mesh_ball_counts(rows, cols) * capacity).astype(np.float64)
    total_cap = float(rows * cols * capacity)
    sizes = graph.sizes.astype(np.float64)
    src = np.repeat(np.arange(n), np.diff(graph.indptr))
    dst = graph.indices.astype(np.int64)
    half = np.full(graph.indices.shape[0], 0.5)
    own = _heavier_end(src, dst, graph.weights, n)
    w = graph.weights.astype(np.float64)
    best, how, best_share = -1.0, "", half
    hops = np.zeros_like(half)
    for share, name in ((half, "halves"), (own.astype(np.float64), "heavier end")):
        val = _star_hops(graph.indptr, graph.indices, w, sizes, share, ring_cap,
                         total_cap, cut_only, hops)
        if val > best:
            best, how, best_share = float(val), name, share
    if ascent <= 0:
        return best, how
    # projected supergradient ascent on the split (the sum is concave in it: each
    # packing is a minimum of functions linear in the weights), each slot's step scaled
    # by 1 / weight — a fixed diagonal metric, so still an ascent method
    key = src * n + dst
    o1 = np.argsort(key, kind="stable")
    o2 = np.argsort(dst * n + src, kind="stable")
    mate = np.empty_like(o1)
    mate[o1] = o2  # the slot (v, u) of the slot (u, v)
    lead = src < dst
    share = best_share.copy()
    last_gain = 0
    for k in range(ascent):
        if budget is not None and budget.exhausted():
            break
        val = _star_hops(graph.indptr, graph.indices, w, sizes, share, ring_cap, total_cap,
                         cut_only, hops)
        if val > best:
            best, how, last_gain = float(val), f"split by ascent ({k} steps)", k
        elif k - last_gain >= 8:
            break  # eight steps without a gain (lenet5-neurons: none at all)
        diff = hops - hops[mate]  # > 0: the synapse costs more from this end
        step = 0.5 / (1.0 + k)
        s_lead = np.clip(share[lead] + step * diff[lead], 0.0, 1.0)
        share[lead] = s_lead
        share[mate[lead]] = 1.0 - s_lead
    return best, how


def nearest_cores_hops(rows: int, cols: int, count: int) -> np.ndarray:
    """``h[m]`` = a lower bound on the total hops from any core to m other cores of the
    mesh, for m = 0 … count: the m nearest cores, at most ``mesh_ball_counts[d] − 1``
    of them within d hops (the most any core has), filled nearest first."""
    balls = mesh_ball_counts(rows, cols) - 1  # other cores within d hops, best position
    per_d = np.diff(np.concatenate([[0], balls]))  # new cores at exactly d (d ≥ 1 at [d])
    dist = np.repeat(np.arange(per_d.size), per_d)[:count]
    return np.concatenate([[0], np.cumsum(dist)]).astype(np.float64)


def multicast_ring_bound(graph: NeuronGraph, rows: int, cols: int, capacity: int,
                         spikes: np.ndarray | None = None) -> float:
    """A lower bound on the multicast traffic (Σ packets·hops, one packet per spike of u
    to every other core holding a target v > u of u) of every mapping.

    Relaxation: each source u alone. Its targets have total size S(u); u's own core holds
    at most capacity − size(u) of it, every other core at most capacity, so the targets
    occupy at least m(u) = ⌈(S(u) − capacity + size(u)) / capacity⌉ other cores (0 when
    S(u) fits beside u), each reached by one packet per spike of u. Those m(u) cores are
    at least as far as the m(u) nearest cores any core of the mesh has
    (:func:`nearest_cores_hops`). Any mapping pays at least Σ_u spikes(u) · that."""
    n = graph.n
    if graph.m == 0 or n == 0:
        return 0.0
    src = np.repeat(np.arange(n), np.diff(graph.indptr))
    dst = graph.indices.astype(np.int64)
    fwd = dst > src
    sizes = graph.sizes.astype(np.int64)
    target_size = np.bincount(src[fwd], weights=sizes[dst[fwd]], minlength=n)
    over = target_size - (capacity - sizes)
    m = np.where(over > 0, -(-over.astype(np.int64) // capacity), 0)
    n_cores = rows * cols
    hops = nearest_cores_hops(rows, cols, n_cores - 1)
    m = np.minimum(m, n_cores - 1)  # more would be infeasible: no mapping to bound
    sp = np.ones(n) if spikes is None else np.asarray(spikes, dtype=np.float64)
    return float((sp * hops[m]).sum())


# ---------------------------------------------------------------------------------------
# Donath–Hoffman


def part_sizes(graph: NeuronGraph, capacity: int) -> np.ndarray:
    """The vertex counts (descending) of the parts that majorize every feasible
    partition: each core holds at most t vertices, t = the most of the smallest sizes
    that fit; the counts (t, t, …, rest)."""
    s = np.sort(graph.sizes)
    t = int(np.searchsorted(np.cumsum(s), capacity, side="right"))
    t = max(t, 1)
    q, r = divmod(graph.n, t)
    return np.array([t] * q + ([r] if r else []), dtype=np.float64)


def _smallest_eigs(M: Any, k: int, dense: bool, v0: np.ndarray | None
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The k smallest eigenvalues (ascending) of the symmetric M, each lowered by its
    residual norm (a true eigenvalue lies within it: Bauer–Fike for symmetric matrices),
    and their eigenvectors."""
    if dense:
        lam, X = sl.eigh(M, subset_by_index=[0, k - 1])
        return lam, X
    from scipy.sparse.linalg import eigsh

    lam, X = eigsh(M, k=k, which="SA", tol=1e-9, v0=v0)
    o = np.argsort(lam)
    lam, X = lam[o], X[:, o]
    res = np.linalg.norm(M @ X - X * lam, axis=0)
    return lam - res, X


def _dh_value(lam: np.ndarray, m: np.ndarray) -> float:
    """½ Σ m_i λ_i for the parts with an eigenvalue; the remaining parts' vertices share
    the last eigenvalue computed (every later eigenvalue is at least it)."""
    k = lam.shape[0]
    head = m[:k - 1]
    rest = float(m[k - 1:].sum())
    return 0.5 * (float(head @ lam[:k - 1]) + rest * float(lam[k - 1]))


def size_parts(graph: NeuronGraph, capacity: int) -> np.ndarray:
    """The part sizes, in units of vertex size (descending), that majorize those of
    every feasible partition: (capacity, capacity, …, rest), summing to the graph's
    total size."""
    total = float(graph.sizes.sum())
    q, r = divmod(total, float(capacity))
    return np.array([float(capacity)] * int(q) + ([r] if r > 0 else []), dtype=np.float64)


def cut_bound(graph: NeuronGraph, capacity: int,
              budget: Budget | None = None, iterations: int = 60, parts: str = "auto"
              ) -> tuple[float, dict[str, Any]]:
    """The Donath–Hoffman lower bound on the weight of the synapses cut by any partition
    of ``graph`` into parts that each fit a core (Donath and Hoffman,
    IBM J. Res. Dev. 17 (1973)).

    For a partition with part counts m₁ ≥ m₂ ≥ … and any diagonal U with Σ u = 0,
    cut = ½ Σ_i m_i y_iᵀ(L + U)y_i with y_i the normalised indicator of part i
    (orthonormal), hence cut ≥ ½ Σ_i m_i λ_i(L + U) (λ ascending); the counts that
    majorize every feasible partition (:func:`part_sizes`) give the least such value.

    Vertices of different sizes (several channels per vertex, contracted graphs) take the
    size-weighted form: with S = diag(sizes), z_i = S^½ 1_{part i} are orthogonal with
    ‖z_i‖² = the part's size M_i ≤ capacity, so cut ≥ ½ Σ_i M_i λ_i(S^-½ (L + U) S^-½),
    and the sizes (capacity, capacity, …, rest) of :func:`size_parts` majorize every
    partition's (Abel summation: for ascending λ, a majorizing vector gives the least
    sum). Counting vertices instead would allow as many vertices per core as the
    smallest sizes fit (on lenet5 with 4 channels per vertex: 256 input neurons where 64
    convolution vertices fill a core).

    ``parts``: 'auto' (by size when the sizes differ, else by count — the same bound),
    'size' or 'count'.

    U is improved by projected supergradient ascent (the function is concave in U) until
    ``iterations`` or the budget; every iterate's value is a bound, the best is kept.
    Dense eigenvalues up to :data:`DENSE_MAX` vertices, ARPACK above (each eigenvalue
    lowered by its residual norm); every eigenvalue is lowered by 4·n·ε·‖M‖∞ too."""
    if parts not in ("auto", "size", "count"):
        raise ValueError(f"parts must be 'auto', 'size' or 'count', not {parts!r}")
    t0 = time.perf_counter()
    n = graph.n
    sizes = graph.sizes.astype(np.float64)
    weighted = parts == "size" or (parts == "auto" and n > 0 and sizes.min() != sizes.max())
    m = size_parts(graph, capacity) if weighted else part_sizes(graph, capacity)
    if n <= 1 or graph.m == 0 or m.shape[0] <= 1:
        return 0.0, {"iterations": 0}
    A = sp.csr_matrix((graph.weights.astype(np.float64), graph.indices, graph.indptr),
                      shape=(n, n))
    deg = np.asarray(A.sum(axis=1)).ravel()
    dense = n <= DENSE_MAX
    k = min(m.shape[0], n - 1 if not dense else n, MAX_EIGS)
    k = max(k, 2)
    # S^-½ on both sides (ones when every vertex has one size: plain Donath–Hoffman)
    sc = 1.0 / np.sqrt(sizes) if weighted else np.ones(n)
    Ad = (A.toarray() * np.outer(sc, sc)) if dense else None
    As = None if dense else (sp.diags(sc) @ A @ sp.diags(sc)).tocsr()
    # a start that makes S^-½ (D + U) S^-½ a constant diagonal (Donath and Hoffman's
    # start when the sizes are equal); Σ u = 0
    u = sizes * (deg.sum() / sizes.sum()) - deg
    # ARPACK's first start vector is random unless given: a fixed one makes the bound
    # the same on every run
    v0 = None if dense else np.random.default_rng(0).standard_normal(n)
    best, it, stall = -math.inf, 0, 0
    target_gap = 0.05
    longest = 0.0
    while it < iterations:
        if budget is not None and it > 0:
            left = budget.remaining()
            # an eigenvalue solve cannot be interrupted: stop when the next could end
            # past the limit
            if budget.exhausted() or (left is not None and left < 1.2 * longest):
                break
        t_it = time.perf_counter()
        diag = (deg + u) * sc * sc
        if dense:
            M = -Ad.copy()
            M[np.diag_indices(n)] += diag
        else:
            M = (sp.diags(diag) - As).tocsc()
        lam, X = _smallest_eigs(M, k, dense, v0)
        # the computed eigenvalues are exact for a matrix within a few n·ε·‖M‖ of M
        # (backward stability); the ascent can drive u far out, where that error would
        # lift the bound above the optimum (seen: 2 + 1.8e-7 on a 3-vertex path)
        norm = float(abs(M).sum(axis=1).max())
        f = _dh_value(lam - 4.0 * n * np.finfo(float).eps * norm, m)
        it += 1
        if f > best:
            best, stall = f, 0
        else:
            stall += 1
            if stall >= DH_PATIENCE:
                target_gap *= 0.7
                stall = 0
        # supergradient in u: ½ Σ m_i x_i² / size, the parts sharing the last eigenvalue
        # on it
        mm = np.concatenate([m[:k - 1], [m[k - 1:].sum()]])
        g = 0.5 * (X ** 2 * mm[None, :]).sum(axis=1) * sc * sc
        g -= g.mean()
        gg = float(g @ g)
        if gg <= 1e-18:
            break
        step = (best * target_gap + 1.0 + best - f) / gg  # Polyak step to a target above
        u = u + step * g
        u -= u.mean()
        v0 = X[:, 0]
        longest = max(longest, time.perf_counter() - t_it)
    return max(best, 0.0), {"iterations": it, "eigenvalues": k,
                            "solver": "dense" if dense else "arpack",
                            "parts": "by size" if weighted else "by vertex count",
                            "seconds": round(time.perf_counter() - t0, 3)}


# ---------------------------------------------------------------------------------------
# the density relaxation


@nb.njit(cache=True)
def _two_colouring(indptr, indices, weights, passes):  # pragma: no cover - numba
    """Colours 0/1 that make most synapse weight bichromatic: breadth-first parity per
    component (every synapse bichromatic when the graph is bipartite, as between the
    consecutive layers of a network), then passes that recolour a vertex while more of
    its weight is monochromatic than not (each recolouring gains)."""
    n = indptr.shape[0] - 1
    col = np.full(n, -1, np.int8)
    queue = np.empty(n, np.int64)
    for r in range(n):
        if col[r] >= 0:
            continue
        col[r] = 0
        head, tail = 0, 1
        queue[0] = r
        while head < tail:
            v = queue[head]
            head += 1
            for e in range(indptr[v], indptr[v + 1]):
                u = indices[e]
                if col[u] < 0:
                    col[u] = 1 - col[v]
                    queue[tail] = u
                    tail += 1
    for _ in range(passes):
        changed = False
        for v in range(n):
            same = 0.0
            other = 0.0
            for e in range(indptr[v], indptr[v + 1]):
                if col[indices[e]] == col[v]:
                    same += weights[e]
                else:
                    other += weights[e]
            if same > other:
                col[v] = 1 - col[v]
                changed = True
        if not changed:
            break
    return col


@nb.njit(cache=True)
def _neighbour_knapsack(indptr, indices, weights, sizes, col, bichromatic, caps
                        ):  # pragma: no cover - numba
    """Per vertex v, the most synapse weight v can have to neighbours of total size at
    most ``caps[v]`` (fractional knapsack, heaviest weight per unit of size first),
    over v's bichromatic (``bichromatic``) or monochromatic neighbours only."""
    n = indptr.shape[0] - 1
    out = np.zeros(n)
    for v in range(n):
        a, b = indptr[v], indptr[v + 1]
        k = 0
        dens = np.empty(b - a)
        slot = np.empty(b - a, np.int64)
        for e in range(a, b):
            if (col[indices[e]] != col[v]) == bichromatic:
                sz = sizes[indices[e]]
                dens[k] = weights[e] / sz if sz > 0 else np.inf
                slot[k] = e
                k += 1
        if k == 0:
            continue
        order = np.argsort(-dens[:k])
        room = caps[v]
        val = 0.0
        for t in range(k):
            e = slot[order[t]]
            sz = sizes[indices[e]]
            if sz <= 0.0:  # a neighbour of size 0 takes no room: always inside
                val += weights[e]
                continue
            if room <= 0.0:
                break
            take = sz if sz <= room else room
            val += weights[e] * take / sz
            room -= take
        out[v] = val
    return out


def density_cut_bound(graph: NeuronGraph, capacity: int, passes: int = 8
                      ) -> tuple[float, dict[str, Any]]:
    """The density lower bound on the weight of the synapses cut by any partition of
    ``graph`` into parts that each fit a core [ours]: cut = W − Σ_cores internal(S),
    and each core's internal weight is bounded per vertex.

    Relaxation: colour the vertices A/B (:func:`_two_colouring`). On a core S with
    A-size x and B-size y (x + y ≤ capacity C), the bichromatic internal weight is
    Σ_{v ∈ S_A} w(v, S_B) ≤ Σ_{v ∈ S_A} K_v(y) and also Σ_{u ∈ S_B} K_u(x), where
    K_v(σ) is the most weight v has to opposite-colour neighbours of total size σ (a
    fractional knapsack: concave, K_v(0) ≥ 0). Bounding each K_v by its tangent at C/4,
    β_v + α_v·σ with β_v ≥ 0, gives ≤ B + min(y·P, x·Q) ≤ B + C·PQ/(P+Q) ≤ B + (C/4)(P+Q)
    = Σ_{v ∈ S} K_v(C/4) — Mantel's k²/4 for a bipartite graph, weighted. The
    monochromatic internal weight is ≤ ½ Σ_{v ∈ S} of v's best same-colour neighbours in
    C − size(v). So every partition cuts at least W − Σ_v [K_v(C/4) + ½ K^mono_v(C −
    size(v))]. What it sees that the per-vertex (ring) view does not: a core holds at
    best half its size of each colour, so a neuron keeps on average a quarter core's
    worth of its window inside, not a whole core's. Returns (bound, details)."""
    n = graph.n
    if n == 0 or graph.m == 0:
        return 0.0, {"monochromatic_share": 0.0}
    w = graph.weights.astype(np.float64)
    sizes = graph.sizes.astype(np.float64)
    col = _two_colouring(graph.indptr, graph.indices, w, passes)
    quarter = np.full(n, capacity / 4.0)
    bip = _neighbour_knapsack(graph.indptr, graph.indices, w, sizes, col, True, quarter)
    mono = _neighbour_knapsack(graph.indptr, graph.indices, w, sizes, col, False,
                               np.maximum(capacity - sizes, 0.0))
    src = np.repeat(np.arange(n), np.diff(graph.indptr))
    same = col[src] == col[graph.indices]
    total = 0.5 * float(w.sum())
    kept = float(bip.sum() + 0.5 * mono.sum())
    return max(total - kept, 0.0), {
        "monochromatic_share": round(0.5 * float(w[same].sum()) / total, 6)
        if total > 0 else 0.0,
        "internal_at_most": kept}


#: the ring + cut bound gives the ring the stars that pay at least this share of the most
#: hops per unit of weight any star pays (lenet5-neurons: the c5 neurons' stars pay 0.47
#: hop per synapse, the pooled s2 neurons' at most 0.37)
RING_STAR_SHARE = 0.8


def ring_cut_bound(graph: NeuronGraph, rows: int, cols: int, capacity: int,
                   cut_only: bool = False, budget: Budget | None = None,
                   iterations: int = 60) -> tuple[float, dict[str, Any]]:
    """The ring-capacity bound on some synapses plus a cut bound on the others [ours]:
    for any split of the synapses into sets R and E∖R, every mapping's traffic is
    Σ_R w·hops + Σ_(E∖R) w·hops ≥ :func:`ring_bound` of the graph with R's synapses
    only + the better of :func:`cut_bound` and :func:`density_cut_bound` of the graph
    with the others (the partition restricted to them is still feasible; a cut synapse
    travels ≥ 1 hop). R: the
    synapses owned (each to its end of larger weighted degree) by the stars whose
    packing pays the most hops per unit of weight (at least :data:`RING_STAR_SHARE` of
    the most any star pays) — where a star overflows its core, the ring counts its
    synapses at their real distance, while the cut bound, spread thin, would count them
    at less. Returns (bound, details); (0, …) when no star overflows."""
    n = graph.n
    if n == 0 or graph.m == 0:
        return 0.0, {"ring_synapses": 0}
    sizes = graph.sizes.astype(np.float64)
    w = graph.weights.astype(np.float64)
    src = np.repeat(np.arange(n), np.diff(graph.indptr))
    dst = graph.indices.astype(np.int64)
    ring_cap = (mesh_ball_counts(rows, cols) * capacity).astype(np.float64)
    own = _heavier_end(src, dst, w, n)
    hops = np.zeros_like(w)
    _star_hops(graph.indptr, graph.indices, w, sizes, own.astype(np.float64), ring_cap,
               float(rows * cols * capacity), cut_only, hops)
    paid = np.bincount(src, weights=w * own * hops, minlength=n)
    owned = np.bincount(src, weights=w * own, minlength=n)
    rate = np.divide(paid, owned, out=np.zeros(n), where=owned > 0)
    if rate.max() <= 0:
        return 0.0, {"ring_synapses": 0}
    star = rate >= RING_STAR_SHARE * rate.max()
    in_r = (own & star[src])[src < dst] | (~own & star[dst])[src < dst]
    us, vs, ws = src[src < dst], dst[src < dst], graph.weights[src < dst]
    g_ring = NeuronGraph.from_edges(graph.sizes, us[in_r], vs[in_r], ws[in_r])
    g_cut = NeuronGraph.from_edges(graph.sizes, us[~in_r], vs[~in_r], ws[~in_r])
    ring, _ = ring_bound(g_ring, rows, cols, capacity, cut_only)
    density, _ = density_cut_bound(g_cut, capacity)
    cut, info = cut_bound(g_cut, capacity, budget, iterations)
    return ring + max(cut, density), {
        "ring": ring, "cut": max(cut, density), "cut_by": "Donath–Hoffman"
        if cut >= density else "density", "ring_synapses": int(in_r.sum()),
        "ring_stars": int(star.sum()), "cut_iterations": info["iterations"]}


# ---------------------------------------------------------------------------------------
# QAP bounds for the placement of a fixed quotient


def mesh_distances(rows: int, cols: int) -> np.ndarray:
    r, c = np.divmod(np.arange(rows * cols), cols)
    return (np.abs(r[:, None] - r[None, :]) + np.abs(c[:, None] - c[None, :])).astype(
        np.float64)


def _lap(C: np.ndarray) -> float:
    from scipy.optimize import linear_sum_assignment

    r, c = linear_sum_assignment(C)
    return float(C[r, c].sum())


def projection_bound(F: np.ndarray, D: np.ndarray) -> float:
    """The projection (eigenvalue) bound of Hadley, Rendl and Wolkowicz (Math. Oper. Res.
    17 (1992)) on min over permutations X of ½ tr(F X D Xᵀ) — Σ flow·distance over the
    pairs — for symmetric F and D with zero diagonals, F padded with zero (dummy) groups
    to D's size. With V an orthonormal basis of 1⊥ and r = F1, s = D1:
    tr(F X D Xᵀ) ≥ ⟨λ(VᵀFV), λ(VᵀDV)⟩₋ + min_X tr((2/N) r sᵀ Xᵀ) − (1ᵀr)(1ᵀs)/N²."""
    N = D.shape[0]
    Fp = np.zeros((N, N))
    g = F.shape[0]
    Fp[:g, :g] = F
    if N == 1:
        return 0.0
    # an orthonormal basis of the complement of the ones vector
    Q, _ = np.linalg.qr(np.column_stack([np.ones(N), np.eye(N)[:, :N - 1]]))
    V = Q[:, 1:]
    a = np.linalg.eigvalsh(V.T @ Fp @ V)
    b = np.linalg.eigvalsh(V.T @ D @ V)
    quad = float(a @ b[::-1])  # minimal scalar product: ascending against descending
    r = Fp.sum(axis=1)
    s = D.sum(axis=1)
    lin = _lap((2.0 / N) * np.outer(r, s))
    const = float(r.sum()) * float(s.sum()) / N ** 2
    return 0.5 * (quad + lin - const)


def rlt1_size(g: int, N: int) -> int:
    """Variables y_ijkl (i < k, j ≠ l) of the level-1 RLT of g groups on N cores."""
    return g * (g - 1) // 2 * N * (N - 1)


def rlt1_bound(F: np.ndarray, D: np.ndarray, time_limit: float | None = None
               ) -> float | None:
    """The level-1 reformulation-linearization bound (Adams and Johnson, DIMACS Series
    16 (1994)) of min ½ tr(F X D Xᵀ): x_ij (group i on core j), y_ijkl = x_ij·x_kl for
    i ≠ k, j ≠ l with y_ijkl = y_klij, and for every (i, j) and k ≠ i:
    Σ_{l≠j} y_ijkl = x_ij (group k is somewhere else), for l ≠ j: Σ_{k≠i} y_ijkl ≤ x_ij
    (core l holds at most one group; = when every core is used); the LP relaxation
    (0 ≤ x ≤ 1) by HiGHS (scipy's ``linprog``). Returns None when HiGHS (interior point,
    then crossover) does not prove the LP optimal in time."""
    from scipy.optimize import linprog

    g, N = F.shape[0], D.shape[0]
    if g < 2:
        return 0.0
    nx = g * N
    pairs = [(i, k) for i in range(g) for k in range(i + 1, g)]
    P = len(pairs)
    # y index: ((pair p) * N + j) * N + l for i<k of pair p, core j of i, core l of k
    ny = P * N * N
    cost = np.zeros(nx + ny)
    pi = np.array([p[0] for p in pairs])
    pk = np.array([p[1] for p in pairs])
    fl = F[pi, pk]
    cost[nx:] = (fl[:, None, None] * D[None, :, :]).ravel()
    # y with j == l are fixed to 0 by their bounds
    ub = np.ones(nx + ny)
    diag = np.zeros((P, N, N), bool)
    diag[:, np.arange(N), np.arange(N)] = True
    ub[nx:][diag.ravel()] = 0.0
    rows_eq, cols_eq, vals_eq, b_eq = [], [], [], []
    rows_ub, cols_ub, vals_ub = [], [], []
    r_eq = 0
    r_ub = 0
    pidx = {p: t for t, p in enumerate(pairs)}
    jj, ll = np.meshgrid(np.arange(N), np.arange(N), indexing="ij")
    for i in range(g):
        for k in range(g):
            if k == i:
                continue
            if i < k:
                p = pidx[(i, k)]
                ymat = nx + (p * N + jj) * N + ll  # [j, l]: i on j, k on l
            else:
                p = pidx[(k, i)]
                ymat = nx + (p * N + ll) * N + jj  # [j, l]: i on j, k on l
            for j in range(N):
                # Σ_l y(i j, k l) = x_ij
                cols_eq.extend(ymat[j].tolist())
                vals_eq.extend([1.0] * N)
                rows_eq.extend([r_eq] * N)
                cols_eq.append(i * N + j)
                vals_eq.append(-1.0)
                rows_eq.append(r_eq)
                r_eq += 1
    for i in range(g):
        for j in range(N):
            for l in range(N):  # noqa: E741 - a core, as in the papers
                if l == j:
                    continue
                cs = []
                for k in range(g):
                    if k == i:
                        continue
                    if i < k:
                        p = pidx[(i, k)]
                        cs.append(nx + (p * N + j) * N + l)
                    else:
                        p = pidx[(k, i)]
                        cs.append(nx + (p * N + l) * N + j)
                cols_ub.extend(cs)
                vals_ub.extend([1.0] * len(cs))
                rows_ub.extend([r_ub] * len(cs))
                cols_ub.append(i * N + j)
                vals_ub.append(-1.0)
                rows_ub.append(r_ub)
                r_ub += 1
    # assignment rows: every group on one core, every core at most one group
    for i in range(g):
        cols_eq.extend(range(i * N, i * N + N))
        vals_eq.extend([1.0] * N)
        rows_eq.extend([r_eq] * N)
        r_eq += 1
    b_eq = np.zeros(r_eq)
    b_eq[r_eq - g:] = 1.0
    A_eq = sp.csr_matrix((vals_eq, (rows_eq, cols_eq)), shape=(r_eq, nx + ny))
    a_ub_rows, a_ub_cols, a_ub_vals = rows_ub, cols_ub, vals_ub
    for j in range(N):
        a_ub_cols.extend(range(j, nx, N))
        a_ub_vals.extend([1.0] * g)
        a_ub_rows.extend([r_ub] * g)
        r_ub += 1
    A_ub = sp.csr_matrix((a_ub_vals, (a_ub_rows, a_ub_cols)), shape=(r_ub, nx + ny))
    b_ub = np.zeros(r_ub)
    b_ub[r_ub - N:] = 1.0
    opts: dict[str, Any] = {"presolve": True}
    method = "highs-ipm"
    if time_limit is not None:
        opts["time_limit"] = max(float(time_limit), 0.01)
    res = linprog(cost, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq,
                  bounds=np.column_stack([np.zeros(nx + ny), ub]), method=method,
                  options=opts)
    if res.status != 0:
        return None
    # HiGHS's optimality tolerances (1e-7 relative): lowered by ten times that
    return float(res.fun) - 1e-6 * max(1.0, abs(float(res.fun)))


def _dnn_face(N: int) -> np.ndarray:
    """V̂, with orthonormal columns, spanning the lifts y = (1, vec X) of the N × N
    matrices with unit row and column sums: X = eeᵀ/N + V W Vᵀ with V an orthonormal
    basis of e⊥, so y = √2·(first column) + (V ⊗ V) vec W (x indexed facility-major)."""
    Q, _ = np.linalg.qr(np.column_stack([np.ones(N), np.eye(N)[:, :N - 1]]))
    V = Q[:, 1:]
    Vh = np.zeros((N * N + 1, (N - 1) ** 2 + 1))
    Vh[0, 0] = 1.0 / math.sqrt(2.0)
    Vh[1:, 0] = 1.0 / (N * math.sqrt(2.0))
    Vh[1:, 1:] = np.kron(V, V)
    return Vh


def _simplex_eigs(lam: np.ndarray, total: float) -> np.ndarray:
    """The projection of the eigenvalues ``lam`` onto {μ ≥ 0, Σ μ = total}."""
    mu = lam[::-1]
    cs = np.cumsum(mu)
    theta = (cs - total) / np.arange(1, mu.shape[0] + 1)
    rho = int(np.nonzero(mu - theta > 0)[0][-1])
    return np.maximum(lam - theta[rho], 0.0)


def dnn_bound(F: np.ndarray, D: np.ndarray, budget: Budget | None = None,
              iterations: int = DNN_ITERATIONS, every: int = 25,
              trace: list[float] | None = None) -> float:
    """The doubly nonnegative (DNN) bound of min ½ tr(F X D Xᵀ) over the placements X of
    g groups on N ≥ g locations (F padded with zero groups), by the facial reduction of
    Zhao, Karisch, Rendl and Wolkowicz (J. Comb. Optim. 2 (1998)) and the ADMM of
    Oliveira, Wolkowicz and Xu (Math. Prog. Comp. 10 (2018)).

    Relaxation: Y = y yᵀ with y = (1, vec X) is relaxed to Y = V̂ R V̂ᵀ (:func:`_dnn_face`:
    X's row and column sums are one), R ⪰ 0 with tr R = N + 1 (= tr Y), Y₀₀ = 1,
    0 ≤ Y ≤ 1 and the gangster zeros (one group on two cores, two groups on one core).
    The ADMM's multiplier Z of Y = V̂RV̂ᵀ gives, at every iterate, the Lagrangian dual
    value min_{Y in the box} ⟨L + Z, Y⟩ − (N + 1)·λ_max(V̂ᵀZV̂) — a lower bound whatever
    Z is (weak duality), so a run stopped by the budget still returns a valid bound:
    the best of the values computed every ``every`` iterations (and the last), which
    stops early once four values in a row gained less than a relative 10⁻⁵. Each value
    is appended to ``trace`` when one is given. Lowered by a relative 10⁻⁹ of
    its terms for the floating-point sums."""
    F = np.asarray(F, dtype=np.float64)
    D = np.asarray(D, dtype=np.float64)
    g, N = F.shape[0], D.shape[0]
    if g < 2 or N < 2:
        return 0.0
    Fp = np.zeros((N, N))
    Fp[:g, :g] = F
    n2 = N * N
    L = np.zeros((n2 + 1, n2 + 1))
    L[1:, 1:] = 0.5 * np.kron(Fp, D)
    scale = float(np.linalg.norm(L)) / N
    if scale == 0.0:
        return 0.0
    L /= scale  # ADMM's step β suits a normalised cost
    Vh = _dnn_face(N)
    fac = np.repeat(np.arange(N), N)
    loc = np.tile(np.arange(N), N)
    gang = np.zeros((n2 + 1, n2 + 1), bool)
    same_f = fac[:, None] == fac[None, :]
    same_l = loc[:, None] == loc[None, :]
    gang[1:, 1:] = same_f ^ same_l
    free = ~gang
    free[0, 0] = False
    beta = max(N / 3.0, 1.0)
    gamma = 1.618
    y0 = np.concatenate([[1.0], np.full(n2, 1.0 / N)])
    Y = np.outer(y0, y0)  # the barycentre's lift
    Z = np.zeros_like(Y)
    best = -math.inf
    bests: list[float] = []

    def dual_value(Z: np.ndarray) -> float:
        Zs = 0.5 * (Z + Z.T)
        M = L + Zs
        W = Vh.T @ Zs @ Vh
        lmax = float(np.linalg.eigvalsh(0.5 * (W + W.T))[-1])
        neg = np.minimum(M, 0.0)[free]
        val = M[0, 0] + float(neg.sum()) - (N + 1) * lmax
        err = abs(M[0, 0]) + float(-neg.sum()) + (N + 1) * abs(lmax)
        return (val - 1e-9 * err) * scale

    for it in range(1, iterations + 1):
        if budget is not None and budget.exhausted():
            break
        S = Vh.T @ (Y + Z / beta) @ Vh
        lam, U = np.linalg.eigh(0.5 * (S + S.T))
        R = (U * _simplex_eigs(lam, N + 1.0)) @ U.T
        VRV = Vh @ R @ Vh.T
        Y = np.clip(VRV - (L + Z) / beta, 0.0, 1.0)
        Y[gang] = 0.0
        Y[0, 0] = 1.0
        Z += gamma * beta * (Y - VRV)
        if it % every == 0 or it == iterations:
            v = dual_value(Z)
            if trace is not None:
                trace.append(v)
            best = max(best, v)
            bests.append(best)
            # converged: less than a relative 10⁻⁵ gained over the last four values
            if len(bests) > 4 and best - bests[-5] <= 1e-5 * abs(best):
                break
    if best == -math.inf:
        return 0.0
    return max(best, 0.0)


def qap_bounds(F: np.ndarray, D: np.ndarray, budget: Budget | None = None,
               rlt1_max: int = RLT1_MAX, dnn_max_cores: int = DNN_MAX_CORES
               ) -> BoundReport:
    """The best of the placement bounds of the quotient with symmetric integer flows F
    (g × g) on the locations of the distance matrix D (the mesh's hops,
    :func:`mesh_distances`): Gilmore–Lawler, projection, the DNN bound on at most
    ``dnn_max_cores`` locations (it stops at the budget's limit with a valid bound) and
    RLT-1 when it has at most ``rlt1_max`` y variables (in what is left of the budget,
    at most :data:`RLT1_SECONDS`; None when that is not enough)."""
    from .bnb import gilmore_lawler_bound

    F = np.asarray(F, dtype=np.float64)
    D = np.asarray(D, dtype=np.float64)
    parts: dict[str, float | None] = {}
    secs: dict[str, float] = {}
    t = time.perf_counter()
    parts["gilmore-lawler"] = float(gilmore_lawler_bound(F.astype(np.int64), D))
    secs["gilmore-lawler"] = time.perf_counter() - t
    t = time.perf_counter()
    parts["projection"] = projection_bound(F, D)
    secs["projection"] = time.perf_counter() - t
    g, N = F.shape[0], D.shape[0]
    # the DNN bound first: it was the tighter on every QAPLIB instance measured, and the
    # RLT-1 LP's interior point can take long (scr15: > 16 min) — it gets what is left,
    # at most RLT1_SECONDS
    parts["dnn"] = None
    if 2 <= g and N <= dnn_max_cores and (budget is None or not budget.exhausted()):
        t = time.perf_counter()
        parts["dnn"] = dnn_bound(F, D, budget)
        secs["dnn"] = time.perf_counter() - t
    parts["rlt1"] = None
    if rlt1_size(g, N) <= rlt1_max and (budget is None or not budget.exhausted()):
        t = time.perf_counter()
        left = None if budget is None else budget.solver_seconds()
        parts["rlt1"] = rlt1_bound(F, D, RLT1_SECONDS if left is None else
                                   min(left, RLT1_SECONDS))
        secs["rlt1"] = time.perf_counter() - t
    by = max((k for k, v in parts.items() if v is not None), key=lambda k: parts[k])
    return BoundReport(float(parts[by]), by, parts, {k: round(v, 4) for k, v in secs.items()})
