"""Seed 003 (issue 15): refined mode by hand, literal mode = the frozen issue-6 code, the
done-when targets on the three networks, property tests, the keyed function library,
loop-fusion scalar ops, and the MILP's incumbent horizon."""

from __future__ import annotations

import math

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from chipsched.api import make_instance, solve
from chipsched.cost import processor_time_s
from chipsched.errors import InputError
from chipsched.formulations.op_placement import (
    build_milp,
    incumbent,
    makespan_cap,
    serial_upper_bound,
    start_windows,
)
from chipsched.heuristics.op_placement import (
    RefinedTables,
    Seed003State,
    emission_order,
    optimistic_cost_table,
    place,
    refined_cost_profit,
    seed003_refined,
)
from chipsched.instances.chips import get_chip
from chipsched.instances.networks import get_network
from chipsched.instances.op_placement import load_instance
from chipsched.problems.op_placement import (
    FunctionLibrary,
    Instance,
    evaluate,
    expand_scalar_ops,
    from_workload,
    fused_pairs,
    makespan_energy,
    tile_blocks,
)
from chipsched.problems.op_placement.network import DTYPES, size_bucket
from chipsched.result import Status
from chipsched.workload import OpKind
from tests import op_placement_literal_reference as v1
from tests.test_op_placement_methods import check_schedule

DEC = "op_placement"
SOC = get_chip("soc-npu-gpu-cpu")
NETWORKS = ("resnet50", "mobilenet-v2", "bert-base")


def _two_ops(objective: str = "makespan") -> Instance:
    """a (tensor) → b (control-flow scalar) on npu (no control flow) and cpu (the host):
    the hand case of test_op_placement_methods. Transfer of the edge: 1 + 4/2 = 3; b's
    npu time 5 includes a round trip of 2."""
    return Instance(
        name="s", ops=("a", "b"), op_class=("tensor", "scalar"),
        time=np.array([[1.0, 10.0], [5.0, 1.0]]), energy=np.array([[1.0, 4.0], [3.0, 1.0]]),
        roundtrip=np.array([[0.0, 0.0], [2.0, 0.0]]), control_flow=np.array([False, True]),
        edges=np.array([[0, 1]]), edge_bytes=np.array([4.0]), processors=("npu", "cpu"),
        cores=(1, 1), native_control_flow=(False, True), latency=1.0, bandwidth=2.0,
        objective=objective)


# -- refined mode by hand ------------------------------------------------------------------

def test_refined_cost_and_profit_by_hand():
    inst = _two_ops()
    # OCT(a, npu) = min(0 + 5, 3 + 1) = 4, OCT(a, cpu) = min(3 + 5, 0 + 1) = 1: running a
    # on the npu delays b's best finish by 3
    np.testing.assert_allclose(optimistic_cost_table(inst), [[4, 1], [0, 0]])
    tables = RefinedTables.of(inst)
    np.testing.assert_allclose(tables.out_delay, [[3, 0], [0, 0]])
    st_ = Seed003State.empty(inst)
    # a on npu: T = 0 (no input) + 3 (output delay), A = 1; S against the mean 5.5
    C, P, _ = refined_cost_profit(st_, tables, 0, 0, 0)
    assert C == 4 and P == pytest.approx((5.5 - 1) / 5.5)
    C, P, _ = refined_cost_profit(st_, tables, 0, 1, 0)
    assert C == 10 and P == pytest.approx((5.5 - 10) / 10)
    place(st_, 0, 0, 0, "pass", 4.0, 4.0)  # a runs 0–1 on the npu
    # b on npu: T = 0 + round trip 2, A = 0 + (5 − 2); S = (3 − 5)/5 against the mean 3
    C, P, _ = refined_cost_profit(st_, tables, 1, 0, 0)
    assert C == 5 and P == pytest.approx(-0.4)
    # b on cpu: T = the input's arrival 1 + 3 = 4 minus ready 1, A = 1
    C, P, _ = refined_cost_profit(st_, tables, 1, 1, 0)
    assert C == 4 and P == pytest.approx(2 / 3)
    # without the look-ahead, a's npu cost is its time alone
    flat = RefinedTables.of(inst, lookahead=False)
    assert refined_cost_profit(Seed003State.empty(inst), flat, 0, 0, 0)[0] == 1


def test_refined_fusion_does_not_bypass_the_scan():
    inst = _two_ops()
    # literal: b is fused onto a's npu before any scan (6 ≤ 1.5 · 5): makespan 6
    sol, out = v1.seed003_assign(inst)
    assert list(sol.proc) == [0, 0] and evaluate(inst, sol)[0] == 6
    # refined: the npu (C = 5, fused P = (8.5 − 6)/8.5 > 0) passes with th2 = 1.3, but
    # the cpu (C = 4) is cheaper and takes b: makespan 5
    for th2 in (1.0, 1.3):
        sol, out, (span, energy) = seed003_refined(inst, th2=th2)
        assert list(sol.proc) == [0, 1] and out["fallback"] == 0
        assert span == evaluate(inst, sol)[0] == 5 and energy == 2
    # a profit nobody reaches: b falls back to the least cost (cpu), recorded as a failure
    sol, out, _ = seed003_refined(inst, th1=0.7)
    assert list(sol.proc) == [0, 1] and out == {"pass": 1, "fused": 0, "fallback": 1}
    # th1 means something: with th2 = 1.3 a core of enough profit may cost more — here
    # none does, and the least-cost core still wins among the passing ones
    sol, out, _ = seed003_refined(inst, th1=-0.5, th2=1.3, fusion=False)
    assert list(sol.proc) == [0, 1]


def test_refined_profit_and_cost_follow_the_objective():
    # energy: C = the op's energy, P = the energy gain: each op on its cheapest processor
    inst = _two_ops("energy")
    sol, _, (span, energy) = seed003_refined(inst)
    assert list(sol.proc) == [0, 1] and energy == 2
    r = solve(DEC, inst, "seed003")
    assert r.objective == 2 == inst.energy.min(axis=1).sum()
    # weighted: α = WT·t̄ / (WT·t̄ + WE·ē) mixes S and O
    w = _two_ops("weighted:1,2")
    tables = RefinedTables.of(w)
    a = 5.5 / (5.5 + 2 * 2.5)
    s, o = (5.5 - 1) / 5.5, (2.5 - 1) / 2.5
    assert tables.profit(5.5, 2.5, 1.0, 1.0) == pytest.approx(a * s + (1 - a) * o)
    C, _, ta = refined_cost_profit(Seed003State.empty(w), tables, 0, 0, 0)
    assert C == pytest.approx(ta + 2 * 1.0)


def test_compiler_order_hoists_scalar_ops():
    inst = load_instance("tiny-chain", SOC)
    order = emission_order(inst, "compiler")
    assert sorted(order) == list(range(inst.n_ops))
    pos = {i: k for k, i in enumerate(order)}
    for i, j in inst.edges:  # a linear extension
        assert pos[int(i)] < pos[int(j)]
    # every scalar op comes before every tensor op here: shapes, loops and kernel
    # parameters depend on shapes only
    last_scalar = max(pos[i] for i in range(inst.n_ops) if inst.op_class[i] == "scalar")
    first_other = min(pos[i] for i in range(inst.n_ops) if inst.op_class[i] != "scalar")
    assert last_scalar < first_other
    assert emission_order(inst, "program") == list(range(inst.n_ops))
    with pytest.raises(InputError, match="order"):
        emission_order(inst, "random")


def test_cli_mode_parameter():
    import json

    from typer.testing import CliRunner

    from chipsched.cli import app

    out = {}
    for mode in ("refined", "literal"):
        res = CliRunner().invoke(app, ["solve", DEC, "-i", "tiny", "-m", "seed003", "-p",
                                       f"mode={mode}", "--json"])
        assert res.exit_code == 0, res.output
        out[mode] = json.loads(res.output)
        assert out[mode]["metrics"]["solver"]["mode"] == mode
    inst = load_instance("tiny", SOC)
    assert out["literal"]["objective"] == solve(DEC, inst, "seed003", mode="literal").objective
    bad = CliRunner().invoke(app, ["solve", DEC, "-i", "tiny", "-m", "seed003", "-p",
                                   "mode=literl"])
    assert bad.exit_code == 2


def test_literal_mode_rejects_refined_only_parameters():
    inst = _two_ops()
    with pytest.raises(InputError, match="lookahead"):
        solve(DEC, inst, "seed003", mode="literal", lookahead=True)
    with pytest.raises(InputError, match="order"):
        solve(DEC, inst, "seed003", mode="literal", order="compiler")
    r = solve(DEC, inst, "seed003", mode="literal", order="program", lookahead=False)
    assert r.objective == 6


# -- the networks: literal reproduces issue 6, refined meets issue 15's targets ----------------

@pytest.fixture(scope="module")
def networks():
    return {n: make_instance(DEC, n, "soc-npu-gpu-cpu") for n in NETWORKS}


def test_literal_mode_reproduces_the_issue6_schedules(networks):
    for inst in networks.values():
        for kw in ({}, {"insertion": False}, {"th2": 1.0, "fusion": False}):
            old, _ = v1.seed003_assign(inst, **kw)
            r = solve(DEC, inst, "seed003", mode="literal", **kw)
            np.testing.assert_array_equal(r.solution.proc, old.proc)
            np.testing.assert_array_equal(r.solution.core, old.core)
            np.testing.assert_array_equal(r.solution.start, old.start)


def test_default_beats_by_class_and_single_processor_energy(networks):
    for name, inst in networks.items():
        d = solve(DEC, inst, "seed003")
        assert d.objective <= solve(DEC, inst, "by-class").objective, name
        assert d.objective < solve(DEC, inst, "seed003", mode="literal").objective, name
        e = inst.with_objective("energy")
        r = solve(DEC, e, "seed003")
        assert r.objective <= solve(DEC, e, "single").objective, name
        assert r.objective == pytest.approx(e.energy.min(axis=1).sum(), rel=1e-12)


# -- property tests --------------------------------------------------------------------------

random_specs = st.builds(
    lambda n, p, seed, ccr, cores: f"random:n={n},p={p},seed={seed},ccr={ccr},cores={cores}",
    st.integers(1, 25), st.integers(1, 4), st.integers(0, 10_000),
    st.sampled_from([0.0, 0.5, 3.0]), st.integers(1, 3))
objectives = st.sampled_from(["makespan", "energy", "weighted:1,0.5"])


@settings(max_examples=40)
@given(random_specs, objectives, st.floats(-1, 1), st.floats(1, 2), st.booleans(),
       st.sampled_from(["cost", "profit", "cost-profit"]), st.booleans(),
       st.sampled_from(["compiler", "program"]), st.booleans())
def test_refined_reports_the_evaluators_objective_of_a_feasible_schedule(
        spec, obj, th1, th2, fusion, fallback, insertion, order, lookahead):
    inst = load_instance(spec, SOC, objective=obj)
    sol, out, (span, energy) = seed003_refined(inst, th1, th2, fusion, fallback, insertion,
                                               order, lookahead)
    assert sum(out.values()) == inst.n_ops
    assert span == pytest.approx(check_schedule(inst, sol), rel=1e-12)
    assert (span, energy) == pytest.approx(makespan_energy(inst, sol), rel=1e-12)
    value, _ = evaluate(inst, sol)
    assert inst.objective(span, energy) == pytest.approx(value, rel=1e-12)


@settings(max_examples=40)
@given(random_specs, st.floats(-2, 2), st.floats(1, 3), st.booleans(),
       st.sampled_from(["cost", "profit", "cost-profit"]), st.booleans())
def test_literal_mode_equals_the_issue6_code(spec, th1, th2, fusion, fallback, insertion):
    inst = load_instance(spec, SOC)
    old, old_out = v1.seed003_assign(inst, th1, th2, fusion, fallback, insertion)
    r = solve(DEC, inst, "seed003", mode="literal", th1=th1, th2=th2, fusion=fusion,
              fallback=fallback, insertion=insertion)
    np.testing.assert_array_equal(r.solution.proc, old.proc)
    np.testing.assert_array_equal(r.solution.core, old.core)
    np.testing.assert_array_equal(r.solution.start, old.start)


@settings(max_examples=30)
@given(random_specs)
def test_energy_objective_puts_every_op_on_its_cheapest_processor(spec):
    inst = load_instance(spec, SOC, objective="energy")
    r = solve(DEC, inst, "seed003")
    assert r.objective == pytest.approx(inst.energy.min(axis=1).sum(), rel=1e-12, abs=1e-12)
    if inst.best_single is not None:
        assert r.objective <= inst.best_single[1] * (1 + 1e-12)


# -- the function library and loop fusion --------------------------------------------------

def test_library_is_keyed_by_kind_dtype_and_size():
    lib = FunctionLibrary.from_hardware(SOC)
    for name in ("tiny", *NETWORKS):
        w = get_network(name)
        x = expand_scalar_ops(w, fuse_loops=True)
        inst = from_workload(w, SOC, library=lib, fuse_loops=True)
        dtype = DTYPES[w.precision_bytes]
        assert {"shape", "param", "fuse"} <= set(inst.op_kind)
        for i, ly in enumerate(x.layers):
            key = (inst.op_kind[i], dtype, size_bucket(inst.work[i]))
            for p, proc in enumerate(SOC.processors):
                assert (*key, proc.name) in lib.entries, key  # an exact row, no wildcard
                assert inst.time[i, p] == pytest.approx(
                    processor_time_s(ly, proc, 1, control_roundtrip_s=inst.roundtrip[i, p]
                                     if ly.control_flow else 0.0), rel=1e-12)
    # the catch-all rows: a data type outside the table
    assert lib.lookup("conv", "tensor", "fp64", 1e5, "npu") == lib.entries[
        ("tensor", "*", "*", "npu")]


def test_library_rows_for_a_role_override_only_that_role(tmp_path):
    csv = tmp_path / "lib.csv"
    csv.write_text("kind,dtype,size_bucket,processor,launch_us,gops,pj_per_op\n"
                   "*,*,*,npu,10,1000,1\n*,*,*,gpu,5,100,2\n*,*,*,cpu,1,10,4\n"
                   "param,*,*,cpu,3,10,4\n")
    inst = load_instance("tiny", SOC, library=str(csv))
    p, s = inst.op_index("conv1.param"), inst.op_index("conv1.shape")
    assert inst.op_kind[p] == "param" and inst.op_kind[s] == "shape"
    assert inst.time[p, 2] == pytest.approx(3e-6 + 12 / 10e9)
    assert inst.time[s, 2] == pytest.approx(1e-6 + 16 / 10e9)


def test_loop_fusion_adds_the_scalar_ops_of_0047_by_hand():
    w = get_network("tiny-chain")
    assert fused_pairs(w) == {w.index("pool"): w.index("conv3")}
    conv3, pool = w.layers[w.index("conv3")], w.layers[w.index("pool")]
    b3, bp = tile_blocks(conv3, 1, 1, 500), tile_blocks(pool, 1, 1, 500)
    assert b3 > 1 and bp > 1
    plain = expand_scalar_ops(w, block_bytes=500)
    x = expand_scalar_ops(w, block_bytes=500, fuse_loops=True)
    names = [ly.name for ly in x.layers]
    # pool's loop merges into conv3's: pool.tile gives way to pool.fuse
    assert "pool.tile" not in names and "pool.fuse" in names and len(x) == len(plain)
    f = x.layers[names.index("pool.fuse")]
    assert f.kind is OpKind.SCALAR and f.ops == 4 + 2 * bp and not f.control_flow
    edges = {(x.layers[s].name, x.layers[d].name) for s, d, _ in x.edges}
    assert {("pool.shape", "pool.fuse"), ("conv3.tile", "pool.fuse"),
            ("pool.fuse", "pool"), ("pool.param", "pool"), ("conv3", "pool")} <= edges
    assert x.meta["scalar_roles"]["pool.fuse"] == "fuse"
    # a producer with two consumers is not fused (tiny: add3 → pool is, conv2 is not)
    t = get_network("tiny")
    assert fused_pairs(t) == {t.index("pool"): t.index("add3")}
    inst = load_instance("tiny-chain", SOC, fuse_loops=True, block_bytes=500)
    assert inst.op_kind[inst.op_index("pool.fuse")] == "fuse"


# -- the MILP's horizon and big-Ms -------------------------------------------------------------

def test_milp_horizon_is_the_incumbent_and_windows_are_valid():
    inst = load_instance("topcuoglu2002", SOC)
    name, sol, value = incumbent(inst, None)
    heft = solve(DEC, inst, "heft")
    name_w, _, value_w = incumbent(inst, heft.solution)
    assert value_w == min(value, 80.0) and (name_w == "warm start") == (value >= 80)
    assert makespan_cap(inst, 80.0) == pytest.approx(80.0)
    head, tail, tmin = start_windows(inst)
    opt = solve(DEC, inst, "cpsat", time_limit=30).solution  # the optimum, 73
    end = opt.end(inst)
    span = end.max()
    assert (opt.start >= head - 1e-9).all() and (end + tail <= span + 1e-9).all()
    m = build_milp(inst, 1.0, True, 80.0)
    serial = build_milp(inst, 1.0, True, None)
    assert m._horizon == 80 and serial._horizon == serial_upper_bound(inst)
    assert 0 < m._big_m_mean < serial._big_m_mean
    for big_m in ("incumbent", "serial"):
        r = solve(DEC, inst, "milp", big_m=big_m, time_limit=30)
        assert r.status is Status.OPTIMAL and r.objective == 73


def test_milp_cap_is_valid_for_weighted_and_energy_objectives():
    # the optimum of weighted:1,2 can be longer than the fastest schedule: the cap
    # (value − WE·E_min)/WT must leave it in
    for obj in ("weighted:1,2", "energy"):
        inst = load_instance("random:n=6,p=3,seed=3,ccr=1", SOC, objective=obj)
        bf = solve(DEC, inst, "bruteforce")
        r = solve(DEC, inst, "milp", time_limit=30)
        assert r.status is Status.OPTIMAL
        assert r.objective == pytest.approx(bf.objective, rel=1e-9)
        _, _, value = incumbent(inst, None)
        cap = makespan_cap(inst, value)
        assert makespan_energy(inst, bf.solution)[0] <= cap * (1 + 1e-9)
        # energy does not price the makespan: no cap below the serial bound
        assert (obj == "energy") == math.isclose(cap, serial_upper_bound(inst))
