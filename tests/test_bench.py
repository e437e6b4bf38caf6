"""The bench runner on a toy decision: suites, jobs, failures recorded, SQLite/CSV/HTML."""

from __future__ import annotations

import csv
import sqlite3

import pytest

from chipsched.bench import bench, expand, load_suites, summarize
from chipsched.errors import InputError, UnknownNameError
from tests import toy


def _toy():
    return toy.registry("exact", "random", "crash", "nth", "short")


SUITE = {"name": "toy-suite", "decision": "toy",
         "instances": ["4,2,8", {"instance": "5,3", "scale": 2}, "broken"],
         "methods": ["exact", "random", "crash"], "seeds": 2, "options": {"time_limit": 5}}


def test_expand_counts_runs():
    reg = _toy()
    jobs = expand(load_suites(SUITE), reg)
    # per instance: exact once, random per seed (2), crash once
    assert len(jobs) == 3 * 4
    assert {j.seed for j in jobs if j.method == "random"} == {0, 1}
    with pytest.raises(UnknownNameError, match="did you mean 'exact'"):
        expand(load_suites({**SUITE, "methods": ["exakt"]}), reg)


def test_bench_records_everything(tmp_path):
    reg = _toy()
    rows, files = bench(SUITE, tmp_path, registry_=reg)
    by = {(r["instance"], r["method"], r["seed"]): r for r in rows}
    assert by[("4,2,8", "exact", 0)]["objective"] == 2.0
    assert by[("4,2,8", "random", 1)]["objective"] == 2.0
    assert by[("5,3", "exact", 0)]["objective"] == 6.0  # scale=2
    crash = by[("4,2,8", "crash", 0)]
    assert crash["status"] == "error" and "RuntimeError: bug in a method" in crash["message"]
    assert by[("4,2,8", "exact", 0)]["objective_unit"] == "u"
    assert by[("4,2,8", "exact", 0)]["size_unit"] == "numbers"
    broken = by[("broken", "exact", 0)]
    assert broken["status"] == "error" and "broken on purpose" in broken["message"]
    summ = {(r["instance"], r["method"], r["seed"]): r for r in summarize(rows)}
    assert summ[("4,2,8", "random", 0)]["gap_to_best_bound"] == pytest.approx(1.0)  # 4 vs 2
    con = sqlite3.connect(files["sqlite"])
    n, = con.execute("select count(*) from runs").fetchone()
    assert n == len(rows) == 12
    with open(files["csv"]) as fh:
        assert len(list(csv.DictReader(fh))) == 12
    assert "toy-suite" in files["html"].read_text()
    assert any(k.startswith("plot") for k in files)
    # a second bench appends to the same database
    bench(SUITE, tmp_path, registry_=reg)
    n, = sqlite3.connect(files["sqlite"]).execute("select count(*) from runs").fetchone()
    assert n == 24


def test_suite_errors(tmp_path):
    with pytest.raises(InputError, match=r"suite\.seeds: must be a positive integer"):
        load_suites({**SUITE, "seeds": 0})
    with pytest.raises(InputError, match=r"suite\.colour: unknown field"):
        load_suites({**SUITE, "colour": "red"})
    with pytest.raises(InputError, match=r"options\.speed: unknown option"):
        load_suites({**SUITE, "options": {"speed": 1}})
    with pytest.raises(UnknownNameError, match="bench suite"):
        load_suites("no-such-suite")
    nested = load_suites({"name": "all", "runs": [SUITE, {**SUITE, "seeds": 1}]})
    assert [s.seeds for s in nested] == [2, 1]


def test_builtin_suites_expand_against_the_real_registry():
    from chipsched.api import registry
    from chipsched.bench import builtin_suites

    assert "smoke" in builtin_suites()
    reg = registry()
    for name in builtin_suites():
        jobs = expand(load_suites(name), reg)
        assert jobs, name
        assert {j.decision for j in jobs} <= set(reg.decisions())
        if name == "smoke":
            assert {j.decision for j in jobs} == set(reg.decisions())


def test_not_applicable_methods_are_recorded_as_skipped(tmp_path):
    suite = {"name": "skips", "decision": "toy", "instances": ["4,2,8,1", "4,2"],
             "methods": ["exact", "short"]}
    rows, _ = bench(suite, tmp_path, registry_=_toy())
    by = {(r["instance"], r["method"]): r for r in rows}
    assert by[("4,2,8,1", "short")]["status"] == "skipped"
    assert "more than 3 numbers" in by[("4,2,8,1", "short")]["message"]
    assert by[("4,2", "short")]["objective"] == 2.0


def test_method_variants_with_parameters(tmp_path):
    reg = _toy()
    suite = {"name": "variants", "decision": "toy", "instances": ["4,2,8"],
             "methods": ["nth", {"method": "nth", "params": {"n": 2}}]}
    rows, _ = bench(suite, tmp_path, registry_=reg)
    by = {r["method"]: r["objective"] for r in rows}
    assert by == {"nth": 4.0, "nth[n=2]": 8.0}
    with pytest.raises(InputError, match="nth: parameter 'k'"):
        expand(load_suites({**suite, "methods": [{"method": "nth", "params": {"k": 1}}]}),
               reg)
    with pytest.raises(InputError, match="nth: parameter n of toy/nth: -1 is out of range"):
        expand(load_suites({**suite, "methods": [{"method": "nth", "params": {"n": -1}}]}),
               reg)
    with pytest.raises(InputError, match=r"methods\[0\]"):
        load_suites({**suite, "methods": [{"name": "nth"}]})


def test_the_suite_example_in_the_docs_loads_and_expands():
    """docs/bench.md's complete example is a suite the loader accepts."""
    import re
    from pathlib import Path

    import yaml

    text = (Path(__file__).parents[1] / "docs" / "bench.md").read_text()
    block = re.search(r"```yaml\n(.*?)```", text, re.S).group(1)
    from chipsched.api import registry

    suites = load_suites(yaml.safe_load(block))
    jobs = expand(suites, registry())
    assert {s.decision for s in suites} == {"tile_groups", "op_placement"}
    labels = {j.label for j in jobs}
    assert any("sa[beta=20]" in lb for lb in labels)
    # 3 instances × (bound, ls, lp: 1 run each + 3 sa variants × 3 seeds) + 2 × 5 methods
    assert len(jobs) == 3 * (3 + 3 * 3) + 2 * 5
