"""The out-of-core path of core_assignment (issue 11): a generated graph written to the
seed-004 zip batch by batch equals the in-memory generator's; seed 004 run on the zip
(levels, refinement, quotient and evaluation all read from files) gives the same
mapping and the same evaluator metrics as the ``seed004`` method on the graph in
memory."""

from __future__ import annotations

import numpy as np
import pytest

from chipsched.api import solve
from chipsched.errors import InputError
from chipsched.heuristics.core_assignment.streaming import flows_on_disk, seed004_zip
from chipsched.instances.chips import get_chip
from chipsched.instances.core_assignment import SeedZipReader, read_zip, write_zip
from chipsched.instances.core_assignment.ondisk import ZIP_STORE, write_layered_zip
from chipsched.neurongraph import (
    NeuronGraph,
    directed_flows,
    layered_random,
    layered_random_batches,
    multicast_flows,
)
from chipsched.problems.core_assignment import Instance, make_instance

HW = get_chip("neuro-8x8")


@pytest.mark.parametrize("args", [(3, 50, 4, None, 3, 7, 16), (5, 400, 16, None, 1, 1, 64),
                                  (2, 10, 3, 5, 2, 0, 4), (4, 30, 30, 30, 1, 2, 7)])
def test_row_batches_are_the_generators_csr(args):
    layers, width, fanin, window, max_weight, seed, batch = args
    g = layered_random(layers, width, fanin, window=window, max_weight=max_weight, seed=seed)
    ptr, idx, w = [np.zeros(1, np.int64)], [], []
    nxt = 0
    for v0, p, i, x in layered_random_batches(layers, width, fanin, window, max_weight,
                                              seed, batch):
        assert v0 == nxt and p.shape[0] - 1 <= batch
        nxt += p.shape[0] - 1
        ptr.append(p[1:] + ptr[-1][-1])
        idx.append(i)
        w.append(x)
    assert np.array_equal(np.concatenate(ptr), g.indptr)
    assert np.array_equal(np.concatenate(idx), g.indices)
    assert np.array_equal(np.concatenate(w), g.weights)


def test_written_zip_is_the_generated_graph(tmp_path):
    write_layered_zip(tmp_path / "g.zip", 4, 300, 8, max_weight=4, seed=2, batch=100)
    g = layered_random(4, 300, 8, max_weight=4, seed=2)
    back = read_zip(tmp_path / "g.zip")
    assert np.array_equal(back.indptr, g.indptr) and np.array_equal(back.weights, g.weights)
    assert np.array_equal(back.indices, g.indices)


@pytest.mark.parametrize("seed, objective", [(0, "traffic"), (3, "traffic"), (0, "multicast")])
def test_seed004_on_disk_is_seed004_in_memory(tmp_path, seed, objective):
    """Also for multicast, where both place the groups on the packet graph (review
    finding: the zip path placed on the synapse quotient)."""
    g = layered_random(5, 2000, 12, max_weight=3, seed=4)
    write_zip(tmp_path / "g.zip", g)
    inst = make_instance(g, HW, sized_to_fit=True, objective=objective)
    ref = solve("core_assignment", inst, "seed004", seed=seed)
    got = seed004_zip(tmp_path / "g.zip", HW, *ZIP_STORE, inst.rows, inst.cols,
                      objective=objective, seed=seed, workdir=tmp_path / "levels")
    assert np.array_equal(got.core, ref.solution.core)
    assert got.objective == ref.objective
    assert got.metrics == {k: ref.metrics[k] for k in got.metrics}
    assert got.stats["levels"] >= 1 and got.stats["stage_s"]["evaluate"] >= 0
    assert not list((tmp_path / "levels").glob("*.zip"))  # level files removed


def test_a_tight_mesh_maps_on_disk_as_in_memory(tmp_path):
    """1,200 neurons on 1×5 cores of 256: seed 004 makes more groups than cores; both
    paths dissolve the surplus the same way (review finding: the zip path refused)."""
    g = layered_random(3, 400, 8, seed=1)
    write_zip(tmp_path / "g.zip", g)
    inst = Instance("tight", g, HW, 1, 5, 256)
    ref = solve("core_assignment", inst, "seed004", seed=0)
    got = seed004_zip(tmp_path / "g.zip", HW, *ZIP_STORE, 1, 5, seed=0,
                      workdir=tmp_path / "levels")
    assert got.stats["groups_before_fit"] > 5 >= got.stats["groups"]
    assert np.array_equal(got.core, ref.solution.core)
    assert got.objective == ref.objective
    assert got.mapping.cut == g.cut_weight(got.core)


def test_an_asymmetric_file_is_refused_even_when_nothing_coarsens(tmp_path):
    """Review finding: with no coarsening level the user's own file was loaded without
    the symmetry check (which only the pipeline's own level files may skip)."""
    import zipfile

    from chipsched.instances.core_assignment.formats import decode_varints, encode_varints

    # vertices of 200 neurons: no pair fits 1/15 of a 256-neuron core, nothing merges
    g = NeuronGraph.from_edges(np.full(6, 200), [0, 1, 2, 3, 4], [1, 2, 3, 4, 5],
                               [3, 4, 5, 6, 7])
    write_zip(tmp_path / "g.zip", g)
    with zipfile.ZipFile(tmp_path / "g.zip") as a, \
            zipfile.ZipFile(tmp_path / "asym.zip", "w", zipfile.ZIP_DEFLATED) as b:
        for info in a.infolist():
            data = a.read(info)
            if info.filename == "edges/0":  # vertex 0's edge heavier in its row only
                vals, _, _ = decode_varints(np.frombuffer(data, np.uint8), -1)
                vals[4] += 1
                data = encode_varints(vals).tobytes()
            b.writestr(info.filename, data)
    ok = seed004_zip(tmp_path / "g.zip", HW, *ZIP_STORE, 2, 3, workdir=tmp_path / "l1")
    assert ok.stats["levels"] == 0
    with pytest.raises(InputError, match="different weights"):
        seed004_zip(tmp_path / "asym.zip", HW, *ZIP_STORE, 2, 3, workdir=tmp_path / "l2")


def test_flows_on_disk_match_the_in_memory_flows(tmp_path):
    g = layered_random(4, 500, 10, max_weight=5, seed=9)
    write_zip(tmp_path / "g.zip", g)
    label = np.random.default_rng(0).integers(0, 37, g.n)
    with SeedZipReader(tmp_path / "g.zip") as r:
        for multicast, ref_fn in ((False, directed_flows), (True, multicast_flows)):
            s, d, w = flows_on_disk(r, label, 37, multicast, batch=333)
            rs, rd, rw = ref_fn(g, label, 37)
            order = np.lexsort((rd, rs))
            assert np.array_equal(s, rs[order]) and np.array_equal(d, rd[order])
            assert np.array_equal(w, rw[order])


def test_too_small_an_array_fails_in_one_line(tmp_path):
    write_layered_zip(tmp_path / "g.zip", 3, 400, 8)
    with pytest.raises(InputError, match="exceeds"):
        seed004_zip(tmp_path / "g.zip", HW, *ZIP_STORE, 1, 2)


def test_quotient_reads_at_most_a_batch_of_vertices(tmp_path):
    """The groups' quotient is read in batches of vertices, not of groups (review: with
    fewer groups than the batch, one read held the whole graph)."""
    from chipsched.heuristics.core_assignment.streaming import contract_on_disk

    g = layered_random(4, 500, 6, seed=1)
    write_zip(tmp_path / "g.zip", g)
    label = np.random.default_rng(1).integers(0, 9, g.n)
    sizes = []
    with SeedZipReader(tmp_path / "g.zip") as r:
        orig = r.read_rows

        def counting(vertices):
            sizes.append(len(vertices))
            return orig(vertices)

        r.read_rows = counting
        q = contract_on_disk(r, label, 9, batch=300)
    assert max(sizes) <= 300 or max(sizes) == np.bincount(label).max()
    ref = g.contract(label, 9)
    assert np.array_equal(q.indptr, ref.indptr) and np.array_equal(q.weights, ref.weights)


def test_a_directory_size_past_the_end_is_corrupt(tmp_path):
    import struct

    g = layered_random(2, 20, 3, seed=0)
    write_zip(tmp_path / "g.zip", g)
    raw = bytearray((tmp_path / "g.zip").read_bytes())
    at = raw.find(b"PK\x01\x02")  # first central directory entry: edges/0
    struct.pack_into("<I", raw, at + 20, 0xFFFFFFF0)  # its compressed size
    (tmp_path / "bad.zip").write_bytes(bytes(raw))
    with pytest.raises(InputError, match="edges/0"):
        read_zip(tmp_path / "bad.zip")
