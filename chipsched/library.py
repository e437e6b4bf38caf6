"""chipsched-lib: a versioned library of mapping instances with best known solutions and
proven bounds, and the verifier that checks anyone's solution against them (issue 28).

Layout (every file JSON under ``instances/library/``, documented in docs/library.md):

* ``<decision>/<id>.json`` — one **instance file**: how the instance was built (``spec``,
  ``chip_spec``, ``options``), the chip with every constant (``chip``: the chip file
  form), the network when the instance is built from one (``network``: the network file
  form), and the instance's ``fingerprint`` — a SHA-256 over every number the evaluator
  reads (cost tables included). Loading rebuilds the instance from the embedded chip and
  network and refuses it when the fingerprint differs: a change of the cost model or of a
  generator cannot silently change a published value.
* ``<decision>/best/<id>.json`` — the **best known** solution: objective, its components,
  the solution in the decision's documented form, and how it was found (method,
  parameters, seed, time limit, seconds, date).
* ``<decision>/bounds/<id>.json`` — the best **proven bound**: value, the method that
  proved it (and its parameters), its status (``optimal`` when the method proved the
  optimum) and seconds.

:func:`verify` re-checks a solution file written by anyone: it is read with the
decision's ``solution_from_dict`` and evaluated by the shared evaluator (which refuses
the first violated constraint in one line), and its objective is compared with the best
known. The table of ``docs/library.md`` is generated from these files
(:func:`library_table`), never typed.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import hashlib
import json
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from chipsched.errors import InputError, UnknownNameError

__all__ = [
    "DECISIONS", "LIB_DIR", "LIB_VERSION", "BestKnown", "Bound", "Entry", "Verdict",
    "best_known", "bound", "build_instance", "docs_table", "entries", "entry",
    "fingerprint", "found_by_runs", "from_earlier_best", "how_found", "how_found_short",
    "library_rows", "library_table", "read_solution_file", "verify", "write_best_known",
    "write_bound", "write_entry",
]

#: The library's version: instance files, fingerprints and the table carry it.
LIB_VERSION = "1.1"
#: Where the library's files live (data inside the package, so an installed chipsched has
#: them; this module is the face's: it builds instances and evaluates through the registry)
LIB_DIR = Path(__file__).resolve().parent / "instances" / "library"
#: Decision folders, in the order of the table.
DECISIONS = ("tile_groups", "core_assignment", "op_placement", "region_split")
#: Relative tolerance when a re-evaluated objective is compared with a stored one.
RTOL = 1e-9


@dataclass(frozen=True)
class Entry:
    """One library instance (the instance file's content)."""

    id: str
    decision: str
    description: str
    spec: str
    chip_spec: str
    options: Mapping[str, Any]
    chip: Mapping[str, Any]
    network: Mapping[str, Any] | None
    fingerprint: str
    size: float
    size_unit: str
    tier: str
    path: Path

    def to_dict(self) -> dict[str, Any]:
        return {"chipsched_lib": LIB_VERSION, "id": self.id, "decision": self.decision,
                "description": self.description, "tier": self.tier, "spec": self.spec,
                "chip_spec": self.chip_spec, "options": dict(self.options),
                "size": self.size, "size_unit": self.size_unit,
                "fingerprint": self.fingerprint, "chip": dict(self.chip),
                "network": None if self.network is None else dict(self.network)}


@dataclass(frozen=True)
class BestKnown:
    """The best known solution of one instance and how it was found."""

    id: str
    objective: float
    components: Mapping[str, Any]
    solution: Mapping[str, Any]
    found_by: Mapping[str, Any]
    path: Path


@dataclass(frozen=True)
class Bound:
    """The best proven lower bound of one instance and the method that proved it."""

    id: str
    value: float
    method: str
    params: Mapping[str, Any]
    status: str
    seconds: float
    path: Path


@dataclass(frozen=True)
class Verdict:
    """What :func:`verify` found: the re-evaluated objective and its components, and the
    comparison with the library's best known (``None`` when it has none)."""

    id: str
    decision: str
    objective: float
    objective_name: str
    objective_unit: str
    components: Mapping[str, Any]
    best_known: float | None
    bound: float | None

    @property
    def beats_best_known(self) -> bool:
        return self.best_known is not None and _less(self.objective, self.best_known)

    @property
    def ties_best_known(self) -> bool:
        return self.best_known is not None and _close(self.objective, self.best_known)

    def line(self) -> str:
        """One line for the CLI: values to 10 digits (what is compared), in seconds or
        joules with their SI prefix (1.4644 µJ, not 1.4644e-06 J)."""
        from chipsched.units import SI_UNITS, si_text

        def val(x: float) -> str:
            if self.objective_unit in SI_UNITS:
                return si_text(x, self.objective_unit, 10)
            return f"{x:.10g} {self.objective_unit}".strip()

        s = f"{self.id}: feasible; {self.objective_name} = {val(self.objective)}"
        if self.best_known is None:
            return s + "; the library has no best known for it"
        if self.beats_best_known:
            s += f"; beats the best known {val(self.best_known)} (chipsched lib submit)"
        elif self.ties_best_known:
            s += f"; equals the best known {val(self.best_known)}"
        else:
            s += (f"; {100 * (self.objective / self.best_known - 1):.3f} % above the best "
                  f"known {val(self.best_known)}")
        if self.bound is not None and self.bound > 0:
            s += f"; at most {100 * (self.objective / self.bound - 1):.3f} % above optimal"
        return s


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=0.0) or a == b


def _less(a: float, b: float) -> bool:
    return a < b and not _close(a, b)


# ---------------------------------------------------------------------------------------
# fingerprints


def _feed(h: Any, x: Any) -> None:
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        h.update(b"D" + type(x).__name__.encode())
        for f in dataclasses.fields(x):
            h.update(f.name.encode())
            _feed(h, getattr(x, f.name))
    elif isinstance(x, np.ndarray):
        h.update(b"A" + str(x.dtype).encode() + str(x.shape).encode())
        if x.dtype.kind == "f":
            # in single precision: the last bits of a float64 may differ between CPUs
            # (vectorized math), a change of the cost model moves far more than that
            x = x.astype(np.float32)
        h.update(np.ascontiguousarray(x).tobytes())
    elif isinstance(x, Mapping):
        h.update(b"M%d" % len(x))
        for k in sorted(x, key=repr):
            _feed(h, k)
            _feed(h, x[k])
    elif isinstance(x, (list, tuple)):
        h.update(b"L%d" % len(x))
        for v in x:
            _feed(h, v)
    elif isinstance(x, (set, frozenset)):
        h.update(b"S%d" % len(x))
        for v in sorted(x, key=repr):
            _feed(h, v)
    elif isinstance(x, enum.Enum):
        h.update(b"E" + repr(x).encode())
    elif isinstance(x, (float, np.floating)):
        h.update(b"F" + repr(float(np.float32(x))).encode())
    elif x is None or isinstance(x, (bool, int, str, np.generic)):
        h.update(b"V" + type(x).__name__.encode() + repr(x).encode())
    else:
        raise TypeError(f"cannot fingerprint a {type(x).__name__}")


def fingerprint(instance: Any) -> str:
    """SHA-256 (hex) over every field of ``instance`` — the dataclasses, arrays and
    numbers the evaluator reads, cost tables included —, stable across processes; floats
    enter in single precision (a relative change above ~1e-7 changes it)."""
    h = hashlib.sha256()
    _feed(h, instance)
    return h.hexdigest()


# ---------------------------------------------------------------------------------------
# reading and writing the library's files


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(str(path), f"no such {what} file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(path), f"cannot read the {what} file: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}: line {exc.lineno}", f"not JSON: {exc.msg}",
                         f"a {what} file is one JSON object") from None


def _write_json(path: Path, data: Mapping[str, Any]) -> Path:
    from chipsched.files import atomic_write
    from chipsched.result import to_jsonable

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda fh: (json.dump(to_jsonable(dict(data)), fh, indent=1,
                                             ensure_ascii=False), fh.write("\n")))
    return path


def _need(data: Mapping[str, Any], key: str, types: type | tuple[type, ...], where: str
          ) -> Any:
    if key not in data:
        raise InputError(f"{where}: {key}", "missing")
    v = data[key]
    if not isinstance(v, types) or isinstance(v, bool) and bool not in (
            types if isinstance(types, tuple) else (types,)):
        raise InputError(f"{where}: {key}", f"must be {_type_names(types)}, got "
                         f"{type(v).__name__}")
    return v


def _type_names(types: type | tuple[type, ...]) -> str:
    ts = types if isinstance(types, tuple) else (types,)
    return " or ".join({"str": "text", "float": "a number", "int": "an integer",
                        "dict": "an object", "NoneType": "null"}.get(t.__name__, t.__name__)
                       for t in ts)


def _entry_from(data: Any, path: Path) -> Entry:
    where = str(path)
    if not isinstance(data, Mapping):
        raise InputError(where, "an instance file is one JSON object")
    version = data.get("chipsched_lib")
    if version != LIB_VERSION:
        raise InputError(f"{where}: chipsched_lib", f"version {version!r} is not "
                         f"{LIB_VERSION}", "use an instance file of chipsched-lib "
                         f"{LIB_VERSION}")
    decision = _need(data, "decision", str, where)
    if decision not in DECISIONS:
        raise UnknownNameError(f"{where}: decision", decision, DECISIONS)
    network = data.get("network")
    if network is not None and not isinstance(network, Mapping):
        raise InputError(f"{where}: network", "must be a network object or null")
    return Entry(id=_need(data, "id", str, where), decision=decision,
                 description=str(data.get("description", "")),
                 spec=_need(data, "spec", str, where),
                 chip_spec=_need(data, "chip_spec", str, where),
                 options=dict(_need(data, "options", dict, where)),
                 chip=dict(_need(data, "chip", dict, where)), network=network,
                 fingerprint=_need(data, "fingerprint", str, where),
                 size=float(_need(data, "size", (int, float), where)),
                 size_unit=str(data.get("size_unit", "")),
                 tier=str(data.get("tier", "")), path=path)


def entries(decision: str | None = None, root: Path | None = None) -> list[Entry]:
    """Every instance of the library (of one decision), in decision then id order."""
    root = LIB_DIR if root is None else root
    if decision is not None and decision not in DECISIONS:
        raise UnknownNameError("decision", decision, DECISIONS)
    out = []
    for d in (decision,) if decision else DECISIONS:
        for p in sorted((root / d).glob("*.json")):
            out.append(_entry_from(_read_json(p, "instance"), p))
    return out


def entry(name: str | os.PathLike[str], root: Path | None = None) -> Entry:
    """One instance: a library id (``tg-resnet50-v1-edge-b8``) or an instance file."""
    p = Path(name)
    if p.suffix == ".json" and (p.is_file() or os.sep in str(name)):
        return _entry_from(_read_json(p, "instance"), p)
    # an instance's file is named by its id: read that one file, not the library
    for d in DECISIONS if p.name == str(name) else ():
        f = (LIB_DIR if root is None else root) / d / f"{name}.json"
        if f.is_file():
            e = _entry_from(_read_json(f, "instance"), f)
            if e.id == str(name):
                return e
    known = {e.id: e for e in entries(root=root)}
    if str(name) not in known:
        raise UnknownNameError("library instance", str(name), known, "chipsched lib list")
    return known[str(name)]


def build_instance(e: Entry, check: bool = True) -> Any:
    """The decision's instance of entry ``e``, built from its embedded chip (and network);
    with ``check`` an :class:`InputError` when its fingerprint is not the recorded one."""
    from chipsched.hardware import Hardware
    from chipsched.registry import registry
    from chipsched.workload import Workload

    hw = Hardware.from_dict(dict(e.chip), source=f"{e.id}: chip")
    src: Any = e.spec
    if e.network is not None:
        src = Workload.from_dict(dict(e.network), source=f"{e.id}: network")
    # the registry, not chipsched.api: the API's ``lib:`` instances come through here
    inst = registry().decision(e.decision).load_instance(src, hw, **dict(e.options))
    if check:
        got = fingerprint(inst)
        if got != e.fingerprint:
            raise InputError(f"{e.id}: fingerprint", f"the instance built today ({got[:12]}…) "
                             f"is not the one published ({e.fingerprint[:12]}…): the cost "
                             "model or a generator has changed", "its published values may "
                             "not hold; rebuild the library (benchmarks/library_build.py) "
                             "and bump its version")
    return inst


def write_entry(decision: str, id_: str, spec: str, chip_spec: str,
                options: Mapping[str, Any], description: str, tier: str,
                root: Path | None = None, embed_network: bool = True) -> Entry:
    """Build the instance from ``spec`` and ``chip_spec`` as the CLI would and write its
    instance file (chip and network embedded, fingerprint of the built instance)."""
    from chipsched.instances.chips import get_chip
    from chipsched.instances.networks import get_network, network_names
    from chipsched.registry import registry

    root = LIB_DIR if root is None else root
    hw = get_chip(chip_spec)
    network = None
    if embed_network and spec.partition(":")[0] in network_names():
        network = get_network(spec).to_dict()
    path = root / decision / f"{id_}.json"
    e = Entry(id_, decision, description, spec, chip_spec, dict(options), hw.to_dict(),
              network, "", 0.0, "", tier, path)
    inst = build_instance(e, check=False)
    direct = registry().decision(decision).load_instance(spec, get_chip(chip_spec),
                                                         **dict(options))
    fp = fingerprint(inst)
    if fingerprint(direct) != fp:
        raise InputError(f"{id_}", "the instance rebuilt from the embedded chip and network "
                         "differs from the one built from its spec", "embed_network=False")
    prob = registry().decision(decision).problem
    e = dataclasses.replace(e, fingerprint=fp, size=float(prob.instance_size(inst)),
                            size_unit=prob.size_unit)
    _write_json(path, e.to_dict())
    return e


def _best_from(data: Any, path: Path) -> BestKnown:
    where = str(path)
    if not isinstance(data, Mapping):
        raise InputError(where, "a best-known file is one JSON object")
    return BestKnown(id=_need(data, "id", str, where),
                     objective=float(_need(data, "objective", (int, float), where)),
                     components=dict(data.get("components") or {}),
                     solution=dict(_need(data, "solution", dict, where)),
                     found_by=dict(data.get("found_by") or {}), path=path)


def best_known(e: Entry) -> BestKnown | None:
    """The best-known file of ``e`` (None when the library has none)."""
    p = e.path.parent / "best" / f"{e.id}.json"
    return _best_from(_read_json(p, "best-known"), p) if p.is_file() else None


def bound(e: Entry) -> Bound | None:
    """The bound file of ``e`` (None when the library has none)."""
    p = e.path.parent / "bounds" / f"{e.id}.json"
    if not p.is_file():
        return None
    data = _read_json(p, "bound")
    where = str(p)
    return Bound(id=_need(data, "id", str, where),
                 value=float(_need(data, "bound", (int, float), where)),
                 method=_need(data, "method", str, where),
                 params=dict(data.get("params") or {}), status=str(data.get("status", "")),
                 seconds=float(data.get("seconds", float("nan"))), path=p)


def write_best_known(e: Entry, objective: float, components: Mapping[str, Any],
                     solution: Mapping[str, Any], found_by: Mapping[str, Any]) -> Path:
    p = e.path.parent / "best" / f"{e.id}.json"
    return _write_json(p, {"chipsched_lib": LIB_VERSION, "id": e.id, "decision": e.decision,
                           "objective": objective, "components": dict(components),
                           "found_by": {**found_by, "date": found_by.get(
                               "date", datetime.date.today().isoformat())},
                           "solution": dict(solution)})


def write_bound(e: Entry, value: float, method: str, params: Mapping[str, Any],
                status: str, seconds: float, time_limit: float | None = None) -> Path:
    p = e.path.parent / "bounds" / f"{e.id}.json"
    return _write_json(p, {"chipsched_lib": LIB_VERSION, "id": e.id, "decision": e.decision,
                           "bound": value, "method": method, "params": dict(params),
                           "status": status, "seconds": round(seconds, 3),
                           "time_limit": time_limit,
                           "date": datetime.date.today().isoformat()})


# ---------------------------------------------------------------------------------------
# verification


def read_solution_file(path: str | os.PathLike[str]) -> Any:
    """The JSON of a solution file: a best-known file, a ``--out`` result, or the
    decision's bare solution object."""
    return _read_json(Path(path), "solution")


def verify(instance: str | os.PathLike[str] | Entry, solution: Any,
           root: Path | None = None) -> Verdict:
    """Check ``solution`` (a path, or its parsed JSON) on a library instance in full and
    re-evaluate it: an :class:`InputError` with a one-line reason for the first violated
    constraint; otherwise the :class:`Verdict` (objective, components, best known)."""
    from chipsched.registry import registry

    e = instance if isinstance(instance, Entry) else entry(instance, root)
    data = solution
    if isinstance(solution, (str, os.PathLike)):
        data = read_solution_file(solution)
    if isinstance(data, Mapping) and data.get("id") not in (None, e.id) \
            and "chipsched_lib" in data:
        raise InputError("solution: id", f"is for {data['id']!r}, not {e.id!r}",
                         "give the solution of this instance")
    prob = registry().decision(e.decision).problem
    inst = build_instance(e)
    if isinstance(data, Mapping) and "chipsched_lib" in data:
        data = data.get("solution")
        if not isinstance(data, Mapping):
            raise InputError("solution: solution", "must be the decision's solution object")
    sol = prob.read_solution(inst, data, field="solution")
    obj, metrics = prob.evaluate(inst, sol)
    if not isinstance(obj, (int, float)) or not math.isfinite(obj):
        raise InputError("solution", f"evaluates to {obj!r}, not a finite objective")
    o = prob.objective(inst)
    bk, bd = best_known(e), bound(e)
    return Verdict(e.id, e.decision, float(obj), o.name, o.unit, _components(metrics),
                   None if bk is None else bk.objective, None if bd is None else bd.value)


def _components(metrics: Mapping[str, Any]) -> dict[str, Any]:
    """The scalar components of an evaluation (energy, latency, traffic …)."""
    out = {}
    for k, v in metrics.items():
        if isinstance(v, (bool, np.bool_)):
            continue
        if isinstance(v, (int, float, np.integer, np.floating)) and math.isfinite(float(v)):
            out[k] = float(v) if isinstance(v, (float, np.floating)) else int(v)
    return out


# ---------------------------------------------------------------------------------------
# the table


def library_rows(decision: str | None = None, root: Path | None = None
                 ) -> list[dict[str, Any]]:
    """One row per instance: id, size, best known (how found), bound (by which method),
    the gap between them and ``optimal`` where they meet."""
    rows = []
    for e in entries(decision, root):
        bk, bd = best_known(e), bound(e)
        row: dict[str, Any] = {"decision": e.decision, "id": e.id, "tier": e.tier,
                               "size": e.size, "size_unit": e.size_unit,
                               "description": e.description,
                               "best_known": None if bk is None else bk.objective,
                               "found_by": "" if bk is None else how_found(bk.found_by),
                               "found_by_short": "" if bk is None
                               else how_found_short(bk.found_by),
                               "bound": None if bd is None else bd.value,
                               "bound_by": "" if bd is None else how_found(
                                   {"method": bd.method, "params": bd.params}),
                               "gap": None, "optimal": False}
        if bk is not None and bd is not None:
            row["optimal"] = bd.status == "optimal" or _close(bk.objective, bd.value)
            row["gap"] = 0.0 if row["optimal"] else (
                (bk.objective - bd.value) / bk.objective if bk.objective > 0 else None)
        rows.append(row)
    return rows


def how_found(found_by: Mapping[str, Any]) -> str:
    """A ``found_by`` record in one line: the method and its parameters."""
    m = str(found_by.get("method", "?"))
    params = found_by.get("params") or {}
    if params:
        m += " " + " ".join(f"{k}={_spelled(v)}" for k, v in params.items())
    return m


def _spelled(value: Any) -> str:
    """A parameter's value as ``how_found`` writes it: a whole float as an integer (β =
    200 and β = 200.0 are one value, one spelling)."""
    return str(int(value) if isinstance(value, float) and value.is_integer() else value)


#: a ``from`` text that names an earlier best known as the warm start
#: (:func:`from_earlier_best`)
_EARLIER_BEST = re.compile(r"^the best known at git \S+ \([^)]*\), ")
#: one ``name=value`` of a ``how_found`` line (values may hold spaces: "best known")
_PARAM = re.compile(r" (\w+)=(.*?)(?= \w+=|$)")


def from_earlier_best(rev: str, objective: float, found_by: Mapping[str, Any]) -> str:
    """The ``from`` parameter of a run started from the best known of git revision
    ``rev`` (objective ``objective``, found as ``found_by`` says) rather than today's."""
    return f"the best known at git {rev} ({objective:.4g}), {how_found(found_by)}"


def found_by_runs(found_by: Mapping[str, Any]) -> list[tuple[str, dict[str, str]]]:
    """The runs behind a best known, the first run first: (method, parameters) each,
    without the warm start that links a run to the one before it. A run polished from
    an earlier result records that result's ``how_found`` line as its ``from``
    parameter (:func:`from_earlier_best` when it was the best known of an earlier git
    revision); this reads the chain back from those lines, so it takes method names
    without spaces and parameter values without `` name=`` in them, as the library's
    writers record them."""
    params = dict(found_by.get("params") or {})
    origin = str(params.pop("from", "") or "")
    params.pop("warm_start", None)
    runs = [(str(found_by.get("method", "?")), {k: _spelled(v) for k, v in params.items()})]
    while origin:
        line, _, origin = _EARLIER_BEST.sub("", origin, count=1).partition(" from=")
        method, _, rest = line.partition(" ")
        ps = {k: v for k, v in _PARAM.findall(" " + rest) if k != "warm_start"}
        runs.append((method, ps))
    return runs[::-1]


def how_found_short(found_by: Mapping[str, Any]) -> str:
    """A ``found_by`` record for a table: the first run in full, then the methods of
    the runs that polished its result (``chipsched lib show ID`` prints every run)."""
    runs = found_by_runs(found_by)
    first = how_found({"method": runs[0][0], "params": runs[0][1]})
    later: list[list[Any]] = []
    for method, _ in runs[1:]:
        if later and later[-1][0] == method:
            later[-1][1] += 1
        else:
            later.append([method, 1])
    if not later:
        return first
    return first + ", then " + ", ".join(m if n == 1 else f"{m} ×{n}" for m, n in later)


def docs_table(root: Path | None = None) -> str:
    """The Markdown tables of docs/library.md: a summary line, then one per decision."""
    rows = {d: library_rows(d, root) for d in DECISIONS}
    n = sum(len(r) for r in rows.values())
    per = ", ".join(f"{len(r)} {d}" for d, r in rows.items())
    opt = sum(x["optimal"] for r in rows.values() for x in r)
    gaps = [x["gap"] for r in rows.values() for x in r if not x["optimal"] and x["gap"]]
    head = (f"chipsched-lib {LIB_VERSION}: **{n} instances** ({per}); **{opt} proven "
            f"optimal**, {len(gaps)} open")
    if gaps:
        med = 100 * float(np.median(gaps))
        head += (f" (gap between best known and bound: median {med:.1f} %, "
                 f"{sum(g <= 0.05 for g in gaps)} within 5 %)")
    return head + ".\n" + "".join(f"\n#### {d}\n\n" + library_table(r)
                                   for d, r in rows.items())


def library_table(rows: Iterable[Mapping[str, Any]], fmt: str = "md") -> str:
    """The library table in Markdown (``md``), LaTeX booktabs (``latex``) or ``csv``;
    "found by" is the short form (``how_found_short``) in the first two, every run's
    method and parameters in ``csv``."""
    rows = list(rows)
    head = ["instance", "size", "best known", "found by", "bound", "bound by", "gap"]

    def cells(r: Mapping[str, Any]) -> list[str]:
        size = f"{r['size']:,.0f} {r['size_unit']}".strip()
        bk = "—" if r["best_known"] is None else f"{r['best_known']:.6g}"
        bd = "—" if r["bound"] is None else f"{r['bound']:.6g}"
        gap = ("optimal" if r["optimal"] else "—" if r["gap"] is None
               else f"{100 * r['gap']:.2f} %")
        return [r["id"], size, bk, r["found_by_short"], bd, r["bound_by"], gap]

    if fmt == "csv":
        import csv
        import io

        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["decision", "instance", "tier", "size", "size_unit", "best_known",
                    "found_by", "bound", "bound_by", "gap", "optimal"])
        for r in rows:
            w.writerow([r["decision"], r["id"], r["tier"], r["size"], r["size_unit"],
                        "" if r["best_known"] is None else repr(r["best_known"]),
                        r["found_by"], "" if r["bound"] is None else repr(r["bound"]),
                        r["bound_by"], "" if r["gap"] is None else repr(r["gap"]),
                        int(r["optimal"])])
        return buf.getvalue()
    if fmt == "latex":
        def tex(s: str) -> str:
            for a, b in (("\\", r"\textbackslash{}"), ("_", r"\_"), ("%", r"\%"),
                         ("&", r"\&"), ("#", r"\#"), ("—", "--"), ("×", r"$\times$")):
                s = s.replace(a, b)
            return s

        lines = [r"\begin{tabular}{lrrlrlr}", r"\toprule",
                 " & ".join(head) + r" \\", r"\midrule"]
        lines += [" & ".join(tex(c) for c in cells(r)) + r" \\" for r in rows]
        lines += [r"\bottomrule", r"\end{tabular}"]
        return "\n".join(lines) + "\n"
    if fmt != "md":
        raise InputError("--format", f"unknown table format {fmt!r}", "use md, latex or csv")
    lines = ["| " + " | ".join(head) + " |", "|---|---:|---:|---|---:|---|---:|"]
    lines += ["| " + " | ".join(cells(r)) + " |" for r in rows]
    return "\n".join(lines) + "\n"
