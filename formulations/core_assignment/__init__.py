"""core_assignment exact methods: CP-SAT and Pyomo MILP models (:mod:`.models`), the
Gilmore–Lawler branch and bound for placement (:mod:`.bnb`) and the brute-force oracle.

==============  ========  ========================================================================
method          space     what
==============  ========  ========================================================================
``cpsat``       full      the instance's objective: ``cut`` → model (a) k-way partition;
``milp``                  ``traffic``/``energy`` → model (b) QAP when no two vertices fit on
                          one core, else model (c) joint
``cpsat-place`` placement placement of a fixed partition, model (b) on its groups: the warm
``milp-place``            start's groups (``options.warm``; the face's chain step
``bnb-place``             ``groups=METHOD`` runs METHOD first and hands its mapping over), else
                          every vertex alone when no two fit on a core, else the groups of the
                          optimal model (a) partition; ``bnb-place`` solves (b) by
                          Gilmore–Lawler branch and bound
``bruteforce``  full      every vertex → core map (tiny instances)
==============  ========  ========================================================================

The placement methods are exact *in their space* (placements of that partition): a
heuristic with a different partition may beat their optimum; with one vertex per core
the spaces coincide. Instances too large for a full-space model are declared not
applicable (``compare`` shows them skipped); a placement model too large for the groups
it is handed ends with status ``error`` and a message.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsched.method import MethodOutput, method, param
from chipsched.problems.core_assignment import Instance, Solution, check_solution
from chipsched.result import Status
from chipsched.solvers.bruteforce import MAX_CANDIDATES, STOPPED, enumerate_best
from chipsched.solvers.options import SolveOptions

from .bnb import gilmore_lawler_bound, solve_qap_bnb, symmetry_representatives
from .bounds import (
    DNN_MAX_CORES,
    FLOAT_MARGIN,
    RING_STEPS,
    RLT1_MAX,
    BoundReport,
    cut_bound,
    density_cut_bound,
    mesh_distances,
    multicast_ring_bound,
    qap_bounds,
    ring_bound,
    ring_cut_bound,
)

__all__ = ["joint_bound", "placement_bound", "solve_qap_bnb", "symmetry_representatives"]

D = "core_assignment"
#: Largest model the exact methods build, in assignment variables (items × cores or
#: parts) per model: beyond these the models are hopeless anyway (see the benchmarks).
MAX_ASSIGNMENT_VARS = {"partition": 20_000, "mesh": 5_000, "placement": 10_000}
#: Largest edge count of an exact model.
MAX_MODEL_EDGES = 20_000


def _warm(instance: Instance, options: SolveOptions) -> np.ndarray | None:
    """The warm start's core of every vertex (the face checked it), or None."""
    if options.warm is None:
        return None
    core, _ = check_solution(instance, options.warm_solution)
    return core


def _too_large(n_items: int, n_slots: int, n_edges: int, what: str) -> MethodOutput | None:
    if n_items * n_slots > MAX_ASSIGNMENT_VARS[what] or n_edges > MAX_MODEL_EDGES:
        return MethodOutput(Status.ERROR, message=f"too large for the exact {what} model "
                            f"({n_items:,} items × {n_slots:,} slots, {n_edges:,} edges; "
                            f"limits {MAX_ASSIGNMENT_VARS[what]:,} assignment variables and "
                            f"{MAX_MODEL_EDGES:,} edges); place fewer groups: another "
                            "method's (-p groups=seed004, or --warm-start FILE)")
    return None


def _own_value(instance: Instance, inp: Any, core: np.ndarray) -> float:
    """The objective of ``core`` by the model input's own arithmetic (edge list,
    Manhattan hops). A time-limited CP-SAT/MILP incumbent's model value can exceed it:
    the model's distance variables are only bounded below by |Δrow| + |Δcol|."""
    cols = inp.cols
    if inp.nets is not None:
        from .models import multicast_value

        return float(multicast_value(inp, core))
    a, b = core[inp.u], core[inp.v]
    hops = np.abs(a // cols - b // cols) + np.abs(a % cols - b % cols)
    w = inp.w.astype(np.int64)
    return instance.objective_from_traffic(int((w * hops).sum()), int(w[a != b].sum()))


def _round_bound(instance: Instance, bound: float) -> float:
    """Integer edge weights × integer hops: every traffic, cut or multicast objective is
    an integer, so a fractional LP/MILP bound (497.478) rounds up (less the solver's
    tolerance)."""
    if instance.objective.name in ("traffic", "cut", "multicast"):
        near = round(bound)
        if abs(bound - near) <= 1e-6 * max(1.0, abs(bound)):  # the solver's tolerance
            return float(near)
        return float(math.ceil(bound))
    return bound


def _output(instance: Instance, out: Any, core: np.ndarray | None, formulation: str,
            bound_valid: bool = True, inp: Any = None, model_tol: float = 0.0
            ) -> MethodOutput:
    stats = {**out.stats, "formulation": formulation, "backend": out.backend,
             "solver_s": round(out.wall_s, 4)}
    def scale(x: float) -> float:
        return instance.objective_from_traffic(x, x)

    bound = _round_bound(instance, scale(out.bound)) \
        if bound_valid and out.bound is not None else None
    if core is None:
        return MethodOutput(out.status, None, bound=bound, stats=stats,
                            message="no solution found")
    obj = scale(out.objective) if out.objective is not None else None
    if inp is not None:
        model = obj
        obj = _own_value(instance, inp, np.asarray(core, dtype=np.int64))
        return MethodOutput(out.status, Solution(core), objective=obj, bound=bound,
                            stats=stats, model_objective=model, model_tol=model_tol)
    return MethodOutput(out.status, Solution(core), objective=obj, bound=bound, stats=stats)


def _full_model_size(instance: Instance) -> tuple[int, int, str]:
    """(items, slots, model) of the full-space model of the instance's objective."""
    if instance.objective.name == "cut":
        return instance.n, min(instance.n, instance.n_cores), "partition"
    return instance.n, instance.n_cores, "mesh"


#: Model (d) has a packet constraint per edge and core: its largest size.
MAX_MULTICAST_ROWS = 100_000


def _full_applies(instance: Instance, params: Any, warm: bool = False) -> str | None:
    n, slots, what = _full_model_size(instance)
    edges = int(instance.graph.m)
    if instance.multicast and not instance.forced_partition and \
            edges * instance.n_cores > MAX_MULTICAST_ROWS:
        return (f"too large for the exact multicast model (d) ({edges:,} edges × "
                f"{instance.n_cores:,} cores packet constraints; limit "
                f"{MAX_MULTICAST_ROWS:,})")
    if n * slots > MAX_ASSIGNMENT_VARS[what] or edges > MAX_MODEL_EDGES:
        return (f"too large for the exact {what} model ({n:,} items × {slots:,} slots, "
                f"{edges:,} edges; limits {MAX_ASSIGNMENT_VARS[what]:,} assignment variables "
                f"and {MAX_MODEL_EDGES:,} edges)")
    return None


def _full(instance: Instance, options: SolveOptions, backend: str) -> MethodOutput:
    from .models import (
        cpsat_joint,
        cpsat_multicast,
        cpsat_partition,
        cpsat_qap,
        from_instance,
        milp_mesh,
        milp_multicast,
        milp_partition,
    )

    inp = from_instance(instance)
    hint = _warm(instance, options)
    if instance.objective.name == "cut":
        fn = cpsat_partition if backend == "cpsat" else milp_partition
        out, core = fn(inp, options, hint)
        return _output(instance, out, core, "partition (a)", inp=inp)
    qap = instance.forced_partition
    if qap and inp.n > inp.cores:
        return MethodOutput(Status.INFEASIBLE, message=f"no two vertices fit on one core and "
                            f"there are {inp.n} vertices for {inp.cores} cores")
    if instance.multicast and not qap:
        fn = cpsat_multicast if backend == "cpsat" else milp_multicast
        out, core = fn(inp, options, hint)
        # the big-M rows let a packet indicator at 1 − ε (the MILP's integrality
        # tolerance, 1e-6) lower each hop term by (R + C − 2)·ε
        src, _, _, spk = inp.nets
        tol = 1e-6 * (inp.rows + inp.cols - 2) * float(spk.sum()) * inp.cores
        return _output(instance, out, core, "multicast joint (d)", inp=inp, model_tol=tol)
    if instance.multicast:
        # one vertex per core: the packet graph's QAP is exact
        inp = from_instance(instance, nets=False)
    if backend == "cpsat":
        out, core = (cpsat_qap if qap else cpsat_joint)(inp, options, hint)
    else:
        out, core = milp_mesh(inp, options, qap, hint)
    return _output(instance, out, core, "qap (b)" if qap else "joint (c)", inp=inp)


@method(D, "cpsat", "exact", "CP-SAT: k-way min-cut partition (cut), QAP with integer "
        "coordinates (one vertex per core) or joint model (traffic, energy)",
        source="ours; QAP linearisation per axis, Gilmore–Lawler cuts",
        applies=_full_applies, warm_start=True)
def cpsat(instance: Instance, options: SolveOptions) -> MethodOutput:
    return _full(instance, options, "cpsat")


@method(D, "milp", "exact", "Pyomo MILP of the same models (HiGHS by default)",
        source="ours", applies=_full_applies, warm_start=True)
def milp(instance: Instance, options: SolveOptions) -> MethodOutput:
    return _full(instance, options, "milp")


# ---------------------------------------------------------------------------------------
# placement of a fixed partition


def _groups(instance: Instance, options: SolveOptions, backend: str
            ) -> tuple[np.ndarray, np.ndarray | None, str] | MethodOutput:
    """(group of every vertex, warm placement of the groups or None, where from)."""
    from .models import cpsat_partition, from_instance, milp_partition

    warm = _warm(instance, options)
    if warm is not None:
        sol = Solution(warm)
        group, cores = sol.groups()
        return group, cores, "warm start"
    if instance.forced_partition:
        return np.arange(instance.n, dtype=np.int64), None, "one vertex per core"
    inp = from_instance(instance)
    k = min(inp.n, inp.cores)
    big = _too_large(inp.n, k, inp.u.shape[0], "partition")
    if big:
        return big
    part_opts = options.replace(budget=options.budget.share(0.5))  # half for the placement
    fn = milp_partition if backend == "milp" else cpsat_partition
    out, core = fn(inp, part_opts)
    if core is None:
        return MethodOutput(out.status, message="the partition model found no solution")
    group, _ = Solution(core).groups()
    return group, None, f"min-cut partition ({out.status.value})"


def _place(instance: Instance, options: SolveOptions, backend: str) -> MethodOutput:
    out = _place_groups(instance, options, backend)
    if instance.forced_partition:
        # no two vertices fit on a core: every mapping places the one-vertex groups, so
        # the placement space is the full space and its proof or bound is the decision's
        return dataclasses.replace(out, space="")
    return out


def _place_groups(instance: Instance, options: SolveOptions, backend: str) -> MethodOutput:
    from .models import ModelInput, cpsat_qap, milp_mesh  # loads pyomo: ~1 s, on the clock

    got = _groups(instance, options, backend)
    if isinstance(got, MethodOutput):
        return got
    group, warm_cores, origin = got
    G = int(group.max()) + 1
    q = instance.quotient(group, G)
    if G > instance.n_cores:
        return MethodOutput(Status.INFEASIBLE, message=f"{G} groups on {instance.n_cores} cores")
    u, v, w = q.edges()
    inp = ModelInput(q.sizes, u, v, w, instance.rows, instance.cols, instance.capacity)
    cut = int(w.sum())
    stats: dict[str, Any] = {"groups": G, "groups_from": origin}
    if backend == "bnb":
        F = np.zeros((G, G), np.int64)
        F[u, v] = w
        F[v, u] = w
        gc, obj, lb, proven, nodes = solve_qap_bnb(F, instance.rows, instance.cols,
                                                   options.budget, warm_cores)
        stats.update({"nodes": nodes, "formulation": "Gilmore–Lawler branch and bound"})
        status = Status.OPTIMAL if proven else Status.TIME_LIMIT
        if not proven:
            lb = int(_best_placement_bound(instance, q, lb, stats, options.budget, False))
        if gc is None:
            return MethodOutput(status, None, bound=instance.objective_from_traffic(lb, cut),
                                stats=stats)
        return MethodOutput(status, Solution(gc[group]),
                            objective=instance.objective_from_traffic(obj, cut),
                            bound=instance.objective_from_traffic(lb, cut), stats=stats)
    big = _too_large(G, inp.cores, u.shape[0], "placement")
    if big:
        return big
    if backend == "cpsat":
        out, gc = cpsat_qap(inp, options, warm_cores)
    else:
        out, gc = milp_mesh(inp, options, True, warm_cores)
    stats.update({**out.stats, "formulation": "qap (b)", "backend": out.backend})
    bound = None if out.bound is None else \
        _round_bound(instance, instance.objective_from_traffic(out.bound, cut))
    if out.status is not Status.OPTIMAL:
        bound = _best_placement_bound(instance, q, bound, stats, options.budget)
    if gc is None:
        res = MethodOutput(out.status, None, bound=bound, stats=stats)
    else:
        # the model's distances are only bounded below by the hops: a time-limited
        # incumbent's model value can exceed its true traffic, which is what it reports
        res = MethodOutput(out.status, Solution(gc[group]),
                           objective=_own_value(instance, inp, gc), bound=bound, stats=stats,
                           model_objective=instance.objective_from_traffic(out.objective,
                                                                           cut))
    return res


def _best_placement_bound(instance: Instance, q: Any, bound: float | None,
                          stats: dict[str, Any], budget: Any, scaled: bool = True
                          ) -> float | None:
    """The larger of a placement method's own bound and the QAP bounds of its quotient
    (Gilmore–Lawler, projection; RLT-1 when small and time is left), in the objective's
    units (traffic units when not ``scaled``)."""
    if q.n > PLACEMENT_BOUND_MAX_GROUPS or q.n < 2 or instance.objective.name == "cut":
        return bound  # a placement does not change a fixed partition's cut
    rep = placement_bound(instance, q, budget, RLT1_MAX)
    stats["placement_bounds"] = {k: (None if v is None else round(v, 3))
                                 for k, v in rep.parts.items()}
    val = _integral(instance, rep.value)
    if scaled:
        val = instance.objective_from_traffic(val, val)
    return val if bound is None else max(bound, val)


#: largest quotient (groups) whose QAP bounds the placement methods add
PLACEMENT_BOUND_MAX_GROUPS = 256


SPACE = "placements of a fixed partition (the warm start's — e.g. of -p groups=METHOD —, " \
        "else one vertex per core, else the min-cut partition)"


def _place_applies(backend: str):  # noqa: ANN202 - returns the applicability test
    """Without a warm start a ``-place`` method makes its own groups — one vertex per core
    when no two fit on a core, else the exact min-cut partition's — so the models that
    make and place them must be small enough; a warm start brings the groups."""

    def applies(instance: Instance, params: Any, warm: bool = False) -> str | None:
        if warm:
            return None
        n, edges = instance.n, int(instance.graph.m)
        if instance.forced_partition:
            if backend != "bnb" and (n * instance.n_cores > MAX_ASSIGNMENT_VARS["placement"]
                                     or edges > MAX_MODEL_EDGES):
                return (f"too large for the exact placement model ({n:,} vertices × "
                        f"{instance.n_cores:,} cores, {edges:,} edges)")
            return None
        k = min(n, instance.n_cores)
        if n * k > MAX_ASSIGNMENT_VARS["partition"] or edges > MAX_MODEL_EDGES:
            return (f"its groups would come from the exact partition model, too large here "
                    f"({n:,} vertices × {k:,} parts, {edges:,} edges); hand it the groups: "
                    "-p groups=seed004 (or --warm-start)")
        return None

    return applies


@method(D, "cpsat-place", "exact", "CP-SAT QAP placement of a fixed partition's groups "
        "(integer coordinates, all-different, per-axis Manhattan)", source="ours",
        space=SPACE, warm_start=True, applies=_place_applies("cpsat"))
def cpsat_place(instance: Instance, options: SolveOptions) -> MethodOutput:
    """Place the warm start's groups (else one vertex per core, else the min-cut
    partition's groups) exactly."""
    return _place(instance, options, "cpsat")


@method(D, "milp-place", "exact", "Pyomo MILP QAP placement of a fixed partition's groups",
        source="ours", space=SPACE, warm_start=True, applies=_place_applies("milp"))
def milp_place(instance: Instance, options: SolveOptions) -> MethodOutput:
    """As :func:`cpsat_place`, with the MILP."""
    return _place(instance, options, "milp")


@method(D, "bnb-place", "exact", "Gilmore–Lawler branch and bound for the placement of a "
        "fixed partition's groups", source="Gilmore 1962, Lawler 1963", space=SPACE,
        warm_start=True, applies=_place_applies("bnb"))
def bnb_place(instance: Instance, options: SolveOptions) -> MethodOutput:
    """As :func:`cpsat_place`, by branch and bound."""
    return _place(instance, options, "bnb")


# ---------------------------------------------------------------------------------------
# the bound


@dataclass(frozen=True)
class BoundParams:
    iterations: int = param(60, "supergradient steps of the Donath–Hoffman diagonal (in "
                            "each of its runs: alone, and beside the ring)", ge=0)
    rlt1_max: int = param(RLT1_MAX, "largest RLT-1 LP (y variables) for one vertex per "
                          "core", ge=0)
    dnn_max_cores: int = param(DNN_MAX_CORES, "largest mesh (cores) whose DNN bound runs "
                               "for one vertex per core", ge=0)
    ring_steps: int = param(RING_STEPS, "supergradient steps on the ring bound's split of "
                            "each synapse between its ends", ge=0)


def _integral(instance: Instance, x: float) -> float:
    """Round a float bound on an integer quantity up, less the float sums' margin."""
    return float(math.ceil(x - FLOAT_MARGIN * max(1.0, abs(x)) - 1e-9))


def joint_bound(instance: Instance, budget: Any = None, iterations: int = 60,
                rlt1_max: int = RLT1_MAX, dnn_max_cores: int = DNN_MAX_CORES,
                ring_steps: int = RING_STEPS) -> BoundReport:
    """The best lower bound on the instance's traffic (or cut, for ``cut``) over every
    mapping: the ring-capacity bound, the density and Donath–Hoffman cut bounds (each
    cut synapse travels at least one hop), the ring bound on the most overflowing stars
    plus a cut bound on the other synapses (:func:`.bounds.ring_cut_bound`) and — when no two
    vertices fit on a core, so that the problem is a placement — the QAP bounds of the
    graph itself."""
    g = instance.graph
    cut_only = instance.objective.name == "cut"
    parts: dict[str, float | None] = {}
    secs: dict[str, float] = {}
    t = time.perf_counter()
    if instance.multicast:
        # the ring and cut bounds count synapses, and one packet serves many of them
        mc = multicast_ring_bound(g, instance.rows, instance.cols, instance.capacity,
                                  instance.spikes)
        return BoundReport(_integral(instance, mc), "multicast ring",
                           {"multicast ring": _integral(instance, mc)},
                           {"multicast ring": round(time.perf_counter() - t, 3)})
    # the split's ascent gets at most a third of what is left: the cut bound leads on
    # other graphs (the ascent adds 11 % on vgg-cifar-neurons, nothing on lenet5)
    share = None if budget is None or not budget.limited else budget.share(1 / 3)
    ring, how = ring_bound(g, instance.rows, instance.cols, instance.capacity, cut_only,
                           ring_steps, share)
    parts["ring"] = _integral(instance, ring)
    secs["ring"] = time.perf_counter() - t
    # the ring on the stars that overflow most, the cut bound on the other synapses: half
    # of what is left (nothing when no star overflows), the cut bound alone the rest
    t1 = time.perf_counter()
    split = None if budget is None or not budget.limited else budget.share(0.5)
    rc, info = ring_cut_bound(g, instance.rows, instance.cols, instance.capacity,
                              cut_only, split, iterations)
    if info["ring_synapses"]:
        parts["ring + cut"] = _integral(instance, rc)
        secs["ring + cut"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    density, _ = density_cut_bound(g, instance.capacity)
    parts["cut (density)"] = _integral(instance, density)
    secs["cut (density)"] = time.perf_counter() - t1
    t1 = time.perf_counter()
    dh, _ = cut_bound(g, instance.capacity, budget, iterations)
    parts["cut (Donath–Hoffman)"] = _integral(instance, dh)
    secs["cut (Donath–Hoffman)"] = time.perf_counter() - t1
    if instance.forced_partition and not cut_only and g.n <= instance.n_cores:
        u, v, w = g.edges()
        F = np.zeros((g.n, g.n), np.int64)
        F[u, v] = w
        F[v, u] = w
        rep = qap_bounds(F, mesh_distances(instance.rows, instance.cols), budget, rlt1_max,
                         dnn_max_cores)
        for k, val in rep.parts.items():
            parts[k] = None if val is None else _integral(instance, val)
        secs.update(rep.seconds)
    by = max((k for k, val in parts.items() if val is not None), key=lambda k: parts[k])
    return BoundReport(float(parts[by]), by, parts,
                       {k: round(val, 3) for k, val in secs.items()})


@method(D, "bound", "bound", "a proven lower bound for every mapping: ring capacity "
        "(local packing), cut × one hop by core density (Mantel on a two-colouring) and "
        "by Donath–Hoffman (by vertex size when sizes differ), ring and cut on disjoint "
        "synapses summed, and the QAP bounds when every "
        "vertex needs its own core; for multicast, the packets each source needs beyond "
        "its own core; no mapping",
        source="ours (ring capacity, core density); Mantel 1907; Donath and Hoffman 1973; "
        "Gilmore 1962, Lawler 1963; "
        "Hadley, Rendl and Wolkowicz 1992; Adams and Johnson 1994; Zhao, Karisch, Rendl "
        "and Wolkowicz 1998 with the ADMM of Oliveira, Wolkowicz and Xu 2018",
        params=BoundParams)
def bound(instance: Instance, options: SolveOptions, params: BoundParams) -> MethodOutput:
    """The best of :func:`joint_bound`'s bounds, in the instance's objective."""
    rep = joint_bound(instance, options.budget, params.iterations, params.rlt1_max,
                      params.dnn_max_cores, params.ring_steps)
    val = rep.value
    lb = instance.objective_from_traffic(val, val)
    stats = {"bound_by": rep.by, **{f"bound_{k}": v for k, v in rep.parts.items()},
             "bound_seconds": rep.seconds}
    return MethodOutput(Status.BOUND_ONLY, bound=lb, stats=stats,
                        message=f"bound from {rep.by}; no mapping")


def placement_bound(instance: Instance, q: Any, budget: Any = None,
                    rlt1_max: int = 0) -> BoundReport:
    """The best QAP bound on placing the quotient ``q`` (groups, their flows) on the mesh
    (traffic units): valid for that partition's placements only."""
    u, v, w = q.edges()
    F = np.zeros((q.n, q.n), np.int64)
    F[u, v] = w
    F[v, u] = w
    return qap_bounds(F, mesh_distances(instance.rows, instance.cols), budget, rlt1_max)


# ---------------------------------------------------------------------------------------
# brute force


@dataclass(frozen=True)
class BruteParams:
    max_candidates: int = param(MAX_CANDIDATES, "largest number of vertex → core maps", ge=1)


def _brute_applies(instance: Instance, params: BruteParams, warm: bool = False) -> str | None:
    n, N = instance.n, instance.n_cores
    # compare in logs: N ** n has thousands of digits on a real neuron graph
    if n * math.log(max(N, 1)) > math.log(max(params.max_candidates, 1)):
        return f"too large for brute force ({N}^{n} candidates > max_candidates " \
               f"{params.max_candidates:,})"
    return None


@method(D, "bruteforce", "oracle", "enumerates every vertex → core map (tiny instances)",
        source="oracle", params=BruteParams, applies=_brute_applies)
def bruteforce(instance: Instance, options: SolveOptions, params: BruteParams
               ) -> MethodOutput:
    n, N, cols = instance.n, instance.n_cores, instance.cols
    max_candidates = params.max_candidates
    sizes = instance.graph.sizes.tolist()
    cap = instance.capacity
    u, v, w = (a.tolist() for a in instance.graph.edges())
    edges = list(zip(u, v, w, strict=True))
    # multicast: every source u (spikes[u] spikes) and its targets v > u
    spikes = [1] * n if instance.spikes is None else instance.spikes.tolist()
    targets: dict[int, list[int]] = {}
    for a, b, _ in edges:
        targets.setdefault(min(a, b), []).append(max(a, b))

    def value(assign: tuple[int, ...]) -> float | None:
        load = [0] * N
        for vert, c in enumerate(assign):
            load[c] += sizes[vert]
            if load[c] > cap:
                return None
        if instance.multicast:
            total = 0
            for src, tv in targets.items():
                cs = assign[src]
                for cd in {assign[t] for t in tv} - {cs}:
                    total += spikes[src] * (abs(cs // cols - cd // cols) +
                                            abs(cs % cols - cd % cols))
            return float(total)
        cut = traffic = 0
        for a, b, wt in edges:
            ca, cb = assign[a], assign[b]
            if ca != cb:
                cut += wt
                traffic += wt * (abs(ca // cols - cb // cols) + abs(ca % cols - cb % cols))
        return instance.objective_from_traffic(traffic, cut)

    res = enumerate_best(itertools.product(range(N), repeat=n), value, size=N ** n,
                         max_candidates=max_candidates, what=f"instance {instance.name!r}",
                         budget=options.budget)
    if not res.complete:
        if res.best is None:
            return MethodOutput(Status.TIME_LIMIT, message=STOPPED)
        return MethodOutput(Status.TIME_LIMIT, Solution(np.array(res.best, np.int64)),
                            objective=res.value, message=STOPPED,
                            stats={"candidates": res.count, "ties": res.ties})
    if res.best is None:
        return MethodOutput(Status.INFEASIBLE, message="no assignment fits the capacities")
    return MethodOutput(Status.OPTIMAL, Solution(np.array(res.best, np.int64)),
                        objective=res.value, bound=res.value,
                        stats={"candidates": res.count, "ties": res.ties})


def warm_up_kernels() -> None:
    """Compile (or load from numba's cache) the branch and bound's kernels (see
    ``chipsched.jit``): one tiny placement, solved and stopped early."""
    from chipsched.budget import Budget

    F = np.array([[0, 3, 1], [3, 0, 2], [1, 2, 0]], np.int64)
    solve_qap_bnb(F, 2, 2)
    from chipsched.neurongraph import NeuronGraph

    g = NeuronGraph.from_edges(np.ones(3, np.int64), [0, 1], [1, 2], [1, 1])
    ring_bound(g, 1, 3, 1)
    density_cut_bound(g, 2)
    gilmore_lawler_bound(F, mesh_distances(2, 2))
    solve_qap_bnb(F, 2, 2, Budget(polls=0), np.array([0, 1, 2], np.int64), chunk=1)
