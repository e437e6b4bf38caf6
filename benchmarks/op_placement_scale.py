"""op_placement at scale (issue 26): time and peak memory of every method at 1 K / 5 K /
20 K / 100 K ops, and each one's distance to the best bound.

Instances: BERT-base with its encoder stack repeated (``bert-base:layers=L`` — cut ops
between every layer: the window decomposition applies) and random DAGs of about two
edges per op (``random:n=N,density=2/N`` — no cut op). Each (instance, method) runs in a
fresh process; build time, the method's ``wall_s`` and the process's peak resident
memory are reported. CP-SAT gets ``--time-limit 60`` (its warm start included).

    python benchmarks/op_placement_scale.py --quick     # 1 K and 5 K ops
    python benchmarks/op_placement_scale.py             # up to 20 K ops
    python benchmarks/op_placement_scale.py --all       # and 100 K ops
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

METHODS = ("heft", "cpop", "seed003", "bound", "cpsat")


def one(spec: str, method: str, limit: float) -> dict:
    """Run ``method`` on ``spec`` here; the figures as a dict."""
    from chipsched.api import make_instance, solve

    t0 = time.perf_counter()
    inst = make_instance("op_placement", spec)
    build = time.perf_counter() - t0
    kw = {"time_limit": limit} if method in ("cpsat", "bound") else {}
    r = solve("op_placement", inst, method, **kw)
    return {"spec": spec, "method": method, "ops": inst.n_ops, "edges": len(inst.edges),
            "build_s": build, "wall_s": r.wall_s, "status": r.status.value,
            "objective": r.objective, "bound": r.bound,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--all", action="store_true", help="also 100 K ops")
    ap.add_argument("--limit", type=float, default=60.0)
    ap.add_argument("--one", nargs=2, metavar=("SPEC", "METHOD"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one:
        print(json.dumps(one(a.one[0], a.one[1], a.limit)))
        return 0
    sizes = [(22, 1000), (109, 5000)]
    if not a.quick:
        sizes.append((437, 20000))
    if a.all:
        sizes.append((2220, None))  # random: n ≤ 20,000 (the generator's cap)
    specs = []
    for layers, n in sizes:
        specs.append(f"bert-base:layers={layers}")
        if n is not None:
            specs.append(f"random:n={n},p=3,density={2 / n:g}")
    rows = []
    for spec in specs:
        for m in METHODS:
            out = subprocess.run([sys.executable, __file__, "--one", spec, m, "--limit",
                                  f"{a.limit:g}"], capture_output=True, text=True)
            if out.returncode:
                print(f"{spec} {m}: failed: {out.stderr.strip().splitlines()[-1]}",
                      file=sys.stderr)
                continue
            row = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(f"{spec:34s} {m:8s} {row['wall_s']:7.2f} s {row['peak_mb']:7.0f} MB "
                  f"{row['status']}", file=sys.stderr, flush=True)
    cmd = "python benchmarks/op_placement_scale.py" + " ".join(
        [""] + [x for x in (sys.argv[1:] if argv is None else argv)])
    print(f"Command: `{cmd}` — each (instance, method) a fresh process; CP-SAT and the "
          f"bound {a.limit:g} s\n")
    print("| instance | ops | edges | build (s) | method | status | time (s) | peak RSS (MB) "
          "| objective | ≤ gap to the best bound |")
    print("|---|---:|---:|---:|---|---|---:|---:|---:|---:|")
    for spec in specs:
        mine = [r for r in rows if r["spec"] == spec]
        bounds = [r["bound"] for r in mine if r["bound"] is not None]
        best = max(bounds) if bounds else None
        for r in mine:
            gap = "—" if best is None or r["objective"] is None else \
                f"{100 * (r['objective'] - best) / r['objective']:.4f} %"
            obj = "—" if r["objective"] is None else f"{r['objective']:.6g}"
            print(f"| `{spec}` | {r['ops']:,} | {r['edges']:,} | {r['build_s']:.2f} | "
                  f"{r['method']} | {r['status']} | {r['wall_s']:.2f} | {r['peak_mb']:.0f} | "
                  f"{obj} | {gap} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
