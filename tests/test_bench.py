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
         "instances": ["4,2,8", {"instance": "5,3", "scale": 2}],
         "methods": ["exact", "random", "crash"], "seeds": 2, "options": {"time_limit": 5}}


def test_expand_counts_runs():
    reg = _toy()
    jobs = expand(load_suites(SUITE), reg)
    # per instance: exact once, random per seed (2), crash once
    assert len(jobs) == 2 * 4
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
    summ = {(r["instance"], r["method"], r["seed"]): r for r in summarize(rows)}
    assert summ[("4,2,8", "random", 0)]["gap_to_best_bound"] == pytest.approx(1.0)  # 4 vs 2
    con = sqlite3.connect(files["sqlite"])
    n, = con.execute("select count(*) from runs").fetchone()
    assert n == len(rows) == 8
    with open(files["csv"]) as fh:
        assert len(list(csv.DictReader(fh))) == 8
    assert "toy-suite" in files["html"].read_text()
    assert any(k.startswith("plot") for k in files)
    # a second bench appends to the same database
    bench(SUITE, tmp_path, registry_=reg)
    n, = sqlite3.connect(files["sqlite"]).execute("select count(*) from runs").fetchone()
    assert n == 16


def test_bad_instances_and_options_fail_before_any_run(tmp_path):
    """Review finding: an instance that cannot be built (unknown name, bad option) or a
    bad solver option ran the suite anyway and only failed its rows (exit 1 after files
    were written); they are bad input, refused before anything runs."""
    reg = _toy()
    for bad, frag in (({**SUITE, "instances": ["4,2", "broken"]}, "broken on purpose"),
                      ({**SUITE, "options": {"time_limit": -1}}, "time_limit"),
                      ({**SUITE, "options": 5}, "options: must be a mapping")):
        out = tmp_path / "never"
        with pytest.raises(InputError, match=frag):
            bench(bad, out, registry_=reg)
        assert not out.exists()


def test_a_suite_that_includes_itself_is_refused(tmp_path):
    f = tmp_path / "loop.yaml"
    f.write_text(f"name: loop\nruns: [{f}]\n")
    with pytest.raises(InputError, match="includes it back"):
        load_suites(str(f))


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


def _row(method, obj, bound=None, space="", seed=0, status="feasible", instance="i1"):
    return {"decision": "tile_groups", "instance": instance, "chip": "edge-4x4",
            "instance_options": "{}", "method": method, "seed": seed, "status": status,
            "objective": obj, "bound": bound, "gap": None, "space": space,
            "objective_unit": "s", "wall_s": 1.0, "size": 7.0, "size_unit": "layers",
            "message": ""}


def test_bench_reports_mark_restricted_bounds_and_skip_empty_plots(tmp_path):
    from chipsched.bench import plot_bench, write_html
    from chipsched.tables import bench_table, render

    rows = [_row("cpsat", 4e-6, 4e-6, space="segmented", status="optimal"),
            _row("sa", 3e-6, seed=0), _row("sa", 5e-6, seed=1)]
    skipped: list[str] = []
    plots = plot_bench(rows, tmp_path, skipped)
    # the only bound is of a restricted space: no gap plot, and the report says why
    assert [p.name for p in plots] == ["tile_groups_time_vs_size.png"]
    assert any("gap plot omitted" in s for s in skipped)
    page = write_html(rows, plots, tmp_path / "r.html", "chipsched bench my-suite",
                      skipped).read_text()
    # SI-prefixed per instance, the console's "vs best found" column, no empty "{}"
    assert "4† µs" in page and "restricted space segmented" in page
    assert "<th>vs best found</th>" in page and "+33.33 %" in page and "+0.00 %" in page
    assert "{}" not in page
    assert "<title>chipsched bench my-suite</title>" in page and "gap plot omitted" in page
    # read in a browser: a value never breaks from its unit, only the message wraps
    assert "white-space:nowrap" in page and "td.msg{" in page
    assert page.count("<td class='msg'>") == len(rows)
    assert "<th class=txt>method</th>" in page
    t = bench_table(summarize(rows))
    by = {r[3]: dict(zip(t.headers, r, strict=True)) for r in t.rows}
    assert by["cpsat"]["bound"] == "4.000†" and by["cpsat"]["unit"] == "µs"
    assert by["sa"]["mean ± sd"] == "4.000 ± 1.4" and by["sa"]["runs"] == "2/2"
    assert by["sa"]["vs best found [%]"] == "+0.00" and by["cpsat"]["vs best found [%]"] \
        == "+33.33"
    assert by["sa"]["vs best bound [%]"] == ""  # a restricted bound is not the decision's
    md = render(t, "markdown")
    assert "restricted space segmented" in md


def test_bench_title_is_the_suite_files_own_name(tmp_path):
    import yaml

    reg = _toy()
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump({"name": "outer-name", "runs": [
        {**SUITE, "name": "first-run", "instances": ["4,2,8"], "methods": ["exact"],
         "seeds": 1}]}))
    import os
    import stat

    old = os.umask(0o022)
    try:
        _, files = bench(str(f), tmp_path / "o", registry_=reg)
    finally:
        os.umask(old)
    assert "<title>chipsched bench outer-name</title>" in files["html"].read_text()
    for k in ("html", "csv"):
        assert stat.S_IMODE(os.stat(files[k]).st_mode) == 0o644


def test_an_interrupted_bench_resumes_with_only_the_missing_runs(tmp_path):
    reg = _toy()
    seen: list[str] = []

    def stop_after_three(done, total, note):
        seen.append(note)
        if done == 3:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        bench(SUITE, tmp_path, registry_=reg, progress=stop_after_three)
    db = tmp_path / "results.sqlite"
    con = sqlite3.connect(db)
    (bid, status, ended), = con.execute("select bench_id, status, ended from benches")
    assert status == "interrupted" and ended
    assert con.execute("select count(*) from runs").fetchone()[0] == 3
    notes: list[str] = []
    rows, files = bench(SUITE, tmp_path, registry_=reg, notice=notes.append)
    assert notes and "3 of 8 runs" in notes[0]
    con = sqlite3.connect(db)
    # the rest ran once each, under the same bench: 8 rows, no run twice
    keys = con.execute("select instance, method, seed from runs where bench_id = ?",
                       (bid,)).fetchall()
    assert len(keys) == 8 == len(set(keys)) == len(rows)
    assert con.execute("select status from benches where bench_id = ?",
                       (bid,)).fetchone()[0] == "complete"
    assert {(r["instance"], r["method"], str(r["seed"])) for r in rows} == \
        {(i, m, str(sd)) for i, m, sd in keys}
    # a completed bench is not resumed: the same suite again is a new bench, and
    # --fresh (resume=False) starts over even after an interruption
    bench(SUITE, tmp_path, registry_=reg)
    assert con.execute("select count(*) from benches").fetchone()[0] == 2
    with pytest.raises(KeyboardInterrupt):
        bench(SUITE, tmp_path, registry_=reg, progress=stop_after_three)
    bench(SUITE, tmp_path, registry_=reg, resume=False)
    assert con.execute("select count(*) from benches").fetchone()[0] == 4
    # a changed job list (another time limit) is another bench, not a resume
    with pytest.raises(KeyboardInterrupt):
        bench({**SUITE, "options": {"time_limit": 6}}, tmp_path, registry_=reg,
              progress=stop_after_three)
    notes.clear()
    bench({**SUITE, "options": {"time_limit": 7}}, tmp_path, registry_=reg,
          notice=notes.append)
    assert not notes


def test_a_cluster_without_workers_stops_with_a_message(tmp_path):
    """A Dask scheduler with no worker: the bench says so and stops after --wait-workers
    seconds instead of hanging (issue 29: 90 s of silence)."""
    import time

    from dask.distributed import LocalCluster

    from chipsched.errors import ChipschedError

    notes: list[str] = []
    with LocalCluster(n_workers=0, processes=True, dashboard_address=None) as cluster:
        t0 = time.monotonic()
        with pytest.raises(ChipschedError, match="no Dask worker for 2 s"):
            bench({"name": "c", "decision": "tile_groups", "instances": ["tiny"],
                   "chip": "edge-4x4", "methods": ["ls"]}, tmp_path,
                  scheduler=cluster.scheduler_address, wait_workers=2,
                  progress=lambda d, t, note: notes.append(note))
        assert time.monotonic() - t0 < 30
    assert any("waiting up to 2 s" in n for n in notes)
    assert not (tmp_path / "results.sqlite").exists()  # nothing ran, nothing recorded


def test_a_cluster_with_a_worker_runs_every_job(tmp_path):
    from dask.distributed import LocalCluster

    suite = {"name": "c", "decision": "tile_groups", "instances": ["tiny", "tiny-chain"],
             "chip": "edge-4x4", "methods": ["ls", "lp"]}
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        rows, _ = bench(suite, tmp_path, scheduler=cluster.scheduler_address)
    assert len(rows) == 4 and all(r["status"] == "feasible" for r in rows), rows


def test_rows_record_the_chip_the_run_used():
    """A suite that names no chip still records one that reproduces the run (issue 29:
    the chip column was empty for lenet5-neurons, which ran on 8×9 cores)."""
    from chipsched.bench import Job, run_job

    r = run_job(Job("s", "tile_groups", "tiny", None, (), "ls", 0))
    assert r["chip"] == "edge-4x4" and r["chip_given"] == ""
    r = run_job(Job("s", "core_assignment", "layered:layers=2,width=20,fanin=3,seed=0",
                    None, (), "seed004", 0))
    assert r["chip"].startswith("neuro-") and "[mesh " in r["chip"], r["chip"]
