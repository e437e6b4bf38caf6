"""One objective shape for the four decisions: names, units, aliases, families, errors."""

from __future__ import annotations

import pytest

from chipsched.api import make_instance
from chipsched.errors import InputError
from chipsched.objective import Objective, parse_objective
from chipsched.problems.core_assignment import OBJECTIVES as CORE
from chipsched.problems.op_placement import objectives_for
from chipsched.problems.region_split import OBJECTIVES as REGION
from chipsched.problems.tile_groups import OBJECTIVES as TILE


def test_tile_groups_energy_delay_products():
    assert TILE.parse("latency")(5.0, 2.0) == 2.0
    assert TILE.parse("energy")(5.0, 2.0) == 5.0
    assert TILE.parse("E^2·D")(3.0, 2.0) == 18.0
    assert TILE.parse("E^2·D") is TILE.get("e2d")  # a family member that is named
    assert TILE.parse("ED2")(3.0, 2.0) == 12.0
    o = TILE.parse("E^3D^2")
    assert o.name == "e3d2" and o.unit == "J³·s²" and o(2.0, 3.0) == 72.0
    assert (o.coefficient("energy_j"), o.coefficient("delay_s")) == (3.0, 2.0)
    assert TILE.parse("edp").unit == "J·s" and TILE.parse("e2d").unit == "J²·s"
    assert TILE.parse(None).name == "e2d"
    with pytest.raises(InputError, match="objective: unknown objective 'speed' for "
                                         "tile_groups; use one of latency, energy"):
        TILE.parse("speed")


def test_every_decision_names_its_objective_with_a_unit():
    assert [(o.name, o.unit) for o in REGION.named] == [("cost", "s"), ("period", "s"),
                                                        ("latency", "s"),
                                                        ("sync_latency", "s")]
    assert [(o.name, o.unit) for o in CORE.named] == [("traffic", "w·hop"), ("cut", "w"),
                                                      ("energy", "J"),
                                                      ("multicast", "packet·hop")]
    assert objectives_for("s").parse("makespan").unit == "s"
    for decision, spec, name, unit in (
            ("region_split", "resnet50", "period", "s"),
            ("tile_groups", "tiny", "e2d", "J²·s"),
            ("op_placement", "topcuoglu2002", "makespan", "u.t."),
            ("core_assignment", "lenet5-neurons", "traffic", "w·hop")):
        inst = make_instance(decision, spec)
        assert isinstance(inst.objective, Objective)
        assert (inst.objective.name, inst.objective.unit) == (name, unit), decision
    inst = make_instance("core_assignment", "lenet5-neurons", objective="cut")
    assert inst.objective.unit == "w"


def test_one_parser():
    assert parse_objective("period", REGION) is REGION.get("period")
    assert parse_objective(REGION.get("cost"), REGION) is REGION.get("cost")
    with pytest.raises(InputError, match="for core_assignment; use one of traffic, cut, "
                                         "energy"):
        parse_objective("latency", CORE)
    sums = Objective("w", "s", terms=(("a", 2.0), ("b", 0.0)), form="sum")
    assert sums(a=1.0, b=float("inf")) == 2.0  # a 0 weight does not turn inf into NaN
