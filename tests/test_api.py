"""Result, registry and the face (solve/compare) on a toy decision in its own registry."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from chipsched.api import ConsistencyError, NotApplicable, best_bound, compare, solve
from chipsched.errors import InputError, UnknownNameError
from chipsched.method import MethodOutput, method
from chipsched.registry import DECISIONS, Registry, collect, registry
from chipsched.result import Result, Status, relative_gap
from tests import toy

CONTRACT = {"status", "objective", "bound", "gap", "wall_s", "method", "seed", "metrics",
            "solution"}
INST = toy.Toy((7.0, 3.0, 5.0, 9.0))


def test_solve_evaluates_and_reports():
    reg = toy.registry()
    r = solve("toy", INST, "exact", registry_=reg)
    assert r.status is Status.OPTIMAL and r.objective == 3.0 and r.bound == 3.0
    assert r.gap == 0.0 and r.metrics["index"] == 1 and r.wall_s >= 0
    assert (r.objective_name, r.objective_unit) == ("value", "u")
    d = json.loads(json.dumps(r.to_dict()))
    assert CONTRACT <= set(d) and d["objective_unit"] == "u"
    h = solve("toy", INST, "first", registry_=reg)
    assert h.bound is None and h.gap is None and h.seed is None
    assert h.versus(r) == "first is within 133.33 % of optimal (exact)"


def test_inconsistent_methods_are_caught():
    reg = toy.registry()
    with pytest.raises(ConsistencyError, match="reported objective 6.0 but the evaluator gives"):
        solve("toy", INST, "liar", registry_=reg)
    with pytest.raises(ConsistencyError, match="bound 12.0 above the objective"):
        solve("toy", INST, "overbound", registry_=reg)
    with pytest.raises(ConsistencyError, match="without its own objective"):
        solve("toy", INST, "silent", registry_=reg)


def test_a_declared_scaling_tolerance_is_honoured():
    @method("toy", "rounded", "exact", "objective rounded to integers")
    def rounded(inst, options):
        return MethodOutput(Status.OPTIMAL, 1, float(round(inst[1])), objective_tol=0.5)

    @method("toy", "rounded-bad", "exact", "rounding beyond its tolerance")
    def rounded_bad(inst, options):
        return MethodOutput(Status.OPTIMAL, 1, inst[1] + 0.6, objective_tol=0.5)

    reg = Registry([toy.Decision(toy.PROBLEM, collect([rounded.__chipsched_method__,
                                                       rounded_bad.__chipsched_method__]),
                                 toy.make)])
    inst = toy.Toy((7.0, 3.3))
    assert solve("toy", inst, "rounded", registry_=reg).objective == 3.3
    with pytest.raises(ConsistencyError):
        solve("toy", inst, "rounded-bad", registry_=reg)


def test_declared_parameters_are_validated():
    reg = toy.registry()
    assert solve("toy", INST, "nth", registry_=reg, n=2).objective == 5.0
    assert solve("toy", INST, "nth", registry_=reg, n="3").objective == 9.0  # CLI strings
    for bad, fragment in (({"n": "abc"}, "parameter n of toy/nth: must be an integer"),
                          ({"n": -1}, "parameter n of toy/nth: -1 is out of range"),
                          ({"scale": "nan"}, "must be a finite number"),
                          ({"scale": 0}, "out of range; give a float > 0"),
                          ({"how": "odd"}, "'odd' is not allowed; give one of plain, fancy"),
                          ({"k": 1}, "parameter 'k': is not a parameter of toy/nth"),
                          ({"n": True}, "must be an integer")):
        with pytest.raises(InputError, match=fragment):
            solve("toy", INST, "nth", registry_=reg, **bad)
    with pytest.raises(InputError, match="its parameters: none"):
        solve("toy", INST, "exact", registry_=reg, n=1)


def test_applicability_is_declared_and_honoured():
    reg = toy.registry()
    assert solve("toy", toy.Toy((4.0, 2.0)), "short", registry_=reg).objective == 2.0
    with pytest.raises(NotApplicable, match="does not apply to toy: more than 3 numbers"):
        solve("toy", INST, "short", registry_=reg)
    res = compare("toy", INST, ["exact", "short"], registry_=reg)
    assert [r.status for r in res] == [Status.OPTIMAL, Status.SKIPPED]
    assert res[1].message == "more than 3 numbers"


def test_compare_never_aborts():
    reg = toy.registry()
    res = compare("toy", INST, registry_=reg)  # every method, the broken ones included
    by = {r.method: r for r in res}
    assert by["exact"].objective == 3.0
    assert by["crash"].status is Status.ERROR and "RuntimeError: bug" in by["crash"].message
    assert by["liar"].status is Status.ERROR and "reported objective" in by["liar"].message
    assert by["nothing"].status is Status.TIME_LIMIT and by["nothing"].solution is None
    assert by["short"].status is Status.SKIPPED
    assert best_bound(res) == 3.0


def test_compare_gives_exact_methods_a_default_time_limit():
    seen = {}

    @method("toy", "clock", "exact", "records its time limit")
    def clock(inst, options):
        seen["exact"] = options.time_limit
        return MethodOutput(Status.OPTIMAL, 0, inst[0], inst[0])

    @method("toy", "heur", "heuristic", "records its time limit")
    def heur(inst, options):
        seen["heuristic"] = options.time_limit
        return MethodOutput(Status.FEASIBLE, 0, inst[0])

    @method("toy", "lower", "bound", "records its time limit")
    def lower(inst, options):
        # an anytime bound (e.g. core_assignment's Donath–Hoffman ascent ran 176 s on
        # lenet5-neurons unlimited) gets the exact methods' default too
        seen["bound"] = options.time_limit
        return MethodOutput(Status.BOUND_ONLY, bound=0.0)

    reg = Registry([toy.Decision(toy.PROBLEM, collect([clock.__chipsched_method__,
                                                       heur.__chipsched_method__,
                                                       lower.__chipsched_method__]),
                                 toy.make)])
    compare("toy", INST, registry_=reg, exact_time_limit=7.0)
    assert seen == {"exact": 7.0, "heuristic": None, "bound": 7.0}
    compare("toy", INST, registry_=reg, time_limit=3.0)
    assert seen == {"exact": 3.0, "heuristic": 3.0, "bound": 3.0}


def test_compare_runs_randomized_methods_per_seed():
    reg = toy.registry("exact", "first", "random")
    res = compare("toy", INST, ["exact", "first", "random"], seeds=range(3), registry_=reg)
    assert [(r.method, r.seed) for r in res] == [("exact", 0), ("first", None),
                                                 ("random", 0), ("random", 1), ("random", 2)]
    assert [r.objective for r in res if r.method == "random"] == [7.0, 3.0, 5.0]
    assert best_bound(res) == 3.0
    assert all(r.objective >= 3.0 for r in res)  # no heuristic beats the proven optimum


def test_warm_start_chains_another_method():
    reg = toy.registry()
    r = solve("toy", INST, "first", registry_=reg, warm_start="exact")
    assert r.objective == 3.0 and r.metrics["solver"]["warm_start_from"] == "exact (seed 0)"
    prev = solve("toy", INST, "random", registry_=reg, seed=2)
    assert solve("toy", INST, "first", registry_=reg, warm_start=prev).objective == 5.0
    assert solve("toy", INST, "first", registry_=reg,
                 warm_start=prev.to_dict() | {"solution": {"index": 3}}).objective == 9.0
    with pytest.raises(InputError, match="toy/exact takes no warm start"):
        solve("toy", INST, "exact", registry_=reg, warm_start="first")
    with pytest.raises(InputError, match="neither a toy method nor a result file"):
        solve("toy", INST, "first", registry_=reg, warm_start="no-such")
    res = compare("toy", INST, ["first", "exact"], registry_=reg, warm_start="exact")
    assert [r.objective for r in res] == [3.0, 3.0]


def test_unknown_names():
    reg = toy.registry()
    with pytest.raises(UnknownNameError, match="did you mean 'exact'"):
        solve("toy", INST, "exakt", registry_=reg)
    with pytest.raises(UnknownNameError, match="decision: unknown name 'toys'"):
        reg.methods("toys")
    with pytest.raises(ValueError, match="declared twice"):
        collect([toy.exact.__chipsched_method__,
                 method("toy", "exact", "exact", "again")(lambda i, o: None)
                 .__chipsched_method__])


def test_the_default_registry_knows_the_four_decisions():
    assert registry().decisions() == DECISIONS == (
        "region_split", "tile_groups", "op_placement", "core_assignment")
    for d in DECISIONS:
        dec = registry().decision(d)
        assert dec.problem.name == d and dec.methods
        for m in dec.methods.values():
            assert m.decision == d


def test_gap_convention():
    assert relative_gap(110.0, 100.0) == pytest.approx(100 / 1100)
    assert relative_gap(0.0, 0.0) == 0.0
    assert relative_gap(None, 1.0) is None
    assert math.isinf(relative_gap(0.0, -1.0))
    r = Result("toy", "m", Status.TIME_LIMIT, objective=10.0, bound=8.0)
    assert r.gap == pytest.approx(0.2)
    assert "gap=20%" in str(r)


def test_restricted_space_bounds_do_not_bound_the_decision():
    full = Result("d", "exact", Status.OPTIMAL, objective=10.0, bound=10.0)
    seg = Result("d", "seg", Status.OPTIMAL, objective=12.0, bound=12.0, space="segmented")
    heur = Result("d", "heur", Status.FEASIBLE, objective=11.0)
    assert best_bound([seg, heur]) is None
    assert best_bound([full, seg, heur]) == 10.0
    assert seg.to_dict()["space"] == "segmented"


def test_warm_start_edge_cases_are_refused_before_anything_runs():
    runs = []

    @method("toy", "counted", "heuristic", "counts its runs")
    def counted(inst, options):
        runs.append(1)
        return MethodOutput(Status.FEASIBLE, 0, float(inst[0]))

    reg = Registry([toy.Decision(toy.PROBLEM, collect(
        [counted.__chipsched_method__, toy.exact.__chipsched_method__,
         toy.first.__chipsched_method__, toy.nothing.__chipsched_method__]), toy.make)])
    with pytest.raises(InputError, match="toy/exact takes no warm start"):
        solve("toy", INST, "exact", registry_=reg, warm_start="counted")
    assert not runs  # refused before the warm start's method ran
    empty = solve("toy", INST, "nothing", registry_=reg)
    with pytest.raises(InputError, match="the nothing result has no solution"):
        solve("toy", INST, "first", registry_=reg, warm_start=empty)
    with pytest.raises(InputError, match="the result has no solution"):
        solve("toy", INST, "first", registry_=reg, warm_start=empty.to_dict())
    with pytest.raises(InputError, match="nothing gave no solution"):
        compare("toy", INST, ["first"], registry_=reg, warm_start="nothing")
    with pytest.raises(InputError, match="neither a toy method nor a result file"):
        compare("toy", INST, ["first"], registry_=reg, warm_start="nope.json")
    with pytest.raises(InputError, match="progress: must be a callback"):
        solve("toy", INST, "first", registry_=reg, progress=True)


def test_compare_warm_start_method_gets_its_parameters_and_runs_cold_on_other_seeds():
    seen = []

    @method("toy", "walker", "heuristic", "records its warm start", randomized=True,
            warm_start=True, params=toy.NthParams)
    def walker(inst, options, params):
        seen.append((options.seed, options.warm_start, params.n))
        i = params.n % len(inst)
        return MethodOutput(Status.FEASIBLE, i, float(inst[i]))

    reg = Registry([toy.Decision(toy.PROBLEM, collect(
        [walker.__chipsched_method__, toy.first.__chipsched_method__]), toy.make)])
    res = compare("toy", INST, ["walker", "first"], seeds=range(2), registry_=reg,
                  warm_start="walker", n=1)
    assert seen == [(0, None, 1), (1, None, 1)]  # its own runs: cold, with n=1
    assert [r.objective for r in res] == [3.0, 3.0, 3.0]  # first starts from index 1


def test_parameter_values_the_cli_and_numpy_give():
    from chipsched.method import ParamSpec

    n = ParamSpec("n", int, True, None, "a count", ge=0)
    assert n.check("1e3", "n") == 1000 and n.check(np.int64(7), "n") == 7
    assert n.check("none", "n") is None and n.check("null", "n") is None
    with pytest.raises(InputError, match="must be an integer"):
        n.check("1" + "0" * 400 + ".5", "n")
    x = ParamSpec("x", float, False, 1.0, "a number")
    with pytest.raises(InputError, match="must be a finite number"):
        x.check("1" + "0" * 400, "x")  # float('1e400') is inf
    s = ParamSpec("s", str, True, None, "a name")
    assert s.check("none", "s") is None and s.check("seed004", "s") == "seed004"


def test_compare_announces_each_run_before_it_starts():
    """The CLI's progress line names the running method (a long method is not silent):
    on_start comes before its run's on_result, in order."""
    from chipsched.api import compare, make_instance

    events = []
    compare("tile_groups", make_instance("tile_groups", "tiny", "edge-4x4"), ["ls", "lp"],
            on_start=lambda m, s, done, total: events.append(("start", m, done, total)),
            on_result=lambda r, done, total: events.append(("done", r.method, done, total)))
    assert events == [("start", "ls", 0, 2), ("done", "ls", 1, 2),
                      ("start", "lp", 1, 2), ("done", "lp", 2, 2)]
