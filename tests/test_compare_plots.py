"""Pictures of several runs: ``chipsched compare --plot`` and ``solve --plot`` of a run
without a solution (a bound). tile_groups draws energy against latency over the bound's
envelope E*(D) with the curves objective = bound and objective = best found; the other
decisions every run's objective against the best bound."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chipsched
from chipsched.objective import Objective
from tests.cli_helpers import one_line_error, run


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 3), m=st.integers(0, 3), value=st.floats(1e-15, 1e3),
       d=st.floats(1e-6, 10.0))
def test_iso_objective_lies_on_the_objective_level(n, m, value, d):
    """objective(E(D), D) == value on the curve the plot draws through the bound."""
    from chipsched.plots.tile_groups import iso_objective

    obj = Objective("e^n d^m", "", terms=(("energy", n), ("latency", m)))
    e = iso_objective(obj, value, [d])[0]
    assert obj(e, d) == pytest.approx(value, rel=1e-9)


def test_iso_objective_is_nan_where_no_energy_reaches_the_value():
    """A weighted sum whose latency term alone exceeds the value has no point there."""
    from chipsched.plots.tile_groups import iso_objective

    obj = Objective("e+d", "", terms=(("energy", 1.0), ("latency", 1.0)), form="sum")
    out = iso_objective(obj, 1.0, [0.5, 2.0])
    assert out[0] == pytest.approx(0.5, rel=1e-9) and math.isnan(out[1])


def test_compare_plot_draws_every_run_over_the_envelope(tmp_path):
    """compare --plot (tile_groups): the picture is written; each tree drawn lies on or
    above the bound's envelope and on or above the curve objective = bound."""
    inst = chipsched.make_instance("tile_groups", "tiny-chain", chip="edge-4x4", batch=4)
    results = chipsched.compare("tile_groups", inst, ["ls", "lp", "bound"])
    from chipsched.instances.tile_groups import _envelope, plot_compare

    env = sorted(_envelope(next(r for r in results if r.method == "bound")))
    bound = next(r.bound for r in results if r.method == "bound")
    for r in results:
        if r.solution is None:
            continue
        d, e = r.metrics["latency_s"], r.metrics["energy_j"]
        above = [ee for dd, ee in env if dd >= d * (1 - 1e-12)]
        assert e >= (above[0] if above else env[-1][1]) * (1 - 1e-9)
        assert inst.objective(e, d) >= bound * (1 - 1e-9)
    out = plot_compare(inst, results, tmp_path / "c.png", best_bound=bound,
                       best_found=min(r.objective for r in results if r.objective))
    assert out.stat().st_size > 10_000


def test_compare_cli_plot_and_solve_bound_plot(tmp_path):
    res = run("compare", "tile_groups", "-i", "tiny-chain", "--batch", "4", "--methods",
              "ls,bound", "--plot", str(tmp_path / "c.svg"))
    assert res.exit_code == 0, res.output
    assert "plot written to" in res.output
    assert (tmp_path / "c.svg").read_text().lstrip().startswith("<?xml")
    # a bound has no tree to draw: solve --plot draws its envelope instead of nothing
    res = run("solve", "tile_groups", "-i", "tiny-chain", "--batch", "4", "-m", "bound",
              "--plot", str(tmp_path / "b.svg"))
    assert res.exit_code == 0, res.output
    assert (tmp_path / "b.svg").read_text().lstrip().startswith("<?xml")


def test_compare_plot_of_another_decision_draws_objectives_against_the_bound(tmp_path):
    res = run("compare", "region_split", "-i", "tiny", "--methods", "dp,cpsat",
              "--plot", str(tmp_path / "r.png"), "--format", "markdown")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "r.png").stat().st_size > 5_000
    assert "plot written to" in res.stderr  # stdout holds the markdown table only
    assert "plot written" not in res.stdout


def test_compare_plot_with_an_unknown_suffix_is_refused_before_running(tmp_path):
    one_line_error(run("compare", "tile_groups", "-i", "tiny", "--methods", "ls", "--plot",
                       str(tmp_path / "p.docx")), "--plot", ".png")
    assert list(tmp_path.iterdir()) == []


def test_a_run_with_nothing_to_draw_says_so(tmp_path):
    """A run with neither objective nor bound draws nothing and says why; no file."""
    from chipsched.cli import _plot_runs
    from chipsched.registry import registry
    from chipsched.result import Result, Status

    dec = registry().decision("tile_groups")
    r = Result(decision="tile_groups", method="bound", instance="x", status=Status.ERROR)
    msg = _plot_runs(dec, None, [r], tmp_path / "n.png", "t")
    assert msg.startswith("nothing drawn") and not (tmp_path / "n.png").exists()
