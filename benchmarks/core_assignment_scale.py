"""core_assignment at scale: seed 004 end to end on a 100 M-edge neuron graph.

Generates ``layered_random(layers, width, fanin)`` (a feed-forward neuron graph with 1-D
receptive fields; 21 × 100,000 neurons with fan-in 50 = 2.1 M vertices and 100 M
synapses in full mode), maps it with the chosen method's stages under a rich progress
bar, evaluates the mapping with the shared evaluator, and prints a markdown table with
the time of every stage and the peak RSS of the process (VmHWM; the graph itself
included).

    python benchmarks/core_assignment_scale.py --quick        # 10 M edges
    python benchmarks/core_assignment_scale.py                # 100 M edges
    python benchmarks/core_assignment_scale.py --method plus  # the improved variant
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def peak_rss_gib() -> float:
    """Peak resident set size of this process so far (GiB)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="10 M edges instead of 100 M")
    ap.add_argument("--method", choices=("seed004", "plus"), default="seed004")
    ap.add_argument("--capacity", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    layers, width, fanin = (11, 20_000, 50) if args.quick else (21, 100_000, 50)

    from rich.console import Console
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from chipsched.heuristics.core_assignment import (
        force_directed,
        map_groups,
        place_recursive_bisection,
        plus_partition,
        plus_placement,
        seed004_partition,
    )
    from chipsched.heuristics.core_assignment.placement import check_fits
    from chipsched.instances.chips import get_chip
    from chipsched.instances.core_assignment import fit_mesh
    from chipsched.neurongraph import layered_random
    from chipsched.problems.core_assignment import Instance, evaluate

    stages = ["generate", "partition (steps 2–5)", "placement (step 6)",
              "force-directed (step 7)", "evaluate"]
    times: dict[str, float] = {}
    rss: dict[str, float] = {}
    con = Console(stderr=True)
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                  TextColumn("{task.completed}/{task.total} stages"), TimeElapsedColumn(),
                  console=con) as prog:
        task = prog.add_task("generate", total=len(stages))

        def note(text: str) -> None:
            prog.update(task, description=text)

        def done(stage: str, t0: float) -> float:
            times[stage] = time.perf_counter() - t0
            rss[stage] = peak_rss_gib()
            prog.advance(task)
            return time.perf_counter()

        t = time.perf_counter()
        note(f"generate {layers}×{width:,} neurons, fan-in {fanin}")
        g = layered_random(layers, width, fanin, seed=args.seed)
        rows, cols = fit_mesh(g.total_size, args.capacity)
        inst = Instance(g.name, g, get_chip("neuro-8x8"), rows, cols, args.capacity)
        t = done(stages[0], t)
        note("partition")
        if args.method == "seed004":
            res = seed004_partition(g, args.capacity, args.seed, progress=note)
        else:
            res = plus_partition(g, args.capacity, inst.n_cores, args.seed, progress=note)
        check_fits(res.n_groups, rows, cols)
        t = done(stages[1], t)
        note(f"placing {res.n_groups:,} groups on {rows}×{cols}")
        q = g.contract(res.group, res.n_groups)
        if args.method == "seed004":
            gc = place_recursive_bisection(q, rows, cols, args.seed)
            t = done(stages[2], t)
            note("force-directed swaps")
            gc, fs = force_directed(q, gc, rows, cols)
        else:
            gc, fs = plus_placement(q, rows, cols, args.seed)
            t = done(stages[2], t)
        t = done(stages[3], t)
        note("evaluate")
        out = map_groups(inst, res.group, gc, res.cut, fs)
        obj, m = evaluate(inst, out.solution)
        assert obj == out.objective, (obj, out.objective)
        done(stages[4], t)
    total = sum(times.values())
    cmd = "python benchmarks/core_assignment_scale.py" + (" --quick" if args.quick else "") + \
        (f" --method {args.method}" if args.method != "seed004" else "")
    print(f"\n`{cmd}` — {g.n:,} vertices, {g.m:,} edges, capacity {args.capacity}, "
          f"{rows}×{cols} cores, method {args.method}\n")
    print("| stage | time (s) | peak RSS after (GiB) |")
    print("|---|---:|---:|")
    for s in stages:
        print(f"| {s} | {times[s]:.1f} | {rss[s]:.2f} |")
    print(f"| **total** | **{total:.1f}** | **{max(rss.values()):.2f}** |")
    print(f"\ngroups {res.n_groups:,}; cut {m['cut_weight']:,} "
          f"({m['cut_weight'] / g.total_weight:.1%} of the synapses); traffic {m['traffic']:,} "
          f"weight·hops; max link {m['max_link_bytes']:.3g} B; "
          f"partition stats: levels {res.stats['levels']}, coarsest "
          f"{res.stats['coarsest_vertices']:,} vertices; swaps {fs.get('swaps')}")


if __name__ == "__main__":
    main()
