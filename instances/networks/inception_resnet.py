"""Inception-ResNet-v1 (Szegedy et al., 2016) as a chipsched workload."""

from __future__ import annotations

from chipsched.workload import Workload, WorkloadBuilder

_SOURCE = (
    "Szegedy, Ioffe, Vanhoucke, Alemi: 'Inception-v4, Inception-ResNet and the Impact of "
    "Residual Connections on Learning', AAAI 2017 (arXiv:1602.07261), Figs. 7, 10-14; "
    "layer naming after davidsandberg/facenet src/models/inception_resnet_v1.py"
)


def _conv(b: WorkloadBuilder, name: str, x: str, K: int, kernel: int | tuple[int, int],
          stride: int = 1, pad: str = "same") -> str:
    """A conv with its batch norm folded in (the BN shift becomes a per-channel bias)."""
    return b.conv(name, x, K=K, kernel=kernel, stride=stride, pad=pad, bias=True)


def _stem(b: WorkloadBuilder, x: str) -> str:
    """Fig. 14: 299×299×3 → 35×35×256 ("V" = valid padding, the rest same)."""
    x = _conv(b, "stem.conv1a_3x3", x, 32, 3, stride=2, pad="valid")  # 149×149×32
    x = _conv(b, "stem.conv2a_3x3", x, 32, 3, pad="valid")  # 147×147×32
    x = _conv(b, "stem.conv2b_3x3", x, 64, 3)  # 147×147×64
    x = b.pool("stem.maxpool3a_3x3", x, kernel=3, stride=2, pad="valid")  # 73×73×64
    x = _conv(b, "stem.conv3b_1x1", x, 80, 1)  # 73×73×80
    x = _conv(b, "stem.conv4a_3x3", x, 192, 3, pad="valid")  # 71×71×192
    return _conv(b, "stem.conv4b_3x3", x, 256, 3, stride=2, pad="valid")  # 35×35×256


def _residual(b: WorkloadBuilder, p: str, x: str, branches: list[str]) -> str:
    """Concat the branches, project linearly back to the block width, add the input.

    The 1×1 projection has no BN but a real bias; the residual scale (0.1–0.3) is folded
    into its weights and the ReLU after the sum into the ``add``.
    """
    cat = b.concat(f"{p}.concat", *branches)
    up = b.conv(f"{p}.up_1x1", cat, K=b.shape(x)[0], kernel=1, bias=True)
    return b.add(f"{p}.add", x, up)


def _block_a(b: WorkloadBuilder, p: str, x: str) -> str:
    """Fig. 10, Inception-ResNet-A on 35×35×256."""
    b0 = _conv(b, f"{p}.b0_1x1", x, 32, 1)
    b1 = _conv(b, f"{p}.b1_1x1", x, 32, 1)
    b1 = _conv(b, f"{p}.b1_3x3", b1, 32, 3)
    b2 = _conv(b, f"{p}.b2_1x1", x, 32, 1)
    b2 = _conv(b, f"{p}.b2_3x3a", b2, 32, 3)
    b2 = _conv(b, f"{p}.b2_3x3b", b2, 32, 3)
    return _residual(b, p, x, [b0, b1, b2])


def _block_b(b: WorkloadBuilder, p: str, x: str) -> str:
    """Fig. 11, Inception-ResNet-B on 17×17×896."""
    b0 = _conv(b, f"{p}.b0_1x1", x, 128, 1)
    b1 = _conv(b, f"{p}.b1_1x1", x, 128, 1)
    b1 = _conv(b, f"{p}.b1_1x7", b1, 128, (1, 7))
    b1 = _conv(b, f"{p}.b1_7x1", b1, 128, (7, 1))
    return _residual(b, p, x, [b0, b1])


def _block_c(b: WorkloadBuilder, p: str, x: str) -> str:
    """Fig. 13, Inception-ResNet-C on 8×8×1792."""
    b0 = _conv(b, f"{p}.b0_1x1", x, 192, 1)
    b1 = _conv(b, f"{p}.b1_1x1", x, 192, 1)
    b1 = _conv(b, f"{p}.b1_1x3", b1, 192, (1, 3))
    b1 = _conv(b, f"{p}.b1_3x1", b1, 192, (3, 1))
    return _residual(b, p, x, [b0, b1])


def _reduction_a(b: WorkloadBuilder, x: str, k: int = 192, l: int = 192, m: int = 256,
                 n: int = 384) -> str:
    """Fig. 7 (k, l, m, n = 192, 192, 256, 384 for v1): 35×35×256 → 17×17×896."""
    p = "reduction_a"
    b0 = b.pool(f"{p}.b0_maxpool_3x3", x, kernel=3, stride=2, pad="valid")
    b1 = _conv(b, f"{p}.b1_3x3", x, n, 3, stride=2, pad="valid")
    b2 = _conv(b, f"{p}.b2_1x1", x, k, 1)
    b2 = _conv(b, f"{p}.b2_3x3a", b2, l, 3)
    b2 = _conv(b, f"{p}.b2_3x3b", b2, m, 3, stride=2, pad="valid")
    return b.concat(f"{p}.concat", b0, b1, b2)


def _reduction_b(b: WorkloadBuilder, x: str) -> str:
    """Fig. 12: 17×17×896 → 8×8×1792."""
    p = "reduction_b"
    b0 = b.pool(f"{p}.b0_maxpool_3x3", x, kernel=3, stride=2, pad="valid")
    b1 = _conv(b, f"{p}.b1_1x1", x, 256, 1)
    b1 = _conv(b, f"{p}.b1_3x3", b1, 384, 3, stride=2, pad="valid")
    b2 = _conv(b, f"{p}.b2_1x1", x, 256, 1)
    b2 = _conv(b, f"{p}.b2_3x3", b2, 256, 3, stride=2, pad="valid")
    b3 = _conv(b, f"{p}.b3_1x1", x, 256, 1)
    b3 = _conv(b, f"{p}.b3_3x3a", b3, 256, 3)
    b3 = _conv(b, f"{p}.b3_3x3b", b3, 256, 3, stride=2, pad="valid")
    return b.concat(f"{p}.concat", b0, b1, b2, b3)


def inception_resnet_v1(image_size: int = 299, precision_bytes: int = 1) -> Workload:
    """Inception-ResNet-v1 for 1000-class ImageNet, after Szegedy et al. 2016.

    Source: arXiv:1602.07261, Fig. 15 (schema) with the v1 stem of Fig. 14,
    5× Inception-ResNet-A (Fig. 10), Reduction-A (Fig. 7, k=192, l=192, m=256, n=384),
    10× Inception-ResNet-B (Fig. 11), Reduction-B (Fig. 12), 5× Inception-ResNet-C
    (Fig. 13), 8×8 average pool and a 1000-way fc; padding as the figures mark it
    ("V" = TF valid, otherwise TF same). Cross-checked against the widely used
    davidsandberg/facenet ``inception_resnet_v1.py``, which differs in the head (an extra
    un-activated Block8 and an embedding bottleneck instead of the 1000-way fc).

    Conventions: BN and ReLU are folded into the preceding conv and every conv keeps a
    per-channel bias (the folded BN shift, or the real bias of the linear 1×1
    projection); the residual scaling is folded into the projection weights; dropout
    and the auxiliary softmax are left out.

    Totals at 299×299 (the paper gives no param/MAC figure for v1; the test derives
    these independently from the figures' channel counts):
    6,206,361,696 MACs (≈ 6.21 G) and 22,742,808 parameters (≈ 22.7 M) including one
    bias per conv channel, of which the fc layer holds 1,793,000. Stem output
    35×35×256; block widths 256 / 896 / 1792 at 35 / 17 / 8 pixels; 127 convs, 20
    residual adds (5 / 10 / 5), 22 concats, 4 pools, 1 fc.
    """
    b = WorkloadBuilder(
        "inception-resnet-v1", precision_bytes,
        meta={"source": _SOURCE,
              "published": {"note": "the paper gives no parameter or mult-add count for "
                                    "v1; tests/test_networks_inception_pnas.py derives "
                                    "them from the figures' channel counts"}},
    )
    x = b.input("image", (3, image_size, image_size))
    x = _stem(b, x)
    for i in range(5):
        x = _block_a(b, f"block_a{i + 1}", x)
    x = _reduction_a(b, x)
    for i in range(10):
        x = _block_b(b, f"block_b{i + 1}", x)
    x = _reduction_b(b, x)
    for i in range(5):
        x = _block_c(b, f"block_c{i + 1}", x)
    x = b.pool("avgpool", x, kernel=b.shape(x)[1], global_=True)
    b.fc("fc", x, K=1000)
    return b.build()
