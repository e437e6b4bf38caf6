"""region_split model: the transfer formula, group costs, the evaluator (hand-computed),
tables vs the direct path, solution validation, load traces, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chipsched.errors import InputError
from chipsched.graph import OpGraph
from chipsched.hardware import Hardware
from chipsched.instances.chips import chiplet_grid, get_chip
from chipsched.instances.region_split import load_instance, random_dag
from chipsched.problems.region_split import (
    ChipletSolution,
    LoadTrace,
    TransferModel,
    apportion,
    chiplet_instance,
    chiplet_solution,
    chiplet_stage,
    chiplet_stage_table,
    evaluate,
    group_times,
    lpt_makespan,
    serpentine_order,
    serpentine_placement,
    soc_instance,
    soc_solution,
    soc_stage,
    soc_tables,
)
from chipsched.workload import Layer, OpKind, Workload

# ---------------------------------------------------------------------------------------
# hand instance: 1×3 sub-chiplets of one 4×4 systolic NPU, 1 GB/s die-to-die, 10 ns/hop


def hand_chip() -> Hardware:
    d = chiplet_grid(1, 3, npus=1, w=4)
    d["noc"] = {"link_bandwidth_gb_s": 1.0, "hop_latency_cycles": 10.0,
                "hop_energy_pj_per_bit": 1.0}
    return Hardware.from_dict(d)


def hand_workload() -> Workload:
    # a: 1×3·3×2 product (fits the 4×4 array); b: 1×2·2×64 (n > w); c: 1×64·64×2
    layers = (Layer("a", OpKind.FC, K=2, C=3, in_elems=3, weight_elems=6),
              Layer("b", OpKind.FC, K=64, C=2, in_elems=2, weight_elems=128),
              Layer("c", OpKind.FC, K=2, C=64, in_elems=64, weight_elems=128))
    return Workload("hand", layers, ((0, 1, 2), (1, 2, 64)))


def test_transfer_formula_chain_by_hand():
    tm = TransferModel(hop_latency_s=1e-8, link_bytes_per_s=1e9, intra_bytes_per_s=2e9, npus=2)
    # C = (M−1)(α + d/B) + (N−1)·d/B_intra = 2·(10 ns + 1 µs) + 1000/2e9
    assert tm.within(3, 1000) == pytest.approx(2 * (1e-8 + 1e-6) + 5e-7, rel=1e-12)
    assert tm.within(1, 1000) == pytest.approx(5e-7, rel=1e-12)  # on-die broadcast only
    assert tm.within(4, 0) == 0.0
    assert tm.between(500) == pytest.approx(1e-8 + 5e-7, rel=1e-12)
    assert tm.between(0) == 0.0
    # vectorized over m and d
    got = tm.within(np.array([1, 2, 3]), np.array([0.0, 1000.0, 1000.0]))
    assert got.tolist() == pytest.approx([0.0, 1e-8 + 1e-6 + 5e-7, 2.02e-6 + 5e-7], rel=1e-12)


def test_transfer_formula_ring_by_hand():
    tm = TransferModel(1e-8, 1e9, 2e9, 2, collective="ring")
    # (M−1)(α + d/(M·B)) + (N−1)·d/(N·B_intra) = 2·(10 ns + 333.3 ns) + 250 ns
    assert tm.within(3, 1000) == pytest.approx(2 * (1e-8 + 1000 / 3e9) + 2.5e-7, rel=1e-12)
    with pytest.raises(InputError, match="collective"):
        TransferModel(1e-8, 1e9, 2e9, 2, collective="tree")


def test_transfer_model_of_chiplet_preset():
    hw = get_chip("chiplet-4x4-n8-w16")
    tm = TransferModel.of_chip(hw)
    assert tm.npus == 8 and tm.link_bytes_per_s == 25e9 and tm.intra_bytes_per_s == 128e9
    assert tm.hop_latency_s == pytest.approx(20e-9)  # 20 cycles at 1 GHz


def test_apportion_by_hand():
    assert apportion([3, 1], 4) == [3, 1]
    assert apportion([1, 1, 1], 4) == [2, 1, 1]  # the remainder to the first largest quota
    assert apportion([10, 0.1], 3) == [2, 1]  # at least one NPU each
    assert apportion([1, 100], 2) == [1, 1]
    assert apportion([0, 0], 5) == [3, 2]  # no compute: equal quotas
    with pytest.raises(ValueError):
        apportion([1, 1, 1], 2)


@given(st.lists(st.floats(0, 1e6), min_size=1, max_size=8), st.integers(1, 40))
def test_apportion_invariants(comp, extra):
    units = len(comp) + extra - 1
    u = apportion(comp, units)
    assert sum(u) == units and min(u) >= 1


def test_lpt_by_hand():
    # 5 → A, 4 → B, 3 → B (7), 3 → A (8)
    assert lpt_makespan([5, 4, 3, 3], 2) == 8
    assert lpt_makespan([2, 2, 2], 3) == 2


def test_group_times_proportional_and_time_shared():
    g = OpGraph(compute=(1.0, 3.0, 1.0), members=((0,), (1,), (2,)),
                edges=((0, 1, 1.0), (0, 2, 1.0)))
    cyc = np.array([[8.0, 6, 5, 4, 4, 4], [30, 20, 15, 12, 10, 9], [9, 7, 6, 6, 6, 6]])
    out = group_times(g, [[0], [1, 2]], cyc, 1e9, npus=2, max_chiplets=3)
    # group 0 alone: all 2m NPUs
    assert out[0].tolist() == pytest.approx([6e-9, 4e-9, 4e-9])
    # group 1, m = 1: 2 NPUs split 3:1 → 1 + 1 → max(30, 9)
    # m = 2: 4 NPUs → 3 + 1 → max(15, 9); m = 3: 6 → quotas 4.5, 1.5 → 5 + 1 → max(10, 9)
    assert out[1].tolist() == pytest.approx([30e-9, 15e-9, 10e-9])
    # three operators, one NPU (npus=1, m=1): time-shared, back to back: 8 + 30 + 9;
    # two NPUs (npus=2): LPT — 30 on one, 9 + 8 on the other
    out = group_times(g, [[0, 1, 2]], cyc, 1e9, npus=1, max_chiplets=1)
    assert out[0, 0] == pytest.approx(47e-9)
    out = group_times(g, [[0, 1, 2]], cyc, 1e9, npus=2, max_chiplets=1)
    assert out[0, 0] == pytest.approx(30e-9)


def test_group_costs_use_both_systolic_branches():
    inst = chiplet_instance(hand_workload(), hand_chip(), items="layers")
    # a: m=1 ≤ 4 and n=2 ≤ 4 → m+k+n−1 = 5; on 2 NPUs (n=1 each) 1+3+1−1 = 4
    # b: n = 64 > 4 → 1·2·64/16 + 2·3 = 14; on 2 NPUs 1·2·32/16 + 6 = 10; on 3: 2·22/16+6
    # c: 1+64+2−1 = 66; on 2 NPUs 1+64+1−1 = 65
    want = np.array([[5, 4, 4], [14, 10, 8.75], [66, 65, 65]]) * 1e-9
    np.testing.assert_allclose(inst.group_time, want, rtol=1e-12)


def test_evaluate_hand_computed():
    inst = chiplet_instance(hand_workload(), hand_chip(), items="layers")
    sol = chiplet_solution(inst, [(0, 0), (1, 2)], [1, 2])
    obj, met = evaluate(inst, sol)
    # region 0: D = 5 ns; C = 0 (no inner edge); T = 10 ns + 2 B / 1 GB/s = 12 ns
    # region 1: D = 10 + 65 ns; C = (2−1)·(10 ns + 64 ns) = 74 ns; T = 0
    assert met["stage_s"] == pytest.approx([17e-9, 149e-9], rel=1e-12)
    assert met["compute_s"] == pytest.approx([5e-9, 75e-9], rel=1e-12)
    assert met["transfer_within_s"] == pytest.approx([0.0, 74e-9], rel=1e-12)
    assert met["transfer_out_s"] == pytest.approx([12e-9, 0.0], rel=1e-12)
    assert obj == pytest.approx(149e-9) and inst.objective.name == "period"
    assert met["cost_s"] == pytest.approx(166e-9) and met["latency_s"] == pytest.approx(166e-9)
    assert met["sync_latency_s"] == pytest.approx(298e-9)  # R · period: 2 × 149 ns
    # placement 0 | 1 2: edge a→b (2 B) spread over 0→1 (1 hop) and 0→2 (2 hops): 3 B·hops;
    # the chain broadcast of region 1 (64 B, m = 2) forwards 32 B each way: 64 B·hops
    assert met["d2d_byte_hops"] == pytest.approx(67.0)
    assert met["d2d_max_link_bytes"] == pytest.approx(33.0)
    assert met["d2d_energy_j"] == pytest.approx(67 * 8 * 1e-12)
    for objective, want in (("cost", 166e-9), ("latency", 166e-9), ("sync_latency", 298e-9)):
        other = chiplet_instance(hand_workload(), hand_chip(), items="layers",
                                 objective=objective)
        assert evaluate(other, sol)[0] == pytest.approx(want, rel=1e-12)


def test_serpentine_by_hand():
    assert serpentine_order(2, 3) == [0, 1, 2, 5, 4, 3]
    assert serpentine_order(3, 2) == [0, 1, 3, 2, 4, 5]
    # a region that does not fit the rest of the row folds into the next row, reversed
    assert serpentine_placement(2, 3, [2, 3]) == ((0, 1), (2, 5, 4))
    with pytest.raises(InputError, match="counts"):
        serpentine_placement(2, 2, [3, 2])


def _chip_tiny(r=2, c=2, n=2, w=8):
    return get_chip(f"chiplet-{r}x{c}-n{n}-w{w}")


@given(st.integers(1, 8), st.integers(0, 10_000), st.sampled_from(["groups", "layers"]),
       st.sampled_from(["chain", "ring"]))
@settings(max_examples=25)
def test_stage_table_equals_direct_path(n, seed, items, collective):
    inst = chiplet_instance(random_dag(n, seed), _chip_tiny(), items=items, transfer=collective)
    tab = chiplet_stage_table(inst)
    N, M = inst.n_items, inst.chiplets
    for i in range(N):
        for j in range(N):
            for m in range(1, M + 1):
                if j < i:
                    assert tab[i, j, m - 1] == math.inf
                else:
                    assert tab[i, j, m - 1] == pytest.approx(chiplet_stage(inst, i, j, m),
                                                             rel=1e-12, abs=1e-18)


def test_soc_evaluate_hand_computed():
    layers = (Layer("big", OpKind.FC, K=1000, C=1000, in_elems=1000, weight_elems=10**6),
              Layer("small", OpKind.FC, K=10, C=1000, in_elems=1000, weight_elems=10**4))
    w = Workload("two", layers, ((0, 1, 1000),))
    inst = soc_instance(w, get_chip("soc-npu-gpu"))
    sol = soc_solution([(0, 0), (1, 1)], [0, 1])
    obj, met = evaluate(inst, sol)
    # npu: 20 µs launch + 1e6 MAC / 2000 G/s; handover 5 µs + 1000 B / 25 GB/s
    # gpu: 10 µs launch + 1e4 / 500 G/s
    s0 = 20e-6 + 0.5e-6 + 5e-6 + 40e-9
    s1 = 10e-6 + 20e-9
    assert met["stage_s"] == pytest.approx([s0, s1], rel=1e-12)
    assert obj == pytest.approx(s0) and met["processors"] == ["npu", "gpu"]
    assert soc_stage(inst, 0, 0, 0, 1) == pytest.approx(s0)
    pre, hand = soc_tables(inst)
    assert hand[0, 0, 1] == pytest.approx(5.04e-6) and pre.seg(0, 1, 1) == pytest.approx(22.02e-6)
    loaded = inst.with_loads([0.5, 0.0])
    # a background load of 0.5 halves the NPU's speed; the handover is not slowed
    assert evaluate(loaded, sol)[1]["stage_s"][0] == pytest.approx(41e-6 + 5.04e-6)
    # both layers on the GPU: (10 µs + 2 µs) + (10 µs + 20 ns), no handover
    one = soc_solution([(0, 1)], [1])
    assert evaluate(inst, one)[0] == pytest.approx(22.02e-6, rel=1e-12)


def test_solution_validation():
    inst = chiplet_instance(hand_workload(), hand_chip(), items="layers")
    bad = [
        (ChipletSolution(((0, 0), (2, 2)), (1, 1)), "contiguous"),
        (ChipletSolution(((0, 1),), (1,)), "cover"),
        (ChipletSolution(((0, 0), (1, 2)), (2, 2)), "sub-chiplets"),
        (ChipletSolution(((0, 0), (1, 2)), (1,)), "counts"),
        (ChipletSolution(((0, 0), (1, 2)), (0, 1)), "at least one"),
        (ChipletSolution(((0, 0), (1, 2)), (1, 1), ((0,), (0,))), "used twice"),
        (ChipletSolution(((0, 0), (1, 2)), (1, 1), ((0,), (7,))), "off the grid"),
        (ChipletSolution(((0, 0), (1, 2)), (1, 1), ((0,), (1, 2))), "nodes"),
    ]
    for sol, frag in bad:
        with pytest.raises(InputError, match=frag):
            evaluate(inst, sol)
    soc = load_instance("tiny", get_chip("soc-npu-gpu-cpu"))
    with pytest.raises(InputError, match="increase"):
        evaluate(soc, soc_solution([(0, 2), (3, 6)], [1, 0]))
    with pytest.raises(InputError, match="processors"):
        evaluate(soc, soc_solution([(0, 2), (3, 6)], [0]))


def test_region_limit_in_evaluation():
    inst = chiplet_instance(hand_workload(), hand_chip(), items="layers", max_regions=2)
    with pytest.raises(InputError, match="max_regions"):
        evaluate(inst, chiplet_solution(inst, [(0, 0), (1, 1), (2, 2)], [1, 1, 1]))


def test_load_trace_integrates_speed_over_phases():
    tr = LoadTrace(np.array([0.0, 1.0]), np.array([[0.5], [0.0]]))
    # 0.5 s of work done in the first second at half speed, the rest at full speed
    assert tr.finish_time(0, 0.0, 1.0) == pytest.approx(1.5)
    assert tr.finish_time(0, 0.5, 0.1) == pytest.approx(0.7)
    assert tr.finish_time(0, 2.0, 0.3) == pytest.approx(2.3)
    assert tr.phase(0.99) == 0 and tr.phase(1.0) == 1 and tr.final == (0.0,)
    for times, loads, frag in (([0.5], [[0.1]], "times"), ([0, 1], [[0.1]], "rows"),
                               ([0], [[1.0]], "loads")):
        with pytest.raises(InputError, match=frag):
            LoadTrace(np.array(times, dtype=float), np.array(loads))


def test_bad_instances_name_the_field():
    hw = get_chip("chiplet-2x2")
    w = random_dag(5, 0)
    cases = [
        (lambda: chiplet_instance(w, hw, max_regions=5), "max_regions", "at most 4"),
        (lambda: chiplet_instance(w, hw, objective="energy"), "objective", "period"),
        (lambda: chiplet_instance(w, hw, batch=0), "batch", "in 1..65,536"),
        (lambda: chiplet_instance(w, get_chip("soc-npu-gpu")), "chip", "chiplet"),
        (lambda: soc_instance(w, get_chip("soc-npu-gpu"), chain=[]), "chain", "length 0"),
        (lambda: soc_instance(w, get_chip("soc-npu-gpu"), thresholds=[-1e-3]),
         "thresholds", "≥ 0"),
        (lambda: soc_instance(w, get_chip("soc-npu-gpu"), thresholds=[1, 2]), "thresholds",
         "give 1"),
        (lambda: soc_instance(w, get_chip("soc-npu-gpu"), max_regions=3), "max_regions",
         "at most 2"),
        (lambda: soc_instance(w, get_chip("soc-npu-gpu"), loads=[0.2, 1.0]), "loads",
         "[0, 1)"),
        (lambda: soc_instance(w, get_chip("soc-npu-gpu"), chain=["gpu", "gpu"]), "chain",
         "twice"),
        (lambda: soc_instance(w, hw), "chip", "processor chain"),
        (lambda: load_instance(w, get_chip("soc-npu-gpu"), items="layers"), "items",
         "chiplet grids only"),
    ]
    for make, field, frag in cases:
        with pytest.raises(InputError) as exc:
            make()
        msg = str(exc.value)
        assert field in msg and frag in msg and "\n" not in msg, msg


def test_network_with_a_cycle_is_rejected(tmp_path):
    f = tmp_path / "cyc.yaml"
    f.write_text("name: cyc\nlayers:\n"
                 "  - {name: a, kind: fc, K: 4, C: 4, inputs: [b]}\n"
                 "  - {name: b, kind: fc, K: 4, C: 4, inputs: [a]}\n")
    with pytest.raises(InputError, match="cycle"):
        load_instance(str(f), get_chip("chiplet-2x2"))


def test_instance_file_options_and_overrides(tmp_path):
    f = tmp_path / "inst.yaml"
    f.write_text("region_split:\n  network: tiny\n  objective: cost\n  max_regions: 2\n"
                 "  items: layers\n")
    inst = load_instance(str(f), get_chip("chiplet-2x2"))
    assert inst.objective.name == "cost" and inst.max_regions == 2 and inst.items == "layers"
    assert load_instance(str(f), get_chip("chiplet-2x2"), objective="period").objective.name \
        == "period"
    g = tmp_path / "soc.yaml"
    g.write_text("region_split:\n  network: tiny\n  chain: [npu, gpu]\n"
                 "  trace: {times: [0, 1], loads: [[0, 0], [0.5, 0]]}\n")
    soc = load_instance(str(g), get_chip("soc-npu-gpu-cpu"))
    assert soc.chain == (0, 1) and soc.loads == (0.5, 0.0) and soc.trace is not None
    h = tmp_path / "bad.yaml"
    h.write_text("region_split:\n  network: tiny\n  colour: red\n")
    with pytest.raises(InputError, match="colour"):
        load_instance(str(h), get_chip("chiplet-2x2"))
