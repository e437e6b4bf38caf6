"""core_assignment heuristics and peers: seed 004's multilevel mapping, its improved
variant, METIS/KaHIP/Kernighan–Lin partitions and placement baselines — each a
registered method returning a vertex → core :class:`~chipsched.problems.core_assignment.Solution`.

Stages (usable alone, see the submodules): :mod:`.multilevel` (steps 2–5: coarsen,
bisect, uncoarsen + refine, pack groups), :mod:`.placement` (steps 6–7: recursive-
bisection placement, force-directed swaps; row-major, random, scipy QAP),
:mod:`.peers` (METIS, KaHIP, KL), :mod:`.improved` (the improved variant).

Methods that share a stage share it exactly: every placement baseline (``rowmajor``,
``random``, ``faq``, ``2opt``, ``seed004-rb``) places the groups of the same seed-004
partition (same seed ⇒ same partition), and the partition peers (``metis``,
``kahip``) are placed with seed 004's placement, so that each comparison isolates one
stage.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from chipsched.problems.core_assignment import Instance, Solution
from chipsched.result import Status
from chipsched.solvers import MethodOutput, SolveOptions, register

from .improved import plus_partition, plus_placement
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
from .peers import default_parts, kahip_partition, kl_bisector, metis_partition
from .placement import (
    MAX_ITER,
    TOP_FRACTION,
    check_fits,
    force_directed,
    place_random,
    place_recursive_bisection,
    place_row_major,
    place_scipy_qap,
    placement_traffic,
    target_rectangle,
)

__all__ = [
    "coarsen", "coarsen_level", "force_directed", "greedy_bisection", "heaviest_neighbors",
    "map_groups", "match_heavy_edges", "pack_groups", "place_random",
    "place_recursive_bisection", "place_row_major", "place_scipy_qap", "plus_partition",
    "plus_placement", "recursive_bisection", "refine", "seed004_mapping", "seed004_partition",
    "target_rectangle", "uncoarsen",
]

D = "core_assignment"
SRC = "seed 004 (CN patent, ../shared/SEEDS.md §004)"


class _Stages:
    """Optional progress reporting (rich, on stderr) and per-stage timing."""

    def __init__(self, enabled: bool, what: str):
        self.times: dict[str, float] = {}
        self._t = time.perf_counter()
        self._p = None
        if enabled:
            from rich.console import Console
            from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

            self._p = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                               TimeElapsedColumn(), console=Console(stderr=True),
                               transient=True)
            self._p.start()
            self._task = self._p.add_task(what)

    def note(self, text: str) -> None:
        if self._p is not None:
            self._p.update(self._task, description=text)

    def done(self, stage: str) -> None:
        now = time.perf_counter()
        self.times[stage] = round(now - self._t, 4)
        self._t = now

    def close(self) -> None:
        if self._p is not None:
            self._p.stop()


def map_groups(instance: Instance, group: np.ndarray, group_core: np.ndarray, cut: int | None,
               stats: dict[str, Any], status: Status = Status.FEASIBLE) -> MethodOutput:
    """The vertex → core solution of a partition into groups and a placement of the
    groups, with its objective computed by the method's own arithmetic (quotient
    traffic, tracked cut) — the face re-evaluates it with the shared evaluator."""
    q = instance.graph.contract(group, int(group_core.shape[0]))
    traffic = placement_traffic(q, group_core, instance.cols)
    if cut is None:
        cut = int(q.total_weight)
    core = group_core[group]
    obj = instance.objective_from_traffic(traffic, cut)
    stats = {**stats, "groups": int(group_core.shape[0]), "cut_weight": int(cut),
             "traffic": int(traffic)}
    return MethodOutput(status, Solution(core), objective=obj, stats=stats)


def _partition(instance: Instance, seed: int, stages: _Stages, **kw: Any):
    res = seed004_partition(instance.graph, instance.capacity, seed, progress=stages.note, **kw)
    stages.done("partition")
    check_fits(res.n_groups, instance.rows, instance.cols)
    return res


def seed004_mapping(instance: Instance, seed: int = 0, tries: int = TRIES,
                    merge_fraction: float = MERGE_FRACTION, min_reduction: float = MIN_REDUCTION,
                    starts: int = STARTS, passes: int = 1, top_fraction: float = TOP_FRACTION,
                    max_iter: int = MAX_ITER, force: bool = True, progress: bool = False
                    ) -> MethodOutput:
    """Seed 004 end to end (steps 2–8) with the document's numbers."""
    st = _Stages(progress, "seed 004")
    try:
        ss = np.random.SeedSequence(seed).generate_state(2)
        res = _partition(instance, int(ss[0]), st, tries=tries, merge_fraction=merge_fraction,
                         min_reduction=min_reduction, starts=starts, passes=passes)
        q = instance.graph.contract(res.group, res.n_groups)
        st.note(f"placing {res.n_groups} groups")
        gc = place_recursive_bisection(q, instance.rows, instance.cols, int(ss[1]), starts)
        st.done("bisection_placement")
        stats: dict[str, Any] = {**res.stats}
        stats["traffic_before_force"] = placement_traffic(q, gc, instance.cols)
        if force:
            st.note("force-directed refinement")
            gc, fs = force_directed(q, gc, instance.rows, instance.cols, top_fraction,
                                    max_iter)
            stats.update(fs)
            st.done("force_directed")
        stats["stage_s"] = st.times
        return map_groups(instance, res.group, gc, res.cut, stats)
    finally:
        st.close()


@register(D, "seed004", "heuristic", "seed 004 end to end: multilevel partition, "
          "recursive-bisection placement, force-directed swaps", source=SRC, randomized=True)
def seed004(instance: Instance, options: SolveOptions, **params: Any) -> MethodOutput:
    return seed004_mapping(instance, options.seed, progress=options.progress, **params)


@register(D, "seed004-rb", "heuristic", "seed 004 without step 7: recursive-bisection "
          "placement only", source=SRC, randomized=True)
def seed004_rb(instance: Instance, options: SolveOptions, **params: Any) -> MethodOutput:
    return seed004_mapping(instance, options.seed, force=False, progress=options.progress,
                           **params)


@register(D, "seed004-plus", "heuristic", "improved seed 004: HEM coarsening to a small "
          "graph, size-balanced bisection + FM, k-way refinement, traffic-exact swaps",
          source="ours, on seed 004 (see docs/core_assignment.md)", randomized=True)
def seed004_plus(instance: Instance, options: SolveOptions, **params: Any) -> MethodOutput:
    st = _Stages(options.progress, "seed 004 plus")
    try:
        ss = np.random.SeedSequence(options.seed).generate_state(2)
        pkeys = {"coarsen_to", "fm_passes", "refine_passes", "slack"}
        res = plus_partition(instance.graph, instance.capacity, instance.n_cores, int(ss[0]),
                             progress=st.note,
                             **{k: v for k, v in params.items() if k in pkeys})
        st.done("partition")
        check_fits(res.n_groups, instance.rows, instance.cols)
        q = instance.graph.contract(res.group, res.n_groups)
        gc, pst = plus_placement(q, instance.rows, instance.cols, int(ss[1]),
                                 **{k: v for k, v in params.items() if k not in pkeys})
        st.done("placement")
        return map_groups(instance, res.group, gc, res.cut,
                          {**res.stats, **pst, "stage_s": st.times})
    finally:
        st.close()


@register(D, "seed004-kl", "peer", "seed 004 with networkx's Kernighan–Lin bisection in "
          "steps 3 and 6 (small graphs: pure Python)", source="networkx "
          "kernighan_lin_bisection; seed 004", randomized=True)
def seed004_kl(instance: Instance, options: SolveOptions, max_iter: int = 10,
               **params: Any) -> MethodOutput:
    bis = kl_bisector(max_iter)
    ss = np.random.SeedSequence(options.seed).generate_state(2)
    res = seed004_partition(instance.graph, instance.capacity, int(ss[0]), bisector=bis,
                            **params)
    check_fits(res.n_groups, instance.rows, instance.cols)
    q = instance.graph.contract(res.group, res.n_groups)
    gc = place_recursive_bisection(q, instance.rows, instance.cols, int(ss[1]), bisector=bis)
    gc, fs = force_directed(q, gc, instance.rows, instance.cols)
    return map_groups(instance, res.group, gc, res.cut, {**res.stats, **fs})


def _placed_on_seed004(instance: Instance, seed: int,
                       place: Callable[[Any, np.ndarray | None], np.ndarray],
                       params: dict[str, Any]) -> MethodOutput:
    ss = np.random.SeedSequence(seed).generate_state(2)
    st = _Stages(False, "")
    res = _partition(instance, int(ss[0]), st, **params)
    q = instance.graph.contract(res.group, res.n_groups)
    gc = place(q, int(ss[1]))
    st.done("placement")
    return map_groups(instance, res.group, gc, res.cut, {**res.stats, "stage_s": st.times})


@register(D, "rowmajor", "baseline", "seed-004 partition, groups on cores in row-major order",
          source="baseline", randomized=True)
def rowmajor(instance: Instance, options: SolveOptions, **params: Any) -> MethodOutput:
    return _placed_on_seed004(instance, options.seed, lambda q, s: place_row_major(
        q.n, instance.rows, instance.cols), params)


@register(D, "random", "baseline", "seed-004 partition, groups on random cores",
          source="baseline", randomized=True)
def random_placement(instance: Instance, options: SolveOptions, **params: Any) -> MethodOutput:
    return _placed_on_seed004(instance, options.seed, lambda q, s: place_random(
        q.n, instance.rows, instance.cols, s), params)


@register(D, "faq", "peer", "seed-004 partition, groups placed by scipy quadratic_assignment "
          "(FAQ)", source="scipy.optimize.quadratic_assignment, Vogelstein et al. 2015",
          randomized=True)
def faq(instance: Instance, options: SolveOptions, **params: Any) -> MethodOutput:
    return _placed_on_seed004(instance, options.seed, lambda q, s: place_scipy_qap(
        q, instance.rows, instance.cols, "faq", s), params)


@register(D, "2opt", "peer", "seed-004 partition, groups placed by scipy quadratic_assignment "
          "(2-opt)", source="scipy.optimize.quadratic_assignment", randomized=True)
def two_opt(instance: Instance, options: SolveOptions, **params: Any) -> MethodOutput:
    return _placed_on_seed004(instance, options.seed, lambda q, s: place_scipy_qap(
        q, instance.rows, instance.cols, "2opt", s), params)


def _peer(instance: Instance, options: SolveOptions, part_fn: Callable[..., Any],
          parts: int | None, placement: str, **kw: Any) -> MethodOutput:
    k = parts or default_parts(instance.graph.total_size, instance.capacity, instance.n_cores)
    part, stats = part_fn(instance.graph, k, instance.capacity, instance.n_cores,
                          options.seed, **kw)
    group, g = pack_groups(part)
    check_fits(g, instance.rows, instance.cols)
    q = instance.graph.contract(group, g)
    if placement == "rowmajor":
        gc = place_row_major(g, instance.rows, instance.cols)
    else:
        gc = place_recursive_bisection(q, instance.rows, instance.cols, options.seed)
        if placement == "seed004":
            gc, fs = force_directed(q, gc, instance.rows, instance.cols)
            stats.update(fs)
        elif placement != "rb":
            from chipsched.errors import InputError

            raise InputError("placement", f"unknown placement {placement!r}",
                             "use seed004, rb or rowmajor")
    return map_groups(instance, group, gc, instance.graph.cut_weight(group),
                      {**stats, "parts_requested": k})


@register(D, "metis", "peer", "METIS k-way partition (pymetis) with the capacity as balance "
          "bound, placed with seed 004's placement", source="METIS 5 via pymetis",
          randomized=True)
def metis(instance: Instance, options: SolveOptions, parts: int | None = None,
          placement: str = "seed004", recursive: bool = False) -> MethodOutput:
    return _peer(instance, options, metis_partition, parts, placement, recursive=recursive)


@register(D, "kahip", "peer", "KaHIP kaffpa partition with the capacity as balance bound, "
          "placed with seed 004's placement", source="KaHIP via kahip", randomized=True)
def kahip(instance: Instance, options: SolveOptions, parts: int | None = None,
          placement: str = "seed004", mode: str = "eco") -> MethodOutput:
    return _peer(instance, options, kahip_partition, parts, placement, mode=mode)
