"""The full-space lower bound of tile_groups (``bound``): hand-computed on the worked
example, and never above any tree of brute-force enumerations or any SA result."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chipsched
from chipsched.formulations import tile_groups as F
from chipsched.heuristics import tile_groups as H
from chipsched.instances.chips import get_chip
from chipsched.problems.tile_groups import Infeasible, Instance
from chipsched.problems.tile_groups.bound import lower_bound
from chipsched.result import Status
from chipsched.solvers import SolveOptions
from chipsched.workload import Layer, OpKind, Workload
from tests.test_tile_groups_methods import _net, call, tiny_instances
from tests.test_tile_groups_model import _ab

REL = 1e-9


def test_hand_computed_bound_of_the_worked_example():
    """A (8 → 128 fc) → B (128 → 128 fc) on tiled-1x2, batch 2 (docs/tile_groups.md §3.7).
    Per layer, the least MAC + buffer + NoC energy is at sub-batch 2 (one run, weights
    read from the buffer once): A 0.036864 + 2.592 nJ, B 0.589824 + 33.792 nJ. NoC:
    weights delivered once (1,024 + 16,384 B), A's input (16 B) and B's output (256 B)
    over the controller link: 17,680 B·hops × 5.6 pJ = 99.008 nJ. DRAM: the same 17,680 B
    × 60 pJ = 1.0608 µJ, 17,680 B / 2.048 GB/s = 8.6328125 µs. Work: (2 + 32 ns) / 2 tiles
    = 17 ns; B alone 16 ns (2 samples on 2 tiles)."""
    inst = _ab()
    lb = lower_bound(inst)
    assert lb.mac_buffer_j == pytest.approx((0.036864 + 2.592 + 0.589824 + 33.792) * 1e-9,
                                            rel=1e-12)
    assert lb.noc_byte_hops == 17680 and lb.dram_bytes == 17680
    assert lb.noc_j == pytest.approx(99.008e-9, rel=1e-12)
    assert lb.dram_j == pytest.approx(1.0608e-6, rel=1e-12)
    assert lb.energy_j == pytest.approx(1.196818688e-6, rel=1e-12)
    assert lb.work_s == pytest.approx(17e-9, rel=1e-12)
    assert lb.longest_layer_s == pytest.approx(16e-9, rel=1e-12)
    assert lb.latency_s == pytest.approx(8.6328125e-6, rel=1e-12) and lb.latency_from == "DRAM"
    assert lb.objective == pytest.approx(1.196818688e-6 ** 2 * 8.6328125e-6, rel=1e-12)
    # the pipelined tree of the worked example is 3 % above it in energy (the A → B map
    # over the NoC, the buffer read twice per layer) and at it in latency
    t = inst.analyzer.totals(inst.tree("S(2)[ A B ]"))
    assert t.latency == pytest.approx(lb.latency_s, rel=1e-12)
    assert t.energy.total > lb.energy_j


def _check_tree(inst: Instance, lb, tree) -> bool:
    try:
        t = inst.analyzer.totals(tree)
    except Infeasible:
        return False
    assert t.energy.total >= lb.energy_j * (1 - REL), (tree, t.energy, lb)
    # each latency term bounds on its own; the two compute terms bound the simulated
    # compute alone (DRAM binds the latency of most small instances on SET's tiles)
    compute = t.root_runs * sum(s.compute for s in t.segments)
    for term in (lb.work_s, lb.longest_layer_s):
        assert compute >= term * (1 - REL), (tree, compute, lb)
    for term in (lb.work_s, lb.longest_layer_s, lb.dram_s):
        assert t.latency >= term * (1 - REL), (tree, t.latency, lb)
    assert t.dram_bytes >= (lb.dram_bytes - _out_bytes(inst, lb)) * (1 - REL)
    assert inst.objective(t.energy.total, t.latency) >= lb.objective * (1 - REL)
    return True


def _out_bytes(inst: Instance, lb) -> float:
    # the part of lb.dram_bytes that depends on the row picked (network outputs), bounded
    # below by zero: the rest (weights once, network inputs B times) every tree reads
    an = inst.analyzer
    fixed = sum(an.weight_bytes) + sum(an.ext) * an.prec * an.B
    return lb.dram_bytes - fixed


@st.composite
def heavy_instances(draw) -> Instance:
    """Convolutions with enough MACs per byte that the work over all tiles, not DRAM,
    can bind the latency."""
    n = draw(st.integers(1, 3))
    layers, edges = [], []
    for i in range(n):
        k, c = draw(st.sampled_from([16, 64])), draw(st.sampled_from([16, 64]))
        h = draw(st.sampled_from([8, 32]))
        layers.append(Layer(f"c{i}", OpKind.CONV, K=k, C=c, H=h, W=h, R=3, S=3,
                            in_elems=c * h * h, weight_elems=9 * k * c))
        if i:
            edges.append((i - 1, i, min(layers[i - 1].out_elems, layers[i].in_elems)))
    return Instance(Workload("heavy", tuple(layers), tuple(edges)),
                    get_chip(draw(st.sampled_from(["tiled-1x2", "tiled-2x2", "tiled-1x3"]))),
                    batch=draw(st.sampled_from([1, 2, 4])),
                    objective=draw(st.sampled_from(["latency", "energy", "e2d", "ed2"])))


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.one_of(tiny_instances(max_layers=3), heavy_instances()))
def test_no_tree_of_the_full_space_goes_below_the_bound(inst):
    lb = lower_bound(inst)
    trees, n = F.full_space(inst)
    feasible = sum(_check_tree(inst, lb, t) for t in trees)
    assert n > 0 and feasible > 0
    bf = call(F.bruteforce, inst, SolveOptions(threads=1))
    assert bf.objective >= lb.objective * (1 - REL)


@st.composite
def mid_instances(draw) -> Instance:
    n = draw(st.integers(4, 7))
    return Instance(_net(draw, n), get_chip(draw(st.sampled_from(["tiled-2x2", "tiled-2x3"]))),
                    batch=draw(st.sampled_from([1, 4, 8])),
                    objective=draw(st.sampled_from(["e2d", "ed2", "latency", "energy"])))


@settings(max_examples=10, derandomize=True, deadline=None)
@given(mid_instances())
def test_sa_and_its_start_stay_above_the_bound(inst):
    lb = lower_bound(inst)
    sa = call(H.sa, inst, SolveOptions(seed=1), beta=20, tries=2)
    assert sa.objective >= lb.objective * (1 - REL)
    assert _check_tree(inst, lb, sa.solution.tree)
    assert _check_tree(inst, lb, H.wrapped_start(inst)[0])


def test_bound_method_through_the_face():
    inst = chipsched.make_instance("tile_groups", "tiny", "edge-4x4", batch=4)
    r = chipsched.solve("tile_groups", inst, "bound")
    assert r.status is Status.BOUND_ONLY and r.solution is None and r.objective is None
    assert r.bound >= lower_bound(inst).objective * (1 - 1e-12)
    assert "latency ≥" in r.message
    assert r.metrics["solver"]["basic"]["latency"]["binding"]
    res = chipsched.compare("tile_groups", inst, ["bound", "ls", "sa"], seeds=(0,),
                            iterations=50)
    by = {x.method: x for x in res}
    for m in ("ls", "sa"):
        assert by[m].objective >= by["bound"].bound
