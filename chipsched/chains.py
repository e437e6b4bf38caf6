"""Chain steps: the face runs one method on another's output.

A chain step has declared parameters (shown by ``chipsched list`` as the method's own)
and runs ``before`` a method (e.g. solve another method first and hand its solution
over as the warm start) and/or ``after`` it (e.g. place a region split's sub-chiplets
exactly). Steps receive a ``solve`` callable from ``chipsched.api`` instead of
importing it, so that lower layers never call up and no import cycle exists.

Steps of the four decisions:

* ``region_split`` — :class:`RegionPlacement` on every method that serves chiplet grids:
  ``placement=bnb|cpsat|milp`` replaces seed 000's serpentine placement by core_assignment's
  exact QAP placement of the solution's sub-chiplets (the regions and counts stay: no
  region_split objective depends on the placement, only the die-to-die metrics);
* ``core_assignment`` — :class:`GroupsFrom` on the ``-place`` methods: ``groups=METHOD``
  runs METHOD first and places its groups (its mapping is the warm start).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.method import Method, MethodOutput, ParamSpec, param, param_specs
from chipsched.result import Result, Status

SolveFn = Callable[..., Result]


class Chain:
    """A step chained onto the methods it ``applies_to``; ``params`` its declared
    parameters (a dataclass of :func:`chipsched.method.param` fields)."""

    name: str = ""
    params: type

    @property
    def param_specs(self) -> tuple[ParamSpec, ...]:
        return param_specs(self.params)

    def applies_to(self, m: Method) -> bool:
        raise NotImplementedError

    def before(self, instance: Any, options: Any, params: Any, m: Method, *,
               solve: SolveFn, methods: tuple[str, ...] = ()) -> Any:
        """The options the method runs with (default: unchanged); ``methods`` are the
        names of the decision's methods."""
        return options

    def after(self, instance: Any, out: MethodOutput, options: Any, params: Any, *,
              solve: SolveFn) -> MethodOutput:
        """The method's output after the step (default: unchanged)."""
        return out

    def uses(self, params: Any) -> tuple[str, ...]:
        """Other decisions whose methods the step runs with ``params`` (their compiled
        kernels are loaded before the run's clock starts)."""
        return ()


# ---------------------------------------------------------------------------------------
# region_split: exact placement of the regions on the chiplet grid

#: ``placement`` values → the core_assignment method that places the slots exactly
#: (None: seed 000's serpentine, no model).
PLACEMENTS: dict[str, str | None] = {"serpentine": None, "bnb": "bnb-place",
                                     "cpsat": "cpsat-place", "milp": "milp-place"}
DEFAULT_PLACEMENT_TIME_LIMIT = 10.0


@dataclass(frozen=True)
class PlacementParams:
    placement: str = param("serpentine", "how the regions' sub-chiplets are placed on the "
                           "grid: seed 000's serpentine, or core_assignment's exact QAP "
                           "(branch and bound, CP-SAT, MILP) of the slot flows",
                           choices=tuple(PLACEMENTS))
    placement_time_limit: float = param(DEFAULT_PLACEMENT_TIME_LIMIT, "seconds for the "
                                        "exact placement", gt=0)


class RegionPlacement(Chain):
    """Place a region_split solution's slots exactly (see :func:`exact_placement`)."""

    name = "placement"
    params = PlacementParams

    def applies_to(self, m: Method) -> bool:
        return not m.platforms or "chiplet" in m.platforms

    def after(self, instance: Any, out: MethodOutput, options: Any, params: Any, *,
              solve: SolveFn) -> MethodOutput:
        placer = PLACEMENTS[params.placement]
        if placer is None or out.solution is None:
            return out
        if getattr(instance, "platform", "") != "chiplet":
            raise InputError("parameter placement", f"{params.placement!r} places "
                             "sub-chiplets on a chiplet grid; a processor chain has nothing "
                             "to place", "drop -p placement (or use placement=serpentine)")
        # within what is left of the run's budget
        budget = options.budget.share(seconds=params.placement_time_limit)
        limit = budget.remaining()
        if limit is not None and limit <= 0:
            note = (f"no time left for the exact placement ({params.placement}): "
                    "the serpentine placement stands")
            return replace(out, stats={**out.stats, "placement": {"skipped": note}},
                           message=f"{out.message}; {note}" if out.message else note)
        sol, stats = exact_placement(instance, out.solution, placer, limit, solve,
                                     seed=options.seed, threads=options.threads,
                                     budget=budget)
        return replace(out, solution=sol, stats={**out.stats, "placement": stats})

    def uses(self, params: Any) -> tuple[str, ...]:
        return ("core_assignment",) if PLACEMENTS[params.placement] else ()


def exact_placement(inst: Any, sol: Any, method: str, time_limit: float | None,
                    solve: SolveFn, seed: int = 0, threads: int | None = None,
                    budget: Any = None) -> tuple[Any, dict[str, Any]]:
    """Place ``sol``'s regions on the grid by a core_assignment placement method.

    The slots of ``sol`` (``placement_flows``) become the vertices of a QAP
    (``placement_qap``, flows rounded to whole bytes) solved by ``method``
    (``bnb-place``, ``cpsat-place`` or ``milp-place``), warm-started from ``sol``'s
    placement (serpentine unless given). The regions and counts stay; the placement is
    the better, by the evaluator's exact byte·hops, of the solver's and the start —
    never worse than the start. ``budget``: the run's share it runs on (else a new one of
    ``time_limit``). Returns the solution and stats: method, status,
    ``proven`` (the placement is optimal for the rounded flows), ``gap`` (relative,
    rounded flows), byte·hops of the start and of the result, the QAP objective and
    bound (rounded bytes), the solver's wall time.
    """
    from chipsched.problems.core_assignment import Solution as QapSolution
    from chipsched.problems.region_split import (
        placement_flows,
        placement_qap,
        rounded_flows,
        serpentine_placement,
    )

    if method not in [v for v in PLACEMENTS.values() if v]:
        raise InputError("method", f"unknown placement method {method!r}",
                         f"use one of {', '.join(v for v in PLACEMENTS.values() if v)}")
    h = inst.hardware
    flows = placement_flows(inst, sol.regions, sol.counts, sol.order)
    serp = serpentine_placement(h.rows, h.cols, sol.counts)
    start_pl = sol.placement or serp
    start = flows.slot_nodes(start_pl)
    start_bh = flows.byte_hops(start, h.cols)
    stats: dict[str, Any] = {"method": method, "start": "given" if tuple(start_pl) != serp
                             else "serpentine", "start_byte_hops": start_bh}
    u, v, w = rounded_flows(flows)
    if not w.size:  # no die-to-die traffic: every placement is optimal
        return replace(sol, placement=start_pl), {
            **stats, "status": Status.OPTIMAL.value, "proven": True, "gap": 0.0,
            "byte_hops": start_bh, "improved": False, "qap_objective": 0, "qap_bound": 0,
            "solver_s": 0.0}
    qinst = placement_qap(inst, flows)
    res = solve("core_assignment", qinst, method, time_limit=time_limit, seed=seed,
                threads=threads, warm_start=QapSolution(start), budget=budget)
    nodes, improved = start, False
    if res.solution is not None:
        cand = np.asarray(res.solution.core, dtype=np.int64)
        if flows.byte_hops(cand, h.cols) < start_bh:
            nodes, improved = cand, True
    (ur, uc), (vr, vc) = np.divmod(nodes[u], h.cols), np.divmod(nodes[v], h.cols)
    rounded = int((w * (np.abs(ur - vr) + np.abs(uc - vc))).sum())
    bound = None if res.bound is None else float(res.bound)
    proven = res.status is Status.OPTIMAL and bound is not None and rounded <= bound + 0.5
    gap = None if bound is None else (0.0 if rounded <= 0 else max(0.0, 1 - bound / rounded))
    out = replace(sol, placement=flows.split(nodes))
    return out, {**stats, "status": res.status.value, "proven": bool(proven), "gap": gap,
                 "byte_hops": flows.byte_hops(nodes, h.cols), "improved": improved,
                 "qap_objective": rounded, "qap_bound": bound, "solver_s": round(res.wall_s, 3),
                 **({"message": res.message} if res.message else {})}


# ---------------------------------------------------------------------------------------
# core_assignment: place the groups of another method's mapping


@dataclass(frozen=True)
class GroupsParams:
    groups: str | None = param(None, "a core_assignment method whose mapping's groups are "
                               "placed (it runs first; its placement is the warm start)",
                               none="the warm start's groups, else one vertex per core, "
                               "else the min-cut partition's")


class GroupsFrom(Chain):
    """``groups=METHOD`` on a ``-place`` method: METHOD runs first, its mapping is the
    warm start whose groups the method places."""

    name = "groups"
    params = GroupsParams

    def applies_to(self, m: Method) -> bool:
        return m.name.endswith("-place")

    def before(self, instance: Any, options: Any, params: Any, m: Method, *,
               solve: SolveFn, methods: tuple[str, ...] = ()) -> Any:
        if params.groups is None:
            return options
        if params.groups not in methods:
            from chipsched.errors import UnknownNameError

            raise UnknownNameError("parameter groups", params.groups,
                                   [n for n in methods if not n.endswith("-place")])
        if params.groups.endswith("-place"):
            raise InputError("parameter groups", f"{params.groups!r} places groups, it "
                             "does not make them", "name a method that partitions, e.g. "
                             "seed004, metis")
        if options.warm_start is not None:
            raise InputError("parameter groups", "and a warm start both give the groups",
                             "give one of them")
        # the face runs the named method first and hands its mapping over
        return options.replace(warm_start=params.groups)


_CHAINS: dict[str, tuple[Chain, ...]] = {
    "region_split": (RegionPlacement(),),
    "core_assignment": (GroupsFrom(),),
}


def chains_for(decision: str) -> tuple[Chain, ...]:
    """The chain steps of a decision (none for most)."""
    return _CHAINS.get(decision, ())
