"""Exact placement of groups on a mesh by branch and bound with the Gilmore–Lawler bound.

The quadratic assignment problem min Σ_{g<h} F_gh·D(p_g, p_h) over injective placements
p of G groups on N ≥ G cores (D = Manhattan distance) — the placement of seed 004's
neuron groups. Depth-first search assigning the groups in a fixed order (largest total
flow first); at every node the Gilmore–Lawler bound (Gilmore 1962; Lawler 1963):

    2·obj ≥ 2·(cost among placed groups)
            + min over assignments of the unplaced groups u to free cores c of
              Σ_u [ 2·Σ_placed a F_ua·D(c, p_a)
                    + minimal scalar product of F_u,unplaced (descending) and the
                      distances from c to the other free cores (ascending) ]

computed with the Hungarian algorithm; its dual gives every child a bound (node bound +
reduced cost) so that children are pruned and ordered without solving their own
assignment problem first. The first group is restricted to one representative of every
orbit of the mesh's symmetry group (quarter of a rectangle; an eighth of a square).

The search is resumable in chunks of nodes, so that the caller can stop at a time limit
and report the best proven lower bound (the smallest bound among the open nodes).
"""

from __future__ import annotations

import time

import numba as nb
import numpy as np

from chipsched.budget import Budget


@nb.njit(cache=True)
def _hungarian(a, m, k):  # pragma: no cover - numba
    """Min-cost assignment of m rows to distinct columns of the m×k matrix ``a`` (m ≤ k);
    returns (cost, row potentials u, column potentials v) with reduced costs
    a[i, j] − u[i] − v[j] ≥ 0 (e-maxx formulation, O(m²k))."""
    INF = 1 << 60
    u = np.zeros(m + 1, np.int64)
    v = np.zeros(k + 1, np.int64)
    p = np.zeros(k + 1, np.int64)
    way = np.zeros(k + 1, np.int64)
    minv = np.empty(k + 1, np.int64)
    used = np.empty(k + 1, np.bool_)
    for i in range(1, m + 1):
        p[0] = i
        j0 = 0
        for j in range(k + 1):
            minv[j] = INF
            used[j] = False
        while True:
            used[j0] = True
            i0 = p[j0]
            delta = INF
            j1 = 0
            for j in range(1, k + 1):
                if not used[j]:
                    cur = a[i0 - 1, j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j] = cur
                        way[j] = j0
                    if minv[j] < delta:
                        delta = minv[j]
                        j1 = j
            for j in range(k + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while True:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
            if j0 == 0:
                break
    cost = 0
    for j in range(1, k + 1):
        if p[j] != 0:
            cost += a[p[j] - 1, j - 1]
    return cost, u[1:], v[1:]


@nb.njit(cache=True)
def _node_bound(F, D, order, d, pos, free, nfree, a):  # pragma: no cover - numba
    """Gilmore–Lawler bound (doubled units) of the node where order[:d] are placed at
    pos[...] and ``free[:nfree]`` are the free cores; fills ``a`` (m × nfree) and returns
    (bound2 of the unplaced part, row potentials, column potentials).

    The flows of each unplaced group (descending) and the distances from each free core
    to the other free cores (ascending) are sorted once each, not once per (group, core)
    pair: O(m² log m + nfree² log nfree + m·nfree·(m + d)) instead of
    O(m·nfree² log nfree)."""
    G = order.shape[0]
    m = G - d
    t = max(m - 1, 0)
    fs = np.empty((m, t), np.int64)
    fl = np.empty(t, np.int64)
    for i in range(m):
        g = order[d + i]
        k = 0
        for q in range(m):
            if q != i:
                fl[k] = F[g, order[d + q]]
                k += 1
        fs[i, :] = -np.sort(-fl)
    dl = np.empty(max(nfree - 1, 0), np.int64)
    k2 = min(t, max(nfree - 1, 0))
    for jj in range(nfree):
        c = free[jj]
        t2 = 0
        for q in range(nfree):
            if q != jj:
                dl[t2] = D[c, free[q]]
                t2 += 1
        ds = np.sort(dl)
        for i in range(m):
            g = order[d + i]
            lin = 0
            for q in range(d):
                lin += F[g, order[q]] * D[c, pos[order[q]]]
            msp = 0
            for q in range(k2):
                msp += fs[i, q] * ds[q]
            a[i, jj] = 2 * lin + msp
    cost, u, v = _hungarian(a, m, nfree)
    return cost, u, v


@nb.njit(cache=True)
def _run(F, D, order, first_ok, pos, ub, best, depth_arr, cand, candb, ncand, cpos, fixed,
         free, budget):  # pragma: no cover - numba
    """Resumable depth-first branch and bound; state lives in the arrays. Returns
    (status, nodes, ub): status 0 = finished (ub optimal), 1 = budget exhausted."""
    G = order.shape[0]
    N = D.shape[0]
    nodes = 0
    a = np.empty((G, N), np.int64)
    used = np.zeros(N, np.bool_)
    while True:
        d = depth_arr[0]
        if d < 0:
            return 0, nodes, ub
        if nodes >= budget:
            return 1, nodes, ub
        if cpos[d] < 0:
            # enter node at depth d: placed order[:d]
            nodes += 1
            if d == G:
                if fixed[d] < ub:
                    ub = fixed[d]
                    for q in range(G):
                        best[order[q]] = pos[order[q]]
                depth_arr[0] = d - 1
                continue
            for c in range(N):
                used[c] = False
            for q in range(d):
                used[pos[order[q]]] = True
            nf = 0
            for c in range(N):
                if not used[c]:
                    free[nf] = c
                    nf += 1
            sub = a[:G - d, :nf]
            lb2, u, v = _node_bound(F, D, order, d, pos, free, nf, sub)
            base = 2 * fixed[d] + lb2
            if (base + 1) // 2 >= ub:
                depth_arr[0] = d - 1
                continue
            nc = 0
            g = order[d]
            for jj in range(nf):
                c = free[jj]
                if d == 0 and not first_ok[c]:
                    continue
                b2 = base + (sub[0, jj] - u[0] - v[jj])
                if (b2 + 1) // 2 < ub:
                    cand[d, nc] = c
                    candb[d, nc] = b2
                    nc += 1
            # sort candidates by bound (insertion sort, nc <= N)
            for i in range(1, nc):
                kc = cand[d, i]
                kb = candb[d, i]
                j = i - 1
                while j >= 0 and candb[d, j] > kb:
                    cand[d, j + 1] = cand[d, j]
                    candb[d, j + 1] = candb[d, j]
                    j -= 1
                cand[d, j + 1] = kc
                candb[d, j + 1] = kb
            ncand[d] = nc
            cpos[d] = 0
        # take the next child
        i = cpos[d]
        while i < ncand[d] and (candb[d, i] + 1) // 2 >= ub:
            i += 1
        if i >= ncand[d]:
            cpos[d] = -1
            depth_arr[0] = d - 1
            continue
        cpos[d] = i + 1
        g = order[d]
        c = cand[d, i]
        pos[g] = c
        add = 0
        for q in range(d):
            add += F[g, order[q]] * D[c, pos[order[q]]]
        fixed[d + 1] = fixed[d] + add
        cpos[d + 1] = -1
        depth_arr[0] = d + 1


def symmetry_representatives(rows: int, cols: int) -> np.ndarray:
    """Mask of cores that represent every orbit of the mesh's symmetry group: row ≤
    (rows−1)/2 and col ≤ (cols−1)/2, and row ≤ col on a square mesh."""
    r, c = np.divmod(np.arange(rows * cols), cols)
    ok = (r <= (rows - 1) // 2) & (c <= (cols - 1) // 2)
    if rows == cols:
        ok &= r <= c
    return ok


def solve_qap_bnb(F: np.ndarray, rows: int, cols: int, budget: Budget | None = None,
                  incumbent: np.ndarray | None = None, chunk: int | None = None
                  ) -> tuple[np.ndarray | None, int, int, bool, int]:
    """Exact placement of G groups with symmetric integer flows ``F`` (G×G) on a
    rows×cols mesh. ``incumbent`` (group → core) gives the initial upper bound.
    ``chunk`` nodes run between two polls of the ``budget`` (default: about 10⁸
    operations' worth, so that a time limit is honoured on large meshes too).
    Returns (placement, objective, lower bound, proven optimal, nodes)."""
    F = np.ascontiguousarray(F, dtype=np.int64)
    G = F.shape[0]
    N = rows * cols
    if chunk is None:
        chunk = max(1, min(20000, int(1e8 // max(1, G * G * N))))
    r, c = np.divmod(np.arange(N), cols)
    D = (np.abs(r[:, None] - r[None, :]) + np.abs(c[:, None] - c[None, :])).astype(np.int64)
    order = np.argsort(-F.sum(axis=1), kind="stable").astype(np.int64)
    first_ok = symmetry_representatives(rows, cols)

    def value(p: np.ndarray) -> int:
        return int((F * D[p[:, None], p[None, :]]).sum() // 2)

    if incumbent is not None:
        best = np.asarray(incumbent, dtype=np.int64).copy()
        ub = value(best)
    else:
        best = np.full(G, -1, np.int64)
        ub = np.iinfo(np.int64).max // 4
    if G == 0:
        return np.zeros(0, np.int64), 0, 0, True, 0
    pos = np.full(G, -1, np.int64)
    depth = np.array([0], np.int64)
    cand = np.zeros((G + 1, N), np.int64)
    candb = np.zeros((G + 1, N), np.int64)
    ncand = np.zeros(G + 1, np.int64)
    cpos = np.full(G + 1, -1, np.int64)
    fixed = np.zeros(G + 1, np.int64)
    free = np.zeros(N, np.int64)
    nodes = 0
    longest = 0.0
    while True:
        t1 = time.perf_counter()
        status, k, ub = _run(F, D, order, first_ok, pos, int(ub), best, depth, cand, candb,
                             ncand, cpos, fixed, free, chunk)
        longest = max(longest, time.perf_counter() - t1)
        nodes += int(k)
        if status == 0:
            return (best if best[0] >= 0 else None), int(ub), int(ub), True, nodes
        # stop when the next chunk could end past the limit (a chunk on a large mesh is
        # one node, whose Gilmore–Lawler bound can take a second; the root's is longest)
        if budget is not None:
            left = budget.remaining()
            if budget.exhausted() or (left is not None and left < longest):
                break
    # open nodes: the unexplored children at every depth of the current path, and the
    # current node (its parent's bound for it when it has not been expanded yet)
    lb = int(ub)
    dcur = int(depth[0])
    for d in range(dcur + 1):
        if cpos[d] >= 0:
            for i in range(int(cpos[d]), int(ncand[d])):
                lb = min(lb, int((candb[d, i] + 1) // 2))
    if cpos[dcur] < 0:
        lb = min(lb, int((candb[dcur - 1, cpos[dcur - 1] - 1] + 1) // 2) if dcur > 0 else 0)
    return (best if best[0] >= 0 else None), int(ub), lb, False, nodes


def gilmore_lawler_bound(F: np.ndarray, D: np.ndarray) -> int:
    """The Gilmore–Lawler bound of the root (nothing placed) on min Σ_{g<h} F_gh·D(p_g,
    p_h) over injective placements of the G groups of symmetric integer flows ``F`` on
    the locations of the symmetric integer distance matrix ``D`` (N × N, N ≥ G; the
    mesh's hops for a placement) — see the module docstring."""
    F = np.ascontiguousarray(F, dtype=np.int64)
    D = np.ascontiguousarray(D, dtype=np.int64)
    G = F.shape[0]
    N = D.shape[0]
    if G < 2:
        return 0
    order = np.arange(G, dtype=np.int64)
    pos = np.full(G, -1, np.int64)
    free = np.arange(N, dtype=np.int64)
    a = np.empty((G, N), np.int64)
    cost2, _, _ = _node_bound(F, D, order, 0, pos, free, N, a)
    return int((cost2 + 1) // 2)
