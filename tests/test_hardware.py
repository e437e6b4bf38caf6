"""Hardware schema, presets with the documents' numbers, validation messages."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from chipsched.errors import InputError, UnknownNameError
from chipsched.hardware import Hardware
from chipsched.instances.chips import chip_names, get_chip
from chipsched.schemas import CHIP_SCHEMA, NETWORK_SCHEMA

DOCS = Path(__file__).resolve().parents[1] / "docs" / "schemas"


def test_set_presets_have_the_documents_numbers():
    for name, n in (("edge-4x4", 16), ("cloud-12x12", 144)):
        hw = get_chip(name)
        u = hw.unit
        assert hw.n_units == n
        assert u.array.macs == 1024 and (u.array.pes, u.array.lanes, u.array.vector) == (16, 8, 8)
        assert u.buffer_bytes == 1 << 20 and u.frequency_ghz == 1.0
        assert u.energy.mac_pj == 0.018
        assert hw.noc.hop_energy_pj_per_bit == 0.7
        assert hw.dram.energy_pj_per_bit == 7.5
        # 0.5 GB/s per TOPS; a tile does 1024 MAC × 2 op × 1 GHz = 2.048 TOPS
        assert hw.peak_tops == pytest.approx(2.048 * n)
        assert hw.dram.bandwidth_gb_s == pytest.approx(0.5 * 2.048 * n)
        # ports on the left and right mesh edges
        assert {c for _, c in hw.dram.ports} == {0, hw.cols - 1}
    assert get_chip("cloud-12x12").dram.bandwidth_gb_s == pytest.approx(147.456)


def test_dram_hops_to_nearest_edge_port():
    hw = get_chip("edge-4x4")
    # +1 for the controller link; columns 1 and 2 are one hop from an edge column
    assert hw.dram_hops.tolist() == [[1, 2, 2, 1]] * 4
    hw = get_chip("tiled-3x7")
    assert hw.dram_hops[1].tolist() == [1, 2, 3, 4, 3, 2, 1]


def test_other_presets():
    c = get_chip("chiplet-4x4-n8-w16")
    assert c.kind() == "chiplet" and c.chiplet.npus == 8 and c.unit.array.size == 16
    assert c.n_units == 16 * 8
    assert c.noc.hop_energy_pj_per_bit > get_chip("edge-4x4").noc.hop_energy_pj_per_bit
    s = get_chip("soc-npu-gpu-cpu")
    assert [p.name for p in s.processors] == ["npu", "gpu", "cpu"] and s.kind() == "soc"
    assert s.interconnect.bandwidth_gb_s[0][1] > 0 and s.interconnect.latency_us[1][1] == 0
    n = get_chip("neuro-8x8-k1024")
    assert n.kind() == "neuromorphic" and n.core_capacity == 1024 and n.n_nodes == 64


@pytest.mark.parametrize("name", chip_names())
def test_presets_round_trip(name):
    hw = get_chip(name)
    assert Hardware.from_dict(hw.to_dict()) == hw
    assert Hardware.from_dict(json.loads(json.dumps(hw.to_dict()))) == hw


def test_unknown_chip_suggests():
    with pytest.raises(UnknownNameError, match="did you mean 'edge-4x4'"):
        get_chip("edge-4x5")


def _bad(mutate) -> str:
    d = copy.deepcopy(get_chip("edge-4x4").to_dict())
    mutate(d)
    with pytest.raises(InputError) as exc:
        Hardware.from_dict(d, source="chip.yaml")
    msg = str(exc.value)
    assert "\n" not in msg
    return msg


def test_validation_names_the_field():
    assert _bad(lambda d: d["mesh"].update(rows=-1)).startswith("chip.yaml.mesh.rows: ")
    assert "chip.yaml.mesh.rowz: unknown field; did you mean 'rows'" in _bad(
        lambda d: d["mesh"].update(rowz=d["mesh"].pop("rows")))
    assert _bad(lambda d: d["unit"]["array"].update(pes=0)).startswith(
        "chip.yaml.unit.array.pes:")
    assert _bad(lambda d: d["unit"]["array"].pop("lanes")).startswith(
        "chip.yaml.unit.array.lanes: is required")
    assert _bad(lambda d: d["noc"].update(link_bandwidth_gb_s=-5)).startswith(
        "chip.yaml.noc.link_bandwidth_gb_s:")
    assert _bad(lambda d: d["dram"].update(ports=[[9, 9]])).startswith("chip.yaml.dram.ports")
    assert _bad(lambda d: d["unit"].update(energy={"mac_pj": -1, "vector_op_pj": 0,
                                                   "buffer_pj_per_byte": 0})).startswith(
        "chip.yaml.unit.energy.mac_pj")
    assert "dram.bandwidth_gb_s_per_tops: needs a 'unit' section" in _bad(
        lambda d: d.pop("unit"))
    with pytest.raises(InputError, match="describes no compute"):
        Hardware.from_dict({"name": "empty", "mesh": {"rows": 2, "cols": 2}})


def test_soc_interconnect_validation():
    d = get_chip("soc-npu-gpu").to_dict()
    d["interconnect"]["bandwidth_gb_s"] = [[0, 1, 2]]
    with pytest.raises(InputError, match="interconnect.bandwidth_gb_s: must be a number or a 2×2"):
        Hardware.from_dict(d)


def test_published_schemas_match_the_code():
    """docs/schemas/*.json are copies of the schemas the loaders validate against."""
    from chipsched.instances.core_assignment.formats import JSON_SCHEMA as CORE_SCHEMA
    from chipsched.instances.op_placement.formats import SCHEMA as OP_PLACEMENT_SCHEMA

    for name, schema in (("chip", CHIP_SCHEMA), ("network", NETWORK_SCHEMA),
                         ("op_placement", OP_PLACEMENT_SCHEMA),
                         ("core_assignment", CORE_SCHEMA)):
        on_disk = json.loads((DOCS / f"{name}.schema.json").read_text())
        assert on_disk == json.loads(json.dumps(schema)), f"regenerate docs/schemas/{name}"


def test_errors_survive_pickling_across_processes():
    import pickle

    from chipsched.errors import InputError, UnknownNameError

    e = pickle.loads(pickle.dumps(InputError("chip.rows", "must be > 0", "set rows: 4")))
    assert str(e) == "chip.rows: must be > 0; set rows: 4" and e.field == "chip.rows"
    u = pickle.loads(pickle.dumps(UnknownNameError("network", "resnet5", ["resnet50"])))
    assert str(u) == str(UnknownNameError("network", "resnet5", ["resnet50"]))
    assert u.known == ["resnet50"]


def test_ideal_suffix_and_onchip_model_round_trip():
    """``NAME-ideal`` is the same chip with the ideal on-chip model; a chip file keeps
    its model, registers and port width; a chip without units refuses the suffix."""
    ideal = get_chip("edge-4x4-ideal")
    base = get_chip("edge-4x4")
    assert base.unit.onchip_model == "reuse" and ideal.unit.onchip_model == "ideal"
    assert ideal.unit.array == base.unit.array and ideal.rows == base.rows
    assert get_chip("chiplet-2x2-ideal").unit.onchip_model == "ideal"
    d = ideal.to_dict()
    d["unit"]["registers"]["psum_bits"] = 24
    d["unit"]["registers"]["psum_buffers"] = 2
    back = Hardware.from_dict(d)
    assert back.unit.onchip_model == "ideal" and back.unit.registers.psum_bits == 24
    assert back.unit.registers.psum_buffers == 2
    d["unit"]["registers"]["psum_buffers"] = 3
    with pytest.raises(InputError, match="psum_buffers"):
        Hardware.from_dict(d)
    assert back.unit.buffer_port_bytes_per_cycle == 128.0
    with pytest.raises(InputError, match="-ideal"):
        get_chip("neuro-8x8-ideal")
    bad = base.to_dict()
    bad["unit"]["onchip_model"] = "magic"
    with pytest.raises(InputError, match="onchip_model"):
        Hardware.from_dict(bad)
