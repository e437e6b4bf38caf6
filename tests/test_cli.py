"""The command line: JSON contracts, tables, and bad input (one line, exit 2, no file)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.cli_helpers import one_line_error as _one_line_error
from tests.cli_helpers import run


def test_list_json_contract():
    res = run("list", "--json")
    assert res.exit_code == 0
    d = json.loads(res.stdout)
    assert set(d["decisions"]) == {"region_split", "tile_groups", "op_placement",
                                   "core_assignment"}
    assert all(isinstance(v["methods"], list) for v in d["decisions"].values())
    assert {"resnet50", "vgg16", "mobilenet-v2", "googlenet", "bert-base", "transformer-base",
            "inception-resnet-v1", "pnasnet5-mobile", "tiny"} <= set(d["networks"])
    assert {"edge-4x4", "cloud-12x12", "soc-npu-gpu-cpu"} <= set(d["chips"])


def test_list_table():
    res = run("list")
    assert res.exit_code == 0 and "resnet50" in res.stdout and "cloud-12x12" in res.stdout


def test_show_network():
    res = run("show", "network", "resnet50", "--json")
    d = json.loads(res.stdout)
    assert d["summary"]["macs"] == 4_089_184_256 and len(d["layers"]) == 72
    res = run("show", "network", "tiny")
    assert res.exit_code == 0 and "conv3b" in res.stdout and "MACs" in res.stdout
    res = run("show", "network", "bert-base:seq_len=64", "--summary")
    assert res.exit_code == 0 and "bert-base" in res.stdout


def test_show_chip_and_schema():
    d = json.loads(run("show", "chip", "cloud-12x12", "--json").stdout)
    assert d["derived"]["units"] == 144 and d["unit"]["energy"]["mac_pj"] == 0.018
    out = run("show", "chip", "edge-4x4").stdout
    assert "16 compute units" in out and "pes: 16" in out
    s = json.loads(run("schema", "chip").stdout)
    assert s["title"] == "chipsched chip" and "mesh" in s["properties"]
    s = json.loads(run("schema", "network").stdout)
    assert "layers" in s["properties"]


def test_export_and_load_back(tmp_path):
    chip = tmp_path / "mychip.yaml"
    assert run("export", "chip", "edge-4x4", str(chip)).exit_code == 0
    d = json.loads(run("show", "chip", str(chip), "--json").stdout)
    assert d["name"] == "edge-4x4"
    net = tmp_path / "net.json"
    assert run("export", "network", "tiny", str(net)).exit_code == 0
    d = json.loads(run("show", "network", str(net), "--json").stdout)
    assert d["summary"]["layers"] == 7


def test_unknown_names_suggest(tmp_path):
    _one_line_error(run("show", "network", "resnet51"), "unknown name 'resnet51'",
                    "did you mean 'resnet50'")
    _one_line_error(run("show", "chip", "cloud-12x13"), "did you mean 'cloud-12x12'")
    _one_line_error(run("schema", "chips"), "did you mean 'chip'")
    _one_line_error(run("solve", "tile_group", "-i", "tiny", "-m", "sa"),
                    "did you mean 'tile_groups'")


def test_bad_files(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nmesh: {rows: 2, cols: [\n")
    _one_line_error(run("show", "chip", str(bad)), str(bad), "malformed YAML")
    neg = tmp_path / "neg.yaml"
    neg.write_text("name: x\nmesh: {rows: 2, cols: -2}\ncore_capacity: 4\n")
    _one_line_error(run("show", "chip", str(neg)), "mesh.cols", ">= 1")
    js = tmp_path / "bad.json"
    js.write_text('{"name": "x", "layers": [}')
    _one_line_error(run("show", "network", str(js)), "malformed JSON")
    cyc = tmp_path / "cyc.yaml"
    cyc.write_text("layers:\n - {name: a, kind: conv, in_elems: 4, inputs: [b]}\n"
                   " - {name: b, kind: conv, inputs: [a]}\n")
    _one_line_error(run("show", "network", str(cyc)), "cycle")
    neg_layer = tmp_path / "negl.yaml"
    neg_layer.write_text("layers:\n - {name: a, kind: conv, K: -3, in_elems: 4}\n")
    _one_line_error(run("show", "network", str(neg_layer)), "layers.0.K")
    onnx_file = tmp_path / "garbage.onnx"
    onnx_file.write_bytes(b"\x00\xffnot an onnx model at all")
    _one_line_error(run("show", "network", str(onnx_file)), "garbage.onnx")
    _one_line_error(run("show", "network", str(tmp_path / "missing.yaml")), "file not found")


def test_no_half_written_output(tmp_path):
    out = tmp_path / "chip.txt"
    _one_line_error(run("export", "chip", "edge-4x4", str(out)), "unsupported output format")
    assert not out.exists()
    out = tmp_path / "res.json"
    _one_line_error(run("solve", "tile_groups", "-i", "nosuchnet", "-m", "x", "--out", str(out)))
    assert not out.exists() and not list(tmp_path.iterdir())


def test_list_json_has_no_scaffolding_keys():
    d = json.loads(run("list", "--json").stdout)["decisions"]
    assert all(set(info) == {"methods"} and info["methods"] for info in d.values())
    _one_line_error(run("solve", "tile_group", "-i", "tiny", "-m", "x"),
                    "decision: unknown name 'tile_group'", "did you mean 'tile_groups'")


@pytest.mark.parametrize("args", [["show", "network", "nope"], ["show", "chip", "x.yaml"]])
def test_real_process_exit_code_and_no_traceback(args):
    p = subprocess.run([sys.executable, "-m", "chipsched.cli", *args], capture_output=True,
                       text=True, timeout=120)
    assert p.returncode == 2
    assert p.stderr.startswith("error: ") and p.stderr.count("\n") == 1
    assert "Traceback" not in p.stderr and p.stdout == ""


def test_method_parameters_from_the_command_line():
    res = run("list", "tile_groups", "--json")
    assert res.exit_code == 0, res.output
    sa = {m["name"]: m for m in json.loads(res.stdout)["methods"]}["sa"]
    beta = {p["name"]: p for p in sa["params"]}["beta"]
    assert beta["default"] == 400 and beta["type"] == "float" and beta["range"] == "> 0"
    assert beta["doc"].startswith("rounds per layer")
    few = run("solve", "tile_groups", "-i", "tiny", "-c", "edge-4x4", "--batch", "2",
              "-m", "sa", "-p", "beta=2", "--json")
    assert few.exit_code == 0, few.output
    # β rounds per layer and try: β = 2 on the 7-layer tiny net is 14 rounds × 8 tries
    solver = json.loads(few.stdout)["metrics"]["solver"]
    assert [t["iterations"] for t in solver["tries"]] == [2 * 7] * 8
    _one_line_error(run("solve", "tile_groups", "-i", "tiny", "-c", "edge-4x4", "-m", "sa",
                        "-p", "colour=red"), "parameter 'colour'", "beta")
    _one_line_error(run("solve", "tile_groups", "-i", "tiny", "-c", "edge-4x4", "-m", "sa",
                        "-p", "beta"), "--param", "name=value")


def test_instance_options_from_the_command_line():
    res = run("solve", "tile_groups", "-i", "tiny", "-c", "tiled-2x2", "--batch", "2",
              "-m", "ls", "-O", "weight_accounting=set", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["instance"].endswith("/b2/set-weights")
    _one_line_error(run("solve", "tile_groups", "-i", "tiny", "-c", "tiled-2x2", "-m", "ls",
                        "-O", "weight_accounting=tangram"), "weight_accounting", "per_run")
    _one_line_error(run("solve", "tile_groups", "-i", "tiny", "-m", "ls", "-O", "colour=1"),
                    "option 'colour'", "weight_accounting")
    _one_line_error(run("solve", "tile_groups", "-i", "tiny", "-m", "ls", "-O", "batch"),
                    "--option", "name=value")


def test_compare_routes_parameters_to_the_methods_that_take_them():
    res = run("compare", "tile_groups", "-i", "tiny", "-c", "edge-4x4", "--batch", "2",
              "--methods", "ls,sa", "-p", "beta=2", "--json")
    assert res.exit_code == 0, res.output
    by = {r["method"]: r for r in json.loads(res.stdout)["results"]}
    assert by["sa"]["metrics"]["solver"]["iterations"] == 14 * 8  # β × layers × tries
    _one_line_error(run("compare", "tile_groups", "-i", "tiny", "-c", "edge-4x4",
                        "--methods", "ls,lp", "-p", "beta=2"), "parameter 'beta'")


@pytest.mark.parametrize("args", [
    ["region_split", "-i", "tiny"],
    ["tile_groups", "-i", "tiny-chain", "--batch", "2"],
    ["op_placement", "-i", "tiny"],
    ["core_assignment", "-i", "layered:layers=3,width=3,fanin=2,seed=0", "-c", "neuro-2x3-k2",
     "--time-limit", "2"],
])
def test_compare_without_methods_runs_everything_and_never_aborts(args):
    res = run("compare", *args, "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    statuses = {r["method"]: r["status"] for r in d["results"]}
    assert "skipped" in statuses.values() and "error" not in statuses.values(), statuses
    assert d["objective"]["unit"] and d["objective"]["name"]
    assert all(r["message"] for r in d["results"] if r["status"] == "skipped")
    if args[0] == "region_split":  # the table form, once
        table = run("compare", *args)
        assert table.exit_code == 0 and "skipped: needs a processor chain" in table.stdout
        # the title wraps with the terminal's width
        assert "objective period (s); exact and bound methods 10 s each" in \
            " ".join(table.stdout.split())


def test_compare_exits_1_when_no_method_finds_a_solution():
    res = run("compare", "tile_groups", "-i", "tiny", "--methods", "given,bruteforce")
    assert res.exit_code == 1 and "no method produced a solution" in res.stderr
    assert "the instance has no given tree" in res.stdout


@pytest.mark.parametrize("param,fragment", [
    ("beta=abc", "parameter beta of tile_groups/sa: must be a number, got 'abc'"),
    ("t0=nan", "parameter t0 of tile_groups/sa: must be a finite number"),
    ("beta=-5", "parameter beta of tile_groups/sa: -5 is out of range; give a float > 0"),
    ("beta=0", "out of range"),
    ("space=everything", "'everything' is not allowed; give one of full, ls, lp"),
    ("iterations=2.5", "must be an integer"),
])
def test_bad_parameter_values_are_one_line(param, fragment):
    _one_line_error(run("solve", "tile_groups", "-i", "tiny", "-m", "sa", "-p", param),
                    fragment)
    _one_line_error(run("compare", "tile_groups", "-i", "tiny", "--methods", "ls,sa",
                        "-p", param), fragment)


def test_a_method_that_does_not_apply_is_refused_by_solve():
    _one_line_error(run("solve", "region_split", "-i", "tiny", "-m", "seed001-history"),
                    "does not apply to tiny@chiplet-4x4", "needs a processor chain")


def test_a_result_file_is_a_warm_start(tmp_path):
    out = tmp_path / "ls.json"
    res = run("solve", "tile_groups", "-i", "tiny", "-m", "ls", "--out", str(out), "--json")
    assert res.exit_code == 0, res.output
    ls = json.loads(out.read_text())["objective"]
    res = run("solve", "tile_groups", "-i", "tiny", "-m", "sa", "-p", "beta=1",
              "--warm-start", str(out), "--json")
    d = json.loads(res.stdout)
    assert d["metrics"]["solver"]["warm_start_from"] == str(out)
    assert d["objective"] <= ls  # the SA never returns a tree worse than its start
    _one_line_error(run("solve", "tile_groups", "-i", "tiny", "-m", "ls",
                        "--warm-start", str(out)), "tile_groups/ls takes no warm start")
    _one_line_error(run("solve", "tile_groups", "-i", "tiny", "-m", "sa",
                        "--warm-start", "nope.json"), "neither a tile_groups method nor a "
                    "result file")


def test_list_decision_shows_declared_parameters():
    res = run("list", "core_assignment")
    assert res.exit_code == 0
    for text in ("merge_fraction", "tries", "groups", "(≥ 1)", "(takes --warm-start)"):
        assert text in res.stdout, text
    d = json.loads(run("list", "region_split", "--json").stdout)
    by = {m["name"]: m for m in d["methods"]}
    assert by["seed000"]["platforms"] == ["chiplet"]
    assert {p["name"] for p in by["dp"]["params"]} == {"max_ideals", "order_only", "placement",
                                                       "placement_time_limit"}
    assert set(d["platforms"]) == {"chiplet", "soc"}
