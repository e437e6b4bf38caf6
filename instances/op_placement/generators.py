"""Named and random op-placement instances.

* :func:`topcuoglu2002` — the 10-task, 3-processor example of Topcuoglu, Hariri and Wu,
  "Performance-effective and low-complexity task scheduling for heterogeneous
  computing", IEEE TPDS 13(3), 2002, Fig. 2 (HEFT schedules it in 80 time units).
* :func:`random_instance` — a seeded random DAG on heterogeneous processors
  (``random:n=20,p=3,seed=1,density=0.2,ccr=0.5,het=0.5,cores=1``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.problems.op_placement import Instance

#: Computation costs W[task][processor] of Topcuoglu et al. (2002), Fig. 2 (tasks n1..n10).
TOPCUOGLU_W = (
    (14, 16, 9), (13, 19, 18), (11, 13, 19), (13, 8, 17), (12, 13, 10),
    (13, 16, 9), (7, 15, 11), (5, 11, 14), (18, 12, 20), (21, 7, 16),
)

#: Edges (src, dst, communication cost) of the same figure (1-based task numbers).
TOPCUOGLU_EDGES = (
    (1, 2, 18), (1, 3, 12), (1, 4, 9), (1, 5, 11), (1, 6, 14), (2, 8, 19), (2, 9, 16),
    (3, 7, 23), (4, 8, 27), (4, 9, 23), (5, 9, 13), (6, 8, 15), (7, 10, 17), (8, 10, 11),
    (9, 10, 13),
)


def topcuoglu2002(objective: str | None = None) -> Instance:
    """The HEFT paper's example: 10 tasks, 3 processors, transfer cost = the edge's
    communication cost between different processors (bandwidth 1, no startup)."""
    return Instance(
        name="topcuoglu2002", ops=tuple(f"n{i}" for i in range(1, 11)),
        op_class=("task",) * 10, time=np.array(TOPCUOGLU_W, dtype=float),
        energy=None, edges=np.array([(a - 1, b - 1) for a, b, _ in TOPCUOGLU_EDGES]),
        edge_bytes=np.array([c for _, _, c in TOPCUOGLU_EDGES], dtype=float),
        processors=("P1", "P2", "P3"), cores=(1, 1, 1), latency=0.0, bandwidth=1.0,
        time_unit="u.t.", objective=objective or "makespan",
        meta={"source": "Topcuoglu, Hariri, Wu, IEEE TPDS 13(3) 2002, Fig. 2"})


def random_instance(n: int = 20, p: int = 3, seed: int = 0, density: float = 0.2,
                    ccr: float = 0.5, het: float = 0.5, cores: int = 1,
                    objective: str | None = None) -> Instance:
    """A random DAG of ``n`` ops on ``p`` heterogeneous processors (``cores`` each).

    Generator (every draw from ``numpy.random.default_rng(seed)``): a base time
    ``w_i`` uniform in 1..20 per op; its time on processor q is
    ``max(1, round(w_i · f_iq))`` with ``f_iq`` uniform in [1 − het, 1 + het]; every
    pair i < j is an edge with probability ``density``; an edge's transfer cost (paid
    between different processors) is uniform in 1..max(1, round(2 · ccr · mean w)),
    or 0 with ``ccr = 0``. Energies are the times (a 1 W processor). All integers, so
    the exact models are exact on it.
    """
    for name, v, lo, hi in (("n", n, 1, 20_000), ("p", p, 1, 1024), ("cores", cores, 1, 1024)):
        if not isinstance(v, int) or not lo <= v <= hi:
            raise InputError(f"random instance {name}", f"must be an integer in {lo}..{hi:,}, "
                             f"got {v!r}", "e.g. random:n=50,p=3")
    for name, v in (("density", density), ("ccr", ccr), ("het", het)):
        if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
            raise InputError(f"random instance {name}", f"must be >= 0, got {v!r}")
    if density > 1 or het >= 1:
        raise InputError("random instance", "density must be <= 1 and het < 1")
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 21, size=n).astype(float)
    f = rng.uniform(1 - het, 1 + het, size=(n, p))
    time = np.maximum(1.0, np.round(w[:, None] * f))
    edges = _pair_draw(rng, n, density)
    hi = max(1, int(round(2 * ccr * w.mean())))
    costs = rng.integers(1, hi + 1, size=len(edges)).astype(float) if ccr > 0 else \
        np.zeros(len(edges))
    return Instance(
        name=f"random-n{n}-p{p}-s{seed}", ops=tuple(f"t{i}" for i in range(n)),
        op_class=("task",) * n, time=time, energy=time.copy(), edges=edges,
        edge_bytes=costs, processors=tuple(f"p{q}" for q in range(p)), cores=(cores,) * p,
        latency=0.0, bandwidth=1.0, time_unit="u.t.", objective=objective or "makespan",
        meta={"source": "random_instance", "seed": seed, "density": density, "ccr": ccr,
              "het": het})


#: pairs drawn per chunk of :func:`_pair_draw` (memory: ~24 bytes each)
PAIR_CHUNK = 1 << 20


def _pair_draw(rng: np.random.Generator, n: int, density: float) -> np.ndarray:
    """The edges i < j, each pair drawn with probability ``density`` in row-major order
    — the draws of ``rng.random(n(n−1)/2)`` over ``numpy.triu_indices(n, 1)``, taken a
    chunk of rows at a time, so memory is O(chunk + edges) instead of O(n²) (20,000 ops
    took 5 GB) and the instances are the ones the all-pairs draw gave."""
    out: list[np.ndarray] = []
    i = 0
    while i < n - 1:
        rows, size = [], 0
        while i < n - 1 and (not rows or size + (n - 1 - i) <= PAIR_CHUNK):
            rows.append(i)
            size += n - 1 - i
            i += 1
        lengths = np.array([n - 1 - r for r in rows])
        iu = np.repeat(np.array(rows), lengths)
        # j runs from r + 1 to n − 1 in each row
        ju = np.arange(size) - np.repeat(np.cumsum(lengths) - lengths, lengths) + iu + 1
        pick = rng.random(size) < density
        out.append(np.stack([iu[pick], ju[pick]], axis=1))
    return np.concatenate(out) if out else np.zeros((0, 2), dtype=np.int64)


def parse_random_spec(spec: str, objective: str | None = None) -> Instance:
    """``random:n=20,p=3,seed=1,…`` → :func:`random_instance`."""
    _, _, args = spec.partition(":")
    kw: dict[str, Any] = {}
    allowed = {"n": int, "p": int, "seed": int, "cores": int, "density": float, "ccr": float,
               "het": float}
    for item in filter(None, args.split(",")):
        k, eq, v = item.partition("=")
        k = k.strip()
        if not eq or k not in allowed:
            raise InputError(f"instance {spec!r}: parameter {k!r}", "unknown or without value",
                             f"parameters: {', '.join(allowed)}")
        try:
            kw[k] = allowed[k](v)
        except ValueError:
            raise InputError(f"instance {spec!r}: parameter {k!r}", f"bad value {v!r}") from None
    return random_instance(objective=objective, **kw)


NAMED = {"topcuoglu2002": topcuoglu2002}
