"""Plots (PNG/SVG by the file suffix), written atomically."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.errors import InputError


def _figure(width: float = 6.4, height: float = 4.0) -> tuple[Any, Any]:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(width, height), constrained_layout=True)


def save_figure(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Save as PNG or SVG (by suffix) through a temporary file, then close the figure."""
    import matplotlib.pyplot as plt

    from chipsched.files import atomic_write

    p = Path(path)
    fmt = p.suffix.lower().lstrip(".")
    if fmt not in ("png", "svg", "pdf"):
        raise InputError(str(p), "unsupported plot format", "use .png, .svg or .pdf")
    try:
        atomic_write(p, lambda fh: fig.savefig(fh, format=fmt, dpi=150), mode="wb")
    finally:
        plt.close(fig)
    return p


#: marker shapes cycled over a plot's methods (methods on one point stay apart)
MARKERS = "os^vD<>pPX*h"


def plain_log_axis(axis: Any, values: Sequence[float]) -> None:
    """Label a log-scaled ``axis`` with plain numbers ("4, 6, 10", not "4×10⁰"); the
    minor ticks get labels too when ``values`` span less than a factor of 20 (a short
    range has no major tick inside it)."""
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda x, _pos: f"{x:g}")
    axis.set_major_formatter(plain)
    pos = [v for v in values if v and v > 0]
    if pos and max(pos) < 20 * min(pos):
        axis.set_minor_formatter(plain)


def short_log_ticks(axis: Any) -> None:
    """Ticks of a log-scaled ``axis`` at 1, 2 and 5 of each decade, labelled "2e-06"
    (short, so neighbours do not overlap), minor ticks unlabelled."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axis.set_major_formatter(FuncFormatter(lambda x, _pos: f"{x:.3g}"))
    axis.set_minor_formatter(NullFormatter())


def plot_layer_scaling(table: Any, layers: Sequence[int], path: str | os.PathLike[str],
                       batch: int = 1, title: str = "") -> Path:
    """Compute time of selected layers vs number of units, from a LayerTable."""
    fig, ax = _figure()
    j = table.batch_index(batch)
    g = np.arange(1, table.max_units + 1)
    for layer in layers:
        t = table.compute_s[layer, :, j]
        ax.loglog(g, t / t[0], label=table.layer_names[layer])
    ax.loglog(g, 1 / g, "k--", lw=0.8, label="ideal 1/g")
    ax.set_xlabel("units g")
    ax.set_ylabel("compute time / time on 1 unit")
    ax.set_title(title or f"intra-layer scaling, sub-batch {batch}")
    ax.legend(fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    return save_figure(fig, path)


def plot_library_gaps(runs: Sequence[Any], path: str | os.PathLike[str],
                      title: str = "") -> Path:
    """Each method's objective / best known against instance size (``chipsched lib run
    --plot``): one marker per run, log-scaled size; 1 is the best known, and the
    instance's bound / best known is drawn below as a grey tick (the optimum lies
    between the tick and 1)."""
    fig, ax = _figure()
    methods = sorted({r["method"] for r in runs})
    for k, m in enumerate(methods):
        pts = [(r["size"], r["objective"] / r["best_known"]) for r in runs
               if r["method"] == m and r["objective"] is not None and r["best_known"]]
        if pts:
            x, y = zip(*pts, strict=True)
            ax.scatter(x, y, marker=MARKERS[k % len(MARKERS)], label=m, alpha=0.8)
    lows = [(r["size"], r["bound"] / r["best_known"]) for r in runs
            if r["bound"] is not None and r["best_known"]]
    if lows:
        x, y = zip(*lows, strict=True)
        ax.scatter(x, y, marker="_", color="grey", s=120, label="bound / best known")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xscale("log")
    plain_log_axis(ax.xaxis, [r["size"] for r in runs])
    ax.set_xlabel(f"instance size ({runs[0]['size_unit']})" if runs else "instance size")
    ax.set_ylabel("objective / best known")
    ax.set_title(title)
    ax.legend(fontsize="small")
    return save_figure(fig, path)


def plot_methods(results: Sequence[Any], path: str | os.PathLike[str], title: str = "",
                 label: str = "objective", *, best_bound: float | None = None,
                 best_found: float | None = None) -> Path:
    """The three numbers of a ``chipsched compare`` run as a picture (``--plot``): one row
    per method with every run's objective (one marker per seed) and its bound as a tick
    (a tick of a restricted space bounds that space only), the best found and the best
    proven bound of the whole space (``chipsched.api.best_bound``, given by the caller)
    as vertical lines — the optimum lies between them. Methods with neither (skipped,
    failed) are left out."""
    rows = [m for m in dict.fromkeys(r.method for r in results)
            if any(r.objective is not None or r.bound is not None
                   for r in results if r.method == m)]
    fig, ax = _figure(width=8.0, height=max(2.2, 0.4 * len(rows) + 1.4))
    vals: list[float] = []
    for k, m in enumerate(rows):
        runs = [r for r in results if r.method == m]
        ys = [r.objective for r in runs if r.objective is not None]
        if ys:
            ax.scatter(ys, [k] * len(ys), marker=MARKERS[k % len(MARKERS)],
                       color=f"C{k % 10}", zorder=3)
        bs = [r.bound for r in runs if r.bound is not None]
        if bs:
            ax.scatter(bs, [k] * len(bs), marker="|", s=250, color=f"C{k % 10}", zorder=2)
        vals += ys + bs
    if best_bound is not None:
        ax.axvline(best_bound, color="0.3", ls="--", lw=1, label=f"best bound {best_bound:.4g}")
    if best_found is not None:
        ax.axvline(best_found, color="0.3", ls=":", lw=1, label=f"best found {best_found:.4g}")
    pos = [v for v in vals if v > 0]
    if pos and len(pos) == len(vals) and max(pos) > 3 * min(pos):
        ax.set_xscale("log")
        short_log_ticks(ax.xaxis)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.set_xlabel(label)
    ax.set_title(title, fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    if best_bound is not None or best_found is not None:
        ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return save_figure(fig, path)
