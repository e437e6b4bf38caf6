"""Workload IR: derived sizes, validation, builder shapes, the file form."""

from __future__ import annotations

import random

import pytest
from hypothesis import given

from chipsched.errors import InputError
from chipsched.instances.networks import get_network
from chipsched.workload import Layer, OpKind, Workload, WorkloadBuilder, conv_out
from tests.conftest import random_dags


def test_macs_by_kind():
    conv = Layer("c", "conv", K=64, C=3, H=112, W=112, R=7, S=7, stride=2)
    assert conv.macs == 112 * 112 * 64 * 3 * 49
    dw = Layer("d", "depthwise", K=32, C=32, H=56, W=56, R=3, S=3, groups=32)
    assert dw.macs == 56 * 56 * 32 * 1 * 9
    fc = Layer("f", "fc", K=1000, C=2048)
    assert fc.macs == 2_048_000
    assert fc.dims == {"M": 1, "K": 2048, "N": 1000}
    # 12-head attention scores: T×dh per head times dh×T per head
    att = Layer("s", "matmul", K=12 * 128, C=12 * 64, H=128, groups=12)
    assert att.macs == 12 * 128 * 128 * 64
    assert att.dims == {"G": 12, "M": 128, "K": 64, "N": 128}
    assert Layer("p", "pool", K=8, C=8, H=4, W=4, R=2, S=2, ops=256).macs == 0
    assert Layer("p", "pool", K=8, C=8, H=4, W=4, R=2, S=2, ops=256).work == 256


def test_tensor_scalar_class_and_control_flow():
    s = Layer("loop", OpKind.SCALAR, ops=10, control_flow=True)
    assert not s.is_tensor and s.control_flow
    assert Layer("c", "conv").is_tensor
    with pytest.raises(InputError, match="control_flow"):
        Layer("c", "conv", control_flow=True)


@pytest.mark.parametrize("field,value", [("K", 0), ("H", -1), ("stride", 1.5), ("ops", -3)])
def test_layer_rejects_bad_fields(field, value):
    with pytest.raises(InputError, match=rf"layer 'x'\.{field}"):
        Layer("x", "conv", **{field: value})


def test_bad_kind_and_groups():
    with pytest.raises(InputError, match="unknown op kind 'convolution'"):
        Layer("x", "convolution")
    with pytest.raises(InputError, match="groups"):
        Layer("x", "conv", K=6, C=4, groups=4)


def test_precision_scales_bytes():
    w = get_network("tiny")
    w2 = w.with_precision(2)
    assert w2.summary()["weight_bytes"] == 2 * w.summary()["weight_bytes"]
    s, d, e = w.edges[0]
    assert w2.edge_bytes(s, d) == 2 * e == 2 * w.layers[s].out_elems


def test_builder_shapes_and_edges():
    b = WorkloadBuilder("t")
    x = b.input("img", (3, 224, 224))
    c = b.conv("c1", x, K=64, kernel=7, stride=2, pad=3)
    assert b.shape(c) == (64, 112, 112)
    p = b.pool("p1", c, kernel=3, stride=2, pad=1)
    assert b.shape(p) == (64, 56, 56)
    d = b.dwconv("dw", p, kernel=3)
    a = b.add("sum", p, d)
    g = b.pool("gp", a, global_=True)
    f = b.fc("fc", g, K=10)
    w = b.build()
    assert [ly.kind for ly in w.layers] == [OpKind.CONV, OpKind.POOL, OpKind.DEPTHWISE,
                                            OpKind.ELTWISE, OpKind.POOL, OpKind.FC]
    assert w.layers[0].in_elems == 3 * 224 * 224
    assert w.layers[w.index(a)].in_elems == 2 * 64 * 56 * 56
    assert w.preds[w.index(a)] == (w.index(p), w.index(d))
    assert w.layers[w.index(f)].weight_elems == 10 * 64 + 10
    assert w.sources == (0,) and w.sinks == (w.index(f),)


def test_conv_out_modes():
    assert conv_out(224, 7, 2, 3) == 112
    assert conv_out(299, 3, 2, "valid") == 149
    assert conv_out(35, 3, 2, "same") == 18
    assert conv_out(112, 3, 2, 0, ceil_mode=True) == 56  # torchvision GoogLeNet pool1
    assert conv_out(14, 2, 2, 0, ceil_mode=True) == 7


def test_matmul_checks_operand_size():
    b = WorkloadBuilder("t")
    q = b.input("q", (64, 10, 1))
    k = b.input("k", (64, 11, 1))
    with pytest.raises(InputError, match="expected"):
        b.matmul("s", q, k, N=10)


def test_round_trip_all_library_networks():
    for name in ("tiny", "resnet50", "googlenet", "bert-base:seq_len=16"):
        w = get_network(name)
        w2 = Workload.from_dict(w.to_dict())
        assert w2.layers == w.layers and w2.edges == w.edges
        assert w2.total_params == w.total_params and w2.total_macs == w.total_macs


def test_from_dict_sorts_and_fills_defaults():
    w = get_network("tiny")
    data = w.to_dict()
    random.Random(1).shuffle(data["layers"])
    for d in data["layers"]:
        if d["inputs"]:
            del d["in_elems"]  # derived from the producers
    w2 = Workload.from_dict(data)
    assert sorted(ly.name for ly in w2.layers) == sorted(ly.name for ly in w.layers)
    for ly in w2.layers:
        assert ly == w.layers[w.index(ly.name)]
    for s, d, _ in w2.edges:
        assert s < d


def test_from_dict_reports_cycle_and_unknown_input():
    data = {"name": "c", "layers": [
        {"name": "a", "kind": "conv", "in_elems": 1, "inputs": ["c"]},
        {"name": "b", "kind": "conv", "inputs": ["a"]},
        {"name": "c", "kind": "conv", "inputs": ["b"]},
    ]}
    with pytest.raises(InputError, match="cycle: .*a -> b -> c|cycle"):
        Workload.from_dict(data)
    data["layers"][0]["inputs"] = ["bb"]
    with pytest.raises(InputError, match="did you mean 'b'"):
        Workload.from_dict(data)


def test_from_dict_errors_name_the_field():
    with pytest.raises(InputError, match=r"layers\[x\]\.in_elems"):
        Workload.from_dict({"layers": [{"name": "x", "kind": "conv"}]})
    with pytest.raises(InputError, match=r"layers\[x\]\.Kk: unknown field"):
        Workload.from_dict({"layers": [{"name": "x", "kind": "conv", "Kk": 3, "in_elems": 1}]})
    with pytest.raises(InputError, match=r"network\.layers: missing or empty"):
        Workload.from_dict({"name": "n"})


@given(random_dags())
def test_random_dags_are_valid_and_round_trip(w):
    assert all(s < d for s, d, _ in w.edges)
    w2 = Workload.from_dict(w.to_dict())
    assert w2.layers == w.layers and w2.edges == w.edges


def test_backward_edge_rejected():
    a = Layer("a", "conv", in_elems=1)
    b = Layer("b", "conv", in_elems=1)
    with pytest.raises(InputError, match="goes backwards"):
        Workload("w", (a, b), ((1, 0, 1),))
