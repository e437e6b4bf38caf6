"""core_assignment heuristics and peers: seed 004's multilevel mapping, its improved
variant, METIS/KaHIP/Kernighan–Lin partitions and placement baselines — each a
registered method returning a vertex → core :class:`~chipsched.problems.core_assignment.Solution`.

Stages (usable alone, see the submodules): :mod:`.multilevel` (steps 2–5: coarsen,
bisect, uncoarsen + refine, pack groups), :mod:`.placement` (steps 6–7: recursive-
bisection placement, force-directed swaps; row-major, random, scipy QAP),
:mod:`.peers` (METIS, KaHIP, KL), :mod:`.improved` (the improved variant),
:mod:`.tabusearch` (robust tabu search placement, Taillard 1991).

Methods that share a stage share it exactly: every placement baseline (``rowmajor``,
``random``, ``faq``, ``2opt``, ``seed004-rb``) places the groups of the same seed-004
partition (same seed ⇒ same partition), and the partition peers (``metis``,
``kahip``) are placed with seed 004's placement, so that each comparison isolates one
stage.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from chipsched.budget import Budget
from chipsched.method import MethodOutput, method, param
from chipsched.neurongraph import NeuronGraph
from chipsched.problems.core_assignment import Instance, Solution
from chipsched.result import Status
from chipsched.solvers.options import SolveOptions

from . import improved
from .improved import plus_partition, plus_placement
from .meshrefine import MESH_MAX_EDGES, MESH_PASSES, refine_on_mesh
from .multilevel import (
    MERGE_FRACTION,
    MIN_REDUCTION,
    STARTS,
    TRIES,
    coarsen,
    coarsen_level,
    greedy_bisection,
    heaviest_neighbors,
    match_heavy_edges,
    pack_groups,
    recursive_bisection,
    refine,
    seed004_partition,
    uncoarsen,
)
from .packets import PASSES as PACKET_PASSES
from .packets import packet_count, packet_refine
from .peers import (
    KAHIP_MODES,
    default_parts,
    kahip_partition,
    kl_bisector,
    metis_partition,
    repair_capacity,
    scotch_mapping,
    scotch_partition,
)
from .placement import (
    MAX_ITER,
    TOP_FRACTION,
    check_fits,
    fit_to_cores,
    force_directed,
    place_random,
    place_recursive_bisection,
    place_row_major,
    place_scipy_qap,
    placement_traffic,
    target_rectangle,
)
from .tabusearch import DENSE_AUTO_MAX, place_tabu, robust_tabu
from .tabusearch import MAX_CORES as TABU_MAX_CORES

__all__ = [
    "coarsen", "coarsen_level", "force_directed", "greedy_bisection", "heaviest_neighbors",
    "map_groups", "match_heavy_edges", "pack_groups", "packet_count", "packet_refine",
    "place_random",
    "place_recursive_bisection", "place_row_major", "place_scipy_qap", "plus_partition",
    "place_tabu", "plus_placement", "recursive_bisection", "refine", "robust_tabu",
    "seed004_mapping", "seed004_partition", "target_rectangle", "uncoarsen",
]

TABU_VARIANTS = ("auto", "dense", "sparse")
TABU_ITER_DEFAULT = "1,000 × cores (dense) / 200 × groups (sparse), or the time limit"

D = "core_assignment"
SRC = "seed 004 (CN patent; docs/sources.md)"


class _Stages:
    """Per-stage timing, and the stage names told to the options' progress callback."""

    def __init__(self, options: SolveOptions | None, what: str):
        self.times: dict[str, float] = {}
        self._t = time.perf_counter()
        self._options = options
        self._what = what

    def note(self, text: str) -> None:
        if self._options is not None:
            self._options.report(len(self.times), None, f"{self._what}: {text}")

    def done(self, stage: str) -> None:
        now = time.perf_counter()
        self.times[stage] = round(now - self._t, 4)
        self._t = now


def map_groups(instance: Instance, group: np.ndarray, group_core: np.ndarray, cut: int | None,
               stats: dict[str, Any], status: Status = Status.FEASIBLE,
               quotient: NeuronGraph | None = None) -> MethodOutput:
    """The vertex → core solution of a partition into groups and a placement of the
    groups, with its objective computed by the method's own arithmetic (quotient
    traffic, tracked cut) — the face re-evaluates it with the shared evaluator.
    ``quotient``: the groups' ``instance.quotient`` if the caller has it already."""
    q = quotient if quotient is not None else \
        instance.quotient(group, int(group_core.shape[0]))
    traffic = placement_traffic(q, group_core, instance.cols)
    if cut is None:
        cut = instance.graph.cut_weight(group)
    core = group_core[group]
    obj = instance.objective_from_traffic(traffic, cut)
    key = "multicast_traffic" if instance.multicast else "traffic"
    stats = {**stats, "groups": int(group_core.shape[0]), "cut_weight": int(cut),
             key: int(traffic)}
    return MethodOutput(status, Solution(core), objective=obj, stats=stats)


@dataclass(frozen=True)
class PartitionParams:
    """Seed 004's partition settings (steps 2–5), the document's numbers as defaults."""

    tries: int = param(TRIES, "matching attempts per coarsening level (§ 27)", ge=1)
    merge_fraction: float = param(MERGE_FRACTION, "largest merged vertex as a share of a "
                                  "core's capacity (§ 28: 1/15)", gt=0, le=1)
    min_reduction: float = param(MIN_REDUCTION, "coarsening stops when a level removes less "
                                 "than this share of the vertices (§ 29)", ge=0, lt=1)
    starts: int = param(STARTS, "random starts of every greedy bisection (§ 34: 4)", ge=1)
    passes: int = param(1, "refinement passes per level while uncoarsening", ge=0)


@dataclass(frozen=True)
class Seed004Params(PartitionParams):
    top_fraction: float = param(TOP_FRACTION, "share of the groups (largest force) visited "
                                "per force-directed iteration (§ 87: 5 %)", gt=0, le=1)
    max_iter: int = param(MAX_ITER, "force-directed iterations (§ 89; the value is ours)",
                          ge=0)


def _partition_kw(params: PartitionParams) -> dict[str, Any]:
    return {"tries": params.tries, "merge_fraction": params.merge_fraction,
            "min_reduction": params.min_reduction, "starts": params.starts,
            "passes": params.passes}


def _fit(instance: Instance, res: Any) -> Any:
    """``res`` with at most as many groups as cores (:func:`fit_to_cores`; a tight chip
    otherwise fails although the graph fits)."""
    if res.n_groups <= instance.n_cores:
        return res
    group, g, st = fit_to_cores(instance.graph, res.group, res.n_groups, instance.capacity,
                                instance.n_cores)
    return type(res)(group, g, instance.graph.cut_weight(group), {**res.stats, **st})


def _partition(instance: Instance, seed: int, stages: _Stages, params: PartitionParams,
               budget: Budget | None = None):
    res = seed004_partition(instance.graph, instance.capacity, seed, progress=stages.note,
                            budget=budget, **_partition_kw(params))
    stages.done("partition")
    return _fit(instance, res)


def seed004_mapping(instance: Instance, seed: int = 0,
                    params: Seed004Params = Seed004Params(), force: bool = True,
                    options: SolveOptions | None = None) -> MethodOutput:
    """Seed 004 end to end (steps 2–8) with the document's numbers."""
    st = _Stages(options, "seed 004")
    budget = None if options is None else options.budget
    ss = np.random.SeedSequence(seed).generate_state(2)
    res = _partition(instance, int(ss[0]), st, params, budget)
    q = instance.quotient(res.group, res.n_groups)
    st.note(f"placing {res.n_groups} groups")
    gc = place_recursive_bisection(q, instance.rows, instance.cols, int(ss[1]),
                                   params.starts)
    st.done("bisection_placement")
    stats: dict[str, Any] = {**res.stats}
    stats["traffic_before_force"] = placement_traffic(q, gc, instance.cols)
    if force:
        st.note("force-directed refinement")
        gc, fs = force_directed(q, gc, instance.rows, instance.cols, params.top_fraction,
                                params.max_iter, budget=budget)
        stats.update(fs)
        st.done("force_directed")
    stats["stage_s"] = st.times
    return _cut_short(map_groups(instance, res.group, gc, res.cut, stats, quotient=q),
                      budget)


def _cut_short(out: MethodOutput, budget: Budget | None) -> MethodOutput:
    """A mapping whose refinement the budget cut short: status ``time_limit`` (the
    mapping is valid: a stage the budget skips only leaves a partition or placement
    unimproved)."""
    if budget is None or not budget.stop_reason:
        return out
    return replace(out, status=Status.TIME_LIMIT, message=f"stopped "
                   f"({budget.stop_reason}): refinement cut short, the mapping so far")


@method(D, "seed004", "heuristic", "seed 004 end to end: multilevel partition, "
        "recursive-bisection placement, force-directed swaps", source=SRC, randomized=True,
        params=Seed004Params)
def seed004(instance: Instance, options: SolveOptions, params: Seed004Params
            ) -> MethodOutput:
    return seed004_mapping(instance, options.seed, params, options=options)


@method(D, "seed004-rb", "heuristic", "seed 004 without step 7: recursive-bisection "
        "placement only", source=SRC, randomized=True, params=PartitionParams)
def seed004_rb(instance: Instance, options: SolveOptions, params: PartitionParams
               ) -> MethodOutput:
    full = Seed004Params(**{k: getattr(params, k) for k in _partition_kw(params)})
    return seed004_mapping(instance, options.seed, full, force=False, options=options)


@dataclass(frozen=True)
class PlusParams:
    coarsen_to: int = param(improved.COARSEN_TO, "coarsen until the graph has at most "
                            f"max(this, {improved.COARSE_PER_PART}·⌈T/K⌉) vertices", ge=2)
    fm_passes: int = param(improved.FM_PASSES, "Fiduccia–Mattheyses passes per bisection",
                           ge=0)
    refine_passes: int = param(improved.REFINE_PASSES, "refinement passes per level", ge=0)
    refinement: str = param("kway-fm", "uncoarsening refinement: k-way FM with balancing, "
                            "or the document's greedy pass (before issue 11)",
                            choices=("kway-fm", "greedy"))
    slack: float = param(round(1 - improved.FILL, 6), "capacity share left free when sizing "
                         "the parts", ge=0, lt=1)
    parts: str = param(improved.PARTS, "part count: the fewest that leave every part "
                       "`slack` headroom, ⌈T/((1 − slack)·K)⌉; exactly ⌈T/K⌉ (min); or "
                       "sized anew at every bisection (per-split, before issue 11)",
                       choices=improved.PART_RULES)
    vcycles: int = param(improved.VCYCLES, "V-cycles after the first uncoarsening: coarsen "
                         "inside the parts again and refine every level (kway-fm)", ge=0)
    coarsening: str = param("per-part", "coarse vertices: at most 1.5× the average of a "
                            f"{improved.COARSE_PER_PART}-vertices-per-part coarsest graph "
                            "(METIS's rule), or up to capacity/4 (before issue 11)",
                            choices=("per-part", "capacity"))
    max_iter: int = param(200, "traffic-exact swap iterations", ge=0)
    top_fraction: float = param(1.0, "share of the groups visited per swap iteration",
                                gt=0, le=1)
    place: str = param("tabu", "placement after the recursive bisection: tabu search "
                       "(the default since issue 31), traffic-exact swaps (before it), or "
                       "seed 004's force-directed swaps (step 7, to compare the stages)",
                       choices=("tabu", "swaps", "force"))
    tabu_iterations: int | None = param(None, "tabu iterations (place=tabu)", ge=0,
                                        none=TABU_ITER_DEFAULT)
    tabu_variant: str = param("auto", "tabu search (place=tabu): dense Ro-TS (≤ 2,048 "
                              "cores), sparse (any size), or auto (dense up to "
                              f"{DENSE_AUTO_MAX} cores)", choices=TABU_VARIANTS)
    partition_objective: str = param("auto", "what the partition minimizes last: the "
                                     "synapse cut, or the multicast packets (a (λ − 1) "
                                     "refinement of the original graph after the k-way "
                                     "FM); auto = packets for the multicast objective",
                                     choices=("auto", "cut", "packets"))
    packet_passes: int = param(PACKET_PASSES, "greedy passes of the packet "
                               "refinement (partition_objective=packets)", ge=0)
    vertex_moves: int = param(MESH_PASSES, "passes of neuron moves and swaps on the mesh "
                              "after the placement, by their exact traffic gain (traffic "
                              "and energy objectives, graphs up to "
                              f"{MESH_MAX_EDGES:,} synapses; 0: off, as before issue 31)",
                              ge=0)


def _tabu_applies(instance: Instance, params: Any, warm: bool = False) -> str | None:
    """Not applicable when the placement asked for is the *dense* tabu search on a mesh
    above its limit (method ``tabu -p variant=dense``; ``place=tabu
    tabu_variant=dense``); the sparse and auto variants take any mesh."""
    choice = getattr(params, "place", None) or getattr(params, "placement", None) or "tabu"
    variant = getattr(params, "variant", None) or getattr(params, "tabu_variant", "auto")
    if choice == "tabu" and variant == "dense" and instance.n_cores > TABU_MAX_CORES:
        return (f"{instance.n_cores} cores is above the dense tabu search's limit "
                f"({TABU_MAX_CORES})")
    return None


@method(D, "seed004-plus", "heuristic", "improved seed 004: HEM coarsening, recursive "
        "bisection + FM into ⌈T/(0.97·K)⌉ parts, k-way FM on every level and a V-cycle "
        "(then packets, for multicast), tabu search placement, neuron moves on the mesh",
        source="ours, on seed 004 (see docs/core_assignment.md)", randomized=True,
        params=PlusParams, applies=_tabu_applies)
def seed004_plus(instance: Instance, options: SolveOptions, params: PlusParams
                 ) -> MethodOutput:
    st = _Stages(options, "seed 004 plus")
    budget = options.budget
    # a third state for the packet refinement; the first two are as before it
    ss = np.random.SeedSequence(options.seed).generate_state(3)
    res = plus_partition(instance.graph, instance.capacity, instance.n_cores, int(ss[0]),
                         coarsen_to=params.coarsen_to, fm_passes=params.fm_passes,
                         refine_passes=params.refine_passes, slack=params.slack,
                         progress=st.note, refinement=params.refinement,
                         parts=params.parts, vcycles=params.vcycles,
                         per_part=params.coarsening == "per-part", budget=budget)
    st.done("partition")
    res = _fit(instance, res)
    packets = params.partition_objective == "packets" or (
        params.partition_objective == "auto" and instance.multicast)
    if packets and not budget.exhausted():
        st.note("multicast packet refinement")
        res = _packet_refined(instance, res, int(ss[2]), params.packet_passes)
        st.done("packet_refinement")
    q = instance.quotient(res.group, res.n_groups)
    if params.place == "force":
        gc = place_recursive_bisection(q, instance.rows, instance.cols, int(ss[1]))
        gc, pst = force_directed(q, gc, instance.rows, instance.cols, budget=budget)
    elif params.place == "tabu":
        start = place_recursive_bisection(q, instance.rows, instance.cols, int(ss[1]))
        gc, pst = place_tabu(q, instance.rows, instance.cols, start, int(ss[1]),
                             params.tabu_iterations, budget, variant=params.tabu_variant)
    else:
        gc, pst = plus_placement(q, instance.rows, instance.cols, int(ss[1]),
                                 max_iter=params.max_iter, top_fraction=params.top_fraction,
                                 budget=budget)
    st.done("placement")
    if params.vertex_moves and instance.objective.name in ("traffic", "energy") \
            and instance.graph.m <= MESH_MAX_EDGES and not budget.exhausted():
        st.note("neuron moves on the mesh")
        core, mst = refine_on_mesh(instance.graph, gc[res.group], instance.rows,
                                   instance.cols, instance.capacity, int(ss[1]),
                                   max_passes=params.vertex_moves, budget=budget)
        st.done("vertex_moves")
        used, group = np.unique(core, return_inverse=True)
        return _cut_short(map_groups(instance, group.astype(np.int64), used.astype(np.int64),
                                     None, {**res.stats, **pst, **mst,
                                            "groups_before_moves": int(res.n_groups),
                                            "stage_s": st.times}), budget)
    return _cut_short(map_groups(instance, res.group, gc, res.cut,
                                 {**res.stats, **pst, "stage_s": st.times}, quotient=q),
                      budget)


def _packet_refined(instance: Instance, res: Any, seed: int, passes: int) -> Any:
    """``res`` after :func:`.packets.packet_refine` on the original graph (groups that
    empty are dropped; the cut is recomputed: the moves trade synapses for packets)."""
    part = np.array(res.group, dtype=np.int64)
    before, removed, moves = packet_refine(instance.graph, part, res.n_groups,
                                           instance.capacity, instance.spikes, seed, passes)
    group, g = pack_groups(part)
    return type(res)(group, g, instance.graph.cut_weight(group), {
        **res.stats, "packets_before_refinement": before, "packets_removed": removed,
        "packet_moves": moves})


@dataclass(frozen=True)
class KLParams(PartitionParams):
    max_iter: int = param(10, "Kernighan–Lin passes per bisection (networkx)", ge=1)


@method(D, "seed004-kl", "peer", "seed 004 with networkx's Kernighan–Lin bisection in "
        "steps 3 and 6 (small graphs: pure Python)", source="networkx "
        "kernighan_lin_bisection; seed 004", randomized=True, params=KLParams)
def seed004_kl(instance: Instance, options: SolveOptions, params: KLParams) -> MethodOutput:
    budget = options.budget
    bis = kl_bisector(params.max_iter, budget)
    ss = np.random.SeedSequence(options.seed).generate_state(2)
    res = _fit(instance, seed004_partition(instance.graph, instance.capacity, int(ss[0]),
                                           bisector=bis, budget=budget,
                                           **_partition_kw(params)))
    q = instance.quotient(res.group, res.n_groups)
    gc = place_recursive_bisection(q, instance.rows, instance.cols, int(ss[1]), bisector=bis)
    gc, fs = force_directed(q, gc, instance.rows, instance.cols, budget=budget)
    return _cut_short(map_groups(instance, res.group, gc, res.cut, {**res.stats, **fs},
                                 quotient=q), budget)


def _placed_on_seed004(instance: Instance, options: SolveOptions,
                       place: Callable[[Any, np.ndarray | None], np.ndarray],
                       params: PartitionParams) -> MethodOutput:
    ss = np.random.SeedSequence(options.seed).generate_state(2)
    st = _Stages(None, "")
    res = _partition(instance, int(ss[0]), st, params, options.budget)
    q = instance.quotient(res.group, res.n_groups)
    gc = place(q, int(ss[1]))
    st.done("placement")
    return _cut_short(map_groups(instance, res.group, gc, res.cut,
                                 {**res.stats, "stage_s": st.times}, quotient=q),
                      options.budget)


@method(D, "rowmajor", "baseline", "seed-004 partition, groups on cores in row-major order",
        source="baseline", randomized=True, params=PartitionParams)
def rowmajor(instance: Instance, options: SolveOptions, params: PartitionParams
             ) -> MethodOutput:
    return _placed_on_seed004(instance, options, lambda q, s: place_row_major(
        q.n, instance.rows, instance.cols), params)


@method(D, "random", "baseline", "seed-004 partition, groups on random cores",
        source="baseline", randomized=True, params=PartitionParams)
def random_placement(instance: Instance, options: SolveOptions, params: PartitionParams
                     ) -> MethodOutput:
    return _placed_on_seed004(instance, options, lambda q, s: place_random(
        q.n, instance.rows, instance.cols, s), params)


@dataclass(frozen=True)
class FaqParams(PartitionParams):
    restarts: int = param(1, "FAQ runs: the barycenter start, then random doubly-stochastic "
                          "starts, best kept (stops early at the time limit)", ge=1)


@method(D, "faq", "peer", "seed-004 partition, groups placed by scipy quadratic_assignment "
        "(FAQ; restarts within the time limit)", source="scipy.optimize.quadratic_assignment, "
        "Vogelstein et al. 2015", randomized=True, params=FaqParams)
def faq(instance: Instance, options: SolveOptions, params: FaqParams) -> MethodOutput:
    return _placed_on_seed004(instance, options, lambda q, s: place_scipy_qap(
        q, instance.rows, instance.cols, "faq", s, restarts=params.restarts,
        budget=options.budget), params)


@method(D, "2opt", "peer", "seed-004 partition, groups placed by scipy quadratic_assignment "
        "(2-opt)", source="scipy.optimize.quadratic_assignment", randomized=True,
        params=PartitionParams)
def two_opt(instance: Instance, options: SolveOptions, params: PartitionParams
            ) -> MethodOutput:
    return _placed_on_seed004(instance, options, lambda q, s: place_scipy_qap(
        q, instance.rows, instance.cols, "2opt", s), params)


@dataclass(frozen=True)
class TabuParams(PartitionParams):
    iterations: int | None = param(None, "tabu iterations", ge=0, none=TABU_ITER_DEFAULT)
    variant: str = param("auto", "dense Ro-TS (≤ 2,048 cores), sparse (any size), or auto "
                         f"(dense up to {DENSE_AUTO_MAX} cores)", choices=TABU_VARIANTS)


@method(D, "tabu", "heuristic", "seed-004 partition, recursive-bisection placement refined by "
        "tabu search (Ro-TS up to 256 cores, a sparse tabu search above)",
        source="Taillard, Parallel Computing 17 (1991); ours (sparse); seed 004 partition",
        randomized=True, params=TabuParams, applies=_tabu_applies)
def tabu(instance: Instance, options: SolveOptions, params: TabuParams) -> MethodOutput:
    """Ro-TS placement (:func:`.tabusearch.place_tabu`) of seed 004's groups, started from its
    recursive-bisection placement, until its iterations are done or the run's budget is
    over."""
    ss = np.random.SeedSequence(options.seed).generate_state(2)
    st = _Stages(options, "tabu")
    res = _partition(instance, int(ss[0]), st, params, options.budget)
    q = instance.quotient(res.group, res.n_groups)
    start = place_recursive_bisection(q, instance.rows, instance.cols, int(ss[1]),
                                      params.starts)
    st.done("bisection_placement")
    st.note(f"tabu search over {instance.n_cores} cores")
    gc, tst = place_tabu(q, instance.rows, instance.cols, start, int(ss[1]),
                         params.iterations, options.budget, variant=params.variant)
    st.done("tabu")
    return _cut_short(map_groups(instance, res.group, gc, res.cut,
                                 {**res.stats, **tst, "stage_s": st.times}, quotient=q),
                      options.budget)


def _peer(instance: Instance, options: SolveOptions, part_fn: Callable[..., Any],
          parts: int | None, placement: str, **kw: Any) -> MethodOutput:
    k = parts or default_parts(instance.graph.total_size, instance.capacity, instance.n_cores)
    part, stats = part_fn(instance.graph, k, instance.capacity, instance.n_cores,
                          options.seed, budget=options.budget, **kw)
    group, g = pack_groups(part)
    check_fits(g, instance.rows, instance.cols)
    q = instance.quotient(group, g)
    if placement == "rowmajor":
        gc = place_row_major(g, instance.rows, instance.cols)
    else:
        gc = place_recursive_bisection(q, instance.rows, instance.cols, options.seed)
        if placement == "seed004":
            gc, fs = force_directed(q, gc, instance.rows, instance.cols,
                                    budget=options.budget)
            stats.update(fs)
        elif placement == "tabu":
            gc, ts = place_tabu(q, instance.rows, instance.cols, gc, options.seed,
                                budget=options.budget)
            stats.update(ts)
        elif placement != "rb":
            from chipsched.errors import InputError

            raise InputError("placement", f"unknown placement {placement!r}",
                             "use seed004, rb, tabu or rowmajor")
    return _cut_short(map_groups(instance, group, gc, instance.graph.cut_weight(group),
                                 {**stats, "parts_requested": k}, quotient=q),
                      options.budget)


PEER_PLACEMENTS = ("seed004", "rb", "tabu", "rowmajor")


@dataclass(frozen=True)
class MetisParams:
    parts: int | None = param(None, "parts to ask for", ge=1,
                              none="⌈total size / (0.97 · capacity)⌉, at most the cores")
    placement: str = param("seed004", "how the parts are placed: seed 004's (recursive "
                           "bisection + force-directed swaps), recursive bisection only, "
                           "recursive bisection + robust tabu search, or row-major",
                           choices=PEER_PLACEMENTS)
    recursive: bool = param(False, "METIS recursive bisection instead of k-way")


@dataclass(frozen=True)
class KahipParams:
    parts: int | None = param(None, "parts to ask for", ge=1,
                              none="⌈total size / (0.97 · capacity)⌉, at most the cores")
    placement: str = param("seed004", "how the parts are placed (as for metis)",
                           choices=PEER_PLACEMENTS)
    mode: str = param("eco", "kaffpa preconfiguration", choices=tuple(KAHIP_MODES))


@method(D, "metis", "peer", "METIS k-way partition (pymetis) with the capacity as balance "
        "bound, placed with seed 004's placement", source="METIS 5 via pymetis",
        randomized=True, params=MetisParams, applies=_tabu_applies)
def metis(instance: Instance, options: SolveOptions, params: MetisParams) -> MethodOutput:
    return _peer(instance, options, metis_partition, params.parts, params.placement,
                 recursive=params.recursive)


@method(D, "kahip", "peer", "KaHIP kaffpa partition with the capacity as balance bound, "
        "placed with seed 004's placement", source="KaHIP via kahip", randomized=True,
        params=KahipParams, applies=_tabu_applies)
def kahip(instance: Instance, options: SolveOptions, params: KahipParams) -> MethodOutput:
    return _peer(instance, options, kahip_partition, params.parts, params.placement,
                 mode=params.mode)


SCOTCH_PLACEMENTS = ("mapping", *PEER_PLACEMENTS)


@dataclass(frozen=True)
class ScotchParams:
    placement: str = param("mapping", "Scotch's static mapping onto the smallest sub-mesh "
                           "that holds the graph (graph and target bipartitioned together), "
                           "or Scotch's k-way partition placed as for metis",
                           choices=SCOTCH_PLACEMENTS)
    parts: int | None = param(None, "parts to ask for (partition placements only)", ge=1,
                              none="⌈total size / (0.97 · capacity)⌉, at most the cores")
    quality: bool = param(False, "Scotch's QUALITY strategy flag instead of its default")
    deterministic: bool = param(True, "run Scotch in a deterministic context (one seed, one "
                                "mapping); false: its default threaded context, whose "
                                "results differ from run to run")


@method(D, "scotch", "peer", "Scotch static mapping onto a 2-D mesh target (or k-way "
        "partition + placement) with the capacity as balance bound, repaired if needed",
        source="Scotch 7 (Pellegrini) via pyscotch", randomized=True, params=ScotchParams,
        applies=_tabu_applies)
def scotch(instance: Instance, options: SolveOptions, params: ScotchParams) -> MethodOutput:
    """Scotch as a peer (issue 31): by default its static mapping (:func:`.peers.
    scotch_mapping`): every core of the target sub-mesh is one group, placed where
    Scotch put it."""
    if params.placement != "mapping":
        return _peer(instance, options, scotch_partition, params.parts, params.placement,
                     quality=params.quality, deterministic=params.deterministic)
    if params.parts is not None:
        from chipsched.errors import InputError

        raise InputError("parts", "is set by the target sub-mesh in Scotch's mapping",
                         "drop -p parts or use -p placement=seed004 (or rb, tabu, rowmajor)")
    core, stats = scotch_mapping(instance.graph, instance.rows, instance.cols,
                                 instance.capacity, options.seed, quality=params.quality,
                                 deterministic=params.deterministic, budget=options.budget)
    used, group = np.unique(core, return_inverse=True)
    group = group.astype(np.int64)
    return _cut_short(map_groups(instance, group, used.astype(np.int64), None, stats),
                      options.budget)


def warm_up_kernels() -> None:
    """Compile (or load from numba's cache) every kernel the core_assignment heuristics
    run, by running each of their paths once on tiny instances with the types real runs
    use: seed 004 and its improved variant (k-way FM, greedy refinement, V-cycles,
    multicast packets), dense and sparse tabu search, force-directed swaps of both
    costs, the peers' capacity repair, the quotient and traffic kernels and the
    evaluator's (link loads, multicast flows). The face
    calls it before a run's clock starts (``chipsched.jit``); a test checks that no run
    compiles anything after it."""
    from chipsched.hardware import Hardware
    from chipsched.neurongraph.generators import layered_random, stencil
    from chipsched.problems.core_assignment import evaluate, make_instance

    from .tabusearch import sparse_tabu

    chip = Hardware.from_dict({"name": "warm-up", "mesh": {"rows": 3, "cols": 3},
                               "core_capacity": 24,
                               "noc": {"link_bandwidth_gb_s": 8.0, "hop_latency_cycles": 1.0,
                                       "hop_energy_pj_per_bit": 0.7}})
    graphs = [layered_random(3, 40, 4, seed=1, name="warm-up"),
              stencil(10, 10, name="warm-up-stencil")]
    for g in graphs:
        for objective in ("traffic", "multicast"):
            inst = make_instance(g, chip, objective=objective)
            options = SolveOptions()
            # the face evaluates every solution: its kernels (link loads, multicast
            # flows) run on every method's clock too
            evaluate(inst, seed004(inst, options, Seed004Params()).solution)
            seed004_kl(inst, options, KLParams(max_iter=1))
            for p in (PlusParams(), PlusParams(refinement="greedy", parts="per-split",
                                               coarsening="capacity"),
                      PlusParams(place="tabu", tabu_variant="dense"),
                      PlusParams(place="force")):
                seed004_plus(inst, options, p)
            tabu(inst, options, TabuParams(iterations=50))
            metis(inst, options, MetisParams(placement="tabu"))
            kahip(inst, options, KahipParams(mode="fast", placement="rb"))
            res = plus_partition(inst.graph, inst.capacity, inst.n_cores)
            q = inst.quotient(res.group, res.n_groups)
            start = place_recursive_bisection(q, inst.rows, inst.cols)
            sparse_tabu(q, inst.rows, inst.cols, start, iterations=50)
            # the capacity repair runs only on an over-full partition (Scotch's, often)
            repair_capacity(inst.graph, np.zeros(inst.graph.n, np.int64), inst.capacity,
                            inst.n_cores)
    g = graphs[0]
    # spike counts make the multicast flows' kernel take its weighted path
    inst = make_instance(g, chip, objective="multicast", spikes=np.ones(g.n, np.int64))
    evaluate(inst, seed004(inst, SolveOptions(), Seed004Params()).solution)
    # large graphs are renumbered breadth first before the multilevel steps
    improved._bfs_order(g.indptr, g.indices)
    # tabu's exact integer deltas, taken when a float64 product could round (QAPLIB's
    # large flows and distances)
    from .tabusearch import _all_deltas

    n = 4
    _all_deltas(np.ones((n, n), np.int64), np.ones((n, n), np.int64), np.arange(n))
    _warm_up_streaming(g)


class _RowStore:
    """A graph store (the reader protocol of :mod:`.streaming`) over a graph in memory,
    serving rows as the on-disk stores do (int64 arrays), so the warm-up runs the
    out-of-core kernels with their real types without touching the disk."""

    def __init__(self, graph: NeuronGraph):
        self.graph, self.n, self.m, self.sizes = graph, graph.n, graph.m, graph.sizes

    def __enter__(self) -> _RowStore:
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    def read_rows(self, vertices: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        g, verts = self.graph, np.asarray(vertices, dtype=np.int64)
        sub = [np.arange(g.indptr[v], g.indptr[v + 1]) for v in verts]
        at = np.concatenate([np.zeros(0, np.int64), *sub]).astype(np.int64)
        ptr = np.zeros(verts.shape[0] + 1, np.int64)
        ptr[1:] = np.cumsum([len(x) for x in sub])
        return ptr, g.indices[at].astype(np.int64), g.weights[at].astype(np.int64)

    def batches(self, size: int = 65536) -> Any:
        for v0 in range(0, self.n, size):
            yield (v0, *self.read_rows(np.arange(v0, min(self.n, v0 + size))))


def _warm_up_streaming(graph: NeuronGraph) -> None:
    """Seed 004's out-of-core steps (:mod:`.streaming`) once on a store in memory."""
    from .streaming import (
        contract_on_disk,
        flows_on_disk,
        heaviest_on_disk,
        refine_on_disk,
    )

    store = _RowStore(graph)
    heaviest_on_disk(store, 0)
    part = np.arange(graph.n, dtype=np.int64) % 4
    refine_on_disk(store, part, 4, graph.total_size, np.random.default_rng(0))
    contract_on_disk(store, part, 4)
    for multicast in (False, True):
        flows_on_disk(store, part, 4, multicast=multicast)
    fit_to_cores(store, part, 4, graph.total_size, 2)
