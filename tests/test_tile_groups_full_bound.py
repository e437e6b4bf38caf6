"""The full-space bound of issue 30 (``full_space_bound``: root run count, usable rows,
placement hops, the energy envelope): never above any tree of brute-force enumerations
— on chips with small buffers (spills, pinned weights, forced sub-batching) and with
one DRAM port (tiles several hops from DRAM) as well as SET's — and never below the
per-layer bound it refines."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import chipsched
from chipsched.errors import InputError
from chipsched.formulations import tile_groups as F
from chipsched.instances.chips import get_chip
from chipsched.problems.tile_groups import Infeasible, Instance
from chipsched.problems.tile_groups.bound import (
    PathEnvelope,
    RowTerms,
    ball_mean_hops,
    dram_window_hops,
    energy_floor,
    full_space_bound,
    path_latency,
    row_terms,
    skip_edges,
    tree_path_latency,
)
from tests.test_tile_groups_methods import _net

REL = 1e-9


def _chip(name: str, buffer: int | None, one_port: bool):
    hw = get_chip(name)
    if buffer is not None:
        hw = replace(hw, unit=replace(hw.unit, buffer_bytes=buffer))
    if one_port:
        hw = replace(hw, dram=replace(hw.dram, ports=((0, 0),)))
    return hw


@st.composite
def stressed_instances(draw, max_layers: int = 3) -> Instance:
    """Random 1–3-layer networks on 2–4-tile chips whose buffers are small enough that
    rows spill, sub-batches are forced and pinned weights do not fit, or whose only
    DRAM port is in a corner; SET's and per-run weight accounting."""
    n = draw(st.integers(1, max_layers))
    chip = _chip(draw(st.sampled_from(["tiled-1x2", "tiled-1x3", "tiled-2x2"])),
                 draw(st.sampled_from([None, 65536, 16384, 8192, 4096])),
                 draw(st.booleans()))
    try:
        inst = Instance(_net(draw, n), chip, batch=draw(st.sampled_from([1, 2, 4])),
                        objective=draw(st.sampled_from(["latency", "energy", "e2d", "ed2"])),
                        weight_accounting=draw(st.sampled_from(["per_run", "set"])))
        inst.analyzer  # noqa: B018 - a network that cannot run at all is refused here
    except InputError:
        assume(False)
    return inst


def _trees(inst: Instance):
    trees, _ = F.full_space(inst)
    for t in trees:
        try:
            yield t, inst.analyzer.totals(t)
        except Infeasible:
            continue


@settings(max_examples=70, derandomize=True, deadline=None)
@given(stressed_instances())
def test_no_tree_goes_below_the_full_space_bound_or_its_envelope(inst):
    fb = full_space_bound(inst)
    assert fb.objective >= fb.basic.objective * (1 - REL)
    seen = 0
    for _tree, t in _trees(inst):
        seen += 1
        e, d = t.energy.total, t.latency
        assert inst.objective(e, d) >= fb.objective * (1 - REL)
        assert inst.objective(e, d) >= fb.by_root_runs[t.root_runs] * (1 - REL)
        assert e >= fb.energy_j * (1 - REL) and d >= fb.latency_s * (1 - REL)
        for dd, ee in fb.envelope:
            if d <= dd:
                assert e >= ee * (1 - REL), (dd, ee, e, d)
    assume(seen > 0)


def _rows_paid(inst: Instance) -> None:
    """Per tree: Σ over its leaves of their rows' terms (with its root run count) is at
    most its energy, its busy time over G at most its latency, its DRAM bytes at least
    the rows', its latency at least its rows' dependency paths — so a term that
    overcharges one row fails here even where the bound's minimum over rows hides it."""
    an = inst.analyzer
    nb = len(an.table.batches)
    for tree, t in _trees(inst):
        terms = row_terms(inst, t.root_runs)
        segs, b, _runs = an.segments_of(tree)
        e_sum = busy = dbytes = 0.0
        for s in segs:
            leaves: list = []
            an.walk(s, b, 0, an.G, 1, (), leaves, {})
            for lf in leaves:
                col = (lf.hi - lf.lo - 1) * nb + an.bidx[lf.batch]
                assert np.isfinite(terms.energy_j[lf.layer, col]), (tree, lf)
                e_sum += terms.energy_j[lf.layer, col]
                busy += terms.busy_s[lf.layer, col]
                dbytes += terms.dram_bytes[lf.layer, col]
        assert t.energy.total >= e_sum * (1 - REL), tree
        assert t.latency * an.G >= busy * (1 - REL), tree
        assert t.dram_bytes >= dbytes * (1 - REL), tree
        assert t.latency >= tree_path_latency(inst, tree) * (1 - REL), tree


@settings(max_examples=40, derandomize=True, deadline=None)
@given(stressed_instances())
def test_each_row_term_is_paid_by_the_tree_that_uses_the_row(inst):
    _rows_paid(inst)


@settings(max_examples=150, derandomize=True, deadline=None)
@given(st.deferred(lambda: dag_instances()))
def test_each_row_term_is_paid_on_random_dags_with_small_buffers(inst):
    """The same on random DAGs on 2–3-tile chips with small buffers, where rows spill
    and read their inputs from DRAM (a map's read was once charged twice there) and
    trees pipeline sub-batches under a root T cut that runs more than once."""
    _rows_paid(inst)


def _dag(draw, n: int):
    """A random DAG of n convolutions, compute-heavy ones among them (so compute, not
    DRAM, decides many trees' latency): any edge s → d (s < d) or none, so layers may
    be independent (parallel branches an S cut can overlap)."""
    from chipsched.workload import Layer, OpKind, Workload
    layers, edges = [], []
    for i in range(n):
        k, c = draw(st.sampled_from([8, 64, 256])), draw(st.sampled_from([8, 64]))
        h = draw(st.sampled_from([4, 16, 32]))
        layers.append(Layer(f"l{i}", OpKind.CONV, K=k, C=c, H=h, W=h, R=3, S=3,
                            in_elems=c * h * h, weight_elems=9 * k * c))
    for d in range(1, n):
        for s in range(d):
            if draw(st.booleans()):
                edges.append((s, d, min(layers[s].out_elems, layers[d].in_elems)))
    return Workload("dag", tuple(layers), tuple(edges))


@st.composite
def dag_instances(draw, skip_edge: bool = False) -> Instance:
    """2–3-layer random DAGs (independent layers too) on 2–3-tile chips with small
    buffers, batch 1–4: the trees that overlap independent layers in S cuts, pipeline
    sub-batches and spill. ``skip_edge``: 3 layers with the edge 0 → 2 beside the path
    0 → 1 → 2."""
    from chipsched.workload import Workload

    chip = _chip(draw(st.sampled_from(["tiled-1x2", "tiled-1x3"])),
                 draw(st.sampled_from([None, 16384, 8192])), draw(st.booleans()))
    net = _dag(draw, 3 if skip_edge else draw(st.integers(2, 3)))
    if skip_edge:
        edges = {(s, d): e for s, d, e in net.edges}
        for s, d in ((0, 1), (1, 2), (0, 2)):
            edges.setdefault((s, d), min(net.layers[s].out_elems, net.layers[d].in_elems))
        net = Workload(net.name, net.layers, tuple((s, d, e) for (s, d), e in
                                                   sorted(edges.items())))
    try:
        inst = Instance(net, chip,
                        batch=draw(st.sampled_from([1, 2, 4])),
                        objective=draw(st.sampled_from(["latency", "e2d", "ed2", "edp"])),
                        weight_accounting=draw(st.sampled_from(["per_run", "set"])))
        inst.analyzer  # noqa: B018
    except InputError:
        assume(False)
    return inst


@settings(max_examples=50, derandomize=True, deadline=None)
@given(dag_instances())
def test_no_tree_is_faster_than_its_rows_dependency_paths(inst):
    """The theorem behind the path envelope, per tree: its latency is at least the
    longest dependency path's run times plus one layer's own time, at the rows it uses;
    and no tree goes below the bound."""
    fb = full_space_bound(inst)
    seen = 0
    for tree, t in _trees(inst):
        seen += 1
        assert t.latency >= tree_path_latency(inst, tree) * (1 - REL), tree
        assert inst.objective(t.energy.total, t.latency) >= fb.objective * (1 - REL), tree
    assume(seen > 0)


def test_hops_of_a_one_port_row_of_tiles():
    """1×3 mesh, the port at column 0: DRAM hops 1, 2, 3 (with the controller link);
    the best window of k tiles starts at the port; a tile's k nearest tiles are itself
    and its neighbours (the middle tile: 0, 1, 1)."""
    inst = Instance(_net_one(), _chip("tiled-1x3", None, True), batch=1)
    an = inst.analyzer
    assert np.allclose(dram_window_hops(an), [1.0, 1.5, 2.0])
    assert np.allclose(ball_mean_hops(an), [0.0, 0.5, 2 / 3])


def _net_one():
    from chipsched.workload import Layer, OpKind, Workload
    return Workload("one", (Layer("A", OpKind.FC, K=128, C=8, in_elems=8,
                                  weight_elems=1024),), ())


def test_the_envelope_falls_with_latency_and_meets_the_least_energy():
    inst = chipsched.make_instance("tile_groups", "tiny", "edge-4x4", batch=4)
    fb = full_space_bound(inst)
    es = [e for _, e in fb.envelope]
    assert all(a >= b * (1 - REL) for a, b in zip(es, es[1:], strict=False))
    assert es[-1] == pytest.approx(fb.energy_j, rel=1e-9)
    terms = row_terms(inst, fb.root_runs)
    # below the least latency of every row set no tree exists
    an = inst.analyzer
    bw = an.hw.dram.bytes_per_s
    assert energy_floor(terms, fb.latency_s * 0.5, an.G, bw) == np.inf
    assert energy_floor(terms, fb.latency_s * 2, an.G, bw) < np.inf


def test_the_bound_method_reports_the_full_space_bound():
    inst = chipsched.make_instance("tile_groups", "tiny", "edge-4x4", batch=4)
    r = chipsched.solve("tile_groups", inst, "bound")
    fb = full_space_bound(inst)
    assert r.bound == pytest.approx(fb.objective, rel=1e-12)
    assert r.metrics["solver"]["envelope"] and r.metrics["solver"]["root_runs"] >= 1


def _relaxed_optimum(inst: Instance) -> float:
    """The relaxation ``full_space_bound`` bounds, solved by enumeration: for every root
    run count, one usable row per layer; energy = Σ of the rows' energies, latency =
    max(Σ busy / G, the dependency-path latency of the rows (``path_latency``: R × the
    longest path's run times with one layer's own time), Σ DRAM bytes / bandwidth)."""
    an = inst.analyzer
    bw = an.hw.dram.bytes_per_s
    best = np.inf
    from chipsched.cost import divisors
    for R in divisors(an.B):
        t = row_terms(inst, R)
        ok = [np.flatnonzero(np.isfinite(t.energy_j[i])) for i in range(len(t.energy_j))]
        if any(len(o) == 0 for o in ok):
            continue
        L = len(ok)
        e = busy = db = np.zeros(())
        run, own = [], []
        for i, o in enumerate(ok):  # broadcast one axis per layer
            shape = [1] * L
            shape[i] = len(o)
            e = e + t.energy_j[i, o].reshape(shape)
            busy = busy + t.busy_s[i, o].reshape(shape)
            db = db + t.dram_bytes[i, o].reshape(shape)
            run.append(R * t.run_s[i, o].reshape(shape))
            own.append(t.own_s[i, o].reshape(shape))
        head: list = []
        for c in range(L):
            h = np.zeros(())
            for p, _ in an.preds[c]:
                h = np.maximum(h, head[p] + run[p])
            head.append(h)
        tail: list = [np.zeros(())] * L
        for c in range(L - 1, -1, -1):
            for p, _ in an.preds[c]:
                tail[p] = np.maximum(tail[p], tail[c] + run[c])
        path = np.zeros(())
        for j in range(L):
            path = np.maximum(path, head[j] + own[j] + tail[j])
        d = np.maximum(np.maximum(busy / an.G, path), db / bw)
        best = min(best, float(np.min(np.vectorize(inst.objective)(e, d))))
    return best


@st.composite
def tradeoff_instances(draw) -> Instance:
    """Compute-heavy convolutions on up to 16 tiles: the least-energy rows are slow, so
    the energy-latency envelope, not the least energy, decides the bound."""
    from chipsched.workload import Layer, OpKind, Workload
    n = draw(st.integers(1, 3))
    layers, edges = [], []
    for i in range(n):
        k, c = draw(st.sampled_from([16, 64, 256])), draw(st.sampled_from([16, 64]))
        h = draw(st.sampled_from([8, 32]))
        layers.append(Layer(f"c{i}", OpKind.CONV, K=k, C=c, H=h, W=h, R=3, S=3,
                            in_elems=c * h * h, weight_elems=9 * k * c))
        if i:
            edges.append((i - 1, i, min(layers[i - 1].out_elems, layers[i].in_elems)))
    chip = _chip(draw(st.sampled_from(["tiled-2x2", "edge-4x4"])),
                 draw(st.sampled_from([None, 65536])), draw(st.booleans()))
    try:
        inst = Instance(Workload("heavy", tuple(layers), tuple(edges)), chip,
                        batch=draw(st.sampled_from([1, 4])),
                        objective=draw(st.sampled_from(["e2d", "ed2", "edp", "latency"])))
        inst.analyzer  # noqa: B018
    except InputError:
        assume(False)
    return inst


@settings(max_examples=40, derandomize=True, deadline=None)
@given(tradeoff_instances())
def test_the_bound_never_exceeds_its_relaxation_solved_by_enumeration(inst):
    """The envelope's Lagrangian step and its staircase over latency are each valid only
    if the bound stays below the relaxation's exact optimum."""
    fb = full_space_bound(inst)
    assert fb.objective <= _relaxed_optimum(inst) * (1 + REL)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.integers(1, 3), st.integers(1, 5), st.integers(0, 10_000))
def test_energy_floor_is_below_the_best_row_choice_under_the_latency(L, M, seed):
    rng = np.random.default_rng(seed)
    e = rng.uniform(1, 10, (L, M))
    busy = rng.uniform(1, 10, (L, M))
    own = busy / rng.integers(1, 4, (L, M))
    db = rng.uniform(0, 5, (L, M))
    e[rng.random((L, M)) < 0.2] = np.inf
    terms = RowTerms(1, e, busy, own, db)
    G, bw = 3, 2.0
    for d in rng.uniform(0.5, 12, 6):
        best = np.inf
        for rows in np.ndindex(*([M] * L)):
            pick = (np.arange(L), np.array(rows))
            if (np.isfinite(e[pick]).all() and own[pick].max() <= d
                    and busy[pick].sum() <= G * d and db[pick].sum() <= bw * d):
                best = min(best, float(e[pick].sum()))
        assert energy_floor(terms, float(d), G, bw) <= best * (1 + REL)


def _random_tables(rng, L: int, M: int):
    """Random rows (energy, run time, runs, busy, DRAM bytes; some unusable) and a random
    DAG over L layers in topological order."""
    e = rng.uniform(1, 10, (L, M))
    run = rng.uniform(0.2, 3, (L, M))
    own = run * rng.integers(1, 4, (L, M))
    busy = own * rng.integers(1, 4, (L, M))
    db = rng.uniform(0, 5, (L, M))
    e[rng.random((L, M)) < 0.2] = np.inf
    e[:, 0] = np.where(np.isfinite(e[:, 0]), e[:, 0], 5.0)  # every layer keeps a row
    inf = ~np.isfinite(e)
    terms = RowTerms(1, e, np.where(inf, np.inf, busy), np.where(inf, np.inf, own),
                     np.where(inf, np.inf, db), np.where(inf, np.inf, run))
    preds = [[(p, 1) for p in range(c) if rng.random() < 0.5] for c in range(L)]
    return terms, preds


def _choice_latency(terms, pick, preds, G: int, bw: float) -> float:
    """The latency the path relaxation gives one row per layer: its path latency, busy
    time over G and DRAM time."""
    return max(path_latency(terms.run_s[pick], terms.own_s[pick], preds),
               terms.busy_s[pick].sum() / G, terms.dram_bytes[pick].sum() / bw)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 10_000))
def test_the_path_envelope_is_below_the_best_row_choice(L, M, seed):
    """Its least latency and its energy floor at latency D, against every choice of one
    row per layer whose path latency, busy time over G and DRAM time are ≤ D."""
    rng = np.random.default_rng(seed)
    terms, preds = _random_tables(rng, L, M)
    G, bw = 2, 4.0
    pe = PathEnvelope(terms, preds, G, bw)
    choices = []
    for rows in np.ndindex(*([M] * L)):
        pick = (np.arange(L), np.array(rows))
        if np.isfinite(terms.energy_j[pick]).all():
            d = _choice_latency(terms, pick, preds, G, bw)
            choices.append((d, float(terms.energy_j[pick].sum())))
    d_least = min(d for d, _ in choices)
    assert pe.latency_floor(d_least) <= d_least * (1 + REL)
    for d in rng.uniform(0.5, 2.5, 5) * d_least:
        best = min((e for dd, e in choices if dd <= d), default=np.inf)
        assert pe.energy_floor(float(d)) <= best * (1 + REL), (d, best)


def test_the_path_envelope_is_exact_on_a_chain_with_one_row_per_layer():
    """Three layers in a chain, one row each (run times 1, 2, 3; the middle one runs 4
    times): the least latency is 1 + 4·2 + 3 = 12 — the busy time over G (6) and the
    longest own time (8) say less — and at D = 12 the energy is the rows' sum."""
    e = np.array([[1.0], [2.0], [3.0]])
    run = np.array([[1.0], [2.0], [3.0]])
    own = np.array([[1.0], [8.0], [3.0]])
    terms = RowTerms(1, e, own.copy(), own, np.zeros((3, 1)), run)
    preds = [[], [(0, 1)], [(1, 1)]]
    pe = PathEnvelope(terms, preds, 2, np.inf)
    assert path_latency(run[:, 0], own[:, 0], preds) == 12.0
    assert pe.latency_floor(6.0) == pytest.approx(12.0, rel=1e-7)
    assert pe.energy_floor(12.0) == pytest.approx(6.0, rel=1e-7)


@settings(max_examples=60, derandomize=True, deadline=None)
@given(st.integers(2, 4), st.integers(1, 3), st.integers(0, 10_000))
def test_any_multipliers_give_an_energy_floor_below_the_best_row_choice(L, M, seed):
    """The Lagrangian recomputation trusts no LP: random non-negative multipliers (which
    leave start times and tails with negative coefficients until the per-layer
    multipliers are raised) still bound every row choice that meets the latency."""
    rng = np.random.default_rng(seed)
    terms, preds = _random_tables(rng, L, M)
    G, bw = 2, 4.0
    pe = PathEnvelope(terms, preds, G, bw)
    n_rows = pe.n_rows
    for _ in range(5):
        d = float(rng.uniform(2, 15))
        best = np.inf
        for rows in np.ndindex(*([M] * L)):
            pick = (np.arange(L), np.array(rows))
            if np.isfinite(terms.energy_j[pick]).all() and \
                    _choice_latency(terms, pick, preds, G, bw) <= d:
                best = min(best, float(terms.energy_j[pick].sum()))
        y = rng.exponential(rng.uniform(0.1, 20), n_rows) * (rng.random(n_rows) < 0.7)
        assert pe.lagrangian_energy(y, d) <= best * (1 + REL)


def test_the_bound_reports_its_lps_and_stops_them_at_its_budget():
    """Progress hears of every path LP; a spent budget stops the LPs, says so and leaves
    the row bound of §4.2 (valid, and no higher)."""
    from chipsched.budget import Budget

    inst = chipsched.make_instance("tile_groups", "tiny-chain", "edge-4x4", batch=1)
    seen: list = []
    r = chipsched.solve("tile_groups", inst, "bound",
                        progress=lambda d, t, n: seen.append((d, t, n)))
    assert seen and all(0 < d <= t for d, t, _ in seen)
    assert "dependency-path" in seen[-1][2]
    assert r.metrics["solver"]["paths"]["lps"] == seen[-1][0]
    full = full_space_bound(inst)
    rows = full_space_bound(inst, paths=False)
    spent = Budget(0.0)
    stopped = full_space_bound(inst, budget=spent)
    assert not stopped.paths["complete"] and stopped.paths["lps"] == 0
    assert stopped.objective == rows.objective <= full.objective


@settings(max_examples=25, derandomize=True, deadline=None)
@given(dag_instances(skip_edge=True))
def test_a_map_with_another_dependency_path_is_never_consumed_immediately(inst):
    """The theorem of ``skip_edges``, per tree: the map 0 → 2 goes through DRAM or waits
    on the consumer's tiles — whatever the order, cuts, stages and sub-batches."""
    an = inst.analyzer
    assert skip_edges(an) == {(0, 2)}
    seen = 0
    for tree, _t in _trees(inst):
        segs, b, _runs = an.segments_of(tree)
        for s in segs:
            leaves: list = []
            cuts: dict = {}
            an.walk(s, b, 0, an.G, 1, (), leaves, cuts)
            at = {lf.layer: lf for lf in leaves}
            if 0 in at and 2 in at:
                seen += 1
                over_noc, waits = an.direct(at[0].path, at[2].path, cuts)
                assert not over_noc or waits, tree
    assume(seen > 0)
