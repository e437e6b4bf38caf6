"""The ``chipsched`` command line (typer + rich).

Bad input of any kind ends with one line ``error: <field>: <problem>; <fix>`` on
stderr and exit code 2, no traceback and no half-written output file.
"""

from __future__ import annotations

import functools
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from chipsched.errors import ChipschedError

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  pretty_exceptions_show_locals=False,
                  help="Exact models and heuristics for mapping DNNs onto multi-core, tiled, "
                       "chiplet and heterogeneous hardware.")
show_app = typer.Typer(no_args_is_help=True, help="Show a network or a chip.")
app.add_typer(show_app, name="show")

EXIT_BAD_INPUT = 2


def _out() -> Console:
    import os

    con = Console(highlight=False)
    # piped into a file or a log: rich falls back to 80 columns and truncates method
    # names; a wider table is what one pastes into notes
    if not con.is_terminal and "COLUMNS" not in os.environ:
        con = Console(highlight=False, width=140)
    return con


def _err() -> Console:
    return Console(stderr=True, highlight=False)


def cli_errors(func):  # noqa: ANN001, ANN201 - decorator keeps the command's signature
    """Turn chipsched errors into one line on stderr and exit code 2."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ChipschedError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(EXIT_BAD_INPUT) from None
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(130) from None

    return wrapper


def _print_json(obj: Any) -> None:
    from chipsched.result import to_jsonable

    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2) + "\n")


def _si(x: float, unit: str = "", digits: int = 3) -> str:
    """Engineering notation: 4.09 G, 25.5 M, 1.2 m."""
    if x == 0:
        return f"0 {unit}".strip()
    for p, s in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""), (1e-3, "m"),
                 (1e-6, "µ"), (1e-9, "n"), (1e-12, "p")):
        if abs(x) >= p:
            return f"{x / p:.{digits}g} {s}{unit}".strip()
    return f"{x:.3g} {unit}".strip()


# ---------------------------------------------------------------------------------------
# list / show / schema / export


@app.command("list")
@cli_errors
def list_cmd(
    decision: Annotated[str | None, typer.Argument(help="one decision: its methods with "
                                                   "their parameters")] = None,
    json_: Annotated[bool, typer.Option("--json", help="one JSON object")] = False,
) -> None:
    """Decisions and their methods, library networks, chip presets."""
    from chipsched.api import method_params, registry
    from chipsched.instances.chips import chip_dict, chip_names
    from chipsched.instances.networks import get_network, network_names

    reg = registry()
    if decision is not None:
        reg.decision(decision)
        rows = [(m.name, m.kind, method_params(decision, m.name, registry_=reg), m.summary)
                for m in reg.methods(decision).values()]
        if json_:
            _print_json({"decision": decision, "methods": [
                {"name": n, "kind": k, "params": p, "summary": s} for n, k, p, s in rows]})
            return
        t = Table(title=f"{decision}: methods (parameters: -p name=value)",
                  title_justify="left")
        for col in ("method", "kind", "parameters (default)", "summary"):
            t.add_column(col)
        for n, k, p, sm in rows:
            t.add_row(n, k, ", ".join(f"{a}={v!r}" for a, v in p.items()), sm)
        _out().print(t)
        return
    if json_:
        _print_json({
            "decisions": {d: {"methods": list(reg.methods(d)),
                              "implemented": reg.has_decision(d)} for d in reg.decisions()},
            "networks": network_names(),
            "chips": chip_names(),
        })
        return
    out = _out()
    t = Table(title="decisions and methods", title_justify="left")
    for col in ("decision", "method", "kind", "summary"):
        t.add_column(col)
    for d in reg.decisions():
        ms = reg.methods(d)
        if not ms:
            t.add_row(d, "—", "", "not implemented yet")
        for i, m in enumerate(ms.values()):
            t.add_row(d if i == 0 else "", m.name, m.kind, m.summary)
    out.print(t)
    t = Table(title="networks (chipsched show network NAME)", title_justify="left")
    for col, j in (("name", "left"), ("layers", "right"), ("MACs", "right"),
                   ("params", "right"), ("parameters (name:k=v)", "left")):
        t.add_column(col, justify=j)
    from chipsched.instances.networks import network_params

    for n in network_names():
        w = get_network(n)
        params = ", ".join(f"{k}={v}" for k, v in network_params(n).items()
                           if k != "precision_bytes")
        t.add_row(n, str(len(w)), _si(w.total_macs), _si(w.total_params), params)
    out.print(t)
    t = Table(title="chips (chipsched show chip NAME)", title_justify="left")
    for col in ("name", "description"):
        t.add_column(col)
    for n in chip_names():
        t.add_row(n, chip_dict(n).get("description", ""))
    t.add_row("tiled-RxC, chiplet-RxC[-nN][-wW], neuro-RxC[-kCAP]", "parametric names")
    out.print(t)


@show_app.command("network")
@cli_errors
def show_network(
    name: Annotated[str, typer.Argument(help="library name (name[:k=v,…]) or .yaml/.json/.onnx")],
    json_: Annotated[bool, typer.Option("--json", help="one JSON object")] = False,
    layers: Annotated[bool, typer.Option("--layers/--summary", help="layer table")] = True,
) -> None:
    """Layer table and totals of a network."""
    from chipsched.instances.networks import get_network

    w = get_network(name)
    if json_:
        _print_json({"summary": w.summary(), **w.to_dict()})
        return
    out = _out()
    if layers:
        t = Table(title=f"{w.name}: layers", title_justify="left")
        for col, j in (("#", "right"), ("layer", "left"), ("kind", "left"), ("dims", "left"),
                       ("MACs", "right"), ("params", "right"), ("out", "right"),
                       ("inputs", "left")):
            t.add_column(col, justify=j)
        for i, ly in enumerate(w.layers):
            dims = " ".join(f"{k}={v}" for k, v in ly.dims.items()
                            if not (k in ("stride", "groups", "R", "S") and v == 1))
            t.add_row(str(i), ly.name, ly.kind.value, dims, _si(ly.macs) if ly.macs else "",
                      _si(ly.weight_elems) if ly.weight_elems else "", _si(ly.out_elems),
                      ", ".join(w.layers[p].name for p in w.preds[i]))
        out.print(t)
    s = w.summary()
    out.print(f"[bold]{w.name}[/]: {s['layers']} layers, {s['edges']} edges, "
              f"{_si(s['macs'])}MACs, {_si(s['params'])} params "
              f"({_si(s['weight_bytes'], 'B')} at {w.precision_bytes} B/elem), "
              f"{_si(s['non_mac_ops'])} non-MAC ops per sample")
    pub = w.meta.get("published") if isinstance(w.meta, dict) else None
    if pub:
        out.print(f"published: {pub}")
    if "source" in s:
        out.print(f"source: {s['source']}")


@show_app.command("chip")
@cli_errors
def show_chip(
    name: Annotated[str, typer.Argument(help="preset name or a .yaml/.json chip file")],
    json_: Annotated[bool, typer.Option("--json", help="one JSON object")] = False,
) -> None:
    """The parameters of a chip and what they add up to."""
    from chipsched.instances.chips import get_chip

    hw = get_chip(name)
    derived = {"kind": hw.kind(), "nodes": hw.n_nodes, "units": hw.n_units,
               "peak_tops": hw.peak_tops,
               "dram_bandwidth_gb_s": hw.dram.bandwidth_gb_s if hw.dram else None}
    if json_:
        _print_json({**hw.to_dict(), "derived": derived})
        return
    import yaml

    out = _out()
    out.print(f"[bold]{hw.name}[/] — {hw.description}")
    out.print(f"{derived['kind']}: {hw.rows}×{hw.cols} mesh, {hw.n_units} compute units, "
              f"peak {hw.peak_tops:.4g} TOPS" + (f", DRAM {hw.dram.bandwidth_gb_s:.4g} GB/s"
                                                if hw.dram else ""))
    out.print(yaml.safe_dump(hw.to_dict(), sort_keys=False).rstrip(), markup=False)


@app.command("schema")
@cli_errors
def schema_cmd(
    what: Annotated[str, typer.Argument(help="chip or network")],
) -> None:
    """Print the published JSON Schema of chip or network files."""
    from chipsched.errors import UnknownNameError
    from chipsched.schemas import SCHEMAS

    if what not in SCHEMAS:
        raise UnknownNameError("schema", what, SCHEMAS)
    _print_json(SCHEMAS[what])


@app.command("export")
@cli_errors
def export_cmd(
    what: Annotated[str, typer.Argument(help="chip or network")],
    name: Annotated[str, typer.Argument(help="preset/library name or file")],
    out: Annotated[Path, typer.Argument(help="output .yaml/.yml/.json")],
) -> None:
    """Write a chip or network in the file form (to edit and load back)."""
    from chipsched.errors import InputError, UnknownNameError
    from chipsched.instances.chips import get_chip
    from chipsched.instances.formats import write_data
    from chipsched.instances.networks import get_network

    if out.suffix.lower() not in (".yaml", ".yml", ".json"):
        raise InputError(str(out), "unsupported output format", "use .yaml, .yml or .json")
    if what == "chip":
        data = get_chip(name).to_dict()
    elif what == "network":
        data = get_network(name).to_dict()
    else:
        raise UnknownNameError("export", what, ("chip", "network"))
    write_data(out, data)
    _err().print(f"wrote {out}")


# ---------------------------------------------------------------------------------------
# solve / compare


InstanceOpt = Annotated[str, typer.Option("--instance", "-i",
                                          help="network name (name[:k=v,…]) or file")]
ChipOpt = Annotated[str | None, typer.Option("--chip", "-c", help="chip preset or file "
                                             "(default: the decision's natural preset)")]
ObjectiveOpt = Annotated[str | None, typer.Option("--objective", help="latency, energy, edp, "
                                                  "e2d, ed2, E^n·D^m, period, …")]
BatchOpt = Annotated[int | None, typer.Option("--batch", help="total batch B")]
ProcOpt = Annotated[int | None, typer.Option("--processors", help="N identical processors for "
                                             "a task graph that names none (e.g. .stg)")]
TimeOpt = Annotated[float | None, typer.Option("--time-limit", help="seconds per exact run")]
SeedOpt = Annotated[int, typer.Option("--seed", help="seed of every random choice")]
ThreadsOpt = Annotated[int | None, typer.Option("--threads", help="solver threads")]
MilpOpt = Annotated[str, typer.Option("--milp-solver", help="highs, cbc, or any Pyomo solver")]
JsonOpt = Annotated[bool, typer.Option("--json", help="one JSON object on stdout")]
ParamOpt = Annotated[list[str] | None, typer.Option(
    "--param", "-p", help="method parameter name=value (YAML value; repeatable), e.g. "
    "-p beta=10; `chipsched list DECISION` shows each method's parameters")]


def _parse_params(items: list[str] | None) -> dict[str, Any]:
    import yaml

    from chipsched.errors import InputError

    out: dict[str, Any] = {}
    for item in items or []:
        name, sep, raw = item.partition("=")
        if not sep or not name.strip().isidentifier():
            raise InputError("--param", f"{item!r} is not name=value", "e.g. -p beta=10")
        try:
            out[name.strip()] = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            out[name.strip()] = raw
    return out


def _instance_options(objective: str | None, batch: int | None, processors: int | None
                      ) -> dict[str, Any]:
    opts = {"objective": objective, "batch": batch, "processors": processors}
    return {k: v for k, v in opts.items() if v is not None}


@app.command("solve")
@cli_errors
def solve_cmd(
    decision: Annotated[str, typer.Argument(help="region_split, tile_groups, op_placement, "
                                            "core_assignment")],
    instance: InstanceOpt,
    method: Annotated[str, typer.Option("--method", "-m", help="see chipsched list")],
    chip: ChipOpt = None,
    objective: ObjectiveOpt = None,
    batch: BatchOpt = None,
    processors: ProcOpt = None,
    time_limit: TimeOpt = None,
    seed: SeedOpt = 0,
    threads: ThreadsOpt = None,
    milp_solver: MilpOpt = "highs",
    param: ParamOpt = None,
    json_: JsonOpt = False,
    out: Annotated[Path | None, typer.Option("--out", help="also write the JSON result "
                                             "to this file")] = None,
) -> None:
    """Solve one decision on one instance with one method."""
    from chipsched.api import make_instance, registry, solve
    from chipsched.instances.formats import atomic_write
    from chipsched.result import to_jsonable
    from chipsched.solvers.options import SolveOptions

    reg = registry()
    spec = reg.decision(decision)
    reg.get(decision, method)
    opts = SolveOptions(time_limit=time_limit, seed=seed, threads=threads,
                        milp_solver=milp_solver, progress=not json_)
    inst = make_instance(decision, instance, chip,
                         **_instance_options(objective, batch, processors))
    res = solve(decision, inst, method, options=opts, **_parse_params(param))
    if out is not None:
        atomic_write(out, lambda fh: json.dump(to_jsonable(res.to_dict()), fh, indent=2))
    if json_:
        _print_json(res.to_dict())
        return
    con = _out()
    con.print(_result_table([res], title=f"{decision} on {res.instance}"))
    if spec.render is not None and res.solution is not None:
        con.print(spec.render(inst, res))


def _result_table(results: list[Any], title: str = "") -> Table:
    from chipsched.api import best_bound, best_found

    bb, bf = best_bound(results), best_found(results)
    spaces = sorted({r.space for r in results if r.space and r.bound is not None})
    notes = [f"{'†' * (i + 1)} bound of the restricted space: {s}"
             for i, s in enumerate(spaces)]
    # a method that ends without a solution says why (too large, infeasible, …)
    notes += [f"{r.method}: {r.message}" for r in results
              if r.objective is None and r.message]
    caption = "\n".join(notes)
    t = Table(title=title, title_justify="left", caption=caption or None,
              caption_justify="left")
    for col, j in (("method", "left"), ("status", "left"), ("objective", "right"),
                   ("bound", "right"), ("gap", "right"), ("vs best bound", "right"),
                   ("vs best found", "right"), ("seed", "right"), ("time", "right")):
        t.add_column(col, justify=j)

    def rel(x: float | None, ref: float | None) -> str:
        if x is None or ref is None or ref == 0:
            return ""
        return f"{100 * (x - ref) / abs(ref):+.2f} %"

    for r in results:
        mark = "†" * (spaces.index(r.space) + 1) if r.space in spaces else ""
        t.add_row(r.method, r.status.value,
                  "" if r.objective is None else f"{r.objective:.6g}",
                  "" if r.bound is None else f"{r.bound:.6g}{mark}",
                  "" if r.gap is None else f"{100 * r.gap:.2f} %", rel(r.objective, bb),
                  rel(r.objective, bf), "" if r.seed is None else str(r.seed),
                  f"{r.wall_s:.3g} s")
    return t


@app.command("compare")
@cli_errors
def compare_cmd(
    decision: Annotated[str, typer.Argument(help="decision name")],
    instance: InstanceOpt,
    methods: Annotated[str | None, typer.Option("--methods", help="comma-separated (default: "
                                                "all of the decision's)")] = None,
    chip: ChipOpt = None,
    objective: ObjectiveOpt = None,
    batch: BatchOpt = None,
    processors: ProcOpt = None,
    time_limit: TimeOpt = None,
    seeds: Annotated[int, typer.Option("--seeds", help="seeds 0..N-1 for randomized "
                                       "methods")] = 1,
    threads: ThreadsOpt = None,
    milp_solver: MilpOpt = "highs",
    param: ParamOpt = None,
    json_: JsonOpt = False,
    csv: Annotated[Path | None, typer.Option("--csv", help="write the table as CSV")] = None,
) -> None:
    """Several methods on one instance: objective / bound / gap / time."""
    from chipsched.api import compare, make_instance, registry
    from chipsched.errors import InputError
    from chipsched.solvers.options import SolveOptions

    reg = registry()
    reg.decision(decision)
    names = [m.strip() for m in methods.split(",") if m.strip()] if methods else None
    for n in names or []:
        reg.get(decision, n)
    if seeds < 1:
        raise InputError("--seeds", f"must be >= 1, got {seeds}")
    opts = SolveOptions(time_limit=time_limit, threads=threads, milp_solver=milp_solver)
    inst = make_instance(decision, instance, chip,
                         **_instance_options(objective, batch, processors))
    results = compare(decision, inst, names, seeds=range(seeds), options=opts,
                      progress=not json_, **_parse_params(param))
    if csv is not None:
        _write_csv(csv, results)
    if json_:
        from chipsched.api import best_bound

        _print_json({"decision": decision, "instance": results[0].instance if results else "",
                     "best_bound": best_bound(results),
                     "results": [r.to_dict() for r in results]})
        return
    _out().print(_result_table(results, title=f"{decision} on "
                               f"{results[0].instance if results else instance}"))


def _write_csv(path: Path, results: list[Any]) -> None:
    import csv as csv_mod

    from chipsched.instances.formats import atomic_write

    cols = ["decision", "instance", "method", "seed", "status", "objective", "bound", "gap",
            "wall_s"]

    def write(fh: Any) -> None:
        w = csv_mod.writer(fh)
        w.writerow(cols)
        for r in results:
            d = r.to_dict()
            w.writerow(["" if d.get(c) is None else d.get(c) for c in cols])

    atomic_write(path, write)


# ---------------------------------------------------------------------------------------
# bench


@app.command("bench")
@cli_errors
def bench_cmd(
    suite: Annotated[str, typer.Argument(help="built-in suite name or a suite .yaml/.json")],
    out: Annotated[Path, typer.Option("--out", help="folder for results.sqlite, CSV, plots, "
                                      "HTML")] = Path("out/bench"),
    workers: Annotated[int, typer.Option("--workers", help="parallel processes")] = 0,
    scheduler: Annotated[str | None, typer.Option("--scheduler", help="Dask scheduler "
                                                  "address (tcp://host:8786)")] = None,
    json_: JsonOpt = False,
) -> None:
    """Many instances × methods × seeds in parallel; results in SQLite + CSV, plots, HTML."""
    import os

    from chipsched.bench import bench, builtin_suites, summarize
    from chipsched.errors import InputError

    if workers < 0:
        raise InputError("--workers", f"must be >= 0, got {workers}")
    if suite == "list":
        _out().print("built-in suites: " + ", ".join(builtin_suites()))
        return
    rows, files = bench(suite, out, workers=workers or (os.cpu_count() or 1),
                        scheduler=scheduler, progress=not json_)
    if json_:
        _print_json({"runs": summarize(rows), "files": {k: str(v) for k, v in files.items()}})
        return
    t = Table(title=f"bench {suite}: {len(rows)} runs", title_justify="left")
    for col, j in (("decision", "left"), ("instance", "left"), ("method", "left"),
                   ("seed", "right"), ("status", "left"), ("objective", "right"),
                   ("vs best bound", "right"), ("time", "right")):
        t.add_column(col, justify=j)
    for r in summarize(rows):
        g = r["gap_to_best_bound"]
        t.add_row(r["decision"], r["instance"] + (f" {r['instance_options']}"
                                                  if r["instance_options"] != "{}" else ""),
                  r["method"], str(r["seed"]), r["status"],
                  "" if r["objective"] is None else f"{r['objective']:.6g}",
                  "" if g is None else f"{100 * g:+.2f} %",
                  "" if r["wall_s"] is None else f"{r['wall_s']:.3g} s")
    con = _out()
    con.print(t)
    errors = [r for r in rows if r["status"] == "error"]
    for r in errors[:5]:
        con.print(f"[red]error[/] {r['decision']}:{r['instance']}/{r['method']}: {r['message']}")
    for k, v in files.items():
        con.print(f"{k}: {v}")


# ---------------------------------------------------------------------------------------
# demo


@app.command("demo")
@cli_errors
def demo_cmd(
    out: Annotated[Path, typer.Option("--out", help="folder for the plots")] = Path("out/demo"),
    quick: Annotated[bool, typer.Option("--quick", help="smaller instances")] = False,
) -> None:
    """What chipsched can do today, end to end."""
    from chipsched.demo import run_demo

    run_demo(_out(), out, quick=quick)


def main() -> None:
    """Entry point of the ``chipsched`` console script."""
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
