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

from dataclasses import dataclass

import numpy as np

from chipsched.problems.region_split import ChipletInstance
from chipsched.problems.region_split.objectives import aggregate

from .dynprog import best_final

#: Default largest number of ideals the DP enumerates (pairs of ideals grow as its
#: square; 5,000 keeps a run under a minute on a 6×6 grid).
MAX_IDEALS = 5_000


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
    """The DP's answer: objective (s), item order, regions (positions in it), counts."""

    value: float
    order: tuple[int, ...]
    regions: tuple[tuple[int, int], ...]
    counts: tuple[int, ...]
    ideals: int
    pairs: int


def dp_ideals(inst: ChipletInstance, max_ideals: int = MAX_IDEALS) -> IdealSplit | None:
    """Optimal regions and counts over every convex partition of the item DAG.

    ``F[I', r, u]`` = best value (Σ or max of stage times) of the items of ideal I' cut
    into r stages using exactly u sub-chiplets; ``F[I', r, u] = min over ideals I ⊊ I'
    and m ≤ u of F[I, r−1, u−m] ⊕ c(I' ∖ I, m)``, with c the evaluator's stage time of a
    set (:func:`chipsched.problems.region_split.chiplet_set_parts`: compute of the set,
    C of the bytes inside it, T of the bytes leaving it). The region count r is tracked
    only when it matters (``sync_latency`` = R·max, or a binding ``max_regions``).
    Returns ``None`` when the DAG has more than ``max_ideals`` ideals.
    """
    n, M = inst.n_items, inst.chiplets
    memb = item_ideals(n, inst.item_edges, max_ideals)
    if memb is None:
        return None
    K = len(memb)
    kind = aggregate(inst.objective)
    Rmax = min(n, M, inst.max_regions or n)
    tracked = kind == "count_max" or Rmax < min(n, M)
    D = Rmax + 1 if tracked else 1
    add = kind == "sum"
    member = memb.astype(float)
    d_pre = member @ inst.group_time  # (K, M): Σ_{p∈I} time of p on m sub-chiplets
    p_idx, q_idx = np.nonzero(inst.edge_bytes)
    w = inst.edge_bytes[p_idx, q_idx]
    src_in, dst_in = member[:, p_idx], member[:, q_idx]  # (K, E)
    e_in = (src_in * dst_in) @ w  # bytes of edges inside I
    e_out = (src_in * (1.0 - dst_in)) @ w  # bytes of edges leaving I
    words = _packed(memb)
    m_arr = np.arange(1, M + 1)
    F = np.full((K, D, M + 1), np.inf)
    F[0, 0, 0] = 0.0
    arg_sub = np.full((K, D, M + 1), -1, dtype=np.int64)
    arg_m = np.full((K, D, M + 1), -1, dtype=np.int64)
    src = slice(0, D - 1) if tracked else slice(0, 1)
    dst = slice(1, D) if tracked else slice(0, 1)
    pairs = 0
    for t in range(1, K):
        # proper sub-ideals of ideal t: smaller rows whose bits are all in t's
        subs = np.flatnonzero(~(words[:t] & ~words[t]).any(axis=1))
        subs = subs[np.isfinite(F[subs]).any(axis=(1, 2))]
        if not subs.size:
            continue
        pairs += subs.size
        # cross[k] = bytes from sub-ideal k to items outside ideal t
        cross = (src_in[subs] * (1.0 - dst_in[t])[None, :]) @ w
        inside = e_in[t] - e_in[subs] - (e_out[subs] - cross)
        sent = e_out[t] - cross
        stage = (d_pre[t][None, :] - d_pre[subs]
                 + inst.transfer.within(m_arr[None, :], inside[:, None])
                 + np.asarray(inst.transfer.between(sent), dtype=float)[:, None])  # (k, M)
        A = F[subs][:, src, :]  # (k, D', M+1)
        for m in range(1, M + 1):
            c = stage[:, m - 1][:, None, None]
            cand = A[:, :, :M + 1 - m] + c if add else np.maximum(A[:, :, :M + 1 - m], c)
            best = np.argmin(cand, axis=0)  # (D', M+1−m)
            val = np.take_along_axis(cand, best[None], axis=0)[0]
            cur = F[t, dst, m:]
            better = val < cur
            F[t, dst, m:] = np.where(better, val, cur)
            arg_sub[t, dst, m:] = np.where(better, subs[best], arg_sub[t, dst, m:])
            arg_m[t, dst, m:] = np.where(better, m, arg_m[t, dst, m:])
    value, r, u = best_final(F[K - 1], kind, tracked)
    chain, counts = [K - 1], []
    t = K - 1
    while t > 0:
        s, m = int(arg_sub[t, r, u]), int(arg_m[t, r, u])
        counts.append(m)
        chain.append(s)
        t, u = s, u - m
        r = r - 1 if tracked else r
    chain, counts = chain[::-1], counts[::-1]
    order, regions = chain_order(memb, chain)
    return IdealSplit(value, tuple(order), tuple(regions), tuple(counts), K, pairs)


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
