"""A proven lower bound on E^n·D^m over every tree the analyzer accepts (issue 10).

Every term below is a quantity the analyzer (:mod:`.model`) charges to *any* tree, at
least as large as stated, whatever the cuts, sub-batches, orders and allocations:

* **per layer** it runs B samples in all, in runs of some sub-batch b | B on a group of
  some g ≤ G tiles (one table row), so it pays at least min over (g, b) of its MAC and
  buffer energy × B/b, plus the NoC hop-bytes every tree puts on the controller link:
  its weights delivered to its tiles at least once, its network inputs (never produced
  on chip) delivered B/b times, a network output written B/b times;
* **DRAM** reads every layer's weights at least once, every network input B times and
  writes every network output B times;
* **time**: no two leaves run on one tile at once (S-cut children get disjoint tiles,
  T-cut children and a leaf's own runs follow one another), so the latency is at least
  the tiles' total busy time over G — each layer keeps g tiles busy for its table time
  per run — and at least one layer's own runs one after another; segments are
  bounded by their DRAM time and follow one another, so it is at least the DRAM bytes
  above at the DRAM bandwidth.

Intermediate feature maps (NoC or DRAM, depending on the tree), NoC link time and
buffer limits are left out, so the bound is loose where they dominate. The objective
grows in E and D, so E^n·D^m of the two bounds bounds every tree's objective.
``tests/test_tile_groups_bound.py`` checks every term against every tree of brute-force
enumerations of random small networks.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsched.cost import divisors, dram_energy_j, dram_time_s, noc_energy_j
from chipsched.errors import InputError
from chipsched.problems.tile_groups.analyzer import COLUMN

#: columns of ``Analyzer.rows`` (named by ``analyzer.LayerRow``)
_CS, _UU, _WF, _IF, _OF, _FP, _ME, _BE = (COLUMN[f] for f in (
    "compute_s", "units_used", "weight_fetch_bytes", "ifmap_fetch_bytes", "ofmap_bytes",
    "footprint_bytes", "mac_energy_j", "buffer_energy_j"))


@dataclass(frozen=True)
class LowerBound:
    """The bound and its parts (J, s, B, B·hops)."""

    objective: float
    energy_j: float
    latency_s: float
    mac_buffer_j: float
    dram_j: float
    noc_j: float
    work_s: float
    longest_layer_s: float
    dram_s: float
    dram_bytes: float
    noc_byte_hops: float

    @property
    def latency_from(self) -> str:
        """Which latency term binds: 'work over all tiles', 'one layer' or 'DRAM'."""
        parts = {"work over all tiles": self.work_s, "one layer": self.longest_layer_s,
                 "DRAM": self.dram_s}
        return max(parts, key=parts.__getitem__)

    def to_dict(self) -> dict[str, Any]:
        return {"energy_j": self.energy_j, "latency_s": self.latency_s,
                "energy": {"mac_buffer_j": self.mac_buffer_j, "dram_j": self.dram_j,
                           "noc_j": self.noc_j},
                "latency": {"work_s": self.work_s, "longest_layer_s": self.longest_layer_s,
                            "dram_s": self.dram_s, "binding": self.latency_from},
                "dram_bytes": self.dram_bytes, "noc_byte_hops": self.noc_byte_hops}


def lower_bound(instance: Any) -> LowerBound:
    """The lower bound of ``instance`` (a tile_groups ``Instance``); O(layers × tiles ×
    divisors of B) from the analyzer's layer table."""
    an = instance.analyzer
    hw = an.hw
    rows = an.rows  # (L, G, nb, 10)
    L, G = rows.shape[0], rows.shape[1]
    B = an.B
    batches = np.asarray(an.table.batches, dtype=float)
    runs = (B / batches)[None, None, :]  # runs of a leaf of sub-batch b in all: B/b
    g = np.arange(1, G + 1, dtype=float)[None, :, None]
    weights = np.asarray(an.weight_bytes, dtype=float)
    ext = np.asarray(an.ext, dtype=float)
    src = np.asarray(an.src_total, dtype=float)
    ext_share = np.divide(ext, src, out=np.zeros(L), where=src > 0)
    is_out = np.array([0.0 if an.succs[c] else 1.0 for c in range(L)])

    cs, wf, iff, of = rows[..., _CS], rows[..., _WF], rows[..., _IF], rows[..., _OF]
    mac_buf = (rows[..., _ME] + rows[..., _BE]) * runs
    out_bytes = is_out[:, None, None] * of * runs
    hop_bytes = (np.where(weights > 0, 1.0, 0.0)[:, None, None] * wf
                 + ext_share[:, None, None] * iff * runs + out_bytes)
    noc_j = noc_energy_j(hop_bytes, an.hop_pj)
    dram_out_j = dram_energy_j(out_bytes, hw)
    # one (g, b) per layer: the three energies at the same row, least over rows
    per_layer = (mac_buf + noc_j + dram_out_j).reshape(L, -1)
    k = per_layer.argmin(axis=1)
    pick = (np.arange(L), k)
    e_mac = float(mac_buf.reshape(L, -1)[pick].sum())
    e_noc = float(noc_j.reshape(L, -1)[pick].sum())
    dram_fixed = float((weights + ext * an.prec * B).sum())
    dram_bytes = dram_fixed + float(out_bytes.reshape(L, -1)[pick].sum())
    e_dram = float(dram_energy_j(dram_bytes, hw))
    noc_bh = float(hop_bytes.reshape(L, -1)[pick].sum())

    busy = (g * cs * runs).reshape(L, -1).min(axis=1)  # tile·seconds per layer
    own = (cs * runs).reshape(L, -1).min(axis=1)
    work_s = float(busy.sum()) / G
    longest = float(own.max()) if L else 0.0
    dram_s = float(dram_time_s(dram_bytes, hw))
    energy = e_mac + e_noc + e_dram
    latency = max(work_s, longest, dram_s)
    return LowerBound(objective=float(instance.objective(energy, latency)), energy_j=energy,
                      latency_s=latency, mac_buffer_j=e_mac, dram_j=e_dram, noc_j=e_noc,
                      work_s=work_s, longest_layer_s=longest, dram_s=dram_s,
                      dram_bytes=dram_bytes, noc_byte_hops=noc_bh)


# ---------------------------------------------------------------------------------------
# the full-space bound by root run count, usable rows, placement hops and an energy
# envelope (issue 30)


def dram_window_hops(an: Any) -> np.ndarray:
    """``h[k]`` (k = 1..G, index k − 1): the least mean DRAM hops (links to the nearest
    port + the controller link) over k consecutive stripe ids — the tiles a leaf that
    uses k tiles can occupy. Every DRAM byte a leaf's tiles read or write crosses at
    least that many links on average."""
    hops = np.asarray(an.dram_hops, dtype=float)
    G = len(hops)
    c = np.concatenate([[0.0], np.cumsum(hops)])
    out = np.empty(G)
    for k in range(1, G + 1):
        out[k - 1] = float((c[k:] - c[:-k]).min()) / k
    return out


def ball_mean_hops(an: Any, others: bool = False) -> np.ndarray:
    """``b[k]`` (index k − 1): the least mean Manhattan distance from one tile to k
    distinct tiles of the mesh (itself at distance 0 included). A feature map sent
    all-to-all from a producer's tiles to a consumer's k tiles travels at least this
    many hops per byte: for each producer tile the mean over the k consumer tiles is at
    least ``b[k]``. With ``others`` the k tiles exclude the tile itself (a group
    disjoint from the producer's), and ``b[G − 1]`` is ``inf``."""
    r, c = np.asarray(an.tr), np.asarray(an.tc)
    d = np.abs(r[:, None] - r[None, :]) + np.abs(c[:, None] - c[None, :])
    d.sort(axis=1)
    if others:
        cum = np.cumsum(d[:, 1:], axis=1).min(axis=0)
        return np.concatenate([cum / np.arange(1, len(r)), [np.inf]])
    cum = np.cumsum(d, axis=1).min(axis=0)
    return cum / np.arange(1, len(r) + 1)


def skip_edges(an: Any) -> set[tuple[int, int]]:
    """Edges (p, c) of the network with another dependency path from p to c (through a
    successor of p other than c). **Theorem** (the analyzer's dataflow, docs/tile_groups.md
    §3.2): no tree consumes such a map immediately. A layer x of the other path lies
    between p and c in the leaf order (a topological order), so inside their lowest
    common ancestor it sits in p's child (then p is not that child's last leaf), in c's
    child (c is not its first leaf) or in a child between them — a T cut's consumer
    child is then not right after the producer's, and an S cut's stages differ by two or
    more, since stages rise along dependencies. The map therefore goes through DRAM or
    waits on c's tiles for the whole segment (charged to their buffers). Not a bound
    term yet: ``benchmarks/tile_groups_map_probes.py`` measures what it would add."""
    L = len(an.names)
    below = [0] * L  # bit set of the layers reachable from each layer
    for i in range(L - 1, -1, -1):
        r = 0
        for s in an.succs[i]:
            r |= (1 << s) | below[s]
        below[i] = r
    return {(p, c) for c in range(L) for p, _ in an.preds[c]
            if any(x != c and (below[x] >> c) & 1 for x in an.succs[p])}


try:  # numba is a dependency; the guard keeps the pure-numpy fall-back importable
    import numba as _nb

    _njit = _nb.njit(cache=True)
except ImportError:  # pragma: no cover
    def _njit(f):  # type: ignore[no-redef]
        return f


@_njit
def _lagrange_min(e: np.ndarray, busy: np.ndarray, own: np.ndarray, d: float,
                  lam: float) -> tuple[float, float]:
    """Σ over layers of min over rows with own ≤ d of (e + lam·busy), and the busy
    time of the minimizing rows (the supergradient); (inf, 0) if a layer has no row."""
    L, M = e.shape
    tot = 0.0
    tb = 0.0
    for i in range(L):
        best = np.inf
        bb = 0.0
        for j in range(M):
            if own[i, j] <= d:
                v = e[i, j] + lam * busy[i, j]
                if v < best:
                    best = v
                    bb = busy[i, j]
        if best == np.inf:
            return np.inf, 0.0
        tot += best
        tb += bb
    return tot, tb


def warm_up_kernels() -> None:
    """Compile the envelope and dominance kernels on tiny inputs (``chipsched.jit``)."""
    z = np.zeros((1, 1))
    _lagrange_min(z, z, z, 1.0, 0.5)
    _undominated(np.zeros((2, 2)))


@dataclass(frozen=True)
class RowTerms:
    """Per layer × table row (g units, sub-batch b), for one root run count R: what any
    tree that runs the layer on that row pays over the whole batch, ``inf`` for rows no
    tree with that R can use. Arrays of shape (layers, G · len(batches))."""

    root_runs: int
    energy_j: np.ndarray
    busy_s: np.ndarray  # g tiles × the row's time × B/b runs
    own_s: np.ndarray  # the row's time × B/b runs
    dram_bytes: np.ndarray
    run_s: np.ndarray | None = None  # the row's time of one run (its table time)


def row_terms(instance: Any, root_runs: int) -> RowTerms:
    """The rows' energies and times for a tree whose root runs ``root_runs`` times (a
    root T cut with that sub-batch count; 1 for any other root). Each term is one the
    analyzer charges (``Analyzer._leaf_rows``, ``_traffic``, ``_buffers_and_ports``):

    * a row is *usable* when its working set fits the buffer, or it spills (weights
      streaming) with its activations in half the buffer and runs once per segment run,
      i.e. its sub-batch is the whole segment batch B/R; its sub-batch divides B/R;
    * weights: read from DRAM once per segment run (R times; once in all under SET's
      accounting), × the row's weight re-reads when it spills, and delivered to its
      tiles over the NoC as often, each byte over at least the least mean DRAM hops of
      any window of its tiles (:func:`dram_window_hops`);
    * network inputs and outputs through DRAM (× the input re-reads when spilling), over
      the same hops;
    * each producer's map either over the NoC to the row's tiles (at least
      :func:`ball_mean_hops` per byte) or through DRAM (read: DRAM energy + hops); a
      spilling row reads every input from DRAM;
    * MAC and buffer energy of B/b runs.
    """
    an = instance.analyzer
    hw = an.hw
    R = int(root_runs)
    B = an.B
    seg_batch = B // R
    rows = an.rows
    L, G, nb = rows.shape[0], rows.shape[1], rows.shape[2]
    batches = np.asarray(an.table.batches, dtype=float)
    runs = (B / batches)[None, None, :]
    cs, uu, wf, iff, of, fp, me, be, wre, ire = (rows[..., k] for k in range(10))
    buf = an.buf
    w_tile = np.divide(wf, uu * wre, out=np.zeros_like(wf), where=uu * wre > 0)
    spill = fp > buf
    whole = (batches == seg_batch)[None, None, :]
    divides = ((seg_batch % np.asarray(an.table.batches)) == 0)[None, None, :]
    usable = divides & (~spill | (whole & (fp - w_tile <= buf / 2)))
    uidx = np.clip(uu.astype(np.int64), 1, G) - 1
    hbar = dram_window_hops(an)[uidx]
    ball = ball_mean_hops(an)[uidx]
    prec = an.prec
    wsc = 1.0 if instance.weight_accounting == "set" else float(R)
    spf = np.where(spill, np.round(ire), 1.0)
    wspill = np.where(spill, wre, 1.0)
    dram_pj = 8 * hw.dram.energy_pj_per_bit * 1e-12
    hop_pj = 8 * an.hop_pj * 1e-12
    energy = (me + be) * runs
    dbytes = np.zeros_like(energy)
    for c in range(L):
        wb = an.weight_bytes[c]
        if wb > 0:
            energy[c] += wsc * wf[c] * hbar[c] * hop_pj
            dbytes[c] += wsc * wb * wspill[c]
        src = an.src_total[c]
        nin = iff[c] * runs[0]
        if src > 0:
            ext = an.ext[c]
            if ext:
                dbytes[c] += ext * prec * B * spf[c]
                energy[c] += nin * (ext / src) * hbar[c] * hop_pj
            for _p, e in an.preds[c]:
                share = e / src
                # the DRAM energy of a read is charged once, by ``dbytes`` below
                via_dram_hops = nin * share * hbar[c] * hop_pj
                via_noc = nin * share * ball[c] * hop_pj
                read_b = e * prec * B * spf[c]
                energy[c] += np.where(spill[c], via_dram_hops,
                                      np.minimum(via_dram_hops + read_b * dram_pj, via_noc))
                dbytes[c] += np.where(spill[c], read_b, 0.0)
        if not an.succs[c]:
            ob = of[c] * runs[0]
            dbytes[c] += ob
            energy[c] += ob * hbar[c] * hop_pj
    energy = energy + dbytes * dram_pj
    busy = np.arange(1, G + 1, dtype=float)[None, :, None] * cs * runs
    own = cs * runs
    inf = np.inf
    shape = (L, G * nb)
    return RowTerms(R, np.where(usable, energy, inf).reshape(shape),
                    np.where(usable, busy, inf).reshape(shape),
                    np.where(usable, own, inf).reshape(shape),
                    np.where(usable, dbytes, inf).reshape(shape),
                    np.where(usable, cs, inf).reshape(shape))


def energy_floor(terms: RowTerms, latency_s: float, n_tiles: int,
                 dram_bytes_per_s: float = np.inf, steps: int = 40) -> float:
    """A lower bound on the energy of any tree (with the terms' root run count) whose
    latency is at most ``latency_s``: the Lagrangian dual of "one usable row per layer,
    every row's own time ≤ D, the tiles' busy time ≤ G·D" —
    max over λ ≥ 0 of Σ_layers min_rows (energy + λ·busy) − λ·G·D, maximised by
    bisection on the supergradient (every λ tried gives a valid bound; the best is
    kept). ``inf`` when no row set fits D: a layer without a row of own time ≤ D, or
    the least busy time above G·D, or the least DRAM bytes above D at
    ``dram_bytes_per_s``."""
    e, busy, own = terms.energy_j, terms.busy_s, terms.own_s
    d = latency_s * (1 + 1e-9)  # the analyzer's sums may round a latency 1 ulp below
    cap = n_tiles * d
    fits = own <= d
    with np.errstate(invalid="ignore"):
        if (float(np.where(fits, busy, np.inf).min(axis=1).sum()) > cap
                or float(np.where(fits, terms.dram_bytes, np.inf).min(axis=1).sum())
                > dram_bytes_per_s * d):
            return np.inf
    base, tb = _lagrange_min(e, busy, own, d, 0.0)
    if not np.isfinite(base):
        return np.inf
    best = base
    if tb <= cap:
        return best  # the least-energy rows fit: no λ > 0 does better
    lo, hi = 0.0, max(base, 1e-300) / max(cap, 1e-300)
    for _ in range(200):  # find λ with the supergradient ≤ 0
        v, tb = _lagrange_min(e, busy, own, d, hi)
        best = max(best, v - hi * cap)
        if tb <= cap:
            break
        lo, hi = hi, hi * 4
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        v, tb = _lagrange_min(e, busy, own, d, mid)
        best = max(best, v - mid * cap)
        if tb > cap:
            lo = mid
        else:
            hi = mid
    return best


# ---------------------------------------------------------------------------------------
# the dependency-path envelope (issue 30): latency is at least every dependency path's
# run times plus one layer's remaining runs


@_njit
def _undominated(v: np.ndarray) -> np.ndarray:
    """Rows of ``v`` (rows × criteria, all finite) that no other row is at most in every
    criterion (of equal rows the first is kept)."""
    m, k = v.shape
    keep = np.ones(m, dtype=np.bool_)
    for a in range(m):
        for b in range(m):
            if a == b or not keep[b]:
                continue
            le = True
            eq = True
            for c in range(k):
                if v[b, c] > v[a, c]:
                    le = False
                    break
                if v[b, c] < v[a, c]:
                    eq = False
            if le and (not eq or b < a):
                keep[a] = False
                break
    return keep


@dataclass(frozen=True)
class PathLP:
    """The dependency-path LP of :class:`PathEnvelope` as matrices: minimise
    ``objective``·v subject to ``a_ub``·v ≤ ``b_ub``, ``a_eq``·v = 1 (one row per
    layer), v ≥ 0. The first ``len(layer)`` variables are the row weights x (layer
    ``layer[k]``, layer-table row ``row[k]``), then start times τ and tails σ per layer
    (and the latency, in latency mode); energies are divided by ``energy_scale``."""

    objective: np.ndarray
    a_ub: Any
    b_ub: np.ndarray
    a_eq: Any
    layer: np.ndarray
    row: np.ndarray
    energy_scale: float


class PathEnvelope:
    """The dependency-path relaxation of one root run count's rows (issue 30).

    Every tree runs each layer j in n_j = B/b_j runs of one table time t_j each, one after
    another on its tiles; a run of a consumer starts after the run of each producer that
    made its inputs has ended (T cuts run their children in order, an S cut's child waits
    for the children it depends on, segments and root runs follow one another). So along
    any dependency path P through j, the first sample passes P's layers before j (≥ one
    run each), j runs n_j times, and the last sample passes P's layers after j:

        latency ≥ Σ_{i ∈ P, i ≠ j} t_i + n_j·t_j      (= the row's own time for j).

    With start times τ_i ≥ τ_p + t_p and tails σ_p ≥ σ_c + t_c along every edge (p, c),
    the constraints τ_j + own_j + σ_j ≤ D for every j are those inequalities for every
    path at once. The row relaxation's capacity rows join them: busy time Σ busy ≤ G·D
    and DRAM time Σ DRAM bytes ≤ bandwidth·D. Rows are mixed fractionally (an LP,
    HiGHS), which gives :meth:`energy_floor` (least energy at latency ≤ D) and
    :meth:`latency_floor`. The LP's duals are not trusted as they stand: the bound
    returned is the Lagrangian value of those multipliers recomputed over *every*
    usable row (:meth:`lagrangian_energy`), valid whatever the LP solver's tolerances.
    """

    def __init__(self, terms: RowTerms, preds: Sequence[Sequence[tuple[int, Any]]],
                 n_tiles: int, dram_bytes_per_s: float):
        if terms.run_s is None:
            raise ValueError("the row terms carry no run times (row_terms gives them)")
        self.terms = terms
        L = terms.energy_j.shape[0]
        self.L = L
        # (per-row quantity, rate): Σ over layers of the chosen rows' quantity ≤ rate·D
        caps = [(terms.busy_s, float(n_tiles))]
        if np.isfinite(dram_bytes_per_s):
            caps.append((terms.dram_bytes, float(dram_bytes_per_s)))
        # every root run repeats the whole network: a path's other layers count R times
        self.path_scale = float(terms.root_runs)
        self.caps = caps
        src = [p for c in range(L) for p, _ in preds[c]]
        dst = [c for c in range(L) for _ in preds[c]]
        self.src = np.asarray(src, dtype=np.int64)
        self.dst = np.asarray(dst, dtype=np.int64)
        # a row at least as bad as another of its layer in every quantity the LP reads
        # never helps the LP (the recomputation still takes every row)
        self.keep: list[np.ndarray] = []
        for i in range(L):
            idx = np.flatnonzero(np.isfinite(terms.energy_j[i]))
            v = np.stack([terms.energy_j[i, idx], terms.run_s[i, idx], terms.own_s[i, idx],
                          *(q[i, idx] for q, _ in caps)], axis=1)
            self.keep.append(idx[_undominated(np.ascontiguousarray(v))])
        self.lps = 0
        self.lp_s = 0.0

    @property
    def n_rows(self) -> int:
        """Inequality rows of the LP: edges forward, edges backward, layers, capacities."""
        return 2 * len(self.src) + self.L + len(self.caps)

    def lp_model(self, latency_s: float | None, d_ref: float) -> PathLP | None:
        """The LP — least energy at latency ≤ ``latency_s``, or least latency when None
        — with times divided by ``d_ref`` and energies by their largest value, as
        matrices (None when a layer has no row within ``latency_s``)."""
        import scipy.sparse as sps

        T, L = self.terms, self.L
        energy_mode = latency_s is not None
        cols = []
        for i in range(L):
            k = self.keep[i]
            if energy_mode:
                k = k[T.own_s[i, k] <= latency_s * (1 + 1e-9)]
            if k.size == 0:
                return None
            cols.append(k)
        li = np.concatenate([np.full(len(k), i) for i, k in enumerate(cols)])
        ri = np.concatenate(cols)
        nx, nE, nC = len(li), len(self.src), len(self.caps)
        e = T.energy_j[li, ri]
        e_ref = float(e.max()) or 1.0
        run = T.run_s[li, ri] * self.path_scale / d_ref
        own = T.own_s[li, ri] / d_ref
        tau, sig, dvar = nx, nx + L, nx + 2 * L  # dvar: the latency (latency mode)
        n = nx + 2 * L + (0 if energy_mode else 1)
        start = np.searchsorted(li, np.arange(L + 1))  # layer i's columns: start[i]:start[i+1]
        r_, c_, v_ = [], [], []

        def add(rows: Any, cols_: Any, vals: Any) -> None:
            r_.append(np.broadcast_to(rows, np.shape(vals)))
            c_.append(np.broadcast_to(cols_, np.shape(vals)))
            v_.append(vals)

        er = np.arange(nE)
        # τ_p − τ_c + t_p(x) ≤ 0 and σ_c − σ_p + t_c(x) ≤ 0 for every edge (p, c)
        add(er, tau + self.src, np.ones(nE))
        add(er, tau + self.dst, -np.ones(nE))
        add(nE + er, sig + self.dst, np.ones(nE))
        add(nE + er, sig + self.src, -np.ones(nE))
        for k, (p, c) in enumerate(zip(self.src, self.dst, strict=True)):
            cp = np.arange(start[p], start[p + 1])
            cc = np.arange(start[c], start[c + 1])
            add(k, cp, run[cp])
            add(nE + k, cc, run[cc])
        # τ_j + own_j(x) + σ_j ≤ D
        jr = 2 * nE + np.arange(L)
        add(jr, tau + np.arange(L), np.ones(L))
        add(jr, sig + np.arange(L), np.ones(L))
        add(2 * nE + li, np.arange(nx), own)
        for x, (q, rate) in enumerate(self.caps):
            add(2 * nE + L + x, np.arange(nx), q[li, ri] / (rate * d_ref))
        m = 2 * nE + L + nC
        if energy_mode:
            b_ub = np.concatenate([np.zeros(2 * nE), np.ones(L + nC)])
            obj = np.concatenate([e / e_ref, np.zeros(2 * L)])
        else:
            add(2 * nE + np.arange(L + nC), dvar, -np.ones(L + nC))
            b_ub = np.zeros(m)
            obj = np.zeros(n)
            obj[dvar] = 1.0
        a_ub = sps.csr_matrix((np.concatenate(v_), (np.concatenate(r_), np.concatenate(c_))),
                              shape=(m, n))
        a_eq = sps.csr_matrix((np.ones(nx), (li, np.arange(nx))), shape=(L, n))
        return PathLP(obj, a_ub, b_ub, a_eq, li, ri, e_ref)

    def _lp(self, latency_s: float | None, d_ref: float) -> tuple[np.ndarray, float] | None:
        """Solve :meth:`lp_model`; return its inequality duals and energy scale (None
        unless HiGHS proved an optimum)."""
        from scipy.optimize import linprog

        t0 = time.perf_counter()
        lp = self.lp_model(latency_s, d_ref)
        if lp is None:
            return None
        res = linprog(lp.objective, A_ub=lp.a_ub, b_ub=lp.b_ub, A_eq=lp.a_eq,
                      b_eq=np.ones(self.L), bounds=(0, None), method="highs")
        self.lps += 1
        self.lp_s += time.perf_counter() - t0
        if res.status != 0:
            return None
        return -np.asarray(res.ineqlin.marginals, dtype=float), lp.energy_scale

    def _penalized(self, y: np.ndarray, d_ref: float, e_ref: float | None,
                   latency_s: float | None) -> tuple[float, float]:
        """(Σ over layers of the least penalized row, Σ of the multipliers of rows whose
        right-hand side is D) for multipliers ``y`` ≥ 0 (times in units of ``d_ref``;
        energies in units of ``e_ref``, or left out when None); every usable row takes
        part (with ``latency_s``, those of own time ≤ it). The per-layer multipliers are
        raised first until the start times τ and tails σ have non-negative coefficients
        (otherwise their minimum would be −∞)."""
        T, L, nE = self.terms, self.L, len(self.src)
        y = np.maximum(np.asarray(y, dtype=float), 0.0)
        yf, yb = y[:nE], y[nE:2 * nE]
        z = y[2 * nE:2 * nE + L].copy()
        w = y[2 * nE + L:]
        a = np.bincount(self.src, yf, L) + np.bincount(self.dst, yb, L)
        c_tau = z + np.bincount(self.src, yf, L) - np.bincount(self.dst, yf, L)
        c_sig = z + np.bincount(self.dst, yb, L) - np.bincount(self.src, yb, L)
        z += np.maximum(0.0, np.maximum(-c_tau, -c_sig))
        ok = np.isfinite(T.energy_j)
        if latency_s is not None:
            ok &= T.own_s <= latency_s * (1 + 1e-9)
        with np.errstate(invalid="ignore"):
            pen = (a[:, None] * T.run_s * self.path_scale + z[:, None] * T.own_s) / d_ref
            if e_ref is not None:
                pen = pen + T.energy_j / e_ref
            for wx, (q, rate) in zip(w, self.caps, strict=True):
                if wx > 0:
                    pen = pen + wx * q / (rate * d_ref)
        pen = np.where(ok, pen, np.inf)
        return float(pen.min(axis=1).sum()), float(z.sum() + w.sum())

    def latency_floor(self, reference_s: float) -> float:
        """A lower bound on the latency of every tree with these rows (0 if the LP
        fails): for the LP's multipliers y, D ≥ Σ_layers min_rows (penalties) / Σ y of
        the rows bounded by D. ``reference_s`` (a latency of the right order) scales
        the LP."""
        out = self._lp(None, float(reference_s))
        if out is None:
            return 0.0
        val, denom = self._penalized(out[0], float(reference_s), None, None)
        return float(reference_s) * val / denom if denom > 0 else 0.0

    def energy_floor(self, latency_s: float) -> float:
        """A lower bound on the energy of every tree with these rows and latency at most
        ``latency_s`` (``-inf`` if the LP fails): :meth:`lagrangian_energy` of the LP's
        duals."""
        out = self._lp(float(latency_s), float(latency_s))
        if out is None:
            return -np.inf
        return self.lagrangian_energy(out[0], float(latency_s), out[1])

    def lagrangian_energy(self, y: np.ndarray, latency_s: float, e_ref: float = 1.0
                          ) -> float:
        """The Lagrangian bound on the energy at latency ≤ ``latency_s`` of any
        non-negative multipliers ``y`` of the LP's :attr:`n_rows` inequality rows (time
        rows divided by ``latency_s``, energies by ``e_ref``): Σ over layers of the least
        penalized usable row − Σ of the multipliers of rows bounded by D. Valid for
        every ``y`` ≥ 0 (:meth:`_penalized` raises what must be raised)."""
        val, rhs = self._penalized(y, float(latency_s), e_ref, latency_s)
        return e_ref * (val - rhs)


@dataclass(frozen=True)
class FullSpaceBound:
    """The full-space bound of issue 30 and its parts.

    ``objective`` bounds E^n·D^m of every tree; ``by_root_runs`` the bound of the trees
    whose root runs R times (R → objective; ``inf`` when no tree can); ``envelope`` the
    points (D, E*(D)) of the lower envelope — no tree of latency ≤ D has energy below
    E*(D); ``energy_j``/``latency_s`` the least energy and least latency of any tree;
    ``basic`` the per-layer bound of :func:`lower_bound` (never above this one);
    ``paths`` what the dependency-path envelope (:class:`PathEnvelope`) did: root run
    counts it refined, LPs solved, their seconds, and whether it finished (``False``
    when the budget ran out first; the bound is then the row bound's where it stopped)."""

    objective: float
    root_runs: int
    energy_j: float
    latency_s: float
    by_root_runs: dict[int, float]
    envelope: tuple[tuple[float, float], ...]
    basic: LowerBound
    seconds: float
    paths: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"energy_j": self.energy_j, "latency_s": self.latency_s,
                "root_runs": self.root_runs,
                "by_root_runs": {str(k): v for k, v in self.by_root_runs.items()},
                "envelope": [list(p) for p in self.envelope],
                "basic": {"objective": self.basic.objective, **self.basic.to_dict()},
                "paths": self.paths, "seconds": self.seconds}


def _latency_floor(terms: RowTerms, n_tiles: int, hw: Any) -> float:
    with np.errstate(invalid="ignore"):
        work = float(terms.busy_s.min(axis=1).sum()) / n_tiles
        own = float(terms.own_s.min(axis=1).max()) if terms.own_s.size else 0.0
        dram = float(dram_time_s(float(terms.dram_bytes.min(axis=1).sum()), hw))
    return max(work, own, dram)


def path_latency(run_s: np.ndarray, own_s: np.ndarray,
                 preds: Sequence[Sequence[tuple[int, Any]]], root_runs: int = 1) -> float:
    """max over layers j of (longest dependency path into j) + own_j + (longest path out
    of j), a path's length being the run times of its other layers — the latency the
    path relaxation (:class:`PathEnvelope`) gives one choice of rows (``run_s``,
    ``own_s``: one value per layer; layers in a topological order). A root that runs
    ``root_runs`` times repeats every path that often: the other layers' run times
    count ``root_runs`` times."""
    run_s = np.asarray(run_s, dtype=float) * root_runs
    L = len(run_s)
    head = np.zeros(L)
    for c in range(L):
        for p, _ in preds[c]:
            head[c] = max(head[c], head[p] + run_s[p])
    tail = np.zeros(L)
    for c in range(L - 1, -1, -1):
        for p, _ in preds[c]:
            tail[p] = max(tail[p], tail[c] + run_s[c])
    return float((head + own_s + tail).max()) if L else 0.0


def tree_path_latency(instance: Any, tree: Any) -> float:
    """:func:`path_latency` of the rows ``tree`` (a :class:`~.tree.Node`) runs its layers
    on — the dependency-path latency the relaxation charges that tree, at most its
    latency (the theorem of :class:`PathEnvelope`)."""
    an = instance.analyzer
    segs, b, runs = an.segments_of(tree)
    terms = row_terms(instance, runs)
    nb, L = len(an.table.batches), len(an.names)
    run, own = np.zeros(L), np.zeros(L)
    for s in segs:
        leaves: list[Any] = []
        an.walk(s, b, 0, an.G, 1, (), leaves, {})
        for lf in leaves:
            col = (lf.hi - lf.lo - 1) * nb + an.bidx[lf.batch]
            run[lf.layer], own[lf.layer] = terms.run_s[lf.layer, col], terms.own_s[lf.layer, col]
    return path_latency(run, own, an.preds, runs)


def _staircase(obj: Any, pts: list[float], floor: dict[float, float],
               e_least: float) -> list[float]:
    """obj(E*(d_{k+1}), d_k) per step, and obj(least energy, last point) beyond it."""
    v = [obj(max(floor[pts[i + 1]], 0.0), pts[i]) for i in range(len(pts) - 1)]
    return v + [obj(e_least, pts[-1])]


def _refined(obj: Any, pts: list[float], floor: dict[float, float], e_least: float,
             floor_at: Any, refinements: int) -> float:
    """Refine the grid ``refinements`` times at the binding step (its geometric middle;
    ``floor_at(d)`` gives the floor there) and return the staircase's least value."""
    for _ in range(refinements if len(pts) > 1 else 0):
        vals = _staircase(obj, pts, floor, e_least)
        i = int(np.argmin(vals))
        if i == len(pts) - 1:
            break
        mid = float(np.sqrt(pts[i] * pts[i + 1]))
        if not pts[i] < mid < pts[i + 1]:
            break
        floor[mid] = floor_at(mid)
        pts.insert(i + 1, mid)
    return float(min(_staircase(obj, pts, floor, e_least)))


def _grid(d_lo: float, d_hi: float, grid: int) -> list[float]:
    return sorted({d_lo, d_hi, *np.geomspace(d_lo, d_hi, grid).tolist()}) \
        if d_hi > d_lo else [d_lo]


def full_space_bound(instance: Any, refinements: int = 24, grid: int = 12,
                     paths: bool = True, budget: Any = None,
                     progress: Any = None, terms: Any = None) -> FullSpaceBound:
    """A lower bound on E^n·D^m over every tree the analyzer accepts (issue 30): for
    each root run count R (:func:`row_terms`), the staircase of the energy envelope
    (:func:`energy_floor`) over latency: for D in [d_k, d_{k+1}], E ≥ E*(d_{k+1}) and
    D ≥ d_k, so min_k obj(E*(d_{k+1}), d_k) with the last step open (E ≥ the least
    energy); the grid starts at the least latency, is geometric up to the latency of the
    least-energy rows and is refined ``refinements`` times at the binding step. The
    bound is the least over R (every tree has one).

    With ``paths`` the root run counts whose row bound is below the best bound so far
    (least first) are refined by the dependency-path envelope (:class:`PathEnvelope`):
    its least latency starts the grid, and each point's floor is the larger of the two
    envelopes'. ``budget`` (a :class:`~chipsched.budget.Budget`) stops that refinement
    when it runs out; the row bound stands for what was not refined. ``progress(done,
    total, note)`` hears of every LP (``total``: the most the refinement may solve).
    ``terms(instance, R)`` replaces :func:`row_terms` (what-if probes of a candidate
    term, ``benchmarks/tile_groups_map_probes.py``; the result is then a bound only if
    the replacement's terms are)."""
    t0 = time.perf_counter()
    make_terms = terms or row_terms
    an = instance.analyzer
    G, B, hw = an.G, an.B, an.hw
    bw = float(hw.dram.bytes_per_s)
    obj = instance.objective
    basic = lower_bound(instance)
    by_r: dict[int, float] = {}
    curves: dict[int, tuple[list[tuple[float, float]], float]] = {}
    kept: dict[int, tuple[RowTerms, float, float]] = {}
    e_min = np.inf
    d_min: dict[int, float] = {}
    for R in divisors(B):
        terms = make_terms(instance, R)
        if not np.all(np.isfinite(terms.energy_j.min(axis=1))):
            by_r[R] = np.inf  # some layer has no usable row with this R
            continue
        e_r = float(terms.energy_j.min(axis=1).sum())
        d_lo = _latency_floor(terms, G, hw)
        k = terms.energy_j.argmin(axis=1)
        pick = (np.arange(len(k)), k)
        d_hi = max(d_lo, float(terms.busy_s[pick].sum()) / G, float(terms.own_s[pick].max()),
                   float(dram_time_s(float(terms.dram_bytes[pick].sum()), hw)))
        e_min, d_min[R] = min(e_min, e_r), d_lo
        pts = _grid(d_lo, d_hi, grid)
        floor = {d: energy_floor(terms, d, G, bw) for d in pts}
        by_r[R] = _refined(obj, pts, floor, e_r,
                           lambda d, terms=terms: energy_floor(terms, d, G, bw), refinements)
        curves[R] = ([(d, floor[d]) for d in pts], e_r)
        kept[R] = (terms, e_r, d_hi)
    finite = {r: v for r, v in by_r.items() if np.isfinite(v)}
    if not finite:  # cannot happen for an instance that passed check_fits
        raise InputError(f"instance {instance.name!r}", "no root run count has a usable "
                         "row for every layer", "use a chip with larger buffers")
    path_stats: dict[str, Any] | None = None
    if paths:
        path_stats = {"root_runs": [], "lps": 0, "lp_s": 0.0, "complete": True}
        most = len(finite) * (grid + refinements + 3)  # LPs at most: latency, grid, refinements
        best = np.inf
        for R in sorted(finite, key=finite.__getitem__):
            if by_r[R] >= best:
                break  # sorted: no later R can lower the least bound
            if budget is not None and budget.exhausted():
                path_stats["complete"] = False
                break
            terms, e_r, d_hi = kept[R]
            pe = PathEnvelope(terms, an.preds, G, bw)
            d0 = max(d_min[R], pe.latency_floor(d_min[R]))
            k = terms.energy_j.argmin(axis=1)
            pick = (np.arange(len(k)), k)
            d1 = max(d0, d_hi, path_latency(terms.run_s[pick], terms.own_s[pick], an.preds,
                                            R))

            def floor_at(d: float, terms: RowTerms = terms, pe: PathEnvelope = pe,
                         R: int = R) -> float:
                f = energy_floor(terms, d, G, bw)
                if np.isfinite(f) and (budget is None or not budget.exhausted()):
                    f = max(f, pe.energy_floor(d))
                    if progress is not None:
                        progress(path_stats["lps"] + pe.lps, most, "bound: dependency-path "
                                 f"envelope, root run count {R}, {pe.lps} LPs")
                return f

            pts = _grid(d0, d1, grid)
            floor = {d: floor_at(d) for d in pts}
            v = _refined(obj, pts, floor, e_r, floor_at, refinements)
            by_r[R] = max(by_r[R], v)
            best = min(best, by_r[R])
            d_min[R] = d0
            curves[R] = ([(d, floor[d]) for d in pts], e_r)
            path_stats["root_runs"].append(R)
            path_stats["lps"] += pe.lps
            path_stats["lp_s"] += pe.lp_s
        if budget is not None and budget.exhausted():
            path_stats["complete"] = False
        finite = {r: v for r, v in by_r.items() if np.isfinite(v)}
    best_r = min(finite, key=finite.__getitem__)
    ds = sorted({d for c, _ in curves.values() for d, _ in c})
    env = []
    for d in ds:
        # a tree with root run count R and latency ≤ d has energy ≥ that R's floor at
        # the smallest of its points ≥ d (or its least energy beyond its last point)
        lows = []
        for c, e_r in curves.values():
            nxt = [e for dd, e in c if dd >= d]
            lows.append(nxt[0] if nxt else e_r)
        env.append((d, float(min(lows))))
    return FullSpaceBound(objective=finite[best_r], root_runs=best_r, energy_j=float(e_min),
                          latency_s=float(min(d_min.values())), by_root_runs=by_r,
                          envelope=tuple(env), basic=basic,
                          seconds=time.perf_counter() - t0, paths=path_stats)
