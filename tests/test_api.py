"""Result, registry and the face (solve/compare) on a toy decision in its own registry."""

from __future__ import annotations

import json
import math

import pytest

from chipsched.api import ConsistencyError, best_bound, compare, solve
from chipsched.errors import InputError, UnknownNameError
from chipsched.result import Result, Status, relative_gap
from chipsched.solvers.registry import (
    DECISIONS,
    REGISTRY,
    DecisionSpec,
    MethodOutput,
    Registry,
    register,
)

CONTRACT = {"status", "objective", "bound", "gap", "wall_s", "method", "seed", "metrics",
            "solution"}


def _toy_registry() -> Registry:
    reg = Registry(decisions=("toy",))
    reg.add_decision(DecisionSpec(
        name="toy", summary="pick the smallest number", default_chip="edge-4x4",
        make_instance=lambda net, chip: net,
        evaluate=lambda inst, sol: (float(inst[sol]), {"index": sol}),
    ))

    @register("toy", "exact", "exact", "enumerates", registry=reg)
    def exact(inst, options):
        i = min(range(len(inst)), key=inst.__getitem__)
        return MethodOutput(Status.OPTIMAL, i, float(inst[i]), float(inst[i]))

    @register("toy", "first", "heuristic", "takes the first", registry=reg)
    def first(inst, options):
        return MethodOutput(Status.FEASIBLE, 0, float(inst[0]))

    @register("toy", "random", "heuristic", "random index", registry=reg, randomized=True)
    def rand(inst, options):
        return MethodOutput(Status.FEASIBLE, options.seed % len(inst))

    @register("toy", "liar", "heuristic", "misreports", registry=reg)
    def liar(inst, options):
        return MethodOutput(Status.FEASIBLE, 0, float(inst[0]) - 1)

    @register("toy", "overbound", "exact", "bound above its objective", registry=reg)
    def overbound(inst, options):
        return MethodOutput(Status.TIME_LIMIT, 0, float(inst[0]), float(inst[0]) + 5)

    return reg


INST = (7.0, 3.0, 5.0, 9.0)


def test_solve_evaluates_and_reports():
    reg = _toy_registry()
    r = solve("toy", INST, "exact", registry_=reg)
    assert r.status is Status.OPTIMAL and r.objective == 3.0 and r.bound == 3.0
    assert r.gap == 0.0 and r.metrics["index"] == 1 and r.wall_s >= 0
    d = json.loads(json.dumps(r.to_dict()))
    assert CONTRACT <= set(d)
    h = solve("toy", INST, "first", registry_=reg)
    assert h.bound is None and h.gap is None and h.seed is None
    assert h.versus(r) == "first is within 133.33 % of optimal (exact)"


def test_inconsistent_methods_are_caught():
    reg = _toy_registry()
    with pytest.raises(ConsistencyError, match="reported objective 6.0 but the evaluator gives"):
        solve("toy", INST, "liar", registry_=reg)
    with pytest.raises(ConsistencyError, match="bound 12.0 above the objective"):
        solve("toy", INST, "overbound", registry_=reg)


def test_compare_runs_randomized_methods_per_seed():
    reg = _toy_registry()
    res = compare("toy", INST, ["exact", "first", "random"], seeds=range(3), registry_=reg)
    assert [(r.method, r.seed) for r in res] == [("exact", 0), ("first", None),
                                                 ("random", 0), ("random", 1), ("random", 2)]
    assert [r.objective for r in res if r.method == "random"] == [7.0, 3.0, 5.0]
    assert best_bound(res) == 3.0
    # no heuristic beats the proven optimum
    assert all(r.objective >= 3.0 for r in res)


def test_unknown_names():
    reg = _toy_registry()
    with pytest.raises(UnknownNameError, match="did you mean 'exact'"):
        solve("toy", INST, "exakt", registry_=reg)
    with pytest.raises(UnknownNameError, match="decision: unknown name 'toys'"):
        reg.methods("toys")
    with pytest.raises(ValueError, match="registered twice"):
        register("toy", "exact", "exact", "again", registry=reg)(lambda i, o: None)


def test_default_registry_knows_the_four_decisions():
    assert REGISTRY.decisions() == DECISIONS == (
        "region_split", "tile_groups", "op_placement", "core_assignment")
    for d in DECISIONS:
        if not REGISTRY.has_decision(d):
            with pytest.raises(InputError, match="not implemented yet"):
                REGISTRY.decision(d)


def test_gap_convention():
    assert relative_gap(110.0, 100.0) == pytest.approx(100 / 1100)
    assert relative_gap(0.0, 0.0) == 0.0
    assert relative_gap(None, 1.0) is None
    assert math.isinf(relative_gap(0.0, -1.0))
    r = Result("toy", "m", Status.TIME_LIMIT, objective=10.0, bound=8.0)
    assert r.gap == pytest.approx(0.2)
    assert "gap=20%" in str(r)


def test_restricted_space_bounds_do_not_bound_the_decision():
    from chipsched.result import Result, Status

    full = Result("d", "exact", Status.OPTIMAL, objective=10.0, bound=10.0)
    seg = Result("d", "seg", Status.OPTIMAL, objective=12.0, bound=12.0, space="segmented")
    heur = Result("d", "heur", Status.FEASIBLE, objective=11.0)
    assert best_bound([seg, heur]) is None
    assert best_bound([full, seg, heur]) == 10.0
    assert seg.to_dict()["space"] == "segmented"
