"""Where the tile_groups bound leaves its gap (issue 30: "report where it is not met and
which term is missing"): per configuration of SET's grid, the library's best known tree
against the full-space bound (``full_space_bound``), split into

* an **energy factor**: obj(E_tree, D_tree) / obj(E*(D_tree), D_tree), where E*(D) is
  the bound's least energy of a tree with the tree's root run count and latency D (the
  larger of the row and dependency-path floors, docs/tile_groups.md §4.2–4.3) — how much
  more energy the tree pays than the relaxation allows any tree of its latency;
* a **latency factor**: obj(E*(D_tree), D_tree) / bound (≥ 1; the rest of the ratio);

and, for the energy, the tree's parts against those of the relaxation's least-energy
rows (one row per layer at the tree's root run count, :func:`row_terms`): MAC + buffer
energy, DRAM bytes (the tree's split into feature maps read across segments, maps read
within a segment, and the rest: weights, network inputs, written maps and outputs) and
NoC energy; for the latency, the tree's latency over the bound's least latency and the
share of it spent in segments bound by DRAM. The product of the two factors is the best
known / bound of the three-numbers table; it says which side of the relaxation is
missing a term, not how far the tree is from the optimum.

    python benchmarks/tile_groups_gap.py                     # the 30 configurations
    python benchmarks/tile_groups_gap.py --networks resnet50-v1 --chips edge-4x4 --batches 64
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict

import numpy as np
from tile_groups_bounds import add_grid_args, gm


def least_energy_parts(instance, t) -> dict[str, float]:
    """MAC + buffer energy, DRAM bytes, DRAM and NoC energy of the least-energy rows of
    the row terms ``t`` (:func:`row_terms`)."""
    an = instance.analyzer
    k = t.energy_j.argmin(axis=1)
    idx = np.arange(len(k))
    nb = an.rows.shape[2]
    g, bi = k // nb, k % nb
    runs = an.B / np.asarray(an.table.batches, dtype=float)[bi]
    mac_buf = float(((an.rows[idx, g, bi, 6] + an.rows[idx, g, bi, 7]) * runs).sum())
    dram_b = float(t.dram_bytes[idx, k].sum())
    dram_j = dram_b * 8 * an.hw.dram.energy_pj_per_bit * 1e-12
    total = float(t.energy_j[idx, k].sum())
    return {"energy_j": total, "mac_buffer_j": mac_buf, "dram_bytes": dram_b,
            "dram_j": dram_j, "noc_j": total - mac_buf - dram_j}


def energy_floor_at(instance, t, latency_s: float) -> float:
    """The bound's least energy of a tree with the row terms' root run count and this
    latency: the larger of the row relaxation's floor (§4.2) and the dependency-path
    envelope's (§4.3) at exactly that latency."""
    from chipsched.problems.tile_groups.bound import PathEnvelope, energy_floor

    an = instance.analyzer
    bw = float(an.hw.dram.bytes_per_s)
    return max(energy_floor(t, latency_s, an.G, bw),
               PathEnvelope(t, an.preds, an.G, bw).energy_floor(latency_s))


def tree_parts(instance, metrics: dict) -> dict[str, float]:
    """The best known tree's DRAM bytes by kind and its latency spent DRAM-bound."""
    seg = {ly["layer"]: ly["segment"] for ly in metrics["layers"]}
    w = instance.workload
    has_succ = {w.layers[p].name for p, _c, _e in w.edges}
    out = {ly.name: ly.out_elems * w.precision_bytes * metrics["batch"] for ly in w.layers}
    written = sum(out[ly["layer"]] for ly in metrics["layers"]
                  if ly["output_to_dram"] and ly["layer"] in has_succ)
    maps: dict[str, float] = defaultdict(float)
    for f in metrics["flows"]:
        if f["route"] == "dram" and f["from"] in seg:
            maps["across" if seg[f["from"]] != seg[f["to"]] else "within"] += f["bytes"]
    segs = metrics["segments"]
    runs = metrics["root_runs"]
    dram_s = sum(s["time_s"] for s in segs if s["bound"] == "dram") * runs
    return {"maps_across": maps["across"], "maps_within": maps["within"],
            "maps_written": written,
            "rest": metrics["dram_bytes"] - maps["across"] - maps["within"] - written,
            "segments": len(segs), "dram_bound_share": dram_s / metrics["latency_s"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_grid_args(ap)
    args = ap.parse_args()

    from chipsched import library
    from chipsched.problems.tile_groups.bound import full_space_bound, row_terms
    from chipsched.registry import registry

    prob = registry().decision("tile_groups").problem
    print("| network | chip | B | best known / bound | energy factor | latency factor | "
          "MAC + buffer: tree / relaxation | DRAM MB: tree (maps read across segments, "
          "read within one, written; weights and network I/O) / relaxation | "
          "NoC mJ: tree / relaxation | D: tree / least | segments (time DRAM-bound) |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|---:|---:|")
    factors = []
    for chip in args.chips:
        for net in args.networks:
            for b in args.batches:
                e = library.entry(f"tg-{net}-{chip.split('-')[0]}-b{b}")
                known = library.best_known(e)
                if known is None:
                    continue
                inst = library.build_instance(e)
                with open(known.path) as fh:
                    sol = prob.read_solution(inst, json.load(fh)["solution"],
                                             field="solution")
                obj, m = prob.evaluate(inst, sol)
                fb = full_space_bound(inst)
                d = m["latency_s"]
                terms = row_terms(inst, int(m["root_runs"]))
                e_star = energy_floor_at(inst, terms, d)
                o_star = inst.objective(e_star, d)
                ef, lf = obj / o_star, o_star / fb.objective
                factors.append((obj / fb.objective, ef, lf))
                rel = least_energy_parts(inst, terms)
                tp = tree_parts(inst, m)
                mb = m["energy"]["mac_j"] + m["energy"]["buffer_j"]
                print(f"| {net} | {chip} | {b} | {obj / fb.objective:.3g} | {ef:.3g} | "
                      f"{lf:.3g} | {mb / rel['mac_buffer_j']:.2f} | "
                      f"{m['dram_bytes'] / 1e6:.4g} ({tp['maps_across'] / 1e6:.4g}, "
                      f"{tp['maps_within'] / 1e6:.4g}, {tp['maps_written'] / 1e6:.4g}; "
                      f"{tp['rest'] / 1e6:.4g}) / "
                      f"{rel['dram_bytes'] / 1e6:.4g} | "
                      f"{m['energy']['noc_j'] * 1e3:.4g} / {rel['noc_j'] * 1e3:.4g} | "
                      f"{d / fb.latency_s:.2f} | {tp['segments']} "
                      f"({100 * tp['dram_bound_share']:.0f} %) |", flush=True)

    if factors:
        r, ef, lf = zip(*factors, strict=True)
        print(f"\n{len(r)} rows: best known / bound geometric mean {gm(r):.3g} = energy "
              f"factor {gm(ef):.3g} × latency factor {gm(lf):.3g}")


if __name__ == "__main__":
    main()
