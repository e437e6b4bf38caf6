"""``chipsched demo``: what exists, end to end. It grows with each decision."""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console
from rich.table import Table


def run_demo(con: Console, out_dir: Path, quick: bool = False) -> None:
    from chipsched.api import registry
    from chipsched.cost import CostModel, divisors
    from chipsched.graph import computation_graph, group_graph, reduce_chains
    from chipsched.instances.chips import chip_names, get_chip
    from chipsched.instances.networks import get_network, network_names
    from chipsched.plots import plot_layer_scaling
    from chipsched.solvers.options import SolveOptions
    from chipsched.solvers.selftest import balance_bruteforce, balance_cpsat, balance_pyomo

    con.rule("[bold]chipsched demo")

    # 1. the network library against the published totals
    t = Table(title="1. network library vs published totals (per image)", title_justify="left")
    for col, j in (("network", "left"), ("layers", "right"), ("GMACs", "right"),
                   ("published", "right"), ("M params", "right"), ("published", "right")):
        t.add_column(col, justify=j)
    for n in network_names():
        w = get_network(n)
        pub = w.meta.get("published", {}) if isinstance(w.meta, dict) else {}
        pm, pp = pub.get("macs"), pub.get("params")
        t.add_row(n, str(len(w)), f"{w.total_macs / 1e9:.3f}",
                  f"{pm / 1e9:.3f}" if isinstance(pm, (int, float)) else "—",
                  f"{w.total_params / 1e6:.2f}",
                  f"{pp / 1e6:.2f}" if isinstance(pp, (int, float)) else "—")
    con.print(t)

    # 2. chips
    t = Table(title="2. chip presets", title_justify="left")
    for col, j in (("chip", "left"), ("kind", "left"), ("mesh", "left"), ("units", "right"),
                   ("peak TOPS", "right"), ("DRAM GB/s", "right")):
        t.add_column(col, justify=j)
    for n in chip_names():
        hw = get_chip(n)
        t.add_row(n, hw.kind(), f"{hw.rows}×{hw.cols}", str(hw.n_units or ""),
                  f"{hw.peak_tops:.1f}" if hw.peak_tops else "",
                  f"{hw.dram.bandwidth_gb_s:.1f}" if hw.dram else "")
    con.print(t)

    # 3. seed 000 graph steps
    t = Table(title="3. seed 000: G → G' (chain reduction) → pipeline-group graph S",
              title_justify="left")
    for col, j in (("network", "left"), ("|V|", "right"), ("|V'|", "right"),
                   ("groups |P|", "right"), ("|E_S|", "right"), ("d (MB)", "right")):
        t.add_column(col, justify=j)
    for n in ("resnet50", "googlenet", "mobilenet-v2", "bert-base"):
        w = get_network(n)
        g = computation_graph(w)
        g2 = reduce_chains(g)
        s = group_graph(g2)
        t.add_row(n, str(len(g)), str(len(g2)), str(len(s)), str(len(s.edges)),
                  f"{s.data_volume / 1e6:.2f}")
    con.print(t)

    # 4. the shared cost model's layer table
    w = get_network("resnet50")
    chip = "edge-4x4" if quick else "cloud-12x12"
    hw = get_chip(chip)
    cm = CostModel(w, hw)
    t0 = time.perf_counter()
    tab = cm.layer_table(divisors(64))
    dt = time.perf_counter() - t0
    con.print(f"[bold]4. cost table[/]: ResNet-50 on {chip}: {len(w)} layers × "
              f"g = 1..{hw.n_units} × sub-batch {tab.batches} built in {dt:.2f} s")
    t = Table(title_justify="left")
    for col, j in (("layer", "left"), ("units", "right"), ("partition (N,K,H,W)", "left"),
                   ("util", "right"), ("µs", "right"), ("weights→units KB", "right")):
        t.add_column(col, justify=j)
    for name in ("conv1", "res2a_branch2b", "res5c_branch2b", "fc"):
        li = w.index(name)
        for g in (1, 16, hw.n_units):
            if g > hw.n_units:
                continue
            r = tab.row(li, g, 1)
            t.add_row(name, str(g), str(r.partition), f"{r.utilization:.2f}",
                      f"{r.compute_s * 1e6:.1f}", f"{r.weight_fetch_bytes / 1e3:.1f}")
    con.print(t)
    png = plot_layer_scaling(tab, [w.index(n) for n in ("conv1", "res2a_branch2b",
                                                        "res5c_branch2b", "fc")],
                             out_dir / "resnet50_layer_scaling.png",
                             title=f"ResNet-50 layers on {chip}: compute time vs tiles")
    con.print(f"   plot: {png}")

    # 5. solver backends in one process on the same model
    # the convs after the stem: similar sizes, so the balance is not trivial
    convs = [i for i, ly in enumerate(w.layers) if ly.macs and i > w.index("pool1")]
    durations = [int(tab.cycles[i, 0, 0]) for i in convs[: 7 if quick else 10]]
    k = 3
    con.print(f"[bold]5. solver backends[/]: {len(durations)} ResNet-50 convs (cycles on "
              f"one tile) balanced over {k} tiles, minimizing the largest load")
    t = Table(title_justify="left")
    for col, j in (("backend", "left"), ("status", "left"), ("makespan (cycles)", "right"),
                   ("bound", "right"), ("time", "right")):
        t.add_column(col, justify=j)
    opts = SolveOptions(time_limit=30)
    for label, run in (("CP-SAT", lambda: balance_cpsat(durations, k, opts)),
                       ("MILP / HiGHS", lambda: balance_pyomo(durations, k, opts, "highs")),
                       ("MILP / CBC", lambda: balance_pyomo(durations, k, opts, "cbc"))):
        o, _ = run()
        t.add_row(label, o.status.value, f"{o.objective:.0f}", f"{o.bound:.0f}",
                  f"{o.wall_s:.2f} s")
    t0 = time.perf_counter()
    best, _ = balance_bruteforce(durations, k)
    t.add_row("brute force", "optimal", str(best), str(best), f"{time.perf_counter() - t0:.2f} s")
    con.print(t)

    # 6. decisions
    reg = registry()
    ready = [d for d in reg.decisions() if reg.methods(d)]
    con.print(f"[bold]6. decisions[/]: {len(ready)} of {len(reg.decisions())} implemented "
              f"({', '.join(ready) or 'none yet'}); see `chipsched list`.")
    con.rule()
