"""Paper-ready tables of results: markdown, LaTeX (booktabs) and CSV.

One table model for ``compare`` and ``bench``: every number has its unit in the column
header — a simple unit (s, J, B) gets the SI prefix that suits the column (µs, mJ),
a compound one (J²·s, byte·hop) a power-of-ten normalisation stated in the header —,
values have a fixed number of significant figures, and several seeds of one method
collapse into one row with best, mean ± sd and worst. The terminal's rich tables live
in :mod:`chipsched.report`.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from chipsched.api import best_bound, best_found
from chipsched.result import Result
from chipsched.units import SI_UNITS, si_text, unit_scale  # noqa: F401 - re-exported

FORMATS = ("table", "markdown", "latex", "csv")

def relative_pct(x: float | None, ref: float | None) -> str:
    """(x − ref) / |ref| in percent with a sign, "" when undefined; never "-0.00" from
    solver tolerances."""
    if x is None or ref is None or ref == 0:
        return ""
    pct = 100 * (x - ref) / abs(ref)
    return f"{0.0 if abs(pct) < 5e-3 else pct:+.2f}"


def sig(x: float | None, digits: int = 4) -> str:
    """``x`` with ``digits`` significant figures, no exponent for 1e-4 ≤ |x| < 1e6."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if x == 0:
        return "0"
    if 1e-4 <= abs(x) < 1e6:
        decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
        return f"{x:.{decimals}f}"
    return f"{x:.{digits - 1}e}"


@dataclass(frozen=True)
class PaperTable:
    """Headers, rows of strings, a caption and notes (restricted-space bounds, runs
    without a solution), ready for any format."""

    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""
    notes: tuple[str, ...] = field(default=())
    align: str = ""  # one of l/r per column


def _facts(instance: Any) -> dict[str, str]:
    hw = getattr(instance, "hardware", None)
    meta = getattr(instance, "meta", None) or {}
    chip = getattr(hw, "name", None) or meta.get("chip", "")
    batch = getattr(instance, "batch", None) or meta.get("batch")
    return {"chip": str(chip or ""), "batch": "" if batch is None else str(batch)}


def comparison_table(results: Sequence[Result], instance: Any = None, title: str = "",
                     digits: int = 4) -> PaperTable:
    """The results of ``compare`` on one instance: one row per method (several seeds:
    best, mean ± sd, worst), objective and bound scaled to one unit, gap to the
    method's own bound, distance to the best bound and to the best solution found."""
    facts = _facts(instance) if instance is not None else {"chip": "", "batch": ""}
    unit = next((r.objective_unit for r in results if r.objective_unit), "")
    vals = [r.objective for r in results] + [r.bound for r in results]
    f, ulabel = unit_scale(vals, unit)
    bb, bf = best_bound(results), best_found(results)
    spaces = sorted({r.space for r in results if r.space and r.bound is not None})
    groups: dict[str, list[Result]] = {}
    for r in results:
        groups.setdefault(r.method, []).append(r)
    multi = any(len(g) > 1 for g in groups.values())

    def scaled(x: float | None) -> str:
        return "" if x is None else sig(x / f, digits)

    u = f" [{ulabel}]" if ulabel else ""
    headers = ["method", "chip", "batch", "status", f"objective{u}"]
    if multi:
        headers += [f"mean ± sd{u}", f"worst{u}", "runs"]
    headers += [f"bound{u}", "gap [%]", "vs best bound [%]", "vs best found [%]",
                "time [s]"]
    rows = []
    for method, g in groups.items():
        ok = [r for r in g if r.objective is not None]
        best = min(ok, key=lambda r: r.objective) if ok else g[0]
        bounds = [r.bound for r in g if r.bound is not None]
        # the best run's own bound and gap (one run's figures); else the best bound
        bound = best.bound if best.bound is not None else (max(bounds) if bounds else None)
        mark = "†" * (spaces.index(best.space) + 1) if best.space in spaces and \
            bound is not None else ""
        statuses = sorted({r.status.value for r in g})
        row = [method, facts["chip"], facts["batch"], "/".join(statuses),
               scaled(best.objective)]
        if multi:
            objs = [r.objective for r in ok]
            if len(objs) > 1:
                row += [f"{sig(statistics.fmean(objs) / f, digits)} ± "
                        f"{sig(statistics.stdev(objs) / f, 2)}", scaled(max(objs))]
            else:
                row += ["", ""]
            row.append(f"{len(ok)}/{len(g)}")
        gap = best.gap
        row += [scaled(bound) + mark, "" if gap is None else f"{100 * gap:.2f}",
                relative_pct(best.objective, bb), relative_pct(best.objective, bf),
                "" if all(r.status.value == "skipped" for r in g) else
                sig(statistics.fmean(r.wall_s for r in g if r.status.value != "skipped"), 3)]
        rows.append(tuple(row))
    notes = [f"{'†' * (i + 1)} bound of the restricted space: {s}"
             for i, s in enumerate(spaces)]
    notes += [f"{r.method}: {r.status.value}: {r.message}" for r in results
              if r.objective is None and r.message]
    notes += [f"{r.method}: {r.message}" for r in results
              if r.objective is not None and "against a time limit" in r.message]
    if multi:
        notes.append("objective = best of the runs; mean ± sd and worst over the runs "
                     "with a solution; time = mean per run")
    align = "".join("l" if h in ("method", "chip", "status") else "r" for h in headers)
    return PaperTable(tuple(headers), tuple(rows), title, tuple(notes), align)


def render(table: PaperTable, fmt: str) -> str:
    """``table`` as ``markdown``, ``latex`` (booktabs) or ``csv``."""
    if fmt == "markdown":
        return _markdown(table)
    if fmt == "latex":
        return _latex(table)
    if fmt == "csv":
        return _csv(table)
    raise ValueError(f"unknown format {fmt!r}")


def _markdown(t: PaperTable) -> str:
    def esc(s: str) -> str:
        return s.replace("|", "\\|")

    out = []
    if t.caption:
        out += [f"**{esc(t.caption)}**", ""]
    out.append("| " + " | ".join(esc(h) for h in t.headers) + " |")
    out.append("|" + "|".join("---:" if a == "r" else "---" for a in t.align) + "|")
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in t.rows]
    for n in t.notes:  # one paragraph each
        out += ["", esc(n)]
    return "\n".join(out) + "\n"


_LATEX_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$",
                  "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}",
                  "^": r"\textasciicircum{}"}
_LATEX_TEXT = {"µ": r"\ensuremath{\mu}", "±": r"\ensuremath{\pm}",
               "×": r"\ensuremath{\times}", "·": r"\ensuremath{\cdot}",
               "†": r"\ensuremath{^\dagger}", "—": "---", "–": "--",
               "→": r"\ensuremath{\rightarrow}"}
_SUPER = {c: str(i) for i, c in enumerate("⁰¹²³⁴⁵⁶⁷⁸⁹")} | {"⁻": "-"}


def latex_escape(s: str) -> str:
    r"""Plain text → LaTeX that compiles with no package beyond booktabs: specials
    escaped, symbols and superscripts (J²·s, ×10⁻⁹) as ``\ensuremath`` — never a bare
    ``$…$``, whose neighbours could form ``$$``."""
    out: list[str] = []
    i = 0
    while i < len(s):
        if s[i] in _SUPER:
            j = i
            while j < len(s) and s[j] in _SUPER:
                j += 1
            out.append(r"\ensuremath{^{" + "".join(_SUPER[c] for c in s[i:j]) + "}}")
            i = j
            continue
        out.append(_LATEX_SPECIAL.get(s[i]) or _LATEX_TEXT.get(s[i]) or s[i])
        i += 1
    return "".join(out)


def _latex(t: PaperTable) -> str:
    out = [r"% requires \usepackage{booktabs}", r"\begin{table}[t]", r"\centering"]
    if t.caption:
        out.append(r"\caption{" + latex_escape(t.caption) + "}")
    out.append(r"\begin{tabular}{" + t.align + "}")
    out.append(r"\toprule")
    out.append(" & ".join(latex_escape(h) for h in t.headers) + r" \\")
    out.append(r"\midrule")
    out += [" & ".join(latex_escape(c) for c in row) + r" \\" for row in t.rows]
    out.append(r"\bottomrule")
    out.append(r"\end{tabular}")
    if t.notes:
        out.append(r"\par\smallskip{\footnotesize " +
                   r" \\ ".join(latex_escape(n) for n in t.notes) + "}")
    out.append(r"\end{table}")
    return "\n".join(out) + "\n"


def _csv(t: PaperTable) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(t.headers)
    w.writerows(t.rows)
    return buf.getvalue()


def bench_table(rows: Sequence[dict[str, Any]], title: str = "", digits: int = 4
                ) -> PaperTable:
    """The runs of ``chipsched bench`` (rows of :func:`chipsched.bench.summarize`), one
    row per (instance, chip, options, method): best, mean ± sd and worst over its seeds,
    the method's best bound (†: of its restricted space), the distance to the
    instance's best proven bound and best solution, mean time. Each instance's values
    share one unit, given in the ``unit`` column."""
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for r in rows:
        key = (r["decision"], r["instance"], r.get("chip") or "",
               r.get("instance_options") or "{}", r["method"])
        groups.setdefault(key, []).append(r)
    per_instance: dict[tuple, list[dict[str, Any]]] = {}
    for key, g in groups.items():
        per_instance.setdefault(key[:4], []).extend(g)
    spaces = sorted({r["space"] for r in rows if r.get("space") and r.get("bound") is not None})
    headers = ("decision", "instance", "chip", "method", "status", "unit", "objective",
               "mean ± sd", "worst", "runs", "bound", "vs best bound [%]",
               "vs best found [%]", "time [s]")
    out = []
    for key, g in groups.items():
        inst_rows = per_instance[key[:4]]
        unit = next((r.get("objective_unit") for r in inst_rows if r.get("objective_unit")),
                    "")
        f, ulabel = unit_scale([r.get("objective") for r in inst_rows] +
                               [r.get("bound") for r in inst_rows], unit)
        objs = [r["objective"] for r in g if r.get("objective") is not None]
        bounds = [r["bound"] for r in g if r.get("bound") is not None]
        bb, bf = g[0].get("best_bound"), g[0].get("best_objective")
        best = min(objs) if objs else None
        space = next((r.get("space") for r in g if r.get("space")), "")
        mark = "†" * (spaces.index(space) + 1) if space in spaces and bounds else ""

        inst = key[1] + ("" if key[3] in ("{}", "") else f" {key[3]}")
        out.append((key[0], inst, key[2], key[4], "/".join(sorted({r["status"] for r in g})),
                    ulabel, "" if best is None else sig(best / f, digits),
                    f"{sig(statistics.fmean(objs) / f, digits)} ± "
                    f"{sig(statistics.stdev(objs) / f, 2)}" if len(objs) > 1 else "",
                    sig(max(objs) / f, digits) if len(objs) > 1 else "",
                    f"{len(objs)}/{len(g)}",
                    (sig(max(bounds) / f, digits) + mark) if bounds else "",
                    relative_pct(best, bb), relative_pct(best, bf),
                    sig(statistics.fmean(r["wall_s"] for r in g if r.get("wall_s")
                                         is not None), 3)
                    if any(r.get("wall_s") is not None for r in g) else ""))
    notes = [f"{'†' * (i + 1)} bound of the restricted space {s}: it bounds that space only "
             "and is not used for 'vs best bound'" for i, s in enumerate(spaces)]
    align = "".join("l" if h in ("decision", "instance", "chip", "method", "status", "unit")
                    else "r" for h in headers)
    return PaperTable(headers, tuple(out), title, tuple(notes), align)
