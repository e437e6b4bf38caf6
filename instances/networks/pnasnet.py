"""PNASNet-5 Mobile and PNASNet-5 Large (Liu et al., 2018) as chipsched workloads."""

from __future__ import annotations

from chipsched.workload import Workload, WorkloadBuilder

_SOURCE = (
    "Liu et al.: 'Progressive Neural Architecture Search', ECCV 2018 (arXiv:1712.00559), "
    "Fig. 1 cell and Table 5; structure after TF-slim tensorflow/models "
    "research/slim/nets/nasnet/pnasnet.py (build_pnasnet_mobile) and nasnet_utils.py"
)

_SOURCE_LARGE = (
    "Liu et al.: 'Progressive Neural Architecture Search', ECCV 2018 (arXiv:1712.00559), "
    "Fig. 1 cell and Table 6; structure after TF-slim tensorflow/models "
    "research/slim/nets/nasnet/pnasnet.py (build_pnasnet_large), as in timm pnasnet5large "
    "and SET (Cai et al., ISCA 2023) src/nns/pnasnet.cpp"
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


def _pnasnet(b: WorkloadBuilder, image_size: int, num_cells: int, F0: int,
             stem_filters: int, num_classes: int) -> Workload:
    """TF-slim ``_build_pnasnet_base`` with the ImageNet stem, no auxiliary head.

    Stem: 3×3/2 valid conv (``stem_filters``) then two stride-2 stem cells with F0/4
    and F0/2 filters; then ``num_cells`` cells whose filter count doubles (and whose
    stride is 2) at cells ``num_cells // 3`` and ``2·num_cells // 3``
    (``calc_reduction_layers``); every cell's second input is the output two cells
    back (``skip_reduction_layer_input``). Head: global average pool, fc.
    """
    rate = 2.0  # filter_scaling_rate
    reductions = [int(k / 3 * num_cells) for k in (1, 2)]  # calc_reduction_layers
    x = b.input("image", (3, image_size, image_size))
    x = b.conv("conv0", x, K=stem_filters, kernel=3, stride=2, pad="valid", bias=True)
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
    b.fc("fc", x, K=num_classes)
    return b.build()


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
    return _pnasnet(b, image_size, num_cells=9, F0=54, stem_filters=32, num_classes=1000)


def pnasnet5_large(image_size: int = 331, precision_bytes: int = 1,
                   num_classes: int = 1000) -> Workload:
    """PNASNet-5 Large (N = 4, F = 216) for ImageNet at 331×331, after Liu et al. 2018.

    Source: arXiv:1712.00559, Fig. 1 cell and Table 6 (ImageNet large setting: 86.1 M
    parameters, 25.0 B mult-adds at 331×331), as implemented by TF-slim
    ``build_pnasnet_large``: num_cells 12 (N = 4 cells per stage), num_conv_filters
    F = 216, stem_multiplier 3.0 (a 96-filter stem conv), filter_scaling_rate 2.0,
    reduction cells at 4 and 8. The same network is timm's / Cadene's
    ``pnasnet5large`` (1000 classes) and SET's PNASNet (``pnasnet.cpp``, 1001 classes as
    in TF-slim; ``num_classes=1001`` reproduces it). Built by the same code as
    :func:`pnasnet5_mobile`; see its docstring for the modelling conventions. The
    auxiliary head (training only) is left out.

    Shapes: 331 → ``conv0`` (3×3/2 valid, 96) 165 → ``cell_stem_0`` (F = 54, stride 2)
    83 → ``cell_stem_1`` (F = 108) 42 → ``cell_0``–``cell_3`` (F = 216, 1080 channels
    at 42×42) → ``cell_4`` (F = 432, stride 2) and ``cell_5``–``cell_7`` (2160 at 21×21)
    → ``cell_8`` (F = 864, stride 2) and ``cell_9``–``cell_11`` (4320 at 11×11) →
    ``global_avgpool`` → ``fc`` 4320 → ``num_classes``.

    Derivation of the totals (MACs on conv/fc only; a depthwise k×k conv on C channels
    costs H²·C·k²). A cell with F filters reads x (C_x channels) and the output two
    cells back (C_p channels), both on its input plane h_i, and writes on h_o:

    * the 1×1 conv of x and the adjustment of the older input (1×1 conv, or the
      factorized reduction whose two strided F/2 halves add up to one F-filter conv)
      cost h_i²·F·(C_x + C_p);
    * the six separable convs (kernels 5, 7, 5, 3, 3, 3: Σk² = 126), each
      dw k×k + pw F→F twice, cost h_o²·(2·126·F + 12·F²) = h_o²·F·(12F + 252);
    * the three max pools need no 1×1 (their input already has F channels), the
      identity is free in a normal cell and a strided 1×1 F→F (h_o²·F²) in a reduction.

    Normal cell h²·F·(C_x + C_p + 12F + 252) MACs, F·(C_x + C_p + 12F + 266) parameters
    (one folded-BN bias on each 1×1 and pointwise conv, none on the depthwise);
    reduction cell h_i²·F·(C_x + C_p) + h_o²·F·(13F + 252) MACs and
    F·(C_x + C_p + 13F + 267) parameters. ``cell_stem_0`` (C = C_x = 96 and its older
    input is conv0's output itself): the sep 5×5 and sep 3×3 on that input and the max
    pool's 1×1 96→54 give h_i²·C·F + h_o²·(252F + 12F² + (C − F)(34 + 2F) + C·F + F²)
    MACs and 2CF + 13F² + 267F + (C − F)(34 + 2F) parameters. Per stage:

    ============================  ================  ============
    part                          MACs              parameters
    ============================  ================  ============
    conv0 + two stem cells         1,231,190,160       291,342
    cells 0–3 (F = 216, 42×42)     6,906,441,024     3,927,312
    cells 4–7 (F = 432, 21×21)     8,134,100,352    15,669,936
    cells 8–11 (F = 864, 11×11)    8,661,344,256    61,759,584
    fc 4320 → 1000                     4,320,000     4,321,000
    total                         24,937,395,792    85,969,174
    ============================  ================  ============

    Against the published figures: MACs −0.25 % from the paper's 25.0 B (the paper does
    not state its counting rules; SET's tool, counting conv/fc MACs like us, gives
    24.9 G: ours + 4,320 for its 1001st class). Parameters −0.15 % from 86.1 M: BN has
    two parameters per channel (γ, β) where the folded form keeps one bias; adding the
    other one on each of the 88,494 BN channels gives 86,057,668, exactly the trainable
    count of the PyTorch ports (pytorchcv ``pnasnet5large``; timm's 86.06 M). SET counts
    neither biases nor BN and has 1001 classes: 85,969,174 − 88,494 − 1,000 + 4,320 =
    85,884,000 (its 85.9 M). The auxiliary head (after cell 7: 1×1 2160→128, 6×6 conv
    128→768, fc 768→1001, ≈ 4.59 M parameters) is in neither published figure.

    505 layers: 168 depthwise + 205 other convs, 1 fc, 70 block sums, 42 max pools + the
    global pool, 18 concats (14 cell outputs, 4 factorized reductions). SET lists 603:
    it has a layer for each of the 116 standalone ReLUs (one before every separable
    conv, every 1×1 conv or factorized reduction of a cell input, every strided
    identity, and the global pool) and none for concats.
    """
    b = WorkloadBuilder(
        "pnasnet-5-large", precision_bytes,
        meta={"source": _SOURCE_LARGE,
              "published": {"params": 86_100_000, "macs": 25_000_000_000,
                            "note": "paper Table 6, 331×331 ImageNet large setting"}},
    )
    return _pnasnet(b, image_size, num_cells=12, F0=216, stem_filters=96,
                    num_classes=num_classes)
