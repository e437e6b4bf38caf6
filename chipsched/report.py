"""Tables of results for the terminal (rich): ``solve``, ``compare``, ``bench``, the demo.

One place for how a result reads: the objective and bound with the decision's unit in
the column header, the gap, the distance to the best proven bound and to the best
solution found, restricted-space bounds marked †, and every run that produced nothing
(skipped, failed, out of time) with its reason under the table.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.markup import escape
from rich.table import Table

from chipsched.api import best_bound, best_found
from chipsched.result import Result
from chipsched.tables import relative_pct


def _rel(x: float | None, ref: float | None) -> str:
    pct = relative_pct(x, ref)
    return f"{pct} %" if pct else ""


def result_table(results: Sequence[Result], title: str = "") -> Table:
    """The comparison table of ``results`` (runs of one decision on one instance)."""
    bb, bf = best_bound(results), best_found(results)
    spaces = sorted({r.space for r in results if r.space and r.bound is not None})
    units = sorted({r.objective_unit for r in results if r.objective_unit})
    # one readable scale per table: µs, mJ, or ×10ⁿ for compound units (J²·s)
    from chipsched.tables import unit_scale

    scale, label = (unit_scale([r.objective for r in results] + [r.bound for r in results],
                               units[0]) if len(units) == 1 else (1.0, ""))
    unit = f" ({label})" if label else ""
    notes = [f"{'†' * (i + 1)} bound of the restricted space: {s}"
             for i, s in enumerate(spaces)]
    # a run without a solution says why (not applicable, too large, infeasible …)
    notes += [f"{r.method} — {r.status.value}: {r.message}" for r in results
              if r.objective is None and r.message]
    # … and a run of a restricted space says why it stayed there (and what the whole
    # space is worth, when the method knows)
    notes += [f"{r.method}: {r.message}" for r in results
              if r.objective is not None and r.message
              and ("against a time limit" in r.message or r.space)]
    t = Table(title=escape(title), title_justify="left",
              caption=escape("\n".join(notes)) or None, caption_justify="left")
    for col, j in (("method", "left"), ("status", "left"), (f"objective{unit}", "right"),
                   (f"bound{unit}", "right"), ("gap", "right"), ("vs best bound", "right"),
                   ("vs best found", "right"), ("seed", "right"), ("time", "right")):
        t.add_column(col, justify=j)
    for r in results:
        mark = "†" * (spaces.index(r.space) + 1) if r.space in spaces else ""
        t.add_row(escape(r.method), r.status.value,
                  "" if r.objective is None else f"{r.objective / scale:.6g}",
                  "" if r.bound is None else f"{r.bound / scale:.6g}{mark}",
                  "" if r.gap is None else f"{100 * r.gap:.2f} %", _rel(r.objective, bb),
                  _rel(r.objective, bf), "" if r.seed is None else str(r.seed),
                  "" if r.status.value == "skipped" else f"{r.wall_s:.3g} s")
    return t
