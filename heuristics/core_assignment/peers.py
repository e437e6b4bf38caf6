"""Peer partitioners: METIS (pymetis), KaHIP (kahip) and networkx's Kernighan–Lin
bisection, with the capacity of a core as their balance constraint.

METIS and KaHIP balance part *sizes* up to an imbalance factor; we set it so that the
largest allowed part reaches the core capacity (METIS: ``ufactor`` = ⌈1000·(k·K/T − 1)⌉,
:func:`metis_ufactor`,
KaHIP: ``ε`` = max(0.01, K/⌈T/k⌉ − 1) — it crashes with ε = 0 — for k parts, capacity
K, total size T). Neither guarantees the bound exactly, so :func:`repair_capacity`
moves the cheapest vertices out of any over-full part afterwards (counted in the stats;
usually zero moves).
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Iterator
from typing import Any

import numba as nb
import numpy as np

from chipsched.budget import Budget, BudgetExhausted
from chipsched.errors import InputError
from chipsched.neurongraph import NeuronGraph


@nb.njit(cache=True)
def _repair(indptr, indices, weights, sizes, part, load, capacity, max_parts):  # pragma: no cover
    """Move vertices out of over-full parts, best gain first, to a part with room
    (adjacent parts first, then the least-loaded part, then a new part below
    ``max_parts``). Returns (moves, parts used, ok)."""
    n = part.shape[0]
    nparts = load.shape[0]
    acc = np.zeros(max_parts, np.int64)
    mark = np.full(max_parts, -1, np.int64)
    moves = 0
    used = nparts
    loads = np.zeros(max_parts, np.int64)
    loads[:nparts] = load
    for p in range(max_parts):
        if loads[p] <= capacity:
            continue
        members = np.flatnonzero(part == p)
        gains = np.empty(members.shape[0], np.int64)
        for mi in range(members.shape[0]):
            v = members[mi]
            wp = 0
            best = -(1 << 62)
            for j in range(indptr[v], indptr[v + 1]):
                q = part[indices[j]]
                if mark[q] != v:
                    mark[q] = v
                    acc[q] = 0
                acc[q] += weights[j]
            for j in range(indptr[v], indptr[v + 1]):
                q = part[indices[j]]
                if q == p:
                    wp = acc[q]
                elif acc[q] > best:
                    best = acc[q]
            if best == -(1 << 62):
                best = 0
            gains[mi] = best - wp
        order = np.argsort(-gains, kind="mergesort")
        for oi in range(order.shape[0]):
            if loads[p] <= capacity:
                break
            v = members[order[oi]]
            s = sizes[v]
            # best adjacent destination with room
            dest = -1
            dw = -1
            for j in range(indptr[v], indptr[v + 1]):
                q = part[indices[j]]
                if mark[q] != n + v:
                    mark[q] = n + v
                    acc[q] = 0
                acc[q] += weights[j]
            for j in range(indptr[v], indptr[v + 1]):
                q = part[indices[j]]
                if q != p and loads[q] + s <= capacity and acc[q] > dw:
                    dw = acc[q]
                    dest = q
            if dest < 0:
                lo = capacity + 1
                for q in range(used):
                    if q != p and loads[q] + s <= capacity and loads[q] < lo:
                        lo = loads[q]
                        dest = q
            if dest < 0 and used < max_parts:
                dest = used
                used += 1
            if dest < 0:
                continue
            part[v] = dest
            loads[p] -= s
            loads[dest] += s
            moves += 1
        if loads[p] > capacity:
            return moves, used, False
    return moves, used, True


def repair_capacity(graph: NeuronGraph, part: np.ndarray, capacity: int, max_parts: int
                    ) -> dict[str, int]:
    """Make every part fit ``capacity`` (in place); raise :class:`InputError` if even
    ``max_parts`` parts (the cores) cannot hold the graph this way."""
    nparts = int(part.max()) + 1
    load = np.bincount(part, weights=graph.sizes, minlength=nparts).astype(np.int64)
    if (load <= capacity).all():
        return {"repair_moves": 0, "parts": nparts}
    limit = max(nparts, min(max_parts, graph.n))  # never more parts than vertices
    moves, used, ok = _repair(graph.indptr, graph.indices, graph.weights, graph.sizes, part,
                              load, capacity, limit)
    if not ok:
        raise InputError("cores", f"cannot fit the partition into {max_parts} cores of "
                         f"capacity {capacity}", "use a larger array or capacity")
    return {"repair_moves": int(moves), "parts": int(used)}


#: Capacity share every partitioner leaves free when it picks its own part count.
HEADROOM = 0.03


def default_parts(total_size: int, capacity: int, cores: int, headroom: float = HEADROOM
                  ) -> int:
    """Parts for the peers when none are given — the rule of ``seed004-plus``: the fewest
    that leave every part ``headroom`` (3 %) free, ⌈T/((1 − headroom)·K)⌉, capped by the
    cores but never below ⌈T/K⌉ (``headroom=0``: exactly ⌈T/K⌉). Before issue 11's
    part-count rule the peers took ⌈1.05·T/K⌉."""
    want = math.ceil(total_size / ((1 - headroom) * capacity))
    return max(1, min(cores, want), math.ceil(total_size / capacity))


def metis_ufactor(total_size: int, parts: int, capacity: int) -> int:
    """The smallest METIS ``ufactor`` (≥ 1) with which a part may reach the capacity K:
    METIS allows a part (1 + ufactor/1000)·T/k, so ⌈1000·(k·K/T − 1)⌉, in integers.
    Rounding down instead (before issue 31) kept every part below K when k·K/T is not a
    multiple of 0.001 — with small parts METIS then could not balance at all and its cut
    grew up to 2.4× (3elt, k = 256); a part over K is repaired afterwards."""
    T, k, K = int(total_size), int(parts), int(capacity)
    return max(1, -(-1000 * (k * K - T) // T))


def _check_parts(parts: int, graph: NeuronGraph, capacity: int, cores: int) -> int:
    parts = int(parts)
    if parts < 1:
        raise InputError("parts", f"must be >= 1, got {parts}")
    if parts > cores:
        raise InputError("parts", f"{parts} parts but only {cores} cores",
                         "ask for fewer parts or use a larger array")
    if parts * capacity < graph.total_size:
        raise InputError("parts", f"{parts} parts of capacity {capacity} cannot hold "
                         f"{graph.total_size} neurons",
                         f"use at least {math.ceil(graph.total_size / capacity)} parts")
    return min(parts, graph.n)


def metis_partition(graph: NeuronGraph, parts: int, capacity: int, cores: int, seed: int = 0,
                    recursive: bool = False, ncuts: int = 1, niter: int = 10,
                    budget: Budget | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """METIS k-way (or recursive bisection) partition with the capacity as the balance
    bound, repaired if METIS overshoots it; under ``budget`` as for
    :func:`kahip_partition`."""
    import pymetis

    parts = _check_parts(parts, graph, capacity, cores)
    if parts == 1:
        return np.zeros(graph.n, np.int64), {"ufactor": 0, "repair_moves": 0, "parts": 1}
    T = graph.total_size
    ufactor = metis_ufactor(T, parts, capacity)
    idx = pymetis.zero_copy_dtype() if hasattr(pymetis, "zero_copy_dtype") else np.int32
    opts = pymetis.Options(ufactor=int(ufactor), seed=int(seed), ncuts=int(ncuts),
                           niter=int(niter))
    adj = pymetis.CSRAdjacency(graph.indptr.astype(idx), graph.indices.astype(idx))

    def run() -> tuple[int, np.ndarray]:
        res = pymetis.part_graph(parts, adjacency=adj, vweights=graph.sizes.astype(idx),
                                 eweights=graph.weights.astype(idx), recursive=recursive,
                                 options=opts)
        return int(res.edge_cuts), np.asarray(res.vertex_part, dtype=np.int64)

    cuts, part = run() if budget is None else budget.call("running METIS", run)
    stats = {"ufactor": ufactor, "metis_cut": cuts}
    stats.update(repair_capacity(graph, part, capacity, cores))
    return part, stats


KAHIP_MODES = {"fast": 0, "eco": 1, "strong": 2, "fastsocial": 3, "ecosocial": 4,
               "strongsocial": 5}


def kahip_partition(graph: NeuronGraph, parts: int, capacity: int, cores: int, seed: int = 0,
                    mode: str = "eco", budget: Budget | None = None
                    ) -> tuple[np.ndarray, dict[str, Any]]:
    """KaHIP ``kaffpa`` partition with ε chosen so that the largest block is the capacity,
    repaired if needed; kaffpa cannot poll ``budget``, so it runs under
    :meth:`~chipsched.budget.Budget.call` (killed when the budget is over)."""
    import kahip

    parts = _check_parts(parts, graph, capacity, cores)
    if parts == 1:
        return np.zeros(graph.n, np.int64), {"imbalance": 0.0, "repair_moves": 0, "parts": 1}
    if mode not in KAHIP_MODES:
        raise InputError("mode", f"unknown KaHIP mode {mode!r}",
                         f"use one of {', '.join(KAHIP_MODES)}")
    T = graph.total_size
    # KaHIP 3.x crashes (segmentation fault) with ε = 0 when no perfectly balanced
    # partition exists; 1 % is the smallest value we give it (repair fixes any excess).
    eps = max(0.01, capacity / math.ceil(T / parts) - 1)
    args = (graph.sizes.astype(np.int32).tolist(), graph.indptr.astype(np.int32).tolist(),
            graph.weights.astype(np.int32).tolist(), graph.indices.astype(np.int32).tolist(),
            parts, eps, True, int(seed) % (2**31 - 1), KAHIP_MODES[mode])
    cut, blocks = kahip.kaffpa(*args) if budget is None else \
        budget.call(f"running KaHIP ({mode})", kahip.kaffpa, *args)
    part = np.asarray(blocks, dtype=np.int64)
    stats = {"imbalance": eps, "kahip_cut": int(cut), "mode": mode}
    stats.update(repair_capacity(graph, part, capacity, cores))
    return part, stats


#: Kernighan–Lin calls on subgraphs with more edges than this run under
#: :meth:`~chipsched.budget.Budget.call` (one on 200 K edges takes ~5 s).
KL_CHILD_EDGES = 20_000


def kl_bisector(max_iter: int = 10, budget: Budget | None = None) -> Any:
    """A bisector for :func:`~.multilevel.recursive_bisection` and the placement: networkx
    ``kernighan_lin_bisection`` on the induced subgraph (equal halves by count, or the
    placement's target count by starting from a random split of that size). Once
    ``budget`` is over the KL passes are skipped: the random split of the right size is
    the bisection (a pure-Python KL call cannot be interrupted)."""
    import networkx as nx

    def bisect(graph: NeuronGraph, verts: np.ndarray, rng: np.random.Generator,
               loc: np.ndarray, target: int | None = None) -> tuple[np.ndarray, int]:
        sub = graph.induced(verts)
        m = sub.n
        k = m // 2 if target is None else int(target)
        order = rng.permutation(m)
        init = (set(order[:k].tolist()), set(order[k:].tolist()))
        kl_seed = int(rng.integers(2**31))

        def kl() -> set[int]:
            a, b = nx.algorithms.community.kernighan_lin_bisection(
                sub.to_networkx(), partition=init, max_iter=max_iter, weight="weight",
                seed=kl_seed)
            return a if len(a) == k else b  # networkx returns the sides in either order

        if budget is None:
            a = kl()
        elif budget.exhausted():
            a = init[0]
        else:
            try:  # a large KL call takes seconds: bounded by the budget, in a child
                a = budget.call("running Kernighan–Lin", kl) if sub.m > KL_CHILD_EDGES \
                    else kl()
            except BudgetExhausted:
                a = init[0]
        mask = np.zeros(m, bool)
        mask[list(a)] = True
        cut = sub.cut_weight(mask.astype(np.int64))
        return mask, cut

    return bisect


# ---------------------------------------------------------------------------------------
# Scotch (pyscotch)


def _pyscotch() -> Any:
    """pyscotch, imported without the banner it prints on stderr when it loads libscotch
    (a CLI's stderr is for our messages)."""
    import contextlib
    import io

    with contextlib.redirect_stderr(io.StringIO()):
        import pyscotch

        # the library loads lazily, on the first attribute that needs it
        pyscotch.Graph, pyscotch.Architecture, pyscotch.Strategy, pyscotch.Context  # noqa: B018
    return pyscotch


def scotch_target(total_size: int, capacity: int, rows: int, cols: int,
                  headroom: float = 0.0) -> tuple[int, int]:
    """The target mesh of a Scotch static mapping: the sub-mesh (rows', cols') of the
    ``rows × cols`` array with the fewest cores that hold the graph with ``headroom``
    free in every core, the squarest on ties (a corner sub-mesh: Manhattan distances
    inside it are the array's)."""
    need = max(1, math.ceil(total_size / ((1 - headroom) * capacity)))
    best: tuple[int, int, int] | None = None
    for r in range(1, rows + 1):
        c = math.ceil(need / r)
        if c > cols:
            continue
        key = (r * c, abs(r - c), r)
        if best is None or key < best:
            best = key
    if best is None:
        raise InputError("cores", f"{need} cores of capacity {capacity} needed but the "
                         f"{rows}×{cols} array has {rows * cols}",
                         "use a larger array or capacity")
    r = best[2]
    return r, math.ceil(need / r)


def _scotch_graph(pyscotch: Any, graph: NeuronGraph, seed: int, deterministic: bool = True
                  ) -> tuple[Any, Any, Any]:
    """The graph, bound to a Scotch context that is deterministic (Scotch's threads
    otherwise make its results differ from run to run) and seeded with ``seed`` —
    unless ``deterministic`` is false (Scotch's default context); returns (graph to
    use, context, graph) — the last two must outlive the first."""
    g = pyscotch.Graph()
    g.build(graph.indptr, graph.indices, graph.sizes, graph.weights)
    if not deterministic:
        return g, None, g
    ctx = pyscotch.Context()
    ctx.option_set(SCOTCH_OPTION_DETERMINISTIC, 1)
    ctx.random_seed(int(seed) % (2**31 - 1))
    ctx.random_reset()
    return ctx.bind_graph(g), ctx, g


#: Scotch's context options (``SCOTCH_OPTIONNUMDETERMINISTIC``,
#: ``SCOTCH_OPTIONNUMRANDOMFIXEDSEED`` in scotch.h)
SCOTCH_OPTION_DETERMINISTIC, SCOTCH_OPTION_FIXED_SEED = 0, 1


def _scotch_strategy(pyscotch: Any, balance: float, quality: bool) -> Any:
    from pyscotch.strategy import StrategyFlags

    s = pyscotch.Strategy()
    flags = StrategyFlags.QUALITY if quality else StrategyFlags.DEFAULT
    s.request_mapping(flags, balance=max(0.0, float(balance)))
    return s


def _scotch_run(pys: Any, graph: NeuronGraph, seed: int, deterministic: bool,
                balance: float, quality: bool, budget: Budget | None,
                solve: Any) -> np.ndarray:
    """``solve(scotch graph, strategy)`` seeded (the C call cannot poll ``budget``: it
    runs under :meth:`~chipsched.budget.Budget.call`, in a forked process). The graph
    and its context are built where Scotch runs: a context starts Scotch's threads, and
    a process forked after that has none of them (the child waited for them until the
    budget killed it — Scotch under any time limit found nothing)."""

    def run() -> np.ndarray:
        with _cpus_kept():
            sg, _ctx, _g = _scotch_graph(pys, graph, seed, deterministic)
            strat = _scotch_strategy(pys, balance, quality)
            pys.random_seed(int(seed) % (2**31 - 1))
            pys.random_reset()
            return np.asarray(solve(sg, strat), dtype=np.int64)

    return run() if budget is None else budget.call("running Scotch", run)


@contextlib.contextmanager
def _cpus_kept() -> Iterator[None]:
    """Give the calling thread back the CPUs it had: binding a graph to a Scotch context
    pins the calling thread to CPU 0 (Scotch's thread binding), and every thread the
    process starts afterwards — CP-SAT's workers, a pytest worker's next test — would
    share that one core."""
    get = getattr(os, "sched_getaffinity", None)
    cpus = get(0) if get is not None else None
    try:
        yield
    finally:
        if cpus is not None and os.sched_getaffinity(0) != cpus:
            os.sched_setaffinity(0, cpus)


def scotch_mapping(graph: NeuronGraph, rows: int, cols: int, capacity: int, seed: int = 0,
                   quality: bool = False, headroom: float = 0.0, deterministic: bool = True,
                   budget: Budget | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Scotch's static mapping (``SCOTCH_graphMap``, dual recursive bipartitioning of the
    graph and a ``mesh2D`` target together) onto the smallest sub-mesh that holds the
    graph (:func:`scotch_target`), its imbalance set so a core may reach the capacity,
    repaired if Scotch overshoots it (:func:`repair_capacity`). Returns each vertex's
    core in the ``rows × cols`` array (row-major) and stats. Scotch runs in a
    deterministic, seeded context, so a seed gives one mapping in any process; the C
    call cannot poll ``budget`` and runs under
    :meth:`~chipsched.budget.Budget.call`."""
    pys = _pyscotch()
    T = graph.total_size
    tr, tc = scotch_target(T, capacity, rows, cols, headroom)
    balance = capacity * tr * tc / T - 1
    arch = pys.Architecture()
    arch.mesh2d(tc, tr)  # terminal t sits at x = t mod tc, y = t div tc
    term = _scotch_run(pys, graph, seed, deterministic, balance, quality, budget,
                       lambda sg, strat: sg.map(arch, strat))
    stats: dict[str, Any] = {"target": f"mesh2D {tr}×{tc}", "imbalance": balance,
                             "scotch_cut": int(graph.cut_weight(term))}
    stats.update(repair_capacity(graph, term, capacity, tr * tc))
    core = (term // tc) * cols + term % tc
    return core, stats


def scotch_partition(graph: NeuronGraph, parts: int, capacity: int, cores: int,
                     seed: int = 0, quality: bool = False, deterministic: bool = True,
                     budget: Budget | None = None) -> tuple[np.ndarray, dict[str, Any]]:
    """Scotch's k-way partition (static mapping onto a complete graph of ``parts``
    vertices) with the capacity as balance bound, repaired if needed — the peer as a
    partitioner before another placement."""
    pys = _pyscotch()
    parts = _check_parts(parts, graph, capacity, cores)
    if parts == 1:
        return np.zeros(graph.n, np.int64), {"imbalance": 0.0, "repair_moves": 0, "parts": 1}
    T = graph.total_size
    balance = capacity * parts / T - 1
    part = _scotch_run(pys, graph, seed, deterministic, balance, quality, budget,
                       lambda sg, strat: sg.partition(parts, strat))
    stats: dict[str, Any] = {"imbalance": balance, "scotch_cut": int(graph.cut_weight(part))}
    stats.update(repair_capacity(graph, part, capacity, cores))
    return part, stats
