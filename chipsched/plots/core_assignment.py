"""Figures of the core_assignment decision: a mesh heat-map of a mapping.

:func:`plot_mesh_heatmap` draws every core as a square coloured by its load (neurons /
capacity) and every directed link as an arrow between neighbouring cores, coloured and
thickened by the bytes it carries under XY routing (both directions of a link are drawn
side by side). All numbers come from the evaluator (``chipsched.problems.core_assignment``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.plots import _figure, save_figure
from chipsched.problems.core_assignment import Instance, core_loads, evaluate, link_loads
from chipsched.units import si_text


def plot_mesh_heatmap(instance: Instance, solution: Any, path: str | os.PathLike[str],
                      title: str = "") -> Path:
    """Mesh heat-map of per-core load and per-link traffic (PNG/SVG/PDF by suffix)."""
    import matplotlib.pyplot as plt
    from matplotlib.collections import LineCollection
    from matplotlib.colors import Normalize

    R, C = instance.rows, instance.cols
    loads = core_loads(instance, solution) / instance.capacity
    links = link_loads(instance, solution)
    _, metrics = evaluate(instance.with_objective("traffic"), solution)
    size = max(4.0, min(12.0, 0.45 * max(R, C) + 2))
    fig, ax = _figure(size * 1.25, size)
    im = ax.imshow(loads, cmap="Greens", vmin=0, vmax=1, origin="upper",
                   extent=(-0.5, C - 0.5, R - 0.5, -0.5))
    segs, vals = [], []
    off = 0.12
    for r in range(R):
        for c in range(C - 1):
            segs.append([(c + 0.2, r - off), (c + 0.8, r - off)])
            vals.append(links.east[r, c])
            segs.append([(c + 0.8, r + off), (c + 0.2, r + off)])
            vals.append(links.west[r, c])
    for r in range(R - 1):
        for c in range(C):
            segs.append([(c + off, r + 0.2), (c + off, r + 0.8)])
            vals.append(links.south[r, c])
            segs.append([(c - off, r + 0.8), (c - off, r + 0.2)])
            vals.append(links.north[r, c])
    vals_a = np.asarray(vals, dtype=float)
    vmax = float(vals_a.max()) if vals_a.size and vals_a.max() > 0 else 1.0
    norm = Normalize(0, vmax)
    cmap = plt.get_cmap("inferno_r")
    if segs:
        widths = 0.5 + 3.5 * vals_a / vmax
        lc = LineCollection(segs, colors=cmap(norm(vals_a)), linewidths=widths,
                            capstyle="round")
        ax.add_collection(lc)
    sm = plt.cm.ScalarMappable(norm=norm, cmap=cmap)
    fig.colorbar(im, ax=ax, fraction=0.046, pad=0.02, label="core load / capacity")
    fig.colorbar(sm, ax=ax, fraction=0.046, pad=0.08, label="link load (bytes per inference)")
    ax.set_xticks(range(C))
    ax.set_yticks(range(R))
    if max(R, C) > 24:
        ax.set_xticks(range(0, C, max(1, C // 12)))
        ax.set_yticks(range(0, R, max(1, R // 12)))
    ax.set_xlabel("column")
    ax.set_ylabel("row")
    ax.set_title(title or f"{instance.name}: traffic {metrics['traffic']:,} weight·hops, "
                 f"max link {si_text(metrics['max_link_bytes'], 'B', 3)}", fontsize=9)
    return save_figure(fig, path)
