"""Spike-weighted traffic and the multicast objective (issue 11): the hand-computed
weights and packets, the packet graph that placements minimize, and the differential
truth of the multicast models (CP-SAT, MILP, branch and bound and brute force agree; no
heuristic beats them; every method reports the evaluator's value)."""

from __future__ import annotations

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from chipsched.api import solve
from chipsched.errors import InputError
from chipsched.heuristics.core_assignment.packets import packet_count, packet_refine
from chipsched.heuristics.core_assignment.placement import placement_traffic
from chipsched.instances.chips import get_chip
from chipsched.instances.core_assignment import load_instance, write_json
from chipsched.neurongraph import NeuronGraph, multicast_flows, multicast_quotient, spike_weighted
from chipsched.problems.core_assignment import Instance, evaluate, make_instance
from chipsched.result import Status
from tests.test_core_assignment_exact import tiny_instances
from tests.test_core_assignment_graph import graphs

D = "core_assignment"
HW = get_chip("neuro-8x8")


def _graph():
    # edges (u < v is the spike direction): 0→1 (2 synapses), 0→2 (3), 1→3 (4), 2→3 (5)
    return NeuronGraph.from_edges([1, 1, 1, 1], [0, 0, 1, 2], [1, 2, 3, 3], [2, 3, 4, 5])


def test_spike_weighted_edges_by_hand():
    g = spike_weighted(_graph(), [2, 0, 1, 7])
    u, v, w = g.edges()
    # 0→1: 2·2, 0→2: 3·2, 1→3: 4·0 (silent source: dropped), 2→3: 5·1
    got = list(zip(u.tolist(), v.tolist(), w.tolist(), strict=True))
    assert got == [(0, 1, 4), (0, 2, 6), (2, 3, 5)]


@pytest.mark.parametrize("spikes, field", [([1, 2, 3], "spikes"), ([1, 2.5, 3, 4], "spikes[1]"),
                                            ([1, -1, 0, 0], "spikes[1]"),
                                            (["a", "b", "c", "d"], "spikes")])
def test_bad_spikes_name_the_entry(spikes, field):
    with pytest.raises(InputError, match=field.replace("[", r"\[")):
        spike_weighted(_graph(), spikes)


def test_multicast_packets_by_hand():
    """Cores: vertices 0, 3 on core 0; 1, 2 on core 1 (1×2 mesh, one hop)."""
    inst = make_instance(_graph(), get_chip("neuro-1x2-k2"), spikes=[2, 0, 1, 7])
    _, m = evaluate(inst, [0, 1, 1, 0])
    # 0 fires 2 spikes to core 1 (targets 1 and 2 both there): 2 packets, not 4 synapse
    # crossings; 1 is silent; 2 fires 1 spike to core 0 (target 3)
    assert m["multicast_packets"] == 3 and m["multicast_traffic"] == 3
    # per synapse, spike-weighted: 0→1 4 + 0→2 6 + 2→3 5 = 15 crossing one hop
    assert m["traffic"] == 15 and m["cut_weight"] == 15
    q = inst.with_objective("multicast").quotient(np.array([0, 1, 1, 0]), 2)
    assert q.edges()[2].tolist() == [3] and q.sizes.tolist() == [2, 2]


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**20), st.integers(2, 12), st.integers(1, 4))
def test_placement_on_the_packet_graph_is_the_multicast_traffic(seed, n, groups):
    """For any grouping and group placement, Σ w·hops over the packet graph equals the
    evaluator's multicast traffic — so every placement method optimizes it exactly."""
    rng = np.random.default_rng(seed)
    m = 3 * n
    g = NeuronGraph.from_edges(np.ones(n, np.int64), rng.integers(0, n, m),
                               rng.integers(0, n, m), rng.integers(1, 5, m))
    spikes = rng.integers(0, 4, n)
    inst = make_instance(g, get_chip("neuro-3x3-k12"), objective="multicast",
                         spikes=spikes)
    group = rng.integers(0, groups, n)
    _, group = np.unique(group, return_inverse=True)
    G = int(group.max()) + 1
    gc = rng.permutation(9)[:G]
    q = multicast_quotient(inst.graph, group, G, inst.spikes)
    value, metrics = evaluate(inst, gc[group])
    assert placement_traffic(q, gc, 3) == value == metrics["multicast_traffic"]


@st.composite
def tiny_multicast(draw, forced: bool = False):
    """The exact tests' tiny instances, with random spike counts (0–4, silent neurons
    included) and the multicast objective."""
    base = draw(tiny_instances("multicast", forced))
    spikes = np.random.default_rng(draw(st.integers(0, 2**20))).integers(0, 5, base.n)
    return Instance(base.name, spike_weighted(base.graph, spikes), HW, base.rows, base.cols,
                    base.capacity, objective="multicast", spikes=spikes)


@settings(max_examples=12, deadline=None)
@given(tiny_multicast())
def test_multicast_models_agree_with_brute_force(inst):
    ref = solve(D, inst, "bruteforce")
    for m in ("cpsat", "milp"):
        r = solve(D, inst, m)
        assert r.status is ref.status, (m, r.status, ref.status, r.message)
        if ref.status is Status.OPTIMAL:
            assert r.objective == pytest.approx(ref.objective), m
            if not inst.forced_partition:
                assert r.metrics["solver"]["formulation"] == "multicast joint (d)"
    if ref.status is Status.OPTIMAL:
        for h in ("seed004", "seed004-plus", "tabu"):
            r = solve(D, inst, h, seed=1)
            assert r.objective >= ref.objective - 1e-9, h


@settings(max_examples=10, deadline=None)
@given(tiny_multicast(forced=True))
def test_multicast_placement_one_vertex_per_core(inst):
    ref = solve(D, inst, "bruteforce")
    for m in ("cpsat", "milp", "bnb-place", "cpsat-place"):
        r = solve(D, inst, m)
        assert r.status is ref.status, (m, r.message)
        if ref.status is Status.OPTIMAL:
            assert r.objective == pytest.approx(ref.objective), m


def test_json_spikes_round_trip(tmp_path):
    inst = make_instance(_graph(), get_chip("neuro-2x2-k2"), spikes=[2, 0, 1, 7],
                         objective="multicast")
    p = write_json(tmp_path / "s.json", inst.graph, 2, 2, 2, objective="multicast",
                   spikes=inst.spikes)
    back = load_instance(str(p), HW)
    assert back.objective.name == "multicast" and back.spikes.tolist() == [2, 0, 1, 7]
    assert back.graph.edges()[2].tolist() == inst.graph.edges()[2].tolist()
    sol = [0, 1, 1, 0]
    assert evaluate(back, sol) == evaluate(inst, sol)


def test_json_spikes_of_the_wrong_length(tmp_path):
    p = tmp_path / "bad.json"
    p.write_text('{"graph": {"sizes": [1, 1], "edges": [[0, 1, 2]]}, "spikes": [1],'
                 ' "cores": {"rows": 1, "cols": 2, "capacity": 1}}')
    with pytest.raises(InputError, match="spikes"):
        load_instance(str(p), HW)


def test_spikes_for_a_ready_instance_are_refused():
    inst = make_instance(_graph(), get_chip("neuro-2x2-k2"))
    with pytest.raises(InputError, match="spikes"):
        make_instance(inst, get_chip("neuro-2x2-k2"), spikes=[1, 1, 1, 1])


def test_json_writer_refuses_weights_that_are_not_spike_weighted(tmp_path):
    with pytest.raises(InputError, match="spikes"):
        write_json(tmp_path / "x.json", _graph(), 2, 2, 2, spikes=[3, 1, 1, 1])
    assert not (tmp_path / "x.json").exists()


# ---------------------------------------------------------------------------------------
# the (λ − 1) packet refinement of seed004-plus


def test_packet_refinement_by_hand():
    """Neuron 0 feeds 1 and 2 (u < v: 0 is the source); three parts of one vertex,
    room for two per part. 0 fires 3 spikes: 2 parts to reach = 6 packets; one move
    (any of the three vertices next to one of the others) leaves one part to reach."""
    g = NeuronGraph.from_edges([1, 1, 1], [0, 0], [1, 2], [5, 5])
    part = np.array([0, 1, 2], np.int64)
    assert packet_count(g, part, np.array([3, 1, 1])) == 6
    before, removed, moves = packet_refine(g, part, 3, 2, np.array([3, 1, 1]), seed=0)
    assert (before, removed, moves) == (6, 3, 1)
    assert packet_count(g, part, np.array([3, 1, 1])) == 3
    assert np.bincount(part, minlength=3).max() == 2
    # no room anywhere: nothing moves
    part = np.array([0, 1, 2], np.int64)
    assert packet_refine(g, part, 3, 1)[1:] == (0, 0) and part.tolist() == [0, 1, 2]


@st.composite
def partitioned(draw):
    g = draw(graphs(max_n=14))
    cap = draw(st.integers(max(1, int(g.sizes.max(initial=0))), 12))
    order = draw(st.permutations(range(g.n)))
    part = np.zeros(g.n, np.int64)
    p = load = 0
    for v in order:  # first fit in a random order: feasible, rarely good
        if load + g.sizes[v] > cap:
            p, load = p + 1, 0
        part[v] = p
        load += int(g.sizes[v])
    extra = draw(st.integers(0, 2))
    spikes = draw(st.one_of(st.none(), st.lists(st.integers(0, 4), min_size=g.n,
                                                 max_size=g.n).map(np.array)))
    return g, part, p + 1 + extra, cap, spikes


@settings(max_examples=150, deadline=None)
@given(partitioned(), st.integers(0, 3))
def test_packet_refinement_invariants(case, seed):
    """The packets it counts are the evaluator's (``multicast_flows``), what it reports
    removed is the true change, it never adds packets and no part exceeds the
    capacity."""
    g, part, k, cap, spikes = case
    total = int(multicast_flows(g, part, k, spikes)[2].sum())
    assert packet_count(g, part, spikes) == total
    before, removed, moves = packet_refine(g, part, k, cap, spikes, seed)
    after = int(multicast_flows(g, part, k, spikes)[2].sum())
    assert before == total and after == total - removed
    assert np.bincount(part, weights=g.sizes, minlength=k).max(initial=0) <= cap
    assert (moves > 0) == (removed > 0)


@settings(max_examples=60, deadline=None)
@given(partitioned(), st.integers(0, 3))
def test_packet_refinement_ends_in_a_local_optimum(case, seed):
    """Run to convergence, no single move into an occupied part with room removes a
    packet (checked by brute force with the evaluator's ``multicast_flows``)."""
    g, part, k, cap, spikes = case
    packet_refine(g, part, k, cap, spikes, seed, passes=10_000)

    def packets(p):
        return int(multicast_flows(g, p, k, spikes)[2].sum())

    now = packets(part)
    load = np.bincount(part, weights=g.sizes, minlength=k)
    for v in range(g.n):
        for b in np.unique(part):
            if b != part[v] and load[b] + g.sizes[v] <= cap:
                moved = part.copy()
                moved[v] = b
                assert packets(moved) >= now, (v, b)


def test_packet_refinement_refuses_bad_labels():
    g = NeuronGraph.from_edges([1] * 4, [0, 0, 1], [1, 2, 3])
    with pytest.raises(InputError, match=r"part\[1\]"):
        packet_refine(g, np.array([0, 5, 5, 1], np.int64), 2, 4)
    with pytest.raises(InputError, match="spikes"):
        packet_count(g, [0, 1, 1, 0], [3])
    with pytest.raises(InputError, match=r"spikes\[2\]"):
        packet_count(g, [0, 1, 1, 0], [3, 1, -1, 0])
    with pytest.raises(InputError, match="part"):
        packet_count(g, [0, 1, 1])


def test_seed004_plus_refines_packets_for_multicast():
    """Same seed, same partition up to the refinement: the packet variant (the default
    for ``multicast``) sends no more packets than the cut variant, and its reported
    objective is the evaluator's (checked by ``solve``)."""
    inst = load_instance("layered:layers=4,width=300,fanin=8,seed=1", HW,
                         objective="multicast")
    cut = solve(D, inst, "seed004-plus", seed=0, partition_objective="cut")
    auto = solve(D, inst, "seed004-plus", seed=0)
    st_ = auto.metrics["solver"]
    assert "packets_removed" not in cut.metrics["solver"]
    assert st_["packets_before_refinement"] == cut.metrics["multicast_packets"]
    assert auto.metrics["multicast_packets"] == \
        st_["packets_before_refinement"] - st_["packets_removed"]
    assert auto.metrics["multicast_packets"] < cut.metrics["multicast_packets"]
    # the traffic objective keeps the cut partition unless asked
    tr = inst.with_objective("traffic")
    assert "packets_removed" not in solve(D, tr, "seed004-plus", seed=0).metrics["solver"]
    assert "packets_removed" in solve(D, tr, "seed004-plus", seed=0,
                                      partition_objective="packets").metrics["solver"]
