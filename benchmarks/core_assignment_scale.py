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

``--on-disk`` runs the out-of-core path instead (issue 11): the graph is generated
straight into seed 004's zip storage (never whole in memory), then seed 004 maps it
with every level on disk (``streaming.seed004_zip``: streaming coarsening,
refinement read from the level files, the groups' quotient and the evaluator's flows
read from the zip). A sampler thread records the peak RSS of every stage; the table
gives time, peak RSS and bytes on disk per stage.

    python benchmarks/core_assignment_scale.py --on-disk --quick          # 10 M edges
    python benchmarks/core_assignment_scale.py --on-disk                  # 100 M edges
    python benchmarks/core_assignment_scale.py --on-disk --layers 21 --width 300000
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
    ap.add_argument("--on-disk", action="store_true",
                    help="generate into the seed-004 zip and map it out of core")
    ap.add_argument("--layers", type=int, default=None)
    ap.add_argument("--width", type=int, default=None)
    ap.add_argument("--fanin", type=int, default=50)
    ap.add_argument("--workdir", default="out/core_assignment_scale",
                    help="where the zip and the level files go (--on-disk)")
    ap.add_argument("--keep", action="store_true", help="keep the zip (--on-disk)")
    args = ap.parse_args()
    layers, width, fanin = (11, 20_000, 50) if args.quick else (21, 100_000, 50)
    layers = args.layers or layers
    width = args.width or width
    fanin = args.fanin
    if args.on_disk:
        return on_disk(args, layers, width, fanin)

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
    con = Console(stderr=True, width=160)
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


def current_rss_gib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 2**20
    return float("nan")


def on_disk(args: argparse.Namespace, layers: int, width: int, fanin: int) -> None:
    """The out-of-core run (module docstring)."""
    import threading

    from rich.console import Console

    from chipsched.heuristics.core_assignment.streaming import seed004_zip
    from chipsched.instances.chips import get_chip
    from chipsched.instances.core_assignment.ondisk import ZIP_STORE, write_layered_zip

    wd = Path(args.workdir)
    wd.mkdir(parents=True, exist_ok=True)
    zpath = wd / f"layered-{layers}x{width}-f{fanin}.zip"
    con = Console(stderr=True, width=160)
    stage = ["generate"]
    peak: dict[str, float] = {}
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[stage[0]] = max(peak.get(stage[0], 0.0), current_rss_gib())
            stop.wait(0.2)

    def note(text: str) -> None:
        for key, name in (("level", "coarsen"), ("loading the coarsest", "initial_partition"),
                          ("initial partition", "initial_partition"),
                          ("refined", "uncoarsen"), ("placing", "placement"),
                          ("evaluating", "evaluate")):
            if text.startswith(key):
                stage[0] = name
        # RSS and elapsed time in the log, so that a run stopped early still says how far
        # it went and what it held
        con.log(f"{text} (RSS {current_rss_gib():.2f} GiB, {time.perf_counter() - t0:.0f} s)")

    th = threading.Thread(target=sample, daemon=True)
    th.start()
    t0 = time.perf_counter()
    n, m = layers * width, (layers - 1) * width * fanin
    with con.status(f"generating {n:,} vertices, {m:,} edges into {zpath}"):
        write_layered_zip(zpath, layers, width, fanin, seed=args.seed, progress=note)
    t_gen = time.perf_counter() - t0
    zip_bytes = zpath.stat().st_size
    stage[0] = "coarsen"
    hw = get_chip("neuro-8x8")
    res = seed004_zip(zpath, hw, *ZIP_STORE, seed=args.seed, workdir=wd / "levels",
                      progress=note)
    stop.set()
    th.join()
    st = res.stats
    times = {"generate": t_gen, **st["stage_s"]}
    rss = {k: peak.get(k, float("nan")) for k in times}
    # the sampler names placement stages after the progress text
    rss["quotient"] = peak.get("uncoarsen", float("nan"))
    rss["bisection_placement"] = rss["force_directed"] = peak.get("placement", float("nan"))
    disk = {"generate": zip_bytes, "coarsen": sum(st["level_bytes"][1:])}
    inst = res.instance
    if not args.keep:
        zpath.unlink(missing_ok=True)
    cmd = (f"python benchmarks/core_assignment_scale.py --on-disk --layers {layers} "
           f"--width {width} --fanin {fanin}")
    print(f"\n`{cmd}` — {n:,} vertices, {m:,} edges (zip {zip_bytes / 2**30:.2f} GiB), "
          f"capacity {inst.capacity}, {inst.rows}×{inst.cols} cores, seed 004 out of core\n")
    print("| stage | time (s) | peak RSS in stage (GiB) | on disk (GiB) |")
    print("|---|---:|---:|---:|")
    for k, t in times.items():
        d = f"{disk[k] / 2**30:.2f}" if k in disk else ""
        r = f"{rss[k]:.2f}" if rss[k] == rss[k] else "–"
        print(f"| {k} | {t:.1f} | {r} | {d} |")
    print(f"| **total** | **{sum(times.values()):.1f}** | **{peak_rss_gib():.2f}** (VmHWM) | "
          f"**{(zip_bytes + disk['coarsen']) / 2**30:.2f}** |")
    mt = res.metrics
    print(f"\nlevels {st['levels']} ({', '.join(f'{v:,}' for v in st['level_vertices'])} "
          f"vertices); groups {st['groups']:,}; cut {mt['cut_weight']:,} "
          f"({mt['cut_weight'] / m:.1%} of the synapses); traffic {mt['traffic']:,} w·hop; "
          f"multicast {mt['multicast_traffic']:,} packet·hop; max link "
          f"{mt['max_link_bytes']:.3g} B")


if __name__ == "__main__":
    main()
