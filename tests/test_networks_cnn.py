"""The classic CNNs of instances/networks/cnn.py against their published figures.

Expected totals are the published ones (torchvision weight metadata, papers), never
numbers computed by our own code; they are compared with a relative tolerance of 3 %.
"""

from __future__ import annotations

from functools import cache

import pytest

from chipsched.instances.networks import cnn
from chipsched.workload import OpKind, Workload, conv_out

REL = 0.03

#: Published totals per 224×224 image: (MACs, parameters, where published).
PUBLISHED = {
    # torchvision ResNet50_Weights.IMAGENET1K_V1: "_ops": 4.089, "num_params": 25557032
    "resnet50": (4.089e9, 25_557_032, "torchvision ResNet50_Weights (v1.5)"),
    # torchvision VGG16_Weights.IMAGENET1K_V1: "_ops": 15.47, "num_params": 138357544
    # (Simonyan & Zisserman 2015, Table 2: 138 M parameters)
    "vgg16": (15.47e9, 138_357_544, "torchvision VGG16_Weights"),
    # torchvision MobileNet_V2_Weights.IMAGENET1K_V1: "_ops": 0.301, "num_params": 3504872
    # (Sandler et al. 2018: 300 M multiply-adds, 3.4 M parameters)
    "mobilenet_v2": (0.301e9, 3_504_872, "torchvision MobileNet_V2_Weights"),
    # torchvision GoogLeNet_Weights.IMAGENET1K_V1: "_ops": 1.498, "num_params": 6624904;
    # torchvision's 3x3 kernel in the "5x5" branch (pytorch/vision#906), no aux heads
    "googlenet": (1.498e9, 6_624_904, "torchvision GoogLeNet_Weights"),
}

BUILDERS = {
    "resnet50": cnn.resnet50,
    "vgg16": cnn.vgg16,
    "mobilenet_v2": cnn.mobilenet_v2,
    "googlenet": cnn.googlenet,
}


@cache
def net(name: str) -> Workload:
    return BUILDERS[name]()


def layer(w: Workload, name: str):
    return w.layers[w.index(name)]


def count(w: Workload, kind: OpKind) -> int:
    return sum(ly.kind is kind for ly in w.layers)


def bn_channels(w: Workload) -> int:
    """Output channels of all convs: one BN parameter each is lost by folding."""
    return sum(ly.K for ly in w.layers if ly.kind in (OpKind.CONV, OpKind.DEPTHWISE))


# -- totals against the published figures ---------------------------------------------------


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_total_macs_match_published(name):
    macs = net(name).total_macs
    assert macs == pytest.approx(PUBLISHED[name][0], rel=REL), PUBLISHED[name][2]


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_total_params_match_published(name):
    params = net(name).total_params
    assert params == pytest.approx(PUBLISHED[name][1], rel=REL), PUBLISHED[name][2]


@pytest.mark.parametrize("name", ["resnet50", "mobilenet_v2", "googlenet"])
def test_params_plus_bn_gamma_equal_torchvision_exactly(name):
    # torchvision counts BN's γ and β per conv channel; folding BN leaves one bias per
    # channel (counted by us), so adding one parameter per channel must give its count.
    w = net(name)
    assert w.total_params + bn_channels(w) == PUBLISHED[name][1]


def test_vgg16_params_equal_torchvision_exactly():
    assert net("vgg16").total_params == PUBLISHED["vgg16"][1]


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_meta_cites_source_and_published_figures(name):
    meta = net(name).meta
    assert meta["source"]
    assert meta["published"]["macs"] == pytest.approx(PUBLISHED[name][0], rel=1e-3)
    assert meta["published"]["params"] == PUBLISHED[name][1]


# -- structure common to all ---------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_one_source_one_sink_classifier_last(name):
    w = net(name)
    assert len(w.sources) == 1
    assert w.layers[w.sources[0]].name == ("conv1_1" if name == "vgg16" else "conv1")
    assert w.sinks == (len(w) - 1,)
    last = w.layers[-1]
    assert last.kind is OpKind.FC and last.out_elems == 1000
    assert not w.is_chain() or name == "vgg16"


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_edges_carry_the_producer_tensor_and_shapes_chain(name):
    w = net(name)
    for s, d, e in w.edges:
        src, dst = w.layers[s], w.layers[d]
        assert e == src.out_elems
        if dst.kind in (OpKind.CONV, OpKind.DEPTHWISE, OpKind.POOL):
            assert dst.C == src.K, (src.name, dst.name)


@pytest.mark.parametrize("name", ["resnet50", "mobilenet_v2"])
def test_adds_sum_two_equal_tensors(name):
    w = net(name)
    for i, ly in enumerate(w.layers):
        if ly.kind is OpKind.ELTWISE:
            preds = [w.layers[p] for p in w.preds[i]]
            assert len(preds) == 2
            assert {(p.K, p.H, p.W) for p in preds} == {(ly.K, ly.H, ly.W)}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_file_form_round_trip(name):
    w = net(name)
    back = Workload.from_dict(w.to_dict())
    assert back == w
    assert (back.total_macs, back.total_params) == (w.total_macs, w.total_params)


def test_precision_is_passed_through():
    assert cnn.resnet50(precision_bytes=2).precision_bytes == 2
    assert cnn.vgg16(precision_bytes=2).summary()["weight_bytes"] == 2 * PUBLISHED["vgg16"][1]


# -- ResNet-50 --------------------------------------------------------------------------------


def test_resnet50_structure():
    w = net("resnet50")
    assert count(w, OpKind.CONV) == 53
    assert count(w, OpKind.FC) == 1
    assert count(w, OpKind.ELTWISE) == 16
    assert count(w, OpKind.POOL) == 2
    proj = [ly.name for ly in w.layers if ly.name.endswith("_branch1")]
    assert proj == ["res2a_branch1", "res3a_branch1", "res4a_branch1", "res5a_branch1"]
    assert [ly.name for ly in w.layers[:7]] == [
        "conv1", "pool1", "res2a_branch2a", "res2a_branch2b", "res2a_branch2c",
        "res2a_branch1", "res2a_add"]
    assert layer(w, "res4f_add").K == 1024


def test_resnet50_layer_shapes():
    w = net("resnet50")
    c1 = layer(w, "conv1")
    assert (c1.K, c1.C, c1.H, c1.W, c1.R, c1.stride) == (64, 3, 112, 112, 7, 2)
    assert (layer(w, "pool1").H, layer(w, "pool1").K) == (56, 64)
    r = layer(w, "res5c_branch2b")
    assert (r.K, r.C, r.H, r.W, r.R, r.S) == (512, 512, 7, 7, 3, 3)
    # v1.5: the stride sits on the 3x3 conv of a downsampling block
    assert layer(w, "res3a_branch2a").stride == 1 and layer(w, "res3a_branch2a").H == 56
    assert layer(w, "res3a_branch2b").stride == 2 and layer(w, "res3a_branch2b").H == 28
    assert layer(w, "res3a_branch1").stride == 2
    assert layer(w, "res2a_branch1").stride == 1
    assert layer(w, "res5c_branch2c").K == 2048
    fc = layer(w, "fc")
    assert (fc.C, fc.K, fc.weight_elems) == (2048, 1000, 2048 * 1000 + 1000)


def test_resnet50_other_image_size():
    w = cnn.resnet50(image_size=256)
    assert layer(w, "res5c_branch2b").H == 8
    assert layer(w, "pool5").R == 8 and layer(w, "pool5").H == 1
    assert w.total_params == net("resnet50").total_params


# -- VGG-16 -----------------------------------------------------------------------------------


def test_vgg16_structure():
    w = net("vgg16")
    assert count(w, OpKind.CONV) == 13
    assert count(w, OpKind.FC) == 3
    assert count(w, OpKind.POOL) == 5
    assert w.is_chain()
    for ly in w.layers:
        if ly.kind is OpKind.CONV:
            assert (ly.R, ly.S, ly.stride) == (3, 3, 1)
            assert ly.weight_elems == ly.K * ly.C * 9 + ly.K  # with bias
    assert (layer(w, "conv5_3").K, layer(w, "conv5_3").H) == (512, 14)
    fc6 = layer(w, "fc6")
    assert (fc6.C, fc6.K, fc6.H) == (512 * 7 * 7, 4096, 1)
    assert (layer(w, "fc7").C, layer(w, "fc8").K) == (4096, 1000)


# -- MobileNet-v2 -----------------------------------------------------------------------------


def test_mobilenet_v2_structure():
    w = net("mobilenet_v2")
    assert count(w, OpKind.DEPTHWISE) == 17
    assert count(w, OpKind.CONV) == 1 + 16 + 17 + 1  # stem, expansions, projections, last
    assert count(w, OpKind.ELTWISE) == 10
    for ly in w.layers:
        if ly.kind is OpKind.DEPTHWISE:
            assert ly.groups == ly.C == ly.K and (ly.R, ly.S) == (3, 3)
    assert "block1_expand" not in {ly.name for ly in w.layers}  # t = 1
    e = layer(w, "block2_expand")
    assert (e.C, e.K, e.H) == (16, 96, 112)
    d = layer(w, "block2_dw")
    assert (d.K, d.stride, d.H) == (96, 2, 56)
    p = layer(w, "block17_project")
    assert (p.C, p.K, p.H, p.W) == (960, 320, 7, 7)
    last = layer(w, "conv_last")
    assert (last.C, last.K, last.H) == (320, 1280, 7)
    assert layer(w, "fc").C == 1280


# -- GoogLeNet --------------------------------------------------------------------------------


def test_googlenet_structure():
    w = net("googlenet")
    assert count(w, OpKind.CONV) == 3 + 9 * 6
    assert count(w, OpKind.CONCAT) == 9
    assert count(w, OpKind.FC) == 1
    assert count(w, OpKind.POOL) == 5 + 9
    out = {m: layer(w, f"inception{m}_concat").K for m in
           ("3a", "3b", "4a", "4b", "4c", "4d", "4e", "5a", "5b")}
    assert out == {"3a": 256, "3b": 480, "4a": 512, "4b": 512, "4c": 512, "4d": 528,
                   "4e": 832, "5a": 832, "5b": 1024}
    for i, ly in enumerate(w.layers):
        if ly.kind is OpKind.CONCAT:
            assert ly.K == sum(w.layers[p].K for p in w.preds[i])
    assert [layer(w, p).H for p in ("pool1", "pool2", "pool3", "pool4")] == [56, 28, 14, 7]
    assert (layer(w, "inception4e_branch4_pool").H, layer(w, "pool5").K) == (14, 1024)
    b3 = layer(w, "inception3a_branch3")
    assert (b3.C, b3.K, b3.R, b3.S, b3.H) == (16, 32, 3, 3, 28)  # torchvision's 3x3


def test_googlenet_paper_variant_has_5x5():
    w = cnn.googlenet(branch3_kernel=5)
    assert {layer(w, f"inception{m}_branch3").R for m in ("3a", "4e", "5b")} == {5}
    # Szegedy et al. 2015, Table 1: the "params" column sums to about 6.8 M and the
    # "ops" column to 1586 M (118+360+128+304+73+88+100+119+170+54+71+1).
    assert w.total_params == pytest.approx(6.8e6, rel=REL)
    assert w.total_macs == pytest.approx(1.586e9, rel=REL)
    with pytest.raises(ValueError):
        cnn.googlenet(branch3_kernel=7)


@pytest.mark.parametrize(("size", "kernel", "stride", "pad", "expected"), [
    (112, 3, 2, 0, 56),  # GoogLeNet pool1 (floor would give 55)
    (14, 2, 2, 0, 7),
    (28, 3, 1, 1, 28),
    (114, 3, 2, 0, 57),
    (5, 2, 2, 1, 3),  # the last window would start in the right padding: dropped
])
def test_ceil_mode_pool_extent(size, kernel, stride, pad, expected):
    assert conv_out(size, kernel, stride, pad, ceil_mode=True) == expected
