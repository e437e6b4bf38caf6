"""Scales, tolerances and processor-chain helpers shared by the exact models."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from chipsched.method import MethodOutput
from chipsched.problems.region_split import (
    ChipletInstance,
    SocInstance,
    SocSolution,
    combine,
    soc_solution,
    soc_stage,
    soc_tables,
)
from chipsched.result import Status

#: CP-SAT costs are integers: the largest kept option maps to this many units. At 1e10
#: CP-SAT claimed wrong optima (latency, ResNet-50 on 36 sub-chiplets) — large
#: coefficients defeat its LP reasoning; 1e8 keeps the rounding below 1e-7 relative.
CPSAT_RESOLUTION = 1e8
#: MILP costs are scaled so that the upper bound is this number (HiGHS's absolute gap
#: tolerance of 1e-6 is then a relative 1e-12).
MILP_SCALE = 1e6
#: Slack on float comparisons in the pruning rules (relative).
EPS = 1e-9


def soc_ub(inst: SocInstance) -> tuple[float, list[tuple[int, int]], list[int]]:
    """The best single-processor split (a feasible solution for scaling and hints); when
    no processor can run every layer, the DP's optimum (one line if there is none)."""
    best = (math.inf, [(0, inst.n_items - 1)], [0])
    for p in range(inst.n_procs):
        v = combine(inst.objective, [soc_stage(inst, 0, inst.n_items - 1, p, None)])
        if v < best[0]:
            best = (v, [(0, inst.n_items - 1)], [p])
    if not math.isfinite(best[0]):
        from .dynprog import dp_soc

        return dp_soc(inst)
    return best


def soc_decode(inst: SocInstance, assign: list[int]) -> SocSolution:
    """The sub-models of a layer → chain processor assignment (runs of equal processors)."""
    regions, procs, a = [], [], 0
    for k in range(1, len(assign) + 1):
        if k == len(assign) or assign[k] != assign[a]:
            regions.append((a, k - 1))
            procs.append(assign[a])
            a = k
    return soc_solution(regions, procs)


def soc_start(inst: SocInstance, warm: SocSolution | None) -> list[int]:
    """Processor of every layer in the warm start (checked by the face) or the UB's."""
    if warm is not None:
        regs, procs = warm.regions, warm.processors
    else:
        _, regs, procs = soc_ub(inst)
    return [p for (a, b), p in zip(regs, procs, strict=True) for _ in range(a, b + 1)]


def soc_output(inst: SocInstance, out: Any, start: list[int], assign: list[int] | None,
               bound: float | None, stats: dict[str, Any], model: float | None,
               model_tol: float) -> MethodOutput:
    """A SoC model's result: the decoded assignment (or none), with the start it was
    handed (warm start, else the upper bound's split) as its own start — the face
    reports the start when the solver stopped without an assignment or on a worse one
    (a CP-SAT hint need not be kept)."""
    start_sol = None if out.status is Status.INFEASIBLE else soc_decode(inst, start)
    if assign is None:
        return MethodOutput(out.status, None, bound=bound, stats=stats, incumbent=start_sol)
    sol = soc_decode(inst, assign)
    value = soc_table_value(inst, sol.regions, sol.processors)
    return MethodOutput(out.status, sol, objective=value,
                        bound=None if bound is None else min(bound, value), stats=stats,
                        model_objective=model, model_tol=model_tol, incumbent=start_sol)


def chiplet_table_value(inst: ChipletInstance, table: np.ndarray,
                        regions: Sequence[tuple[int, int]], counts: Sequence[int]) -> float:
    """A chiplet solution's objective by the models' own data: the stage table
    (vectorized prefix sums, not the evaluator's direct sums)."""
    return combine(inst.objective, [float(table[a, b, m - 1]) for (a, b), m in
                                    zip(regions, counts, strict=True)])


def soc_table_value(inst: SocInstance, regions: Sequence[tuple[int, int]],
                    procs: Sequence[int]) -> float:
    """A processor-chain solution's objective by the models' own data: the prefix and
    handover tables (not the evaluator's direct sums)."""
    pre, hand = soc_tables(inst)
    stages = []
    for r, ((a, b), p) in enumerate(zip(regions, procs, strict=True)):
        s = float(pre.seg(a, b, p))
        if r + 1 < len(procs):
            s += float(hand[b, p, procs[r + 1]])
        stages.append(s)
    return combine(inst.objective, stages)
