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


# -- ResNet-50 v1 (the paper's original; SET's resnet.cpp) --------------------------------
#
# Hand derivation, independent of the builder. A bottleneck of width w on an h×h output
# plane has convs 1×1 C_in→w, 3×3 w→w, 1×1 w→4w (+ a 1×1 C_in→4w projection in the
# first block of a stage). In every stage h·w = 56·64 = 28·128 = 14·256 = 7·512 = 3584.
#
#   MACs   non-first block (C_in = 4w):        h²·(4w² + 9w² + 4w²)        = 17·3584²
#          res2a (C_in = w = 64, stride 1):    h²·(w² + 9w² + 4w² + 4w²)   = 18·3584²
#          res3a-res5a in v1 (C_in = 2w, every conv on the output plane h):
#                                              h²·(2w² + 9w² + 4w² + 8w²)  = 23·3584²
#   3584² = 12,845,056; conv1 = 112²·64·3·7² = 118,013,952; fc = 2048·1000 = 2,048,000;
#   res2 = (18 + 2·17)·3584² = 667,942,912     res3 = (23 + 3·17)·3584² = 950,534,144
#   res4 = (23 + 5·17)·3584² = 1,387,266,048   res5 = (23 + 2·17)·3584² = 732,168,192
#   total = 3,857,973,248 (the paper's Table 1: "3.8 × 10⁹ FLOPs", multiply-adds).
#
#   v1.5 runs the first 1×1 of res3a-res5a on the input plane 2h: 3·h²·2w² more per
#   stage = 6·3584² = 77,070,336, ×3 = 231,211,008 (4,089,184,256 = torchvision's 4.089 G).
#
#   Weights (one folded-BN bias per conv channel; the stride changes no weight shape):
#   conv1 64·3·49 + 64 = 9,472; non-first block 17w² + 6w; res2a 18w² + 10w; first block
#   of res3-res5 23w² + 10w (biases w + w + 4w + 4w);
#   res2 = 18·64² + 640 + 2·(17·64² + 384) = 214,400
#   res3 = 23·128² + 1,280 + 3·(17·128² + 768) = 1,216,000
#   res4 = 23·256² + 2,560 + 5·(17·256² + 1,536) = 7,088,128
#   res5 = 23·512² + 5,120 + 2·(17·512² + 3,072) = 14,953,472;  fc 2048·1000 + 1000
#   total = 25,530,472 = torchvision's 25,557,032 − 26,560 (one of BN's γ, β per channel).
#
#   Layers: conv1, pool1, 16 × (3 convs + add), 4 projections, pool5, fc = 72, the same
#   72 as SET's resnet.cpp lists (conv, pooling, eltwise and fc layers there too).

V1_UNIT = 3584 ** 2
V1_STAGE_MACS = {
    "res2": (18 + 2 * 17) * V1_UNIT,
    "res3": (23 + 3 * 17) * V1_UNIT,
    "res4": (23 + 5 * 17) * V1_UNIT,
    "res5": (23 + 2 * 17) * V1_UNIT,
}
V1_STAGE_PARAMS = {
    "res2": 18 * 64**2 + 10 * 64 + 2 * (17 * 64**2 + 6 * 64),
    "res3": 23 * 128**2 + 10 * 128 + 3 * (17 * 128**2 + 6 * 128),
    "res4": 23 * 256**2 + 10 * 256 + 5 * (17 * 256**2 + 6 * 256),
    "res5": 23 * 512**2 + 10 * 512 + 2 * (17 * 512**2 + 6 * 512),
}
V1_CONV1_MACS, V1_FC_MACS = 112 * 112 * 64 * 3 * 7 * 7, 2048 * 1000
V1_CONV1_PARAMS, V1_FC_PARAMS = 64 * 3 * 49 + 64, 2048 * 1000 + 1000
# The derivation evaluated once, as literals, so that a slip in the formulas shows up.
V1_DERIVED_MACS = 3_857_973_248
V1_DERIVED_PARAMS = 25_530_472
V1_V15_MAC_GAP = 231_211_008  # 3 stages × 6·3584²


def test_resnet50_v1_derivation_is_stable():
    assert V1_STAGE_MACS == {"res2": 667_942_912, "res3": 950_534_144,
                             "res4": 1_387_266_048, "res5": 732_168_192}
    assert V1_STAGE_PARAMS == {"res2": 214_400, "res3": 1_216_000, "res4": 7_088_128,
                               "res5": 14_953_472}
    assert V1_CONV1_MACS + sum(V1_STAGE_MACS.values()) + V1_FC_MACS == V1_DERIVED_MACS
    assert V1_CONV1_PARAMS + sum(V1_STAGE_PARAMS.values()) + V1_FC_PARAMS == V1_DERIVED_PARAMS
    assert 3 * 6 * V1_UNIT == V1_V15_MAC_GAP


def test_resnet50_v1_totals_match_derivation():
    w = cnn.resnet50_v1()
    assert len(w) == 72
    assert w.total_macs == V1_DERIVED_MACS
    assert w.total_params == V1_DERIVED_PARAMS
    for stage, macs in V1_STAGE_MACS.items():
        in_stage = [ly for ly in w.layers if ly.name.startswith(stage)]
        assert sum(ly.macs for ly in in_stage) == macs, stage
        assert sum(ly.weight_elems for ly in in_stage) == V1_STAGE_PARAMS[stage], stage


def test_resnet50_v1_against_published_and_v15():
    v1, v15 = cnn.resnet50_v1(), net("resnet50")
    # He et al. 2016, Table 1: 3.8 × 10⁹ multiply-adds (ours +1.5 %: the paper rounds).
    assert v1.total_macs == pytest.approx(3.8e9, rel=0.02)
    # Same weights as v1.5 (torchvision's count adds BN's second parameter per channel).
    assert v1.total_params == v15.total_params
    assert v1.total_params + bn_channels(v1) == PUBLISHED["resnet50"][1]
    assert v15.total_macs - v1.total_macs == V1_V15_MAC_GAP
    # Same layers and edges; only the three downsampling branch2a convs change.
    assert [ly.name for ly in v1.layers] == [ly.name for ly in v15.layers]
    assert v1.edges != v15.edges  # the branch2a outputs shrink, and with them the edges
    changed = [a.name for a, b in zip(v1.layers, v15.layers, strict=True) if a != b]
    assert changed == ["res3a_branch2a", "res3a_branch2b", "res4a_branch2a",
                       "res4a_branch2b", "res5a_branch2a", "res5a_branch2b"]
    for a, b in zip(v1.layers, v15.layers, strict=True):
        if a.name.endswith("_branch2b"):
            assert a.macs == b.macs  # the 3×3 computes the same output either way


def test_resnet50_v1_layer_shapes():
    w = cnn.resnet50_v1()
    assert w.name == "resnet50-v1" and "1512.03385" in w.meta["source"]
    for stage, h_in in (("res3a", 56), ("res4a", 28), ("res5a", 14)):
        a, b3 = layer(w, f"{stage}_branch2a"), layer(w, f"{stage}_branch2b")
        assert (a.stride, a.H, a.R) == (2, h_in // 2, 1)
        assert (b3.stride, b3.H, b3.C, b3.R) == (1, h_in // 2, a.K, 3)
        assert layer(w, f"{stage}_branch1").stride == 2
    assert layer(w, "res2a_branch2a").stride == 1


def test_resnet50_v1_registry_and_parameter():
    from chipsched.instances.networks import get_network, network_params

    w = cnn.resnet50_v1()
    for spec in ("resnet50-v1", "resnet-50-v1", "ResNet50_v1", "resnet50:stride_in_1x1=true",
                 "resnet50:stride_in_1x1=1"):
        assert get_network(spec) == w, spec
    assert get_network("resnet50:stride_in_1x1=false") == net("resnet50")
    assert network_params("resnet50-v1") == {"image_size": 224, "precision_bytes": 1}
    with pytest.raises(ValueError):
        cnn.resnet50(stride_in_1x1="yes")  # type: ignore[arg-type]
