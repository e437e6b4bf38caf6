"""Figures of region_split: period vs sub-chiplets, throughput over time, grid placement."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.plots import _figure, save_figure


def plot_period_vs_chiplets(curves: Mapping[str, Mapping[str, Sequence[tuple[int, float]]]],
                            path: str | os.PathLike[str], title: str = "") -> Path:
    """Period (µs) against the number of sub-chiplets, one panel per network.

    ``curves[network][method]`` = [(sub-chiplets, period in seconds), …].
    """
    nets = list(curves)
    cols = min(3, len(nets))
    rows = -(-len(nets) // cols)
    fig, axes = _figure(4.2 * cols, 3.2 * rows)
    fig.clf()
    axs = fig.subplots(rows, cols, squeeze=False)
    styles = {"dp": ("k", "-", "o"), "seed000": ("tab:red", "--", "s"),
              "equal-compute": ("tab:blue", ":", "^"), "equal-layers": ("tab:green", ":", "v")}
    for k, net in enumerate(nets):
        ax = axs[k // cols][k % cols]
        for method, pts in curves[net].items():
            if not pts:
                continue
            x, y = zip(*sorted(pts), strict=True)
            c, ls, mk = styles.get(method, (None, "-", "."))
            ax.plot(x, np.array(y) * 1e6, color=c, ls=ls, marker=mk, ms=3,
                    label="optimum (dp)" if method == "dp" else method)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_title(net, fontsize=9)
        ax.set_xlabel("sub-chiplets M")
        ax.set_ylabel("period (µs)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=6)
    for k in range(len(nets), rows * cols):
        axs[k // cols][k % cols].axis("off")
    if title:
        fig.suptitle(title, fontsize=10)
    return save_figure(fig, path)


def plot_throughput(runs: Mapping[str, Any], path: str | os.PathLike[str],
                    phase_times: Sequence[float] = (),
                    optimum_fps: Sequence[tuple[float, float, float]] = (),
                    title: str = "") -> Path:
    """Throughput against simulated time of runs (``SimulationResult`` by label).

    The x-axis is when frames complete (ms), so runs that progress at different speeds
    line up with the load phases: ``phase_times`` (s) are drawn as vertical lines and
    ``optimum_fps`` as steps (start s, end s, frames/s of the exact optimum).
    """
    fig, ax = _figure(7.0, 3.8)
    window = 0
    for label, sim in runs.items():
        ax.plot(sim.end * 1e3, sim.throughput, lw=1.0, label=label)
        window = sim.tp_window
    for t in phase_times[1:]:
        ax.axvline(t * 1e3, color="grey", lw=0.6, ls="--")
    for a, b, v in optimum_fps:
        ax.hlines(v, a * 1e3, b * 1e3, colors="k", lw=1.2, linestyles=":")
    if optimum_fps:
        ax.plot([], [], "k:", label="exact optimum for the phase's loads")
    ax.set_xlabel("time (ms, simulated)")
    ax.set_ylabel(f"throughput (frames/s, last {window} frames)")
    ax.set_title(title or "throughput under a changing background load", fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return save_figure(fig, path)


def plot_placement(rows: int, cols: int, placement: Sequence[Sequence[int]],
                   path: str | os.PathLike[str], labels: Sequence[str] | None = None,
                   title: str = "") -> Path:
    """The chiplet grid coloured by region, the region number in each sub-chiplet, and
    arrows along the serpentine order of the regions."""
    import matplotlib.pyplot as plt

    # room on the right for the region → layers key, sized by its longest line
    key_w = 0.06 * max((len(f"{r}: {lab}") for r, lab in enumerate(labels or ())),
                       default=0)
    grid_w = 0.8 * cols + 1.5
    fig, ax = _figure(max(grid_w + key_w, 6.0), 0.8 * rows + 1.2)
    grid = np.full((rows, cols), -1)
    for r, nodes in enumerate(placement):
        for v in nodes:
            grid[v // cols, v % cols] = r
    cmap = plt.get_cmap("tab20", max(len(placement), 1))
    img = np.ma.masked_less(grid, 0)
    ax.imshow(img, cmap=cmap, vmin=-0.5, vmax=max(len(placement), 1) - 0.5)
    for i in range(rows):
        for j in range(cols):
            ax.text(j, i, "·" if grid[i, j] < 0 else str(grid[i, j]), ha="center",
                    va="center", fontsize=8)
    cent = [np.mean([divmod(v, cols) for v in nodes], axis=0) for nodes in placement if nodes]
    for a, b in zip(cent, cent[1:], strict=False):
        ax.annotate("", xy=(b[1], b[0]), xytext=(a[1], a[0]),
                    arrowprops={"arrowstyle": "->", "color": "k", "lw": 0.8})
    ax.set_xticks(range(cols))
    ax.set_yticks(range(rows))
    ax.set_title(title or f"regions on the {rows}×{cols} grid (serpentine)", fontsize=9)
    if labels:
        txt = "\n".join(f"{r}: {lab}" for r, lab in enumerate(labels))
        ax.text(1.04, 1.0, txt, fontsize=6, va="top", ha="left", transform=ax.transAxes)
    return save_figure(fig, path)
