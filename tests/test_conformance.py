"""The conformance suite: every registered method of every decision through the same
checks (PyJobShop's per-backend pattern), so a method is covered the day it is registered.

For each decision, small instances of each platform (``INSTANCES``); for every method:

* applicability is declared and honoured: a method that declares it does not apply is
  refused by ``solve`` (``NotApplicable``) and skipped by ``compare``; one that applies
  runs without an error;
* its reported objective is the evaluator's (``chipsched.solve`` refuses a mismatch with
  the method's own number; here it is re-evaluated once more);
* an exact method's bound is ≤ every objective found in its space (every space for a
  full-space method); so is a bound method's (kind ``bound``: a bound and no solution);
* the same seed gives the same result;
* its solution survives ``to_dict`` → JSON → ``from_dict`` and re-evaluates to the same
  objective, and reads back as a warm start;
* its declared parameters have types, defaults that pass their own checks, and docs.
"""

from __future__ import annotations

import functools
import json
import math

import pytest

from chipsched.api import DEFAULT_EXACT_TIME_LIMIT, NotApplicable, compare, solve
from chipsched.budget import Budget
from chipsched.instances.chips import get_chip
from chipsched.method import build_params
from chipsched.registry import DECISIONS, registry
from chipsched.result import Status, to_jsonable
from chipsched.workload import Layer, OpKind, Workload

TIME_LIMIT = DEFAULT_EXACT_TIME_LIMIT


def _net4() -> Workload:
    layers = (Layer("a", OpKind.CONV, K=32, C=3, H=16, W=16, R=3, S=3, in_elems=3 * 1024,
                    weight_elems=864),
              Layer("b", OpKind.CONV, K=64, C=32, H=8, W=8, R=3, S=3, in_elems=32 * 256,
                    weight_elems=18432),
              Layer("c", OpKind.FC, K=10, C=64 * 64, in_elems=64 * 64, weight_elems=40960))
    return Workload("net3", layers, ((0, 1, 8192), (1, 2, 4096)))


def _tile_groups_with_tree():
    from chipsched.problems.tile_groups import ls_tree, make_instance

    w = _net4()
    return make_instance(w, get_chip("tiled-2x2"), batch=2, given=ls_tree(len(w)))


#: decision → [(label, instance factory)]: small instances of every platform, so that the
#: exact models prove their optimum and the oracles apply
INSTANCES = {
    "region_split": [
        ("chiplet", lambda: _make("region_split", "tiny", "chiplet-2x2")),
        ("soc", lambda: _make("region_split", "tiny", "soc-npu-gpu-cpu")),
        # branching layers: the item-order models search a narrower space than dp
        ("chiplet-dag", lambda: _make("region_split", _branching_dag(), "chiplet-2x2",
                                      items="layers")),
    ],
    "tile_groups": [
        ("net3", _tile_groups_with_tree),
    ],
    "op_placement": [
        ("random", lambda: _make("op_placement", "random:n=5,p=2,seed=1")),
        ("topcuoglu", lambda: _make("op_placement", "topcuoglu2002")),
    ],
    "core_assignment": [
        ("layered", lambda: _make("core_assignment", "layered:layers=2,width=3,fanin=2,seed=0",
                                  "neuro-2x3-k2")),
        ("cut", lambda: _make("core_assignment", "layered:layers=2,width=3,fanin=2,seed=0",
                              "neuro-2x3-k2", objective="cut")),
    ],
}


def _branching_dag():
    from chipsched.instances.region_split import random_dag

    return random_dag(6, 4, edge_prob=0.0, backbone=False)


def _make(decision, spec, chip=None, **options):
    from chipsched.api import make_instance

    return make_instance(decision, spec, chip, **options)


@functools.cache
def instance(decision: str, label: str):
    return dict(INSTANCES[decision])[label]()


@functools.cache
def results(decision: str, label: str) -> dict[str, object]:
    """Every method of the decision on the instance, once (compare never aborts)."""
    res = compare(decision, instance(decision, label), time_limit=TIME_LIMIT, threads=1)
    return {r.method: r for r in res}


CASES = [(d, label, m) for d in DECISIONS for label, _ in INSTANCES[d]
         for m in registry().methods(d)]


def _applies(decision: str, label: str, name: str) -> bool:
    dec = registry().decision(decision)
    m, inst = dec.method(name), instance(decision, label)
    return m.not_applicable(inst, m.default_params(), dec.problem.platform(inst),
                            dec.problem.describe_platform) is None


def _kind(c: tuple[str, str, str]) -> str:
    return registry().get(c[0], c[2]).kind


#: the cases where the method applies: each must end without an error on these small
#: instances …
APPLICABLE = [c for c in CASES if _applies(*c)]
#: … with a solution (every kind but ``bound``) …
SOLVING = [c for c in APPLICABLE if _kind(c) != "bound"]
#: … and the exact methods, oracles and bound methods among them must report a bound
BOUNDED = [c for c in APPLICABLE if registry().get(c[0], c[2]).exact or _kind(c) == "bound"]


def test_every_decision_has_conformance_instances():
    assert set(INSTANCES) == set(registry().decisions())
    for d in registry().decisions():
        platforms = set(registry().decision(d).problem.platforms)
        covered = {registry().decision(d).problem.platform(instance(d, lab))
                   for lab, _ in INSTANCES[d]}
        assert platforms <= covered, (d, platforms - covered)


@pytest.mark.parametrize("decision,label,name", CASES)
def test_applicability_is_declared_and_honoured(decision, label, name):
    dec = registry().decision(decision)
    m = dec.method(name)
    inst = instance(decision, label)
    reason = m.not_applicable(inst, m.default_params(), dec.problem.platform(inst),
                              dec.problem.describe_platform)
    r = results(decision, label)[name]
    if reason:
        assert r.status is Status.SKIPPED and reason in r.message
        with pytest.raises(NotApplicable):
            solve(decision, inst, name, time_limit=TIME_LIMIT, threads=1)
        return
    assert r.status not in (Status.SKIPPED, Status.ERROR), (r.status, r.message)
    if m.kind == "bound":  # a bound and nothing else
        assert r.status is Status.BOUND_ONLY and r.solution is None and r.bound is not None
        return
    assert r.solution is not None, r  # the conformance instances are small enough


@pytest.mark.parametrize("decision,label,name", SOLVING)
def test_reported_objective_is_the_evaluators(decision, label, name):
    r = results(decision, label)[name]
    problem = registry().decision(decision).problem
    value, _ = problem.evaluate(instance(decision, label), r.solution)
    assert r.objective == value
    # the method's own number (its model's data or its tally), relative 1e-6 at most
    own = r.metrics["solver"]["reported_objective"]
    assert own == pytest.approx(value, rel=1e-6, abs=0), (own, value)
    model = r.metrics["solver"].get("model_objective")
    if model is not None:  # decoding may improve on the model, rounding aside
        assert value <= model * (1 + 1e-6) + abs(model) * 1e-3, (value, model)
    obj = problem.objective(instance(decision, label))
    assert (r.objective_name, r.objective_unit) == (obj.name, obj.unit) and obj.unit


@pytest.mark.parametrize("decision,label,name", BOUNDED)
def test_an_exact_bound_is_below_every_objective_of_its_space(decision, label, name):
    r = results(decision, label)[name]
    assert r.bound is not None, (r.status, r.message)
    others = [o for o in results(decision, label).values() if o.objective is not None
              and (not r.space or o.space == r.space)]
    for o in others:  # relative only: tile_groups' objectives are ~1e-16 J²·s
        assert r.bound <= o.objective * (1 + 1e-9), (o.method, o.objective, r.bound)


@pytest.mark.parametrize("decision,label,name", APPLICABLE)
def test_same_seed_same_result(decision, label, name):
    r = results(decision, label)[name]
    again = solve(decision, instance(decision, label), name, time_limit=TIME_LIMIT,
                  threads=1, seed=r.seed or 0)
    if r.solution is None:  # a bound method: the same bound
        assert again.bound == r.bound and again.status is r.status
        return
    if r.status is Status.OPTIMAL or registry().get(decision, name).kind != "exact":
        assert again.objective == pytest.approx(r.objective, rel=1e-12, abs=1e-300)
    if registry().get(decision, name).kind != "exact":  # exact ties may differ
        assert to_jsonable(again.solution) == to_jsonable(r.solution)


@pytest.mark.parametrize("decision,label,name", SOLVING)
def test_solution_round_trips_and_warm_starts(decision, label, name):
    r = results(decision, label)[name]
    problem = registry().decision(decision).problem
    inst = instance(decision, label)
    data = json.loads(json.dumps(r.to_dict()))  # a --out file
    back = problem.read_solution(inst, data)
    assert problem.evaluate(inst, back)[0] == pytest.approx(r.objective, rel=1e-12)
    assert to_jsonable(back) == to_jsonable(r.solution)



WARM = [c for c in SOLVING if registry().get(c[0], c[2]).warm_start]


@pytest.mark.parametrize("decision,label,name", WARM)
def test_a_warm_start_is_used(decision, label, name):
    """Started from the best solution found — by any method for a heuristic, which
    never returns worse than its start; by a method of its own space for an exact
    model, whose hints are its space's — a method that takes warm starts returns one at
    least as good; it would not, were the warm start ignored and the best found by
    another method."""
    m = registry().get(decision, name)
    own = results(decision, label).get(name)
    space = m.space if own is None else own.space  # a run may narrow its declared space
    best = min((r for r in results(decision, label).values() if r.solution is not None
                and (not m.exact or r.space == space)), key=lambda r: r.objective)
    r = solve(decision, instance(decision, label), name, warm_start=best.to_dict(),
              time_limit=TIME_LIMIT, threads=1, seed=0)
    assert r.metrics["solver"]["warm_start_from"] == "given dict"
    assert r.objective <= best.objective * (1 + 1e-9), (r.objective, best.method,
                                                        best.objective)
    # the method's own solution, not the face's rule that never reports worse than the
    # warm start, is what reaches it
    assert "returned" not in r.metrics["solver"], r.message


#: polls a method may make after its budget said stop (it leaves its loops level by
#: level; one that ignored the stop would poll on thousands of times)
MAX_POLLS_AFTER_STOP = 24


@pytest.mark.parametrize("decision,label,name", APPLICABLE)
def test_a_method_stops_at_its_budget_with_a_checked_result(decision, label, name):
    """The face's budget contract on a deterministic budget (a poll count, no wall
    clock): run once on an unlimited budget to count the method's polls, then on budgets
    that say stop at the first poll and half-way. The run must end within a few polls of
    the stop, with a result the face checked (the evaluator's objective, a bound below
    it), and say ``time_limit`` unless it proved its answer anyway."""
    inst = instance(decision, label)
    free = Budget(None)
    solve(decision, inst, name, budget=free, threads=1, auto_warm_start=False)
    for k in sorted({0, free.polls // 2}):
        b = Budget(polls=k)
        r = solve(decision, inst, name, budget=b, threads=1, auto_warm_start=False)
        assert b.polls_after_stop <= MAX_POLLS_AFTER_STOP, (k, b.polls_after_stop)
        if b.stop_reason:
            assert r.status in (Status.TIME_LIMIT, Status.OPTIMAL, Status.INFEASIBLE,
                                Status.BOUND_ONLY), (k, r.status, r.message)
        if r.solution is not None and r.bound is not None:
            assert r.bound <= r.objective * (1 + 1e-9) or r.space


@pytest.mark.parametrize("decision,name", [(d, m) for d in DECISIONS
                                           for m in registry().methods(d)])
def test_declared_parameters(decision, name):
    from chipsched.api import method_param_specs

    m = registry().get(decision, name)
    assert m.summary and m.kind in ("exact", "heuristic", "baseline", "oracle", "peer",
                                    "bound")
    specs = method_param_specs(decision, name)
    assert len({s.name for s in specs}) == len(specs)
    defaults = {s.name: s.default for s in m.param_specs}
    assert build_params(m.params, defaults, name) == m.default_params()
    for s in specs:
        assert s.doc and s.type in (int, float, bool, str), (name, s)
        if s.default is not None and s.type is float:
            assert math.isfinite(s.default)


MILP = [c for c in APPLICABLE if "milp" in c[2]]


@pytest.fixture(params=["highs", "cbc"])
def solver_backend(request) -> str:
    """The MILP backends every Pyomo model is run on (the latest fixes were CBC's)."""
    return request.param


@pytest.mark.parametrize("decision,label,name", MILP)
def test_milp_models_agree_on_every_backend(decision, label, name, solver_backend):
    """Each Pyomo model on HiGHS and on CBC: the evaluator's objective, a bound below
    it, and — both proving it — the optimum CP-SAT proves for the same space."""
    r = solve(decision, instance(decision, label), name, time_limit=TIME_LIMIT, threads=1,
              milp_solver=solver_backend)
    assert r.solution is not None and r.status is Status.OPTIMAL, (r.status, r.message)
    assert r.bound is not None and r.bound <= r.objective * (1 + 1e-9)
    twin = results(decision, label).get(name.replace("milp", "cpsat"))
    if twin is not None and twin.status is Status.OPTIMAL and twin.space == r.space:
        assert r.objective == pytest.approx(twin.objective, rel=1e-6), (r.objective,
                                                                        twin.objective)
