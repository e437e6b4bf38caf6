"""Inception-ResNet-v1 and PNASNet-5 Mobile: totals and structure."""

from __future__ import annotations

import pytest

from chipsched.instances.networks.inception_resnet import inception_resnet_v1
from chipsched.instances.networks.pnasnet import pnasnet5_mobile
from chipsched.workload import OpKind


@pytest.fixture(scope="module")
def irv1():
    return inception_resnet_v1()


@pytest.fixture(scope="module")
def pnas():
    return pnasnet5_mobile()


def _layer(w, name):
    return w.layers[w.index(name)]


def _shape(w, name):
    ly = _layer(w, name)
    return (ly.K, ly.H, ly.W)


# ---------------------------------------------------------------------------------------
# Inception-ResNet-v1
#
# The paper (arXiv:1602.07261) states no parameter or mult-add count for v1, so the
# expected totals are derived here by hand from its figures, independently of the
# builder: every conv is written out as (output extent, C_in, C_out, R, S) with the
# output extents copied from the figures' annotations (149, 147, 73, 71, 35 in Fig. 14;
# 35, 17, 8 as the block inputs of Figs. 10-13 and the outputs of Figs. 7/12), not
# computed from padding rules. MACs = Ho·Wo·C_out·C_in·R·S; params = C_out·C_in·R·S +
# C_out (every conv keeps one bias per channel: the folded BN shift, or the real bias
# of the linear 1×1 projection). The fc is 1792 → 1000 with bias.

_STEM = [  # Fig. 14
    (149, 3, 32, 3, 3),
    (147, 32, 32, 3, 3),
    (147, 32, 64, 3, 3),
    (73, 64, 80, 1, 1),  # after the 3×3/2 valid max pool 147 → 73
    (71, 80, 192, 3, 3),
    (35, 192, 256, 3, 3),
]
_BLOCK_A = [  # Fig. 10 on 35×35×256: branches 32 | 32-32 | 32-32-32, projection 96 → 256
    (35, 256, 32, 1, 1), (35, 256, 32, 1, 1), (35, 32, 32, 3, 3),
    (35, 256, 32, 1, 1), (35, 32, 32, 3, 3), (35, 32, 32, 3, 3),
    (35, 96, 256, 1, 1),
]
_RED_A = [  # Fig. 7 with k, l, m, n = 192, 192, 256, 384 on 35×35×256
    (17, 256, 384, 3, 3),
    (35, 256, 192, 1, 1), (35, 192, 192, 3, 3), (17, 192, 256, 3, 3),
]
_BLOCK_B = [  # Fig. 11 on 17×17×896: 128 | 128-1×7-7×1, projection 256 → 896
    (17, 896, 128, 1, 1), (17, 896, 128, 1, 1), (17, 128, 128, 1, 7), (17, 128, 128, 7, 1),
    (17, 256, 896, 1, 1),
]
_RED_B = [  # Fig. 12 on 17×17×896
    (17, 896, 256, 1, 1), (8, 256, 384, 3, 3),
    (17, 896, 256, 1, 1), (8, 256, 256, 3, 3),
    (17, 896, 256, 1, 1), (17, 256, 256, 3, 3), (8, 256, 256, 3, 3),
]
_BLOCK_C = [  # Fig. 13 on 8×8×1792: 192 | 192-1×3-3×1, projection 384 → 1792
    (8, 1792, 192, 1, 1), (8, 1792, 192, 1, 1), (8, 192, 192, 1, 3), (8, 192, 192, 3, 1),
    (8, 384, 1792, 1, 1),
]


def _derived_irv1_totals() -> tuple[int, int]:
    convs = _STEM + 5 * _BLOCK_A + _RED_A + 10 * _BLOCK_B + _RED_B + 5 * _BLOCK_C
    macs = sum(h * h * co * ci * r * s for h, ci, co, r, s in convs)
    params = sum(co * ci * r * s + co for _, ci, co, r, s in convs)
    return macs + 1792 * 1000, params + 1792 * 1000 + 1000


# The same figures evaluated once, as literals, so a change to the table above shows up too.
IRV1_DERIVED_MACS = 6_206_361_696
IRV1_DERIVED_PARAMS = 22_742_808


def test_irv1_derivation_is_stable():
    assert _derived_irv1_totals() == (IRV1_DERIVED_MACS, IRV1_DERIVED_PARAMS)


def test_irv1_totals_match_derivation(irv1):
    assert irv1.total_macs == IRV1_DERIVED_MACS
    assert irv1.total_params == IRV1_DERIVED_PARAMS
    conv_count = 6 + 5 * 7 + 4 + 10 * 5 + 7 + 5 * 5
    assert sum(ly.kind is OpKind.CONV for ly in irv1.layers) == conv_count


def test_irv1_stem_and_stage_shapes(irv1):
    assert _shape(irv1, "stem.conv1a_3x3") == (32, 149, 149)
    assert _shape(irv1, "stem.maxpool3a_3x3") == (64, 73, 73)
    assert _shape(irv1, "stem.conv4a_3x3") == (192, 71, 71)
    assert _shape(irv1, "stem.conv4b_3x3") == (256, 35, 35)
    assert _shape(irv1, "reduction_a.concat") == (896, 17, 17)
    assert _shape(irv1, "reduction_b.concat") == (1792, 8, 8)
    assert _shape(irv1, "avgpool") == (1792, 1, 1)
    b1 = _layer(irv1, "block_b1.b1_1x7")
    assert (b1.R, b1.S, b1.H, b1.W) == (1, 7, 17, 17)
    c1 = _layer(irv1, "block_c1.b1_3x1")
    assert (c1.R, c1.S, c1.H, c1.W) == (3, 1, 8, 8)


def test_irv1_residual_adds(irv1):
    adds = [ly for ly in irv1.layers if ly.kind is OpKind.ELTWISE]
    by_shape: dict[tuple[int, int, int], int] = {}
    for ly in adds:
        by_shape[(ly.K, ly.H, ly.W)] = by_shape.get((ly.K, ly.H, ly.W), 0) + 1
    assert by_shape == {(256, 35, 35): 5, (896, 17, 17): 10, (1792, 8, 8): 5}
    for ly in adds:  # each add sums the block input and the linear 1×1 projection
        i = irv1.index(ly.name)
        preds = [irv1.layers[p] for p in irv1.preds[i]]
        assert len(preds) == 2
        assert any(p.name.endswith(".up_1x1") and (p.R, p.S) == (1, 1) for p in preds)


def test_irv1_head_and_graph(irv1):
    assert len(irv1.sources) == 1 and len(irv1.sinks) == 1
    fc = irv1.layers[irv1.sinks[0]]
    assert fc.kind is OpKind.FC and fc.name == "fc"
    assert (fc.K, fc.C) == (1000, 1792)
    assert fc.out_elems == 1000


# ---------------------------------------------------------------------------------------
# PNASNet-5 Mobile: Liu et al. 2018, Table 5: 5.1 M parameters, 588 M mult-adds at 224.

PNAS_PUBLISHED_PARAMS = 5_100_000
PNAS_PUBLISHED_MACS = 588_000_000


def test_pnas_totals_match_published(pnas):
    assert pnas.total_macs == pytest.approx(PNAS_PUBLISHED_MACS, rel=0.03)
    assert pnas.total_params == pytest.approx(PNAS_PUBLISHED_PARAMS, rel=0.03)
    assert pnas.meta["published"]["macs"] == PNAS_PUBLISHED_MACS
    assert pnas.meta["published"]["params"] == PNAS_PUBLISHED_PARAMS


def test_pnas_cells(pnas):
    outs = [ly for ly in pnas.layers
            if ly.kind is OpKind.CONCAT and ly.name.startswith("cell")
            and ly.name.count(".") == 1]
    assert [ly.name for ly in outs] == (
        ["cell_stem_0.concat", "cell_stem_1.concat"] + [f"cell_{i}.concat" for i in range(9)]
    )
    F = 54
    expected = [(5 * 13, 56, 56), (5 * 27, 28, 28)]
    expected += [(5 * F, 28, 28)] * 3 + [(10 * F, 14, 14)] * 3 + [(20 * F, 7, 7)] * 3
    assert [(ly.K, ly.H, ly.W) for ly in outs] == expected
    for ly in outs:  # each cell concatenates its five block sums
        preds = [pnas.layers[p] for p in pnas.preds[pnas.index(ly.name)]]
        assert len(preds) == 5 and all(p.kind is OpKind.ELTWISE for p in preds)
    assert sum(ly.kind is OpKind.ELTWISE for ly in pnas.layers) == 11 * 5


def test_pnas_ops(pnas):
    assert _shape(pnas, "conv0") == (32, 111, 111)
    # separable convs: two (depthwise, pointwise) pairs per op, 6 ops per cell
    assert sum(ly.kind is OpKind.DEPTHWISE for ly in pnas.layers) == 11 * 6 * 2
    dw = _layer(pnas, "cell_3.b1.left.sep1_dw7x7")
    assert (dw.R, dw.S, dw.stride, dw.C, dw.H) == (7, 7, 2, 108, 14)
    assert _layer(pnas, "cell_3.b1.left.sep2_dw7x7").stride == 1
    # stem cell 0 works on the 32-channel conv0 output directly as its second input
    assert _layer(pnas, "cell_stem_0.b0.left.sep1_dw5x5").C == 32
    # factorized reductions where the previous-previous output is twice as large
    for cell, f in (("cell_stem_1", 27), ("cell_0", 54), ("cell_4", 108), ("cell_7", 216)):
        assert _shape(pnas, f"{cell}.prev_reduction.concat")[0] == f
    assert _shape(pnas, "cell_stem_1.prev_reduction.path2_conv")[0] == 14  # odd F → 13 + 14


def test_pnas_head_and_graph(pnas):
    assert len(pnas.sources) == 1 and len(pnas.sinks) == 1
    fc = pnas.layers[pnas.sinks[0]]
    assert fc.kind is OpKind.FC and (fc.K, fc.C) == (1000, 1080)
