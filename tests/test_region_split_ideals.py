"""region_split over every convex partition of a DAG: the DP over ideals (issue 12).

Differential truth on tiny branching DAGs: the DP over ideals equals brute force over
every chain of ideals, and equals the best of the linear-order DP over *every*
topological order (an independent route: re-number the layers in that order and cut
it); it is never worse than the linear-order DP of the file's order; solutions that
carry their own item order are checked and evaluated by the shared evaluator.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chipsched
from chipsched.errors import InputError
from chipsched.formulations.region_split.dynprog import dp_chiplet
from chipsched.formulations.region_split.enumeration import chiplet_candidates
from chipsched.formulations.region_split.ideals import count_ideals, dp_ideals, item_ideals
from chipsched.formulations.region_split.pruning import full_space_bound
from chipsched.instances.chips import get_chip
from chipsched.instances.region_split import random_dag
from chipsched.problems.region_split import (
    ChipletSolution,
    chiplet_instance,
    chiplet_stage_table,
    evaluate,
    solution_from_dict,
)
from chipsched.result import Status
from chipsched.workload import Workload

REL = 1e-9
CHIPS = ["chiplet-1x2-n1-w8", "chiplet-1x3-n2-w4", "chiplet-2x2-n2-w8"]
OBJECTIVES = ["cost", "period", "latency", "sync_latency"]


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-15)


def _renumbered(w: Workload, order: list[int]) -> Workload:
    """The same network with its layers listed in ``order`` (a topological order)."""
    pos = {v: k for k, v in enumerate(order)}
    return Workload(w.name, tuple(w.layers[v] for v in order),
                    tuple((pos[s], pos[d], e) for s, d, e in w.edges))


def _topological_orders(n: int, edges: list[tuple[int, int]]):
    for perm in itertools.permutations(range(n)):
        pos = {v: k for k, v in enumerate(perm)}
        if all(pos[s] < pos[d] for s, d in edges):
            yield list(perm)


@st.composite
def branching_cases(draw, max_layers: int = 6):
    n = draw(st.integers(2, max_layers))
    w = random_dag(n, draw(st.integers(0, 10**6)), edge_prob=draw(st.sampled_from([0.0, 0.2])),
                   backbone=False)
    chip = get_chip(draw(st.sampled_from(CHIPS)))
    obj = draw(st.sampled_from(OBJECTIVES))
    M = chip.rows * chip.cols
    mr = draw(st.one_of(st.none(), st.integers(1, M)))
    return w, chiplet_instance(w, chip, objective=obj, items="layers", max_regions=mr,
                               transfer=draw(st.sampled_from(["chain", "ring"])))


@given(branching_cases())
@settings(max_examples=40, deadline=None)
def test_ideal_dp_is_the_best_over_every_topological_order(case):
    w, inst = case
    split = dp_ideals(inst)
    brute = chipsched.solve("region_split", inst, "bruteforce")
    assert brute.status is Status.OPTIMAL and brute.space == ""
    assert _close(split.value, brute.objective)
    # the applicability count is the number of candidates brute force enumerates
    assert brute.metrics["solver"]["candidates"] == chiplet_candidates(inst)
    best = math.inf
    for order in _topological_orders(len(w), [(s, d) for s, d, _ in w.edges]):
        ri = chiplet_instance(_renumbered(w, order), inst.hardware,
                              objective=inst.objective, items="layers",
                              max_regions=inst.max_regions, transfer=inst.transfer)
        v, _, _ = dp_chiplet(chiplet_stage_table(ri), ri.chiplets, ri.objective,
                             ri.max_regions)
        best = min(best, v)
    assert _close(split.value, best)
    # the file's order is one of them
    own, _, _ = dp_chiplet(chiplet_stage_table(inst), inst.chiplets, inst.objective,
                           inst.max_regions)
    assert split.value <= own * (1 + REL)
    sol = ChipletSolution(split.regions, split.counts, (), split.order)
    assert _close(evaluate(inst, sol)[0], split.value)


@given(branching_cases(max_layers=7))
@settings(max_examples=25, deadline=None)
def test_dp_method_and_item_order_models(case):
    """``dp`` searches every convex partition (space ''); CP-SAT, the MILP and the
    linear-order DP cut the file's order and say so when the DAG has other orders; the
    full-space optimum bounds them all."""
    _, inst = case
    dp = chipsched.solve("region_split", inst, "dp")
    assert dp.status is Status.OPTIMAL and dp.space == ""
    lin = chipsched.solve("region_split", inst, "dp", order_only=True)
    cp = chipsched.solve("region_split", inst, "cpsat", time_limit=30)
    mi = chipsched.solve("region_split", inst, "milp", time_limit=30)
    expect = "" if inst.item_order_is_total else "item order"
    for r in (lin, cp, mi):
        assert r.status is Status.OPTIMAL and r.space == expect, (r.method, r.space)
        assert _close(r.objective, lin.objective)
        assert dp.objective <= r.objective * (1 + REL)


def test_googlenet_layers_beat_the_file_order():
    """Issue 12: GoogLeNet on chiplet-4x4, period, layers as items — 61.01 µs cutting the
    file's order, 58.53 µs with another topological order; the DP over ideals must reach
    at most that and prove it."""
    inst = chipsched.make_instance("region_split", "googlenet", "chiplet-4x4",
                                   objective="period", items="layers")
    r = chipsched.solve("region_split", inst, "dp")
    lin = chipsched.solve("region_split", inst, "dp", order_only=True)
    assert r.status is Status.OPTIMAL and r.space == ""
    assert r.objective <= 58.53e-6
    assert r.objective < lin.objective and lin.space == "item order"
    assert r.solution.order and r.metrics["solver"]["ideals"] == count_ideals(inst)
    # a solution with its own order survives the JSON round trip and re-evaluates
    back = solution_from_dict(inst, r.solution.to_dict())
    assert back == r.solution and _close(evaluate(inst, back)[0], r.objective)


def test_chains_have_prefix_ideals_and_the_dp_falls_back_when_told():
    chain = chiplet_instance(random_dag(6, 1), get_chip("chiplet-2x2-n2-w8"), items="layers")
    assert chain.item_order_is_total and count_ideals(chain) == 7
    wide = chiplet_instance(random_dag(8, 3, edge_prob=0.0, backbone=False),
                            get_chip("chiplet-2x2-n2-w8"), items="layers")
    k = count_ideals(wide)
    assert k is not None and k > 9 and count_ideals(wide, max_ideals=k - 1) is None
    r = chipsched.solve("region_split", wide, "dp", max_ideals=k - 1)
    assert r.status is Status.OPTIMAL and r.space == "item order"
    assert "max_ideals" in r.message
    assert chipsched.solve("region_split", wide, "dp", max_ideals=k).space == ""


def test_item_ideals_by_hand():
    # diamond 0 → {1, 2} → 3: ideals ∅, {0}, {0,1}, {0,2}, {0,1,2}, all
    memb = item_ideals(4, np.array([(0, 1), (0, 2), (1, 3), (2, 3)]), 100)
    got = {frozenset(np.flatnonzero(row).tolist()) for row in memb}
    assert got == {frozenset(), frozenset({0}), frozenset({0, 1}), frozenset({0, 2}),
                   frozenset({0, 1, 2}), frozenset({0, 1, 2, 3})}
    assert memb.sum(axis=1).tolist() == sorted(memb.sum(axis=1).tolist())
    assert item_ideals(4, np.array([(0, 1), (0, 2), (1, 3), (2, 3)]), 5) is None


def test_a_bad_item_order_names_the_field():
    w = random_dag(5, 2, edge_prob=0.0, backbone=False)
    inst = chiplet_instance(w, get_chip("chiplet-2x2-n2-w8"), items="layers")
    e = inst.item_edges[0]
    bad = [int(e[1]), int(e[0])] + [v for v in range(5) if v not in (e[0], e[1])]
    with pytest.raises(InputError, match="solution.order"):
        evaluate(inst, ChipletSolution(((0, 4),), (1,), (), tuple(bad)))
    with pytest.raises(InputError, match="solution.order.*permutation"):
        evaluate(inst, ChipletSolution(((0, 4),), (1,), (), (0, 1, 2, 3, 3)))


def test_item_order_models_ignore_a_warm_start_cut_from_another_order():
    inst = chipsched.make_instance("region_split", "googlenet", "chiplet-2x2",
                                   objective="period", items="layers")
    dp = chipsched.solve("region_split", inst, "dp")
    assert dp.solution.order
    r = chipsched.solve("region_split", inst, "cpsat", warm_start=dp, time_limit=30)
    assert r.status is Status.OPTIMAL and r.space == "item order"
    assert r.objective >= dp.objective * (1 - REL)


def test_more_than_64_items_sub_ideals_are_exact():
    """Regression (review of issue 12): ideals are packed into 64-bit words, and a
    subset test that summed the words wrapped around modulo 2⁶⁴ on DAGs of > 64 items,
    admitting a non-subset as a sub-ideal (negative stage costs, repeated items). A
    130-layer chain with two heavy side branches off layer 0 at bits 63 and 127."""
    from chipsched.workload import Layer, OpKind

    n = 130
    w = random_dag(n, 1, edge_prob=0.0, backbone=True, max_channels=4, max_size=2)
    layers = list(w.layers)
    for k in (63, 127):
        layers[k] = Layer(f"l{k}", OpKind.CONV, K=256, C=256, H=32, W=32, R=3, S=3,
                          in_elems=layers[0].out_elems, weight_elems=256 * 256 * 9)
    edges = [(s, d, e) for s, d, e in w.edges if d not in (63, 127) and s not in (63, 127)]
    edges += [(62, 64, layers[62].out_elems), (126, 128, layers[126].out_elems),
              (0, 63, layers[0].out_elems), (0, 127, layers[0].out_elems)]
    w2 = Workload("side-branches", tuple(layers), tuple(edges))
    inst = chiplet_instance(w2, get_chip("chiplet-4x4"), objective="cost", items="layers",
                            transfer="ring")
    split = dp_ideals(inst)
    assert sorted(split.order) == list(range(n)) and split.value > 0
    r = chipsched.solve("region_split", inst, "dp")  # the face re-evaluates it
    assert r.status is Status.OPTIMAL and _close(r.objective, split.value)
    # the DP is exact: no cut of the file's order does better
    own, _, _ = dp_chiplet(chiplet_stage_table(inst), inst.chiplets, inst.objective, None)
    assert split.value <= own * (1 + REL)


def test_bruteforce_refuses_wide_dags_quickly():
    """A 40-layer DAG with a random branch per layer has more than 20,000 ideals: brute
    force says so as a skipped row, without counting its chains."""
    w = random_dag(40, 0, edge_prob=0.0, backbone=False)
    inst = chiplet_instance(w, get_chip("chiplet-2x2"), items="layers")
    assert chiplet_candidates(inst, 500_000) is None
    rows = {r.method: r for r in chipsched.compare("region_split", inst,
                                                    methods=["bruteforce", "dp"])}
    assert rows["bruteforce"].status is Status.SKIPPED
    assert "20,000 ideals" in rows["bruteforce"].message
    assert rows["dp"].status is Status.OPTIMAL and rows["dp"].space == "item order"


@st.composite
def heavy_edge_cases(draw):
    """Branching DAGs whose tensors are large next to their compute (transfers decide
    the stages) on the smallest chips: the cases a transfer term of the bound could
    overstate."""
    n = draw(st.integers(1, 7))
    w = random_dag(n, draw(st.integers(0, 10**6)), edge_prob=draw(st.sampled_from([0.2, 0.5])),
                   backbone=draw(st.booleans()))
    chip = get_chip(draw(st.sampled_from(CHIPS)))
    M = chip.rows * chip.cols
    return chiplet_instance(w, chip, objective=draw(st.sampled_from(OBJECTIVES)),
                            items="layers",
                            max_regions=draw(st.one_of(st.none(), st.integers(1, M))),
                            transfer=draw(st.sampled_from(["chain", "ring"])))


@given(st.one_of(branching_cases(max_layers=7).map(lambda c: c[1]), heavy_edge_cases()))
@settings(max_examples=120, deadline=None)
def test_full_space_bound_is_never_above_the_optimum(inst):
    """The bound the ``dp`` fall-back reports for every convex partition is a theorem:
    never above brute force's optimum over every chain of ideals."""
    bound = full_space_bound(inst)
    brute = chipsched.solve("region_split", inst, "bruteforce")
    assert brute.status is Status.OPTIMAL and brute.space == ""
    assert 0.0 < bound <= brute.objective, (bound, brute.objective)


def test_full_space_bound_meets_a_single_item():
    """One item, no edges: the least stage time over counts is the optimum."""
    w = random_dag(1, 3, edge_prob=0.0, backbone=False)
    inst = chiplet_instance(w, get_chip("chiplet-2x2-n2-w8"), objective="period",
                            items="layers")
    opt = chipsched.solve("region_split", inst, "bruteforce").objective
    assert math.isclose(full_space_bound(inst), opt, rel_tol=1e-8)


def test_the_fall_back_reports_the_full_space_bound():
    """Told to stop at one ideal, ``dp`` cuts the item order and says what every convex
    partition is worth at least; the DP over ideals' optimum lies between."""
    inst = chipsched.make_instance("region_split", "googlenet", "chiplet-4x4",
                                   objective="period", items="layers")
    fb = chipsched.solve("region_split", inst, "dp", max_ideals=1)
    full = chipsched.solve("region_split", inst, "dp")
    assert fb.space == "item order" and full.space == ""
    lb = fb.metrics["solver"]["full_space_bound"]
    assert "full_space_bound" in fb.message
    assert lb <= full.objective <= fb.objective
    # the comparison table's footnote carries it (a † bound alone would not say)
    from chipsched.report import result_table

    assert "full_space_bound" in result_table([fb, full]).caption
