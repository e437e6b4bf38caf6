"""Issue 13's bad inputs: each ends in one ``error:`` line naming the field, exit 2, no
traceback and nothing written (tests/cli_helpers.one_line_error)."""

from __future__ import annotations

import json
import os
import stat

import pytest
import yaml

from chipsched.errors import InputError
from chipsched.hardware import Hardware
from chipsched.instances.chips import get_chip
from chipsched.instances.networks import get_network
from chipsched.workload import Workload
from tests.cli_helpers import one_line_error, run


def _chip_file(tmp_path, **changes):
    d = get_chip("edge-4x4").to_dict()
    for path, value in changes.items():
        node = d
        *head, last = path.split("__")
        for k in head:
            node = node[k]
        node[last] = value
    f = tmp_path / "chip.yaml"
    f.write_text(yaml.safe_dump(d))
    return f


def _listing(path):
    return sorted(p.name for p in path.iterdir())


@pytest.mark.parametrize("value", [".inf", "-.inf", ".nan"])
def test_non_finite_chip_numbers_name_the_field(tmp_path, value):
    f = _chip_file(tmp_path)
    f.write_text(f.read_text().replace("frequency_ghz: 1.0", f"frequency_ghz: {value}"))
    res = run("show", "chip", str(f))
    one_line_error(res, "unit.frequency_ghz", "finite")


def test_huge_mesh_is_refused_before_anything_is_built(tmp_path):
    res = run("show", "chip", str(_chip_file(tmp_path, mesh__rows=100000, mesh__cols=100000)))
    one_line_error(res, "mesh.rows", "1024")
    res = run("solve", "core_assignment", "-i", "lenet5-neurons", "-c",
              str(_chip_file(tmp_path, mesh__rows=1000, mesh__cols=1000)), "-m", "seed004")
    one_line_error(res, "mesh", "16,384")
    with pytest.raises(InputError, match="16,384"):
        Hardware(name="x", rows=200, cols=200)
    assert get_chip("neuro-128x128").n_nodes == 16_384  # the limit itself is allowed


def test_implausible_layer_dims_and_elems():
    d = get_network("tiny").to_dict()
    d["layers"][0]["K"] = 10 ** 12
    with pytest.raises(InputError, match=r"layers\[\w+\]|K"):
        Workload.from_dict(d, "net")
    d = get_network("tiny").to_dict()
    d["layers"][0]["weight_elems"] = 2 ** 41
    with pytest.raises(InputError, match="weight_elems"):
        Workload.from_dict(d, "net")


def test_implausible_layer_in_a_network_file(tmp_path):
    d = get_network("tiny").to_dict()
    d["layers"][1]["K"] = 10 ** 12
    f = tmp_path / "net.yaml"
    f.write_text(yaml.safe_dump(d))
    one_line_error(run("show", "network", str(f)), "K")


def test_channel_mismatch_along_an_edge_names_the_layer(tmp_path):
    d = get_network("resnet50").to_dict()
    conv = next(i for i, ly in enumerate(d["layers"])
                if ly["kind"] == "conv" and ly.get("inputs"))
    name = d["layers"][conv]["name"]
    d["layers"][conv]["C"] = 99
    f = tmp_path / "net.yaml"
    f.write_text(yaml.safe_dump(d))
    one_line_error(run("show", "network", str(f)), f"layers[{name}].C", "is 99", "set C to")
    # an explicit edge size is the file's own business
    d["layers"][conv]["inputs"] = [{"layer": d["layers"][conv]["inputs"][0], "elems": 1000}]
    assert Workload.from_dict(d, "net").layers


@pytest.mark.parametrize("name", ["resnet50", "googlenet", "inception-resnet-v1",
                                  "pnasnet5-large", "mobilenet-v2", "vgg16", "tiny"])
def test_library_networks_pass_the_channel_check(name):
    w = get_network(name)
    assert Workload.from_dict(w.to_dict(), name).total_macs == w.total_macs


def test_library_network_parameter_types():
    one_line_error(run("show", "network", "resnet50:image_size=abc"), "image_size",
                   "must be an integer")
    one_line_error(run("show", "network", "resnet50:image_size=0"), "image_size", ">= 1")
    one_line_error(run("show", "network", "resnet50:stride_in_1x1=3"), "stride_in_1x1",
                   "true or false")


def test_directory_and_empty_files(tmp_path):
    one_line_error(run("show", "chip", str(tmp_path / "")), str(tmp_path))
    d = tmp_path / "dir.yaml"
    d.mkdir()
    one_line_error(run("show", "chip", str(d)), "is a directory")
    empty = tmp_path / "empty.yaml"
    empty.write_text("\n")
    one_line_error(run("show", "chip", str(empty)), "empty")
    one_line_error(run("show", "network", str(empty)), "empty")


@pytest.mark.parametrize("args, fragment", [
    (["--time-limit", "abc"], "--time-limit"),
    (["--seed", "x"], "--seed"),
    (["--batch", "1.5"], "--batch"),
    (["--bogus", "3"], "--bogus"),
])
def test_usage_errors_are_one_line(args, fragment):
    res = run("solve", "tile_groups", "-i", "tiny", "-m", "ls", *args)
    one_line_error(res, fragment)
    assert "Usage:" not in res.output


def test_missing_option_and_unknown_command_are_one_line():
    one_line_error(run("solve", "tile_groups", "-i", "tiny"), "--method")
    one_line_error(run("frobnicate"), "frobnicate")


def test_out_is_a_directory_nothing_written(tmp_path):
    before = _listing(tmp_path)
    res = run("solve", "tile_groups", "-i", "tiny", "-m", "ls", "--out", str(tmp_path))
    one_line_error(res, "--out", "is a directory")
    assert _listing(tmp_path) == before
    res = run("compare", "tile_groups", "-i", "tiny", "--methods", "ls", "--csv",
              str(tmp_path))
    one_line_error(res, "--csv", "is a directory")
    assert _listing(tmp_path) == before


def test_out_below_a_file(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    res = run("solve", "tile_groups", "-i", "tiny", "-m", "ls", "--out", str(f / "r.json"))
    one_line_error(res, "--out", "is a file")


def test_an_unwritable_folder_is_refused_before_any_work():
    """Review finding: os.access says 'writable' to root on /proc or /sys or a read-only
    mount; the solve ran, then writing raised a PermissionError traceback. The folder is
    now probed by creating a file in it."""
    res = run("solve", "tile_groups", "-i", "tiny", "-m", "ls", "--out", "/proc/r.json")
    one_line_error(res, "--out", "not writable")
    res = run("compare", "tile_groups", "-i", "tiny", "--methods", "ls", "--csv",
              "/proc/r.csv")
    one_line_error(res, "--csv", "not writable")
    one_line_error(run("export", "chip", "edge-4x4", "/proc/chip.yaml"), "not writable")


def test_files_nested_too_deeply_are_one_line_errors(tmp_path):
    """Review finding: a chip file or tree nested thousands deep raised RecursionError."""
    for suffix, text in ((".json", "[" * 100_000 + "]" * 100_000),
                         (".yaml", "[" * 100_000 + "]" * 100_000)):
        f = tmp_path / f"deep{suffix}"
        f.write_text(text)
        one_line_error(run("show", "chip", str(f)), "nested too deeply")
    from chipsched.problems.tile_groups import parse_tree

    with pytest.raises(InputError, match="nested too deeply"):
        parse_tree("T(1)[ " * 5000 + "conv1" + " ]" * 5000, get_network("tiny"))


def test_written_files_are_world_readable(tmp_path):
    out = tmp_path / "r.json"
    old = os.umask(0o022)
    try:
        res = run("solve", "tile_groups", "-i", "tiny", "-m", "ls", "--out", str(out))
    finally:
        os.umask(old)
    assert res.exit_code == 0, res.output
    assert stat.S_IMODE(out.stat().st_mode) == 0o644
    assert json.loads(out.read_text())["method"] == "ls"


def test_bench_out_is_a_file_fails_before_running(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    res = run("bench", "smoke", "--out", str(f))
    one_line_error(res, "--out", "is a file")
    assert f.read_text() == "x"


def test_bench_unreachable_or_malformed_scheduler(tmp_path, monkeypatch):
    import chipsched.bench

    monkeypatch.setattr(chipsched.bench, "SCHEDULER_TIMEOUT_S", 1)  # the wait is idle
    out = tmp_path / "b"
    res = run("bench", "smoke", "--out", str(out), "--scheduler", "tcp://127.0.0.1:1")
    one_line_error(res, "--scheduler", "no Dask scheduler answers")
    res = run("bench", "smoke", "--out", str(out), "--scheduler", "not an address")
    one_line_error(res, "--scheduler", "malformed")
    assert not out.exists()


def test_bench_exits_non_zero_when_a_run_fails_and_keeps_the_rest(tmp_path, monkeypatch):
    """A run that fails while it runs (here: a method crashing on one instance) is an
    error row, the others are kept, the exit code is 1. (A bad instance is bad input,
    refused before anything runs: test_bench_refuses_a_bad_instance_before_running.)"""
    import chipsched.api as api

    real = api.solve

    def crashes_on_tiny_chain(decision, inst, method, **kw):
        if str(getattr(inst, "name", "")).startswith("tiny-chain"):
            raise RuntimeError("a bug in a method")
        return real(decision, inst, method, **kw)

    monkeypatch.setattr(api, "solve", crashes_on_tiny_chain)
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump({
        "name": "mixed", "decision": "tile_groups",
        "instances": ["tiny", "tiny-chain"], "methods": ["ls"],
    }))
    res = run("bench", str(suite), "--out", str(tmp_path / "o"), "--workers", "1")
    assert res.exit_code == 1, res.output
    assert "1 of 2 runs failed" in res.stderr
    import sqlite3

    con = sqlite3.connect(tmp_path / "o" / "results.sqlite")
    statuses = sorted(r[0] for r in con.execute("SELECT status FROM runs"))
    con.close()
    assert len(statuses) == 2 and statuses[0] == "error" and statuses[1] != "error"


def test_bench_refuses_a_bad_instance_before_running(tmp_path):
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump({
        "name": "mixed", "decision": "tile_groups",
        "instances": ["tiny", "resnet50:image_size=abc"], "methods": ["ls"],
    }))
    res = run("bench", str(suite), "--out", str(tmp_path / "o"), "--workers", "1")
    one_line_error(res, "suite mixed", "image_size")
    assert not (tmp_path / "o").exists()


def test_exported_yaml_keeps_unicode(tmp_path):
    out = tmp_path / "c.yaml"
    assert run("export", "chip", "edge-4x4", str(out)).exit_code == 0
    assert "×" in out.read_text(encoding="utf-8") and "\\xD7" not in out.read_text()


def test_list_shows_the_instances_beyond_the_network_library():
    from chipsched.api import make_instance

    res = run("list", "--json")
    cat = json.loads(res.stdout)["instances"]
    specs = {(c["decision"], c["spec"]) for c in cat}
    assert ("op_placement", "topcuoglu2002") in specs
    assert ("core_assignment", "lenet5-neurons") in specs
    for d, spec in [("op_placement", "topcuoglu2002"), ("op_placement", "random:n=8,p=2"),
                    ("core_assignment", "lenet5-neurons"),
                    ("core_assignment", "layered:layers=3,width=10,fanin=4"),
                    ("core_assignment", "stencil:nx=4,ny=4")]:
        assert any(c["decision"] == d and c["spec"].split(":")[0] == spec.split(":")[0]
                   for c in cat), spec
        assert make_instance(d, spec) is not None
    assert "topcuoglu2002" in run("list").stdout


def test_show_network_dims_use_the_file_fields():
    from chipsched.workload import Layer

    res = run("show", "network", "tiny", env={"COLUMNS": "240"})  # one row per layer
    assert res.exit_code == 0
    w = get_network("tiny")
    for ly in w.layers:
        line = next(ln for ln in res.stdout.splitlines() if f" {ly.name} " in ln)
        dims = dict(kv.split("=") for kv in line.split("│")[4].split())
        rebuilt = Layer(ly.name, ly.kind, **{k: int(v) for k, v in dims.items()})
        assert (rebuilt.K, rebuilt.C, rebuilt.H, rebuilt.W, rebuilt.R, rebuilt.S) == \
            (ly.K, ly.C, ly.H, ly.W, ly.R, ly.S)


def test_show_chip_of_a_soc_lists_processors():
    res = run("show", "chip", "soc-npu-gpu-cpu")
    assert res.exit_code == 0
    assert "0 compute units" not in res.stdout and "3 processors" in res.stdout
    assert "→" in res.stdout and "\\u2192" not in res.stdout


@pytest.mark.parametrize("decision, spec, method", [
    ("region_split", "tiny", "dp"), ("core_assignment", "lenet5-neurons", "rowmajor"),
])
def test_solve_plots_only_when_asked(tmp_path, monkeypatch, decision, spec, method):
    monkeypatch.chdir(tmp_path)
    res = run("solve", decision, "-i", spec, "-m", method)
    assert res.exit_code == 0, res.output
    assert list(tmp_path.iterdir()) == []
    res = run("solve", decision, "-i", spec, "-m", method, "--plot", "p.svg")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "p.svg").read_text().lstrip().startswith("<?xml")


def test_plot_with_an_unknown_suffix_is_refused_before_solving(tmp_path):
    one_line_error(run("solve", "tile_groups", "-i", "tiny", "-m", "ls", "--plot",
                       str(tmp_path / "p.docx")), "--plot", ".png")
    assert list(tmp_path.iterdir()) == []


def test_core_assignment_on_a_large_cnn_is_refused_before_building_the_graph():
    import time

    t0 = time.perf_counter()
    res = run("solve", "core_assignment", "-i", "resnet50", "-m", "seed004")
    one_line_error(res, "channels_per_vertex", "edges", "-O channels_per_vertex=")
    assert time.perf_counter() - t0 < 30  # no neuron graph was built


def test_neuron_edge_estimate_tracks_the_built_graph():
    from chipsched.neurongraph.workload import estimate_edges, from_workload

    for name, g in (("lenet5", 1), ("resnet20-cifar", 4)):
        w = get_network(name)
        built = from_workload(w, g).m
        assert built <= estimate_edges(w, g) <= 1.3 * built


def test_plot_on_a_soc_split_is_refused_before_solving(tmp_path):
    out = tmp_path / "r.json"
    res = run("solve", "region_split", "-i", "tiny", "-c", "soc-npu-gpu-cpu", "-m", "dp",
              "--plot", str(tmp_path / "p.png"), "--out", str(out))
    one_line_error(res, "--plot", "SoC")
    assert list(tmp_path.iterdir()) == []


def test_comment_only_yaml_is_empty(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("# nothing here\n")
    one_line_error(run("show", "chip", str(f)), "only comments")


def test_auto_warm_start_makes_warm_only_methods_applicable():
    """cpsat-place needs groups; with no warm start the face's heuristics bring them."""
    from chipsched.api import NotApplicable, make_instance, solve

    inst = make_instance("core_assignment", "stencil:nx=48,ny=48")
    with pytest.raises(NotApplicable, match="groups"):
        solve("core_assignment", inst, "cpsat-place", time_limit=2, auto_warm_start=False)
    r = solve("core_assignment", inst, "cpsat-place", time_limit=2)
    assert r.solution is not None
    assert r.metrics["solver"]["warm_start_from"].startswith("seed004")
    assert r.metrics["solver"]["warm_start_s"] >= 0
