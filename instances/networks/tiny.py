"""Tiny networks for tests and examples: small enough for brute force."""

from __future__ import annotations

from chipsched.workload import Workload, WorkloadBuilder


def tiny(precision_bytes: int = 1) -> Workload:
    """Six layers with one residual branch, on a 32×32×3 input.

    conv1 → conv2 → {conv3a → conv3b, identity} → add → pool → fc.
    Shapes are chosen so that every layer is a few hundred thousand MACs at most.
    """
    b = WorkloadBuilder("tiny", precision_bytes, meta={"source": "chipsched test network"})
    x = b.input("image", (3, 32, 32))
    c1 = b.conv("conv1", x, K=16, kernel=3, stride=2)
    c2 = b.conv("conv2", c1, K=32, kernel=3, stride=2)
    c3a = b.conv("conv3a", c2, K=32, kernel=3)
    c3b = b.conv("conv3b", c3a, K=32, kernel=1)
    s = b.add("add3", c2, c3b)
    p = b.pool("pool", s, kernel=8, global_=True)
    b.fc("fc", p, K=10)
    return b.build()


def tiny_chain(precision_bytes: int = 1) -> Workload:
    """Five layers in a plain chain (conv, conv, conv, pool, fc)."""
    b = WorkloadBuilder("tiny-chain", precision_bytes, meta={"source": "chipsched test network"})
    x = b.input("image", (3, 32, 32))
    c = b.conv("conv1", x, K=16, kernel=3)
    c = b.conv("conv2", c, K=32, kernel=3, stride=2)
    c = b.conv("conv3", c, K=64, kernel=3, stride=2)
    p = b.pool("pool", c, kernel=8, global_=True)
    b.fc("fc", p, K=10)
    return b.build()
