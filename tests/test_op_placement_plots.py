"""op_placement Gantt charts: PNG and SVG, one row per core, one bar per op."""

from __future__ import annotations

import pytest

from chipsched.api import solve
from chipsched.errors import InputError
from chipsched.instances.chips import get_chip
from chipsched.instances.op_placement import load_instance
from chipsched.plots.op_placement import plot_gantt


def test_gantt_png_and_svg(tmp_path):
    inst = load_instance("topcuoglu2002", get_chip("soc-npu-gpu-cpu"))
    sol = solve("op_placement", inst, "heft").solution
    png = plot_gantt(inst, sol, tmp_path / "g.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = plot_gantt(inst, sol, tmp_path / "g.svg").read_text()
    assert svg.count("<path") > 10 and "makespan 80" in svg  # the title
    for op in ("n1", "n10"):  # op labels in the bars
        assert f">{op}<" in svg or f"<!-- {op} -->" in svg
    with pytest.raises(InputError, match="unsupported plot format"):
        plot_gantt(inst, sol, tmp_path / "g.gif")
    assert not (tmp_path / "g.gif").exists()


def test_gantt_of_a_network_with_cores_and_control_flow(tmp_path):
    # 4 KiB blocks: the convs are tiled, so there are loop-control (control-flow) ops
    inst = load_instance("tiny", get_chip("soc-npu-gpu-cpu"), block_bytes=4096)
    assert inst.control_flow.any()
    sol = solve("op_placement", inst, "by-class").solution
    svg = plot_gantt(inst, sol, tmp_path / "n.svg").read_text()
    # rows: npu, gpu and the cpu's four cores
    for row in ("npu", "gpu", "cpu:0", "cpu:3"):
        assert f">{row}<" in svg or f"<!-- {row} -->" in svg
    # the time axis reads the makespan with its SI prefix (1–999), here microseconds
    span = solve("op_placement", inst, "by-class").metrics["makespan"]
    assert 1e-6 <= span < 1e-3
    assert "control flow" in svg and "time (µs)" in svg
