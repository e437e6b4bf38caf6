"""Seed 004's steps one by one, the improved variant, the peers, and the streaming
coarsening; invariants as hypothesis properties."""

from __future__ import annotations

import hypothesis.strategies as st
import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings

from chipsched.errors import InputError
from chipsched.heuristics.core_assignment import (
    coarsen,
    coarsen_level,
    force_directed,
    greedy_bisection,
    heaviest_neighbors,
    match_heavy_edges,
    pack_groups,
    place_recursive_bisection,
    recursive_bisection,
    refine,
    seed004_mapping,
    seed004_partition,
    target_rectangle,
    uncoarsen,
)
from chipsched.heuristics.core_assignment.improved import fm_refine, plus_partition
from chipsched.heuristics.core_assignment.peers import (
    kahip_partition,
    metis_partition,
    metis_ufactor,
    repair_capacity,
)
from chipsched.heuristics.core_assignment.placement import (
    placement_traffic,
    usable_cores,
)
from chipsched.heuristics.core_assignment.streaming import coarsen_on_disk
from chipsched.instances.chips import get_chip
from chipsched.instances.core_assignment import SeedZipReader, SeedZipWriter, write_zip
from chipsched.neurongraph import NeuronGraph, layered_random, stencil
from chipsched.problems.core_assignment import Instance, evaluate

HC = [HealthCheck.function_scoped_fixture]

HW = get_chip("neuro-8x8")  # NoC: 0.7 pJ/bit/hop


@st.composite
def unit_graphs(draw, min_n: int = 2, max_n: int = 40):
    n = draw(st.integers(min_n, max_n))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    m = int(rng.integers(n, 4 * n))
    sizes = rng.integers(1, 4, n)
    return NeuronGraph.from_edges(sizes, rng.integers(0, n, m), rng.integers(0, n, m),
                                  rng.integers(1, 6, m), name=f"r{seed}")


# ---------------------------------------------------------------------------------------
# step 2


def test_heaviest_neighbor_and_marking_by_hand():
    # path 0-1-2-3 with weights 5, 1, 7: heaviest edges 0→1, 1→0, 2→3, 3→2
    g = NeuronGraph.from_edges([1, 1, 1, 1], [0, 1, 2], [1, 2, 3], [5, 1, 7])
    heavy, hw = heaviest_neighbors(g)
    assert heavy.tolist() == [1, 0, 3, 2] and hw.tolist() == [5, 5, 7, 7]
    mate, red = match_heavy_edges(heavy, hw, g.sizes, limit=2, order=np.arange(4))
    assert mate.tolist() == [1, 0, 3, 2] and red == 12
    mate, red = match_heavy_edges(heavy, hw, g.sizes, limit=1, order=np.arange(4))
    assert (mate == -1).all() and red == 0  # merged size 2 > capacity/15 = 1


@settings(max_examples=50)
@given(unit_graphs(), st.integers(15, 200), st.integers(0, 1000))
def test_coarsening_invariants(g, capacity, seed):
    lvl = coarsen_level(g, capacity, np.random.default_rng(seed))
    if lvl is None:
        return
    c = lvl.graph
    c.validate()
    assert c.total_size == g.total_size
    # merged pairs respect capacity/15, and the edge weight removed is the reduction
    merged = np.bincount(lvl.cmap, minlength=c.n) == 2
    assert (c.sizes[merged] * 15 <= capacity).all()
    assert g.total_weight - c.total_weight == lvl.reduction == max(lvl.tries)
    assert c.n < g.n
    h = coarsen(g, capacity, seed)
    for a, b in zip(h.graphs, h.graphs[1:], strict=False):
        assert b.total_size == a.total_size
    shrink = [1 - b.n / a.n for a, b in zip(h.graphs, h.graphs[1:], strict=False)]
    assert all(s >= 0.2 for s in shrink[:-1])  # every level but the last removes >= 20 %


# ---------------------------------------------------------------------------------------
# step 3


def test_greedy_bisection_selects_the_cheapest_half():
    # two triangles joined by one light edge: the bisection must cut only that edge
    g = NeuronGraph.from_edges([1] * 6, [0, 1, 0, 3, 4, 3, 2], [1, 2, 2, 4, 5, 5, 3],
                               [9, 9, 9, 9, 9, 9, 1])
    sel, cut = greedy_bisection(g, np.arange(6), np.random.default_rng(0), starts=4)
    assert cut == 1 and sel.sum() == 3
    assert set(np.flatnonzero(sel)) in ({0, 1, 2}, {3, 4, 5})


@settings(max_examples=50)
@given(unit_graphs(), st.integers(3, 30), st.integers(0, 1000))
def test_recursive_bisection_parts_fit_and_cut_is_tracked(g, capacity, seed):
    capacity = max(capacity, int(g.sizes.max()))
    part, cut = recursive_bisection(g, capacity, seed)
    loads = np.bincount(part, weights=g.sizes)
    assert (loads <= capacity).all() and (loads > 0).all()
    assert cut == g.cut_weight(part)
    assert np.array_equal(part, recursive_bisection(g, capacity, seed)[0])  # same seed


# ---------------------------------------------------------------------------------------
# step 4 and the whole partition


@settings(max_examples=50)
@given(unit_graphs(), st.integers(0, 1000))
def test_refinement_never_increases_the_cut_and_keeps_capacity(g, seed):
    rng = np.random.default_rng(seed)
    capacity = int(g.sizes.max()) * 3
    part, _ = recursive_bisection(g, capacity, seed)
    k = int(part.max()) + 1
    before = g.cut_weight(part)
    delta, moves = refine(g, part, k, capacity, rng, passes=3)
    assert g.cut_weight(part) == before + delta and delta <= 0
    assert (np.bincount(part, weights=g.sizes) <= capacity).all()
    assert moves == 0 or delta < 0


@settings(max_examples=40)
@given(unit_graphs(max_n=60), st.integers(16, 120), st.integers(0, 1000))
def test_seed004_partition_invariants(g, capacity, seed):
    capacity = max(capacity, int(g.sizes.max()))
    res = seed004_partition(g, capacity, seed)
    assert res.group.shape == (g.n,) and res.group.min() == 0
    assert res.group.max() == res.n_groups - 1
    assert (np.bincount(res.group, weights=g.sizes) <= capacity).all()
    assert res.cut == g.cut_weight(res.group)
    res2 = seed004_partition(g, capacity, seed)
    assert np.array_equal(res.group, res2.group)
    plus = plus_partition(g, capacity, 10**6, seed)
    assert (np.bincount(plus.group, weights=g.sizes) <= capacity).all()
    assert plus.cut == g.cut_weight(plus.group)


def test_uncoarsening_projects_through_every_level():
    g = layered_random(4, 200, 6, seed=2)
    h = coarsen(g, 256, 1)
    assert len(h.cmaps) >= 2
    part, cut = recursive_bisection(h.coarsest, 256, 1)
    k = int(part.max()) + 1
    fine, delta, moves = uncoarsen(h, part, k, 256, 1)
    assert fine.shape == (g.n,) and len(moves) == len(h.cmaps)
    assert g.cut_weight(fine) == cut + delta
    group, ng = pack_groups(fine)
    assert ng == np.unique(fine).shape[0] and group.max() == ng - 1


def test_fm_refinement_respects_limits_and_improves():
    g = stencil(8, 8)
    side = (np.arange(64) % 2).astype(np.int64)  # a terrible bisection (checkerboard cols)
    before = g.cut_weight(side)
    gain = fm_refine(g, side, (36, 36), passes=4)
    assert g.cut_weight(side) == before - gain and gain > 0
    assert np.bincount(side, minlength=2).max() <= 36


# ---------------------------------------------------------------------------------------
# steps 6–7


def test_target_rectangle_and_usable_cores():
    assert target_rectangle(13, 8, 8) == (3, 5)  # perimeter 8, 2 spare (4×4 has 3)
    assert target_rectangle(12, 3, 4) == (3, 4)
    m = usable_cores(13, 8, 8)
    assert m.sum() == 13 and m[:3, :5].sum() == 13 and not m[2, 3] and not m[2, 4]
    with pytest.raises(InputError, match=r"17 parts but the 4×4 array has only 16 cores"):
        target_rectangle(17, 4, 4)


@settings(max_examples=40)
@given(unit_graphs(min_n=2, max_n=30), st.integers(0, 1000))
def test_placements_are_injective_and_force_directed_keeps_them(q, seed):
    rows, cols = 6, 6
    gc = place_recursive_bisection(q, rows, cols, seed)
    assert np.unique(gc).shape[0] == q.n and usable_cores(q.n, rows, cols).ravel()[gc].all()
    fd, st_ = force_directed(q, gc, rows, cols)
    assert sorted(fd.tolist()) == sorted(gc.tolist())  # swaps only
    ex, _ = force_directed(q, gc, rows, cols, top_fraction=1.0, cost="traffic")
    assert placement_traffic(q, ex, cols) <= placement_traffic(q, gc, cols)


def test_force_directed_swap_by_hand():
    # groups 0 and 1 exchange heavy traffic but sit at opposite ends of a 1×3 row with
    # group 2 in the middle; the swap that moves 0 next to 1 lowers both forces
    q = NeuronGraph.from_edges([1, 1, 1], [0], [1], [10])
    gc = np.array([0, 2, 1])
    out, stats = force_directed(q, gc, 1, 3)
    assert stats["swaps"] >= 1
    assert placement_traffic(q, out, 3) == 10  # adjacent now


# ---------------------------------------------------------------------------------------
# end to end, peers


def test_seed004_end_to_end_and_fewer_cores_than_parts():
    g = layered_random(3, 100, 4, seed=1)
    inst = Instance("l", g, HW, 6, 6, 32)
    out = seed004_mapping(inst, seed=3)
    obj, m = evaluate(inst, out.solution)
    assert out.objective == obj and m["max_core_load"] <= 32
    assert out.stats["groups"] == m["cores_used"] and out.stats["traffic"] == m["traffic"]
    small = Instance("l", g, HW, 3, 4, 32)  # 12 cores: enough room, too few for the parts
    fitted = seed004_mapping(small, seed=3)  # issue 11: groups fitted to the cores
    _, ms = evaluate(small, fitted.solution)
    assert ms["max_core_load"] <= 32 and fitted.stats["groups_before_fit"] > 12
    assert fitted.stats["groups"] <= 12


@pytest.mark.parametrize("fn", [metis_partition, kahip_partition])
def test_peers_respect_the_capacity(fn):
    g = stencil(20, 20)
    part, st_ = fn(g, 9, 48, 100, seed=0)
    assert (np.bincount(part, weights=g.sizes) <= 48).all() and part.max() < 100
    with pytest.raises(InputError, match="cannot hold"):
        fn(g, 2, 48, 100)
    with pytest.raises(InputError, match="only 4 cores"):
        fn(g, 9, 48, 4)


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 10**6), st.integers(2, 512), st.integers(1, 4096))
def test_metis_ufactor_is_the_smallest_that_lets_a_part_reach_the_capacity(T, k, K):
    """METIS allows a part (1 + ufactor/1000)·T/k (integer arithmetic: no rounding)."""
    assume(k * K >= T)
    uf = metis_ufactor(T, k, K)
    assert uf >= 1 and (1000 + uf) * T >= 1000 * k * K
    assert uf == 1 or (1000 + uf - 1) * T < 1000 * k * K


def test_metis_peer_uses_that_ufactor():
    g = stencil(20, 20)  # 400 neurons in 21 parts of 20: k·K/T = 1.05
    _, st_ = metis_partition(g, 21, 20, 100, seed=0)
    assert st_["ufactor"] == metis_ufactor(400, 21, 20) == 50
    # 3elt at k = 256 (T = 4,720, K = ⌈1.03·T/k⌉ = 19): rounding down gave 30, a part
    # of at most 18.99 neurons
    assert metis_ufactor(4720, 256, 19) == 31


def test_repair_moves_vertices_out_of_overfull_parts():
    g = stencil(4, 4)
    part = np.zeros(16, np.int64)
    part[12:] = 1
    stats = repair_capacity(g, part, 8, 4)
    assert (np.bincount(part) <= 8).all() and stats["repair_moves"] == 4


# ---------------------------------------------------------------------------------------
# streaming coarsening = in-memory coarsening


@settings(max_examples=20, suppress_health_check=HC)
@given(unit_graphs(min_n=4, max_n=60), st.integers(0, 100))
def test_coarsening_on_disk_equals_in_memory(tmp_path_factory, g, seed):
    d = tmp_path_factory.mktemp("disk")
    write_zip(d / "g.zip", g, batch=7)
    paths, cmaps = coarsen_on_disk(d / "g.zip", d / "work", 64, SeedZipReader,
                                   SeedZipWriter, seed=seed)
    mem = coarsen(g, 64, seed)
    assert len(cmaps) == len(mem.cmaps)
    for p, cm, mg, mc in zip(paths[1:], cmaps, mem.graphs[1:], mem.cmaps, strict=True):
        with SeedZipReader(p) as r:
            disk = r.load()
        assert np.array_equal(cm, mc)
        assert np.array_equal(disk.indptr, mg.indptr)
        assert np.array_equal(disk.indices, mg.indices)
        assert np.array_equal(disk.weights, mg.weights)
        assert np.array_equal(disk.sizes, mg.sizes)


@pytest.mark.parametrize("layers, width, fanin, chip", [
    (3, 4, 2, "neuro-2x3-k2"), (4, 4, 2, "neuro-2x4-k2"), (4, 6, 3, "neuro-2x3-k4"),
    (4, 8, 3, "neuro-2x4-k4")])
@pytest.mark.parametrize("seed", [0, 1])
def test_tight_chips_map_instead_of_failing(layers, width, fanin, chip, seed):
    """Issue 11: total size = cores × capacity; the multilevel partition makes more groups
    than cores, which are now dissolved into the others (before: 'the partition has N
    parts but the array has only M cores')."""
    from chipsched.api import make_instance, solve
    from chipsched.neurongraph.generators import layered_random

    g = layered_random(layers=layers, width=width, fanin=fanin, seed=seed)
    inst = make_instance("core_assignment", g, chip)
    assert g.total_size == inst.n_cores * inst.capacity  # no slack at all
    for m in ("seed004", "seed004-plus", "seed004-rb"):
        r = solve("core_assignment", inst, m, seed=seed)
        core = np.asarray(r.solution.core)
        loads = np.bincount(core, weights=g.sizes, minlength=inst.n_cores)
        assert loads.max() <= inst.capacity and core.max() < inst.n_cores


def test_fit_to_cores_refuses_only_what_cannot_fit():
    from chipsched.errors import InputError
    from chipsched.heuristics.core_assignment import fit_to_cores
    from chipsched.neurongraph.generators import layered_random

    g = layered_random(layers=3, width=4, fanin=2, seed=0)  # 12 neurons of size 1
    one_each = np.arange(12)
    group, k, st = fit_to_cores(g, one_each, 12, capacity=2, cores=6)
    assert k == 6 and np.bincount(group).max() <= 2 and st["groups_dissolved"] == 6
    with pytest.raises(InputError, match="do not fit 5 cores of 2"):
        fit_to_cores(g, one_each, 12, capacity=2, cores=5)
    same, k2, st2 = fit_to_cores(g, one_each, 12, capacity=2, cores=12)
    assert k2 == 12 and st2 == {} and same is one_each
