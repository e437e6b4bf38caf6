"""Seed 000, steps 1–3 (docs/region_split.md): G, chain reduction G', pipeline groups,
group graph S."""

from __future__ import annotations

from hypothesis import given

from chipsched.graph import (
    computation_graph,
    group_graph,
    node_depths,
    pipeline_groups,
    reduce_chains,
    seed000_group_graph,
)
from chipsched.instances.networks import get_network
from chipsched.workload import Layer, OpKind, Workload
from tests.conftest import random_dags


def _wl(names: str, edges: list[tuple[str, str]]) -> Workload:
    """Layers named by letters; layer i has K = i+1 so every output size differs."""
    layers = tuple(Layer(n, OpKind.CONV, K=i + 1, C=1, H=10, W=10, in_elems=100)
                   for i, n in enumerate(names))
    idx = {n: i for i, n in enumerate(names)}
    return Workload("hand", layers, tuple(sorted(
        (idx[a], idx[b], layers[idx[a]].out_elems) for a, b in edges)))


# a → b → c → d → {e, f} → g → h
HAND = _wl("abcdefgh", [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("d", "f"),
                        ("e", "g"), ("f", "g"), ("g", "h")])


def test_step1_computation_graph_attributes():
    g = computation_graph(HAND)
    assert g.in_degree == (0, 1, 1, 1, 1, 1, 2, 1)
    assert g.out_degree == (1, 1, 1, 2, 1, 1, 1, 0)
    assert g.compute == tuple(float(ly.work) for ly in HAND.layers)
    # edge weight = data volume of the source operator's output
    assert (3, 4, float(HAND.layers[3].out_elems)) in g.edges


def test_step2_merges_runs_of_in1_out1_nodes():
    g2 = reduce_chains(computation_graph(HAND))
    # b and c have in = out = 1 and are adjacent: merged; e, f are simple but their
    # successor g has in-degree 2, so they stay
    assert g2.members == ((0,), (1, 2), (3,), (4,), (5,), (6,), (7,))
    assert g2.compute[1] == HAND.layers[1].work + HAND.layers[2].work
    assert sum(g2.compute) == sum(ly.work for ly in HAND.layers)
    assert (1, 2, float(HAND.layers[2].out_elems)) in g2.edges  # edge out of the run: c's


def test_step2_long_run_collapses_to_one_node():
    w = _wl("abcde", [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")])
    g2 = reduce_chains(computation_graph(w))
    assert g2.members == ((0,), (1, 2, 3), (4,))
    assert g2.edges == ((0, 1, float(w.layers[0].out_elems)),
                        (1, 2, float(w.layers[3].out_elems)))


def test_step3_groups_and_edge_reduction():
    g2 = reduce_chains(computation_graph(HAND))
    groups = pipeline_groups(g2)
    assert groups == [[0], [1], [2], [3, 4], [5], [6]]
    s = group_graph(g2, groups)
    out = [float(ly.out_elems) for ly in HAND.layers]
    # d → e and d → f: same source node, same group → kept once (rule 3.3.1);
    # e → g and f → g: different sources → summed (rule 3.3.3)
    assert s.edges == ((0, 1, out[0]), (1, 2, out[2]), (2, 3, out[3]),
                       (3, 4, out[4] + out[5]), (4, 5, out[6]))
    assert s.compute[3] == HAND.layers[4].work + HAND.layers[5].work
    assert s.layers[1] == (1, 2)
    assert s.data_volume == sum(w for _, _, w in s.edges)


def test_skip_edge_between_groups():
    # a → b → c and a → c: c depends on a directly and through b
    w = _wl("abc", [("a", "b"), ("b", "c"), ("a", "c")])
    s = seed000_group_graph(w)
    assert [list(g) for g in s.groups] == [[0], [1], [2]]
    out = [float(ly.out_elems) for ly in w.layers]
    assert s.edges == ((0, 1, out[0]), (0, 2, out[0]), (1, 2, out[1]))


@given(random_dags(max_nodes=14))
def test_properties_on_random_dags(w):
    g = computation_graph(w)
    g2 = reduce_chains(g)
    # members partition the layers; compute is conserved
    assert sorted(x for m in g2.members for x in m) == list(range(len(w)))
    assert abs(sum(g2.compute) - sum(g.compute)) < 1e-6 * max(1.0, sum(g.compute))
    # nothing left to merge: no edge joins two nodes with in = out = 1
    ind, outd = g2.in_degree, g2.out_degree
    simple = [ind[i] == 1 and outd[i] == 1 for i in range(len(g2))]
    assert not any(simple[u] and simple[v] for u, v, _ in g2.edges)
    groups = pipeline_groups(g2)
    gid = {v: p for p, grp in enumerate(groups) for v in grp}
    # no dependency inside a group; every edge goes to a deeper group
    assert all(gid[u] < gid[v] for u, v, _ in g2.edges)
    depth = node_depths(g2)
    assert len(groups) == max(depth) + 1
    s = group_graph(g2, groups)
    # an S edge (p, q) weighs one copy of each source node's tensor sent to group q
    for p, q, wt in s.edges:
        srcs = {u for u, v, _ in g2.edges if gid[u] == p and gid[v] == q}
        expect = sum(next(x for a, b, x in sorted(g2.edges) if a == u and gid[b] == q)
                     for u in srcs)
        assert abs(wt - expect) < 1e-9


def test_real_networks():
    for name, chainlike in (("vgg16", True), ("resnet50", False), ("googlenet", False)):
        w = get_network(name)
        s = seed000_group_graph(w)
        assert abs(sum(s.compute) - sum(ly.work for ly in w.layers)) < 1
        assert sorted(x for ls in s.layers for x in ls) == list(range(len(w)))
        if chainlike:  # a chain reduces to source, one merged run, sink
            assert len(s) == 3
