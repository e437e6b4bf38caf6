"""core_assignment from the command line (solve, compare, list; bad input → one line, exit
2, nothing written), named instances, and the heat-map plot."""

from __future__ import annotations

import json

import numpy as np
import pytest

from chipsched.instances.chips import get_chip
from chipsched.instances.core_assignment import NAMED, fit_mesh, load_instance
from chipsched.problems.core_assignment import evaluate
from tests.cli_helpers import one_line_error as _bad
from tests.cli_helpers import run as cli_run

TINY = {"name": "tiny6", "graph": {"sizes": [1, 1, 1, 1, 1, 1],
                                   "edges": [[0, 1, 5], [1, 2, 3], [2, 3, 4], [3, 4, 1],
                                             [4, 5, 2], [0, 5, 1], [1, 4, 2]]},
        "cores": {"rows": 2, "cols": 3, "capacity": 2}}


def run(*args: str):
    return cli_run(*args, env={"COLUMNS": "200"})


@pytest.fixture
def tiny(tmp_path):
    p = tmp_path / "tiny.json"
    p.write_text(json.dumps(TINY))
    return p


def test_solve_json_and_table(tiny, tmp_path):
    res = run("solve", "core_assignment", "-i", str(tiny), "-m", "cpsat", "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["status"] == "optimal" and d["objective"] == d["bound"] == 8.0
    assert len(d["solution"]["core"]) == 6 and d["metrics"]["cut_weight"] >= 6
    res = run("solve", "core_assignment", "-i", str(tiny), "-m", "seed004",
              "--objective", "cut", "--out", str(tmp_path / "r.json"))
    assert res.exit_code == 0 and "cut weight" in res.stdout and "core load" in res.stdout
    back = json.loads((tmp_path / "r.json").read_text())
    assert (back["objective_name"], back["objective_unit"]) == ("cut", "w")


def test_compare_table_has_objective_bound_gap_time(tiny, tmp_path):
    res = run("compare", "core_assignment", "-i", str(tiny), "--methods",
              "cpsat,milp,bruteforce,seed004,metis", "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    by = {r["method"]: r for r in d["results"]}
    assert by["cpsat"]["objective"] == by["milp"]["objective"] == by["bruteforce"]["objective"]
    assert d["best_bound"] == by["cpsat"]["objective"]
    assert all(by[m]["objective"] >= d["best_bound"] for m in by)
    res = run("compare", "core_assignment", "-i", str(tiny), "--methods", "cpsat,seed004",
              "--csv", str(tmp_path / "c.csv"))
    assert res.exit_code == 0
    for col in ("objective", "bound", "gap", "time"):
        assert col in res.stdout
    assert (tmp_path / "c.csv").read_text().splitlines()[0].startswith("decision,instance")


def test_list_shows_the_methods():
    res = run("list", "--json")
    ms = json.loads(res.stdout)["decisions"]["core_assignment"]["methods"]
    assert {"seed004", "seed004-plus", "cpsat", "milp", "bnb-place", "metis", "kahip", "faq",
            "2opt", "rowmajor", "random", "bruteforce"} <= set(ms)
    assert {"lenet5", "vgg11-cifar", "resnet20-cifar"} <= set(json.loads(res.stdout)["networks"])


@pytest.mark.parametrize("content, frag", [
    ({**TINY, "graph": {"sizes": [1, 9], "edges": []}}, "more than a core's capacity 2"),
    ({**TINY, "graph": {"sizes": [2] * 7, "edges": []}}, "exceeds the array's 2×3×2"),
    ({**TINY, "graph": {"sizes": [1, 1], "edges": [[0, 1, -4]]}}, "less than the minimum"),
])
def test_bad_instances_exit_2_and_write_nothing(tmp_path, content, frag):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(content))
    out = tmp_path / "result.json"
    res = run("solve", "core_assignment", "-i", str(p), "-m", "seed004", "--out", str(out))
    _bad(res, frag)
    assert not out.exists()


def test_corrupt_files_and_wrong_chip_exit_2(tmp_path):
    z = tmp_path / "g.zip"
    z.write_bytes(b"PK\x03\x04 not really a zip")
    _bad(run("solve", "core_assignment", "-i", str(z), "-m", "seed004"), "corrupt seed-004 zip")
    g = tmp_path / "g.graph"
    g.write_text("3 1\n2\n1\n")
    _bad(run("solve", "core_assignment", "-i", str(g), "-m", "seed004"), "g.graph")
    _bad(run("solve", "core_assignment", "-i", "lenet5-neurons", "-c", "edge-4x4", "-m",
             "seed004"), "has no core_capacity")
    _bad(run("solve", "core_assignment", "-i", "lenet5", "-c", "neuro-2x2", "-m", "seed004"),
         "exceeds the array's 2×2×256")
    _bad(run("solve", "core_assignment", "-i", "lenet5-neuronz", "-m", "seed004"),
         "did you mean 'lenet5-neurons'")


def test_more_parts_than_cores_are_fitted_and_only_a_graph_too_large_fails(tmp_path):
    """Issue 11: seed 004's partition of this tight chip has more groups than cores; the
    groups are now fitted to the cores instead of failing. A graph larger than the array
    still fails in one line."""
    p = tmp_path / "tight.json"
    rng = np.random.default_rng(0)
    edges = [[int(a), int(b), 1] for a, b in rng.integers(0, 15, (40, 2)) if a != b]
    p.write_text(json.dumps({"graph": {"sizes": [1] * 15, "edges": edges},
                             "cores": {"rows": 2, "cols": 3, "capacity": 3}}))
    res = run("solve", "core_assignment", "-i", str(p), "-m", "seed004", "--json")
    assert res.exit_code == 0, res.output
    core = json.loads(res.stdout)["solution"]["core"]
    assert max(core) < 6 and max(np.bincount(core)) <= 3
    p.write_text(json.dumps({"graph": {"sizes": [1] * 15, "edges": edges},
                             "cores": {"rows": 2, "cols": 3, "capacity": 2}}))
    _bad(run("solve", "core_assignment", "-i", str(p), "-m", "seed004"), "exceeds")


def test_named_instances_fit_their_arrays():
    hw = get_chip("neuro-8x8")
    inst = load_instance("lenet5-neurons", hw)
    assert (inst.rows, inst.cols) == fit_mesh(inst.graph.total_size, 256) == (8, 9)
    assert inst.graph.n == 9118 and inst.weight_bytes == 1
    assert set(NAMED) == {"lenet5-neurons", "vgg-cifar-neurons", "resnet-cifar-neurons"}
    g = load_instance("stencil:nx=20,ny=20", hw)
    assert g.graph.n == 400 and g.n_cores * 256 >= 2 * 400


def test_heatmap_plot(tmp_path, tiny):
    from chipsched.api import solve
    from chipsched.plots.core_assignment import plot_mesh_heatmap
    inst = load_instance(str(tiny), get_chip("neuro-8x8"))
    r = solve("core_assignment", inst, "seed004-plus")
    for suffix in ("png", "svg"):
        p = plot_mesh_heatmap(inst, r.solution, tmp_path / f"h.{suffix}")
        assert p.stat().st_size > 1000
    assert (tmp_path / "h.svg").read_text().lstrip().startswith("<?xml")
    assert evaluate(inst, r.solution)[0] == r.objective


@pytest.mark.parametrize("suffix", [".graph", ".zip"])
def test_valid_metis_and_zip_files_solve_from_the_cli(tmp_path, suffix):
    """Review finding: every METIS or seed-004 zip file given to ``-i`` crashed with a
    TypeError (a ``source`` keyword clashed with make_instance's argument)."""
    from chipsched.api import make_instance, solve
    from chipsched.instances.core_assignment import write_metis, write_zip
    from chipsched.neurongraph import layered_random

    g = layered_random(3, 40, 4, seed=3)
    f = tmp_path / f"g{suffix}"
    (write_metis if suffix == ".graph" else write_zip)(f, g)
    res = run("solve", "core_assignment", "-i", str(f), "-m", "seed004", "--json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.output)
    ref = solve("core_assignment", make_instance("core_assignment", g, "neuro-8x8"), "seed004")
    assert got["status"] == "feasible" and got["objective"] == ref.objective
