"""The ``chipsched`` command line (typer + rich).

Bad input of any kind ends with one line ``error: <field>: <problem>; <fix>`` on
stderr and exit code 2, no traceback and no half-written output file.
"""

from __future__ import annotations

import contextlib
import functools
import json
import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from typer.core import TyperGroup

from chipsched.errors import ChipschedError


class _OneLineErrors(TyperGroup):
    """The top-level group: a usage error (a bad option value, a missing option, an
    unknown command) is one ``error:`` line and exit 2, like every other bad input —
    not click's usage block."""

    def main(self, args: Any = None, prog_name: str | None = None,
             complete_var: str | None = None, standalone_mode: bool = True,
             **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except Exception as exc:
            # click's exceptions (vendored inside typer ≥ 0.26, a separate package before)
            # are told apart by their class names, not imported from a private module
            if _is(exc, "NoArgsIsHelpError"):
                exc.show()  # type: ignore[attr-defined]
                sys.exit(0)
            if _is(exc, "UsageError"):
                _usage_error(exc)
            if _is(exc, "ClickException"):
                exc.show()  # type: ignore[attr-defined]
                sys.exit(exc.exit_code)  # type: ignore[attr-defined]
            if _is(exc, "Abort"):
                typer.echo("aborted", err=True)
                sys.exit(1)
            raise
        sys.exit(rv if isinstance(rv, int) else 0)


def _is(exc: BaseException, name: str) -> bool:
    """``exc`` is an instance of click's class ``name`` (typer's Abort included)."""
    return any(c.__name__ == name for c in type(exc).__mro__)


def _usage_error(exc: Any) -> None:
    """A click usage error as one ``error:`` line naming the option; exit 2."""
    msg = exc.format_message().replace("\n", " ")
    hint = None
    if _is(exc, "BadParameter"):
        hint = exc.param_hint or (exc.param.opts[0] if exc.param is not None and
                                  getattr(exc.param, "opts", None) else None)
        if isinstance(hint, list | tuple):
            hint = hint[0]
        msg = msg.split(": ", 1)[1] if msg.startswith("Invalid value") else msg
    where = f"{hint}: " if hint else ""
    cmd = exc.ctx.command_path if exc.ctx is not None else "chipsched"
    typer.echo(f"error: {where.strip(chr(39))}{msg.rstrip('.')}; see `{cmd} --help`",
               err=True)
    sys.exit(EXIT_BAD_INPUT)


app = typer.Typer(cls=_OneLineErrors, add_completion=False, no_args_is_help=True,
                  rich_markup_mode=None,
                  pretty_exceptions_show_locals=False,
                  help="Exact models and heuristics for mapping DNNs onto multi-core, tiled, "
                       "chiplet and heterogeneous hardware.")
show_app = typer.Typer(no_args_is_help=True, help="Show a network or a chip.")
app.add_typer(show_app, name="show")

EXIT_BAD_INPUT = 2
EXIT_BUG = 1


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
    """Turn chipsched errors into one line on stderr and exit code 2 (a consistency
    failure, a bug in a method: exit 1)."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from chipsched.api import ConsistencyError

        try:
            return func(*args, **kwargs)
        except ConsistencyError as exc:  # a bug in a method, not bad input
            typer.echo(f"error: internal consistency check failed: {exc}; please report it",
                       err=True)
            raise typer.Exit(EXIT_BUG) from None
        except ChipschedError as exc:
            typer.echo(f"error: {exc}", err=True)
            raise typer.Exit(EXIT_BAD_INPUT) from None
        except KeyboardInterrupt:
            typer.echo("interrupted", err=True)
            raise typer.Exit(130) from None

    return wrapper


@contextlib.contextmanager
def _stop_on_interrupt(budget: Any) -> Iterator[None]:
    """The first Ctrl-C stops the run's budget — the method returns its best so far,
    reported as usual; a second one aborts (exit 130)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)

    def stop(signum: int, frame: Any) -> None:
        budget.stop("interrupted (Ctrl-C)")
        typer.echo("stopping: the best so far will be reported (Ctrl-C again to abort)",
                   err=True)
        signal.signal(signal.SIGINT, previous)

    signal.signal(signal.SIGINT, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _check_plot(plot: Path) -> None:
    """A ``--plot`` path that can be written and names a picture format, before any work."""
    from chipsched.errors import InputError
    from chipsched.files import check_output_file

    check_output_file(plot, "--plot")
    if plot.suffix.lower() not in (".png", ".svg", ".pdf"):
        raise InputError("--plot", f"{plot.name}: unknown picture format",
                         "use a .png, .svg or .pdf file")


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
    from chipsched.api import method_param_specs, registry
    from chipsched.instances.chips import chip_dict, chip_names
    from chipsched.instances.networks import get_network, network_names

    reg = registry()
    if decision is not None:
        _list_decision(reg, decision, json_)
        return
    if json_:
        _print_json({
            "decisions": {d: {"methods": list(reg.methods(d))} for d in reg.decisions()},
            "networks": network_names(),
            "chips": chip_names(),
            "instances": [{"decision": d, "spec": sp, "what": w}
                          for d, sp, w in instance_catalog()],
        })
        return
    out = _out()
    t = Table(title="decisions and methods (chipsched list DECISION: parameters)",
              title_justify="left")
    for col in ("decision", "method", "kind", "params", "summary"):
        t.add_column(col)
    for d in reg.decisions():
        for i, m in enumerate(reg.methods(d).values()):
            n = len(method_param_specs(d, m.name, registry_=reg))
            t.add_row(d if i == 0 else "", m.name, m.kind, str(n) if n else "", m.summary)
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
    t = Table(title="other instances (-i SPEC; every decision also takes a network above "
              "or a network file)", title_justify="left")
    for col in ("decision", "spec", "what"):
        t.add_column(col)
    last = ""
    for d, spec, what in instance_catalog():
        t.add_row(d if d != last else "", spec, what)
        last = d
    out.print(t)


def instance_catalog() -> list[tuple[str, str, str]]:
    """(decision, spec, one line) of every built-in instance and generator beyond the
    network library, and the instance file formats — what ``chipsched list`` shows."""
    from chipsched.instances.core_assignment import GENERATORS as CA_GENERATORS
    from chipsched.instances.core_assignment import NAMED as CA_NAMED
    from chipsched.instances.op_placement.generators import NAMED as OP_NAMED

    rows = [
        ("region_split", "NETWORK.yaml with a region_split: section",
         "a network with its chip, objective and options in one file"),
        ("tile_groups", "FILE.tree", "a resource allocation tree to evaluate (-m given)"),
    ]
    rows += [("op_placement", n, "Topcuoglu, Hariri, Wu 2002's 10-task example (3 processors)"
              if n == "topcuoglu2002" else "built-in task graph") for n in OP_NAMED]
    rows += [
        ("op_placement", "random:n=20,p=3,seed=0,density=0.2,ccr=0.5,het=0.5,cores=1",
         "random DAG on p heterogeneous processors (ccr: transfer/compute ratio)"),
        ("op_placement", "FILE.stg --processors N", "Standard Task Graph Set file, N identical "
         "processors"),
        ("op_placement", "FILE.tgc --processors N", "task graph with communication costs"),
        ("op_placement", "FILE.json", "op_placement instance (docs/schemas/op_placement)"),
    ]
    descr = {"lenet5-neurons": "LeNet-5, one neuron per vertex",
             "vgg-cifar-neurons": "VGG-11 (CIFAR), 8 channels per vertex",
             "resnet-cifar-neurons": "ResNet-20 (CIFAR), 4 channels per vertex"}
    rows += [("core_assignment", n, descr.get(n, "neuron graph")) for n in CA_NAMED]
    gen_help = {"layered": "layered:layers=10,width=1000,fanin=16,… — random layered neuron graph",
                "stencil": "stencil:nx=64,ny=64 — 2-D stencil (a mesh-shaped graph)"}
    rows += [("core_assignment", f"{g}:…", gen_help.get(g, "generator")) for g in CA_GENERATORS]
    rows += [
        ("core_assignment", "FILE.graph / FILE.metis", "METIS graph file"),
        ("core_assignment", "FILE.zip", "seed 004's varint + deflate graph archive"),
        ("core_assignment", "FILE.dat", "QAPLIB instance (flow matrix onto a grid)"),
        ("core_assignment", "FILE.json", "core_assignment instance "
         "(docs/schemas/core_assignment)"),
    ]
    return rows


def _list_decision(reg: Any, decision: str, json_: bool) -> None:
    """``chipsched list DECISION``: every method with its declared parameters."""
    from rich.markup import escape

    from chipsched.api import method_param_specs

    dec = reg.decision(decision)
    problem = dec.problem
    rows = [(m, method_param_specs(decision, m.name, registry_=reg))
            for m in dec.methods.values()]
    if json_:
        _print_json({"decision": decision, "summary": problem.summary,
                     "default_chip": problem.default_chip,
                     "platforms": dict(problem.platforms),
                     "instance_options": list(problem.instance_options),
                     "methods": [{"name": m.name, "kind": m.kind, "summary": m.summary,
                                  "source": m.source, "randomized": m.randomized,
                                  "space": m.space, "platforms": list(m.platforms),
                                  "warm_start": m.warm_start,
                                  "params": [p.to_dict() for p in ps]}
                                 for m, ps in rows]})
        return
    t = Table(title=f"{decision}: {problem.summary} — methods (parameters: -p name=value)",
              title_justify="left")
    for col in ("method", "kind", "parameters: name: type = default (range) — what",
                "summary"):
        t.add_column(col, overflow="fold")
    for m, ps in rows:
        lines = []
        for p in ps:
            rng = f" ({p.range_text})" if p.range_text else ""
            none = f"; none = {p.none}" if p.none else ""
            lines.append(f"{p.name}: {p.type_name} = {p.default!r}{rng} — {p.doc}{none}")
        extra = []
        if m.platforms:
            extra.append(f"({', '.join(m.platforms)} instances only)")
        if m.warm_start:
            extra.append("(takes --warm-start)")
        t.add_row(m.name, m.kind, escape("\n".join(lines)),
                  escape(m.summary + ("\n" + " ".join(extra) if extra else "")))
    _out().print(t)


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
            # the file format's own field names, so that a row reads back as a layer
            dims = " ".join(f"{k}={getattr(ly, k)}" for k in
                            ("K", "C", "H", "W", "R", "S", "stride", "groups")
                            if not (k in ("H", "W", "R", "S", "stride", "groups")
                                    and getattr(ly, k) == 1))
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
    if isinstance(pub, dict) and pub:
        parts = [f"{_si(v)}{'MACs' if k == 'macs' else ' ' + k}"
                 if isinstance(v, (int, float)) else f"{k} {v}" for k, v in pub.items()]
        line = "published: " + ", ".join(parts)
        macs = pub.get("macs")
        if isinstance(macs, (int, float)) and macs and abs(s["macs"] / macs - 1) > 0.05:
            line += (f" — for the published configuration; this build ({_si(s['macs'])}"
                     "MACs) differs by its options, e.g. the input size")
        out.print(line)
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
    if hw.processors:  # a SoC: processors, not a mesh of compute units
        procs = ", ".join(
            f"{p.name} ({p.cores} core{'s' if p.cores > 1 else ''}, "
            f"{p.throughput_gops['tensor']:g} G MAC/s tensor per core)" for p in hw.processors)
        out.print(f"{derived['kind']}: {len(hw.processors)} processors: {procs}", markup=False)
    else:
        out.print(f"{derived['kind']}: {hw.rows}×{hw.cols} mesh, {hw.n_units} compute units, "
                  f"peak {hw.peak_tops:.4g} TOPS" +
                  (f", DRAM {hw.dram.bandwidth_gb_s:.4g} GB/s" if hw.dram else ""))
    out.print(yaml.safe_dump(hw.to_dict(), sort_keys=False, allow_unicode=True).rstrip(),
              markup=False)


# ---------------------------------------------------------------------------------------
# chipsched-lib: the instance library and the verifier

lib_app = typer.Typer(no_args_is_help=True, help="chipsched-lib: the library of instances "
                      "with best knowns and proven bounds (docs/library.md).")
app.add_typer(lib_app, name="lib")


@app.command("verify")
@cli_errors
def verify_cmd(
    instance: Annotated[str, typer.Argument(help="a library instance id or instance file")],
    solution: Annotated[Path, typer.Argument(help="a solution file: the decision's "
                                             "solution JSON, a --out result or a "
                                             "best-known file")],
    json_: JsonOpt = False,
) -> None:
    """Check a solution on a library instance in full, re-evaluate it and compare it
    with the best known (exit 2 with the first violation when it is infeasible)."""
    from chipsched import library

    v = library.verify(instance, solution)
    if json_:
        _print_json({"id": v.id, "decision": v.decision, "feasible": True,
                     "objective": v.objective, "objective_name": v.objective_name,
                     "objective_unit": v.objective_unit, "components": v.components,
                     "best_known": v.best_known, "bound": v.bound,
                     "beats_best_known": v.beats_best_known})
        return
    typer.echo(v.line())


@lib_app.command("list")
@cli_errors
def lib_list_cmd(
    decision: Annotated[str | None, typer.Argument(help="one decision (default: all)")] = None,
) -> None:
    """The library's instances: id, size, best known and bound."""
    from rich.table import Table

    from chipsched import library

    rows = library.library_rows(decision)
    t = Table(title=f"chipsched-lib {library.LIB_VERSION}: {len(rows)} instances")
    for col in ("instance", "decision", "tier", "size", "best known", "bound", "gap"):
        t.add_column(col, justify="right" if col in ("size", "best known", "bound", "gap")
                     else "left")
    for r in rows:
        gap = ("optimal" if r["optimal"] else "" if r["gap"] is None
               else f"{100 * r['gap']:.2f} %")
        t.add_row(r["id"], r["decision"], r["tier"], f"{r['size']:,.0f} {r['size_unit']}",
                  "" if r["best_known"] is None else f"{r['best_known']:.6g}",
                  "" if r["bound"] is None else f"{r['bound']:.6g}", gap)
    _out().print(t)


@lib_app.command("show")
@cli_errors
def lib_show_cmd(
    instance: Annotated[str, typer.Argument(help="a library instance id")],
) -> None:
    """One instance: how it is built, its best known (and how it was found) and bound."""
    from chipsched import library

    e = library.entry(instance)
    bk, bd = library.best_known(e), library.bound(e)
    out = _out()
    out.print(f"{e.id} ({e.decision}, {e.tier}): {e.description}", markup=False)
    opts = " ".join(f"--{k.replace('_', '-')} {v}" for k, v in e.options.items())
    out.print(f"  built as: chipsched solve {e.decision} -i {e.spec} -c {e.chip_spec} "
              f"{opts}".rstrip(), markup=False)
    out.print(f"  size: {e.size:,.0f} {e.size_unit}; fingerprint {e.fingerprint[:16]}…; "
              f"file {e.path}", markup=False)
    if bk is None:
        out.print("  best known: none yet")
    else:
        fb = bk.found_by
        runs = library.found_by_runs(fb)
        last = "last run: " if len(runs) > 1 else ""
        out.print(f"  best known: {bk.objective:.10g} by {library.how_found_short(fb)} "
                  f"({last}seed {fb.get('seed')}, {fb.get('wall_s')} s, {fb.get('date')}); "
                  f"file {bk.path}", markup=False)
        if len(runs) > 1:
            out.print(f"  found in {len(runs)} runs, each from the tree of the run before:")
            for k, (method, params) in enumerate(runs, 1):
                out.print(f"    {k}. " + library.how_found({"method": method,
                                                            "params": params}),
                          markup=False)
    if bd is None:
        out.print("  bound: none yet")
    else:
        gap = ""
        if bk is not None and bk.objective > 0:
            gap = f"; gap {100 * (bk.objective - bd.value) / bk.objective:.3f} %"
        out.print(f"  bound: {bd.value:.10g} by {bd.method} ({bd.status}, {bd.seconds:g} s)"
                  f"{gap}", markup=False)


@lib_app.command("table")
@cli_errors
def lib_table_cmd(
    decision: Annotated[str | None, typer.Argument(help="one decision (default: all)")] = None,
    fmt: Annotated[str, typer.Option("--format", help="md, latex (booktabs) or csv")] = "md",
) -> None:
    """The library table (best known, how found, bound, by which method, gap)."""
    from chipsched import library

    if fmt == "csv" or decision is not None:
        sys.stdout.write(library.library_table(library.library_rows(decision), fmt))
        return
    if fmt == "md":
        sys.stdout.write(library.docs_table())
        return
    # the whole text first: a bad --format fails before anything is written
    sys.stdout.write("".join("\\paragraph{" + dec.replace("_", "\\_") + "}\n"
                             + library.library_table(library.library_rows(dec), fmt)
                             for dec in library.DECISIONS))


@lib_app.command("submit")
@cli_errors
def lib_submit_cmd(
    instance: Annotated[str, typer.Argument(help="a library instance id")],
    solution: Annotated[Path, typer.Argument(help="the solution file")],
    by: Annotated[str, typer.Option("--by", help="how it was found (tool, method, "
                                    "parameters), recorded in the best-known file")],
) -> None:
    """Verify a solution and, when it beats the best known, make it the best known (in
    this working tree's library files; regenerate docs/library.md afterwards)."""
    from chipsched import library
    from chipsched.errors import InputError

    e = library.entry(instance)
    v = library.verify(e, solution)
    if v.best_known is not None and not v.beats_best_known:
        raise InputError(str(solution), f"{v.objective:.10g} does not beat the best known "
                         f"{v.best_known:.10g}", "only a strictly better solution replaces it")
    data = library.read_solution_file(solution)
    if isinstance(data, dict) and isinstance(data.get("solution"), dict):
        data = data["solution"]
    path = library.write_best_known(e, v.objective, v.components, data,
                                    {"method": by, "submitted_from": solution.name})
    typer.echo(f"{v.line()}\nwrote {path}")


@lib_app.command("run")
@cli_errors
def lib_run_cmd(
    method: Annotated[str, typer.Option("--method", "-m", help="a method of the decision, "
                                        "or several, comma-separated")],
    decision: Annotated[str, typer.Argument(help="the decision whose instances to run")],
    tier: Annotated[str | None, typer.Option("--tier", help="tiny, small or real "
                                             "(default: all)")] = None,
    only: Annotated[str | None, typer.Option("--only", help="comma-separated ids")] = None,
    time_limit: TimeOpt = None,
    seed: SeedOpt = 0,
    param: ParamOpt = None,
    json_: JsonOpt = False,
    plot: Annotated[Path | None, typer.Option("--plot", help="objective / best known "
                                              "against size, per method (.png/.svg/.pdf)")
                    ] = None,
) -> None:
    """Run methods over the library's instances of a decision: each objective next to
    the best known and the bound of every instance."""
    from rich.table import Table

    from chipsched import library
    from chipsched.api import registry, solve
    from chipsched.errors import InputError

    dec = registry().decision(decision)
    methods = [m.strip() for m in method.split(",") if m.strip()]
    if not methods or len(set(methods)) != len(methods):
        raise InputError("--method", f"{method!r}: give distinct method names",
                         "e.g. -m seed003,heft")
    for m in methods:
        dec.method(m)
    if plot is not None:
        _check_plot(plot)
    params = _parse_params(param)
    takes = {m: {s.name for s in dec.method(m).param_specs} for m in methods}
    if unknown := sorted(set(params) - set().union(*takes.values())):
        raise InputError(f"-p {unknown[0]}", f"no method of {', '.join(methods)} takes it",
                         f"see chipsched list {decision}")
    ids = None if only is None else {s.strip() for s in only.split(",") if s.strip()}
    es = [e for e in library.entries(decision)
          if (tier is None or e.tier == tier) and (ids is None or e.id in ids)]
    if ids is not None and (missing := ids - {e.id for e in es}):
        raise InputError("--only", f"not {decision} instances of the library: "
                         f"{', '.join(sorted(missing))}", "see chipsched lib list")
    if not es:
        raise InputError("--tier", f"no {decision} instance has tier {tier!r}",
                         "tiers: tiny, small, real")
    rows = []
    total = len(es) * len(methods)
    for k, (e, m) in enumerate(((e, m) for e in es for m in methods), 1):
        _err().print(f"[{k}/{total}] {m} on {e.id}", markup=False)
        r = solve(decision, library.build_instance(e), m, time_limit=time_limit,
                  seed=seed, **{n: v for n, v in params.items() if n in takes[m]})
        bk, bd = library.best_known(e), library.bound(e)
        rows.append({"id": e.id, "method": m, "status": r.status.value,
                     "objective": r.objective, "size": e.size, "size_unit": e.size_unit,
                     "best_known": None if bk is None else bk.objective,
                     "bound": None if bd is None else bd.value, "wall_s": r.wall_s})
    if plot is not None:
        from chipsched.plots import plot_library_gaps

        plot_library_gaps(rows, plot, title=f"chipsched-lib {library.LIB_VERSION} "
                          f"{decision}: {', '.join(methods)}")
    if json_:
        _print_json({"methods": methods, "decision": decision, "runs": rows})
        return
    t = Table(title=f"{', '.join(methods)} on chipsched-lib {library.LIB_VERSION} {decision}")
    for col in ("instance", "method", "status", "objective", "best known", "vs best known",
                "bound", "vs bound (at most)", "time"):
        t.add_column(col, justify="left" if col in ("instance", "method", "status")
                     else "right")
    for r in rows:
        obj, bk, bd = r["objective"], r["best_known"], r["bound"]
        t.add_row(r["id"], r["method"], r["status"], "" if obj is None else f"{obj:.6g}",
                  "" if bk is None else f"{bk:.6g}",
                  "" if obj is None or not bk else f"{100 * (obj / bk - 1):+.2f} %",
                  "" if bd is None else f"{bd:.6g}",
                  "" if obj is None or not bd else f"{100 * (obj / bd - 1):+.2f} %",
                  f"{r['wall_s']:.3g} s")
    _out().print(t)


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
    from chipsched.files import write_data
    from chipsched.instances.chips import get_chip
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
AutoWarmOpt = Annotated[bool, typer.Option(
    "--auto-warm-start/--no-auto-warm-start",
    help="exact methods given no --warm-start start from the best quick heuristic's "
         "solution where the decision names some (op_placement: HEFT, CPOP, seed 003)")]
LogOpt = Annotated[bool, typer.Option("--log", help="stream the exact solver's own log "
                                      "(CP-SAT search, HiGHS/CBC) to stderr")]
ParamOpt = Annotated[list[str] | None, typer.Option(
    "--param", "-p", help="method parameter name=value (YAML value; repeatable), e.g. "
    "-p beta=10; `chipsched list DECISION` shows each method's parameters")]


def _parse_params(items: list[str] | None, flag: str = "--param",
                  example: str = "-p beta=10") -> dict[str, Any]:
    import yaml

    from chipsched.errors import InputError

    out: dict[str, Any] = {}
    given: dict[str, str] = {}
    for item in items or []:
        name, sep, raw = item.partition("=")
        if not sep or not name.strip().isidentifier():
            raise InputError(flag, f"{item!r} is not name=value", f"e.g. {example}")
        key = name.strip()
        if key in out:
            raise InputError(f"{flag} {key}", f"given twice ({given[key]} and {item})",
                             "give each parameter once")
        given[key] = item
        try:
            out[key] = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            out[key] = raw
    return out


def _method_list(methods: str | None) -> list[str] | None:
    """``--methods a,b``: None when not given; an empty list, or a name twice, is an
    error rather than "every method" or a second run."""
    from chipsched.errors import InputError

    if methods is None:
        return None
    names = [m.strip() for m in methods.split(",")]
    if not any(names):
        raise InputError("--methods", "is empty", "name methods (e.g. --methods seed004,"
                         "metis) or leave the option out for every method")
    if not all(names):
        raise InputError("--methods", f"{methods!r} has an empty name",
                         "separate names by single commas")
    seen = [n for i, n in enumerate(names) if n in names[:i]]
    if seen:
        raise InputError("--methods", f"names {seen[0]!r} twice", "give each method once "
                         "(--seeds N runs a randomized method several times)")
    return names


def _json_or_format(json_: bool, fmt: str) -> None:
    if json_ and fmt != "table":
        from chipsched.errors import InputError

        raise InputError("--json", f"conflicts with --format {fmt}",
                         "give one of them: --json for one JSON object, --format for a "
                         "table")


OptionOpt = Annotated[list[str] | None, typer.Option(
    "--option", "-O", help="instance option name=value (repeatable), e.g. -O "
    "weight_accounting=set; `chipsched list --json` shows each decision's options")]


def _instance_options(objective: str | None, batch: int | None, processors: int | None,
                      option: list[str] | None = None) -> dict[str, Any]:
    opts = {"objective": objective, "batch": batch, "processors": processors}
    out = {k: v for k, v in opts.items() if v is not None}
    for name, value in _parse_params(option, "--option", "-O weight_accounting=set").items():
        if name in out:
            from chipsched.errors import InputError

            raise InputError(f"--option {name}", f"repeats --{name}", "give it once")
        out[name] = value
    return out


WarmOpt = Annotated[str | None, typer.Option(
    "--warm-start", help="a method of the decision (it runs first; its solution is the warm "
    "start) or a result file written with --out")]


def _progress_callback(enabled: bool) -> tuple[Any, Any]:
    """(a rich progress display or None, the SolveOptions.progress callback drawing it).
    Only on a terminal: redirected to a file or a pipe, the transient bar draws nothing
    useful and leaves an empty line before an error (review finding)."""
    if not enabled or not _err().is_terminal:
        return None, None
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    p = Progress(TextColumn("{task.description}"), BarColumn(),
                 TextColumn("{task.fields[count]}"), TimeElapsedColumn(),
                 console=_err(), transient=True)
    # before the method's first report: what is being done, not "0/None"
    task = p.add_task("preparing (instance, cost tables, kernels)", total=None, count="")

    def report(done: float, total: float | None, note: str) -> None:
        count = f"{done:.0f}/{total:.0f}" if total else f"{done:.0f}"
        p.update(task, completed=done, total=total, description=note, count=count)

    return p, report


@app.command("solve")
@cli_errors
def solve_cmd(
    decision: Annotated[str, typer.Argument(help="a decision (chipsched list)")],
    instance: InstanceOpt,
    method: Annotated[str, typer.Option("--method", "-m", help="see chipsched list")],
    chip: ChipOpt = None,
    objective: ObjectiveOpt = None,
    batch: BatchOpt = None,
    processors: ProcOpt = None,
    option: OptionOpt = None,
    time_limit: TimeOpt = None,
    seed: SeedOpt = 0,
    threads: ThreadsOpt = None,
    milp_solver: MilpOpt = "highs",
    param: ParamOpt = None,
    warm_start: WarmOpt = None,
    json_: JsonOpt = False,
    log: LogOpt = False,
    auto_warm: AutoWarmOpt = True,
    plot: Annotated[Path | None, typer.Option("--plot", help="draw the solution to this "
                                              ".png/.svg/.pdf (S-T graph, Gantt chart, "
                                              "placement, core-load heat map)")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="also write the JSON result "
                                             "to this file")] = None,
) -> None:
    """Solve one decision on one instance with one method."""
    from chipsched.api import make_instance, registry, solve
    from chipsched.budget import Budget
    from chipsched.errors import InputError
    from chipsched.files import atomic_write, check_output_file
    from chipsched.result import to_jsonable
    from chipsched.solvers.options import SolveOptions

    reg = registry()
    dec = reg.decision(decision)
    dec.method(method)
    params = _parse_params(param)
    if out is not None:
        check_output_file(out)
    if plot is not None:
        _check_plot(plot)
    inst = make_instance(decision, instance, chip,
                         **_instance_options(objective, batch, processors, option))
    if plot is not None and getattr(inst, "platform", "") == "soc":
        raise InputError("--plot", "a processor-chain (SoC) split has no grid to draw",
                         "leave --plot out for SoC instances")
    bar, report = _progress_callback(not json_ and not log)
    opts = SolveOptions(time_limit=time_limit, seed=seed, threads=threads,
                        milp_solver=milp_solver, progress=report, warm_start=warm_start,
                        verbose=log, auto_warm_start=auto_warm)
    budget = Budget(time_limit, start=False)  # the face starts it; Ctrl-C stops it
    with _stop_on_interrupt(budget):
        if bar is not None:
            with bar:
                res = solve(decision, inst, method, options=opts, budget=budget, **params)
        else:
            res = solve(decision, inst, method, options=opts, budget=budget, **params)
    if out is not None:
        atomic_write(out, lambda fh: json.dump(to_jsonable(res.to_dict()), fh, indent=2))
    title = f"{decision} on {res.instance}: objective {res.objective_name}"
    # a run without a solution (a bound) is drawn as compare draws its runs
    drawn = (_plot_runs(dec, inst, [res], plot, f"{decision} on {res.instance}")
             if plot is not None and res.solution is None else None)
    if json_:
        if plot is not None and dec.render is not None and res.solution is not None:
            dec.render(inst, res, plot=plot)  # draws the picture; the JSON is the output
        if drawn:
            typer.echo(drawn, err=True)
        _print_json(res.to_dict())
        return
    from chipsched.report import result_table

    con = _out()
    con.print(result_table([res], title=title))
    if dec.render is not None and res.solution is not None:
        con.print(dec.render(inst, res, plot=plot))
    if drawn:
        con.print(drawn, markup=False)


@app.command("compare")
@cli_errors
def compare_cmd(
    decision: Annotated[str, typer.Argument(help="decision name")],
    instance: InstanceOpt,
    methods: Annotated[str | None, typer.Option("--methods", help="comma-separated (default: "
                                                "every method of the decision)")] = None,
    chip: ChipOpt = None,
    objective: ObjectiveOpt = None,
    batch: BatchOpt = None,
    processors: ProcOpt = None,
    option: OptionOpt = None,
    time_limit: Annotated[float | None, typer.Option(
        "--time-limit", help="seconds per run (default: 10 s per exact or bound run, heuristics "
        "unlimited)")] = None,
    seeds: Annotated[int, typer.Option("--seeds", help="seeds 0..N-1 for randomized "
                                       "methods")] = 1,
    threads: ThreadsOpt = None,
    milp_solver: MilpOpt = "highs",
    param: ParamOpt = None,
    warm_start: Annotated[str | None, typer.Option(
        "--warm-start", help="a method whose solution warm-starts every method that takes "
        "one, or a result file written with --out")] = None,
    json_: JsonOpt = False,
    log: LogOpt = False,
    auto_warm: AutoWarmOpt = True,
    csv: Annotated[Path | None, typer.Option("--csv", help="also write every run as a CSV "
                                             "row (units, chip, batch)")] = None,
    fmt: Annotated[str, typer.Option("--format", help="table (terminal), markdown, latex "
                                     "(booktabs) or csv on stdout; several seeds give "
                                     "best, mean ± sd and worst per method")] = "table",
    plot: Annotated[Path | None, typer.Option("--plot", help="draw the runs to this "
                                              ".png/.svg/.pdf: objectives against the best "
                                              "bound (tile_groups: energy against latency "
                                              "over the bound's envelope)")] = None,
) -> None:
    """Several methods on one instance: objective / bound / gap / time.

    Methods that do not apply to the instance are listed as skipped, failing methods
    with their message; the exit code is 0 when at least one method found a solution.
    """
    from chipsched.api import (
        DEFAULT_EXACT_TIME_LIMIT,
        any_solution,
        best_bound,
        compare,
        make_instance,
        registry,
    )
    from chipsched.errors import InputError
    from chipsched.solvers.options import SolveOptions
    from chipsched.tables import FORMATS

    reg = registry()
    dec = reg.decision(decision)
    names = _method_list(methods)
    for n in names or []:
        dec.method(n)
    if fmt not in FORMATS:
        raise InputError("--format", f"unknown format {fmt!r}", f"use one of "
                         f"{', '.join(FORMATS)}")
    _json_or_format(json_, fmt)
    if seeds < 1:
        raise InputError("--seeds", f"must be >= 1, got {seeds}",
                         "give how many seeds each randomized method runs, e.g. 5")
    params = _parse_params(param)
    if csv is not None:
        from chipsched.files import check_output_file

        check_output_file(csv, "--csv")
    if plot is not None:
        _check_plot(plot)
    bar, report = _progress_callback(not json_ and fmt == "table" and not log)
    where = {"run": "", "done": 0, "total": None}

    def on_start(method: str, seed: int, done: int, total: int) -> None:
        where.update(run=f"{method}" + (f" (seed {seed})" if seeds > 1 else ""),
                     done=done, total=total)
        if report is not None:
            report(done, total, f"{decision}: running {where['run']}")

    def method_progress(done: float, total: float | None, note: str) -> None:
        # a method's own stages (partition, placement, …) under the run it belongs to
        if report is not None:
            report(where["done"], where["total"], f"{where['run']}: {note}")

    opts = SolveOptions(time_limit=time_limit, threads=threads, milp_solver=milp_solver,
                        warm_start=warm_start, verbose=log, auto_warm_start=auto_warm,
                        progress=method_progress if report is not None else None)
    inst = make_instance(decision, instance, chip,
                         **_instance_options(objective, batch, processors, option))

    def on_result(r: Any, done: int, total: int) -> None:
        if report is not None:
            report(done, total, f"{decision}: {r.method} {r.status.value}")

    if bar is not None:
        with bar:
            results = compare(decision, inst, names, seeds=range(seeds), options=opts,
                              on_result=on_result, on_start=on_start, **params)
    else:
        results = compare(decision, inst, names, seeds=range(seeds), options=opts, **params)
    if csv is not None:
        _write_csv(csv, results, inst)
    obj = dec.problem.objective(inst)
    limit = (f"time limit {time_limit:g} s per run" if time_limit is not None else
             f"exact and bound methods {DEFAULT_EXACT_TIME_LIMIT:g} s each, heuristics "
             "unlimited")
    title = (f"{decision} on {dec.problem.instance_name(inst)}: objective {obj.name} "
             f"({obj.unit}); {limit}")
    if json_:
        _print_json({"decision": decision, "instance": dec.problem.instance_name(inst),
                     "objective": obj.to_dict(), "best_bound": best_bound(results),
                     "results": [r.to_dict() for r in results]})
    elif fmt != "table":
        from chipsched.tables import comparison_table, render

        sys.stdout.write(render(comparison_table(results, inst, title), fmt))
    else:
        from chipsched.report import result_table

        _out().print(result_table(results, title=title))
    if plot is not None:
        # stderr: stdout carries the JSON or the table in its format
        typer.echo(_plot_runs(dec, inst, results, plot,
                              f"{decision} on {dec.problem.instance_name(inst)}"),
                   err=json_ or fmt != "table")
    if not any_solution(results):
        typer.echo("error: no method produced a solution (see the table)", err=True)
        raise typer.Exit(1)


def _plot_runs(dec: Any, inst: Any, results: list[Any], plot: Path, title: str) -> str:
    """Draw ``results`` to ``plot`` (the decision's own picture, ``plot_compare``, or
    every run's objective against the best bound); the line saying what was drawn."""
    from chipsched.api import best_bound, best_found
    from chipsched.errors import InputError
    from chipsched.plots import plot_methods

    if not any(r.objective is not None or r.bound is not None for r in results):
        return f"nothing drawn to {plot}: no run has an objective or a bound"
    three = {"best_bound": best_bound(results), "best_found": best_found(results)}
    try:
        if dec.plot_compare is not None:
            dec.plot_compare(inst, results, plot, **three)
        else:
            r0 = results[0]
            plot_methods(results, plot, title=title, label=f"objective {r0.objective_name}"
                         + (f" ({r0.objective_unit})" if r0.objective_unit else ""), **three)
    except InputError as exc:  # nothing this decision can draw from these runs
        return f"nothing drawn to {plot}: {exc}"
    return f"plot written to {plot}"


def _write_csv(path: Path, results: list[Any], instance: Any = None) -> None:
    import csv as csv_mod

    from chipsched.files import atomic_write
    from chipsched.tables import _facts

    facts = _facts(instance) if instance is not None else {"chip": "", "batch": ""}
    cols = ["decision", "instance", "chip", "batch", "method", "seed", "status", "objective",
            "bound", "gap", "objective_name", "objective_unit", "wall_s", "message"]

    def cell(v: Any) -> Any:
        # 7 significant figures: a paper needs 3-4, a re-analysis a few more; the JSON
        # output keeps every digit
        return "" if v is None else f"{v:.7g}" if isinstance(v, float) else v

    def write(fh: Any) -> None:
        w = csv_mod.writer(fh)
        w.writerow(cols)
        for r in results:
            d = {**r.to_dict(), **facts}
            w.writerow([cell(d.get(c)) for c in cols])

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
    fmt: Annotated[str, typer.Option("--format", help="table (terminal, one row per run), "
                                     "or markdown, latex, csv: one row per method and "
                                     "instance with best, mean ± sd, worst")] = "table",
    wait_workers: Annotated[float, typer.Option(
        "--wait-workers", help="with --scheduler: seconds to wait when the cluster has no "
        "worker (none yet, or all lost) before stopping with an error")] = 30.0,
    fresh: Annotated[bool, typer.Option("--fresh", help="start a new bench even if an "
                                        "interrupted one with the same jobs is in --out "
                                        "(default: resume it, running only the missing "
                                        "runs)")] = False,
) -> None:
    """Many instances × methods × seeds in parallel; results in SQLite + CSV, plots, HTML.

    Run again after an interruption (^C, a crash, kill), the same suite in the same
    --out resumes: only the runs missing from results.sqlite run (--fresh: all)."""
    import os

    from chipsched.bench import bench, builtin_suites, summarize
    from chipsched.errors import InputError
    from chipsched.tables import FORMATS

    if not 0 <= workers <= 256:
        raise InputError("--workers", f"must be in 0..256, got {workers}",
                         "give the number of processes (0: one per core)")
    if fmt not in FORMATS:
        raise InputError("--format", f"unknown format {fmt!r}",
                         f"use one of {', '.join(FORMATS)}")
    if not 0 <= wait_workers <= 86_400:
        raise InputError("--wait-workers", f"must be in 0..86400 s, got {wait_workers:g}",
                         "give seconds, e.g. 30")
    _json_or_format(json_, fmt)
    if suite == "list":
        _out().print("built-in suites: " + ", ".join(builtin_suites()))
        return
    bar, report = _progress_callback(not json_ and fmt == "table")

    def notice(msg: str) -> None:
        typer.echo(msg, err=True)

    kw = {"workers": workers or (os.cpu_count() or 1), "scheduler": scheduler,
          "resume": not fresh, "notice": notice, "wait_workers": wait_workers}
    if bar is not None:
        with bar:
            rows, files = bench(suite, out, progress=report, **kw)
    else:
        rows, files = bench(suite, out, **kw)
    if json_:
        _print_json({"runs": summarize(rows), "files": {k: str(v) for k, v in files.items()}})
    elif fmt != "table":
        from chipsched.tables import bench_table, render

        sys.stdout.write(render(bench_table(summarize(rows), f"bench {suite}"), fmt))
    else:
        _bench_table(suite, rows, files)
    failed = [r for r in rows if r["status"] == "error"]
    if failed:
        typer.echo(f"error: {len(failed)} of {len(rows)} runs failed (see the table; every "
                   f"finished run is in {files['sqlite']})", err=True)
        raise typer.Exit(1)
    if not any(r["objective"] is not None for r in rows):
        typer.echo("error: no run produced a solution (see the table)", err=True)
        raise typer.Exit(1)


def _bench_table(suite: str, rows: list[dict[str, Any]], files: dict[str, Any]) -> None:
    from chipsched.bench import summarize

    summ = summarize(rows)
    spaces = sorted({r["space"] for r in summ if r.get("space") and r["bound"] is not None})
    t = Table(title=f"bench {suite}: {len(rows)} runs", title_justify="left",
              caption="\n".join(f"{'†' * (i + 1)} bound of the restricted space {s} (not "
                                 "used for 'vs best bound')" for i, s in enumerate(spaces))
              or None, caption_justify="left")
    for col, j in (("decision", "left"), ("instance", "left"), ("method", "left"),
                   ("seed", "right"), ("status", "left"), ("objective", "right"),
                   ("bound", "right"), ("vs best bound", "right"),
                   ("vs best found", "right"), ("time", "right")):
        t.add_column(col, justify=j)
    for r in summ:
        g = r["gap_to_best_bound"]
        u = r.get("objective_unit") or ""
        mark = "†" * (spaces.index(r["space"]) + 1) if r.get("space") in spaces else ""
        bo, obj = r.get("best_objective"), r["objective"]
        found = "" if obj is None or not bo else f"{100 * (obj - bo) / abs(bo):+.2f} %"
        t.add_row(r["decision"], r["instance"] + (f" {r['instance_options']}"
                                                  if r["instance_options"] != "{}" else ""),
                  r["method"], str(r["seed"]), r["status"],
                  "" if obj is None else f"{obj:.6g} {u}".strip(),
                  "" if r["bound"] is None else f"{r['bound']:.6g}{mark} {u}".strip(),
                  "" if g is None else f"{100 * g:+.2f} %", found,
                  "" if r["wall_s"] is None else f"{r['wall_s']:.3g} s")
    con = _out()
    con.print(t)
    errors = [r for r in rows if r["status"] == "error"]
    for r in errors[:5]:
        con.print(f"[red]error[/] {r['decision']}:{r['instance']}/{r['method']}: {r['message']}")
    skipped = [r for r in rows if r["status"] == "skipped"]
    for r in skipped[:5]:
        con.print(f"skipped {r['decision']}:{r['instance']}/{r['method']}: {r['message']}")
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
