"""region_split on the command line: solve prints regions, counts and the grid; compare,
list; bad input is one line and exit 2."""

from __future__ import annotations

import json

from tests.cli_helpers import one_line_error as _one_line_error
from tests.cli_helpers import run


def test_solve_resnet50_default_chip_prints_regions_counts_and_grid():
    res = run("solve", "region_split", "--instance", "resnet50", "--method", "seed000")
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "chiplet-4x4" in out and "chiplets" in out and "regions" in out
    assert "placement on the 4×4 grid" in out
    grid = [line for line in out.splitlines() if line.strip()][-4:]
    cells = [c for line in grid for c in line.split()]
    assert len(cells) == 16 and cells[0] == "0"  # region 0 starts at the top-left corner


def test_solve_json_contract_and_exact_method():
    res = run("solve", "region_split", "-i", "tiny", "-c", "chiplet-2x2", "-m", "dp", "--json",
              "--objective", "cost")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["status"] == "optimal" and d["objective"] == d["metrics"]["cost_s"]
    sol = d["solution"]
    assert sol["regions"][0][0] == 0 and sum(sol["counts"]) <= 4
    assert [len(p) for p in sol["placement"]] == sol["counts"]


def test_solve_on_a_processor_chain():
    res = run("solve", "region_split", "-i", "tiny", "-c", "soc-npu-gpu-cpu",
              "-m", "seed001-realtime")
    assert res.exit_code == 0, res.output
    assert "processor" in res.stdout and "npu" in res.stdout and "background loads" in \
        res.stdout


def test_compare_and_list_show_the_methods():
    res = run("compare", "region_split", "-i", "tiny", "-c", "chiplet-2x2",
              "--methods", "dp,cpsat,milp,seed000,equal-compute", "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    objs = {r["method"]: r["objective"] for r in d["results"]}
    assert abs(objs["dp"] - objs["cpsat"]) <= 1e-6 * objs["dp"]
    assert abs(objs["dp"] - objs["milp"]) <= 1e-6 * objs["dp"]
    assert objs["seed000"] >= objs["dp"] * (1 - 1e-9)
    lst = json.loads(run("list", "--json").stdout)
    assert {"cpsat", "milp", "dp", "bruteforce", "seed000", "seed001-threshold",
            "seed001-history", "seed001-realtime", "equal-layers", "equal-compute"} <= \
        set(lst["decisions"]["region_split"]["methods"])
    assert "seed000" in run("list").stdout


def test_bad_input_one_line_exit_2(tmp_path):
    cyc = tmp_path / "cyc.yaml"
    cyc.write_text("name: cyc\nlayers:\n"
                   "  - {name: a, kind: fc, K: 4, C: 4, inputs: [b]}\n"
                   "  - {name: b, kind: fc, K: 4, C: 4, inputs: [a]}\n")
    _one_line_error(run("solve", "region_split", "-i", str(cyc), "-m", "dp"), "cycle")
    many = tmp_path / "many.yaml"
    many.write_text("region_split:\n  network: tiny\n  max_regions: 40\n")
    _one_line_error(run("solve", "region_split", "-i", str(many), "-m", "dp"),
                    "max_regions", "40 regions asked", "16")
    chain = tmp_path / "chain.yaml"
    chain.write_text("region_split:\n  network: tiny\n  chain: []\n")
    _one_line_error(run("solve", "region_split", "-i", str(chain), "-c", "soc-npu-gpu-cpu",
                        "-m", "dp"), "chain", "length 0")
    neg = tmp_path / "neg.yaml"
    neg.write_text("region_split:\n  network: tiny\n  thresholds: [-0.001, 0.002]\n")
    _one_line_error(run("solve", "region_split", "-i", str(neg), "-c", "soc-npu-gpu-cpu",
                        "-m", "seed001-threshold"), "thresholds", "-0.001")
    _one_line_error(run("solve", "region_split", "-i", "tiny", "-m", "dp", "--objective",
                        "energy"), "objective", "cost, period, latency")
    _one_line_error(run("solve", "region_split", "-i", "tiny", "-m", "dp", "--processors", "3"),
                    "processors", "does not apply")
    _one_line_error(run("solve", "region_split", "-i", "tiny", "-m", "seed001-history"),
                    "needs a processor chain")
    _one_line_error(run("solve", "region_split", "-i", "tiny", "-c", "edge-4x4", "-m",
                        "seed000", "--batch", "0"), "batch")


def test_processor_chain_options_that_are_not_numbers_exit_2():
    """Review findings: -O loads=abc, thresholds=[a,b], a trace given with -O (never
    turned into a trace), NaN or ragged trace entries raised tracebacks."""
    soc = ("-c", "soc-npu-gpu-cpu", "-m", "seed001-history")
    _one_line_error(run("solve", "region_split", "-i", "tiny", *soc, "-O", "loads=abc"),
                    "loads", "'abc'")
    _one_line_error(run("solve", "region_split", "-i", "tiny", *soc, "-O", "thresholds=[a,b]"),
                    "thresholds", "numbers")
    _one_line_error(run("solve", "region_split", "-i", "tiny", *soc, "-O",
                        "trace={times: [0, .nan], loads: [[0, 0, 0], [0.5, 0, 0]]}"),
                    "trace.times")
    _one_line_error(run("solve", "region_split", "-i", "tiny", *soc, "-O",
                        "trace={times: [0, 1], loads: [[0, 0, 0], [0.5, 0]]}"),
                    "trace.loads", "same length")
    ok = run("solve", "region_split", "-i", "tiny", *soc, "--json", "-O",
             "trace={times: [0, 1], loads: [[0, 0, 0], [0.5, 0, 0]]}")
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["status"] == "feasible"
