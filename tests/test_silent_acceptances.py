"""Issue 29's silent acceptances: each is now a one-line error naming the field, exit 2,
no traceback (tests/cli_helpers.one_line_error)."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
import yaml
from onnx import TensorProto, helper, numpy_helper

from chipsched.errors import InputError
from chipsched.files import read_data
from chipsched.instances.chips import get_chip
from chipsched.instances.onnx_import import load_onnx
from tests.cli_helpers import one_line_error, run

BOMB = "\n".join(
    [f'{c}: &{c} [{", ".join([f"*{p}"] * 9) if p else ", ".join(["lol"] * 9)}]'
     for p, c in zip([None, *"abcdefgh"], "abcdefghi", strict=True)])


def test_yaml_alias_bomb_is_refused_at_once(tmp_path):
    f = tmp_path / "suite.yaml"
    f.write_text(BOMB)
    with pytest.raises(InputError, match="alias"):
        read_data(f)
    one_line_error(run("bench", str(f), "--out", str(tmp_path / "o")),
                   "suite.yaml:2", "alias")


def test_duplicate_keys_are_refused_in_yaml_and_json(tmp_path):
    y = tmp_path / "net.yaml"
    y.write_text("name: n\nK: 32\nK: 64\n")
    with pytest.raises(InputError, match="'K' given twice"):
        read_data(y)
    j = tmp_path / "net.json"
    j.write_text('{"name": "a", "name": "b"}')
    with pytest.raises(InputError, match="'name' given twice"):
        read_data(j)
    # an anchor without an alias, and ordinary nested keys, still load
    ok = tmp_path / "ok.yaml"
    ok.write_text("a: &x 1\nb: {a: 2}\n")
    assert read_data(ok) == {"a": 1, "b": {"a": 2}}


def test_absurd_clock_is_refused(tmp_path):
    d = get_chip("edge-4x4").to_dict()
    d["unit"]["frequency_ghz"] = 1e-300
    f = tmp_path / "chip.yaml"
    f.write_text(yaml.safe_dump(d))
    one_line_error(run("show", "chip", str(f)), "unit.frequency_ghz", "GHz")


def test_cli_option_conflicts():
    one_line_error(run("solve", "tile_groups", "-i", "tiny", "-m", "ls", "-p", "beta=1",
                       "-p", "beta=2"), "--param beta", "twice")
    one_line_error(run("compare", "tile_groups", "-i", "tiny", "--methods", ""),
                   "--methods", "empty")
    one_line_error(run("compare", "tile_groups", "-i", "tiny", "--methods", "ls,ls"),
                   "--methods", "twice")
    one_line_error(run("compare", "tile_groups", "-i", "tiny", "--methods", "ls,,lp"),
                   "--methods", "empty name")
    one_line_error(run("compare", "tile_groups", "-i", "tiny", "--methods", "ls", "--json",
                       "--format", "latex"), "--json", "--format latex")


def test_constant_objective_and_endless_rounds():
    one_line_error(run("solve", "tile_groups", "-i", "tiny", "-m", "ls", "--objective",
                       "E^0·D^0"), "objective", "constant")
    one_line_error(run("solve", "tile_groups", "-i", "tiny", "-m", "sa", "-p",
                       "iterations=1e12"), "iterations", "1e+08")


def test_suites_need_a_name_and_distinct_methods(tmp_path):
    f = tmp_path / "s.yaml"
    f.write_text(yaml.safe_dump({"decision": "tile_groups", "instances": ["tiny"],
                                 "methods": ["ls"]}))
    one_line_error(run("bench", str(f), "--out", str(tmp_path / "o")), "name", "required")
    f.write_text(yaml.safe_dump({"name": "x", "decision": "tile_groups",
                                 "instances": ["tiny"], "methods": ["ls", "ls"]}))
    one_line_error(run("bench", str(f), "--out", str(tmp_path / "o")), "methods", "twice")
    assert not (tmp_path / "o").exists()


def _tiny_onnx() -> onnx.ModelProto:
    w = numpy_helper.from_array(np.zeros((4, 3, 3, 3), np.float32), "w")
    g = helper.make_graph([helper.make_node("Conv", ["x", "w"], ["y"], name="c")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                         [1, 3, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                          initializer=[w])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def test_onnx_versions_newer_than_onnx_knows_are_refused():
    assert load_onnx(_tiny_onnx()).layers  # the same model at a known version loads
    m = _tiny_onnx()
    m.opset_import[0].version = 99
    with pytest.raises(InputError, match="opset 99"):
        load_onnx(m)
    m = _tiny_onnx()
    m.ir_version = 999
    with pytest.raises(InputError, match="ir_version"):
        load_onnx(m)


def test_show_network_prints_published_figures_readably():
    def published(spec: str) -> str:
        res = run("show", "network", spec)
        assert res.exit_code == 0
        text = " ".join(res.output.split())  # the console may wrap the line
        return text[text.index("published:"):text.index("source:")]

    line = published("resnet50")
    assert "4.09 GMACs" in line and "{" not in line and "differs" not in line
    line = published("resnet50:image_size=7")
    assert "differs" in line and "26.4 MMACs" in line
