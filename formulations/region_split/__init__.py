"""Exact methods for region_split: CP-SAT, Pyomo MILP, a dynamic program, brute force.

Chiplet grid (seed 000). The search space: every partition of the item DAG (pipeline
groups of S in depth order, or layers) into pipeline stages that are convex and ordered
by their dependencies — a chain of ideals ∅ ⊂ I₁ ⊂ … ⊂ all items —, each stage given
m ≥ 1 sub-chiplets, Σ m ≤ M, at most ``max_regions`` stages. A solution lists its item
order when it is not the instance's (``ChipletSolution.order``). The objective is Σ of
the stage times (``cost``, ``latency``), their max (``period``) or R·max
(``sync_latency``).

* :func:`.ideals.dp_ideals` (``dp``) — the dynamic program over pairs of ideals ×
  sub-chiplets used: exact over the whole space (Tarnawski et al. NeurIPS 2020).
  When the DAG has more than ``max_ideals`` ideals it falls back to
  :func:`.dynprog.dp_chiplet`, the DP over (regions, prefix, sub-chiplets) of the
  instance's item order, says so, and reports a lower bound over every convex
  partition (:func:`.pruning.full_space_bound`, stat ``full_space_bound``).
* CP-SAT and MILP — a path through the positions 0..n of the instance's item order:
  one binary per option (segment i..j, count m) of the table ``c[i, j, m]`` of stage
  times (:func:`chipsched.problems.region_split.chiplet_stage_table`), flow
  conservation at every position, the sub-chiplet budget and the region limit. Exact
  over the cuts of that order, which is the whole space when the item DAG is a chain
  (groups always are; layers of a branching network are not: the result's ``space``
  is then ``item order``). Options are pruned first
  (:func:`chiplet_options`) by rules that keep an optimal solution: only counts that
  strictly lower a segment's time (Pareto in m); no segment slower than a known
  solution's objective (UB); for period/sync_latency no more sub-chiplets than needed to
  reach a proven lower bound on the period (LB); for cost, no option whose cheapest
  completion (budget ignored) exceeds the UB.
* brute force — every chain of ideals and every count vector, costed by the
  evaluator's set path (:func:`chipsched.problems.region_split.chiplet_set_parts`).

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

from dataclasses import dataclass, replace
from typing import Any

from chipsched.budget import BudgetExhausted
from chipsched.method import MethodOutput, count_text, method, param
from chipsched.problems.region_split import (
    ChipletInstance,
    chiplet_solution,
    chiplet_stage_table,
    soc_solution,
)
from chipsched.result import Status
from chipsched.solvers.bruteforce import STOPPED
from chipsched.solvers.options import SolveOptions

from .dynprog import dp_chiplet, dp_soc
from .enumeration import (
    BRUTE_MAX_IDEALS,
    brute_chiplet,
    brute_soc,
    chiplet_candidates,
    soc_candidates,
)
from .ideals import MAX_IDEALS, dp_ideals
from .ideals import warm_up_kernels as warm_up_kernels  # the registry's (chipsched.jit)
from .pruning import full_space_bound

DECISION = "region_split"
SOURCE = "seeds 000/001; exact over tables of segment × count costs"


def _chiplet(instance: Any) -> bool:
    return isinstance(instance, ChipletInstance)


#: The space of the models that cut one item order (the instance's): every convex
#: partition only when the item DAG is a chain.
ITEM_ORDER = "item order"


def _in_item_order(instance: ChipletInstance, out: MethodOutput) -> MethodOutput:
    """Mark a chiplet result as searched over the instance's item order when the item
    DAG has other topological orders (its bound then bounds that space only)."""
    return out if instance.item_order_is_total else replace(out, space=ITEM_ORDER)


def _order_warm(options: SolveOptions) -> SolveOptions:
    """The item-order models cannot take a warm start cut from another item order as a
    hint (the face still reports it when it is better)."""
    ws = options.warm_solution
    if ws is not None and ws.order:
        return options.replace(warm=None)
    return options


@method(DECISION, "cpsat", "exact", "CP-SAT over segment × count options (path model); "
        "SoC: monotone layer → processor assignment", source=SOURCE, warm_start=True)
def cpsat(instance: Any, options: SolveOptions) -> MethodOutput:
    """CP-SAT for either platform."""
    from .cpsat_models import cpsat_chiplet, cpsat_soc

    if _chiplet(instance):
        return _in_item_order(instance, cpsat_chiplet(instance, _order_warm(options)))
    return cpsat_soc(instance, options)


@method(DECISION, "milp", "exact", "Pyomo MILP (HiGHS/CBC/…) over segment × count options; "
        "SoC: monotone assignment", source=SOURCE, warm_start=True)
def milp(instance: Any, options: SolveOptions) -> MethodOutput:
    """The MILP for either platform, solved by ``options.milp_solver``."""
    from .milp_models import milp_chiplet, milp_soc

    if _chiplet(instance):
        return _in_item_order(instance, milp_chiplet(instance, _order_warm(options)))
    return milp_soc(instance, options)


@dataclass(frozen=True)
class DpParams:
    max_ideals: int = param(MAX_IDEALS, "largest number of ideals of the item DAG to "
                            "enumerate; beyond it the DP cuts the item order only", ge=1)
    order_only: bool = param(False, "cut the instance's item order only (the linear-order "
                             "DP, exact over that order's cuts)")


@method(DECISION, "dp", "exact", "dynamic program over ideals of the item DAG × "
        "sub-chiplets (every convex partition); SoC: over (regions, layer, processor)",
        source="Tarnawski et al. NeurIPS 2020 (DP over ideals); " + SOURCE, params=DpParams)
def dp(instance: Any, options: SolveOptions, params: DpParams) -> MethodOutput:
    """The dynamic program for either platform (a third, independent exact check).

    Chiplet grid: over every ideal of the item DAG (:func:`.ideals.dp_ideals`) — exact
    over every convex partition into pipeline stages; when the DAG has more than
    ``max_ideals`` ideals (or ``order_only``) over cuts of the instance's item order
    (:func:`.dynprog.dp_chiplet`), and the result says so (space ``item order``).
    """
    if not _chiplet(instance):
        value, regs, procs = dp_soc(instance)
        return MethodOutput(Status.OPTIMAL, soc_solution(regs, procs), objective=value,
                            bound=value, stats={"dp_value": value})
    value, regs, cnts = dp_chiplet(chiplet_stage_table(instance), instance.chiplets,
                                   instance.objective, instance.max_regions)
    # the item order's optimum bounds every stage of the DP over ideals from above
    split, stopped = None, ""
    if not params.order_only:
        try:
            split = dp_ideals(instance, params.max_ideals, upper_bound=value,
                              budget=options.budget)
        except BudgetExhausted as exc:  # the item order's optimum stands
            stopped = f"{exc}: exact over cuts of the item order only"
    if split is not None:
        sol = chiplet_solution(instance, split.regions, split.counts, split.order)
        return MethodOutput(Status.OPTIMAL, sol, objective=split.value, bound=split.value,
                            stats={"dp_value": split.value, "ideals": split.ideals,
                                   "ideal_pairs": split.pairs, "item_order_value": value},
                            space="")
    why = "" if params.order_only or instance.item_order_is_total else stopped or \
        f"the item DAG has more than {params.max_ideals:,} ideals (max_ideals): exact " \
        "over cuts of the item order only"
    stats: dict[str, Any] = {"dp_value": value}
    if why:  # what the item order's optimum is worth in the whole space
        full = full_space_bound(instance)
        stats["full_space_bound"] = full
        why += f"; every convex partition ≥ {full * 1e6:.3f} µs (full_space_bound)"
    # optimal over the item order's cuts (the space the result is marked with)
    out = MethodOutput(Status.OPTIMAL, chiplet_solution(instance, regs, cnts),
                       objective=value, bound=value, stats=stats, message=why)
    return _in_item_order(instance, out)


@dataclass(frozen=True)
class BruteForceParams:
    max_candidates: int = param(500_000, "largest number of candidates to enumerate", ge=1)


def _brute_applies(instance: Any, params: BruteForceParams, warm: bool = False) -> str | None:
    size = chiplet_candidates(instance, params.max_candidates) if _chiplet(instance) \
        else soc_candidates(instance)
    if size is None:
        return (f"too large for brute force (more than {BRUTE_MAX_IDEALS:,} ideals of the "
                "item DAG)")
    if size > params.max_candidates:
        return (f"too large for brute force ({count_text(size)} candidates > max_candidates "
                f"{params.max_candidates:,})")
    return None


@method(DECISION, "bruteforce", "oracle", "every convex partition × every count (or cut × "
        "processor subset), for tiny instances", source="enumeration", params=BruteForceParams,
        applies=_brute_applies)
def bruteforce(instance: Any, options: SolveOptions, params: BruteForceParams
               ) -> MethodOutput:
    """Enumerate the whole space."""
    brute = brute_chiplet if _chiplet(instance) else brute_soc
    value, sol, count, complete = brute(instance, params.max_candidates, options.budget)
    if not complete:
        return MethodOutput(Status.TIME_LIMIT, sol, objective=None if sol is None else value,
                            stats={"candidates": count}, message=STOPPED)
    if sol is None:  # e.g. a chain whose processors cannot run the layers in its order
        return MethodOutput(Status.INFEASIBLE, None, stats={"candidates": count},
                            message="no split can run every layer")
    return MethodOutput(Status.OPTIMAL, sol, objective=value, bound=value,
                        stats={"candidates": count})
