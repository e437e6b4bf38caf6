"""Brute force of both platforms: every convex partition (chain of ideals) × every count,
or every cut × every processor subset."""

from __future__ import annotations

import itertools
import math

import numpy as np

from chipsched.budget import Budget
from chipsched.errors import InputError
from chipsched.problems.region_split import (
    ChipletInstance,
    ChipletSolution,
    SocInstance,
    SocSolution,
    chiplet_set_parts,
    chiplet_solution,
    combine,
    soc_solution,
    soc_stage,
)
from chipsched.solvers.bruteforce import enumerate_best

from .ideals import chain_order, item_ideals


def _ideal_chains(inst: ChipletInstance, cap: int) -> tuple[np.ndarray, list[list[int]]]:
    """The ideals of the item DAG (≤ ``cap``) and, per ideal, its proper supersets."""
    memb = item_ideals(inst.n_items, inst.item_edges, cap)
    if memb is None:
        raise InputError(f"instance {inst.name}", f"too large for brute force (> {cap:,} "
                         "ideals)", "use an exact or heuristic method")
    sup = [[t for t in range(s + 1, len(memb)) if (memb[s] <= memb[t]).all()]
           for s in range(len(memb))]
    return memb, sup


def brute_chiplet(inst: ChipletInstance, max_candidates: int = 200_000,
                  budget: Budget | None = None
                  ) -> tuple[float, ChipletSolution | None, int, bool]:
    """Every chain of ideals ∅ ⊂ I₁ ⊂ … ⊂ all items (every convex partition of the item
    DAG into ≤ limit stages, in dependency order) × every count vector with Σ ≤ M,
    costed with the evaluator's set path (:func:`chiplet_set_parts`). Returns (value,
    solution, candidates, complete): not complete when stopped by ``budget`` (the best
    so far, ``None`` if none)."""
    M, Rmax = inst.chiplets, inst.region_limit
    size = chiplet_candidates(inst, max_candidates)
    if size is None:
        raise InputError(f"instance {inst.name}", f"too large for brute force (more than "
                         f"{BRUTE_MAX_IDEALS:,} ideals of the item DAG)",
                         "use an exact or heuristic method")
    memb, sup = _ideal_chains(inst, max(max_candidates, 2))
    last = len(memb) - 1
    cache: dict[tuple[int, int, int], float] = {}

    def stage(a: int, b: int, m: int) -> float:
        key = (a, b, m)
        if key not in cache:
            cache[key] = sum(chiplet_set_parts(inst, np.flatnonzero(memb[b] & ~memb[a]), m))
        return cache[key]

    def chains(s: int, depth: int):
        if s == last:
            yield (s,)
            return
        if depth == Rmax:
            return
        for t in sup[s]:
            for rest in chains(t, depth + 1):
                yield (s, *rest)

    def candidates():
        for ch in chains(0, 0):
            R = len(ch) - 1
            for cnts in itertools.product(range(1, M - R + 2), repeat=R):
                if sum(cnts) <= M:
                    yield ch, cnts

    res = enumerate_best(candidates(), lambda cc: combine(
        inst.objective, [stage(a, b, m) for a, b, m in zip(cc[0], cc[0][1:], cc[1],
                                                           strict=False)]),
        size=size, max_candidates=max_candidates, what=f"instance {inst.name}",
        budget=budget)
    if res.best is None:
        return res.value, None, res.count, res.complete
    ch, cnts = res.best
    order, regs = chain_order(memb, ch)
    return res.value, chiplet_solution(inst, regs, cnts, order), res.count, res.complete


def brute_soc(inst: SocInstance, max_candidates: int = 500_000,
              budget: Budget | None = None) -> tuple[float, SocSolution | None, int, bool]:
    """Every cut of the layers into R ≤ limit sub-models × every increasing choice of R
    chain processors, costed with the evaluator's direct path; returns as
    :func:`brute_chiplet`."""
    L, P, Rmax = inst.n_items, inst.n_procs, inst.region_limit
    size = soc_candidates(inst)

    def candidates():
        for R in range(1, Rmax + 1):
            for cuts in itertools.combinations(range(1, L), R - 1):
                starts = (0, *cuts)
                regs = tuple((starts[k], (starts[k + 1] - 1) if k + 1 < R else L - 1)
                             for k in range(R))
                for procs in itertools.combinations(range(P), R):
                    yield regs, procs

    def value(rp):
        regs, procs = rp
        st = [soc_stage(inst, a, b, procs[k], procs[k + 1] if k + 1 < len(procs) else None)
              for k, (a, b) in enumerate(regs)]
        v = combine(inst.objective, st)
        return v if math.isfinite(v) else None

    res = enumerate_best(candidates(), value, size=size, max_candidates=max_candidates,
                         what=f"instance {inst.name}", budget=budget)
    if res.best is None:
        return res.value, None, res.count, res.complete
    regs, procs = res.best
    return res.value, soc_solution(regs, procs), res.count, res.complete


#: Brute force refuses item DAGs with more ideals than this (their chains are
#: uncountable in reasonable time and far too many to enumerate).
BRUTE_MAX_IDEALS = 20_000


def chiplet_candidates(inst: ChipletInstance, cap: int | None = None) -> int | None:
    """How many (chain of ideals, counts) candidates :func:`brute_chiplet` enumerates, or
    a lower bound above ``cap`` (enough to refuse); ``None`` when the item DAG has more
    than :data:`BRUTE_MAX_IDEALS` ideals.

    Chains with r stages are counted by a DP over the ideals. The cuts of the item order
    alone are a lower bound; when they exceed ``cap`` the ideals are not enumerated."""
    n, M, Rmax = inst.n_items, inst.chiplets, inst.region_limit
    if Rmax == 1:
        return M  # one stage: every count 1..M
    order_only = sum(math.comb(n - 1, R - 1) * math.comb(M, R) for R in range(1, Rmax + 1))
    if inst.item_order_is_total or (cap is not None and order_only > cap):
        return order_only
    # every ideal but ∅ and all items splits the DAG in two stages (C(M, 2) counts each)
    per_ideal = math.comb(M, 2)
    limit = BRUTE_MAX_IDEALS if cap is None else min(BRUTE_MAX_IDEALS, cap // per_ideal + 3)
    memb = item_ideals(n, inst.item_edges, limit)
    if memb is None:
        if limit < BRUTE_MAX_IDEALS:  # > limit ideals: the two-stage splits exceed cap
            return max(order_only, (limit - 1) * per_ideal + M)
        return None
    K = len(memb)
    N = np.zeros((K, Rmax + 1), dtype=object)
    N[0, 0] = 1
    for t in range(1, K):
        for s in np.flatnonzero((memb[:t] <= memb[t]).all(axis=1)):
            N[t, 1:] += N[s, :-1]
        if cap is not None and t < K - 1:
            # every r-step chain to t extends to an (r+1)-step chain to all items: a lower
            # bound that lets a too-large instance be refused early
            low = sum(N[t, r] * math.comb(M, r + 1) for r in range(1, Rmax))
            if low > cap:
                return int(max(order_only, low))
    return int(sum(N[K - 1, R] * math.comb(M, R) for R in range(1, Rmax + 1)))


def soc_candidates(inst: SocInstance) -> int:
    """How many (cut, processors) candidates :func:`brute_soc` enumerates."""
    L, P, Rmax = inst.n_items, inst.n_procs, inst.region_limit
    return sum(math.comb(L - 1, R - 1) * math.comb(P, R) for R in range(1, Rmax + 1))
