"""region_split exact methods: CP-SAT, MILP, DP and brute force agree (differential truth)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chipsched
from chipsched.formulations.region_split.dynprog import dp_chiplet, dp_soc
from chipsched.formulations.region_split.enumeration import brute_chiplet, brute_soc
from chipsched.formulations.region_split.pruning import (
    best_counts,
    chiplet_options,
    lagrangian_cost,
    period_lower_bound,
)
from chipsched.instances.chips import get_chip
from chipsched.instances.region_split import random_chain, random_dag
from chipsched.problems.region_split import (
    chiplet_instance,
    chiplet_solution,
    chiplet_stage_table,
    combine,
    evaluate,
    soc_instance,
)
from chipsched.result import Status

REL = 1e-6
CHIPS = ["chiplet-1x2-n1-w8", "chiplet-1x3-n2-w4", "chiplet-2x2-n2-w8", "chiplet-2x2-n1-w16"]


@st.composite
def chiplet_cases(draw, max_items: int = 6):
    n = draw(st.integers(1, max_items))
    seed = draw(st.integers(0, 10**6))
    chain = draw(st.booleans())
    w = random_chain(n, seed) if chain else random_dag(n, seed, edge_prob=0.4)
    chip = get_chip(draw(st.sampled_from(CHIPS)))
    items = draw(st.sampled_from(["layers", "groups"]))
    obj = draw(st.sampled_from(["cost", "period", "latency", "sync_latency"]))
    M = chip.rows * chip.cols
    mr = draw(st.one_of(st.none(), st.integers(1, M)))
    coll = draw(st.sampled_from(["chain", "ring"]))
    return chiplet_instance(w, chip, objective=obj, items=items, max_regions=mr,
                            transfer=coll)


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=REL, abs_tol=1e-15)


@given(chiplet_cases())
@settings(max_examples=60)
def test_cpsat_milp_dp_bruteforce_agree_on_chiplets(inst):
    brute = chipsched.solve("region_split", inst, "bruteforce")
    dp = chipsched.solve("region_split", inst, "dp")
    cp = chipsched.solve("region_split", inst, "cpsat", time_limit=30)
    mi = chipsched.solve("region_split", inst, "milp", time_limit=30)
    for r in (dp, cp, mi):
        assert r.status is Status.OPTIMAL, (r.method, r.status)
        assert _close(r.objective, brute.objective), (r.method, r.objective, brute.objective)
        assert r.bound is not None and r.bound <= r.objective * (1 + REL)
    # the exact optimum is a true lower bound: the brute force enumerates every solution
    assert brute.metrics["solver"]["candidates"] >= 1


@given(st.integers(2, 9), st.integers(0, 10**6), st.sampled_from(CHIPS),
       st.sampled_from(["cost", "period", "latency", "sync_latency"]),
       st.sampled_from(["layers", "groups"]))
@settings(max_examples=80)
def test_dp_equals_bruteforce(n, seed, chip, obj, items):
    inst = chiplet_instance(random_dag(n, seed), get_chip(chip), objective=obj, items=items)
    v, regs, cnts = dp_chiplet(chiplet_stage_table(inst), inst.chiplets, obj, None)
    bv, _, _, _ = brute_chiplet(inst)
    assert _close(v, bv)
    assert _close(evaluate(inst, chiplet_solution(inst, regs, cnts))[0], v)


@given(chiplet_cases(max_items=8))
@settings(max_examples=40)
def test_pruning_keeps_an_optimum_and_bounds_hold(inst):
    """Every pruning rule of the CP-SAT/MILP preprocessing keeps an optimal solution, its
    UB is a feasible value and its LBs are below the optimum."""
    tab = chiplet_stage_table(inst)
    opt, _, _ = dp_chiplet(tab, inst.chiplets, inst.objective, inst.max_regions)
    opts = chiplet_options(inst, tab)
    assert opts.ub >= opt * (1 - 1e-12) and opts.lb <= opt * (1 + 1e-12)
    if inst.objective.name != "cost":
        # a proven period bound: the optimal period of any solution is ≥ it
        pv, _, _ = dp_chiplet(tab, inst.chiplets, "period", inst.max_regions)
        assert period_lower_bound(inst, tab) <= pv * (1 + 1e-12)
    # the DP restricted to the kept options still reaches the optimum
    import numpy as np

    restricted = np.full_like(tab, np.inf)
    restricted[opts.i, opts.j, opts.m - 1] = opts.c
    rv, _, _ = dp_chiplet(restricted, inst.chiplets, inst.objective, inst.max_regions)
    assert _close(rv, opt)


def test_lagrangian_bound_and_best_counts_by_hand():
    inst = chiplet_instance(random_dag(7, 3), get_chip("chiplet-2x2-n2-w8"), objective="cost")
    tab = chiplet_stage_table(inst)
    opt, regs, cnts = dp_chiplet(tab, 4, "cost")
    lb, lam, feas = lagrangian_cost(tab, 4)
    assert lb <= opt * (1 + 1e-12) and lam >= 0
    for r, c in feas:
        assert sum(c) <= 4 and combine("cost", [tab[a, b, m - 1] for (a, b), m
                                                 in zip(r, c, strict=True)]) >= opt * (1 - 1e-12)
    # for the optimal cut, the best counts reach the optimum
    c = best_counts(tab, regs, 4, "cost")
    assert _close(combine("cost", [tab[a, b, m - 1] for (a, b), m in zip(regs, c, strict=True)]),
                  opt)
    assert best_counts(tab, [(i, i) for i in range(5)], 4, "cost") is None  # 5 regions > 4


@st.composite
def soc_cases(draw):
    n = draw(st.integers(1, 8))
    w = random_dag(n, draw(st.integers(0, 10**6)), edge_prob=0.4)
    chip = get_chip(draw(st.sampled_from(["soc-npu-gpu-cpu", "soc-npu-gpu"])))
    obj = draw(st.sampled_from(["cost", "period", "latency", "sync_latency"]))
    P = len(chip.processors)
    loads = draw(st.lists(st.sampled_from([0.0, 0.3, 0.6, 0.9]), min_size=P, max_size=P))
    mr = draw(st.one_of(st.none(), st.integers(1, P)))
    return soc_instance(w, chip, objective=obj, loads=loads, max_regions=mr)


@given(soc_cases())
@settings(max_examples=50)
def test_cpsat_milp_dp_bruteforce_agree_on_processor_chains(inst):
    brute = chipsched.solve("region_split", inst, "bruteforce")
    for m in ("dp", "cpsat", "milp"):
        r = chipsched.solve("region_split", inst, m, time_limit=30)
        assert r.status is Status.OPTIMAL
        assert _close(r.objective, brute.objective), (m, r.objective, brute.objective)
        assert r.bound <= r.objective * (1 + REL)
    v, _, _ = dp_soc(inst)
    bv, _, _, _ = brute_soc(inst)
    assert _close(v, bv)


def test_warm_start_and_cbc_backend_agree():
    inst = chiplet_instance(random_dag(8, 11), get_chip("chiplet-2x2-n2-w8"), objective="period")
    dp = chipsched.solve("region_split", inst, "dp")
    seed = chipsched.solve("region_split", inst, "equal-compute")
    for kw in ({"warm_start": seed}, {"warm_start": seed, "milp_solver": "cbc"}):
        for m in ("cpsat", "milp"):
            r = chipsched.solve("region_split", inst, m, **kw)
            assert r.status is Status.OPTIMAL and _close(r.objective, dp.objective)
    soc = soc_instance(random_dag(9, 5), get_chip("soc-npu-gpu-cpu"), objective="sync_latency")
    dps = chipsched.solve("region_split", soc, "dp")
    for m in ("cpsat", "milp"):
        r = chipsched.solve("region_split", soc, m, milp_solver="cbc",
                            warm_start=chipsched.solve("region_split", soc, "equal-layers"))
        assert _close(r.objective, dps.objective)


def test_bruteforce_refuses_large_instances():
    inst = chipsched.make_instance("region_split", "resnet50", "chiplet-4x4")
    with pytest.raises(chipsched.InputError, match="too large for brute force"):
        chipsched.solve("region_split", inst, "bruteforce")


def test_exact_on_a_real_network_all_three_agree():
    inst = chipsched.make_instance("region_split", "mobilenet-v2", "chiplet-2x2",
                                   objective="period")
    res = [chipsched.solve("region_split", inst, m, time_limit=60) for m in
           ("dp", "cpsat", "milp")]
    assert all(r.status is Status.OPTIMAL for r in res)
    assert _close(res[0].objective, res[1].objective) and _close(res[0].objective,
                                                                 res[2].objective)
    assert sum(res[0].solution.counts) <= 4


@pytest.mark.parametrize("objective", ["cost", "period", "latency", "sync_latency"])
def test_medium_instances_where_pruning_bites(objective):
    """14–20 items on 9 sub-chiplets: most options are pruned, the optimum must survive."""
    for seed, n in ((1, 14), (2, 20)):
        inst = chiplet_instance(random_dag(n, seed, edge_prob=0.2),
                                get_chip("chiplet-3x3-n2-w8"), objective=objective,
                                items="layers")
        dp = chipsched.solve("region_split", inst, "dp")
        for m in ("cpsat", "milp"):
            r = chipsched.solve("region_split", inst, m, time_limit=60)
            assert r.status is Status.OPTIMAL and _close(r.objective, dp.objective), \
                (m, r.objective, dp.objective)
            st = r.metrics["solver"]
            assert st["options"] < st["options_total"]


@pytest.mark.parametrize("objective", ["period", "latency", "sync_latency"])
def test_processor_chain_real_network_all_agree(objective):
    inst = chipsched.make_instance("region_split", "resnet50", "soc-npu-gpu-cpu",
                                   objective=objective, loads=[0.3, 0.5, 0.1])
    dp = chipsched.solve("region_split", inst, "dp")
    for m in ("cpsat", "milp"):
        r = chipsched.solve("region_split", inst, m, time_limit=60)
        assert r.status is Status.OPTIMAL and _close(r.objective, dp.objective)
        assert r.bound <= dp.objective * (1 + REL)


@pytest.mark.parametrize("method", ["cpsat", "milp"])
def test_soc_models_out_of_time_report_their_start(method):
    """Review finding: the processor-chain models stopped without a solution reported none
    although they were handed a warm start (the chiplet models fall back on the pruning
    step's incumbent); they now report their start with the solver's bound."""
    from chipsched.api import make_instance, solve

    inst = make_instance("region_split", "tiny", "soc-npu-gpu-cpu")
    warm = solve("region_split", inst, "seed001-threshold")
    r = solve("region_split", inst, method, time_limit=1e-3, warm_start=warm, threads=1)
    assert r.solution is not None and r.objective <= warm.objective
    assert r.bound is None or r.bound <= r.objective
