"""Classic ImageNet CNNs with the layer shapes of their published definitions.

ResNet-50 (v1.5 and v1), VGG-16, MobileNet-v2 and GoogLeNet (Inception-v1), 1000 classes,
built with :class:`~chipsched.workload.WorkloadBuilder`. Conventions (see the builder):

* batch norm and the activation are folded into the preceding convolution, so they
  are not layers; a folded batch norm leaves one per-channel bias, so every conv of a
  network trained with BN is built with ``bias=True`` (K bias parameters). Where
  torchvision counts 2·K BN parameters (γ, β) per conv we count K, so our parameter
  totals are slightly *below* torchvision's ``num_params`` (by 0.1–0.5 %);
* residual sums are ``add`` (eltwise) layers, branch merges ``concat`` layers, max and
  average pooling ``pool`` layers; dropout and flatten are free and not layers;
* MACs are per 224×224 image and count convolutions and fully connected layers only.

Published totals are stored in ``Workload.meta["published"]`` (``macs`` per image,
``params``); torchvision's ``_ops`` figures are GMACs although its tables call them
"GFLOPS".
"""

from __future__ import annotations

from chipsched.errors import InputError
from chipsched.workload import Workload, WorkloadBuilder

_TV = "https://github.com/pytorch/vision/blob/main/torchvision/models/"


def _global_pool(b: WorkloadBuilder, name: str, x: str) -> str:
    """Global average pooling to 1×1 (torchvision's ``AdaptiveAvgPool2d((1, 1))``)."""
    return b.pool(name, x, global_=True)


def _pool_ceil(b: WorkloadBuilder, name: str, x: str, kernel: int, stride: int,
               pad: int = 0) -> str:
    """Max pooling with ``ceil_mode=True`` (GoogLeNet in torchvision)."""
    return b.pool(name, x, kernel=kernel, stride=stride, pad=pad, ceil_mode=True)


# ---------------------------------------------------------------------------------------
# ResNet-50


def resnet50(image_size: int = 224, precision_bytes: int = 1, *,
             stride_in_1x1: bool = False) -> Workload:
    """ResNet-50 v1.5 as in torchvision (``torchvision.models.resnet50``), or with
    ``stride_in_1x1=True`` the original v1 of the paper (registered as ``resnet50-v1``).

    Source: He, Zhang, Ren, Sun, "Deep Residual Learning for Image Recognition",
    CVPR 2016 (arXiv:1512.03385), Table 1, 50-layer column; torchvision's v1.5 variant
    puts the stride-2 of a downsampling bottleneck on its 3×3 conv (``branch2b``), not
    on the first 1×1 (the paper's v1). Projection shortcuts (``branch1``) are 1×1 convs
    with the block's stride, used in the first block of each stage.

    ``stride_in_1x1=True`` moves the stride-2 of res3a, res4a and res5a to their first
    1×1 conv (``branch2a``), as in the paper, the original Caffe model and SET's
    ``resnet.cpp`` (see :func:`resnet50_v1`). Shapes of every other layer, the
    parameters and the layer count are unchanged; only those three ``branch2a`` convs
    now produce their output on the small plane (H_in/2 × W_in/2).

    Published totals (torchvision ``ResNet50_Weights.IMAGENET1K_V1``): 25,557,032
    parameters, 4.089 G MACs ("GFLOPS") per 224×224 image (the paper's v1: 3.8 G).

    Layers: ``conv1`` (7×7/2) → ``pool1`` (3×3/2 max) → stages res2…res5 of 3, 4, 6, 3
    bottlenecks (``resNx_branch2a`` 1×1, ``_branch2b`` 3×3, ``_branch2c`` 1×1 ×4,
    ``_branch1`` projection, ``_add``) → ``pool5`` (global average) → ``fc``:
    53 convs, 16 residual adds, 1 fc. Every conv is bias-free followed by BN in the
    trained model; with BN folded it has a per-channel bias (``bias=True``).
    """
    if stride_in_1x1 not in (True, False):  # also accepts 0 / 1 from "name:k=v" specs
        raise InputError("resnet50.stride_in_1x1", f"must be a boolean, got {stride_in_1x1!r}",
                         "use true/1 (v1, the paper) or false/0 (v1.5, torchvision)")
    if stride_in_1x1:
        name = "resnet50-v1"
        meta = {
            "source": "He et al. 2016 (arXiv:1512.03385), Table 1 (v1: stride in the first "
                      "1x1 of a downsampling bottleneck); SET (Cai et al., ISCA 2023) "
                      "src/nns/resnet.cpp",
            # the paper's "3.8 x 10^9 FLOPs" are multiply-adds; the parameters are those
            # of v1.5 (the stride does not change any weight shape), torchvision's count
            "published": {"macs": 3_800_000_000, "params": 25_557_032},
        }
    else:
        name = "resnet50"
        meta = {
            "source": "He et al. 2016 (arXiv:1512.03385); torchvision resnet50 (v1.5), "
                      + _TV + "resnet.py",
            "published": {"macs": 4_089_000_000, "params": 25_557_032},
        }
    b = WorkloadBuilder(name, precision_bytes, meta=meta)
    x = b.input("image", (3, image_size, image_size))
    x = b.conv("conv1", x, K=64, kernel=7, stride=2, pad=3, bias=True)
    x = b.pool("pool1", x, kernel=3, stride=2, pad=1)
    for stage, (width, blocks, stride) in enumerate(
            ((64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)), start=2):
        for i in range(blocks):
            p = f"res{stage}{'abcdef'[i]}"
            s = stride if i == 0 else 1
            s_1x1, s_3x3 = (s, 1) if stride_in_1x1 else (1, s)
            y = b.conv(f"{p}_branch2a", x, K=width, kernel=1, stride=s_1x1, bias=True)
            y = b.conv(f"{p}_branch2b", y, K=width, kernel=3, stride=s_3x3, bias=True)
            y = b.conv(f"{p}_branch2c", y, K=4 * width, kernel=1, bias=True)
            if i == 0:  # channels change (and, from res3 on, the plane shrinks)
                x = b.conv(f"{p}_branch1", x, K=4 * width, kernel=1, stride=s, bias=True)
            x = b.add(f"{p}_add", x, y)
    x = _global_pool(b, "pool5", x)
    b.fc("fc", x, K=1000)
    return b.build()


def resnet50_v1(image_size: int = 224, precision_bytes: int = 1) -> Workload:
    """ResNet-50 v1 (the paper's original), ``resnet50(stride_in_1x1=True)``.

    Source: He et al. 2016 (arXiv:1512.03385), Table 1 and Section 3.3 ("downsampling
    is performed by conv3_1, conv4_1, and conv5_1 with a stride of 2"): the first 1×1
    conv of the first bottleneck of stages res3–res5 and its projection shortcut have
    stride 2. This is also SET's ResNet-50 (Cai et al., ISCA 2023, ``resnet.cpp``),
    whose 72 layers (conv, pool, eltwise, fc) match ours one to one.

    Same weights as :func:`resnet50` (v1.5): 25,530,472 parameters here (conv weights,
    one folded-BN bias per conv channel, fc 2048×1000 + 1000), i.e. torchvision's
    25,557,032 minus one BN parameter on each of the 26,560 conv channels.

    MACs per 224×224 image (hand calculation):

    * ``conv1`` 112²·64·3·7·7 = 118,013,952;
    * a non-first bottleneck of width w on an h×h plane (in 4w, 1×1 w, 3×3 w, 1×1 4w)
      costs h²·(4w·w + 9w² + 4w²) = 17·h²·w²; with h·w = 56·64 = 28·128 = 14·256 =
      7·512 = 3584 in every stage that is 17·3584² = 218,365,952;
    * the first bottleneck of res3–res5 in v1 (input 2w channels on a 2h plane, all four
      convs at h): h²·(2w·w + 9w² + 4w² + 2w·4w) = 23·h²·w² = 295,436,288; res2a (input
      64 = w, stride 1): h²·(w² + 9w² + 4w² + 4w²) = 18·h²·w² = 231,211,008;
    * res2: 231,211,008 + 2·218,365,952 = 667,942,912; res3: 295,436,288 +
      3·218,365,952 = 950,534,144; res4: 295,436,288 + 5·218,365,952 = 1,387,266,048;
      res5: 295,436,288 + 2·218,365,952 = 732,168,192; ``fc`` 2048·1000 = 2,048,000;
    * total 3,857,973,248 (the paper's "3.8 × 10⁹ FLOPs", i.e. multiply-adds: +1.5 %).

    v1.5 computes each of those three ``branch2a`` convs on the input plane 2h×2h
    instead: 3·h²·2w·w more MACs per stage = 3·2·3584² = 77,070,336, ×3 stages =
    231,211,008, hence v1.5's 4,089,184,256 (torchvision's 4.089 G).
    """
    return resnet50(image_size, precision_bytes, stride_in_1x1=True)


# ---------------------------------------------------------------------------------------
# VGG-16


def vgg16(image_size: int = 224, precision_bytes: int = 1) -> Workload:
    """VGG-16 (configuration D) as in torchvision (``torchvision.models.vgg16``).

    Source: Simonyan, Zisserman, "Very Deep Convolutional Networks for Large-Scale
    Image Recognition", ICLR 2015 (arXiv:1409.1556), Table 1 column D.

    Published totals: 138 M parameters (paper, Table 2); torchvision
    ``VGG16_Weights.IMAGENET1K_V1``: 138,357,544 parameters, 15.47 G MACs ("GFLOPS")
    per 224×224 image.

    Layers: 13 3×3 convs with bias and no BN (``conv1_1`` … ``conv5_3``), 5 2×2/2 max
    pools (``pool1`` … ``pool5``), ``fc6`` (flattens 512×7×7 = 25088 → 4096), ``fc7``
    (4096 → 4096), ``fc8`` (4096 → 1000). torchvision's ``AdaptiveAvgPool2d((7, 7))``
    is the identity at 224×224 and is not a layer.
    """
    b = WorkloadBuilder("vgg16", precision_bytes, meta={
        "source": "Simonyan & Zisserman 2015 (arXiv:1409.1556), config D; torchvision vgg16, "
                  + _TV + "vgg.py",
        "published": {"macs": 15_470_000_000, "params": 138_357_544},
    })
    x = b.input("image", (3, image_size, image_size))
    for stage, (width, n) in enumerate(((64, 2), (128, 2), (256, 3), (512, 3), (512, 3)),
                                       start=1):
        for i in range(1, n + 1):
            x = b.conv(f"conv{stage}_{i}", x, K=width, kernel=3, pad=1, bias=True)
        x = b.pool(f"pool{stage}", x, kernel=2, stride=2)
    x = b.fc("fc6", x, K=4096, flatten=True)
    x = b.fc("fc7", x, K=4096)
    b.fc("fc8", x, K=1000)
    return b.build()


# ---------------------------------------------------------------------------------------
# MobileNet-v2


def mobilenet_v2(image_size: int = 224, precision_bytes: int = 1) -> Workload:
    """MobileNet-v2, width 1.0, as in torchvision (``torchvision.models.mobilenet_v2``).

    Source: Sandler, Howard, Zhu, Zhmoginov, Chen, "MobileNetV2: Inverted Residuals and
    Linear Bottlenecks", CVPR 2018 (arXiv:1801.04381), Table 2.

    Published totals: paper (Table 4/5, 224×224, width 1.0) 300 M multiply-adds and
    3.4 M parameters; torchvision ``MobileNet_V2_Weights.IMAGENET1K_V1``: 3,504,872
    parameters, 0.301 G MACs. We compare to torchvision's figures.

    Layers: ``conv1`` (3×3/2, 32) → 17 inverted-residual blocks ``block1`` … ``block17``
    from the (t, c, n, s) table (1,16,1,1) (6,24,2,2) (6,32,3,2) (6,64,4,2) (6,96,3,1)
    (6,160,3,2) (6,320,1,1): ``blockN_expand`` (1×1 to t·C_in, absent when t = 1),
    ``blockN_dw`` (3×3 depthwise, the block's stride), ``blockN_project`` (linear 1×1),
    and ``blockN_add`` when the stride is 1 and C_in = C_out (10 blocks) → ``conv_last``
    (1×1 to 1280) → ``pool`` (global average) → ``fc`` (1280 → 1000). Every conv is
    bias-free followed by BN in the trained model; with BN folded it has a per-channel
    bias (``bias=True``), the linear projection included.
    """
    b = WorkloadBuilder("mobilenet_v2", precision_bytes, meta={
        "source": "Sandler et al. 2018 (arXiv:1801.04381); torchvision mobilenet_v2, "
                  + _TV + "mobilenetv2.py",
        "published": {"macs": 301_000_000, "params": 3_504_872},
    })
    x = b.input("image", (3, image_size, image_size))
    x = b.conv("conv1", x, K=32, kernel=3, stride=2, pad=1, bias=True)
    blk = 0
    for t, c, n, s in ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                       (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1)):
        for i in range(n):
            blk += 1
            p = f"block{blk}"
            stride = s if i == 0 else 1
            c_in = b.shape(x)[0]
            y = x
            if t != 1:
                y = b.conv(f"{p}_expand", y, K=c_in * t, kernel=1, bias=True)
            y = b.dwconv(f"{p}_dw", y, kernel=3, stride=stride, pad=1, bias=True)
            y = b.conv(f"{p}_project", y, K=c, kernel=1, bias=True)
            x = b.add(f"{p}_add", x, y) if stride == 1 and c_in == c else y
    x = b.conv("conv_last", x, K=1280, kernel=1, bias=True)
    x = _global_pool(b, "pool", x)
    b.fc("fc", x, K=1000)
    return b.build()


# ---------------------------------------------------------------------------------------
# GoogLeNet

#: module → (C_1x1, C_3x3_reduce, C_3x3, C_5x5_reduce, C_5x5, C_pool_proj), paper Table 1.
_INCEPTION = {
    "3a": (64, 96, 128, 16, 32, 32),
    "3b": (128, 128, 192, 32, 96, 64),
    "4a": (192, 96, 208, 16, 48, 64),
    "4b": (160, 112, 224, 24, 64, 64),
    "4c": (128, 128, 256, 24, 64, 64),
    "4d": (112, 144, 288, 32, 64, 64),
    "4e": (256, 160, 320, 32, 128, 128),
    "5a": (256, 160, 320, 32, 128, 128),
    "5b": (384, 192, 384, 48, 128, 128),
}


def _inception(b: WorkloadBuilder, name: str, x: str, k3: int) -> str:
    c1, c3r, c3, c5r, c5, cp = _INCEPTION[name]
    p = f"inception{name}"
    b1 = b.conv(f"{p}_branch1", x, K=c1, kernel=1, bias=True)
    b2 = b.conv(f"{p}_branch2_reduce", x, K=c3r, kernel=1, bias=True)
    b2 = b.conv(f"{p}_branch2", b2, K=c3, kernel=3, bias=True)
    b3 = b.conv(f"{p}_branch3_reduce", x, K=c5r, kernel=1, bias=True)
    b3 = b.conv(f"{p}_branch3", b3, K=c5, kernel=k3, bias=True)
    b4 = _pool_ceil(b, f"{p}_branch4_pool", x, kernel=3, stride=1, pad=1)
    b4 = b.conv(f"{p}_branch4", b4, K=cp, kernel=1, bias=True)
    return b.concat(f"{p}_concat", b1, b2, b3, b4)


def googlenet(image_size: int = 224, precision_bytes: int = 1, *,
              branch3_kernel: int = 3) -> Workload:
    """GoogLeNet (Inception-v1) as in torchvision (``torchvision.models.googlenet``),
    without the auxiliary classifiers (they are dropped for inference).

    Source: Szegedy et al., "Going Deeper with Convolutions", CVPR 2015
    (arXiv:1409.4842), Table 1; torchvision's port of the TensorFlow-trained weights,
    which adds BN after every conv (eps 1e-3).

    The "5×5" branch (``branch3``) uses a **3×3** kernel by default, as torchvision
    does: its ``Inception`` block builds ``branch3`` with ``kernel_size=3`` (a known
    bug kept for weight compatibility, pytorch/vision#906), and the published
    torchvision weights and totals are for that network. ``branch3_kernel=5`` gives
    the paper's 5×5 instead (nothing else changes; the original's LRN layers are not
    modelled) and switches ``meta["published"]`` to the paper's totals.

    Published totals: torchvision ``GoogLeNet_Weights.IMAGENET1K_V1`` (3×3 branch):
    6,624,904 parameters, 1.498 G MACs ("GFLOPS") per 224×224 image. Paper (5×5): its
    Table 1 "params" column sums to about 6.8 M; the text gives a budget of "1.5 billion
    multiply-adds", but the table's "ops" column sums to 1.586 G, which the 5×5 variant
    matches (1.583 G here, 5.5 % above the rounded 1.5 G).

    Layers: ``conv1`` (7×7/2, 64) → ``pool1`` (3×3/2 max, ceil mode) → ``conv2`` (1×1,
    64) → ``conv3`` (3×3, 192) → ``pool2`` → inception 3a, 3b → ``pool3`` → 4a … 4e →
    ``pool4`` (2×2/2) → 5a, 5b → ``pool5`` (global average) → ``fc`` (1024 → 1000).
    Each inception module ``inceptionXY`` has ``_branch1`` (1×1), ``_branch2_reduce``
    (1×1) → ``_branch2`` (3×3), ``_branch3_reduce`` (1×1) → ``_branch3`` (3×3 or 5×5),
    ``_branch4_pool`` (3×3/1 max) → ``_branch4`` (1×1 pool projection) and ``_concat``.
    The torchvision convs are bias-free followed by BN; with BN folded each has a
    per-channel bias (``bias=True``). All max pools use PyTorch's ``ceil_mode=True``.
    """
    if branch3_kernel not in (3, 5):
        raise InputError("googlenet.branch3_kernel", f"must be 3 or 5, got {branch3_kernel!r}",
                         "use 3 (torchvision) or 5 (paper)")
    if branch3_kernel == 3:
        source = ("Szegedy et al. 2015 (arXiv:1409.4842); torchvision googlenet "
                  "(3x3 in the 5x5 branch, pytorch/vision#906), " + _TV + "googlenet.py")
        published = {"macs": 1_498_000_000, "params": 6_624_904}
    else:
        source = "Szegedy et al. 2015 (arXiv:1409.4842), Table 1 (5x5 branch as in the paper)"
        published = {"macs": 1_500_000_000, "params": 6_800_000}
    b = WorkloadBuilder("googlenet", precision_bytes,
                        meta={"source": source, "published": published})
    x = b.input("image", (3, image_size, image_size))
    x = b.conv("conv1", x, K=64, kernel=7, stride=2, pad=3, bias=True)
    x = _pool_ceil(b, "pool1", x, kernel=3, stride=2)
    x = b.conv("conv2", x, K=64, kernel=1, bias=True)
    x = b.conv("conv3", x, K=192, kernel=3, pad=1, bias=True)
    x = _pool_ceil(b, "pool2", x, kernel=3, stride=2)
    x = _inception(b, "3a", x, branch3_kernel)
    x = _inception(b, "3b", x, branch3_kernel)
    x = _pool_ceil(b, "pool3", x, kernel=3, stride=2)
    for m in ("4a", "4b", "4c", "4d", "4e"):
        x = _inception(b, m, x, branch3_kernel)
    x = _pool_ceil(b, "pool4", x, kernel=2, stride=2)
    x = _inception(b, "5a", x, branch3_kernel)
    x = _inception(b, "5b", x, branch3_kernel)
    x = _global_pool(b, "pool5", x)
    b.fc("fc", x, K=1000)
    return b.build()
