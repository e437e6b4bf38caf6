"""Exact region splitting over every convex partition of the item DAG: a DP over ideals.

A pipeline of R stages over a DAG is a chain of *ideals* (downward-closed item sets)
∅ = I₀ ⊂ I₁ ⊂ … ⊂ I_R = all items; stage r runs I_r ∖ I_{r−1}, a convex set, and every
edge leaving it goes to a later stage. Every such chain is a feasible split, and every
split whose stages are convex and acyclically ordered is such a chain — so a DP over
pairs of ideals is exact over the whole space, where the linear-order DP
(:func:`.dynprog.dp_chiplet`) is exact only for cuts of one topological order (the
special case where the DAG is a chain, whose ideals are its prefixes).

Tarnawski et al., "Efficient algorithms for device placement of DNN graph operators",
NeurIPS 2020, §4 (DP over ideals for pipelined placement); Tarnawski et al., "Piper:
Multidimensional planner for DNN parallelization", NeurIPS 2021. The number of ideals is
polynomial for DAGs of bounded width (a chain of inception modules: the product of the
branch lengths + 1 per module) but exponential in general, hence ``max_ideals``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numba as nb
import numpy as np

from chipsched.budget import Budget, BudgetExhausted
from chipsched.problems.region_split import ChipletInstance
from chipsched.problems.region_split.objectives import aggregate

from .dynprog import best_final

#: Default largest number of ideals the DP enumerates (the Transformers have ~10⁵;
#: memory: the ideals' bitsets and the DP table, ~0.5 KB per ideal on a 6×6 grid).
MAX_IDEALS = 1_000_000


def item_ideals(n: int, edges: np.ndarray, max_ideals: int) -> np.ndarray | None:
    """Every ideal of the DAG on items 0..n−1 as a boolean ``(K, n)`` matrix, sorted by
    size (row 0 the empty set, row K−1 all items); ``None`` when there are more than
    ``max_ideals``. Depth-first over "add an item whose predecessors are all in"."""
    pred = [0] * n
    for p, q in edges:
        pred[int(q)] |= 1 << int(p)
    seen = {0}
    stack = [0]
    while stack:
        ideal = stack.pop()
        for v in range(n):
            if not (ideal >> v) & 1 and pred[v] & ~ideal == 0:
                nxt = ideal | (1 << v)
                if nxt not in seen:
                    if len(seen) >= max_ideals:
                        return None
                    seen.add(nxt)
                    stack.append(nxt)
    masks = sorted(seen, key=lambda x: (x.bit_count(), x))
    memb = np.zeros((len(masks), n), dtype=bool)
    for k, x in enumerate(masks):
        bits = bin(x)[2:][::-1]
        memb[k, [i for i, c in enumerate(bits) if c == "1"]] = True
    return memb


def count_ideals(inst: ChipletInstance, max_ideals: int = MAX_IDEALS) -> int | None:
    """How many ideals the item DAG of ``inst`` has (``None``: more than ``max_ideals``)."""
    memb = item_ideals(inst.n_items, inst.item_edges, max_ideals)
    return None if memb is None else len(memb)


def _packed(memb: np.ndarray) -> np.ndarray:
    """Rows of ``memb`` as uint64 words, for fast subset tests."""
    K, n = memb.shape
    pad = (-n) % 64
    bits = np.packbits(np.pad(memb, ((0, 0), (0, pad))), axis=1, bitorder="little")
    return bits.view(np.uint64)


@dataclass(frozen=True)
class IdealSplit:
    """The DP's answer: objective (s), item order, regions (positions in it), counts;
    the ideals enumerated and the (sub-ideal, ideal) pairs whose stage the DP priced
    (the others were pruned by the upper bound)."""

    value: float
    order: tuple[int, ...]
    regions: tuple[tuple[int, int], ...]
    counts: tuple[int, ...]
    ideals: int
    pairs: int


# ---------------------------------------------------------------------------------------
# numba kernels: the ideals (with their Hasse diagram) and the DP over pairs


@nb.njit(cache=True)
def _hash(words):  # pragma: no cover - numba
    h = np.uint64(1469598103934665603)
    for k in range(words.shape[0]):
        h = (h ^ words[k]) * np.uint64(1099511628211)
        h ^= h >> np.uint64(29)
    return h


@nb.njit(cache=True)
def _enumerate(n, pred_words, max_ideals):  # pragma: no cover - numba
    """Every ideal, level by level (so indices grow with size), as bitset rows; for each
    (ideal J, item v maximal in J) the down-edge J → J ∖ {v}. Returns (K, words,
    down (J, I, v) triples, count) with K = −1 when there are more than ``max_ideals``."""
    W = pred_words.shape[1]
    cap = 16
    while cap < 2 * max_ideals + 2:
        cap *= 2
    mask = np.uint64(cap - 1)
    table = np.full(cap, -1, np.int64)
    rows = np.zeros((max_ideals + 1, W), np.uint64)
    down = np.zeros((3, 4 * (max_ideals + 1)), np.int64)
    nd = 0
    K = 1  # row 0: the empty ideal
    table[_hash(rows[0]) & mask] = 0
    lo, hi = 0, 1
    nxt = np.zeros(W, np.uint64)
    while lo < hi:
        for i in range(lo, hi):
            for v in range(n):
                wv, bv = v >> 6, np.uint64(1) << np.uint64(v & 63)
                if rows[i, wv] & bv:
                    continue
                ok = True
                for k in range(W):
                    if pred_words[v, k] & ~rows[i, k]:
                        ok = False
                        break
                if not ok:
                    continue
                for k in range(W):
                    nxt[k] = rows[i, k]
                nxt[wv] |= bv
                slot = _hash(nxt) & mask
                j = -1
                while True:
                    t = table[slot]
                    if t < 0:
                        break
                    same = True
                    for k in range(W):
                        if rows[t, k] != nxt[k]:
                            same = False
                            break
                    if same:
                        j = t
                        break
                    slot = (slot + np.uint64(1)) & mask
                if j < 0:
                    if K >= max_ideals:
                        return -1, rows, down, nd
                    j = K
                    for k in range(W):
                        rows[K, k] = nxt[k]
                    table[slot] = K
                    K += 1
                if nd >= down.shape[1]:
                    grown = np.zeros((3, 2 * down.shape[1]), np.int64)
                    grown[:, :nd] = down[:, :nd]
                    down = grown
                down[0, nd], down[1, nd], down[2, nd] = j, i, v
                nd += 1
        lo, hi = hi, K
    return K, rows, down, nd


@nb.njit(cache=True)
def _dp(t0, t1, rows, dptr, dsub, ditem, gt_pre, e_in, e_out, succ_ptr, succ_idx, succ_w,
        a_w, b_w, a_b, b_b, kind, D, M, ub, F, arg_sub, arg_m, stamp, cross,
        stack):  # pragma: no cover
    """The DP over (sub-ideal, ideal) pairs, each ideal's sub-ideals found by a walk
    down its Hasse diagram that keeps the bytes leaving towards items outside the
    ideal. A stage whose least compute plus internal transfer exceeds ``ub`` prunes
    the walk below it (a larger stage only computes and moves more inside). kind 0: Σ
    of stages, 1: max, 2: R·max (r tracked). The ideals t0 ≤ t < t1 (the caller polls
    its budget between such chunks); ``stamp`` (−1s), ``cross`` and ``stack`` are work
    arrays of one entry per ideal. Returns the pairs priced."""
    c = np.empty(M + 1)
    pairs = 0
    for t in range(t0, t1):
        sp = 0
        stack[0] = t
        sp = 1
        stamp[t] = t
        cross[t] = e_out[t]
        while sp > 0:
            sp -= 1
            J = stack[sp]
            for e in range(dptr[J], dptr[J + 1]):
                I = dsub[e]
                if stamp[I] == t:
                    continue
                stamp[I] = t
                v = ditem[e]
                w_out = 0.0  # bytes from v to items outside ideal t
                for x in range(succ_ptr[v], succ_ptr[v + 1]):
                    q = succ_idx[x]
                    if not (rows[t, q >> 6] >> np.uint64(q & 63)) & np.uint64(1):
                        w_out += succ_w[x]
                cI = cross[J] - w_out
                inside = e_in[t] - e_in[I] - (e_out[I] - cI)
                # compute and internal transfers only grow with the stage (sent bytes
                # need not): their least over m prunes the walk below this sub-ideal
                least = np.inf
                for m in range(1, M + 1):
                    d = gt_pre[t, m] - gt_pre[I, m] + \
                        (a_w[m] + b_w[m] * inside if inside > 0 else 0.0)
                    c[m] = d
                    if d < least:
                        least = d
                if least > ub:
                    continue  # and no smaller sub-ideal: its stage only grows
                cross[I] = cI
                stack[sp] = I
                sp += 1
                pairs += 1
                sent = e_out[t] - cI
                tb = a_b + b_b * sent if sent > 0 else 0.0
                for m in range(1, M + 1):
                    c[m] += tb
                for r in range(D):
                    rs = r if D == 1 else r - 1
                    if D > 1 and r == 0:
                        continue
                    for u in range(1, M + 1):
                        best = F[t, r, u]
                        for m in range(1, u + 1):
                            prev = F[I, rs, u - m]
                            if prev == np.inf:
                                continue
                            val = prev + c[m] if kind == 0 else max(prev, c[m])
                            if val < best:
                                best = val
                                arg_sub[t, r, u] = I
                                arg_m[t, r, u] = m
                        F[t, r, u] = best
    return pairs


def _affine(f: Any, m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) with f(m, x) = a + b·x for x > 0 (the transfer model is affine in the
    bytes), checked at a third point."""
    f1 = np.atleast_1d(np.asarray(f(m, 1.0), float))
    f2 = np.atleast_1d(np.asarray(f(m, 2.0), float))
    b = f2 - f1
    a = f1 - b
    if not np.allclose(f(m, 1000.0), a + 1000.0 * b, rtol=1e-12, atol=0):
        raise ValueError("the transfer model is not affine in the bytes")
    return a, b


def dp_ideals(inst: ChipletInstance, max_ideals: int = MAX_IDEALS,
              upper_bound: float | None = None, budget: Budget | None = None
              ) -> IdealSplit | None:
    """Optimal regions and counts over every convex partition of the item DAG.

    ``F[I', r, u]`` = best value (Σ or max of stage times) of the items of ideal I' cut
    into r stages using exactly u sub-chiplets; ``F[I', r, u] = min over ideals I ⊊ I'
    and m ≤ u of F[I, r−1, u−m] ⊕ c(I' ∖ I, m)``, with c the evaluator's stage time of a
    set (:func:`chipsched.problems.region_split.chiplet_set_parts`: compute of the set,
    C of the bytes inside it, T of the bytes leaving it). The region count r is tracked
    only when it matters (``sync_latency`` = R·max, or a binding ``max_regions``).
    ``upper_bound`` (an objective some split reaches, e.g. the item-order DP's) prunes
    every stage whose compute and internal transfers alone exceed it — no optimal
    split holds one, nor a larger stage (both grow with the stage). Numba
    kernels: the ideals by levels with a hash of their bitsets, each ideal's sub-ideals by
    a walk down the Hasse diagram. Returns ``None`` when the DAG has more than
    ``max_ideals`` ideals; raises :class:`~chipsched.budget.BudgetExhausted` when
    ``budget`` runs out (polled between chunks of ideals).
    """
    n, M = inst.n_items, inst.chiplets
    W = max(1, (n + 63) // 64)
    pred = np.zeros((n, W), np.uint64)
    for p, q in inst.item_edges:
        pred[int(q), int(p) >> 6] |= np.uint64(1) << np.uint64(int(p) & 63)
    K, rows, down, nd = _enumerate(n, pred, int(max_ideals))
    if K < 0:
        return None
    rows = rows[:K]
    order = np.argsort(down[0, :nd], kind="stable")
    dsup, dsub, ditem = down[0, :nd][order], down[1, :nd][order], down[2, :nd][order]
    dptr = np.zeros(K + 1, np.int64)
    np.add.at(dptr, dsup + 1, 1)
    dptr = np.cumsum(dptr)
    # per-ideal sums along the up-edge that found each ideal (J = I ∪ {v})
    first = np.full(K, -1, np.int64)
    first[dsup[::-1]] = np.arange(nd)[::-1]  # one down-edge of every J ≥ 1
    w = inst.edge_bytes
    in_w, out_w = w.sum(axis=0), w.sum(axis=1)
    gt_pre = np.zeros((K, M + 1))
    e_in = np.zeros(K)
    e_out = np.zeros(K)
    for J in range(1, K):
        e = first[J]
        I, v = int(dsub[e]), int(ditem[e])
        gt_pre[J, 1:] = gt_pre[I, 1:] + inst.group_time[v]
        e_in[J] = e_in[I] + in_w[v]  # v's inputs all come from I
        e_out[J] = e_out[I] - in_w[v] + out_w[v]  # v's outputs all leave J
    sp, sq = np.nonzero(w)
    succ_ptr = np.zeros(n + 1, np.int64)
    np.add.at(succ_ptr, sp + 1, 1)
    succ_ptr = np.cumsum(succ_ptr)
    m_arr = np.arange(0, M + 1, dtype=float)
    a_w, b_w = _affine(inst.transfer.within, np.maximum(m_arr, 1.0))
    a_w[0] = b_w[0] = 0.0
    ab, bb = _affine(lambda m, x: inst.transfer.between(x), np.array([1.0]))
    kind = aggregate(inst.objective)
    Rmax = min(n, M, inst.max_regions or n)
    tracked = kind == "count_max" or Rmax < min(n, M)
    D = Rmax + 1 if tracked else 1
    F = np.full((K, D, M + 1), np.inf)
    F[0, 0, 0] = 0.0
    arg_sub = np.full((K, D, M + 1), -1, np.int64)
    arg_m = np.full((K, D, M + 1), -1, np.int64)
    ub = np.inf if upper_bound is None else float(upper_bound) * (1 + 1e-9)
    stamp, cross, stack = np.full(K, -1, np.int64), np.zeros(K), np.empty(K, np.int64)
    args = (rows, dptr, dsub, ditem, gt_pre, e_in, e_out, succ_ptr, sq.astype(np.int64),
            w[sp, sq].astype(float), a_w, b_w, float(ab[0]), float(bb[0]),
            {"sum": 0, "max": 1}.get(kind, 2), D, M, ub, F, arg_sub, arg_m, stamp, cross,
            stack)
    pairs, t, step = 0, 1, 64
    while t < K:  # in chunks of ~0.2 s, so that the budget is polled
        if budget is not None and budget.exhausted():
            raise BudgetExhausted(f"the DP over ideals ({t:,} of {K:,} ideals)",
                                  budget.stop_reason)
        t1 = min(K, t + step)
        t_start = time.perf_counter()
        pairs += _dp(t, t1, *args)
        took = time.perf_counter() - t_start
        t = t1
        step = max(16, min(4 * step, int(step * 0.2 / took))) if took > 0 else 4 * step
    value, r, u = best_final(F[K - 1], kind, tracked)
    chain, counts = [K - 1], []
    t = K - 1
    while t > 0:
        s_, m = int(arg_sub[t, r, u]), int(arg_m[t, r, u])
        counts.append(m)
        chain.append(s_)
        t, u = s_, u - m
        r = r - 1 if tracked else r
    chain, counts = chain[::-1], counts[::-1]
    memb = np.unpackbits(rows[chain].view(np.uint8), axis=1, bitorder="little")[:, :n]
    order_, regions = chain_order(memb.astype(bool), list(range(len(chain))))
    return IdealSplit(value, tuple(order_), tuple(regions), tuple(counts), K, int(pairs))


def warm_up_kernels() -> None:
    """Compile (or load) the DP's kernels (see ``chipsched.jit``): a diamond of items."""
    pred = np.zeros((4, 1), np.uint64)
    for p, q in ((0, 1), (0, 2), (1, 3), (2, 3)):
        pred[q, 0] |= np.uint64(1) << np.uint64(p)
    K, rows, down, nd = _enumerate(4, pred, 100)
    dptr = np.zeros(K + 1, np.int64)
    z = np.zeros(K)
    F = np.full((K, 1, 3), np.inf)
    F[0, 0, 0] = 0.0
    a = np.full((K, 1, 3), -1, np.int64)
    e = np.zeros(0, np.int64)
    _dp(1, K, rows[:K], dptr, e, e, np.zeros((K, 3)), z, z, np.zeros(5, np.int64), e,
        np.zeros(0), np.zeros(3), np.zeros(3), 0.0, 0.0, 0, 1, 2, np.inf, F, a, a,
        np.full(K, -1, np.int64), np.zeros(K), np.empty(K, np.int64))


def chain_order(memb: np.ndarray, chain: list[int] | tuple[int, ...]
                ) -> tuple[list[int], list[tuple[int, int]]]:
    """The item order and the regions (positions in it) of a chain of ideals (rows of
    ``memb``, from ∅ to all items). The item index order is topological, so each
    stage's items in index order are too, and the stages follow their dependencies."""
    order: list[int] = []
    regions = []
    for a, b in zip(chain, chain[1:], strict=False):
        stage_items = np.flatnonzero(memb[b] & ~memb[a]).tolist()
        regions.append((len(order), len(order) + len(stage_items) - 1))
        order.extend(stage_items)
    return order, regions
