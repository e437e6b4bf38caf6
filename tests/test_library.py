"""chipsched-lib (issue 28): every instance file rebuilds to its fingerprint, every
best-known file verifies to its stored objective, no bound is above its best known, the
verifier refuses corrupted solutions in one line and accepts hand-written ones, and
docs/library.md's table is the generated one."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

from chipsched import library
from chipsched.errors import InputError
from tests.cli_helpers import one_line_error, run

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = library.entries()
# instances whose build takes seconds (the large neuron graphs): one test builds them all
QUICK = [e for e in ENTRIES if e.size <= 20_000]


def test_the_library_has_every_decision_and_at_least_80_instances():
    assert len(ENTRIES) >= 80
    per = {d: sum(e.decision == d for e in ENTRIES) for d in library.DECISIONS}
    assert min(per.values()) >= 18, per
    assert len({e.id for e in ENTRIES}) == len(ENTRIES)
    res = run("lib", "list")
    assert res.exit_code == 0, res.output
    assert f"{len(ENTRIES)} instances" in res.output
    assert f"is {len(ENTRIES)} instances" in (ROOT / "README.md").read_text()


@pytest.mark.parametrize("e", QUICK, ids=lambda e: e.id)
def test_instance_rebuilds_to_its_fingerprint_and_best_known_verifies(e):
    bk, bd = library.best_known(e), library.bound(e)
    assert bk is not None, f"{e.id} has no best known"
    assert bd is not None, f"{e.id} has no bound"
    v = library.verify(e, bk.path)  # builds the instance and checks the fingerprint
    # today's evaluator gives the stored objective: a cost-model change is visible here
    assert v.objective == pytest.approx(bk.objective, rel=1e-9)
    assert v.ties_best_known and not v.beats_best_known
    # a bound is a theorem: never above a feasible solution
    assert bd.value <= bk.objective * (1 + 1e-9), (bd.value, bk.objective)
    if bd.status == "optimal":
        assert bd.value == pytest.approx(bk.objective, rel=1e-6)


def test_large_instances_rebuild_and_verify():
    for e in ENTRIES:
        if e in QUICK:
            continue
        bk = library.best_known(e)
        assert bk is not None and library.bound(e) is not None
        v = library.verify(e, bk.path)
        assert v.objective == pytest.approx(bk.objective, rel=1e-9)


def test_a_changed_constant_changes_the_fingerprint():
    e = library.entry("tg-tiny-chain-2x2-b1")
    chip = json.loads(json.dumps(e.chip))
    chip["unit"]["frequency_ghz"] = chip["unit"]["frequency_ghz"] * 1.01
    with pytest.raises(InputError, match="fingerprint.*cost model"):
        library.build_instance(dataclasses.replace(e, chip=chip))
    assert library.build_instance(e) is not None


# ---------------------------------------------------------------------------------------
# hand-written solutions in the documented format (not produced by chipsched's writer)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def test_hand_written_core_assignment_solution_verifies(tmp_path):
    # ca-small-01: a 4×4 stencil, cores of 4 neurons; its quadrants on cores 0..3
    cores = [2 * (i // 4 // 2) + (i % 4) // 2 for i in range(16)]
    p = _write(tmp_path, "quadrants.json", '{"core": [' + ", ".join(map(str, cores)) + "]}")
    res = run("verify", "ca-small-01", str(p))
    assert res.exit_code == 0, res.output
    # the traffic counted from the graph's edge list: core c sits at (c // cols, c % cols)
    inst = library.build_instance(library.entry("ca-small-01"))
    g, cols = inst.graph, inst.cols
    src = np.repeat(np.arange(g.n), np.diff(g.indptr))
    hops = sum(int(w) * (abs(cores[a] // cols - cores[b] // cols)
                         + abs(cores[a] % cols - cores[b] % cols))
               for a, b, w in zip(src, g.indices, g.weights, strict=True) if a < b)
    assert hops > 0
    assert f"traffic = {hops} w·hop" in res.output
    assert "at most" in res.output


def test_hand_written_tile_groups_solution_verifies(tmp_path):
    p = _write(tmp_path, "ls.json", '{"tree": "T(1)[ conv1 conv2 conv3 pool fc ]"}')
    res = run("verify", "tg-tiny-chain-2x2-b1", str(p), "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["feasible"] and out["objective"] >= out["bound"]
    # E²·D, SET's edge objective (the default on chips of up to 16 tiles)
    c = out["components"]
    assert out["objective"] == pytest.approx(c["energy_j"] ** 2 * c["latency_s"], rel=1e-12)


# ---------------------------------------------------------------------------------------
# corrupted and infeasible solutions: one line, exit 2


def _bk(id_: str) -> dict:
    return json.loads(library.best_known(library.entry(id_)).path.read_text())["solution"]


def _corruptions() -> list[tuple[str, str, object, str]]:
    ca = _bk("ca-small-01")["core"]
    op = _bk("op-random-n8-s1")
    rs = _bk("rs-tiny-chiplet-2x2")
    soc = _bk("rs-tiny-soc3")

    def op_with(**changes):
        return {**json.loads(json.dumps(op)), **changes}

    first = next(iter(op["assignment"]))
    late = max(op["start"], key=op["start"].get)
    return [
        ("ca wrong length", "ca-small-01", {"core": ca[:-1]}, "solution"),
        ("ca core out of range", "ca-small-01", {"core": [99] + ca[1:]}, "core"),
        ("ca negative core", "ca-small-01", {"core": [-1] + ca[1:]}, "core"),
        ("ca capacity exceeded", "ca-small-01", {"core": [0] * 5 + ca[5:]}, "capacity"),
        ("ca not integers", "ca-small-01", {"core": ["a"] + ca[1:]}, "integer"),
        ("ca fractional core", "ca-small-01", {"core": [1.5] + ca[1:]}, "integer"),
        ("ca extra key", "ca-small-01", {"core": ca, "x": 1}, "solution"),
        ("ca missing key", "ca-small-01", {"cores": ca}, "solution"),
        ("tg missing layer", "tg-tiny-chain-2x2-b1",
         {"tree": "T(1)[ conv1 conv2 conv3 pool ]"}, "fc"),
        ("tg unknown layer", "tg-tiny-chain-2x2-b1",
         {"tree": "T(1)[ conv1 conv2 conv3 pool fc conv9 ]"}, "conv9"),
        ("tg duplicate layer", "tg-tiny-chain-2x2-b1",
         {"tree": "T(1)[ conv1 conv2 conv2 conv3 pool fc ]"}, "conv2"),
        ("tg malformed text", "tg-tiny-chain-2x2-b1",
         {"tree": "T(1)[ conv1 conv2 conv3 pool fc"}, "tree"),
        ("tg batch not divisible", "tg-tiny-chain-2x2-b4",
         {"tree": "T(3)[ conv1 conv2 conv3 pool fc ]"}, "does not divide"),
        ("tg precedence broken", "tg-tiny-chain-2x2-b1",
         {"tree": "T(1)[ conv2 conv1 conv3 pool fc ]"}, "order"),
        ("tg allocation above the tiles", "tg-tiny-chain-2x2-b1",
         {"tree": "S(1){3,3}[ conv1 conv2 conv3 pool fc ]"}, "tree"),
        ("tg more S children than tiles", "tg-tiny-chain-2x2-b1",
         {"tree": "S(1)[ conv1 conv2 conv3 pool fc ]"}, "tiles"),
        ("op unknown processor", "op-random-n8-s1",
         op_with(assignment={**op["assignment"], first: "p9"}), "p9"),
        ("op missing op", "op-random-n8-s1",
         op_with(assignment={k: v for k, v in op["assignment"].items() if k != first}),
         first),
        ("op precedence broken", "op-random-n8-s1",
         op_with(start={**op["start"], late: 0.0}), late),
        ("rs regions leave a gap", "rs-tiny-chiplet-2x2",
         {**rs, "regions": [[0, 0], [1, 1], [3, 5], [3, 5]]}, "region"),
        ("rs chiplet out of range", "rs-tiny-chiplet-2x2",
         {**rs, "placement": [[0], [1], [3], [9]]}, "9"),
        ("rs chiplet used twice", "rs-tiny-chiplet-2x2",
         {**rs, "placement": [[0], [1], [3], [3]]}, "3"),
        ("soc processor out of range", "rs-tiny-soc3", {**soc, "processors": [0, 1, 7]},
         "processors"),
        ("soc regions overlap", "rs-tiny-soc3",
         {**soc, "regions": [[0, 1], [1, 1], [2, 6]]}, "region"),
    ]


@pytest.mark.parametrize("case", range(24))
def test_verify_refuses_corrupted_solutions_in_one_line(tmp_path, case):
    what, id_, sol, fragment = _corruptions()[case]
    p = _write(tmp_path, "bad.json", json.dumps(sol))
    res = run("verify", id_, str(p))
    one_line_error(res)
    assert re.search(re.escape(fragment), res.stderr, re.I), (what, res.stderr)


def test_verify_refuses_unreadable_and_mismatched_files(tmp_path):
    one_line_error(run("verify", "ca-small-01", str(_write(tmp_path, "a.json", "{core"))),
                   "not JSON")
    one_line_error(run("verify", "ca-small-01", str(_write(tmp_path, "b.json", "[1, 2]"))),
                   "solution")
    other = library.best_known(library.entry("ca-small-02")).path
    one_line_error(run("verify", "ca-small-01", str(other)), "ca-small-02")
    one_line_error(run("verify", "ca-small-01", str(tmp_path / "missing.json")), "no such")
    one_line_error(run("verify", "no-such-instance", str(other)), "unknown name")
    none = _write(tmp_path, "none.json", '{"decision": "core_assignment", "solution": null, '
                  '"status": "time_limit"}')
    one_line_error(run("verify", "ca-small-01", str(none)), "no solution")


def test_verify_accepts_a_solve_out_file_and_says_how_it_compares(tmp_path):
    out = tmp_path / "r.json"
    e = library.entry("op-random-n8-s1")
    res = run("solve", "op_placement", "-i", e.spec, "-c", e.chip_spec, "-m", "heft",
              "--out", str(out), "--json")
    assert res.exit_code == 0, res.output
    res = run("verify", e.id, str(out))
    assert res.exit_code == 0, res.output
    assert "best known" in res.output


# ---------------------------------------------------------------------------------------
# the table


def test_docs_table_is_the_generated_one():
    text = (ROOT / "docs" / "library.md").read_text()
    m = re.search(r"<!-- library-table:begin -->\n(.*?)<!-- library-table:end -->", text,
                  re.S)
    assert m, "docs/library.md has no generated table"
    assert m.group(1) == library.docs_table(), \
        "docs/library.md is stale: python benchmarks/library_build.py --write-docs"


def test_latex_table_escapes_a_polished_chain():
    # a best known polished twice by the same method reads "allocate ×2" (whether the
    # library holds one today depends on its data, so the row is made here)
    row = {"id": "tg-x_1", "size": 3, "size_unit": "layers", "best_known": 1.5,
           "found_by_short": "sa start=best, then allocate ×2", "bound": 1.0,
           "bound_by": "bound", "gap": 0.5, "optimal": False}
    assert "allocate ×2" in library.library_table([row], "md")
    tex = library.library_table([row], "latex")
    assert r"allocate $\times$2" in tex and "×" not in tex and r"tg-x\_1" in tex
    assert r"50.00 \%" in tex


@pytest.mark.parametrize("fmt", ["md", "latex", "csv"])
def test_table_formats(fmt):
    res = run("lib", "table", "--format", fmt)
    assert res.exit_code == 0, res.output
    if fmt == "latex":
        assert res.stdout.count(r"\toprule") == len(library.DECISIONS)
        assert "×" not in res.stdout
    if fmt == "csv":
        lines = res.stdout.strip().splitlines()
        assert len(lines) == len(ENTRIES) + 1
    one_line_error(run("lib", "table", "--format", "html"), "--format")


def test_show_names_how_the_best_known_was_found():
    res = run("lib", "show", "op-random-n8-s1")
    assert res.exit_code == 0, res.output
    assert "best known:" in res.output and "bound:" in res.output
    one_line_error(run("lib", "show", "op-random-n8"), "did you mean")


def test_found_by_runs_reads_back_the_chains_the_polish_writes():
    sa = {"method": "sa", "params": {"start": "best", "tries": 16, "beta": 100.0}}
    polish = {"method": "allocate", "params": {"warm_start": "best known",
                                               "patience": 2000, "from": library.how_found(sa)}}
    again = {"method": "allocate", "params": {
        "warm_start": "the best known at git 877bf28", "patience": 2000, "descents": 3,
        "from": library.from_earlier_best("HEAD~1", 5.653e-12, polish)}}
    assert library.found_by_runs(again) == [
        ("sa", {"start": "best", "tries": "16", "beta": "100"}),
        ("allocate", {"patience": "2000"}), ("allocate", {"patience": "2000", "descents": "3"})]
    assert library.how_found_short(again) == "sa start=best tries=16 beta=100, then allocate ×2"
    assert library.how_found_short(sa) == library.how_found(sa)
    mixed = {"method": "sa", "params": {"warm_start": "best known",
                                        "from": library.how_found(again)}}
    assert library.how_found_short(mixed).endswith(", then allocate ×2, sa")


def test_every_annealed_best_known_says_its_rounds_per_layer():
    """The SA's default β changed (100 → 200): a record whose first run is the SA must
    name its β, or a reader would take today's default for the one it ran with."""
    for e in library.entries("tile_groups"):
        bk = library.best_known(e)
        for method, params in library.found_by_runs(bk.found_by):
            assert method != "sa" or "beta" in params, (e.id, library.how_found(bk.found_by))


def test_show_lists_every_run_behind_a_polished_best_known():
    e = next(e for e in library.entries("tile_groups")
             if len(library.found_by_runs(library.best_known(e).found_by)) > 1)
    runs = library.found_by_runs(library.best_known(e).found_by)
    res = run("lib", "show", e.id)
    assert res.exit_code == 0, res.output
    assert f"found in {len(runs)} runs" in res.output and "(last run: seed" in res.output
    listed = [line.split(". ", 1)[1] for line in res.output.splitlines()
              if line.startswith("    ") and ". " in line]
    assert listed == [library.how_found({"method": m, "params": p}) for m, p in runs]


def test_submit_replaces_only_with_a_better_verified_solution(tmp_path, monkeypatch):
    import shutil

    shutil.copytree(library.LIB_DIR / "op_placement", tmp_path / "op_placement")
    monkeypatch.setattr(library, "LIB_DIR", tmp_path)
    e = library.entry("op-random-n12-s1")
    out = tmp_path / "heft.json"
    res = run("solve", "op_placement", "-i", e.spec, "-c", e.chip_spec, "-m", "single",
              "--out", str(out), "--json")
    assert res.exit_code == 0, res.output
    single = json.loads(res.stdout)["objective"]
    bk = library.best_known(e)
    assert single > bk.objective  # the best known is better than one processor alone
    one_line_error(run("lib", "submit", e.id, str(out), "--by", "single"), "does not beat")
    bk.path.unlink()  # no best known: the verified solution becomes it
    res = run("lib", "submit", e.id, str(out), "--by", "single processor")
    assert res.exit_code == 0, res.output
    new = library.best_known(e)
    assert new.objective == single and new.found_by["method"] == "single processor"
    # and a corrupted one is refused before anything is written
    bad = _write(tmp_path, "bad.json", json.dumps({"assignment": {}, "start": {}}))
    one_line_error(run("lib", "submit", e.id, str(bad), "--by", "x"), "solution")
    assert library.best_known(e).objective == single


def test_lib_run_reports_each_instance_against_its_best_known(tmp_path):
    png = tmp_path / "gaps.png"
    res = run("lib", "run", "op_placement", "-m", "heft,seed003", "--only",
              "op-random-n8-s1,op-random-n8-s2", "--json", "--plot", str(png))
    assert res.exit_code == 0, res.output
    assert png.stat().st_size > 0
    runs = json.loads(res.stdout)["runs"]
    assert [(r["id"], r["method"]) for r in runs] == [
        ("op-random-n8-s1", "heft"), ("op-random-n8-s1", "seed003"),
        ("op-random-n8-s2", "heft"), ("op-random-n8-s2", "seed003")]
    for r in runs:
        # no heuristic beats a proven bound, and the best known is at most its objective
        assert r["objective"] >= r["bound"] * (1 - 1e-9)
        assert r["best_known"] <= r["objective"] * (1 + 1e-9)
    one_line_error(run("lib", "run", "op_placement", "-m", "heft", "--only", "nope"),
                   "--only")
    one_line_error(run("lib", "run", "op_placement", "-m", "nope"), "unknown name")
    one_line_error(run("lib", "run", "op_placement", "-m", "heft,heft"), "distinct")
    one_line_error(run("lib", "run", "op_placement", "-m", "heft", "-p", "beta=1"), "beta")


def test_verify_takes_an_instance_file_outside_the_library(tmp_path):
    src = library.entry("op-random-n8-s1")
    p = tmp_path / "mine.json"
    p.write_text(src.path.read_text())
    res = run("verify", str(p), str(library.best_known(src).path))
    assert res.exit_code == 0, res.output
    assert "no best known" in res.output
    data = json.loads(p.read_text())
    data["chipsched_lib"] = "0.9"
    p.write_text(json.dumps(data))
    one_line_error(run("verify", str(p), str(library.best_known(src).path)), "chipsched_lib")


def test_library_instances_run_everywhere_as_lib_ids(tmp_path):
    """``lib:ID`` is the published instance in solve, compare and bench (the bench
    machinery runs the library), and refuses a chip or option that would change it."""
    from chipsched.api import compare, make_instance
    from chipsched.bench import bench

    inst = make_instance("op_placement", "lib:op-random-n8-s2")
    e = library.entry("op-random-n8-s2")
    assert library.fingerprint(inst) == e.fingerprint
    res = compare("op_placement", inst, ["heft", "cpsat"])
    assert min(r.objective for r in res) == pytest.approx(library.best_known(e).objective)
    suite = {"name": "lib-smoke", "decision": "op_placement",
             "instances": ["lib:op-random-n8-s1", "lib:op-random-n8-s2"],
             "methods": ["heft"], "seeds": 1}
    rows, _ = bench(suite, tmp_path)
    assert [r["status"] for r in rows] == ["feasible", "feasible"]
    with pytest.raises(InputError, match="fixes its chip"):
        make_instance("op_placement", "lib:op-random-n8-s2", "soc-npu-gpu")
    with pytest.raises(InputError, match="is a op_placement instance"):
        make_instance("tile_groups", "lib:op-random-n8-s2")


def test_an_unknown_id_names_the_listing_command_not_every_id():
    # the library holds 105 ids: spelling them all out made a 3,000-character line
    res = run("lib", "show", "nonexistent")
    assert res.exit_code == 2 and "Traceback" not in res.output
    lines = [ln for ln in res.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and len(lines[0]) < 600, res.output
    assert f"{len(ENTRIES)} are known" in lines[0] and "`chipsched lib list`" in lines[0]
    near = run("lib", "show", "tg-resnet50-edge-b8")
    assert "did you mean 'tg-resnet50-v1-edge-b8'" in near.output
