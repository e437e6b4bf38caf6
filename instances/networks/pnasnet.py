"""PNASNet-5 Mobile (Liu et al., 2018) as a chipsched workload."""

from __future__ import annotations

from chipsched.workload import Workload, WorkloadBuilder

_SOURCE = (
    "Liu et al.: 'Progressive Neural Architecture Search', ECCV 2018 (arXiv:1712.00559), "
    "Fig. 1 cell and Table 5; structure after TF-slim tensorflow/models "
    "research/slim/nets/nasnet/pnasnet.py (build_pnasnet_mobile) and nasnet_utils.py"
)

#: The PNASNet-5 cell: five blocks, each ``(left op, right op)`` with an op given as
#: ``(kind, kernel, input hidden state)``. Hidden states: 0 = 1×1 conv of the cell input,
#: 1 = the adjusted previous-previous output, 2 + j = output of block j.
#: (TF-slim ``operations`` / ``hiddenstate_indices`` of ``PNasNetNormalCell``.)
_CELL: tuple[tuple[tuple[str, int, int], tuple[str, int, int]], ...] = (
    (("sep", 5, 1), ("max", 3, 1)),
    (("sep", 7, 0), ("max", 3, 0)),
    (("sep", 5, 0), ("sep", 3, 0)),
    (("sep", 3, 4), ("max", 3, 0)),
    (("sep", 3, 1), ("none", 1, 0)),
)


def _conv1x1(b: WorkloadBuilder, name: str, x: str, K: int, stride: int = 1) -> str:
    """ReLU-1×1 conv-BN; the BN is folded in, leaving a per-channel bias."""
    return b.conv(name, x, K=K, kernel=1, stride=stride, pad="same", bias=True)


def _factorized_reduction(b: WorkloadBuilder, p: str, x: str, F: int) -> str:
    """nasnet_utils.factorized_reduction with stride 2: two strided 1×1 convs, concat.

    Path 1 reads the input subsampled at even pixels, path 2 the input shifted by one
    pixel (pad right/bottom, crop top/left); both are ``1×1, stride 2`` over the same
    tensor here. Path 2 takes the odd channel when ``F`` is odd. The BN after the
    concat is folded into the two convs.
    """
    p1 = _conv1x1(b, f"{p}.path1_conv", x, F // 2, stride=2)
    p2 = _conv1x1(b, f"{p}.path2_conv", x, F // 2 + F % 2, stride=2)
    return b.concat(f"{p}.concat", p1, p2)


def _separable(b: WorkloadBuilder, p: str, x: str, F: int, kernel: int, stride: int) -> str:
    """``separable_KxK_2``: (ReLU, depthwise K×K, pointwise 1×1 to F, BN) twice.

    Only the first depthwise conv strides. The depthwise conv has no bias (no BN
    directly after it); the pointwise conv carries the folded BN bias.
    """
    for j in (1, 2):
        x = b.dwconv(f"{p}.sep{j}_dw{kernel}x{kernel}", x, kernel=kernel, stride=stride,
                     pad="same")
        x = _conv1x1(b, f"{p}.sep{j}_pw", x, F)
        stride = 1
    return x


def _apply_op(b: WorkloadBuilder, p: str, op: tuple[str, int, int], x: str, F: int,
              stride: int) -> str:
    kind, k, _ = op
    C = b.shape(x)[0]
    if kind == "sep":
        return _separable(b, p, x, F, k, stride)
    if kind == "max":
        y = b.pool(f"{p}.maxpool{k}x{k}", x, kernel=k, stride=stride, pad="same")
        return _conv1x1(b, f"{p}.conv1x1", y, F) if C != F else y
    if kind == "none":  # identity, or a strided 1×1 conv where shapes must change
        return _conv1x1(b, f"{p}.conv1x1", x, F, stride) if stride > 1 or C != F else x
    raise ValueError(kind)


def _cell(b: WorkloadBuilder, p: str, x: str, prev: str | None, F: int, stride: int) -> str:
    """One PNASNet-5 cell (nasnet_utils.NasNetABaseCell with the PNASNet-5 ops)."""
    # _reduce_prev_layer: match the previous-previous output to the input's size and F.
    if prev is None:
        h1 = x
    elif b.shape(prev)[2] != b.shape(x)[2]:
        h1 = _factorized_reduction(b, f"{p}.prev_reduction", prev, F)
    elif b.shape(prev)[0] != F:
        h1 = _conv1x1(b, f"{p}.prev_1x1", prev, F)
    else:
        h1 = prev
    states = [_conv1x1(b, f"{p}.1x1", x, F), h1]
    for j, (left, right) in enumerate(_CELL):
        outs = []
        for side, op in (("left", left), ("right", right)):
            s = stride if op[2] < 2 else 1  # only ops on the cell inputs stride
            outs.append(_apply_op(b, f"{p}.b{j}.{side}", op, states[op[2]], F, s))
        states.append(b.add(f"{p}.b{j}.add", *outs))
    # Hidden states 0 and 1 are used inside the cell, so the output is the five blocks.
    return b.concat(f"{p}.concat", *states[2:])


def pnasnet5_mobile(image_size: int = 224, precision_bytes: int = 1) -> Workload:
    """PNASNet-5 Mobile for 1000-class ImageNet, after Liu et al. 2018.

    Source: arXiv:1712.00559 (Fig. 1 cell, Table 5) as implemented by TF-slim
    ``build_pnasnet_mobile`` (tensorflow/models research/slim/nets/nasnet/pnasnet.py and
    nasnet_utils.py): num_cells 9, num_conv_filters F=54, stem_multiplier 1.0,
    filter_scaling_rate 2.0, reduction (stride-2) cells at 3 and 6,
    skip_reduction_layer_input 1. Stem: 3×3/2 valid conv (32) then two stride-2 stem
    cells with F/4 = 13 and F/2 = 27 filters; then 9 cells with F = 54, 54, 54, 108
    (stride 2), 108, 108, 216 (stride 2), 216, 216; ReLU, global average pool, fc 1000.
    Each cell outputs the concat of its five blocks (5·F channels).

    Modelling: each separable conv is ``dwconv`` + pointwise ``conv`` (twice, NASNet
    style); max pools are ``pool`` (SAME padding); block sums are ``add``; the cell
    output and the factorized reduction are ``concat``. BN and ReLU are folded into the
    neighbouring convs (each BN leaves a per-channel bias on the conv before it);
    dropout, drop-path and the auxiliary head are left out.

    Totals at 224×224: 587,293,200 MACs (published 588 M, Table 5: −0.12 %) and
    5,047,655 parameters including the folded-BN biases (published 5.1 M: −1.0 %;
    counting BN's γ and β as TF-slim's variables do would add another 16,832).
    11 cells (2 stem + 9), 55 block sums, 132 depthwise + 163 other convs, 1 fc.
    """
    b = WorkloadBuilder(
        "pnasnet-5-mobile", precision_bytes,
        meta={"source": _SOURCE,
              "published": {"params": 5_100_000, "macs": 588_000_000,
                            "note": "paper Table 5, 224×224 ImageNet mobile setting"}},
    )
    num_cells, F0, rate = 9, 54, 2.0
    reductions = [int(k / 3 * num_cells) for k in (1, 2)]  # calc_reduction_layers → [3, 6]
    x = b.input("image", (3, image_size, image_size))
    x = b.conv("conv0", x, K=32, kernel=3, stride=2, pad="valid", bias=True)
    outputs: list[str | None] = [None, x]
    scaling = 1.0 / rate**2
    for i in range(2):  # stem cells: stride 2, F/4 and F/2 filters
        x = _cell(b, f"cell_stem_{i}", x, outputs[-2], int(F0 * scaling), stride=2)
        outputs.append(x)
        scaling *= rate
    scaling = 1.0
    for i in range(num_cells):
        stride = 1
        if i in reductions:
            scaling *= rate
            stride = 2
        x = _cell(b, f"cell_{i}", x, outputs[-2], int(F0 * scaling), stride)
        outputs.append(x)
    x = b.pool("global_avgpool", x, kernel=b.shape(x)[1], global_=True)
    b.fc("fc", x, K=1000)
    return b.build()
