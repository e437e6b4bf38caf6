"""core_assignment file formats: JSON, METIS, QAPLIB, seed-004 zip (streaming), round trips
and one-line errors on corrupt files, atomic writes."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

from chipsched.errors import InputError
from chipsched.instances.chips import get_chip
from chipsched.instances.core_assignment import (
    JSON_SCHEMA,
    SeedZipReader,
    SeedZipWriter,
    load_instance,
    metis_to_zip,
    qaplib_solution,
    read_metis,
    read_qaplib,
    read_zip,
    write_json,
    write_metis,
    write_zip,
    zip_to_metis,
)
from chipsched.instances.core_assignment.formats import decode_varints, encode_varints
from chipsched.neurongraph import NeuronGraph
from chipsched.problems.core_assignment import evaluate

from .test_core_assignment_graph import graphs

HC = [HealthCheck.function_scoped_fixture]


def _same(a: NeuronGraph, b: NeuronGraph) -> bool:
    return (np.array_equal(a.sizes, b.sizes) and np.array_equal(a.dense_weights(),
                                                                b.dense_weights()))


def test_varints_match_the_documents_figure():
    # figure 2 of the document: 0b000010010101010010101 and 0b0001101 as varints
    vals = np.array([int("000010010101010010101", 2), 13, 0, 127, 128, 2**40], np.int64)
    buf = encode_varints(vals)
    assert buf[-1] < 0x80 and buf[0] & 0x80  # continuation bit on all but the last byte
    assert bytes(encode_varints(np.array([300], np.int64))) == b"\xac\x02"
    out, used, ok = decode_varints(buf, -1)
    assert ok and used == buf.shape[0] and out.tolist() == vals.tolist()
    _, _, ok = decode_varints(buf[:-1], -1)
    assert not ok


@settings(max_examples=40, suppress_health_check=HC)
@given(graphs(max_n=10))
def test_zip_and_metis_round_trip(tmp_path_factory, g):
    d = tmp_path_factory.mktemp("rt")
    write_zip(d / "g.zip", g, batch=3)
    assert _same(read_zip(d / "g.zip"), g)
    write_metis(d / "g.graph", g)
    assert _same(read_metis(d / "g.graph"), g)
    # streaming conversions both ways
    metis_to_zip(d / "g.graph", d / "h.zip")
    zip_to_metis(d / "h.zip", d / "h.graph", batch=4)
    assert _same(read_metis(d / "h.graph"), g)
    with SeedZipReader(d / "h.zip") as r:
        assert r.n == g.n and r.m == g.m
        for v in range(g.n):
            nb, w = r.vertex(v)
            gn, gw = g.neighbors(v)
            assert dict(zip(nb.tolist(), w.tolist(), strict=True)) == \
                dict(zip(gn.tolist(), gw.tolist(), strict=True))


def test_json_round_trip_and_schema(tmp_path):
    g = NeuronGraph.from_edges([1, 2, 3], [0, 1], [1, 2], [4, 5], name="j")
    p = write_json(tmp_path / "i.json", g, 2, 2, 3, objective="cut")
    inst = load_instance(str(p), get_chip("neuro-8x8"))
    assert (inst.rows, inst.cols, inst.capacity, inst.objective.name) == (2, 2, 3, "cut")
    assert _same(inst.graph, g)
    assert JSON_SCHEMA["properties"]["cores"]["required"] == ["rows", "cols", "capacity"]
    doc = Path(__file__).parents[1] / "docs" / "schemas" / "core_assignment.schema.json"
    assert json.loads(doc.read_text()) == JSON_SCHEMA  # the published copy is in sync


@pytest.mark.parametrize("data, msg", [
    ({"graph": {"sizes": [1, 1], "edges": [[0, 1, -3]]},
      "cores": {"rows": 1, "cols": 2, "capacity": 1}}, r"edges.0.2: -3 is less than"),
    ({"graph": {"sizes": [1, 1], "edges": [[0, 4, 1]]},
      "cores": {"rows": 1, "cols": 2, "capacity": 1}}, r"vertex 4 does not exist"),
    ({"graph": {"sizes": [1, 1], "edges": []}, "cores": {"rows": 1, "cols": 2}},
     r"cores.capacity: is required"),
    ({"graph": {"sizes": [5, 1], "edges": []},
      "cores": {"rows": 1, "cols": 2, "capacity": 4}}, r"more than a core's capacity 4"),
    ({"graph": {"sizes": [3, 3], "edges": []},
      "cores": {"rows": 1, "cols": 1, "capacity": 4}}, r"total size 6 exceeds"),
])
def test_json_errors_are_one_line(tmp_path, data, msg):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(data))
    with pytest.raises(InputError, match=msg) as e:
        load_instance(str(p), get_chip("neuro-8x8"))
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("text, msg", [
    ("3 2\n2\n1 4\n2\n", r":3: neighbour 4 out of range"),
    ("2 1\n2\n", r"only 1 vertex lines"),
    ("2 1 001\n2 1\n1\n", r":3: odd number of entries"),
    ("2 1 001\n2 -1\n1 -1\n", r":2: non-positive edge weight"),
    ("2 1\n2\n1 x\n", r":3: non-integer entry"),
    ("2 2\n2\n1\n", r"2 adjacency entries, the header's m = 2 needs 4"),
    ("2 1\n2\n2\n", r"self-loop on vertex 2"),
    ("x y\n", r":1: malformed METIS header"),
    ("3 2\n2 3\n3\n2\n", r"edge listed in one direction only"),
])
def test_corrupt_metis_files(tmp_path, text, msg):
    p = tmp_path / "bad.graph"
    p.write_text(text)
    with pytest.raises(InputError, match=msg) as e:
        read_metis(p)
    assert "\n" not in str(e.value) and str(p) in str(e.value)


def test_metis_reads_comments_vertex_weights_and_isolated_vertices(tmp_path):
    p = tmp_path / "w.graph"
    p.write_text("% a comment\n3 1 001\n2 7\n1 7\n\n% trailing\n")
    g = read_metis(p)  # the empty line is vertex 3's (isolated) line, comments skipped
    assert g.n == 3 and g.degree().tolist() == [1, 1, 0]
    p.write_text("3 1 011\n4 2 7\n5 1 7\n\n")
    with pytest.raises(InputError, match=":4: vertex line too short"):
        read_metis(p)  # with vertex weights an empty line is malformed
    p.write_text("3 1 011\n4 2 7\n5 1 7\n2\n")
    g = read_metis(p)
    assert g.sizes.tolist() == [4, 5, 2] and g.dense_weights()[0, 1] == 7


def _write_ok_zip(path: Path) -> NeuronGraph:
    g = NeuronGraph.from_edges([1, 2, 3, 1], [0, 1, 2, 0], [1, 2, 3, 3], [5, 6, 7, 8])
    write_zip(path, g)
    return g


def test_corrupt_zip_files(tmp_path):
    good = tmp_path / "good.zip"
    _write_ok_zip(good)
    raw = good.read_bytes()
    cases = {}
    cases["not a zip"] = b"hello, world"
    cases["truncated"] = raw[: len(raw) // 2]
    flipped = bytearray(raw)
    i = raw.find(b"edges/1") + len(b"edges/1") + 2  # inside the member's deflate data
    flipped[i] ^= 0xFF
    cases["bit flip"] = bytes(flipped)
    for name, data in cases.items():
        p = tmp_path / f"{name.replace(' ', '_')}.zip"
        p.write_bytes(data)
        with pytest.raises(InputError, match="corrupt seed-004 zip") as e:
            read_zip(p)
        assert "\n" not in str(e.value), name
    # structurally valid zip with inconsistent content
    p = tmp_path / "liar.zip"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "edges/0":  # vertex 0's neighbour 1 claimed with size 9
                vals, _, _ = decode_varints(np.frombuffer(data, np.uint8), -1)
                vals[3] = 9
                data = encode_varints(vals).tobytes()
            dst.writestr(info.filename, data)
    with pytest.raises(InputError, match="edges/0: neighbour size differs"):
        read_zip(p)
    p2 = tmp_path / "missing.zip"
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(p2, "w") as dst:
        for info in src.infolist():
            if info.filename != "edges/2":
                dst.writestr(info.filename, src.read(info))
    with pytest.raises(InputError, match="member 'edges/2' missing"):
        read_zip(p2)
    # review findings: a header n beyond the members, and an edge count the member cannot
    # hold (2^40 edges in a few bytes must not size an allocation)
    p3 = tmp_path / "short.zip"
    _rewrite_zip(good, p3, lambda name, data: (
        encode_varints(np.array([1, 9, 4], np.int64)).tobytes() if name == "header" else
        encode_varints(np.ones(9, np.int64)).tobytes() if name == "sizes" else data))
    with pytest.raises(InputError, match=r"member 'edges/4' missing \(the header says n = 9"):
        read_zip(p3)
    for count in (2**40, 5):
        p4 = tmp_path / f"count{count}.zip"
        _rewrite_zip(good, p4, lambda name, data, c=count: (
            encode_varints(np.array([c], np.int64)).tobytes() if name == "edges/0" else data))
        with pytest.raises(InputError, match="edges/0: edge count does not match"):
            read_zip(p4)


def _rewrite_zip(src: Path, dst: Path, edit) -> None:
    with zipfile.ZipFile(src) as a, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as b:
        for info in a.infolist():
            b.writestr(info.filename, edit(info.filename, a.read(info)))


def test_zip_load_checks_edge_count_and_symmetry(tmp_path):
    """``load`` fills arrays sized from the header's m: a header that lies either way is
    a one-line error; the symmetry check can be skipped (the pipeline's own level
    files), everything decoded is still checked."""
    good = tmp_path / "good.zip"
    g = _write_ok_zip(good)
    with SeedZipReader(good) as r:
        full, fast = r.load(), r.load(check_symmetry=False)
    assert _same(full, g) and _same(fast, g)
    assert fast.indices.dtype == np.int32 and np.array_equal(fast.indptr, g.indptr)

    def header(m):
        return lambda name, data: (encode_varints(np.array([1, 4, m], np.int64)).tobytes()
                                   if name == "header" else data)

    for m, what in ((g.m + 1, "header says m"), (g.m - 1, "more than the header")):
        p = tmp_path / f"m{m}.zip"
        _rewrite_zip(good, p, header(m))
        for check in (True, False):
            with SeedZipReader(p) as r, pytest.raises(InputError, match=what) as e:
                r.load(check_symmetry=check)
            assert "\n" not in str(e.value)

    def heavier(name, data):  # vertex 0's first edge heavier in its row only
        if name != "edges/0":
            return data
        vals, _, _ = decode_varints(np.frombuffer(data, np.uint8), -1)
        vals[4] += 1
        return encode_varints(vals).tobytes()

    p = tmp_path / "asym.zip"
    _rewrite_zip(good, p, heavier)
    with SeedZipReader(p) as r:
        with pytest.raises(InputError, match="different weights"):
            r.load()
        assert r.load(check_symmetry=False).weights[0] == g.weights[0] + 1


def test_zip_writer_is_atomic(tmp_path):
    target = tmp_path / "out.zip"
    with pytest.raises(RuntimeError):
        with SeedZipWriter(target, [1, 1, 1]) as w:
            w.add_vertex([1], [2])
            raise RuntimeError("interrupted")
    with pytest.raises(InputError, match="only 2 of 3 vertices"):
        with SeedZipWriter(target, [1, 1, 1]) as w:
            w.add_vertex([1], [2])
            w.add_vertex([0], [2])
    assert not target.exists() and list(tmp_path.iterdir()) == []


def test_metis_writer_is_atomic(tmp_path):
    g = NeuronGraph.from_edges([1, 1], [0], [1], [3])
    target = tmp_path / "g.graph"
    write_metis(target, g)
    before = target.read_text()

    class Exploding:  # fails after the header line has been written
        n, m, sizes = 2, 1, np.ones(2, np.int64)

        @property
        def indptr(self):
            raise OSError("disk full")

    with pytest.raises(InputError, match="cannot write: disk full"):  # one line, no traceback
        write_metis(target, Exploding())
    assert target.read_text() == before and len(list(tmp_path.iterdir())) == 1


def _qap_file(tmp_path: Path, rows: int, cols: int, flows: np.ndarray, dist_first: bool
              ) -> Path:
    n = rows * cols
    r, c = np.divmod(np.arange(n), cols)
    d = np.abs(r[:, None] - r[None, :]) + np.abs(c[:, None] - c[None, :])
    a, b = (d, flows) if dist_first else (flows, d)
    p = tmp_path / "q.dat"
    p.write_text(f"{n}\n\n" + "\n".join(" ".join(map(str, row)) for row in a) + "\n\n"
                 + "\n".join(" ".join(map(str, row)) for row in b) + "\n")
    return p


@pytest.mark.parametrize("dist_first", [True, False])
def test_qaplib_grid_reader_and_solution(tmp_path, dist_first):
    rng = np.random.default_rng(1)
    f = rng.integers(0, 5, (6, 6))
    np.fill_diagonal(f, 0)
    p = _qap_file(tmp_path, 2, 3, f, dist_first)
    d = read_qaplib(p)
    assert (d["rows"], d["cols"], d["capacity"]) == (2, 3, 1)
    assert d["distance"] == ("A" if dist_first else "B")
    inst = load_instance(str(p), get_chip("neuro-8x8"))
    perm = rng.permutation(6)
    r, c = np.divmod(np.arange(6), 3)
    dm = np.abs(r[:, None] - r[None, :]) + np.abs(c[:, None] - c[None, :])
    # QAPLIB objective Σ a_ij b_p(i)p(j) for the file's own matrix order
    a, b = (dm, f) if dist_first else (f, dm)
    qap = int(sum(a[i, j] * b[perm[i], perm[j]] for i in range(6) for j in range(6)))
    (tmp_path / "q.sln").write_text(f"6 {qap}\n" + " ".join(str(x + 1) for x in perm) + "\n")
    sol, opt = qaplib_solution(inst, tmp_path / "q.sln")
    assert opt == qap and evaluate(inst, sol)[0] == qap
    (tmp_path / "bad.dat").write_text("4\n" + "1 " * 32)
    with pytest.raises(InputError, match="neither matrix is the Manhattan distance"):
        read_qaplib(tmp_path / "bad.dat")


def test_qaplib_partial_grid_is_refused_naming_the_grid(tmp_path):
    """nug14-style files: the first 5 cells of a 2×3 grid is not a mesh we can place on;
    the error says which grid it is."""
    r, c = np.divmod(np.arange(5), 3)
    dm = np.abs(r[:, None] - r[None, :]) + np.abs(c[:, None] - c[None, :])
    f = np.ones((5, 5), np.int64) - np.eye(5, dtype=np.int64)
    body = "\n".join(" ".join(map(str, row)) for row in np.vstack([dm, f]))
    (tmp_path / "part.dat").write_text(f"5\n{body}\n")
    with pytest.raises(InputError, match="first 5 cells of a 2×3 grid"):
        read_qaplib(tmp_path / "part.dat")


@pytest.mark.parametrize("force_zip64", [False, True])
def test_zip_writer_output_is_a_standard_zip(tmp_path, force_zip64):
    """Our own zip writer (numpy directory, zip64 records past 65,535 members or 4 GiB):
    Python's zipfile reads every member with its CRC, and the same graph gives the same
    bytes (fixed timestamps)."""
    g = NeuronGraph.from_edges([1, 2, 3, 1], [0, 1, 2, 0], [1, 2, 3, 3], [5, 6, 7, 8])
    for name in ("a.zip", "b.zip"):
        with SeedZipWriter(tmp_path / name, g.sizes, force_zip64=force_zip64) as w:
            w.add_rows(g.indptr, g.indices, g.weights)
    with zipfile.ZipFile(tmp_path / "a.zip") as z:
        assert z.testzip() is None
        assert sorted(z.namelist()) == ["edges/0", "edges/1", "edges/2", "edges/3",
                                        "header", "sizes"]
    assert (tmp_path / "a.zip").read_bytes() == (tmp_path / "b.zip").read_bytes()
    back = read_zip(tmp_path / "a.zip")
    assert np.array_equal(back.indices, g.indices) and np.array_equal(back.weights, g.weights)
