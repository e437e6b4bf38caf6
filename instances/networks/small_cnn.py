"""Small CNNs of the neuromorphic-mapping literature: LeNet-5 and CIFAR-10 VGG/ResNet.

Their neuron graphs (``chipsched.neurongraph.from_workload``) are the named instances of
the ``core_assignment`` decision. Conventions as in :mod:`chipsched.instances.networks.cnn`
(batch norm and activations folded into the preceding conv; convs of BN-trained networks
carry a per-channel bias).
"""

from __future__ import annotations

from chipsched.workload import Workload, WorkloadBuilder


def lenet5(precision_bytes: int = 1) -> Workload:
    """LeNet-5 (LeCun, Bottou, Bengio, Haffner, "Gradient-based learning applied to document
    recognition", Proc. IEEE 1998, §II.B), on a 1×32×32 input.

    C1 conv 6@5×5 (valid) → S2 2×2 pooling → C3 conv 16@5×5 → S4 2×2 pooling → C5 120
    features (fc over the flattened 16×5×5) → F6 fc 84 → output fc 10. C3 is fully
    connected to S2 here (the paper's sparse connection table is not modelled), so C3
    has 2,416 parameters instead of 1,516. Total: 61,706 parameters, 416,520 MACs.
    """
    b = WorkloadBuilder("lenet5", precision_bytes, meta={
        "source": "LeCun et al. 1998, Proc. IEEE 86(11), LeNet-5 (C3 fully connected)",
        "published": {"params": 61_706}})
    x = b.input("image", (1, 32, 32))
    x = b.conv("c1", x, K=6, kernel=5, pad=0, bias=True)
    x = b.pool("s2", x, kernel=2)
    x = b.conv("c3", x, K=16, kernel=5, pad=0, bias=True)
    x = b.pool("s4", x, kernel=2)
    x = b.fc("c5", x, K=120, flatten=True)
    x = b.fc("f6", x, K=84)
    b.fc("output", x, K=10)
    return b.build()


def vgg11_cifar(num_classes: int = 10, precision_bytes: int = 1) -> Workload:
    """VGG-11 for CIFAR-10 (Simonyan & Zisserman 2015, configuration A, as adapted to 32×32
    inputs in kuangliu/pytorch-cifar ``models/vgg.py``): eight 3×3 convs (64, M, 128, M,
    256, 256, M, 512, 512, M, 512, 512, M; M = 2×2 max pooling) with batch norm, then one
    fc 512 → ``num_classes``. 9,231,114 parameters in that implementation (BN γ, β
    counted); here 9,225,610 (BN folded to one bias per channel)."""
    b = WorkloadBuilder("vgg11-cifar", precision_bytes, meta={
        "source": "Simonyan & Zisserman 2015 (arXiv:1409.1556), config A; CIFAR variant of "
                  "https://github.com/kuangliu/pytorch-cifar/blob/master/models/vgg.py"})
    x = b.input("image", (3, 32, 32))
    cfg = (64, "M", 128, "M", 256, 256, "M", 512, 512, "M", 512, 512, "M")
    conv, pool = 0, 0
    for item in cfg:
        if item == "M":
            pool += 1
            x = b.pool(f"pool{pool}", x, kernel=2)
        else:
            conv += 1
            x = b.conv(f"conv{conv}", x, K=int(item), kernel=3, bias=True)
    b.fc("fc", x, K=num_classes, flatten=True)
    return b.build()


def resnet20_cifar(num_classes: int = 10, precision_bytes: int = 1) -> Workload:
    """ResNet-20 for CIFAR-10 (He, Zhang, Ren, Sun 2016, arXiv:1512.03385, §4.2): a 3×3
    conv with 16 filters, three stages of three basic blocks (two 3×3 convs each) with 16,
    32 and 64 filters on 32×32, 16×16 and 8×8 maps (stride 2 in the first conv of stages 2
    and 3), global average pooling, fc 10. Where the shape changes we use a 1×1 projection
    shortcut (the paper's option B) instead of option A's zero-padded identity, because
    a residual add needs equal shapes: 19 + 2 convs, 9 adds. About 0.27 M parameters."""
    b = WorkloadBuilder("resnet20-cifar", precision_bytes, meta={
        "source": "He et al. 2016 (arXiv:1512.03385) §4.2, n = 3; option-B projections"})
    x = b.input("image", (3, 32, 32))
    x = b.conv("conv1", x, K=16, kernel=3, bias=True)
    for stage, width in enumerate((16, 32, 64), start=1):
        for blk in range(3):
            p = f"s{stage}b{blk}"
            stride = 2 if stage > 1 and blk == 0 else 1
            y = b.conv(f"{p}_conv1", x, K=width, kernel=3, stride=stride, bias=True)
            y = b.conv(f"{p}_conv2", y, K=width, kernel=3, bias=True)
            if stride != 1:
                x = b.conv(f"{p}_proj", x, K=width, kernel=1, stride=stride, bias=True)
            x = b.add(f"{p}_add", x, y)
    x = b.pool("pool", x, global_=True)
    b.fc("fc", x, K=num_classes)
    return b.build()
