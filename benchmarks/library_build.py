"""Build chipsched-lib (issue 28): write the instance files, then run methods on each
instance and keep the best solution found and the strongest full-space bound.

    python benchmarks/library_build.py --instances          # (re)write the instance files
    python benchmarks/library_build.py --solve --limit 10   # best knowns and bounds
    python benchmarks/library_build.py --solve --only tg-tiny-chain-2x2-b4 --limit 60
    python benchmarks/library_build.py --solve --only ca-lenet5-c4 --methods bound \
        --limit 500 --param iterations=100                  # method parameters
    python benchmarks/library_build.py --polish --seeds 2 --limit 60   # tile_groups SA
    python benchmarks/library_build.py --polish --seeds 0 --limit 600 \
        --only tg-googlenet-cloud-b8                # allocation polish + descents only
    python benchmarks/library_build.py --polish --only ca-resnet-cifar-neurons \
        --rounds 40 --tabu-iterations 0                     # core_assignment moves
    python benchmarks/library_build.py --polish --only ca-resnet-cifar-neurons \
        --start kahip --param placement=tabu --rounds 12 --tabu-iterations 20000000
    python benchmarks/library_build.py --write-docs         # the table in docs/library.md

``--solve`` runs ``chipsched.compare`` with the decision's methods below and a time limit
of ``--limit`` s per run (every method, heuristics included), seed 0; a best-known file
is replaced only by a strictly better solution and a bound file only by a strictly
larger bound (the bounds of restricted spaces — a fixed partition's placements, the
segmented tree space — do not count), so reruns only polish. Instances whose fingerprint
no longer matches refuse to build: rebuild with ``--instances`` and bump the library
version when that happens.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# (decision, id, spec, chip, options, tier, description)
SET = ("resnet50-v1", "googlenet", "inception-resnet-v1", "pnasnet5-large",
       "transformer-set-isca23")


def catalogue() -> list[tuple]:
    tg = []
    for net in ("tiny-chain", "tiny"):
        for b in (1, 2, 4):
            tg.append(("tile_groups", f"tg-{net}-2x2-b{b}", net, "tiled-2x2", {"batch": b},
                       "tiny", f"{net} on a 2×2 tiled chip, batch {b}, E²·D"))
    tg.append(("tile_groups", "tg-tiny-chain-2x2-b2-energy", "tiny-chain", "tiled-2x2",
               {"batch": 2, "objective": "energy"}, "tiny", "tiny-chain, batch 2, energy"))
    tg.append(("tile_groups", "tg-tiny-chain-2x2-b2-latency", "tiny-chain", "tiled-2x2",
               {"batch": 2, "objective": "latency"}, "tiny", "tiny-chain, batch 2, latency"))
    tg.append(("tile_groups", "tg-lenet5-2x2-b1", "lenet5", "tiled-2x2", {"batch": 1},
               "small", "LeNet-5 on a 2×2 tiled chip, E²·D"))
    # SET's experiment: five workloads × batch 1/8/64 × edge (E²·D) / cloud (E·D²) — the
    # grid of docs/benchmarks.md, every configuration (1.0 had 13 of the 30)
    for chip, obj, what in (("edge-4x4", "e2d", "E²·D"), ("cloud-12x12", "ed2", "E·D²")):
        for net in SET:
            for b in (1, 8, 64):
                tg.append(("tile_groups", f"tg-{net}-{chip.split('-')[0]}-b{b}", net, chip,
                           {"batch": b, "objective": obj}, "real",
                           f"SET's {net} on {chip}, batch {b}, {what}"))

    ca = []
    small = (("stencil:nx=4,ny=4", "neuro-2x2-k4", "4×4 stencil, cores of 4"),
             ("stencil:nx=4,ny=4", "neuro-4x4-k1", "4×4 stencil, one neuron per core (a QAP)"),
             ("stencil:nx=6,ny=6", "neuro-3x3-k4", "6×6 stencil, cores of 4"),
             ("stencil:nx=8,ny=8", "neuro-4x4-k4", "8×8 stencil, cores of 4"),
             ("stencil:nx=12,ny=12", "neuro-4x4-k12", "12×12 stencil, cores of 12"),
             ("stencil:nx=12,ny=12,radius=2", "neuro-4x4-k9",
              "12×12 stencil of radius 2, cores of 9"),
             ("layered:layers=3,width=8,fanin=3,seed=1", "neuro-3x3-k4",
              "3 random layers of 8, fan-in 3"),
             ("layered:layers=4,width=20,fanin=4,seed=1", "neuro-4x4-k8",
              "4 random layers of 20, fan-in 4"),
             ("layered:layers=10,width=100,fanin=8,seed=1", "neuro-6x6-k32",
              "10 random layers of 100, fan-in 8"))
    for i, (spec, chip, what) in enumerate(small):
        ca.append(("core_assignment", f"ca-small-{i + 1:02d}", spec, chip, {},
                   "tiny" if i < 7 else "small", what))
    for obj in ("traffic", "cut"):
        ca.append(("core_assignment", f"ca-layered-10x1000-{obj}",
                   "layered:layers=10,width=1000,fanin=16,seed=1", "neuro-8x8",
                   {"objective": obj}, "real", f"10 random layers of 1,000, fan-in 16, {obj}"))
    ca.append(("core_assignment", "ca-stencil-100x100", "stencil:nx=100,ny=100",
               "neuro-8x8", {}, "real", "100×100 stencil, cores of 256"))
    for obj in ("traffic", "energy", "multicast", "cut"):
        ca.append(("core_assignment", f"ca-lenet5-neurons-{obj}", "lenet5-neurons",
                   "neuro-8x8", {"objective": obj}, "real", f"LeNet-5's neurons, {obj}"))
    ca.append(("core_assignment", "ca-lenet5-c4", "lenet5", "neuro-8x8",
               {"channels_per_vertex": 4}, "real", "LeNet-5, 4 channels per vertex"))
    for net in ("vgg-cifar-neurons", "resnet-cifar-neurons"):
        ca.append(("core_assignment", f"ca-{net}", net, "neuro-8x8", {}, "real",
                   f"{net} (the mesh sized to the graph)"))
    ca.append(("core_assignment", "ca-layered-10x10000", "layered:layers=10,width=10000,"
               "fanin=16,seed=1", "neuro-8x8", {}, "real",
               "10 random layers of 10,000, fan-in 16"))

    op = []
    for n, seeds in ((8, 4), (12, 3), (20, 2), (40, 2), (100, 1)):
        for s in range(1, seeds + 1):
            op.append(("op_placement", f"op-random-n{n}-s{s}", f"random:n={n},p=3,seed={s}",
                       "soc-npu-gpu-cpu", {}, "tiny" if n <= 12 else "small",
                       f"random DAG of {n} ops on 3 processors, seed {s}"))
    for net in ("resnet50", "mobilenet-v2", "bert-base", "googlenet", "vgg16",
                "transformer-base", "inception-resnet-v1", "pnasnet5-mobile"):
        op.append(("op_placement", f"op-{net}-soc3", net, "soc-npu-gpu-cpu", {}, "real",
                   f"{net} on NPU + GPU + CPU, latency"))
    for net in ("resnet50", "mobilenet-v2", "bert-base"):
        op.append(("op_placement", f"op-{net}-soc2", net, "soc-npu-gpu", {}, "real",
                   f"{net} on NPU + GPU, latency"))

    rs = []
    for net in ("tiny", "tiny-chain", "lenet5"):
        rs.append(("region_split", f"rs-{net}-chiplet-2x2", net, "chiplet-2x2", {}, "tiny",
                   f"{net} on 2×2 chiplets, pipeline period"))
    for net in ("resnet50", "googlenet", "vgg16", "mobilenet-v2"):
        for chip in ("chiplet-4x4", "chiplet-6x6"):
            rs.append(("region_split", f"rs-{net}-{chip}", net, chip, {}, "real",
                       f"{net} on {chip[8:]} chiplets, pipeline period"))
    for net in ("tiny", "tiny-chain", "lenet5", "resnet50", "mobilenet-v2", "bert-base",
                "googlenet", "vgg16"):
        rs.append(("region_split", f"rs-{net}-soc3", net, "soc-npu-gpu-cpu", {},
                   "tiny" if net in ("tiny", "tiny-chain", "lenet5") else "real",
                   f"{net} split NPU → GPU → CPU"))
    for net in ("resnet50", "bert-base"):
        rs.append(("region_split", f"rs-{net}-soc2", net, "soc-npu-gpu", {}, "real",
                   f"{net} split NPU → GPU"))
    for chip in ("chiplet-4x4", "chiplet-6x6"):
        # every layer an item: more ideals than the DP's limit, so the exact optimum is
        # over cuts of the item order and the full space has only a bound (open)
        rs.append(("region_split", f"rs-pnasnet5-large-layers-{chip}", "pnasnet5-large", chip,
                   {"items": "layers"}, "real",
                   f"PNASNet-5 Large on {chip[8:]} chiplets, every layer an item"))
    return tg + ca + op + rs


#: Methods run by --solve per decision (those that do not apply are skipped by compare).
METHODS = {
    "tile_groups": ["bruteforce", "bound", "ls", "lp", "dp-seg-npt", "sa"],
    "core_assignment": ["bruteforce", "cpsat", "bnb-place", "bound", "seed004-plus", "scotch"],
    "op_placement": ["bruteforce", "cpsat", "bound", "seed003", "heft"],
    "region_split": ["bruteforce", "dp", "cpsat", "seed000", "seed001-threshold"],
}


def write_instances(only: set[str] | None) -> None:
    from chipsched import library

    for dec, id_, spec, chip, opts, tier, what in catalogue():
        if only and id_ not in only:
            continue
        t = time.perf_counter()
        e = library.write_entry(dec, id_, spec, chip, opts, what, tier)
        print(f"{id_}: {e.size:,.0f} {e.size_unit}, {time.perf_counter() - t:.1f} s",
              file=sys.stderr, flush=True)


def keep_if_better(e: Any, r: Any, params: dict, seed: int | None, limit: float
                   ) -> float | None:
    """Write result ``r``'s solution as ``e``'s best known when it is strictly better
    (re-evaluated by the verifier), recording how it was found; its objective, else
    ``None``."""
    from chipsched import library

    bk = library.best_known(e)
    v = library.verify(e, {"solution": r.solution.to_dict()})
    if bk is not None and v.objective >= bk.objective * (1 - 1e-9):
        return None
    library.write_best_known(e, v.objective, v.components, r.solution.to_dict(),
                             {"method": r.method, "params": params, "seed": seed,
                              "time_limit": limit, "wall_s": round(r.wall_s, 3)})
    return v.objective


def _taken_by(decision: str, method: str, params: dict[str, Any] | None
              ) -> dict[str, Any]:
    """The ``--param`` values that ``method`` takes, coerced to their declared types."""
    from chipsched.api import method_param_specs

    specs = {p.name: p for p in method_param_specs(decision, method)}
    return {k: specs[k].check(v, f"{decision}/{method}") for k, v in (params or {}).items()
            if k in specs}


def _taken(params: dict[str, Any] | None, r: Any) -> dict[str, Any]:
    """The ``--param`` values that result ``r``'s method takes (recorded with it)."""
    return _taken_by(r.decision, r.method, params)


def solve_all(only: set[str] | None, limit: float, threads: int | None,
              methods: list[str] | None = None, seeds: int = 1, first_seed: int = 0,
              params: dict[str, Any] | None = None) -> None:
    from chipsched import library
    from chipsched.api import compare
    from chipsched.result import Status
    from chipsched.solvers.options import SolveOptions

    for e in library.entries():
        if only and e.id not in only:
            continue
        inst = library.build_instance(e)
        t = time.perf_counter()
        res = compare(e.decision, inst, methods or METHODS[e.decision],
                      seeds=range(first_seed, first_seed + seeds),
                      options=SolveOptions(time_limit=limit, seed=0, threads=threads),
                      **(params or {}))
        found = [r for r in res if r.objective is not None and r.solution is not None]
        msg = []
        if found:
            r = min(found, key=lambda r: r.objective)
            v = keep_if_better(e, r, _taken(params, r), r.seed, limit)
            if v is not None:
                msg.append(f"best known {v:.6g} ({r.method})")
        # full-space bounds: the results' own, and the one a restricted-space method
        # reports for the whole space (region_split's DP over the item order)
        cands = [(r.bound, r, "optimal" if r.status is Status.OPTIMAL else r.status.value,
                  _taken(params, r)) for r in res if r.bound is not None and not r.space]
        cands += [(float(r.metrics["solver"]["full_space_bound"]), r, "bound_only",
                   {"reported_as": "full_space_bound"})
                  for r in res if isinstance(r.metrics.get("solver"), dict)
                  and r.metrics["solver"].get("full_space_bound") is not None]
        lb, r, status, how = max(cands, key=lambda c: c[0]) if cands else (None, None, "", {})
        bd = library.bound(e)
        if lb is not None and (bd is None or lb > bd.value * (1 + 1e-12)):
            library.write_bound(e, float(lb), r.method, how, status, r.wall_s, limit)
            msg.append(f"bound {lb:.6g} ({r.method}, {status})")
        print(f"{e.id}: {'; '.join(msg) or 'no improvement'} "
              f"({time.perf_counter() - t:.0f} s)", file=sys.stderr, flush=True)


def polish(only: set[str] | None, limit: float, seeds: int) -> None:
    """Issue 30's polish of the tile_groups best knowns: the allocation polish
    alternated with up to 3 zero-temperature descents (``allocate -p descents=3``, seed
    0) of the stored best tree, then SA (default parameters) started
    from the best tree, seeds 0..``seeds``-1, ``limit`` s each, then once from the
    better LS/LP DP tree (``start=dp``; with ``seeds`` ≥ 1); a strictly better tree
    replaces the file, which records the run (method, parameters, seed, limit and that
    it started from the best known). Rerunning polishes further."""
    from chipsched import library
    from chipsched.api import solve
    from chipsched.errors import ChipschedError

    for e in library.entries("tile_groups"):
        if only and e.id not in only:
            continue
        inst = library.build_instance(e)
        t = time.perf_counter()
        runs = [("allocate", {"warm_start": "best known", "descents": 3}, 0)]
        runs += [("sa", {"warm_start": "best known"}, s) for s in range(seeds)]
        if seeds:
            runs.append(("sa", {"start": "dp"}, 0))
        msg = []
        for name, how, seed in runs:
            bk = library.best_known(e)
            kw: dict = {k: how[k] for k in ("start", "descents") if k in how}
            if "warm_start" in how:
                if bk is None:
                    continue
                kw["warm_start"] = dict(bk.solution)
            try:
                r = solve("tile_groups", inst, name, time_limit=limit, seed=seed,
                          threads=1, **kw)
            except ChipschedError as err:
                msg.append(f"{name} {how} seed {seed}: {err}")
                continue
            if r.objective is not None and r.solution is not None:
                # a polish of the best known records what that tree was
                rec = {**how, "from": library.how_found(bk.found_by)} \
                    if "warm_start" in how and bk is not None else how
                v = keep_if_better(e, r, rec, seed, limit)
                if v is not None:
                    msg.append(f"{v:.6g} ({name} {how}, seed {seed})")
        print(f"{e.id}: {'; '.join(msg) or 'no improvement'} "
              f"({time.perf_counter() - t:.0f} s)", file=sys.stderr, flush=True)


def polish_core_assignment(only: set[str] | None, rounds: int, tabu_iterations: int,
                           first_seed: int = 0, patience: int = 3,
                           start_method: str | None = None,
                           params: dict[str, Any] | None = None) -> None:
    """Issue 27's polish of the core_assignment best knowns (traffic and energy rows):
    from the stored mapping, rounds of a sparse tabu search on its cores' placement
    (``tabu_iterations``, started from the mapping's own placement; 0: none) and then
    neuron moves and swaps on the mesh (:func:`refine_on_mesh`, 16 passes at most), seed
    ``first_seed + round``, until ``rounds`` or ``patience`` rounds in a row without a
    gain; a strictly better mapping replaces the file, which records the polish and
    what it started from. ``start_method``: start from that method's mapping instead
    (run here, seed 0, with the ``params`` it takes — e.g. ``kahip`` with
    ``placement=tabu``: another partition's basin). Rerunning polishes further."""
    import numpy as np

    from chipsched import library
    from chipsched.heuristics.core_assignment.meshrefine import refine_on_mesh
    from chipsched.heuristics.core_assignment.tabusearch import place_tabu
    from chipsched.problems.core_assignment import Solution, evaluate

    for e in library.entries("core_assignment"):
        if only and e.id not in only:
            continue
        inst = library.build_instance(e)
        bk = library.best_known(e)
        if bk is None or inst.objective.name not in ("traffic", "energy") or inst.multicast:
            continue
        t = time.perf_counter()
        if start_method is None:
            start, origin = dict(bk.solution), library.how_found(bk.found_by)
        else:
            from chipsched.api import solve

            r0 = solve("core_assignment", inst, start_method, seed=0, threads=1,
                       **_taken_by("core_assignment", start_method, params))
            start = r0.solution.to_dict()
            origin = library.how_found({"method": start_method, "params": _taken_by(
                "core_assignment", start_method, params)}) + ", seed 0"
        core = np.asarray(start["core"], dtype=np.int64)
        # each round on the instance built above with the shared evaluator; the verifier
        # (which rebuilds the instance from its file) checks only what is written
        best, misses, done = evaluate(inst, Solution(core))[0], 0, 0
        for r in range(rounds):
            seed = first_seed + r
            cand = core
            if tabu_iterations > 0:
                used, group = np.unique(core, return_inverse=True)
                q = inst.quotient(group.astype(np.int64), int(used.shape[0]))
                gc, _ = place_tabu(q, inst.rows, inst.cols, used.astype(np.int64), seed,
                                   tabu_iterations, None, variant="sparse")
                cand = gc[group]
            cand, _ = refine_on_mesh(inst.graph, cand, inst.rows, inst.cols, inst.capacity,
                                     seed, max_passes=16)
            v = evaluate(inst, Solution(cand))[0]
            done = r + 1
            if v < best:
                core, best, misses = cand, v, 0
            else:
                misses += 1
                if misses >= patience:
                    break
        if best < bk.objective * (1 - 1e-12):
            v = library.verify(e, {"core": core.tolist()})
            library.write_best_known(e, v.objective, v.components, {"core": core.tolist()}, {
                "method": "polish", "params": {"of": origin,
                                               "rounds": done,
                                               "tabu_iterations": tabu_iterations,
                                               "first_seed": first_seed},
                "seed": first_seed, "time_limit": None,
                "wall_s": round(time.perf_counter() - t, 3)})
            msg = f"{bk.objective:.8g} -> {best:.8g}"
        else:
            msg = "no improvement"
        print(f"{e.id}: {msg} ({done} rounds, {time.perf_counter() - t:.0f} s)",
              file=sys.stderr, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instances", action="store_true", help="(re)write the instance files")
    ap.add_argument("--solve", action="store_true", help="run the methods, keep the best")
    ap.add_argument("--polish", action="store_true",
                    help="tile_groups: allocation polish of the best known, then SA from it "
                    "(--seeds seeds) and from the DP tree, --limit s each; core_assignment: "
                    "--rounds of tabu placement + neuron moves from the best known; keep "
                    "what is better")
    ap.add_argument("--rounds", type=int, default=20,
                    help="with --polish: core_assignment rounds at most")
    ap.add_argument("--start", default=None, metavar="METHOD",
                    help="with --polish: core_assignment polish from METHOD's mapping "
                    "(seed 0, its --param values) instead of the best known")
    ap.add_argument("--tabu-iterations", type=int, default=0,
                    help="with --polish: core_assignment tabu iterations per round (0: "
                    "neuron moves only)")
    ap.add_argument("--write-docs", action="store_true",
                    help="replace the generated table of docs/library.md")
    ap.add_argument("--limit", type=float, default=10.0, help="seconds per method run")
    ap.add_argument("--only", nargs="*", default=None, help="instance ids")
    ap.add_argument("--threads", type=int, default=None, help="solver threads")
    ap.add_argument("--seeds", type=int, default=1,
                    help="seeds 0..N-1 for the randomized methods")
    ap.add_argument("--first-seed", type=int, default=0,
                    help="with --solve: seeds first..first+N-1 instead of 0..N-1; with "
                    "--polish: the first core_assignment round's seed")
    ap.add_argument("--methods", nargs="*", default=None,
                    help="methods to run instead of the decision's list (e.g. bound)")
    ap.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                    help="with --solve: a method parameter, to the methods that take it "
                    "(as `chipsched compare -p`); recorded with what it finds")
    args = ap.parse_args()
    params = {}
    for kv in args.param:
        name, sep, value = kv.partition("=")
        if not sep or not name:
            raise SystemExit(f"--param {kv!r}: give NAME=VALUE, e.g. --param iterations=100")
        params[name] = value
    only = set(args.only) if args.only else None
    if args.instances:
        write_instances(only)
    if args.solve:
        solve_all(only, args.limit, args.threads, args.methods, args.seeds, args.first_seed,
                  params)
    if args.polish:
        polish(only, args.limit, args.seeds)
        polish_core_assignment(only, args.rounds, args.tabu_iterations, args.first_seed,
                               start_method=args.start, params=params)
    if args.write_docs:
        write_docs()


def write_docs() -> None:
    """Put the generated table between the markers of docs/library.md."""
    import re

    from chipsched import library

    path = Path(__file__).resolve().parents[1] / "docs" / "library.md"
    text = path.read_text()
    new, n = re.subn(r"(<!-- library-table:begin -->\n).*?(<!-- library-table:end -->)",
                     lambda m: m.group(1) + library.docs_table() + m.group(2), text,
                     flags=re.S)
    if n != 1:
        raise SystemExit(f"{path}: the library-table markers are missing")
    path.write_text(new)
    print(f"wrote the table of {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
