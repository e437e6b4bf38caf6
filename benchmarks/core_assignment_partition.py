"""core_assignment partition quality and speed against METIS (and KaHIP) from 10 K to 1 M+
vertices.

For every graph, seed 004's partition (steps 2–5, the document's numbers), the improved
variant ``seed004-plus``, METIS (k-way, pymetis) and KaHIP (fast, eco, strong) each run
once with their own part count — the peers ⌈1.05·T/K⌉ parts, METIS's ufactor and
KaHIP's ε set so that the largest part is the capacity K (issue 11's fair peers) — and
every partition is checked against the capacity; a summary gives each method's
geometric-mean cut and time relative to METIS. ``--same-parts`` prints the pre-issue-11
table instead (METIS and KaHIP fast forced to seed 004's part count). Columns: parts,
cut weight, cut / METIS cut, time, time / METIS time, peak RSS of the run (VmHWM reset
before each run; the graph itself included). Capacity 256 neurons per core (Tianjic).
Timings are wall-clock on a shared 2-core machine: other jobs inflate them, ratios are
measured back to back.

    python benchmarks/core_assignment_partition.py --quick
    python benchmarks/core_assignment_partition.py
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "graphs"


def reset_peak() -> None:
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        pass


def peak_gib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 2**20
    return float("nan")


def graphs(quick: bool):
    from chipsched.instances.chips import get_chip
    from chipsched.instances.core_assignment import load_instance, read_metis
    from chipsched.neurongraph import layered_random, stencil

    hw = get_chip("neuro-8x8")
    yield "layered 10×1K f16", lambda: layered_random(10, 1000, 16, seed=1), 256
    yield "stencil 100×100", lambda: stencil(100, 100), 256
    for name in ("add20", "uk"):
        if (SHARED / f"{name}.graph").is_file():
            yield f"Walshaw {name} (K=64)", lambda n=name: read_metis(SHARED / f"{n}.graph"), 64
    yield "lenet5-neurons", lambda: load_instance("lenet5-neurons", hw).graph, 256
    if quick:
        return
    yield "resnet-cifar-neurons", lambda: load_instance("resnet-cifar-neurons", hw).graph, 256
    yield "vgg-cifar-neurons", lambda: load_instance("vgg-cifar-neurons", hw).graph, 256
    yield "layered 10×10K f16", lambda: layered_random(10, 10_000, 16, seed=1), 256
    yield "stencil 316×316", lambda: stencil(316, 316), 256
    yield "layered 10×100K f16", lambda: layered_random(10, 100_000, 16, seed=1), 256
    yield "stencil 1000×1000", lambda: stencil(1000, 1000), 256
    yield "stencil 100³ (26-nbr)", lambda: stencil(100, 100, 100), 256
    yield "layered 10×210K f16", lambda: layered_random(10, 210_000, 16, seed=1), 256


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="graphs up to ~10 K vertices")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--same-parts", action="store_true",
                    help="the pre-issue-11 table: METIS and KaHIP (fast) get the part "
                    "count of seed004 / seed004-plus")
    ap.add_argument("--kahip-max", type=int, default=100_000,
                    help="largest graph (vertices) KaHIP fast and eco run on")
    ap.add_argument("--strong-max", type=int, default=10_000,
                    help="largest graph (vertices) KaHIP strong runs on (~100-500x METIS)")
    args = ap.parse_args()
    if args.same_parts:
        return same_parts(args)

    from chipsched.heuristics.core_assignment import plus_partition, seed004_partition
    from chipsched.heuristics.core_assignment.peers import (
        default_parts,
        kahip_partition,
        metis_partition,
    )

    big = 10**6  # cores: unconstrained
    rows = []
    for label, build, cap in graphs(args.quick):
        g = build()
        k_peer = default_parts(g.total_size, cap, big)
        runs = [("seed004", lambda g=g, cap=cap: seed004_partition(g, cap, args.seed)),
                ("seed004-plus", lambda g=g, cap=cap: plus_partition(g, cap, big, args.seed)),
                ("metis", lambda g=g, cap=cap, k=k_peer: metis_partition(
                    g, k, cap, big, seed=args.seed)[0])]
        for mode in ("fast", "eco", "strong"):
            if g.n <= (args.strong_max if mode == "strong" else args.kahip_max):
                runs.append((f"kahip-{mode}", lambda g=g, cap=cap, mode=mode, k=k_peer:
                             kahip_partition(g, k, cap, big, seed=args.seed, mode=mode)[0]))
        res = {}
        for meth, fn in runs:
            reset_peak()
            t = time.perf_counter()
            out = fn()
            dt = time.perf_counter() - t
            part = out if isinstance(out, np.ndarray) else out.group
            parts = int(np.unique(part).size)
            cut = g.cut_weight(part)
            loads = np.bincount(part, weights=g.sizes)
            assert loads.max() <= cap, (meth, loads.max(), cap)
            res[meth] = (parts, cut, dt, peak_gib())
            print(f"{label}: {meth} parts={parts} cut {cut} {dt:.2f}s", file=sys.stderr,
                  flush=True)
        m_cut, m_t = res["metis"][1], res["metis"][2]
        for meth, (parts, cut, dt, mem) in res.items():
            rows.append((label, g.n, g.m, -(-g.total_size // cap), meth, parts, cut,
                         cut / m_cut, dt, dt / m_t, mem))
        del g
    cmd = "python benchmarks/core_assignment_partition.py" + (" --quick" if args.quick else "")
    print(f"\n`{cmd}` — every method with its own part count (peers: ⌈1.05·T/K⌉, METIS "
          f"ufactor and KaHIP ε from it); capacity K = 256 neurons per core, Walshaw graphs "
          f"64; KaHIP fast/eco on graphs ≤ {args.kahip_max:,} vertices, strong ≤ "
          f"{args.strong_max:,}\n")
    print("| graph | vertices | edges | method | parts | ⌈T/K⌉ | cut | cut / METIS | time (s) | "
          "time / METIS | peak RSS (GiB) |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    ratios: dict[str, list[tuple[float, float]]] = {}
    for (label, n, m, need, meth, parts, cut, cr, dt, tr, mem) in rows:
        print(f"| {label} | {n:,} | {m:,} | {meth} | {parts:,} | {need:,} | {cut:,} | "
              f"{cr:.3f} | {dt:.2f} | {tr:.2f} | {mem:.2f} |")
        ratios.setdefault(meth, []).append((cr, tr))
    print("\n| method | graphs | geometric mean cut / METIS | geometric mean time / METIS | "
          "worst cut / METIS |")
    print("|---|---:|---:|---:|---:|")
    for meth, rs in ratios.items():
        gm_c = float(np.exp(np.mean(np.log([c for c, _ in rs]))))
        gm_t = float(np.exp(np.mean(np.log([max(t, 1e-9) for _, t in rs]))))
        print(f"| {meth} | {len(rs)} | {gm_c:.3f} | {gm_t:.2f} | {max(c for c, _ in rs):.3f} |")


def same_parts(args) -> None:
    from chipsched.heuristics.core_assignment import plus_partition, seed004_partition
    from chipsched.heuristics.core_assignment.peers import kahip_partition, metis_partition

    rows = []
    for label, build, cap in graphs(args.quick):
        g = build()
        big = 10**6  # cores: unconstrained
        runs = {}
        for meth in ("seed004", "seed004-plus"):
            reset_peak()
            t = time.perf_counter()
            if meth == "seed004":
                r = seed004_partition(g, cap, args.seed)
            else:
                r = plus_partition(g, cap, big, args.seed)
            dt = time.perf_counter() - t
            assert r.cut == g.cut_weight(r.group)
            runs[meth] = (r.n_groups, r.cut, dt, peak_gib())
        for meth, (k, cut, dt, mem) in runs.items():
            reset_peak()
            t = time.perf_counter()
            part, _ = metis_partition(g, k, cap, big, seed=args.seed)
            mt = time.perf_counter() - t
            mcut = g.cut_weight(part)
            mmem = peak_gib()
            kcut = kt = None
            if g.n <= 100_000:
                t = time.perf_counter()
                kp, _ = kahip_partition(g, k, cap, big, seed=args.seed, mode="fast")
                kt = time.perf_counter() - t
                kcut = g.cut_weight(kp)
            rows.append((label, g.n, g.m, meth, k, cut, mcut, dt, mt, mem, mmem, kcut, kt))
            print(f"{label}: {meth} k={k} cut {cut} metis {mcut} ({cut / mcut:.3f}), "
                  f"{dt:.2f}s vs {mt:.2f}s", file=sys.stderr)
        del g
    cmd = "python benchmarks/core_assignment_partition.py" + (" --quick" if args.quick else "")
    print(f"\n`{cmd}` (capacity 256 neurons per core, Walshaw graphs 64; METIS and KaHIP "
          "get the same number of parts)\n")
    print("| graph | vertices | edges | method | parts | cut | METIS cut | cut ratio | "
          "time (s) | METIS (s) | time ratio | peak RSS (GiB) | METIS RSS | KaHIP cut |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (label, n, m, meth, k, cut, mcut, dt, mt, mem, mmem, kcut, _kt) in rows:
        print(f"| {label} | {n:,} | {m:,} | {meth} | {k:,} | {cut:,} | {mcut:,} | "
              f"{cut / mcut:.3f} | {dt:.2f} | {mt:.2f} | {dt / mt:.2f} | {mem:.2f} | "
              f"{mmem:.2f} | {'' if kcut is None else f'{kcut:,}'} |")


if __name__ == "__main__":
    main()
