"""The dynamic programs: exact for the fixed item order on both platforms."""

from __future__ import annotations

import math

import numpy as np

from chipsched.errors import InputError
from chipsched.objective import Objective
from chipsched.problems.region_split import SocInstance, soc_tables
from chipsched.problems.region_split.objectives import aggregate


def best_final(final: np.ndarray, kind: str, tracked: bool) -> tuple[float, int, int]:
    """(value, regions r, sub-chiplets u) of the best final DP entry ``final[r, u]``
    (Σ or max of the stages; ``count_max``: r · max, which needs r tracked)."""
    if tracked:
        rs = np.arange(final.shape[0])[:, None]
        safe = np.where(np.isfinite(final), final, 0.0)
        score = np.where(np.isfinite(final), rs * safe, np.inf) if kind == "count_max" \
            else final.copy()
        score[0] = np.inf
    else:
        score = final
    r, u = np.unravel_index(int(np.argmin(score)), score.shape)
    value = float(score[r, u])
    if not math.isfinite(value):
        raise InputError("instance", "no feasible region split", "check max_regions")
    return value, int(r), int(u)


def dp_chiplet(table: np.ndarray, M: int, objective: Objective | str,
               max_regions: int | None = None
               ) -> tuple[float, list[tuple[int, int]], list[int]]:
    """Optimal regions and counts over the stage table, by dynamic programming.

    ``F[r, k, u]`` = best value (Σ or max of stage times) of items 0..k−1 cut into r
    regions using exactly u sub-chiplets; ``F[r, k, u] = min over i < k, m ≤ u of
    F[r−1, i, u−m] ⊕ c[i, k−1, m]``. The region count is tracked only when it
    matters (``sync_latency`` = R·max, or a binding ``max_regions``); otherwise r is
    dropped (one layer of F). Exact for the fixed item order.
    """
    kind = aggregate(objective)
    n = table.shape[0]
    Rmax = min(n, M, max_regions or n)
    tracked = kind == "count_max" or Rmax < min(n, M)
    D = Rmax + 1 if tracked else 1
    add = kind == "sum"
    F = np.full((D, n + 1, M + 1), np.inf)
    F[0, 0, 0] = 0.0
    arg_i = np.full((D, n + 1, M + 1), -1, dtype=np.int64)
    arg_m = np.full((D, n + 1, M + 1), -1, dtype=np.int64)
    src = slice(0, D - 1) if tracked else slice(0, 1)
    dst = slice(1, D) if tracked else slice(0, 1)
    for k in range(1, n + 1):
        for m in range(1, M + 1):
            c = table[:k, k - 1, m - 1]  # (k,)
            A = F[src, :k, :M + 1 - m]  # (D', k, M+1-m)
            cand = A + c[None, :, None] if add else np.maximum(A, c[None, :, None])
            best_i = np.argmin(cand, axis=1)  # (D', M+1-m)
            val = np.take_along_axis(cand, best_i[:, None, :], axis=1)[:, 0, :]
            cur = F[dst, k, m:]
            better = val < cur
            F[dst, k, m:] = np.where(better, val, cur)
            arg_i[dst, k, m:] = np.where(better, best_i, arg_i[dst, k, m:])
            arg_m[dst, k, m:] = np.where(better, m, arg_m[dst, k, m:])
    value, r, u = best_final(F[:, n, :], kind, tracked)
    regions, counts = [], []
    k = n
    while k > 0:
        i, m = int(arg_i[r, k, u]), int(arg_m[r, k, u])
        regions.append((i, k - 1))
        counts.append(m)
        k, u = i, u - m
        r = r - 1 if tracked else r
    return value, regions[::-1], counts[::-1]


def dp_soc(inst: SocInstance) -> tuple[float, list[tuple[int, int]], list[int]]:
    """DP over (regions r, last layer j, its processor p, the next processor q).

    ``G[r, j, p, q]`` = best value of layers 0..j cut into r sub-models, the last on
    chain processor p followed by one on q (q = P: none, then j = L−1), with every
    stage complete (the handover after j depends on q, hence q in the state).
    """
    L, P = inst.n_items, inst.n_procs
    Rmax = inst.region_limit
    pre, hand = soc_tables(inst)
    add = aggregate(inst.objective) == "sum"
    G = np.full((Rmax + 1, L, P, P + 1), np.inf)
    arg = np.full((Rmax + 1, L, P, P + 1, 2), -1, dtype=np.int64)  # (start i, prev p')
    for r in range(1, Rmax + 1):
        # H[i, p] = best over r−1 regions ending at i−1 whose next processor is p
        if r > 1:
            H = np.full((L, P), np.inf)
            Hp = np.full((L, P), -1, dtype=np.int64)
            for p in range(P):
                if p == 0:
                    continue
                prev = G[r - 1, :, :p, p]  # (L, p) over j = i−1 and p' < p
                Hp[1:, p] = np.argmin(prev[:-1], axis=1)
                H[1:, p] = prev[:-1].min(axis=1)
        for j in range(L):
            qs = [P] if j == L - 1 else list(range(P))
            for p in range(P):
                seg = pre.seg(np.arange(j + 1), j, p)  # (j+1,) over start i
                for q in qs:
                    if q != P and q <= p:
                        continue
                    st = seg + (hand[j, p, q] if q != P else 0.0)
                    if r == 1:
                        val, i, pp = st[0], 0, -1
                    else:
                        h = H[:j + 1, p]
                        cand = h + st if add else np.maximum(h, st)
                        i = int(np.argmin(cand))
                        val, pp = cand[i], int(Hp[i, p])
                    if val < G[r, j, p, q]:
                        G[r, j, p, q] = val
                        arg[r, j, p, q] = (i, pp)
    last = G[1:, L - 1, :, P]  # (Rmax, P)
    score = last * np.arange(1, Rmax + 1)[:, None] if aggregate(inst.objective) == "count_max" \
        else last
    r0, p0 = np.unravel_index(int(np.argmin(score)), score.shape)
    value = float(score[r0, p0])
    if not math.isfinite(value):
        raise InputError("instance", "no split of the layers along the processor chain, in "
                         "its order, puts every layer on a processor that can run it",
                         "give the chain in another order (-O chain=…) or use another chip")
    r, j, p, q = r0 + 1, L - 1, int(p0), P
    regions, procs = [], []
    while r > 0:
        i, pp = (int(v) for v in arg[r, j, p, q])
        regions.append((i, j))
        procs.append(p)
        r, j, q, p = r - 1, i - 1, p, pp
    return value, regions[::-1], procs[::-1]
