"""Solver layer: CP-SAT and Pyomo (HiGHS, CBC) in one process agree with brute force."""

from __future__ import annotations

import highspy
import numpy as np
import ortools
import pyomo.environ as pyo
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ortools.sat.python import cp_model

from chipsched.budget import Budget
from chipsched.errors import InputError, SolverError
from chipsched.result import Status
from chipsched.solvers.bruteforce import enumerate_best
from chipsched.solvers.cpsat import solve_cpsat
from chipsched.solvers.milp import available_milp_solvers, cbc_path, solve_pyomo
from chipsched.solvers.options import SolveOptions
from chipsched.solvers.selftest import (
    balance_bruteforce,
    balance_cpsat,
    balance_pyomo,
    makespan,
)


def test_versions_that_import_together():
    """The pinned highspy (1.16) and OR-Tools 9.x load in one process — this module
    imports both (1.15 did not load next to OR-Tools 9.15: clashing HiGHS symbols)."""
    major, minor = highspy.Highs().versionMajor(), highspy.Highs().versionMinor()
    assert (major, minor) >= (1, 16)
    assert ortools.__version__.split(".")[0] == "9"


def test_highs_presolve_regression():
    """min 2x + 3z s.t. x + z >= 4.5, z integer: the optimum is 9 (x = 4.5, z = 0).
    HiGHS 1.14.0's presolve answers 15 and calls it optimal (ERGO-Code/HiGHS#3043)."""
    M = pyo.ConcreteModel()
    M.x = pyo.Var(bounds=(0, 10))
    M.z = pyo.Var(bounds=(0, 10), domain=pyo.Integers)
    M.c = pyo.Constraint(expr=M.x + M.z >= 4.5)
    M.o = pyo.Objective(expr=2 * M.x + 3 * M.z)
    for backend in ("highs", "cbc"):
        out = solve_pyomo(M, SolveOptions(), backend)
        assert out.status is Status.OPTIMAL and out.objective == pytest.approx(9.0), backend


def test_highs_presolve_regression_of_an_earlier_pin():
    """The tile allocation MILP (5 children of NPT 145, 445, 445, 666, 448 on 13 tiles,
    minimize the largest NPT / tiles): the optimum is 222 (tiles 1, 3, 3, 3, 3). HiGHS
    1.13.1 with presolve answered 222.5 and called it optimal (found by hypothesis in
    test_tile_groups_model); CBC gives 222."""
    npt, tiles = [145.0, 445.0, 445.0, 666.0, 448.0], 13
    M = pyo.ConcreteModel()
    M.y = pyo.Var(range(5), range(1, tiles + 1), domain=pyo.Binary)
    M.z = pyo.Var(domain=pyo.NonNegativeReals)
    M.one = pyo.Constraint(range(5), rule=lambda M, i: sum(M.y[i, a] for a in
                                                            range(1, tiles + 1)) == 1)
    M.sum = pyo.Constraint(expr=sum(a * M.y[i, a] for i in range(5)
                                    for a in range(1, tiles + 1)) == tiles)
    M.max = pyo.Constraint(range(5), rule=lambda M, i: M.z >= sum(
        npt[i] / a * M.y[i, a] for a in range(1, tiles + 1)))
    M.obj = pyo.Objective(expr=M.z)
    for backend in ("highs", "cbc"):
        out = solve_pyomo(M, SolveOptions(), backend)
        assert out.status is Status.OPTIMAL and out.objective == pytest.approx(222.0), backend


def test_highs_proves_the_true_optimum_of_a_real_valued_placement():
    """Found by test_op_placement_methods' real-valued differential test: two ops, two
    single-core processors, times 9 and 5 (×1.234567e-4 s) on either, the second op
    paying energy on the first processor, objective makespan + 39824.7 · energy. The
    optimum runs them in parallel (9 ticks); HiGHS 1.13.1 without presolve (as chipsched
    ran it, against the fault of the test above) cut it off at its root and proved the
    serial schedule (10 ticks) "optimal" — the fault of ERGO-Code/HiGHS#3273. With
    presolve, 1.13.1 fails the test above; 1.16 passes both."""
    from chipsched.api import solve
    from chipsched.problems.op_placement import Instance

    f, g = 1.234567e-4, 3.1e-9
    inst = Instance(name="r", ops=("o0", "o1"), op_class=("task", "task"),
                    time=np.array([[9.0, 5.0], [9.0, 5.0]]) * f,
                    energy=np.array([[0.0, 0.0], [2.0, 0.0]]) * g,
                    edges=np.zeros((0, 2), np.int64), edge_bytes=np.zeros(0),
                    processors=("p0", "p1"), cores=(1, 1), latency=np.zeros((2, 2)),
                    bandwidth=np.ones((2, 2)) / f, objective=f"weighted:1,{f / g:.6g}")
    for backend in ("highs", "cbc"):
        r = solve("op_placement", inst, "milp", milp_solver=backend, threads=1)
        assert r.status is Status.OPTIMAL and r.objective == pytest.approx(9 * f), backend
        assert r.bound <= 9 * f * (1 + 1e-9), backend


@settings(max_examples=15)
@given(st.lists(st.integers(1, 60), min_size=2, max_size=7), st.integers(2, 3))
def test_same_model_on_every_backend(durations, k):
    opts = SolveOptions(time_limit=20, threads=1)
    best, assign = balance_bruteforce(durations, k)
    assert makespan(durations, assign, k) == best
    for label, (out, a) in (("cpsat", balance_cpsat(durations, k, opts)),
                            ("highs", balance_pyomo(durations, k, opts, "highs")),
                            ("cbc", balance_pyomo(durations, k, opts, "cbc"))):
        assert out.status is Status.OPTIMAL, label
        assert out.objective == pytest.approx(best), label
        assert out.bound == pytest.approx(best, abs=1e-6), label
        assert makespan(durations, a, k) == best, label


def _knapsack(n=300, m=30, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.integers(10, 100, (m, n))
    v = rng.integers(10, 100, n)
    cap = w.sum(1) // 3
    return w, v, cap


def _pyomo_knapsack(w, v, cap):
    m, n = w.shape
    M = pyo.ConcreteModel()
    M.x = pyo.Var(range(n), domain=pyo.Binary)
    M.c = pyo.ConstraintList()
    for k in range(m):
        M.c.add(sum(int(w[k, i]) * M.x[i] for i in range(n)) <= int(cap[k]))
    M.o = pyo.Objective(expr=sum(int(v[i]) * M.x[i] for i in range(n)), sense=pyo.maximize)
    return M


@pytest.mark.parametrize("backend", ["highs", "cbc"])
def test_time_limit_reports_incumbent_and_bound(backend):
    """A hard 300-item, 30-constraint knapsack stopped after 0.5 s: maximisation bound ≥
    incumbent (CBC's bound is read through a min −f solve: Pyomo's reader does not
    negate it)."""
    M = _pyomo_knapsack(*_knapsack())
    out = solve_pyomo(M, SolveOptions(time_limit=0.5, threads=1), backend)
    assert out.status is Status.TIME_LIMIT and out.has_solution
    assert out.bound >= out.objective > 0
    assert out.objective == pytest.approx(pyo.value(M.o))
    # the values handed back are an integer solution (CBC without its preprocessing
    # handed back a fractional point worth less than the incumbent it reported)
    assert all(abs(M.x[i].value - round(M.x[i].value)) <= 1e-6 for i in M.x)
    assert out.wall_s < 5


def test_cpsat_time_limit_and_hints():
    w, v, cap = _knapsack(n=200, m=20)
    m = cp_model.CpModel()
    x = [m.new_bool_var(f"x{i}") for i in range(len(v))]
    for k in range(len(cap)):
        m.add(sum(int(w[k, i]) * x[i] for i in range(len(v))) <= int(cap[k]))
    m.maximize(sum(int(v[i]) * x[i] for i in range(len(v))))
    out, solver = solve_cpsat(m, SolveOptions(time_limit=0.3, threads=1))
    assert out.status is Status.TIME_LIMIT and out.bound >= out.objective
    # a hint is taken as the first solution: the incumbent is at least the hinted value
    # (1 s, not less: under a loaded CI run CP-SAT's presolve alone took over 0.05 s and
    # the run ended before it had read the hint)
    hint = {xi: int(solver.value(xi)) for xi in x}
    out2, _ = solve_cpsat(m, SolveOptions(time_limit=1.0, threads=1), hints=hint)
    assert out2.has_solution and out2.objective >= out.objective - 1e-9


def test_highs_warm_start_is_used():
    """With HiGHS limited to the root node and no heuristics, the incumbent can only
    come from the warm start: with it the run has a solution worth the start's value."""
    w, v, cap = _knapsack(n=120, m=15, seed=3)
    order = np.argsort(-v)
    chosen = np.zeros(len(v), dtype=int)
    load = np.zeros(len(cap))
    for i in order:  # greedy feasible start
        if np.all(load + w[:, i] <= cap):
            chosen[i] = 1
            load += w[:, i]
    M = _pyomo_knapsack(w, v, cap)
    for i in range(len(v)):
        M.x[i].value = int(chosen[i])
    start_value = float(v @ chosen)
    # no presolve, no primal heuristics, root node only
    limits = {"mip_max_nodes": 0, "mip_heuristic_effort": 0.0, "presolve": "off"}
    out = solve_pyomo(M, SolveOptions(time_limit=5, threads=1), "highs", warm_start=True,
                      solver_options=limits)
    assert out.stats.get("warm_start") is True
    assert out.has_solution and out.objective >= start_value - 1e-6


def test_cbc_binary_and_solver_lookup():
    assert cbc_path().endswith("cbc")
    assert {"highs", "cbc"} <= set(available_milp_solvers())
    M = _pyomo_knapsack(*_knapsack(n=5, m=2))
    with pytest.raises(SolverError, match="'nosuchsolver' is not available"):
        solve_pyomo(M, SolveOptions(), "nosuchsolver")


def test_infeasible_on_both_backends():
    m = cp_model.CpModel()
    a = m.new_int_var(0, 3, "a")
    m.add(a >= 5)
    m.minimize(a)
    out, _ = solve_cpsat(m, SolveOptions())
    assert out.status is Status.INFEASIBLE and not out.has_solution
    M = pyo.ConcreteModel()
    M.a = pyo.Var(bounds=(0, 3), domain=pyo.Integers)
    M.c = pyo.Constraint(expr=M.a >= 5)
    M.o = pyo.Objective(expr=M.a)
    for backend in ("highs", "cbc"):
        out = solve_pyomo(M, SolveOptions(), backend)
        assert out.status is Status.INFEASIBLE and not out.has_solution


def test_options_validation():
    for bad in (0, -1, float("inf"), float("nan")):
        with pytest.raises(InputError, match="time_limit: must be a positive number"):
            SolveOptions(time_limit=bad)
    with pytest.raises(InputError, match=r"seed: must be an integer in \[0, 2\^63\)"):
        SolveOptions(seed=2**63)
    with pytest.raises(InputError, match="threads"):
        SolveOptions(threads=0)
    with pytest.raises(InputError, match="seed"):
        SolveOptions(seed=-1)
    assert SolveOptions().workers >= 1


def test_bruteforce_guard_and_ties():
    r = enumerate_best(iter([3, 1, 2, 1]), lambda x: x)
    assert (r.best, r.value, r.count, r.ties) == (1, 1, 4, 2)
    r = enumerate_best(iter([5, None, 4]), lambda x: x)
    assert r.value == 4 and r.count == 2
    with pytest.raises(InputError, match="too large for brute force"):
        enumerate_best(iter(range(10)), lambda x: x, size=10**9)


def test_solver_seconds_is_what_the_budget_has_left():
    """The backend gets what is left of the run's budget less 3 % of the limit for
    reading the solution back, never less than 1 % of the limit (a fake clock)."""
    now = [0.0]

    def clock() -> float:
        return now[0]

    assert SolveOptions().solver_seconds() is None
    opts = SolveOptions(time_limit=10, budget=Budget(10, clock=clock))
    assert opts.solver_seconds() == pytest.approx(9.7)
    now[0] = 6.0
    assert opts.solver_seconds() == pytest.approx(3.7)
    now[0] = 15.0
    assert opts.solver_seconds() == pytest.approx(0.1)
    # a narrower limit is a share of the budget, never more than what is left of it
    now[0] = 0.0
    opts = SolveOptions(time_limit=10, budget=Budget(10, clock=clock))
    assert opts.replace(time_limit=5).solver_seconds() == pytest.approx(5 - 0.15)
    now[0] = 8.0
    assert opts.replace(time_limit=5).solver_seconds() == pytest.approx(2 - 0.06)


def test_the_face_gives_the_method_one_budget_for_the_run(monkeypatch):
    from chipsched.api import make_instance
    from chipsched.api import solve as face_solve

    seen = []
    real = SolveOptions.solver_seconds

    def spy(self):
        seen.append(self.budget)
        return real(self)

    monkeypatch.setattr(SolveOptions, "solver_seconds", spy)
    inst = make_instance("op_placement", "tiny")
    face_solve("op_placement", inst, "cpsat", time_limit=30)
    roots = {id(b._root()) for b in seen}
    assert seen and len(roots) == 1 and seen[0]._root().time_limit == 30
    # the budget and the checked warm start are the face's, not options a user sets
    for name in ("budget", "warm"):
        with pytest.raises(InputError, match=name):
            face_solve("op_placement", inst, "cpsat", **{name: 1.0, "time_limit": 5})


@pytest.mark.parametrize("method", ["cpsat", "milp"])
def test_a_run_stopped_at_the_gap_limit_is_no_proof(method):
    """Review finding: CP-SAT says OPTIMAL when it stops at its relative gap limit, and
    its bound was then overwritten by the objective — "optimal", gap 0, 13 % above the
    true optimum. A run stopped at a user's ``mip_gap`` keeps the solver's bound and is
    FEASIBLE unless that bound closes the gap (HiGHS and CBC likewise)."""
    from chipsched.api import make_instance, solve

    inst = make_instance("region_split", "tiny", "soc-npu-gpu-cpu")
    opt = solve("region_split", inst, method, time_limit=20, threads=1)
    assert opt.status is Status.OPTIMAL
    r = solve("region_split", inst, method, time_limit=20, threads=1, mip_gap=0.5)
    assert r.bound <= opt.objective * (1 + 1e-6)
    if r.objective > opt.objective * (1 + 1e-6):
        assert r.status is Status.FEASIBLE and r.gap > 0


def test_cbc_stopped_before_an_integer_solution_has_none():
    """Review finding: CBC stopped by its limit before any integer solution hands back the
    LP relaxation's values (loaded as a solution: over-full cores, a ConsistencyError)
    or says "infeasible" without a proof. Either way: no solution, no proof, and the
    face reports the warm start when it has one."""
    from chipsched.api import make_instance, solve

    inst = make_instance("core_assignment", "stencil:nx=17,ny=17", objective="cut")
    # (CBC stops in the LP, in the search with no incumbent — iterations or time — or
    # after "No feasible solution found": every way must mean no solution, no proof)
    for limit in (0.05, 0.1, 0.2, 0.3, 0.6):
        r = solve("core_assignment", inst, "milp", time_limit=limit, milp_solver="cbc",
                  auto_warm_start=False)
        assert r.status in (Status.TIME_LIMIT, Status.OPTIMAL, Status.FEASIBLE), limit
    # traffic: CBC stopped inside its LP once reported a bound of 8.5e12 over an
    # incumbent of 522 (the face refused it); a bound beyond the incumbent is dropped
    traffic = make_instance("core_assignment", "stencil:nx=17,ny=17")
    for limit in (0.1, 0.2, 0.4, 0.8):
        r = solve("core_assignment", traffic, "milp", time_limit=limit, milp_solver="cbc",
                  auto_warm_start=False)
        assert r.bound is None or r.objective is None or r.bound <= r.objective, limit
    warm = solve("core_assignment", inst, "seed004-plus")
    r = solve("core_assignment", inst, "milp", time_limit=0.3, milp_solver="cbc",
              warm_start=warm)
    assert r.solution is not None and r.objective <= warm.objective


def test_oracles_stop_at_their_budget():
    """Review finding: the brute-force oracles never looked at the clock (0.2 s limit,
    1.5 s run on a 6-op graph; ~23 s at the 2,000,000-candidate cap). Once the budget
    is over (polled every 128 candidates) they return the best so far as time_limit,
    without a bound."""
    res = enumerate_best(range(10_000), lambda x: float(-x), budget=Budget(polls=0))
    assert not res.complete and res.count == 127 and res.value == -126
    res = enumerate_best(range(10_000), lambda x: float(-x), budget=Budget(polls=2))
    assert not res.complete and res.count == 3 * 128 - 1
    full = enumerate_best(range(10_000), lambda x: float(-x), budget=None)
    assert full.complete and full.value == -9_999

    from chipsched.api import make_instance, solve

    for decision, name in (("op_placement", "random:n=6,p=3,seed=0"),
                           ("region_split", "tiny")):
        inst = make_instance(decision, name)
        r = solve(decision, inst, "bruteforce", budget=Budget(polls=3))
        assert r.status is Status.TIME_LIMIT and r.bound is None, decision
        assert "stopped at the time limit" in r.message and r.solution is not None


def test_a_large_seed_reaches_cp_sat():
    """Review finding: CP-SAT takes a 32-bit seed; --seed 3000000000 raised a TypeError."""
    m = cp_model.CpModel()
    x = m.new_int_var(0, 5, "x")
    m.minimize(x)
    out, _ = solve_cpsat(m, SolveOptions(seed=3_000_000_000, threads=1))
    assert out.status is Status.OPTIMAL and out.objective == 0


def test_highs_reports_the_solution_it_returns_after_a_warm_start():
    """Found by test_op_placement_methods' differential test on highspy 1.16: with
    presolve, HiGHS mapped the MIP start (HEFT's schedule, makespan 6) into its reduced
    space, where it read as 5, and returned that start as "optimal at 5" — the face's
    check (model value 5, evaluator 6) stopped the run. solve_pyomo now checks that the
    reported objective is the returned solution's value and solves such a run again
    without the start. The optimum is 5."""
    from chipsched.api import solve
    from chipsched.problems.op_placement import Instance

    inst = Instance(name="h", ops=("o0", "o1", "o2", "o3"), op_class=("task",) * 4,
                    time=np.array([[1.0, 2.0, 9.0], [6.0, 4.0, 4.0], [np.inf, 1.0, 1.0],
                                   [6.0, 2.0, 6.0]]),
                    edges=np.array([[0, 2], [1, 2]]), edge_bytes=np.zeros(2),
                    processors=("p0", "p1", "p2"), cores=(1, 1, 1),
                    latency=np.zeros((3, 3)), bandwidth=np.ones((3, 3)),
                    energy=np.zeros((4, 3)), objective="makespan")
    heft = solve("op_placement", inst, "heft")
    assert heft.objective == 6.0  # the start is not optimal: the solver has to move
    for backend in ("highs", "cbc"):
        r = solve("op_placement", inst, "milp", milp_solver=backend, warm_start=heft.solution)
        assert r.status is Status.OPTIMAL and r.objective == 5.0, backend


def _four_items() -> pyo.ConcreteModel:
    M = pyo.ConcreteModel()
    v, w = [6, 5, 4, 3], [4, 3, 2, 2]
    M.x = pyo.Var(range(4), domain=pyo.Binary)
    M.c = pyo.Constraint(expr=sum(w[i] * M.x[i] for i in range(4)) <= 6)
    M.o = pyo.Objective(expr=sum(v[i] * M.x[i] for i in range(4)), sense=pyo.maximize)
    for i in range(4):
        M.x[i].value = 0
    return M


@pytest.mark.parametrize("second", ["none", "consistent"])
def test_a_misreported_highs_answer_keeps_its_point_at_its_true_value(monkeypatch, second):
    """The answer check of solve_pyomo, with the misreport simulated (HiGHS's first run
    claims one more than its point is worth, as 1.16 did on a warm start): the point is
    kept at its true value with no bound and no proof; a second run without the start
    replaces it only when it reports its own point — here it finds nothing, or the
    optimum (10: items 0 and 2, weight 6)."""
    import chipsched.solvers.milp as milp

    real, calls = milp._highs_once, []

    def fake(model, options, warm_start, extra=None):
        calls.append(warm_start)
        out = real(model, options, warm_start, extra)
        if len(calls) == 1:
            return (Status.OPTIMAL, out[1] + 1.0, out[1] + 1.0, True, out[4])
        if second == "none":
            for v in model.component_data_objects(pyo.Var):
                v.set_value(None)
            return (Status.TIME_LIMIT, None, None, False, {})
        return out

    monkeypatch.setattr(milp, "_highs_once", fake)
    M = _four_items()
    out = solve_pyomo(M, SolveOptions(), "highs", warm_start=True)
    assert calls == [True, False]
    assert out.stats["solution_misreported"] == 11.0
    if second == "none":  # the first run's point, at its own value
        assert out.status is Status.FEASIBLE and out.bound is None
        assert out.objective == pyo.value(M.o) == 10.0
    else:
        assert out.status is Status.OPTIMAL and out.objective == pyo.value(M.o) == 10.0
    calls.clear()
    out = solve_pyomo(_four_items(), SolveOptions(), "highs", warm_start=False)
    assert calls == [False] and out.status is Status.FEASIBLE and out.bound is None
