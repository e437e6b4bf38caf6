"""``chipsched demo``: what exists, end to end. It grows with each decision."""

from __future__ import annotations

import time
from pathlib import Path

from rich.console import Console
from rich.table import Table


def run_demo(con: Console, out_dir: Path, quick: bool = False) -> None:
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

    # 6. the four decisions: exact models and heuristics on one evaluator
    _decisions(con, out_dir, quick)
    con.print("every method of a decision, with its parameters: `chipsched list DECISION`; "
              "all of them on one instance: `chipsched compare DECISION -i NAME`.")
    con.rule()


def _decisions(con: Console, out_dir: Path, quick: bool) -> None:
    """One small instance per decision: its exact models and heuristics side by side,
    every objective re-evaluated by the shared evaluator, and the decision's plot."""
    from chipsched.api import compare, make_instance, solve
    from chipsched.plots.core_assignment import plot_mesh_heatmap
    from chipsched.plots.op_placement import plot_gantt
    from chipsched.plots.region_split import plot_placement
    from chipsched.plots.tile_groups import plot_st_graph
    from chipsched.report import result_table
    from chipsched.solvers.options import SolveOptions

    limit = SolveOptions(time_limit=5 if quick else 10)

    def show(n: str, title: str, decision: str, inst: object, methods: list[str],
             **params: object) -> list:
        con.print(f"[bold]6{n}. {decision}[/]: {title}")
        res = compare(decision, inst, methods, options=limit, **params)
        con.print(result_table(res))
        return res

    # region split: seed 000 vs the exact DP / CP-SAT on a chiplet grid
    net = "mobilenet-v2" if quick else "resnet50"
    inst = make_instance("region_split", net, "chiplet-4x4")
    res = show("a", f"{net} cut into pipeline regions on chiplet-4x4 (period)",
               "region_split", inst, ["dp", "cpsat", "milp", "seed000", "equal-compute"])
    best = min((r for r in res if r.solution is not None), key=lambda r: r.objective)
    h = inst.hardware
    png = plot_placement(h.rows, h.cols, best.solution.placement,
                         out_dir / "region_split_placement.png",
                         title=f"{net} regions ({best.method}) on chiplet-4x4")
    con.print(f"   plot: {png}")

    # tile groups: SET's SA against LS / LP, the exact segmented-space optimum (DP and
    # CP-SAT) and the full-space lower bound
    inst = make_instance("tile_groups", "tiny-chain", "edge-4x4", batch=4)
    res = show("b", "tiny-chain on edge-4x4, batch 4, E²·D: resource allocation trees",
               "tile_groups", inst, ["bound", "dp-seg", "cpsat", "ls", "lp", "sa"])
    sa = next(r for r in res if r.method == "sa")
    png = plot_st_graph(inst, sa.solution, out_dir / "tile_groups_st.png",
                        title="tiny-chain on edge-4x4, SA tree")
    con.print(f"   tree (SA): {sa.metrics['tree']}\n   plot: {png}")

    # op placement: seed 003 and HEFT against CP-SAT warm-started from HEFT
    inst = make_instance("op_placement", "tiny" if quick else "mobilenet-v2",
                         "soc-npu-gpu-cpu")
    res = show("c", "ops with their compiler scalar ops on the NPU + GPU + CPU SoC "
               "(makespan)", "op_placement", inst, ["seed003", "by-class", "heft", "single"])
    heft = next(r for r in res if r.method == "heft")
    cp = solve("op_placement", inst, "cpsat", options=limit, warm_start=heft)
    con.print(result_table([cp], title="CP-SAT from HEFT's schedule"))
    png = plot_gantt(inst, cp.solution, out_dir / "op_placement_gantt.png",
                     title="CP-SAT schedule")
    con.print(f"   plot: {png}")

    # core assignment: seed 004 against METIS and scipy's FAQ on a neuron graph
    inst = make_instance("core_assignment", "lenet5-neurons")
    res = show("d", "LeNet-5 neuron graph (9,118 neurons) on a mesh of 256-neuron cores "
               "(hop-weighted traffic)", "core_assignment", inst,
               ["seed004", "seed004-plus", "metis", "faq", "rowmajor"])
    best = min((r for r in res if r.solution is not None), key=lambda r: r.objective)
    png = plot_mesh_heatmap(inst, best.solution, out_dir / "core_assignment_heatmap.png",
                            title=f"lenet5 neurons, {best.method}")
    con.print(f"   plot: {png}")
