"""Robust tabu search for the placement of neuron groups on the mesh (a QAP).

Taillard, "Robust taboo search for the quadratic assignment problem", Parallel
Computing 17 (1991) 443–455 (Ro-TS): best non-tabu pairwise exchange per iteration over
the full O(N²) neighbourhood, kept in a delta matrix updated in O(1) per pair after a
move (O(N) for the pairs that touch the moved facilities); a move is tabu when both
facilities would return to locations they held within their tenure, drawn uniformly in
[0.9 N, 1.1 N] per move; aspiration by a new best, and by a facility not seen on the
location for ``aspiration·N²`` iterations (the diversification that makes it robust).

The G groups are padded to the N cores with zero-flow dummies; flows = the quotient
graph's weights, distances = Manhattan hops, so the cost is twice the hop-weighted
traffic (ordered pairs). Dense: F, D and the delta matrix are N×N int64, hence
``max_cores``. The numba kernel runs in chunks so that a time budget is honoured.
"""

from __future__ import annotations

import time

import numba as nb
import numpy as np

from chipsched.budget import Budget
from chipsched.errors import InputError
from chipsched.neurongraph import NeuronGraph

from .placement import check_fits, manhattan_matrix, placement_traffic

#: Largest mesh the dense tabu search accepts (F, D, delta and the tabu list: 4 N²
#: int64 = 128 MiB at 2,048 cores).
MAX_CORES = 2048
#: Tabu tenure range as multiples of N, and the aspiration horizon in units of N²
#: (Taillard 1991's values).
TENURE = (0.9, 1.1)
ASPIRATION = 5.0
#: ``place_tabu(variant="auto")``: the dense Ro-TS up to this many cores, the sparse
#: search above (where Ro-TS's O(N²) iterations fall behind within seconds).
DENSE_AUTO_MAX = 256


@nb.njit(cache=True)
def _delta(F, D, p, r, s):  # pragma: no cover - numba
    """Change of Σ_ij F[i,j]·D[p_i,p_j] when facilities r and s swap (F, D symmetric,
    zero diagonals)."""
    pr, ps = p[r], p[s]
    d = 0
    for k in range(p.shape[0]):
        if k != r and k != s:
            pk = p[k]
            d += (F[r, k] - F[s, k]) * (D[ps, pk] - D[pr, pk])  # rows: F, D symmetric
    return 2 * d


@nb.njit(cache=True)
def _all_deltas(F, D, p):  # pragma: no cover - numba
    n = p.shape[0]
    delta = np.zeros((n, n), dtype=np.int64)
    for r in range(n - 1):
        for s in range(r + 1, n):
            delta[r, s] = _delta(F, D, p, r, s)
    return delta


def initial_deltas(F: np.ndarray, D: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Every swap delta (upper triangle) at once from one matrix product:
    with Dp = D[p][:, p] and M = F·Dp, Δ(r, s) = 2 (M[r,s] + M[s,r] − M[r,r] − M[s,s] +
    2 F[r,s]·Dp[r,s]) — the O(N³) work in BLAS (float64, exact while every partial sum
    stays below 2⁵³; else the numba loop :func:`_all_deltas`)."""
    n = p.shape[0]
    Dp = D[p][:, p]
    if float(np.abs(F).sum(axis=0).max()) * float(np.abs(D).max()) * 8 >= 2.0**53:
        return _all_deltas(F, D, p)
    M = F.astype(np.float64) @ Dp.astype(np.float64)
    d = np.diag(M)
    full = M + M.T - d[:, None] - d[None, :] + 2.0 * F * Dp
    out = np.rint(2.0 * full).astype(np.int64)
    return np.triu(out, 1) if n > 1 else np.zeros((n, n), np.int64)


@nb.njit(cache=True)
def _cost(F, D, p):  # pragma: no cover - numba
    n = p.shape[0]
    c = 0
    for i in range(n):
        for j in range(n):
            c += F[i, j] * D[p[i], p[j]]
    return c


@nb.njit(cache=True)
def _rots(F, D, p, delta, tabu, start_it, n_iter, cur, best, best_p, tmin, tmax,
          aspiration, seed, real):  # pragma: no cover - numba
    """``n_iter`` Ro-TS iterations from iteration ``start_it``; ``p``, ``delta``,
    ``tabu`` and ``best_p`` are updated in place. Facilities ``real..n−1`` are zero-flow
    dummies: swapping two of them changes nothing, so those pairs are skipped. Returns
    (current cost, best cost)."""
    np.random.seed(seed)
    n = p.shape[0]
    for it in range(start_it, start_it + n_iter):
        ri, si = -1, -1
        min_d = np.iinfo(np.int64).max
        aspired_found = False
        for r in range(min(n - 1, real)):
            for s in range(r + 1, n):
                d = delta[r, s]
                t1, t2 = tabu[r, p[s]], tabu[s, p[r]]
                allowed = t1 < it or t2 < it
                aspired = t1 < it - aspiration or t2 < it - aspiration or cur + d < best
                if (aspired and not aspired_found) or \
                        (aspired and aspired_found and d < min_d) or \
                        (not aspired and not aspired_found and allowed and d < min_d):
                    ri, si, min_d = r, s, d
                    if aspired:
                        aspired_found = True
        if ri < 0:
            continue  # every move tabu and none aspired: wait for the tenures to expire
        u, v = ri, si
        p[u], p[v] = p[v], p[u]
        cur += delta[u, v]
        tabu[u, p[v]] = it + np.random.randint(tmin, tmax + 1)
        tabu[v, p[u]] = it + np.random.randint(tmin, tmax + 1)
        if cur < best:
            best = cur
            best_p[:] = p
        # update the deltas (Taillard 1991): O(1) for pairs disjoint from {u, v}
        for r in range(n - 1):
            for s in range(r + 1, n):
                if r != u and r != v and s != u and s != v:
                    delta[r, s] += 2 * (F[r, u] - F[r, v] + F[s, v] - F[s, u]) * (
                        D[p[s], p[u]] - D[p[s], p[v]] + D[p[r], p[v]] - D[p[r], p[u]])
                else:
                    delta[r, s] = _delta(F, D, p, r, s)
    return cur, best


def robust_tabu(flow: np.ndarray, dist: np.ndarray, start: np.ndarray, seed: int = 0,
                iterations: int | None = None, budget: Budget | None = None,
                tenure: tuple[float, float] = TENURE, aspiration: float = ASPIRATION,
                chunk: int | None = None, real: int | None = None
                ) -> tuple[np.ndarray, dict[str, float]]:
    """Ro-TS on the dense QAP ``min Σ flow[i,j]·dist[p_i,p_j]`` (both symmetric, zero
    diagonals, integers) from the permutation ``start``; facilities ``real..N−1`` (if
    given) are zero-flow dummies. Stops after ``iterations`` (default 1,000·N) or once
    ``budget`` is over, whichever comes first: the budget is polled between chunks of
    iterations sized to ~10⁷ operations (at least one iteration). Returns the best
    permutation and stats (``stopped``: why it ended early, "" when it did not)."""
    t0 = time.perf_counter()
    F = np.ascontiguousarray(flow, dtype=np.int64)
    D = np.ascontiguousarray(dist, dtype=np.int64)
    n = F.shape[0]
    real = n if real is None else int(real)
    p = np.ascontiguousarray(start, dtype=np.int64).copy()
    if n < 2 or real < 1:
        return p, {"tabu_iterations": 0, "tabu_cost_start": 0, "tabu_cost": 0,
                   "stopped": ""}
    total = 1000 * n if iterations is None else int(iterations)
    chunk = chunk or max(1, min(total, 10_000_000 // (3 * n * n) + 1))
    tmin = max(1, int(tenure[0] * n))
    tmax = max(tmin, int(tenure[1] * n))
    asp = int(aspiration * n * n)
    delta = np.ascontiguousarray(initial_deltas(F, D, p))
    # Taillard's start: distinct times in the past, so that aspiration by "not held for
    # aspiration·N² iterations" starts only after about that many iterations
    tabu = -(n * np.arange(n, dtype=np.int64)[:, None] + np.arange(n, dtype=np.int64)[None, :]
             + 1)
    cur = int(_cost(F, D, p))
    start_cost = cur
    best, best_p = cur, p.copy()
    ss = np.random.SeedSequence(seed)
    done = 0
    stopped = ""
    while done < total:
        if budget is not None and budget.exhausted():
            stopped = budget.stop_reason
            break
        step = min(chunk, total - done)
        seed_k = int(ss.spawn(1)[0].generate_state(1)[0] % (2**31 - 1))
        cur, best = _rots(F, D, p, delta, tabu, done + 1, step, cur, best, best_p, tmin,
                          tmax, asp, seed_k, real)
        done += step
    return best_p, {"tabu_iterations": done, "tabu_cost_start": start_cost // 2,
                    "tabu_cost": int(best) // 2, "tabu_s": time.perf_counter() - t0,
                    "stopped": stopped}


def place_tabu(q: NeuronGraph, rows: int, cols: int, start: np.ndarray, seed: int = 0,
               iterations: int | None = None, budget: Budget | None = None,
               max_cores: int = MAX_CORES, variant: str = "auto"
               ) -> tuple[np.ndarray, dict[str, float]]:
    """Tabu placement of the groups of ``q`` on the ``rows``×``cols`` mesh, started from
    ``start`` (group → core, e.g. seed 004's recursive bisection). ``variant``:
    ``"dense"`` — Ro-TS with groups padded by zero-flow dummies to the N cores (N² memory,
    ≤ ``max_cores``); ``"sparse"`` — :func:`sparse_tabu` (any size); ``"auto"`` — dense
    up to ``DENSE_AUTO_MAX`` cores (where its full neighbourhood reaches the QAPLIB optima),
    sparse above (measured in docs/benchmarks.md). Returns (group → core, stats)."""
    G, N = q.n, rows * cols
    check_fits(G, rows, cols)
    if variant not in ("auto", "dense", "sparse"):
        raise InputError("tabu variant", f"unknown {variant!r}", "use auto, dense or sparse")
    if variant == "sparse" or (variant == "auto" and N > DENSE_AUTO_MAX):
        gc, st = sparse_tabu(q, rows, cols, start, seed, iterations, budget)
        return gc, {**st, "traffic_before_tabu": placement_traffic(q, start, cols)}
    if N > max_cores:
        raise InputError("tabu", f"{N} cores is above the dense tabu search's limit "
                         f"({max_cores}: N² delta matrix)", "use the sparse variant "
                         "(variant=sparse or auto) or a smaller mesh")
    start = np.asarray(start, dtype=np.int64)
    free = np.setdiff1d(np.arange(N), start)
    perm = np.concatenate([start, free])
    flow = np.zeros((N, N), dtype=np.int64)
    flow[:G, :G] = q.dense_weights()
    best, st = robust_tabu(flow, manhattan_matrix(rows, cols), perm, seed, iterations,
                           budget, real=G)
    gc = best[:G].copy()
    st = {**st, "traffic_before_tabu": placement_traffic(q, start, cols),
          "tabu_variant": "dense"}
    return gc, st


# ---------------------------------------------------------------------------------------
# sparse variant for meshes of any size


@nb.njit(cache=True)
def _move_delta(ptr, idx, w, loc, cols, r, dst, skip):  # pragma: no cover - numba
    """Change of Σ w·hops over r's edges (each undirected edge once) when r moves to
    core ``dst``, the edge to ``skip`` left out (a swap partner: that edge keeps its
    length); O(deg r) on the sparse flows."""
    pr = loc[r]
    yr, xr = pr // cols, pr % cols
    yd, xd = dst // cols, dst % cols
    d = 0
    for j in range(ptr[r], ptr[r + 1]):
        k = idx[j]
        if k == skip:
            continue
        yk, xk = loc[k] // cols, loc[k] % cols
        d += w[j] * (abs(yd - yk) + abs(xd - xk) - abs(yr - yk) - abs(xr - xk))
    return d


@nb.njit(cache=True)
def _swap_delta(ptr, idx, w, loc, cols, r, s):  # pragma: no cover - numba
    """Change of Σ w·hops when groups r and s swap cores: O(deg r + deg s)."""
    return (_move_delta(ptr, idx, w, loc, cols, r, loc[s], s) +
            _move_delta(ptr, idx, w, loc, cols, s, loc[r], r))


@nb.njit(cache=True)
def _sparse_ts(ptr, idx, w, loc, where, rows, cols, n_real, start_it, n_iter, cur, best,
               tabu_until, journal, jn, radius, tmin, tmax, seed):  # pragma: no cover
    """``n_iter`` iterations of the sparse tabu search (see :func:`sparse_tabu`); ``loc``
    (group → core), ``where`` (core → group, −1 free), ``tabu_until`` and the journal of
    swaps made since the last new best are updated in place. Returns (current cost,
    best cost, journal length)."""
    np.random.seed(seed)
    for it in range(start_it, start_it + n_iter):
        r = np.random.randint(0, n_real)
        if ptr[r + 1] == ptr[r]:
            continue
        # the flow-weighted centre of r's partners: where r would rather be
        sx = 0
        sy = 0
        sw = 0
        for j in range(ptr[r], ptr[r + 1]):
            k = idx[j]
            sy += w[j] * (loc[k] // cols)
            sx += w[j] * (loc[k] % cols)
            sw += w[j]
        cy = (2 * sy + sw) // (2 * sw)
        cx = (2 * sx + sw) // (2 * sw)
        best_d = np.iinfo(np.int64).max
        best_c = -1
        for y in range(max(0, cy - radius), min(rows, cy + radius + 1)):
            for x in range(max(0, cx - radius), min(cols, cx + radius + 1)):
                c = y * cols + x
                s = where[c]
                if s == r:
                    continue
                if s < 0:  # a free core: a move, no partner
                    d = _move_delta(ptr, idx, w, loc, cols, r, c, -1)
                    tabu = it < tabu_until[r]
                else:
                    d = _swap_delta(ptr, idx, w, loc, cols, r, s)
                    tabu = it < tabu_until[r] or it < tabu_until[s]
                if tabu and cur + d >= best:  # aspiration: a new best is always allowed
                    continue
                if d < best_d:
                    best_d = d
                    best_c = c
        if best_c < 0:
            continue
        s = where[best_c]
        pr = loc[r]
        loc[r] = best_c
        where[best_c] = r
        where[pr] = s
        if s >= 0:
            loc[s] = pr
            tabu_until[s] = it + np.random.randint(tmin, tmax + 1)
        tabu_until[r] = it + np.random.randint(tmin, tmax + 1)
        cur += best_d
        journal[jn, 0] = r
        journal[jn, 1] = pr
        journal[jn, 2] = best_c
        jn += 1
        if cur < best:
            best = cur
            jn = 0  # the current placement is the best: nothing to undo
    return cur, best, jn


def _undo(loc: np.ndarray, where: np.ndarray, journal: np.ndarray) -> np.ndarray:
    """Undo the journal's moves (group, from, to), newest first; returns ``loc``."""
    for r, src, dst in journal[::-1]:
        s = where[src]
        where[dst], where[src] = s, r
        loc[r] = src
        if s >= 0:
            loc[s] = dst
    return loc


def sparse_tabu(q: NeuronGraph, rows: int, cols: int, start: np.ndarray, seed: int = 0,
                iterations: int | None = None, budget: Budget | None = None,
                radius: int = 2, tenure: tuple[int, int] = (7, 13),
                chunk: int | None = None) -> tuple[np.ndarray, dict[str, float]]:
    """Tabu search for the placement on meshes of any size [ours, after Ro-TS]: the
    flows stay sparse (the quotient graph's CSR) and a swap's delta is computed in
    O(deg r + deg s) from Manhattan hops, so memory is O(G + edges) instead of Ro-TS's
    dense N×N matrices. Each iteration draws a group r, takes the cores in the
    (2·radius+1)² box around the flow-weighted centre of r's partners, and makes the
    best swap with their groups (or move to a free core) — even a worsening one — that
    is not tabu (tabu: either group moved within its tenure, drawn in ``tenure``;
    aspiration: a new best); the best placement is kept (moves since it are undone at
    the end). Stops after ``iterations`` (default 200·G) or once ``budget`` is over,
    polled between chunks. Returns (group → core, stats)."""
    t0 = time.perf_counter()
    G, N = q.n, rows * cols
    check_fits(G, rows, cols)
    loc = np.ascontiguousarray(start, dtype=np.int64).copy()
    where = np.full(N, -1, np.int64)
    where[loc] = np.arange(G)
    cur = placement_traffic(q, loc, cols)
    start_cost = best = cur
    total = 200 * G if iterations is None else int(iterations)
    if chunk is None:
        # ~10⁷ operations per chunk (an iteration rates (2·radius+1)² swaps of two rows
        # of the mean degree): the time limit is checked every ~0.1-0.25 s (measured on
        # 1,600 groups of mean degree 2-20; the box scan costs more than the formula
        # says on sparse flows), so a budget overshoots by at most that much
        per_it = (2 * radius + 1) ** 2 * (2 * q.nnz // max(1, G) + 1)
        chunk = int(min(200_000, max(1, 10_000_000 // per_it)))
    tabu_until = np.zeros(G, np.int64)
    journal = np.empty((max(1, chunk), 3), np.int64)
    ptr = q.indptr
    idx = q.indices.astype(np.int64)
    w = q.weights
    ss = np.random.SeedSequence(seed)
    done = 0
    jn = 0
    # the best placement itself once the journal back to it would outgrow a chunk (new
    # bests get rare late in a search: the journal must not grow with the iterations)
    saved: np.ndarray | None = None
    stopped = ""
    while done < total and G > 1:
        if budget is not None and budget.exhausted():
            stopped = budget.stop_reason
            break
        step = min(chunk, total - done)
        if jn + step > journal.shape[0]:
            journal = np.concatenate([journal[:jn], np.empty((step, 3), np.int64)])
        seed_k = int(ss.spawn(1)[0].generate_state(1)[0] % (2**31 - 1))
        before = best
        cur, best, jn = _sparse_ts(ptr, idx, w, loc, where, rows, cols, G, done + 1, step,
                                   cur, best, tabu_until, journal, jn, int(radius),
                                   int(tenure[0]), int(tenure[1]), seed_k)
        done += step
        if best < before:
            saved = None  # the journal starts at the new best
        if saved is not None:
            jn = 0  # the journal leads back to a placement already saved or worse
        elif jn > chunk:
            saved = _undo(loc.copy(), where.copy(), journal[:jn])
            jn = 0
    if saved is not None:
        loc = saved
    else:
        loc = _undo(loc, where, journal[:jn])
    assert placement_traffic(q, loc, cols) == best
    return loc, {"tabu_iterations": done, "tabu_cost_start": int(start_cost),
                 "tabu_cost": int(best), "tabu_s": time.perf_counter() - t0,
                 "tabu_variant": "sparse", "stopped": stopped}
