"""Brute force of both platforms: every cut × every count or processor subset."""

from __future__ import annotations

import itertools
import math

from chipsched.problems.region_split import (
    ChipletInstance,
    ChipletSolution,
    SocInstance,
    SocSolution,
    chiplet_solution,
    chiplet_stage,
    combine,
    soc_solution,
    soc_stage,
)
from chipsched.solvers.bruteforce import enumerate_best


def brute_chiplet(inst: ChipletInstance, max_candidates: int = 200_000
                  ) -> tuple[float, ChipletSolution, int]:
    """Every cut of the items into ≤ limit regions × every count vector with Σ ≤ M,
    costed with the evaluator's direct path. Returns (value, solution, candidates)."""
    n, M, Rmax = inst.n_items, inst.chiplets, inst.region_limit
    size = chiplet_candidates(inst)
    cache: dict[tuple[int, int, int], float] = {}

    def stage(a: int, b: int, m: int) -> float:
        key = (a, b, m)
        if key not in cache:
            cache[key] = chiplet_stage(inst, a, b, m)
        return cache[key]

    def candidates():
        for R in range(1, Rmax + 1):
            for cuts in itertools.combinations(range(1, n), R - 1):
                starts = (0, *cuts)
                regs = tuple((starts[k], (starts[k + 1] - 1) if k + 1 < R else n - 1)
                             for k in range(R))
                for cnts in itertools.product(range(1, M - R + 2), repeat=R):
                    if sum(cnts) <= M:
                        yield regs, cnts

    res = enumerate_best(candidates(), lambda rc: combine(
        inst.objective, [stage(a, b, m) for (a, b), m in zip(rc[0], rc[1], strict=True)]),
        size=size, max_candidates=max_candidates, what=f"instance {inst.name}")
    regs, cnts = res.best
    return res.value, chiplet_solution(inst, regs, cnts), res.count


def brute_soc(inst: SocInstance, max_candidates: int = 500_000
              ) -> tuple[float, SocSolution, int]:
    """Every cut of the layers into R ≤ limit sub-models × every increasing choice of R
    chain processors, costed with the evaluator's direct path."""
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
                         what=f"instance {inst.name}")
    regs, procs = res.best
    return res.value, soc_solution(regs, procs), res.count


def chiplet_candidates(inst: ChipletInstance) -> int:
    """How many (cut, counts) candidates :func:`brute_chiplet` enumerates."""
    n, M, Rmax = inst.n_items, inst.chiplets, inst.region_limit
    return sum(math.comb(n - 1, R - 1) * math.comb(M, R) for R in range(1, Rmax + 1))


def soc_candidates(inst: SocInstance) -> int:
    """How many (cut, processors) candidates :func:`brute_soc` enumerates."""
    L, P, Rmax = inst.n_items, inst.n_procs, inst.region_limit
    return sum(math.comb(L - 1, R - 1) * math.comb(P, R) for R in range(1, Rmax + 1))
