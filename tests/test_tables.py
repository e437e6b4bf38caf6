"""Paper-ready tables (issue 13): units with prefixes, significant figures, seed
aggregates, and LaTeX that would compile (checked structurally, no TeX needed)."""

from __future__ import annotations

import csv
import io
import re

import hypothesis.strategies as st
import pytest
from hypothesis import given

from chipsched.result import Result, Status
from chipsched.tables import comparison_table, latex_escape, render, sig, unit_scale
from tests.cli_helpers import run


def test_unit_scale_prefixes_simple_units_and_normalises_compound_ones():
    assert unit_scale([1.34e-4, 2e-5], "s") == (1e-6, "µs")
    assert unit_scale([2.5e-3], "J") == (1e-3, "mJ")
    assert unit_scale([4.2], "s") == (1.0, "s")
    assert unit_scale([1.03e-16, 5e-17], "J²·s") == (1e-18, "×10⁻¹⁸ J²·s")
    assert unit_scale([511082.0], "byte·hop") == (1e3, "×10³ byte·hop")
    assert unit_scale([None, None], "s") == (1.0, "s")


@given(st.floats(1e-15, 1e15))
def test_scaled_values_read_between_1_and_1000(x):
    f, _ = unit_scale([x], "s")
    assert 1 <= x / f < 1000 * (1 + 1e-12)


def test_sig():
    assert sig(0.000134048) == "0.0001340"
    assert sig(12.2934) == "12.29"
    assert sig(4.5e7) == "4.500e+07"
    assert sig(None) == "" and sig(0.0) == "0"


def _res(method, obj, bound=None, seed=None, status=Status.FEASIBLE, space="", wall=1.0):
    return Result("tile_groups", method, status, obj, bound, wall_s=wall, seed=seed,
                  objective_unit="s", space=space)


def test_seeds_collapse_into_best_mean_sd_worst():
    rs = [_res("sa", v, seed=i) for i, v in enumerate([3e-6, 4e-6, 5e-6])]
    rs.append(_res("cpsat", 3.5e-6, 3.5e-6, status=Status.OPTIMAL, space="segmented"))
    t = comparison_table(rs)
    h = list(t.headers)
    assert "objective [µs]" in h and "mean ± sd [µs]" in h and "worst [µs]" in h
    sa = dict(zip(h, t.rows[0], strict=True))
    assert sa["objective [µs]"] == "3.000" and sa["mean ± sd [µs]"] == "4.000 ± 1.0"
    assert sa["worst [µs]"] == "5.000" and sa["runs"] == "3/3"
    cp = dict(zip(h, t.rows[1], strict=True))
    assert cp["bound [µs]"] == "3.500†" and cp["gap [%]"] == "0.00"
    assert any("restricted space: segmented" in n for n in t.notes)
    assert sa["vs best found [%]"] == "+0.00" and cp["vs best found [%]"] == "+16.67"


def check_latex_structure(tex: str, n_cols: int) -> None:
    """What a LaTeX run would reject, checked without TeX."""
    body = tex.split(r"\begin{tabular}", 1)[1].split(r"\end{tabular}", 1)[0]
    spec = re.match(r"\{([lrc]+)\}", body)
    assert spec and len(spec.group(1)) == n_cols
    for rule in (r"\toprule", r"\midrule", r"\bottomrule"):
        assert tex.count(rule) == 1
    rows = [ln for ln in body.splitlines() if ln.endswith(r"\\")]
    assert rows
    for ln in rows:  # every row has the column count: unescaped & separators
        assert len(re.findall(r"(?<!\\)&", ln)) == n_cols - 1, ln
    text = re.sub(r"\\[a-zA-Z]+|\\[^a-zA-Z]", "", tex)  # drop commands and escapes
    for special in "%_#":
        bad = [ln for ln in text.splitlines() if special in ln and not ln.startswith("%")]
        assert not bad, bad
    depth = 0
    for c in re.sub(r"\\[{}]", "", tex):
        depth += c == "{"
        depth -= c == "}"
        assert depth >= 0
    assert depth == 0
    assert "$$" not in tex and tex.count("$") % 2 == 0
    assert tex.count(r"\begin{") == tex.count(r"\end{")


def test_latex_escape_specials_and_symbols():
    s = latex_escape("a_b 50% #1 & µs ± ×10⁻¹⁸ J²·s †")
    assert r"a\_b" in s and r"50\%" in s and r"\#1" in s and r"\&" in s
    assert r"\ensuremath{^{-18}}" in s and r"\ensuremath{\mu}" in s
    assert "µ" not in s and "²" not in s


def test_latex_table_is_well_formed():
    rs = [_res("my_method", 2.5e-6, seed=0), _res("my_method", 2.7e-6, seed=1),
          _res("exact_50%", 2.4e-6, 2.4e-6, status=Status.OPTIMAL)]
    t = comparison_table(rs, title="tile_groups on resnet50@edge-4x4/b8: e2d (J²·s)")
    check_latex_structure(render(t, "latex"), len(t.headers))


def test_markdown_and_csv_have_one_cell_per_header():
    rs = [_res("a|b", 1e-3), _res("c", 2e-3, 1e-3)]
    t = comparison_table(rs)
    md = render(t, "markdown").splitlines()
    table_lines = [ln for ln in md if ln.startswith("|")]
    for ln in table_lines:
        assert len(re.findall(r"(?<!\\)\|", ln)) == len(t.headers) + 1
    rows = list(csv.reader(io.StringIO(render(t, "csv"))))
    assert rows[0] == list(t.headers) and all(len(r) == len(t.headers) for r in rows)


@pytest.mark.parametrize("fmt", ["markdown", "latex", "csv"])
def test_compare_format_on_the_command_line(fmt):
    res = run("compare", "tile_groups", "-i", "tiny", "--methods", "ls,lp,sa", "--seeds", "2",
              "-p", "beta=5", "--format", fmt)
    assert res.exit_code == 0, res.output
    out = res.stdout
    assert "edge-4x4" in out
    assert "J²·s" in out or r"J\ensuremath{^{2}}" in out
    if fmt == "latex":
        n = len(next(ln for ln in out.splitlines() if ln.startswith("method &")).split(" & "))
        check_latex_structure(out, n)
    if fmt == "csv":
        rows = list(csv.reader(io.StringIO(out)))
        assert {r[0] for r in rows[1:]} == {"ls", "lp", "sa"}
        assert "mean ± sd" in ",".join(rows[0])


def test_compare_unknown_format_is_one_line():
    from tests.cli_helpers import one_line_error

    one_line_error(run("compare", "tile_groups", "-i", "tiny", "--methods", "ls",
                       "--format", "docx"), "--format", "markdown")


def test_compare_csv_file_has_chip_batch_and_units(tmp_path):
    out = tmp_path / "c.csv"
    res = run("compare", "tile_groups", "-i", "tiny", "--methods", "ls,lp", "--batch", "4",
              "--csv", str(out))
    assert res.exit_code == 0, res.output
    rows = list(csv.DictReader(out.open()))
    assert {r["chip"] for r in rows} == {"edge-4x4"} and {r["batch"] for r in rows} == {"4"}
    assert {r["objective_unit"] for r in rows} == {"J²·s"}
    assert all(len(r["objective"].replace("e-", "").replace(".", "")) <= 9 for r in rows)


def test_a_run_over_its_time_limit_says_so():
    from chipsched.api import make_instance, solve

    inst = make_instance("op_placement", "tiny")
    r = solve("op_placement", inst, "milp", time_limit=0.01)  # Pyomo alone takes longer
    assert r.wall_s > 0.011
    assert "against a time limit of 0.01 s" in r.message
    assert "time limit reached while building the MILP" in r.message
    assert r.metrics["solver"]["time_limit_overrun_s"] == pytest.approx(r.wall_s - 0.01)
    quick = solve("op_placement", inst, "heft", time_limit=60)
    assert "time limit" not in quick.message
    # a heuristic that polls its budget too rarely for the limit: the note says so
    slow = solve("op_placement", inst, "heft", time_limit=1e-9)
    assert "one uninterruptible step" in slow.message


@pytest.mark.parametrize("method, marker", [("cpsat", "CP-SAT"), ("milp", "MIP")])
def test_log_goes_to_stderr_and_json_stays_clean(method, marker):
    res = run("solve", "op_placement", "-i", "tiny", "-m", method, "--log", "--json")
    assert res.exit_code == 0, res.output
    import json

    assert json.loads(res.stdout)["status"] == "optimal"
    assert marker in res.stderr


def test_si_text_picks_the_prefix_a_reader_expects():
    from chipsched.units import si_text

    assert si_text(2.225e-06, "s") == "2.225 µs"
    assert si_text(0.00259781, "J", 6) == "2.59781 mJ"
    assert si_text(4.089e9, "MAC") == "4.089 GMAC"
    assert si_text(3.0, "J²·s") == "3 J²·s"
