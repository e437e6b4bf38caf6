"""tile_groups exact methods: CP-SAT and a Pyomo MILP over the segmented space, the
ε-constraint Pareto front, and brute-force oracles for the segmented and the full tree
space.

**The segmented space** (issue 4; ``docs/tile_groups.md``): a root ``T(1)`` cut over
consecutive segments of the network's layer order; each segment is either LS —
``T(sb)[ l_i … l_j ]`` on all tiles (one layer: the leaf or ``T(sb)[l]``) — or one S cut
``S(sb){a_i,…,a_j}[ l_i … l_j ]`` with explicit integer tile counts per layer (every
composition of the chip's tiles), ``sb`` a divisor of the batch.

**Column model.** Because the root is a T cut, segments meet only through DRAM, so a
tree's latency and energy are the sums of its segments' (``Analyzer.segment``). Each
(segment, mode, sb, allocation) is a *column* with its exact (latency, energy) from the
analyzer; a tree is a path of columns from boundary 0 to boundary L. The models pick
binary columns under flow conservation — exact for latency and for energy. Per-layer
tile counts are not separate variables because a segment's cost is not separable per
layer (pipeline simulation, the busiest NoC link, shared DRAM bandwidth): enumerating
the allocations as columns keeps the model exact. Columns dominated in both latency and
energy by another column of the same layers are dropped (exact for any objective
increasing in both). Both solvers get the same integer coefficients (values floored to
``scale`` units, so their optima are valid lower bounds).

**E^n·D^m** (n, m > 0): the ε-constraint method — min latency s.t. energy ≤ ε, then min
energy s.t. latency ≤ that latency (a non-dominated point), ε = its energy − 1 unit,
until infeasible — gives the exact Pareto front; the objective is minimized on it.
The front is returned in the stats.

**Brute force.** ``bruteforce-seg`` enumerates every tree of the segmented space and
evaluates each with the analyzer (not the column sums); ``bruteforce`` enumerates the
full tree space — every topological order, tree shape, cut type, sub-batch count and
explicit allocation of every S cut — for tiny networks; it is the oracle for the SA.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from chipsched.budget import Budget
from chipsched.cost import divisors
from chipsched.errors import InputError
from chipsched.method import MethodOutput, count_text, method, param
from chipsched.problems.tile_groups import (
    LEAF,
    SCUT,
    TCUT,
    Instance,
    Node,
    Solution,
    assemble,
    cut,
    leaf,
)
from chipsched.problems.tile_groups.analyzer import Infeasible
from chipsched.problems.tile_groups.bound import full_space_bound
from chipsched.problems.tile_groups.bound import warm_up_kernels as bound_kernels
from chipsched.problems.tile_groups.segment_kernel import (
    warm_up_kernels as segment_kernels,
)
from chipsched.problems.tile_groups.segments import (
    DPStopped,
    compositions,
    is_ls,
    n_segment_options,
    pareto_dp,
    segment_node,
    segment_options,
)
from chipsched.result import Status
from chipsched.solvers.bruteforce import STOPPED, enumerate_best
from chipsched.solvers.options import SolveOptions
from chipsched.units import si_text

#: Default largest number of columns (segment options) the exact models evaluate.
MAX_COLUMNS = 100_000
#: Integer resolution of latency and energy coefficients (units of max column / SCALE).
SCALE = 10 ** 9
#: the column MILP's tolerances per backend (x within 1e-10 of 0/1 moves a sum < 0.1
#: unit). CBC needs both as well: with its defaults (1e-6 integrality, 1e-7 primal) it
#: proved a front point optimal that is 4 % worse than a feasible one, called its answer
#: non-integer, or ended a 20-layer sweep after one point of 18
MILP_TOLERANCES = {
    "highs": {"mip_feasibility_tolerance": 1e-10, "primal_feasibility_tolerance": 1e-10},
    "cbc": {"integerTolerance": 1e-10, "primalTolerance": 1e-10},
}


# ---------------------------------------------------------------------------------------
# columns


@dataclass(frozen=True)
class Column:
    """Segment layers[i:j] as ``node``; one run's latency (s) and energy (J)."""

    i: int
    j: int
    node: Node
    time: float
    energy: float


def count_columns(L: int, batch: int, tiles: int, max_segment: int) -> int:
    """Segment options with at most ``max_segment`` layers over L layers."""
    return sum(n_segment_options(j - i, batch, tiles) for i in range(L)
               for j in range(i + 1, min(L, i + max_segment) + 1))


def build_columns(instance: Instance, max_segment: int | None = None,
                  max_columns: int = MAX_COLUMNS, prune: bool = True,
                  budget: Budget | None = None) -> tuple[list[Column], dict[str, Any]]:
    """Evaluate every segment option once (cached by the analyzer) and keep the feasible
    ones — per (i, j) only the (latency, energy)-non-dominated ones when ``prune``.

    With ``max_segment=None`` the whole segmented space is built if it has at most
    ``max_columns`` options; otherwise segments are capped at the largest length that
    fits (``stats['capped']``: the result is then optimal only within the cap). Polls
    ``budget`` as it goes (:class:`~chipsched.budget.BudgetExhausted` once it is over)."""
    an = instance.analyzer
    L, G, B = len(instance.workload), instance.n_tiles, instance.batch
    capped = False
    if max_segment is None:
        M = L
        while M > 1 and count_columns(L, B, G, M) > max_columns:
            M -= 1
        capped = M < L
    else:
        M = max(1, min(L, int(max_segment)))
        capped = M < L
    total = count_columns(L, B, G, M)
    if total > max_columns:
        raise InputError(f"instance {instance.name!r}", f"the segmented space has {total:,} "
                         f"columns (> {max_columns:,}) even with segments of {M} layer(s)",
                         "use a smaller chip or a heuristic method")
    cols: list[Column] = []
    infeasible = 0
    for i in range(L):
        for j in range(i + 1, min(L, i + M) + 1):
            got: list[Column] = []
            for node in segment_options(range(i, j), B, G):
                if budget is not None:
                    budget.tick("building the columns", 16)
                try:
                    c = an.segment(node, B, (0,))
                except Infeasible:
                    infeasible += 1
                    continue
                got.append(Column(i, j, node, c.time, c.energy))
            if prune:
                got.sort(key=lambda c: (c.time, c.energy))
                kept: list[Column] = []
                for c in got:
                    if not kept or c.energy < kept[-1].energy:
                        kept.append(c)
                got = kept
            cols.extend(got)
    return cols, {"columns_enumerated": total, "columns_infeasible": infeasible,
                  "columns": len(cols), "max_segment": M, "capped": capped}


def _scaled(values: Sequence[float]) -> tuple[list[int], float]:
    unit = max(values) / SCALE if values and max(values) > 0 else 1.0
    return [int(math.floor(v / unit)) for v in values], unit


def _hint_columns(instance: Instance, cols: Sequence[Column], ws: Solution | None) -> set[int]:
    """Columns of a warm-start tree that is in the segmented space (else empty)."""
    if ws is None:
        return set()
    tree = ws.tree
    an = instance.analyzer
    segs = tree.children if tree.kind == TCUT and tree.sb == 1 else (tree,)
    index = {(c.i, c.j, c.node): k for k, c in enumerate(cols)}
    out, pos = set(), 0
    for s in segs:
        lays = s.layers
        if list(lays) != list(range(pos, pos + len(lays))):
            return set()
        node = s
        if s.kind == SCUT and s.alloc is None:
            try:
                node = Node(SCUT, -1, s.children, s.sb,
                            an.allocation(s, instance.n_tiles, (0,)))
            except Infeasible:
                return set()
        k = index.get((pos, pos + len(lays), node))
        if k is None:
            return set()
        out.add(k)
        pos += len(lays)
    return out if pos == len(instance.workload) else set()


# ---------------------------------------------------------------------------------------
# the two backends: min Σ w·x over column paths, with optional ≤ constraints


class _Backend:
    """Solves ``min Σ obj_c x_c`` over 0→L column paths subject to ``Σ a_c x_c ≤ rhs``."""

    name = ""

    def __init__(self, cols: Sequence[Column], L: int, options: SolveOptions,
                 hints: set[int]):
        self.cols, self.L, self.options, self.hints = cols, L, options, hints

    def solve(self, obj: Sequence[int], limits: Sequence[tuple[Sequence[int], int]]
              ) -> tuple[Status, list[int] | None, float | None]:
        """One solve on what is left of the run's budget."""
        raise NotImplementedError


class _CpSat(_Backend):
    name = "cpsat"

    def solve(self, obj, limits):
        from ortools.sat.python import cp_model

        from chipsched.solvers.cpsat import solve_cpsat

        m = cp_model.CpModel()
        x = [m.new_bool_var(f"x{k}") for k in range(len(self.cols))]
        self._flow(m, x)
        for coef, rhs in limits:
            m.add(sum(c * v for c, v in zip(coef, x, strict=True) if c) <= rhs)
        m.minimize(sum(c * v for c, v in zip(obj, x, strict=True) if c))
        hints = {x[k]: int(k in self.hints) for k in range(len(x))} if self.hints else None
        out, solver = solve_cpsat(m, self.options, hints)
        sel = [k for k in range(len(x)) if solver.value(x[k])] if out.has_solution else None
        return out.status, sel, out.bound

    def _flow(self, m: Any, x: list[Any]) -> None:
        out_of: list[list[int]] = [[] for _ in range(self.L + 1)]
        into: list[list[int]] = [[] for _ in range(self.L + 1)]
        for k, c in enumerate(self.cols):
            out_of[c.i].append(k)
            into[c.j].append(k)
        for t in range(self.L + 1):
            rhs = (1 if t == 0 else 0) - (1 if t == self.L else 0)
            m.add(sum(x[k] for k in out_of[t]) - sum(x[k] for k in into[t]) == rhs)


class _Milp(_Backend):
    name = "milp"

    def solve(self, obj, limits):
        import pyomo.environ as pyo

        from chipsched.solvers.milp import solve_pyomo

        cols, L = self.cols, self.L
        M = pyo.ConcreteModel()
        M.K = pyo.RangeSet(0, len(cols) - 1)
        M.x = pyo.Var(M.K, domain=pyo.Binary)
        out_of: list[list[int]] = [[] for _ in range(L + 1)]
        into: list[list[int]] = [[] for _ in range(L + 1)]
        for k, c in enumerate(cols):
            out_of[c.i].append(k)
            into[c.j].append(k)

        def flow(M, t):
            rhs = (1 if t == 0 else 0) - (1 if t == L else 0)
            return sum(M.x[k] for k in out_of[t]) - sum(M.x[k] for k in into[t]) == rhs

        M.flow = pyo.Constraint(pyo.RangeSet(0, L), rule=flow)
        M.limits = pyo.ConstraintList()
        for coef, rhs in limits:
            M.limits.add(sum(float(c) * M.x[k] for k, c in enumerate(coef) if c) <= float(rhs))
        M.obj = pyo.Objective(expr=sum(float(c) * M.x[k] for k, c in enumerate(obj) if c),
                              sense=pyo.minimize)
        if self.hints:
            for k in M.K:
                M.x[k].value = 1.0 if k in self.hints else 0.0
        opts = self.options
        # integer coefficients up to SCALE: a default integrality tolerance (1e-6) would
        # let the ε-constraint slip by up to 1e-6·SCALE units; tighten it
        extra = MILP_TOLERANCES.get(opts.milp_solver)
        out = solve_pyomo(M, opts, warm_start=bool(self.hints), solver_options=extra)
        sel = [k for k in M.K if (pyo.value(M.x[k]) or 0) > 0.5] if out.has_solution else None
        return out.status, sel, out.bound


# ---------------------------------------------------------------------------------------
# the method


def epsilon_front(backend: _Backend, d_int: Sequence[int], e_int: Sequence[int]
                  ) -> tuple[list[tuple[int, int, list[int]]], bool, float, float]:
    """The ε-constraint sweep (Haimes et al.): from the latency-optimal end, alternately
    min latency s.t. energy ≤ ε and min energy s.t. latency ≤ that latency, with ε
    stepping one unit below each point's energy, until infeasible.

    Returns the integer front [(latency, energy, columns)] ordered by latency, whether
    it is complete, and lower bounds on the smallest latency and energy (the ideal
    point, a valid bound for any E^n·D^m when the sweep is cut short). Each solve gets
    what is left of the run's budget; the sweep ends when one stops short of a proof."""
    st, sel, bnd = backend.solve(e_int, [])
    e_lb = float(sum(e_int[k] for k in sel)) if st is Status.OPTIMAL and sel else \
        max(0.0, bnd or 0.0)
    front: list[tuple[int, int, list[int]]] = []
    d_lb = 0.0
    eps: int | None = None
    while True:
        if front and backend.options.budget.exhausted():
            return front, False, d_lb, e_lb  # the front so far: stop between two solves
        lim = [] if eps is None else [(e_int, eps)]
        st, sel, bnd = backend.solve(d_int, lim)
        if eps is None:
            d_lb = float(sum(d_int[k] for k in sel)) if st is Status.OPTIMAL and sel else \
                max(0.0, bnd or 0.0)
        if st is Status.INFEASIBLE:
            return front, True, d_lb, e_lb
        if st is not Status.OPTIMAL or sel is None:
            return front, False, d_lb, e_lb
        dv = sum(d_int[k] for k in sel)
        st, sel2, _ = backend.solve(e_int, [*lim, (d_int, dv)])
        if st is not Status.OPTIMAL or sel2 is None:
            return front, False, d_lb, e_lb
        ev = sum(e_int[k] for k in sel2)
        front.append((sum(d_int[k] for k in sel2), ev, sel2))
        eps = ev - 1


def _exact(instance: Instance, options: SolveOptions, backend_cls: type[_Backend],
           max_segment: int | None, prune: bool, max_columns: int) -> MethodOutput:
    budget = options.budget
    t0 = budget.elapsed()
    cols, stats = build_columns(instance, max_segment, max_columns, prune, budget)
    stats["build_s"] = budget.elapsed() - t0
    L = len(instance.workload)
    obj = instance.objective
    d_int, ud = _scaled([c.time for c in cols])
    e_int, ue = _scaled([c.energy for c in cols])
    backend = backend_cls(cols, L, options, _hint_columns(instance, cols,
                                                          options.warm_solution))
    stats["warm_start_columns"] = len(backend.hints)

    def tree_of(sel: list[int]) -> Node:
        return assemble([c.node for c in sorted((cols[k] for k in sel), key=lambda c: c.i)])

    def column_value(sel: list[int]) -> tuple[float, float]:
        """(latency, energy) of a path by the model's own data: the column sums."""
        return (math.fsum(cols[k].time for k in sel), math.fsum(cols[k].energy for k in sel))

    n, m = obj.coefficient("energy_j"), obj.coefficient("delay_s")
    if n == 0 or m == 0:  # latency (E^0) or energy (D^0): one solve
        coef = d_int if n == 0 else e_int
        unit = ud if n == 0 else ue
        st, sel, bnd = backend.solve(coef, [])
        stats["solve_s"] = budget.elapsed() - t0 - stats["build_s"]
        exp = m if n == 0 else n
        bound = None if bnd is None else (max(0.0, bnd) * unit) ** exp
        if sel is None:
            return _capped(MethodOutput(st, None, bound=bound, stats=stats))
        tree = tree_of(sel)
        d, e = column_value(sel)
        v = obj(e, d)
        if bound is not None:
            bound = min(bound, v)  # exact ties: the floor can only lower the bound
        # the model's value: integer coefficients, each column floored by < 1 unit
        base = sum(coef[k] for k in sel) * unit
        model, slack = base ** exp, (base + len(sel) * unit) ** exp - base ** exp
        return _capped(MethodOutput(st, Solution.of(instance, tree), v, bound, stats=stats,
                                    model_objective=model, model_tol=slack))
    front, complete, d_lb, e_lb = epsilon_front(backend, d_int, e_int)
    stats["solve_s"] = budget.elapsed() - t0 - stats["build_s"]
    stats["front_complete"] = complete
    ideal = obj(e_lb * ue, d_lb * ud)  # the ideal point: a valid lower bound
    if not front:
        if complete:
            return _capped(MethodOutput(Status.INFEASIBLE, None, stats=stats,
                                        message="no tree in the segmented space"))
        return _capped(MethodOutput(Status.TIME_LIMIT, None, bound=ideal, stats=stats,
                                    message="no Pareto point found within the time limit"))
    pts = []
    for dv, ev, sel in front:
        d, e = column_value(sel)
        pts.append((d, e, tree_of(sel), dv, ev, len(sel)))
    best = min(pts, key=lambda p: obj(p[1], p[0]))
    stats["pareto_front"] = [{"latency_s": p[0], "energy_j": p[1],
                              "tree": Solution.of(instance, p[2]).text} for p in pts]
    v = obj(best[1], best[0])
    if complete:
        bound = min(obj(ev * ue, dv * ud) for _, _, _, dv, ev, _ in pts)
        status = Status.OPTIMAL
    else:
        bound, status = ideal, Status.TIME_LIMIT
    dv, ev, k = best[3], best[4], best[5]
    model = obj(ev * ue, dv * ud)  # its front point, in integer units
    slack = obj((ev + k) * ue, (dv + k) * ud) - model
    return _capped(MethodOutput(status, Solution.of(instance, best[2]), v, min(bound, v),
                                stats=stats, model_objective=model, model_tol=slack))


def _capped(out: MethodOutput) -> MethodOutput:
    """A run over segments capped below the network's length proves nothing about the
    whole segmented space: report it as feasible, without a bound."""
    if not out.stats.get("capped"):
        return out
    st = Status.FEASIBLE if out.status is Status.OPTIMAL else out.status
    return replace(out, status=st, bound=None, message=f"segments capped at "
                   f"{out.stats['max_segment']} layers: optimal only within the cap",
                   stats={**out.stats, "optimal_within_cap": out.status is Status.OPTIMAL})


@dataclass(frozen=True)
class ColumnParams:
    max_segment: int | None = param(None, "longest segment (layers) the columns cover", ge=1,
                                    none="the longest that keeps ≤ max_columns columns")
    prune: bool = param(True, "drop columns dominated in latency and energy")
    max_columns: int = param(MAX_COLUMNS, "largest number of segment options evaluated",
                             ge=1)


def _columns_apply(instance: Instance, params: ColumnParams, warm: bool = False) -> str | None:
    L, B, G = len(instance.workload), instance.batch, instance.n_tiles
    smallest = count_columns(L, B, G, 1 if params.max_segment is None else
                             max(1, min(L, params.max_segment)))
    if smallest > params.max_columns:
        return (f"the segmented space has {smallest:,} columns even with the shortest "
                f"segments allowed (> max_columns {params.max_columns:,})")
    return None


@method("tile_groups", "cpsat", "exact",
        "CP-SAT over the segmented space (column model; ε-constraint front for E^n·D^m)",
        source="issue 4; ε-constraint (Haimes 1971)", space="segmented", params=ColumnParams,
        applies=_columns_apply, warm_start=True)
def cpsat(instance: Instance, options: SolveOptions, params: ColumnParams) -> MethodOutput:
    """Exact optimum of the segmented space with CP-SAT (see the module docstring)."""
    return _exact(instance, options, _CpSat, params.max_segment, params.prune,
                  params.max_columns)


@method("tile_groups", "milp", "exact",
        "Pyomo MILP over the segmented space (column model; ε-constraint front)",
        source="issue 4; ε-constraint (Haimes 1971)", space="segmented", params=ColumnParams,
        applies=_columns_apply, warm_start=True)
def milp(instance: Instance, options: SolveOptions, params: ColumnParams) -> MethodOutput:
    """The same column model as :func:`cpsat`, written in Pyomo (HiGHS by default)."""
    return _exact(instance, options, _Milp, params.max_segment, params.prune,
                  params.max_columns)


# ---------------------------------------------------------------------------------------
# the segmented space by dynamic programming (exact Pareto fronts)


@dataclass(frozen=True)
class SegDPParams:
    max_segment: int | None = param(None, "longest segment (layers)", ge=1,
                                    none="any length (exact for the whole space)")


def _seg_dp(instance: Instance, options: SolveOptions, max_segment: int | None,
            every_allocation: bool) -> MethodOutput:
    """The segmented space (``every_allocation``: S segments with every integer tile
    allocation, the column models' space; else with the NPT allocation) by
    :func:`~chipsched.problems.tile_groups.segments.pareto_dp` with whole fronts."""
    L, G, B = len(instance.workload), instance.n_tiles, instance.batch
    sbs = divisors(B)

    def options_of(i: int, j: int) -> list[Node]:
        if every_allocation:
            return list(segment_options(range(i, j), B, G))
        nodes = [segment_node(range(i, j), sb, "ls") for sb in sbs]
        if 2 <= j - i <= G:
            nodes += [segment_node(range(i, j), sb, "lp") for sb in sbs]
        return nodes

    try:
        tree, v, stats = pareto_dp(instance, options_of, max_segment, None, monotone=is_ls,
                                   budget=options.budget)
    except DPStopped as exc:
        return MethodOutput(Status.TIME_LIMIT, stats=exc.stats,
                            message=f"the DP stopped at {exc.reason} after {exc.prefix} "
                                    f"of {exc.layers} layers")
    whole = max_segment is None or max_segment >= L
    stats["max_segment"] = L if max_segment is None else min(L, max_segment)
    if not whole:  # optimal among segments of ≤ max_segment layers only: no bound
        return MethodOutput(Status.FEASIBLE, Solution.of(instance, tree), v, stats=stats)
    return MethodOutput(Status.OPTIMAL, Solution.of(instance, tree), v, bound=v, stats=stats)


@method("tile_groups", "dp-seg", "exact",
        "DP over segment boundaries with whole Pareto fronts: exact over the segmented "
        "space (every allocation), the CP-SAT/MILP column models' space",
        source="issue 10 (ours)", space="segmented", params=SegDPParams)
def dp_seg(instance: Instance, options: SolveOptions, params: SegDPParams) -> MethodOutput:
    """The optimum of the segmented space (root T(1) over consecutive segments, each an
    LS T(sb) cut or an S(sb) cut with any integer allocation) without a solver: each
    prefix of the layer order keeps its whole (latency, energy) Pareto front. The number
    of allocations, C(G − 1, k − 1) per k-layer S segment, limits it to small chips."""
    return _seg_dp(instance, options, params.max_segment, every_allocation=True)


@method("tile_groups", "dp-seg-npt", "exact",
        "DP over segment boundaries with whole Pareto fronts: exact over LS and LP "
        "segments with NPT allocation (contains the ls and lp baselines' spaces)",
        source="issue 10 (ours)", space="segmented, NPT allocation", params=SegDPParams)
def dp_seg_npt(instance: Instance, options: SolveOptions, params: SegDPParams
               ) -> MethodOutput:
    """The optimum over segmentations of the layer order whose segments are LS T(sb)
    cuts or S(sb) cuts with SET's NPT allocation, any length (S: at most one layer per
    tile), any sb | B — the union of the ls and lp baselines' spaces without their
    segment-length and front caps, so its optimum is at most theirs."""
    return _seg_dp(instance, options, params.max_segment, every_allocation=False)


# ---------------------------------------------------------------------------------------
# brute force


def count_segmented(instance: Instance) -> int:
    """How many trees the segmented space holds."""
    L, G, B = len(instance.workload), instance.n_tiles, instance.batch
    count = [0] * (L + 1)
    count[0] = 1
    for j in range(1, L + 1):
        count[j] = sum(count[i] * n_segment_options(j - i, B, G) for i in range(j))
    return count[L]


def segmented_trees(instance: Instance) -> tuple[Iterator[Node], int]:
    """Every tree of the segmented space (all segmentations × all segment options) and
    their number."""
    L, G, B = len(instance.workload), instance.n_tiles, instance.batch

    def gen(j: int) -> Iterator[list[Node]]:
        if j == 0:
            yield []
            return
        for i in range(j):
            opts = list(segment_options(range(i, j), B, G))
            for head in gen(i):
                for o in opts:
                    yield [*head, o]

    return (assemble(p) for p in gen(L)), count_segmented(instance)


def topological_orders(instance: Instance) -> list[tuple[int, ...]]:
    """All topological orders of the network (for tiny networks)."""
    preds = instance.workload.preds
    n = len(preds)
    out: list[tuple[int, ...]] = []

    def rec(order: list[int], done: set[int]) -> None:
        if len(order) == n:
            out.append(tuple(order))
            return
        for v in range(n):
            if v not in done and all(p in done for p in preds[v]):
                order.append(v)
                done.add(v)
                rec(order, done)
                order.pop()
                done.discard(v)

    rec([], set())
    return out


def _splits(n: int) -> Iterator[tuple[int, ...]]:
    """Ways to cut n consecutive items into ≥ 2 non-empty blocks (block sizes)."""
    for k in range(2, n + 1):
        yield from compositions(n, k)


class _FullSpace:
    """The full tree space over a fixed leaf order: every shape, cut type, sub-batch
    count and explicit S-cut allocation (tree rules of ``tree.py``)."""

    def __init__(self, batch_divs: dict[int, list[int]]):
        self.divs = batch_divs
        self._memo: dict[tuple[tuple[int, ...], int, int], list[Node]] = {}
        self._cmemo: dict[tuple[int, int, int], int] = {}

    def nodes(self, seq: tuple[int, ...], batch: int, tiles: int) -> list[Node]:
        key = (seq, batch, tiles)
        got = self._memo.get(key)
        if got is not None:
            return got
        out: list[Node] = []
        if len(seq) == 1:
            out.append(leaf(seq[0]))
            out.extend(cut(TCUT, [leaf(seq[0])], d) for d in self.divs[batch] if d > 1)
        else:
            for d in self.divs[batch]:
                cb = batch // d
                for sizes in _splits(len(seq)):
                    bounds = list(itertools.accumulate(sizes, initial=0))
                    blocks = [seq[bounds[k]:bounds[k + 1]] for k in range(len(sizes))]
                    for kids in itertools.product(*(self.nodes(b, cb, tiles) for b in blocks)):
                        out.append(Node(TCUT, -1, kids, d))
                    if len(blocks) <= tiles:
                        for alloc in compositions(tiles, len(blocks)):
                            lists = [self.nodes(b, cb, a) for b, a in zip(blocks, alloc,
                                                                          strict=True)]
                            for kids in itertools.product(*lists):
                                out.append(Node(SCUT, -1, kids, d, alloc))
        self._memo[key] = out
        return out

    def count(self, n: int, batch: int, tiles: int) -> int:
        """How many nodes :meth:`nodes` yields for a block of n leaves (a DP over block
        prefixes, not an enumeration)."""
        key = (n, batch, tiles)
        got = self._cmemo.get(key)
        if got is not None:
            return got
        if n == 1:
            c = len(self.divs[batch])
        else:
            c = 0
            for d in self.divs[batch]:
                cb = batch // d
                # T: ordered splits of n into parts, product of the parts' counts
                g = [1] + [0] * n
                for m in range(1, n + 1):
                    g[m] = sum(self.count(s, cb, tiles) * g[m - s] for s in range(1, m + 1)
                               if s < n)
                c += g[n]
                # S: ordered splits of n leaves and of the tiles, one tile or more each
                h = [[0] * (tiles + 1) for _ in range(n + 1)]
                h[0][0] = 1
                for m in range(1, n + 1):
                    for t in range(1, tiles + 1):
                        h[m][t] = sum(self.count(s, cb, a) * h[m - s][t - a]
                                      for s in range(1, m + 1) if s < n
                                      for a in range(1, t + 1))
                c += h[n][tiles]
        self._cmemo[key] = c
        return c

    def roots(self, seq: tuple[int, ...], batch: int, tiles: int) -> Iterator[Node]:
        yield from self.nodes(seq, batch, tiles)
        for d in self.divs[batch]:
            for x in self.nodes(seq, batch // d, tiles):
                if x.kind != LEAF:
                    yield Node(TCUT, -1, (x,), d)

    def count_roots(self, n: int, batch: int, tiles: int) -> int:
        c = self.count(n, batch, tiles)
        for d in self.divs[batch]:
            c += self.count(n, batch // d, tiles) - (1 if n == 1 else 0)
        return c


#: The full-space oracle refuses networks with more layers than this.
MAX_BRUTE_LAYERS = 8


def count_full_space(instance: Instance, fs: _FullSpace | None = None,
                     orders: int | None = None) -> int:
    """How many trees the full space holds (topological orders × trees per order)."""
    B, G = instance.batch, instance.n_tiles
    fs = fs or _FullSpace({b: divisors(b) for b in divisors(B)})
    n_orders = len(topological_orders(instance)) if orders is None else orders
    return n_orders * fs.count_roots(len(instance.workload), B, G)


def full_space(instance: Instance) -> tuple[Iterator[Node], int]:
    """Every tree of the full space (all topological orders) and their number."""
    B, G = instance.batch, instance.n_tiles
    if len(instance.workload) > MAX_BRUTE_LAYERS:
        raise InputError(f"instance {instance.name!r}", f"too large for brute force "
                         f"({len(instance.workload)} layers > {MAX_BRUTE_LAYERS})",
                         "use an exact or heuristic method")
    fs = _FullSpace({b: divisors(b) for b in divisors(B)})
    orders = topological_orders(instance)
    total = count_full_space(instance, fs, len(orders))

    def gen() -> Iterator[Node]:
        for order in orders:
            yield from fs.roots(order, B, G)

    return gen(), total


def _brute(instance: Instance, trees: Iterator[Node], size: int, max_candidates: int,
           what: str, budget: Budget | None = None) -> MethodOutput:
    an = instance.analyzer
    t0 = time.perf_counter()
    # enumerate_best compares with an absolute 1e-12 tolerance below 1, and E^n·D^m values
    # are often ~1e-18: compare values relative to the first feasible one instead
    ref: list[float] = []

    def value(tree: Node) -> float | None:
        v = an.try_objective(tree)
        if v is None:
            return None
        if not ref:
            ref.append(v if v > 0 else 1.0)
        return v / ref[0]

    res = enumerate_best(trees, value, size=size, max_candidates=max_candidates,
                         what=f"instance {instance.name!r} ({what})", budget=budget)
    stats = {"trees": size, "feasible": res.count, "ties": res.ties,
             "wall_s": time.perf_counter() - t0}
    if not res.complete:
        if res.best is None:
            return MethodOutput(Status.TIME_LIMIT, None, stats=stats, message=STOPPED)
        v = res.value * ref[0]
        return MethodOutput(Status.TIME_LIMIT, Solution.of(instance, res.best), v, None,
                            stats=stats, message=STOPPED)
    if res.best is None:
        return MethodOutput(Status.INFEASIBLE, None, stats=stats)
    v = res.value * ref[0]
    return MethodOutput(Status.OPTIMAL, Solution.of(instance, res.best), v, v, stats=stats)


@dataclass(frozen=True)
class BruteParams:
    max_candidates: int = param(200_000, "largest number of trees to enumerate", ge=1)


def _seg_applies(instance: Instance, params: BruteParams, warm: bool = False) -> str | None:
    n = count_segmented(instance)
    if n > params.max_candidates:
        return f"too large for brute force ({count_text(n)} trees > max_candidates " \
               f"{params.max_candidates:,})"
    return None


def _full_applies(instance: Instance, params: BruteParams, warm: bool = False) -> str | None:
    L = len(instance.workload)
    if L > MAX_BRUTE_LAYERS:
        return f"too large for brute force ({L} layers > {MAX_BRUTE_LAYERS})"
    n = count_full_space(instance)
    if n > params.max_candidates:
        return f"too large for brute force ({count_text(n)} trees > max_candidates " \
               f"{params.max_candidates:,})"
    return None


@method("tile_groups", "bruteforce-seg", "oracle",
        "every tree of the segmented space, each evaluated by the analyzer",
        source="issue 4", space="segmented", params=BruteParams, applies=_seg_applies)
def bruteforce_seg(instance: Instance, options: SolveOptions, params: BruteParams
                   ) -> MethodOutput:
    """The oracle of :func:`cpsat` / :func:`milp`: no columns, no pruning, no solver."""
    trees, n = segmented_trees(instance)
    return _brute(instance, trees, n, params.max_candidates, "segmented space",
                  options.budget)


@method("tile_groups", "bruteforce", "oracle",
        "every tree of the full space (orders, shapes, S/T, sub-batches, allocations)",
        source="seed 002 (the RA-tree space)", space="full tree space, all allocations",
        params=BruteParams, applies=_full_applies)
def bruteforce(instance: Instance, options: SolveOptions, params: BruteParams
               ) -> MethodOutput:
    """The full-space optimum for tiny networks and meshes: the SA's oracle."""
    trees, n = full_space(instance)
    return _brute(instance, trees, n, params.max_candidates, "full tree space",
                  options.budget)


@method("tile_groups", "bound", "bound",
        "a proven lower bound of the full tree space (per root run count: the rows a tree "
        "can use, weights per segment run, DRAM and NoC hops of the least placement, "
        "an energy-latency envelope with dependency paths); no tree",
        source="issues 10 and 30 (ours)")
def bound(instance: Instance, options: SolveOptions) -> MethodOutput:
    """E^n·D^m bound valid for every tree the analyzer accepts
    (:func:`chipsched.problems.tile_groups.bound.full_space_bound`, which refines the
    per-layer :func:`~chipsched.problems.tile_groups.bound.lower_bound` and, within the
    run's budget, adds the dependency-path envelope); its stats hold the lower envelope
    E*(D) of energy against latency and what the path LPs did (``paths``)."""
    fb = full_space_bound(instance, budget=options.budget, progress=options.report)
    cut_short = fb.paths is not None and not fb.paths["complete"]
    return MethodOutput(
        Status.BOUND_ONLY, bound=fb.objective, stats=fb.to_dict(),
        message=f"energy ≥ {si_text(fb.energy_j, 'J')}, "
                f"latency ≥ {si_text(fb.latency_s, 's')}; "
                f"least at root run count {fb.root_runs}; no tree. Relaxation: one usable "
                f"(tile count, sub-batch) row per layer — weights once per segment run, "
                f"DRAM and NoC traffic at the least placement's hops — mixed by an LP "
                f"energy–latency envelope with every dependency path's run times × the "
                f"root run count (docs/tile_groups.md §4.2, §4.3)"
                + ("; the time limit stopped the path envelope, the rest is the row "
                   "bound's" if cut_short else ""))


def warm_up_kernels() -> None:
    """Compile the bound's envelope kernel and the analyzer's segment kernel
    (``chipsched.jit``)."""
    bound_kernels()
    segment_kernels()
