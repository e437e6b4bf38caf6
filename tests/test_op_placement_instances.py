"""op_placement instances: seed-003 expansion, the function library, file formats, CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from chipsched.cli import app
from chipsched.cost import control_roundtrip_s, processor_energy_j, processor_time_s
from chipsched.errors import InputError, UnknownNameError
from chipsched.instances.chips import get_chip
from chipsched.instances.networks import get_network
from chipsched.instances.op_placement import (
    load_instance,
    read_heft_csv,
    read_json,
    read_stg,
    read_tgc,
    schema_json,
    write_heft_csv,
    write_json,
    write_tgc,
)
from chipsched.problems.op_placement import (
    FunctionLibrary,
    evaluate,
    expand_scalar_ops,
    from_workload,
    tile_blocks,
)
from chipsched.workload import OpKind

SOC = get_chip("soc-npu-gpu-cpu")
runner = CliRunner()

STG = """\
# a tiny STG file
         4
          0          0          0
          1          3          1          0
          2          2          1          1
          3          4          1          1
          4          1          2          2          3
          5          0          1          4
# Standard Task Graph Set Project
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


# -- seed 003 expansion -------------------------------------------------------------------

def test_expansion_adds_shape_loop_and_parameter_ops():
    w = get_network("tiny-chain")
    # conv1 reads 3·32·32 = 3072, writes 16·32·32 = 16384, has 16·3·9 = 432 weights
    conv1 = w.layers[0]
    assert tile_blocks(conv1, 1, 1, 500) == math.ceil((3072 + 16384 + 432) / 500) == 40
    # fc: 64 in + 10 out + 650 weights = 724 bytes: 2 blocks of 500, 1 block of 1000
    assert tile_blocks(w.layers[-1], 1, 1, 500) == 2 and tile_blocks(w.layers[-1], 1, 1) == 1
    x = expand_scalar_ops(w, block_bytes=500)
    assert len(x) == 4 * len(w)  # every layer is tiled: shape, tile, param, layer
    assert [ly.name for ly in x.layers[:4]] == ["conv1.shape", "conv1.tile", "conv1.param",
                                                "conv1"]
    tile = x.layers[1]
    assert tile.kind is OpKind.SCALAR and tile.control_flow and tile.ops == 4 * 40
    assert x.layers[2].ops == 8 + 4 * 1 and not x.layers[2].control_flow
    assert x.layers[0].ops == 16
    # edges: 4 data + 4 shape→shape + per layer shape→tile, shape→param, tile→L, param→L
    assert len(x.edges) == 4 + 4 + 4 * 5
    names = {(x.layers[s].name, x.layers[d].name) for s, d, _ in x.edges}
    assert ("conv1.shape", "conv2.shape") in names and ("conv1.tile", "conv1") in names
    assert ("conv1", "conv2") in names
    # constant-propagated shapes: no shape ops, the others lose their inputs
    s = expand_scalar_ops(w, block_bytes=500, static_shapes=True)
    assert len(s) == 3 * len(w) and len(s.edges) == 4 + 2 * 5
    # a big block: nothing to tile, no loop-control ops
    b = expand_scalar_ops(w, block_bytes=1 << 30)
    assert len(b) == 3 * len(w) and not any(ly.control_flow for ly in b.layers)


def test_instance_times_are_the_cost_model():
    w = get_network("tiny")
    inst = from_workload(w, SOC, batch=2)
    x = expand_scalar_ops(w, batch=2)
    assert inst.ops == tuple(ly.name for ly in x.layers)
    for i, ly in enumerate(x.layers):
        for p, proc in enumerate(SOC.processors):
            rt = control_roundtrip_s(SOC, p)
            assert inst.time[i, p] == processor_time_s(ly, proc, 2, control_roundtrip_s=rt)
            assert inst.energy[i, p] == processor_energy_j(ly, proc, 2)
            assert inst.roundtrip[i, p] == (rt if ly.control_flow and not proc.control_flow
                                            else 0.0)
    k = list(map(tuple, inst.edges)).index((inst.op_index("conv1"), inst.op_index("conv2")))
    assert inst.edge_bytes[k] == 2 * 16 * 16 * 16  # batch 2 × conv1's output, int8
    assert inst.host == 2 and inst.native_control_flow == (False, False, True)


def test_chip_without_a_host_runs_loop_control_on_the_accelerators():
    inst = load_instance("resnet50", get_chip("soc-npu-gpu"))
    assert not inst.control_flow.any() and np.isfinite(inst.time).all()
    with pytest.raises(InputError, match="has no processors for op_placement"):
        load_instance("tiny", get_chip("edge-4x4"))


def test_library_from_the_cost_model_reproduces_it():
    w = get_network("tiny")
    lib = FunctionLibrary.from_hardware(SOC)
    a, b = from_workload(w, SOC), from_workload(w, SOC, library=lib)
    np.testing.assert_allclose(b.time, a.time, rtol=1e-12)
    np.testing.assert_allclose(b.energy, a.energy, rtol=1e-12)
    rows = lib.table([("conv", "tensor"), ("scalar", "scalar")], "int8", [3, 7], host="cpu")
    for k in (3, 7):
        conv_npu = next(r for r in rows if r["kind"] == "conv" and r["processor"] == "npu"
                        and r["size_bucket"] == f"1e{k}")
        w = 10 ** (k + 0.5)
        npu, cpu = 20e-6 + w / 2000e9, 1e-6 + w / 50e9
        assert conv_npu["cost_s"] == pytest.approx(npu)
        # relative gain (ref − x) / max(ref, x): the launch overhead loses small convs
        assert conv_npu["speed_gain"] == pytest.approx((cpu - npu) / max(cpu, npu))
        assert (conv_npu["speed_gain"] < 0) == (k == 3)
        assert conv_npu["complexity_gain"] == pytest.approx((10 - 0.5) / 10)
    sc_cpu = next(r for r in rows if r["kind"] == "scalar" and r["processor"] == "cpu")
    assert sc_cpu["profit"] == 0.0


def test_library_from_measurements(tmp_path):
    csv = _write(tmp_path, "lib.csv", "kind,dtype,size_bucket,processor,launch_us,gops,"
                 "pj_per_op\n"
                 "*,*,*,npu,10,1000,1\n*,*,*,gpu,5,100,2\n*,*,*,cpu,1,10,4\n"
                 "conv,int8,1e5,npu,10,4000,1\nscalar,*,*,npu,10,0,1\n")
    lib = FunctionLibrary.from_csv(csv)
    inst = from_workload(get_network("tiny"), SOC, library=lib)
    i = inst.op_index("conv1")  # 16·16·16·27 = 110,592 MACs: bucket 1e5
    assert inst.time[i, 0] == pytest.approx(10e-6 + 110592 / 4000e9)
    assert inst.time[i, 2] == pytest.approx(1e-6 + 110592 / 10e9)
    j = inst.op_index("conv2")  # 8·8·32·144 = 294,912 MACs: also 1e5
    assert inst.time[j, 0] == pytest.approx(10e-6 + 294912 / 4000e9)
    s = inst.op_index("conv1.param")
    assert math.isinf(inst.time[s, 0]) and inst.time[s, 2] == pytest.approx(1e-6 + 12 / 10e9)
    back = FunctionLibrary.from_csv(lib.to_csv(tmp_path / "again.csv"))
    assert back.entries == lib.entries
    part = _write(tmp_path, "part.csv", "kind,dtype,size_bucket,processor,launch_us,gops,"
                  "pj_per_op\n*,*,*,npu,10,1000,1\n*,*,*,gpu,5,100,2\n")
    with pytest.raises(InputError, match="processor 'cpu' missing from the cost table"):
        load_instance("tiny", SOC, library=str(part))
    bad = _write(tmp_path, "bad.csv", "kind,dtype,size_bucket,processor,launch_us,gops,"
                 "pj_per_op\n*,*,*,npu,ten,1000,1\n")
    with pytest.raises(InputError, match=r"bad.csv:2.*must be numbers"):
        FunctionLibrary.from_csv(bad)


# -- STG, TGC, HEFT CSV, JSON ---------------------------------------------------------------

def test_read_stg(tmp_path):
    inst = read_stg(_write(tmp_path, "t.stg", STG), processors=2)
    assert inst.ops == ("T1", "T2", "T3", "T4") and inst.processors == ("p0", "p1")
    assert list(inst.time[:, 0]) == [3, 2, 4, 1] and inst.time_unit == "u.t."
    assert sorted(map(tuple, inst.edges)) == [(0, 1), (0, 2), (1, 3), (2, 3)]
    assert not inst.transfer.any()
    c = read_stg(tmp_path / "t.stg", processors=2, ccr=0.5)
    k = list(map(tuple, c.edges)).index((0, 2))
    assert c.transfer[k, 0, 1] == 1.5 and c.transfer[k, 0, 0] == 0  # 0.5 × T1's time 3
    sub = read_stg(tmp_path / "t.stg", processors=1, max_tasks=2)
    assert sub.ops == ("T1", "T2") and len(sub.edges) == 1


@pytest.mark.parametrize("text, match", [
    (STG.replace("          2          2          1          1",
                 "          2          x          1          1"), r"t.stg:5: expected integers"),
    (STG.replace("          4          1          2          2          3",
                 "          4          1          3          2          3"),
     r"t.stg:7: task 4 announces 3 predecessors but lists 2"),
    (STG.replace("          3          4          1          1",
                 "          3         -4          1          1"), r"t.stg:6: task 3 has negative"),
    ("\n".join(STG.splitlines()[:5]), r"t.stg:5: the file ends after 3 of 6 task lines"),
    (STG.replace("          2          2          1          1",
                 "          2          2          1          4"),
     r"cycle: (T2 -> T4 -> T2|T4 -> T2 -> T4)"),
    (STG.replace("          3          4          1          1",
                 "          7          4          1          1"),
     r"t.stg:6: task id 7, expected 3"),
])
def test_malformed_stg(tmp_path, text, match):
    p = _write(tmp_path, "t.stg", text)
    with pytest.raises(InputError, match=match) as exc:
        read_stg(p, processors=2)
    assert "\n" not in str(exc.value)


def test_stg_needs_processors(tmp_path):
    with pytest.raises(InputError, match="--processors N"):
        load_instance(str(_write(tmp_path, "t.stg", STG)), SOC)


def test_read_and_write_tgc(tmp_path):
    text = "# successors with costs\n3\n1 4 2 2 5 3 1\n2 3 1 3 2\n3 1 0\n"
    inst = read_tgc(_write(tmp_path, "g.tgc", text), processors=3)
    assert inst.ops == ("T1", "T2", "T3") and list(inst.time[:, 2]) == [4, 3, 1]
    costs = {(inst.ops[a], inst.ops[b]): inst.transfer[k, 0, 1]
             for k, (a, b) in enumerate(inst.edges)}
    assert costs == {("T1", "T2"): 5, ("T1", "T3"): 1, ("T2", "T3"): 2}
    again = read_tgc(write_tgc(inst, tmp_path / "again.tgc"), processors=3)
    np.testing.assert_array_equal(again.transfer, inst.transfer)
    bad = _write(tmp_path, "bad.tgc", "2\n1 4 1 2 5\n2 3 1 1 1\n")
    with pytest.raises(InputError, match="cycle: T1 -> T2 -> T1|cycle: T2 -> T1 -> T2"):
        read_tgc(bad, processors=2)
    bad = _write(tmp_path, "bad2.tgc", "2\n1 4 2 2 5\n2 3 0\n")
    with pytest.raises(InputError, match=r"bad2.tgc:2: task 1 announces 2 successors"):
        read_tgc(bad, processors=2)


def test_heft_csv_round_trip_and_errors(tmp_path):
    inst = load_instance("topcuoglu2002", SOC)
    comp, conn, bw = write_heft_csv(inst, tmp_path / "paper")
    back = load_instance(str(comp), SOC)  # siblings found by name
    np.testing.assert_array_equal(back.time, inst.time)
    np.testing.assert_array_equal(back.transfer, inst.transfer)
    also = load_instance(f"{comp},{conn}", SOC)  # no bandwidth file: cost = data
    np.testing.assert_array_equal(also.transfer, inst.transfer)
    text = comp.read_text().splitlines()
    text[3] = text[3].replace("11", "-11", 1)
    bad = _write(tmp_path, "bad_task_exe_time.csv", "\n".join(text) + "\n")
    _write(tmp_path, "bad_task_connectivity.csv", conn.read_text())
    with pytest.raises(InputError, match=r"bad_task_exe_time.csv:4: cost of n3 on P1"):
        load_instance(str(bad), SOC)
    # startup latency per source processor and bandwidths
    bwf = _write(tmp_path, "bw.csv", "P,P1,P2,P3\nP1,0,2,2\nP2,2,0,4\nP3,2,4,0\n"
                 "Startup,1,0,3\n")
    lat = read_heft_csv(comp, conn, bwf)
    k = list(map(tuple, lat.edges)).index((0, 1))  # n1 -> n2, 18 units of data
    assert lat.transfer[k, 0, 1] == 1 + 18 / 2 and lat.transfer[k, 2, 1] == 3 + 18 / 4


def test_json_round_trip_and_schema(tmp_path):
    inst = load_instance("tiny", SOC)
    p = write_json(inst, tmp_path / "tiny.json")
    back = load_instance(str(p), SOC)
    assert back.ops == inst.ops and back.processors == inst.processors
    np.testing.assert_allclose(back.time, inst.time, rtol=1e-15)
    np.testing.assert_allclose(back.transfer, inst.transfer, rtol=1e-15)
    np.testing.assert_array_equal(back.control_flow, inst.control_flow)
    assert back.host == inst.host and back.cores == inst.cores
    docs = Path(__file__).resolve().parents[1] / "docs" / "schemas" / \
        "op_placement.schema.json"
    assert docs.read_text() == schema_json()


def _json_instance(**changes):
    d = {"name": "j", "processors": [{"name": "a"}, {"name": "b", "cores": 2}],
         "latency": 1, "bandwidth": [[None, 4], [2, None]],
         "ops": [{"name": "x", "time": {"a": 1, "b": 2}},
                 {"name": "y", "time": {"a": 3, "b": None}}],
         "edges": [{"src": "x", "dst": "y", "bytes": 8}]}
    d.update(changes)
    return d


@pytest.mark.parametrize("changes, match", [
    ({"ops": [{"name": "x", "time": {"a": 1}}], "edges": []},
     r"op 'x'.time: processor 'b' missing from the cost table"),
    ({"ops": [{"name": "x", "time": {"a": -1, "b": 2}}], "edges": []}, r"op 'x' on 'a'.*negative"),
    ({"ops": [{"name": "x", "time": {"a": None, "b": None}}], "edges": []},
     r"op 'x'.*no processor can run it"),
    ({"edges": [{"src": "x", "dst": "y"}, {"src": "y", "dst": "x"}]}, r"cycle"),
    ({"edges": [{"src": "x", "dst": "z"}]}, r"unknown op 'z'"),
    ({"processors": [{"name": "a", "cores": 0}, {"name": "b"}]}, r"processors.0.cores"),
    ({"opz": []}, r"unknown field"),
])
def test_bad_json(tmp_path, changes, match):
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(_json_instance(**changes)))
    with pytest.raises(InputError, match=match) as exc:
        read_json(p)
    assert "\n" not in str(exc.value)


def test_json_by_hand(tmp_path):
    p = tmp_path / "ok.json"
    p.write_text(json.dumps(_json_instance(objective="energy")))
    inst = read_json(p)
    assert inst.cores == (1, 2) and math.isinf(inst.time[1, 1])
    assert inst.transfer[0, 0, 1] == 1 + 8 / 4 and inst.transfer[0, 1, 0] == 1 + 8 / 2
    assert inst.objective.name == "energy"
    v, _ = evaluate(inst, inst.solution([1, 0], [1, 0], [0, 7]))  # 2 + 1 + 8/2
    assert v == 0.0  # no energies given


def test_make_instance_resolution_and_errors():
    assert load_instance("random:n=7,p=2,seed=3", SOC).n_ops == 7
    assert load_instance("random:n=7,seed=3", SOC, processors=4).n_processors == 4
    assert load_instance("topcuoglu2002", SOC, objective="energy").objective.name == "energy"
    with pytest.raises(InputError, match="--processors.*does not apply to a network"):
        load_instance("tiny", SOC, processors=3)
    with pytest.raises(InputError, match="'batch'.*applies to networks"):
        load_instance("topcuoglu2002", SOC, batch=2)
    with pytest.raises(UnknownNameError, match="did you mean 'resnet50'"):
        load_instance("resnet5", SOC)
    with pytest.raises(InputError, match="a single CSV file must be a HEFT"):
        load_instance("lib.csv", SOC)


# -- CLI ----------------------------------------------------------------------------------

def test_cli_solve_prints_assignment_and_writes_gantt(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    stg = _write(tmp_path, "t.stg", STG)
    res = runner.invoke(app, ["solve", "op_placement", "--instance", str(stg), "--processors",
                              "2", "--method", "heft"])
    assert res.exit_code == 0, res.output
    assert "assignment" in res.stdout and "T1" in res.stdout
    assert not (tmp_path / "out").exists()  # no picture unless asked
    res = runner.invoke(app, ["solve", "op_placement", "--instance", str(stg), "--processors",
                              "2", "--method", "heft", "--plot", "gantt.png"])
    assert res.exit_code == 0, res.output
    assert "Gantt chart: gantt.png" in res.stdout
    assert (tmp_path / "gantt.png").stat().st_size > 1000
    res = runner.invoke(app, ["solve", "op_placement", "-i", "tiny", "-m", "seed003", "--json"])
    d = json.loads(res.stdout)
    assert d["status"] == "feasible" and d["metrics"]["best_single_processor"] in (
        "npu", "gpu", "cpu")
    assert set(d["solution"]["assignment"]) >= {"conv1", "conv1.param", "fc"}


def test_cli_compare_and_list():
    res = runner.invoke(app, ["compare", "op_placement", "-i", "topcuoglu2002", "--methods",
                              "heft,single,cpsat", "--json"])
    d = json.loads(res.stdout)
    objs = {r["method"]: r["objective"] for r in d["results"]}
    assert objs["heft"] == 80 and objs["single"] == 127 and objs["cpsat"] <= 80
    listed = json.loads(runner.invoke(app, ["list", "--json"]).stdout)
    assert {"cpsat", "milp", "bruteforce", "seed003", "by-class", "heft", "single"} <= set(
        listed["decisions"]["op_placement"]["methods"])


@pytest.mark.parametrize("args, fragment", [
    (["-i", "{stg}", "-m", "heft"], "--processors N"),
    (["-i", "tiny", "-m", "heft", "--processors", "2"], "does not apply to a network"),
    (["-i", "{bad}", "--processors", "2", "-m", "heft"], "bad.stg:3"),
    (["-i", "topcuoglu2002", "-m", "heft", "--objective", "edp"], "unknown objective"),
    (["-i", "{cyc}", "--processors", "2", "-m", "heft"], "cycle: T"),
    (["-i", "{js}", "-m", "heft"], "processor 'b' missing from the cost table"),
    (["-i", "{csv}", "-m", "heft"], "bad_task_exe_time.csv:2: cost of T0 on P1 'x'"),
])
def test_cli_bad_input_exit_2(tmp_path, args, fragment):
    stg = _write(tmp_path, "t.stg", STG)
    bad = _write(tmp_path, "bad.stg", STG.replace("0          0          0",
                                                  "0          0          z"))
    cyc = _write(tmp_path, "c.tgc", "2\n1 4 1 2 5\n2 3 1 1 1\n")
    js = _write(tmp_path, "m.json", json.dumps(_json_instance(
        ops=[{"name": "x", "time": {"a": 1}}], edges=[])))
    csv = _write(tmp_path, "bad_task_exe_time.csv", "TP,P1\nT0,x\n")
    _write(tmp_path, "bad_task_connectivity.csv", "T,T0\nT0,0\n")
    args = [a.format(stg=stg, bad=bad, cyc=cyc, js=js, csv=csv) for a in args]
    res = runner.invoke(app, ["solve", "op_placement", *args])
    assert res.exit_code == 2, res.output
    err = res.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err and fragment in err, err
