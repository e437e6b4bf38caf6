"""NeuronGraph: construction, validation, contraction, flows, workload expansion, generators."""

from __future__ import annotations

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import given, settings

from chipsched.errors import InputError
from chipsched.neurongraph import (
    NeuronGraph,
    directed_flows,
    from_workload,
    layered_random,
    stencil,
)
from chipsched.workload import WorkloadBuilder


@st.composite
def graphs(draw, max_n: int = 12, max_w: int = 9):
    n = draw(st.integers(1, max_n))
    sizes = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    m = draw(st.integers(0, 3 * n))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                    st.integers(0, max_w)), min_size=m, max_size=m))
    u = [p[0] for p in pairs]
    v = [p[1] for p in pairs]
    w = [p[2] for p in pairs]
    return NeuronGraph.from_edges(sizes, u, v, w, name="h")


def _dense(sizes_n, u, v, w):
    a = np.zeros((sizes_n, sizes_n), np.int64)
    for x, y, z in zip(u, v, w, strict=True):
        if x != y:
            a[x, y] += z
            a[y, x] += z
    return a


def test_from_edges_merges_duplicates_and_drops_self_loops():
    g = NeuronGraph.from_edges([1, 2, 3], [0, 1, 1, 2], [1, 0, 1, 2], [4, 6, 0, 9])
    assert g.m == 1  # (0,1) twice summed, (1,1) zero-weight self-loop, (2,2) self-loop
    assert g.dense_weights()[0, 1] == 10 and g.total_weight == 10 and g.total_size == 6
    g.validate()


@settings(max_examples=60)
@given(graphs(), st.data())
def test_weighted_degree_and_read_rows_match_the_dense_matrix(g, data):
    """Review finding: weighted_degree crashed when the last vertex had no edge."""
    a = g.dense_weights()
    assert np.array_equal(g.weighted_degree(), a.sum(axis=1))
    verts = data.draw(st.lists(st.integers(0, g.n - 1), max_size=2 * g.n))
    ptr, idx, w = g.read_rows(verts)
    assert ptr.shape == (len(verts) + 1,) and ptr[0] == 0
    for i, v in enumerate(verts):
        nb, wt = g.neighbors(v)
        assert np.array_equal(idx[ptr[i]:ptr[i + 1]], nb)
        assert np.array_equal(w[ptr[i]:ptr[i + 1]], wt)


def test_weighted_degree_of_a_trailing_isolated_vertex():
    g = NeuronGraph.from_edges([1, 1, 1], [0], [1], [5])
    assert g.weighted_degree().tolist() == [5, 5, 0]


@settings(max_examples=60)
@given(graphs())
def test_csr_matches_the_edge_list_and_is_symmetric(g):
    g.validate()
    a = g.dense_weights()
    assert (a == a.T).all() and (np.diag(a) == 0).all()
    u, v, w = g.edges()
    assert (u < v).all() and int(w.sum()) == g.total_weight == int(a.sum()) // 2


@settings(max_examples=60)
@given(graphs(), st.data())
def test_contract_preserves_size_and_accounts_for_every_edge(g, data):
    labels = np.array(data.draw(st.lists(st.integers(0, 3), min_size=g.n, max_size=g.n)))
    q = g.contract(labels, 4)
    q.validate()
    assert q.total_size == g.total_size
    inner = sum(int(w) for a, b, w in zip(*g.edges(), strict=True) if labels[a] == labels[b])
    assert q.total_weight + inner == g.total_weight
    assert g.cut_weight(labels) == q.total_weight
    src, dst, w = directed_flows(g, labels, 4)
    assert int(w.sum()) == q.total_weight and (src != dst).all()
    # direction: u < v flows from label[u] to label[v]
    expect = {}
    for a, b, x in zip(*g.edges(), strict=True):
        if labels[a] != labels[b]:
            key = (int(labels[a]), int(labels[b]))
            expect[key] = expect.get(key, 0) + int(x)
    assert {(int(s), int(d)): int(x) for s, d, x in zip(src, dst, w, strict=True)} == expect


@settings(max_examples=60)
@given(graphs(), st.data())
def test_one_pass_and_two_pass_contraction_build_the_same_graph(g, data):
    """The one-walk contraction (small graphs) and the exact-allocation one (large graphs,
    ``ONE_PASS_MAX_ENTRIES``) give identical CSR arrays, entry order included."""
    from chipsched.neurongraph.graph import _contract

    labels = np.array(data.draw(st.lists(st.integers(0, 3), min_size=g.n, max_size=g.n)),
                      dtype=np.int64)
    one = _contract(g.indptr, g.indices, g.weights, g.sizes, labels, 4, True)
    two = _contract(g.indptr, g.indices, g.weights, g.sizes, labels, 4, False)
    for a, b in zip(one, two, strict=True):
        assert a.dtype == b.dtype and np.array_equal(a, b)


@pytest.mark.parametrize("u, v, w, msg", [
    ([0], [5], [1], "out of range"),
    ([0], [1], [-2], "negative weight -2"),
])
def test_bad_edges_are_one_line_errors(u, v, w, msg):
    with pytest.raises(InputError, match=msg) as e:
        NeuronGraph.from_edges([1, 1], u, v, w)
    assert "\n" not in str(e.value)


def test_negative_size_and_asymmetric_csr_are_rejected():
    with pytest.raises(InputError, match="negative size"):
        NeuronGraph.from_edges([1, -1], [], [], [])
    g = NeuronGraph(np.ones(3), [0, 1, 1, 1], [1], [5])  # 0->1 without 1->0
    with pytest.raises(InputError, match="one direction only"):
        g.validate()
    g = NeuronGraph(np.ones(2), [0, 1, 2], [1, 0], [5, 4])
    with pytest.raises(InputError, match="different weights"):
        g.validate()


def test_induced_subgraph():
    g = NeuronGraph.from_edges([1, 2, 3, 4], [0, 1, 2, 0], [1, 2, 3, 3], [1, 2, 3, 4])
    s = g.induced([3, 0, 1])
    s.validate()
    assert s.sizes.tolist() == [4, 1, 2]
    a = s.dense_weights()
    assert a[0, 1] == 4 and a[1, 2] == 1 and a[0, 2] == 0 and s.total_weight == 5


# ---------------------------------------------------------------------------------------
# workload expansion: hand-counted synapses


def test_valid_conv_synapses_equal_macs_and_grouping_keeps_totals():
    b = WorkloadBuilder("c")
    x = b.input("in", (3, 6, 6))
    b.conv("conv", x, K=4, kernel=3, pad=0)  # 4×4×4 outputs, 3·3·3 taps each
    w = b.build()
    g = from_workload(w, 1)
    assert g.n == 3 * 36 + 4 * 16
    assert g.total_weight == w.total_macs == 4 * 16 * 27
    g2 = from_workload(w, 2)  # channel groups {0,1},{2} in and {0,1},{2,3} out
    assert g2.n == 2 * 36 + 2 * 16 and g2.total_size == g.total_size
    assert g2.total_weight == g.total_weight
    # output vertex (kg=0, y=0, x=0) to input vertex (cg=0, 0, 0): 2 out × 2 in channels
    a = g2.dense_weights()
    assert a[0, 72] == 4 and a[36, 72] == 2  # input group 1 holds one channel


def test_padding_drops_out_of_plane_taps():
    b = WorkloadBuilder("p")
    x = b.input("in", (1, 3, 3))
    b.conv("conv", x, K=1, kernel=3)  # 'same' padding 1: 3×3 output
    g = from_workload(b.build())
    # taps inside the 3x3 plane: corners 4, edges 6, centre 9 → 4·4 + 4·6 + 9 = 49
    assert g.total_weight == 49


def test_depthwise_pool_fc_eltwise_concat():
    b = WorkloadBuilder("mix")
    x = b.input("in", (2, 4, 4))
    d = b.dwconv("dw", x, kernel=3, pad=0)            # 2×2×2, 9 synapses each
    p = b.pool("pool", x, kernel=2)                    # 2×2×2, 4 synapses each
    c = b.concat("cat", d, p)                          # 4×2×2, one synapse each
    s = b.add("add", c, c)                             # same input twice: 1 synapse each
    b.fc("fc", s, K=3, flatten=True)                   # 3 × 16 synapses
    g = from_workload(b.build())
    assert g.total_weight == 8 * 9 + 8 * 4 + 16 + 16 + 48
    assert g.total_size == 32 + 8 + 8 + 16 + 16 + 3


def test_unsupported_kind_and_bad_granularity():
    b = WorkloadBuilder("t")
    x = b.input("x", (4, 2, 1))
    b.softmax("sm", x)
    with pytest.raises(InputError, match="cannot be expanded into neurons"):
        from_workload(b.build())
    b = WorkloadBuilder("c")
    b.conv("conv", b.input("in", (1, 4, 4)), K=1, kernel=1)
    with pytest.raises(InputError, match="channels_per_vertex"):
        from_workload(b.build(), 0)


def test_edges_go_from_lower_to_higher_ids_in_layer_order():
    from chipsched.instances.networks import get_network

    g = from_workload(get_network("lenet5"), 1)
    assert g.n == 9118 and g.total_weight == 422824  # 416,520 MACs + 6,304 pool synapses
    g.validate()


# ---------------------------------------------------------------------------------------
# generators


def test_layered_random_is_deterministic_and_local():
    a = layered_random(4, 50, 5, window=10, seed=3)
    b = layered_random(4, 50, 5, window=10, seed=3)
    c = layered_random(4, 50, 5, window=10, seed=4)
    a.validate()
    assert a.m == 3 * 50 * 5 and a.n == 200
    assert np.array_equal(a.indices, b.indices) and not np.array_equal(a.indices, c.indices)
    u, v, _ = a.edges()
    assert ((v // 50) - (u // 50) == 1).all()  # consecutive layers only
    assert (np.abs((v % 50) - (u % 50)) < 10).all()  # inside the window
    with pytest.raises(InputError, match="exceeds the window"):
        layered_random(2, 10, 8, window=4)


def test_stencil_degrees():
    g = stencil(5, 4, 1, 1)
    g.validate()
    deg = g.degree().reshape(4, 5)
    assert deg[0, 0] == 3 and deg[1, 1] == 8 and deg[0, 2] == 5
    g3 = stencil(3, 3, 3, 1)
    assert g3.degree().max() == 26


@settings(max_examples=60)
@given(graphs(), st.data())
def test_induced_renumbers_whole_graphs_and_subsets(g, data):
    """``induced`` with every vertex once (the renumbering fast path) and with a subset
    gives the dense submatrix in the given order."""
    perm = np.array(data.draw(st.permutations(range(g.n))), dtype=np.int64)
    k = data.draw(st.integers(0, g.n))
    for verts in (perm, perm[:k]):
        h = g.induced(verts)
        h.validate()
        assert np.array_equal(h.dense_weights(), g.dense_weights()[np.ix_(verts, verts)])
        assert np.array_equal(h.sizes, g.sizes[verts])
