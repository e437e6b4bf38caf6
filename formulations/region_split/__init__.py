"""Exact methods for region_split: CP-SAT, Pyomo MILP, a dynamic program, brute force.

Chiplet grid (seed 000). The search space: cut the item sequence (pipeline groups
of S in depth order, or layers) into contiguous regions, give each m ≥ 1
sub-chiplets, Σ m ≤ M, at most ``max_regions`` regions. Every model is built over
the table ``c[i, j, m]`` of stage times (:func:`chipsched.problems.region_split.
chiplet_stage_table`) and the objective is Σ c (``cost``, ``latency``), max c
(``period``) or R·max c (``sync_latency``).

* :func:`dp_chiplet` — the dynamic program over (regions, prefix, sub-chiplets used);
  exact for the fixed item order, i.e. for the whole space; no pruning.
* CP-SAT and MILP — a path through the positions 0..n of the sequence: one binary per
  option (segment i..j, count m), flow conservation at every position, the
  sub-chiplet budget and the region limit. Options are pruned first
  (:func:`chiplet_options`) by rules that keep an optimal solution: only counts that
  strictly lower a segment's time (Pareto in m); no segment slower than a known
  solution's objective (UB); for period/sync_latency no more sub-chiplets than needed to
  reach a proven lower bound on the period (LB); for cost, no option whose cheapest
  completion (budget ignored) exceeds the UB.
* brute force — every partition and every count vector, costed by the evaluator's
  direct path (:func:`chipsched.problems.region_split.chiplet_stage`).

Processor chain (seed 001): cut the layers into contiguous sub-models on processors
taken in chain order. CP-SAT and MILP assign every layer to a processor with a
monotone assignment (so every processor holds one contiguous run), the handover
after layer j from p to q is a binary ``x[j,p] ∧ x[j+1,q]``; the DP runs over
(regions, last layer, processor, next processor); brute force enumerates cuts and
Placement: serpentine by default for every method (seed 000, step 6) — no objective
depends on it, only the d2d metrics. The face's chain step ``placement``
(``chipsched.chains.RegionPlacement``) places a solution's slots exactly by a
core_assignment placement method, for every chiplet method.

Every model reports its objective from its own data (the stage tables), which the face
checks against the evaluator's direct sums. Modules: :mod:`.dynprog`, :mod:`.pruning`
(bounds and options), :mod:`.cpsat_models`, :mod:`.milp_models` (their backends load only when the
method runs), :mod:`.enumeration`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chipsched.method import MethodOutput, count_text, method, param
from chipsched.problems.region_split import (
    ChipletInstance,
    chiplet_solution,
    chiplet_stage_table,
    soc_solution,
)
from chipsched.result import Status
from chipsched.solvers.options import SolveOptions

from .dynprog import dp_chiplet, dp_soc
from .enumeration import brute_chiplet, brute_soc, chiplet_candidates, soc_candidates

DECISION = "region_split"
SOURCE = "seeds 000/001; exact over tables of segment × count costs"


def _chiplet(instance: Any) -> bool:
    return isinstance(instance, ChipletInstance)


@method(DECISION, "cpsat", "exact", "CP-SAT over segment × count options (path model); "
        "SoC: monotone layer → processor assignment", source=SOURCE, warm_start=True)
def cpsat(instance: Any, options: SolveOptions) -> MethodOutput:
    """CP-SAT for either platform."""
    from .cpsat_models import cpsat_chiplet, cpsat_soc

    if _chiplet(instance):
        return cpsat_chiplet(instance, options)
    return cpsat_soc(instance, options)


@method(DECISION, "milp", "exact", "Pyomo MILP (HiGHS/CBC/…) over segment × count options; "
        "SoC: monotone assignment", source=SOURCE, warm_start=True)
def milp(instance: Any, options: SolveOptions) -> MethodOutput:
    """The MILP for either platform, solved by ``options.milp_solver``."""
    from .milp_models import milp_chiplet, milp_soc

    if _chiplet(instance):
        return milp_chiplet(instance, options)
    return milp_soc(instance, options)


@method(DECISION, "dp", "exact", "dynamic program over (regions, prefix, sub-chiplets); "
        "exact for the fixed item order", source=SOURCE)
def dp(instance: Any, options: SolveOptions) -> MethodOutput:
    """The dynamic program for either platform (a third, independent exact check)."""
    if _chiplet(instance):
        value, regs, cnts = dp_chiplet(chiplet_stage_table(instance), instance.chiplets,
                                       instance.objective, instance.max_regions)
        sol = chiplet_solution(instance, regs, cnts)
    else:
        value, regs, procs = dp_soc(instance)
        sol = soc_solution(regs, procs)
    return MethodOutput(Status.OPTIMAL, sol, objective=value, bound=value,
                        stats={"dp_value": value})


@dataclass(frozen=True)
class BruteForceParams:
    max_candidates: int = param(500_000, "largest number of candidates to enumerate", ge=1)


def _brute_applies(instance: Any, params: BruteForceParams, warm: bool = False) -> str | None:
    size = chiplet_candidates(instance) if _chiplet(instance) else soc_candidates(instance)
    if size > params.max_candidates:
        return (f"too large for brute force ({count_text(size)} candidates > max_candidates "
                f"{params.max_candidates:,})")
    return None


@method(DECISION, "bruteforce", "oracle", "every cut × every count (or processor subset), "
        "for tiny instances", source="enumeration", params=BruteForceParams,
        applies=_brute_applies)
def bruteforce(instance: Any, options: SolveOptions, params: BruteForceParams
               ) -> MethodOutput:
    """Enumerate the whole space."""
    if _chiplet(instance):
        value, sol, count = brute_chiplet(instance, params.max_candidates)
    else:
        value, sol, count = brute_soc(instance, params.max_candidates)
    return MethodOutput(Status.OPTIMAL, sol, objective=value, bound=value,
                        stats={"candidates": count})
