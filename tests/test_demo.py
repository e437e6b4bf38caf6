"""`make demo` is the README's first command: the quick demo runs end to end and writes
every decision's plot."""

from __future__ import annotations

from typer.testing import CliRunner

from chipsched.cli import app


def test_quick_demo_runs_every_decision(tmp_path):
    res = CliRunner().invoke(app, ["demo", "--quick", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    for part in ("6a. region_split", "6b. tile_groups", "6c. op_placement",
                 "6d. core_assignment", "chipsched list DECISION"):
        assert part in res.stdout
    for png in ("resnet50_layer_scaling", "region_split_placement", "tile_groups_st",
                "op_placement_gantt", "core_assignment_heatmap"):
        f = tmp_path / f"{png}.png"
        assert f.is_file() and f.stat().st_size > 1000, png
