"""region_split figures: period vs sub-chiplets, throughput over frames, placement."""

from __future__ import annotations

import chipsched
from chipsched.heuristics.region_split import simulate, threshold_split
from chipsched.instances.region_split import step_trace
from chipsched.plots.region_split import plot_period_vs_chiplets, plot_placement, plot_throughput


def _png(path) -> bool:
    return path.exists() and path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and \
        path.stat().st_size > 5000


def test_figures_are_written(tmp_path):
    inst = chipsched.make_instance("region_split", "tiny", "chiplet-2x3", objective="period")
    r = chipsched.solve("region_split", inst, "dp")
    p = plot_placement(2, 3, r.solution.placement, tmp_path / "place.png", labels=["a"])
    assert _png(p)
    curves = {"tiny": {"dp": [(1, 2e-4), (4, 8e-5)], "seed000": [(1, 2e-4), (4, 1e-4)]}}
    assert _png(plot_period_vs_chiplets(curves, tmp_path / "pvc.png"))
    soc = chipsched.make_instance("region_split", "tiny", "soc-npu-gpu-cpu", thresholds=0.0)
    regs, procs, _ = threshold_split(soc)
    tr = step_trace([0, 0, 0], [0.5, 0, 0], 1e-3)
    runs = {"static": simulate(soc, regs, procs, 40, trace=tr),
            "realtime": simulate(soc, regs, procs, 40, "realtime", trace=tr)}
    assert _png(plot_throughput(runs, tmp_path / "tp.png", tr.times, [(0.0, 1e-3, 1000.0)]))
    assert not list(tmp_path.glob(".*"))  # no temporary files left behind
