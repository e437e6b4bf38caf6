"""SET's experiment on our model: SA vs best LS vs best LP (issue 4, "Figures").

For each network × batch × platform (edge-4x4 with E²·D, cloud-12x12 with E·D²) runs
the LS and LP dynamic programs and the SA (β × layers rounds, best of several seeds)
twice: from SET's layer-sequential start (``sa``, the document's algorithm) and from
the better DP baseline (``sa_dp``, SET's commented-out "SA-min" start). Prints a
markdown table of latency, energy and objective, each SA's speed-up and energy change
against the better baseline, and the geometric means the document reports (1.78×
performance, −13.2 % energy vs Tangram's LP/LS). Writes a CSV, a JSON and a plot
(grouped bars, each configuration normalized to its best baseline).

    python benchmarks/tile_groups_compare.py --quick          # 2 networks, batch 1/8, β=10
    python benchmarks/tile_groups_compare.py                  # the full grid, β=100
    python benchmarks/tile_groups_compare.py --networks pnasnet5-mobile --batches 64 \\
        --chips cloud-12x12 --resume out/tile_groups/compare.json   # fill in the rest
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

NETWORKS = ("resnet50", "googlenet", "inception-resnet-v1", "pnasnet5-mobile",
            "transformer-base")
CHIPS = {"edge-4x4": "e2d", "cloud-12x12": "ed2"}
BATCHES = (1, 8, 64)


def run_one(net: str, chip: str, batch: int, beta: float, seeds: int) -> dict[str, Any]:
    """LS, LP and SA (best of ``seeds`` seeds, plus the mean) on one configuration."""
    from chipsched.api import registry, solve
    from chipsched.errors import ChipschedError
    from chipsched.instances.chips import get_chip
    from chipsched.instances.tile_groups import load_instance

    registry()
    inst = load_instance(net, get_chip(chip), objective=CHIPS[chip], batch=batch)
    row: dict[str, Any] = {"network": net, "chip": chip, "batch": batch,
                           "objective_name": CHIPS[chip], "layers": len(inst.workload)}
    t0 = time.perf_counter()
    inst.analyzer  # noqa: B018 - build the layer table once
    row["table_s"] = time.perf_counter() - t0
    for m in ("ls", "lp"):
        try:
            r = solve("tile_groups", inst, m)
        except ChipschedError as exc:
            # e.g. no LS/LP segmentation of the layer order fits the buffers: the
            # baseline does not exist for this configuration (recorded, not hidden)
            row.update({f"{m}_{k}": None for k in ("latency", "energy", "objective", "s",
                                                   "tree")}, **{f"{m}_error": str(exc)})
            continue
        row.update({f"{m}_latency": r.metrics["latency_s"], f"{m}_energy": r.metrics["energy_j"],
                    f"{m}_objective": r.objective, f"{m}_s": r.wall_s,
                    f"{m}_tree": r.solution.text})
    for key, start in (("sa", "ls"), ("sa_dp", "dp")):
        try:
            runs = [solve("tile_groups", inst, "sa", seed=sd, beta=beta, start=start)
                    for sd in range(seeds)]
        except ChipschedError as exc:
            row.update({f"{key}_{k}": None for k in (
                "latency", "energy", "objective", "s", "mean_objective", "start_objective",
                "iterations", "tree", "speedup", "energy_change", "ratio")},
                **{f"{key}_error": str(exc)})
            continue
        best = min(runs, key=lambda r: r.objective)
        row.update({f"{key}_latency": best.metrics["latency_s"],
                    f"{key}_energy": best.metrics["energy_j"], f"{key}_objective": best.objective,
                    f"{key}_s": sum(r.wall_s for r in runs) / seeds,
                    f"{key}_mean_objective": sum(r.objective for r in runs) / seeds,
                    f"{key}_start_objective": best.metrics["solver"]["start_objective"],
                    f"{key}_iterations": best.metrics["solver"]["iterations"],
                    f"{key}_tree": best.solution.text})
    row.update({"sa_seeds": seeds, "beta": beta})
    have = [m for m in ("ls", "lp") if row[f"{m}_objective"] is not None]
    if not have:
        row["best_baseline"] = ""
        return row
    base = min(have, key=lambda m: row[f"{m}_objective"])
    row["best_baseline"] = base
    for key in ("sa", "sa_dp"):
        if row.get(f"{key}_objective") is None:
            continue
        row[f"{key}_speedup"] = row[f"{base}_latency"] / row[f"{key}_latency"]
        row[f"{key}_energy_change"] = row[f"{key}_energy"] / row[f"{base}_energy"] - 1
        row[f"{key}_ratio"] = row[f"{key}_objective"] / row[f"{base}_objective"]
    return row


def _g(x: float | None) -> str:
    return "—" if x is None else f"{x:.4g}"


def table(rows: list[dict[str, Any]]) -> str:
    out = ["| network | chip (obj.) | B | latency LS / LP / SA / SA-dp (s) | "
           "energy LS / LP / SA / SA-dp (J) | objective LS / LP / SA / SA-dp | base | "
           "SA vs base: speed-up, ΔE, obj. | SA-dp vs base: speed-up, ΔE, obj. |",
           "|---|---|---:|---|---|---|---|---|---|"]
    for r in rows:
        cells = []
        for met in ("latency", "energy", "objective"):
            cells.append(" / ".join(_g(r[f"{m}_{met}"]) for m in ("ls", "lp", "sa", "sa_dp")))
        vs = [f"{r[f'{k}_speedup']:.2f}×, {100 * r[f'{k}_energy_change']:+.1f} %, "
              f"{r[f'{k}_ratio']:.3f}" if r.get(f"{k}_speedup") is not None else "—"
              for k in ("sa", "sa_dp")]
        out.append(f"| {r['network']} | {r['chip']} ({r['objective_name']}) | {r['batch']} | "
                   f"{cells[0]} | {cells[1]} | {cells[2]} | "
                   f"{r['best_baseline'].upper() or '—'} | "
                   f"{vs[0]} | {vs[1]} |")
    return "\n".join(out)


def summary(rows: list[dict[str, Any]]) -> str:
    def gmean(xs: list[float]) -> float:
        return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")

    lines = ["| subset | configs | SA speed-up | SA ΔE | SA obj./base | SA wins | "
             "SA-dp speed-up | SA-dp ΔE | SA-dp obj./base | SA-dp wins |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    groups: dict[str, list[dict[str, Any]]] = {"all": rows}
    for chip in CHIPS:
        groups[chip] = [r for r in rows if r["chip"] == chip]
    for name, rs in groups.items():
        # configurations where a baseline and both SAs exist (others: see the table)
        rs = [r for r in rs if r.get("sa_speedup") is not None
              and r.get("sa_dp_speedup") is not None]
        if not rs:
            continue
        cells = []
        for k in ("sa", "sa_dp"):
            wins = sum(r[f"{k}_objective"] <= r[f"{r['best_baseline']}_objective"]
                       * (1 + 1e-12) for r in rs)
            cells.append(f"{gmean([r[f'{k}_speedup'] for r in rs]):.2f}× | "
                         f"{100 * (gmean([1 + r[f'{k}_energy_change'] for r in rs]) - 1):+.1f} % "
                         f"| {gmean([r[f'{k}_ratio'] for r in rs]):.3f} | {wins}/{len(rs)}")
        lines.append(f"| {name} | {len(rs)} | {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="resnet50 + googlenet, batch 1 and 8, "
                    "β=10, one seed")
    ap.add_argument("--networks", nargs="*", default=None)
    ap.add_argument("--chips", nargs="*", default=None)
    ap.add_argument("--batches", nargs="*", type=int, default=None)
    ap.add_argument("--beta", type=float, default=None, help="SA rounds per layer (100)")
    ap.add_argument("--seeds", type=int, default=None, help="SA seeds per config (2; quick 1)")
    ap.add_argument("--jobs", type=int, default=1, help="configurations in parallel")
    ap.add_argument("--out", default="out/tile_groups/compare", help="output prefix")
    ap.add_argument("--resume", default=None, help="JSON of an earlier run: keep its rows")
    a = ap.parse_args(argv)
    nets = a.networks or (("resnet50", "googlenet") if a.quick else NETWORKS)
    chips = a.chips or tuple(CHIPS)
    batches = a.batches or ((1, 8) if a.quick else BATCHES)
    beta = a.beta if a.beta is not None else (10 if a.quick else 100)
    seeds = a.seeds if a.seeds is not None else (1 if a.quick else 2)
    rows: list[dict[str, Any]] = []
    if a.resume and Path(a.resume).exists():
        rows = json.loads(Path(a.resume).read_text())
    done = {(r["network"], r["chip"], r["batch"]) for r in rows}
    todo = [(n, c, b) for c in chips for n in nets for b in batches if (n, c, b) not in done]
    t0 = time.perf_counter()
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:
        rows.sort(key=lambda r: (list(CHIPS).index(r["chip"]), NETWORKS.index(r["network"])
                                 if r["network"] in NETWORKS else 99, r["batch"]))
        Path(f"{out}.json").write_text(json.dumps(rows, indent=1))

    if a.jobs > 1:
        with ProcessPoolExecutor(a.jobs) as ex:
            futs = [ex.submit(run_one, n, c, b, beta, seeds) for n, c, b in todo]
            for f in futs:
                row = f.result()
                rows.append(row)
                save()  # sorts rows: report the row itself
                print(f"done {row['network']} {row['chip']} b{row['batch']} "
                      f"({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    else:
        for n, c, b in todo:
            rows.append(run_one(n, c, b, beta, seeds))
            save()
            print(f"done {n} {c} b{b} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr)
    save()
    with open(f"{out}.csv", "w", newline="") as fh:
        keys = [k for k in rows[0] if not k.endswith("_tree")] if rows else []
        w = csv.DictWriter(fh, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    from chipsched.plots.tile_groups import plot_comparison

    plot_rows = [{**r, "config": f"{r['network'][:12]} {r['chip'][:5]} b{r['batch']}"}
                 for r in rows]
    png = Path(os.environ.get("TILE_GROUPS_PLOT", f"{out}.png"))
    plot_comparison(plot_rows, png, methods=("ls", "lp", "sa", "sa_dp"))
    cmd = "python benchmarks/tile_groups_compare.py " + " ".join(
        sys.argv[1:] if argv is None else argv)
    print(f"Command: `{cmd.strip()}` (β = {beta:g}, {seeds} SA seed(s), best seed reported; "
          f"{time.perf_counter() - t0:.0f} s wall)\n")
    print(table(rows))
    print()
    print(summary(rows))
    print(f"\nplot: {png}; data: {out}.json, {out}.csv")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
