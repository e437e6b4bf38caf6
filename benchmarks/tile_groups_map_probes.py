"""How much could a term on feature-map routes add to the tile_groups full-space bound?
(issue 30). Three what-if variants of the row terms (``bound.row_terms``), each run
through ``full_space_bound`` in place of the real ones, per configuration of SET's grid:

* **skip edges** (a valid term, not in the bound): a map on an edge p → c that has
  another dependency path from p to c is never consumed immediately (``bound.skip_edges``
  states and proves it; ``tests/test_tile_groups_full_bound.py`` checks it on every tree
  of random DAGs): it goes through DRAM or waits on c's tiles for the whole segment. A
  row of c on which the waiting share (the row's input bytes per tile × the edge's
  share) does not fit beside its working set must read that map through DRAM.
* **disjoint tiles** (an upper limit, not a bound): every map sent over the NoC crosses at
  least the least mean distance from a tile to k *other* tiles (k = the consumer's units)
  — what S-cut siblings, on disjoint tile groups, pay; T-cut siblings can share tiles and
  pay less. No term about which maps run in parallel can add more than this.
* **every map through DRAM** (an upper limit, not a bound): the NoC route refused to every
  map. No term about which maps a tree's structure sends through DRAM can add more.

    python benchmarks/tile_groups_map_probes.py                  # the 30 configurations
    python benchmarks/tile_groups_map_probes.py --networks resnet50-v1 --batches 8

Each row: the bound, the three variants over it, the best known (chipsched-lib) over
the bound and over the every-map-through-DRAM value, and the seconds.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np
from tile_groups_bounds import add_grid_args, gm


def map_terms(instance: Any, root_runs: int, variant: str) -> Any:
    """The row terms of ``bound.row_terms`` with each map's route cost replaced as
    ``variant`` ('skip', 'disjoint' or 'dram') says."""
    from chipsched.problems.tile_groups import bound

    t = bound.row_terms(instance, root_runs)
    an = instance.analyzer
    hw, B, rows = an.hw, an.B, an.rows
    L, G = rows.shape[:2]
    runs = (B / np.asarray(an.table.batches, dtype=float))[None, :]
    uu, iff, fp = rows[..., 1], rows[..., 3], rows[..., 5]
    spill = fp > an.buf
    uidx = np.clip(uu.astype(np.int64), 1, G) - 1
    hbar = bound.dram_window_hops(an)[uidx]
    ball = bound.ball_mean_hops(an)[uidx]
    other = bound.ball_mean_hops(an, others=True)[uidx]
    dram_pj = 8 * hw.dram.energy_pj_per_bit * 1e-12
    hop_pj = 8 * an.hop_pj * 1e-12
    skip = bound.skip_edges(an) if variant == "skip" else set()
    energy, dbytes = t.energy_j.copy(), t.dram_bytes.copy()
    for c in range(L):
        src = an.src_total[c]
        nin = iff[c] * runs
        for p, e in an.preds[c]:
            share = e / src
            via_dram = e * an.prec * B * dram_pj + nin * share * hbar[c] * hop_pj
            via_noc = nin * share * ball[c] * hop_pj
            now = np.where(spill[c], via_dram, np.minimum(via_dram, via_noc))
            if variant == "dram":
                dram = ~spill[c]
            elif variant == "skip":
                if (p, c) not in skip:
                    continue
                dram = ~spill[c] & (fp[c] + iff[c] / uu[c] * share > an.buf) \
                    & (via_noc < via_dram)
            else:  # disjoint
                noc_x = nin * share * other[c] * hop_pj
                new = np.where(spill[c], via_dram, np.minimum(via_dram, noc_x))
                energy[c] += (new - now).reshape(-1)
                dbytes[c] += np.where(~spill[c] & (noc_x > via_dram) & (via_noc < via_dram),
                                      e * an.prec * B, 0.0).reshape(-1)
                continue
            energy[c] += np.where(dram, via_dram - now, 0.0).reshape(-1)
            dbytes[c] += np.where(dram & (via_noc < via_dram), e * an.prec * B,
                                  0.0).reshape(-1)
    usable = np.isfinite(t.energy_j)
    return bound.RowTerms(t.root_runs, np.where(usable, energy, np.inf), t.busy_s, t.own_s,
                          np.where(usable, dbytes, np.inf), t.run_s)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    add_grid_args(ap)
    args = ap.parse_args()

    from chipsched import library
    from chipsched.problems.tile_groups.bound import full_space_bound

    print("| network | chip | B | bound | skip edges (valid) | disjoint tiles (limit) | "
          "every map through DRAM (limit) | best known / bound | best known / every map "
          "through DRAM | seconds |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    ratios: dict[str, list[float]] = {"skip": [], "disjoint": [], "dram": [], "bk": []}
    for chip in args.chips:
        for net in args.networks:
            for b in args.batches:
                e = library.entry(f"tg-{net}-{chip.split('-')[0]}-b{b}")
                known = library.best_known(e)
                inst = library.build_instance(e)
                t0 = time.perf_counter()
                base = full_space_bound(inst).objective
                v = {k: full_space_bound(
                    inst, terms=lambda i, r, k=k: map_terms(i, r, k)).objective
                    for k in ("skip", "disjoint", "dram")}
                for k in v:
                    ratios[k].append(v[k] / base)
                bk = known.objective if known is not None else float("nan")
                ratios["bk"].append(bk / base)
                print(f"| {net} | {chip} | {b} | {base:.4g} | {v['skip'] / base:.3f}× | "
                      f"{v['disjoint'] / base:.3f}× | {v['dram'] / base:.3g}× | "
                      f"{bk / base:.3g} | {bk / v['dram']:.3g} | "
                      f"{time.perf_counter() - t0:.0f} |", flush=True)
    if ratios["bk"]:
        print(f"\n{len(ratios['bk'])} rows, geometric means: skip edges "
              f"{gm(ratios['skip']):.3f}×, disjoint tiles ≤ {gm(ratios['disjoint']):.3f}×, "
              f"every map through DRAM ≤ {gm(ratios['dram']):.3g}×; best known / bound "
              f"{gm(ratios['bk']):.3g}")


if __name__ == "__main__":
    main()
