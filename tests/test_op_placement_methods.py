"""op_placement methods: HEFT on the paper's example, seed 003 by hand, differential truth
(CP-SAT = MILP = brute force), no heuristic below a proven optimum, every method through
``chipsched.solve``, and a property test that every schedule is feasible."""

from __future__ import annotations

import csv

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from chipsched.api import compare, registry, solve
from chipsched.errors import InputError
from chipsched.formulations.op_placement import (
    count_linear_extensions,
    processor_classes,
    serial_upper_bound,
)
from chipsched.heuristics.op_placement import (
    Seed003State,
    average_communication_cost,
    average_computation_cost,
    cost_profit,
    earliest_start,
    heft_schedule,
    place,
    seed003_assign,
    upward_rank,
)
from chipsched.instances.chips import get_chip
from chipsched.instances.op_placement import load_instance, read_heft_csv
from chipsched.problems.op_placement import Instance, Solution, evaluate
from chipsched.result import Status

DEC = "op_placement"
#: the methods that return a schedule (``bound`` returns a bound only: its own tests
#: are in test_op_placement_windows.py)
METHODS = tuple(m for m, v in registry().methods(DEC).items() if v.kind != "bound")
HEURISTICS = tuple(m for m, v in registry().methods(DEC).items()
                   if v.kind in ("heuristic", "baseline"))
SOC = get_chip("soc-npu-gpu-cpu")

# Topcuoglu, Hariri, Wu (IEEE TPDS 2002), Fig. 2: computation costs and edges
PAPER_W = [[14, 16, 9], [13, 19, 18], [11, 13, 19], [13, 8, 17], [12, 13, 10], [13, 16, 9],
           [7, 15, 11], [5, 11, 14], [18, 12, 20], [21, 7, 16]]
PAPER_E = [(1, 2, 18), (1, 3, 12), (1, 4, 9), (1, 5, 11), (1, 6, 14), (2, 8, 19), (2, 9, 16),
           (3, 7, 23), (4, 8, 27), (4, 9, 23), (5, 9, 13), (6, 8, 15), (7, 10, 17),
           (8, 10, 11), (9, 10, 13)]


def check_schedule(inst: Instance, sol: Solution) -> float:
    """Independent feasibility check; returns the makespan."""
    n = inst.n_ops
    assert len(sol.proc) == n
    end = np.zeros(n)
    for i in range(n):
        p, c = int(sol.proc[i]), int(sol.core[i])
        assert 0 <= p < inst.n_processors and 0 <= c < inst.cores[p]
        assert np.isfinite(inst.time[i, p]) and sol.start[i] >= -1e-9
        end[i] = sol.start[i] + inst.time[i, p]
    tol = 1e-9 * max(1.0, end.max())
    for k, (i, j) in enumerate(inst.edges):
        pi, pj = int(sol.proc[i]), int(sol.proc[j])
        lag = 0.0
        if pi != pj and inst.edge_bytes[k] > 0:
            lag = inst.latency[pi, pj] + inst.edge_bytes[k] / inst.bandwidth[pi, pj]
        assert sol.start[j] >= end[i] + lag - tol, (inst.ops[i], inst.ops[j])
    for a in range(n):
        for b in range(a + 1, n):
            if (sol.proc[a], sol.core[a]) == (sol.proc[b], sol.core[b]):
                assert end[a] <= sol.start[b] + tol or end[b] <= sol.start[a] + tol
    return float(end.max())


# -- HEFT -----------------------------------------------------------------------------------

def _paper_csv(tmp_path):
    comp, conn = tmp_path / "paper_comp.csv", tmp_path / "paper_conn.csv"
    with comp.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["TP", "P1", "P2", "P3"])
        for k, row in enumerate(PAPER_W, 1):
            w.writerow([f"n{k}", *row])
    m = np.zeros((10, 10), dtype=int)
    for a, b, c in PAPER_E:
        m[a - 1, b - 1] = c
    with conn.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["T", *(f"n{k}" for k in range(1, 11))])
        for k in range(10):
            w.writerow([f"n{k + 1}", *m[k]])
    return read_heft_csv(comp, conn)


def test_heft_reproduces_topcuoglu_2002(tmp_path):
    inst = _paper_csv(tmp_path)
    ranks = upward_rank(inst, average_computation_cost(inst), average_communication_cost(inst))
    # the paper's Table (upward ranks of n1..n10)
    np.testing.assert_allclose(ranks, [108, 77, 80, 80, 69, 63.333, 42.667, 35.667, 44.333,
                                       14.667], atol=1e-3)
    sol = heft_schedule(inst)
    assert evaluate(inst, sol)[0] == 80  # the published HEFT makespan
    assert [inst.processors[p] for p in sol.proc] == ["P3", "P1", "P3", "P2", "P3", "P2",
                                                      "P3", "P1", "P2", "P2"]
    r = solve(DEC, inst, "heft")
    assert r.objective == 80 and r.status is Status.FEASIBLE
    # the insertion policy matters on this example: n7 is not simply appended
    assert evaluate(inst, heft_schedule(inst, insertion=False))[0] >= 80


def test_cpop_reproduces_topcuoglu_2002(tmp_path):
    from chipsched.heuristics.op_placement import (
        cpop_schedule,
        critical_path,
        downward_rank,
    )

    inst = _paper_csv(tmp_path)
    w, c = average_computation_cost(inst), average_communication_cost(inst)
    prio = upward_rank(inst, w, c) + downward_rank(inst, w, c)
    # the paper: |CP| = rank_u(n1) = 108, the critical path n1 → n2 → n9 → n10
    assert prio[0] == pytest.approx(108)
    cp = critical_path(inst, prio)
    assert [inst.ops[i] for i in cp] == ["n1", "n2", "n9", "n10"]
    sol = cpop_schedule(inst)
    assert {inst.processors[sol.proc[i]] for i in cp} == {"P2"}  # the CP processor
    assert evaluate(inst, sol)[0] == 86  # the published CPOP makespan
    r = solve(DEC, inst, "cpop")
    assert r.objective == 86 and r.status is Status.FEASIBLE


def test_paper_example_exact_methods_agree_and_beat_heft():
    inst = load_instance("topcuoglu2002", SOC)
    cp = solve(DEC, inst, "cpsat", time_limit=60)
    mi = solve(DEC, inst, "milp", time_limit=60)
    assert cp.status is Status.OPTIMAL and mi.status is Status.OPTIMAL
    assert cp.objective == mi.objective == cp.bound < 80


# -- seed 003 by hand -------------------------------------------------------------------------

def _seed_instance() -> Instance:
    """a (tensor) → b (control-flow scalar) on npu (no control flow) and cpu (host).

    Transfer of the 4-byte edge: latency 1 + 4 / 2 = 3. b's npu time 5 includes a round
    trip of 2.
    """
    return Instance(
        name="s", ops=("a", "b"), op_class=("tensor", "scalar"),
        time=np.array([[1.0, 10.0], [5.0, 1.0]]), energy=np.array([[1.0, 4.0], [3.0, 1.0]]),
        roundtrip=np.array([[0.0, 0.0], [2.0, 0.0]]), control_flow=np.array([False, True]),
        edges=np.array([[0, 1]]), edge_bytes=np.array([4.0]), processors=("npu", "cpu"),
        cores=(1, 1), native_control_flow=(False, True), latency=1.0, bandwidth=2.0)


def test_seed003_cost_and_profit_by_hand():
    inst = _seed_instance()
    st_ = Seed003State.empty(inst)
    C, P = cost_profit(st_, 0, 0, 0)
    # a on npu: T = 0, A = 0 + 1; S = (10 − 1)/10, O = (4 − 1)/4
    assert C == 1 and P == pytest.approx(0.9 + 0.75)
    place(st_, 0, 0, 0, "pass", C, 1.0)
    C, P = cost_profit(st_, 1, 0, 0)
    # b on npu: T = round trip 2, A = backlog 0 + (5 − 2); S = (1 − 5)/5, O = (1 − 3)/3
    assert C == 5 and P == pytest.approx(-0.8 - 2 / 3)
    C, P = cost_profit(st_, 1, 1, 0)
    # b on cpu: T = transfer 3, A = 0 + 1; the host: S = O = 0
    assert C == 4 and P == 0


def test_seed003_fusion_and_thresholds():
    inst = _seed_instance()
    # th2 = 1.5: fused (a, b) on npu costs 1 + 5 = 6 ≤ 1.5 · (1 + 4) and its profit
    # (11 − 6)/11 + (5 − 4)/5 ≥ 0, so b follows a onto the npu: b runs 1–6
    sol, out = seed003_assign(inst, th1=0.0, th2=1.5)
    assert list(sol.proc) == [0, 0] and out == {"pass": 1, "fused": 1, "fallback": 0}
    assert evaluate(inst, sol)[0] == 6
    # th2 = 1.1: 6 > 5.5, no fusion; the npu fails th1 (P < 0), the cpu passes: b 4–5
    sol, out = seed003_assign(inst, th1=0.0, th2=1.1)
    assert list(sol.proc) == [0, 1] and out == {"pass": 2, "fused": 0, "fallback": 0}
    assert evaluate(inst, sol)[0] == 5
    # no fusion and a profit threshold nobody meets: the least-cost fallback (cpu, C = 4)
    sol, out = seed003_assign(inst, th1=5.0, th2=1.5, fusion=False)
    assert out["fallback"] == 2 and list(sol.proc) == [0, 1]
    sol, _ = seed003_assign(inst, th1=5.0, th2=1.5, fusion=False, fallback="profit")
    assert list(sol.proc) == [0, 1]  # b: the cpu's P = 0 beats the npu's −1.47
    with pytest.raises(InputError, match="th2"):
        seed003_assign(inst, th2=0.5)


def test_earliest_start_insertion_and_append():
    busy = [(0.0, 2.0), (5.0, 7.0)]
    assert earliest_start(busy, 1.0, 3.0) == 2.0  # the gap 2–5 holds 3
    assert earliest_start(busy, 1.0, 4.0) == 7.0  # too short: after the last op
    assert earliest_start(busy, 6.0, 1.0) == 7.0  # ready inside a busy interval
    assert earliest_start(busy, 1.0, 3.0, insertion=False) == 7.0
    assert earliest_start([], 4.0, 1.0) == 4.0


def test_by_class_rules():
    inst = _seed_instance()
    r = solve(DEC, inst, "by-class")
    assert list(r.solution.proc) == [0, 1]  # tensor → npu (accelerator), scalar → cpu
    r = solve(DEC, inst, "by-complexity")
    assert list(r.solution.proc) == [0, 1]  # b is control flow → host
    net = load_instance("tiny", SOC)
    sol = solve(DEC, net, "by-complexity").solution
    for i, p in enumerate(sol.proc):
        expect = 2 if net.control_flow[i] else sol.proc[net.op_index("conv1")]
        assert p == expect


# -- every method through chipsched.solve --------------------------------------------------

@pytest.mark.parametrize("method", METHODS)
def test_every_method_is_consistent_with_the_evaluator(method):
    inst = load_instance("random:n=6,p=2,seed=4,ccr=1,cores=1", SOC)
    r = solve(DEC, inst, method, time_limit=30)  # raises ConsistencyError on a mismatch
    assert r.objective == pytest.approx(evaluate(inst, r.solution)[0], rel=1e-12)
    check_schedule(inst, r.solution)
    assert r.metrics["gain_vs_best_single"] > 0
    if registry().get(DEC, method).kind in ("exact", "oracle"):
        assert r.status is Status.OPTIMAL and r.bound == pytest.approx(r.objective)


@pytest.mark.parametrize("method", [m for m in METHODS if m != "bruteforce"])
def test_methods_on_an_expanded_network(method):
    inst = load_instance("tiny", SOC)
    r = solve(DEC, inst, method, time_limit=5)
    check_schedule(inst, r.solution)
    assert r.metrics["best_single_processor"] is not None
    if r.bound is not None:
        assert r.bound <= r.objective * (1 + 1e-9)


# -- differential truth on tiny random instances ----------------------------------------------

@st.composite
def tiny_instances(draw, transfers: bool):
    n = draw(st.integers(1, 5))
    P = draw(st.integers(1, 3))
    cores = [1] * P
    if P <= 2 and draw(st.booleans()):
        cores[draw(st.integers(0, P - 1))] = 2
    time = np.array([[draw(st.integers(1, 9)) for _ in range(P)] for _ in range(n)], float)
    for i in range(n):  # some ops cannot run everywhere
        if P > 1 and draw(st.integers(0, 3)) == 0:
            time[i, draw(st.integers(0, P - 1))] = np.inf
    energy = np.array([[draw(st.integers(0, 5)) for _ in range(P)] for _ in range(n)], float)
    edges = [(a, b) for b in range(n) for a in range(b) if draw(st.integers(0, 2)) == 0]
    eb = [float(draw(st.integers(0, 4))) if transfers else 0.0 for _ in edges]
    lat = np.array([[draw(st.integers(0, 3)) if transfers else 0 for _ in range(P)]
                    for _ in range(P)], float)
    bw = draw(st.sampled_from([1.0, 2.0, np.inf]))
    # weighted:1,0.5 and 2,3: CP-SAT's energy tick was 2 (odd energies floored: no proof)
    obj = draw(st.sampled_from(["makespan", "makespan", "energy", "weighted:1,2",
                                "weighted:1,0.5", "weighted:2,3"]))
    return Instance(name="h", ops=tuple(f"o{i}" for i in range(n)), op_class=("task",) * n,
                    time=time, energy=energy, edges=np.array(edges, dtype=np.int64),
                    edge_bytes=np.array(eb), processors=tuple(f"p{q}" for q in range(P)),
                    cores=tuple(cores), latency=lat, bandwidth=bw, objective=obj)


def _differential(inst: Instance) -> None:
    bf = solve(DEC, inst, "bruteforce")
    cp = solve(DEC, inst, "cpsat", time_limit=20, threads=1)
    mi = solve(DEC, inst, "milp", time_limit=20)
    assert bf.status is cp.status is mi.status is Status.OPTIMAL
    assert cp.objective == pytest.approx(bf.objective, rel=1e-9, abs=1e-9)
    assert mi.objective == pytest.approx(bf.objective, rel=1e-9, abs=1e-9)
    for r in (bf, cp, mi):
        check_schedule(inst, r.solution)
    for hr in compare(DEC, inst, HEURISTICS):  # no heuristic beats a proven optimum
        assert hr.status is not Status.ERROR, (hr.method, hr.message)
        if hr.objective is not None:
            assert hr.objective >= bf.objective - 1e-9, hr.method


@settings(max_examples=60)
@given(tiny_instances(transfers=False))
def test_exact_methods_agree_without_transfers(inst):
    _differential(inst)


@settings(max_examples=60)
@given(tiny_instances(transfers=True))
def test_exact_methods_agree_with_transfers(inst):
    _differential(inst)


@settings(max_examples=25)
@given(tiny_instances(transfers=True))
def test_real_valued_data_bounds_stay_valid(inst):
    """Times in seconds (non-integral): CP-SAT rounds them down to ticks, the MILP scales
    them; the bounds must stay below the true optimum and 'optimal' must be honest."""
    f, g = 1.234567e-4, 3.1e-9
    real = Instance(name="r", ops=inst.ops, op_class=inst.op_class, time=inst.time * f,
                    energy=inst.energy * g, edges=inst.edges, edge_bytes=inst.edge_bytes,
                    processors=inst.processors, cores=inst.cores, latency=inst.latency * f,
                    bandwidth=inst.bandwidth / f, objective=inst.objective.name
                    if not inst.objective.name.startswith("weighted") else
                    f"weighted:1,{f / g:.6g}")
    bf = solve(DEC, real, "bruteforce")
    for m in ("cpsat", "milp"):  # the assertions hold at any stop: a short limit will do
        r = solve(DEC, real, m, time_limit=5, threads=1)
        check_schedule(real, r.solution)
        assert r.objective >= bf.objective * (1 - 1e-9) - 1e-18
        assert r.bound <= bf.objective * (1 + 1e-9) + 1e-18
        if r.status is Status.OPTIMAL:
            assert r.objective == pytest.approx(bf.objective, rel=1e-6, abs=1e-18)


# -- every method's schedule is feasible ----------------------------------------------------

@settings(max_examples=15)
@given(st.integers(2, 14), st.integers(1, 4), st.integers(0, 10_000), st.sampled_from(
    [0.0, 0.5, 3.0]), st.integers(1, 2))
def test_every_schedule_respects_precedence_transfers_exclusivity(n, p, seed, ccr, cores):
    inst = load_instance(f"random:n={n},p={p},seed={seed},ccr={ccr},cores={cores}", SOC)
    for m in METHODS:
        if m == "bruteforce" and count_linear_extensions(inst) * inst.n_resources ** n > 5e4:
            continue
        r = solve(DEC, inst, m, time_limit=2, threads=1)
        if r.solution is None:
            assert r.status is Status.TIME_LIMIT
            continue
        span = check_schedule(inst, r.solution)
        assert span == pytest.approx(r.metrics["makespan"])


# -- exact-model details ---------------------------------------------------------------------

def test_identical_free_processors_merge_into_one_class():
    stg = load_instance("random:n=5,p=3,seed=1,ccr=0,het=0", SOC)
    assert processor_classes(stg)[0] == [[0, 1, 2]]
    with_cost = load_instance("random:n=5,p=3,seed=1,ccr=1,het=0,density=1", SOC)
    assert processor_classes(with_cost) == ([[0], [1], [2]], [[0, 1, 2]])
    # 5 ops of fixed time, no transfers: the serial bound is their sum
    assert serial_upper_bound(stg) == stg.time[:, 0].sum()


def test_linear_extensions_and_brute_force_guard():
    chain = load_instance("random:n=6,p=1,seed=0,density=1", SOC)
    assert count_linear_extensions(chain) == 1
    free = load_instance("random:n=5,p=1,seed=0,density=0", SOC)
    assert count_linear_extensions(free) == 120
    big = load_instance("random:n=9,p=3,seed=0,density=0.1", SOC)
    with pytest.raises(InputError, match="too large for brute force"):
        solve(DEC, big, "bruteforce")
    # 9 ops, 3 cores: the unordered pairs × cores × 2 order constraints
    with pytest.raises(InputError, match="too large for the MILP.*max_order_constraints"):
        solve(DEC, big, "milp", max_order_constraints=10)


def test_warm_starts_are_used():
    inst = load_instance("random:n=30,p=3,seed=7,ccr=1", SOC)
    h = solve(DEC, inst, "heft")
    cp = solve(DEC, inst, "cpsat", time_limit=5, warm_start=h, threads=1)
    assert cp.metrics["solver"]["warm_start"] and cp.objective <= h.objective
    mi = solve(DEC, inst, "milp", time_limit=3, warm_start=h)
    assert mi.metrics["solver"]["warm_start"] is True  # HiGHS accepted the start
    assert mi.objective <= h.objective
    with pytest.raises(InputError, match="warm start"):
        solve(DEC, inst, "cpsat", warm_start=load_instance("topcuoglu2002", SOC)
              .solution([0] * 10, [0] * 10, range(10)))


@pytest.mark.parametrize("method", ["cpsat", "milp"])
def test_out_of_time_exact_runs_report_their_warm_start(method):
    """Review finding: CP-SAT stopped before its first schedule reported none although
    it was handed HEFT's (the MILP already returned its start)."""
    inst = load_instance("random:n=30,p=3,seed=7,ccr=1", SOC)
    h = solve(DEC, inst, "heft")
    r = solve(DEC, inst, method, time_limit=1e-3, warm_start=h, threads=1)
    assert r.status is Status.TIME_LIMIT and r.solution is not None
    assert r.objective <= h.objective


def test_energy_optimum_is_the_cheapest_processor_per_op():
    inst = load_instance("tiny", SOC, objective="energy")
    best = inst.energy.min(axis=1).sum()  # energy does not depend on the schedule
    for m in ("cpsat", "milp"):
        r = solve(DEC, inst, m, time_limit=20, threads=1)
        assert r.status is Status.OPTIMAL and r.objective == pytest.approx(best, rel=1e-6)
        assert r.bound <= best * (1 + 1e-9)


def test_real_valued_times_report_an_honest_bound():
    inst = load_instance("tiny", SOC)
    r = solve(DEC, inst, "cpsat", time_limit=10, threads=1)
    assert r.metrics["solver"]["resolution"] < 1e-9
    assert r.bound <= r.objective
    if r.status is Status.OPTIMAL:
        assert r.objective - r.bound <= 1e-6 * r.objective


def test_exact_methods_start_from_the_best_quick_heuristic_by_default():
    """Issue 12: CP-SAT and the MILP given no warm start take the best of HEFT, CPOP and
    seed 003; --no-auto-warm-start / auto_warm_start=False turns it off."""
    inst = load_instance("topcuoglu2002", SOC)
    for m in ("cpsat", "milp"):
        r = solve(DEC, inst, m, time_limit=30)
        assert r.objective == 73
        assert r.metrics["solver"]["warm_start_from"] == "heft result"  # 80 < 86 (CPOP)
        cold = solve(DEC, inst, m, time_limit=30, auto_warm_start=False)
        assert cold.objective == 73 and "warm_start_from" not in cold.metrics["solver"]
    given = solve(DEC, inst, "cpsat", time_limit=30, warm_start="cpop")
    assert given.metrics["solver"]["warm_start_from"].startswith("cpop")


def _zero_time_instance(seed: int):
    """4–6 ops on 2 processors, a quarter of the times 0, some ops one processor only."""
    from chipsched.problems.op_placement import Instance

    rng = np.random.default_rng(seed)
    n = int(rng.integers(4, 7))
    t = rng.integers(1, 9, (n, 2)).astype(float)
    t[rng.random((n, 2)) < 0.25] = 0.0
    t[rng.random((n, 2)) < 0.2] = np.inf
    t[np.isinf(t).all(axis=1), 0] = 3.0
    edges = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.3]
    return Instance(name=f"zero{seed}", ops=tuple(f"o{i}" for i in range(n)),
                    op_class=("task",) * n, time=t, edges=edges,
                    edge_bytes=[float(rng.integers(0, 3)) for _ in edges],
                    processors=("p0", "p1"), cores=(1, 1), latency=0.0, bandwidth=1.0)


def test_zero_time_ops_sharing_a_start_with_a_longer_op():
    """Review finding: a zero-time op starting where a longer op on its core starts was
    called an overlap when the longer op had the lower index (the evaluator sorted equal
    starts by index), so HEFT's, CPOP's, seed 003's and even brute force's optimal
    schedules were refused; and CP-SAT/MILP decoded such ties in index order, letting
    the zero-time op slip behind the longer one (model 10, schedule 20)."""
    from chipsched.problems.op_placement import Instance

    inf = np.inf
    inst = Instance(name="zero", ops=("A", "Z", "B"), op_class=("task",) * 3,
                    time=[[10, inf], [0, inf], [inf, 10]], edges=[(1, 2)], edge_bytes=[0],
                    processors=("p0", "p1"), cores=(1, 1), latency=0, bandwidth=inf)
    for m in ("bruteforce", "cpsat", "milp"):
        r = solve(DEC, inst, m, auto_warm_start=False, threads=1)
        assert r.status is Status.OPTIMAL and r.objective == 10.0, m
    for m in ("heft", "cpop", "seed003"):
        assert solve(DEC, inst, m).objective == 10.0, m
    for seed in range(12):
        inst = _zero_time_instance(seed)
        best = solve(DEC, inst, "bruteforce").objective
        for m in ("cpsat", "milp"):
            r = solve(DEC, inst, m, threads=1, time_limit=30)
            assert r.status is Status.OPTIMAL and r.objective == pytest.approx(best), (seed, m)
        for m in ("heft", "cpop", "seed003", "by-class"):
            assert solve(DEC, inst, m).objective >= best * (1 - 1e-9), (seed, m)


@settings(max_examples=200, derandomize=True)
@given(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 6)), max_size=40),
       st.integers(0, 40), st.integers(0, 8), st.booleans())
def test_the_timeline_finds_the_gap_the_list_scan_finds(ops, ready, dur, insertion):
    """Timeline (vectorized past its first intervals) against the frozen list scan of
    issue 6: the same start for every query, as the intervals are added the way the
    list schedulers add them (each op at the start the search gave it)."""
    from chipsched.heuristics.op_placement import Timeline

    from .op_placement_literal_reference import earliest_start as list_scan

    tl, busy = Timeline(), []
    for r, d in ops:
        s = list_scan(busy, float(r), float(d), True)
        assert tl.earliest_start(float(r), float(d), True) == s
        busy.append((s, s + d))
        busy.sort()
        tl.add(s, s + d)
        assert tl.S == [a for a, _ in busy] and tl.E == [b for _, b in busy]
    assert tl.earliest_start(float(ready), float(dur), insertion) == \
        list_scan(busy, float(ready), float(dur), insertion)


def test_the_random_generator_draws_pairs_in_chunks_as_the_all_pairs_draw():
    """The chunked pair draw is the all-pairs draw (same edges, same stream after it):
    the instances of before keep their published figures, at O(edges) memory."""
    from chipsched.instances.op_placement import generators as g

    for n, d in ((1, 0.3), (7, 0.4), (60, 0.2), (1600, 0.01)):
        a, b = np.random.default_rng(5), np.random.default_rng(5)
        iu, ju = np.triu_indices(n, k=1)
        pick = a.random(len(iu)) < d
        old = np.stack([iu[pick], ju[pick]], axis=1)
        chunk, g.PAIR_CHUNK = g.PAIR_CHUNK, 1000  # several chunks even on small graphs
        try:
            new = g._pair_draw(b, n, d)
        finally:
            g.PAIR_CHUNK = chunk
        assert np.array_equal(old, new) and a.random() == b.random()
