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


def ball_mean_hops(an: Any) -> np.ndarray:
    """``b[k]`` (index k − 1): the least mean Manhattan distance from one tile to k
    distinct tiles of the mesh (itself at distance 0 included). A feature map sent
    all-to-all from a producer's tiles to a consumer's k tiles travels at least this
    many hops per byte: for each producer tile the mean over the k consumer tiles is at
    least ``b[k]``."""
    r, c = np.asarray(an.tr), np.asarray(an.tc)
    d = np.abs(r[:, None] - r[None, :]) + np.abs(c[:, None] - c[None, :])
    d.sort(axis=1)
    cum = np.cumsum(d, axis=1).min(axis=0)
    return cum / np.arange(1, len(r) + 1)


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
    """Compile the envelope kernel on tiny inputs (``chipsched.jit``)."""
    z = np.zeros((1, 1))
    _lagrange_min(z, z, z, 1.0, 0.5)


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
                via_dram = (e * prec * B * spf[c] * dram_pj
                            + nin * share * hbar[c] * hop_pj)
                via_noc = nin * share * ball[c] * hop_pj
                energy[c] += np.where(spill[c], via_dram, np.minimum(via_dram, via_noc))
                dbytes[c] += np.where(spill[c], e * prec * B * spf[c], 0.0)
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
                    np.where(usable, dbytes, inf).reshape(shape))


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


@dataclass(frozen=True)
class FullSpaceBound:
    """The full-space bound of issue 30 and its parts.

    ``objective`` bounds E^n·D^m of every tree; ``by_root_runs`` the bound of the trees
    whose root runs R times (R → objective; ``inf`` when no tree can); ``envelope`` the
    points (D, E*(D)) of the lower envelope — no tree of latency ≤ D has energy below
    E*(D); ``energy_j``/``latency_s`` the least energy and least latency of any tree;
    ``basic`` the per-layer bound of :func:`lower_bound` (never above this one)."""

    objective: float
    root_runs: int
    energy_j: float
    latency_s: float
    by_root_runs: dict[int, float]
    envelope: tuple[tuple[float, float], ...]
    basic: LowerBound
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {"energy_j": self.energy_j, "latency_s": self.latency_s,
                "root_runs": self.root_runs,
                "by_root_runs": {str(k): v for k, v in self.by_root_runs.items()},
                "envelope": [list(p) for p in self.envelope],
                "basic": {"objective": self.basic.objective, **self.basic.to_dict()},
                "seconds": self.seconds}


def _latency_floor(terms: RowTerms, n_tiles: int, hw: Any) -> float:
    with np.errstate(invalid="ignore"):
        work = float(terms.busy_s.min(axis=1).sum()) / n_tiles
        own = float(terms.own_s.min(axis=1).max()) if terms.own_s.size else 0.0
        dram = float(dram_time_s(float(terms.dram_bytes.min(axis=1).sum()), hw))
    return max(work, own, dram)


def full_space_bound(instance: Any, refinements: int = 24,
                     grid: int = 12) -> FullSpaceBound:
    """A lower bound on E^n·D^m over every tree the analyzer accepts (issue 30): for
    each root run count R (:func:`row_terms`), the staircase of the energy envelope
    (:func:`energy_floor`) over latency: for D in [d_k, d_{k+1}], E ≥ E*(d_{k+1}) and
    D ≥ d_k, so min_k obj(E*(d_{k+1}), d_k) with the last step open (E ≥ the least
    energy); the grid starts at the least latency, is geometric up to the latency of the
    least-energy rows and is refined ``refinements`` times at the binding step. The
    bound is the least over R (every tree has one)."""
    t0 = time.perf_counter()
    an = instance.analyzer
    G, B, hw = an.G, an.B, an.hw
    obj = instance.objective
    basic = lower_bound(instance)
    by_r: dict[int, float] = {}
    curves: list[tuple[list[tuple[float, float]], float]] = []
    e_min, d_min = np.inf, np.inf
    for R in divisors(B):
        terms = row_terms(instance, R)
        if not np.all(np.isfinite(terms.energy_j.min(axis=1))):
            by_r[R] = np.inf  # some layer has no usable row with this R
            continue
        e_r = float(terms.energy_j.min(axis=1).sum())
        d_lo = _latency_floor(terms, G, hw)
        k = terms.energy_j.argmin(axis=1)
        pick = (np.arange(len(k)), k)
        d_hi = max(d_lo, float(terms.busy_s[pick].sum()) / G, float(terms.own_s[pick].max()),
                   float(dram_time_s(float(terms.dram_bytes[pick].sum()), hw)))
        e_min, d_min = min(e_min, e_r), min(d_min, d_lo)
        pts = sorted({d_lo, d_hi, *np.geomspace(d_lo, d_hi, grid).tolist()}) \
            if d_hi > d_lo else [d_lo]
        bw = float(hw.dram.bytes_per_s)
        floor = {d: energy_floor(terms, d, G, bw) for d in pts}

        def steps(pts=pts, floor=floor, e_r=e_r) -> list[float]:
            v = [obj(floor[pts[i + 1]], pts[i]) for i in range(len(pts) - 1)]
            return v + [obj(e_r, pts[-1])]

        for _ in range(refinements if len(pts) > 1 else 0):
            vals = steps()
            i = int(np.argmin(vals))
            if i == len(pts) - 1:
                break
            mid = float(np.sqrt(pts[i] * pts[i + 1]))
            if not pts[i] < mid < pts[i + 1]:
                break
            floor[mid] = energy_floor(terms, mid, G, bw)
            pts.insert(i + 1, mid)
        by_r[R] = float(min(steps()))
        curves.append(([(d, floor[d]) for d in pts], e_r))
    finite = {r: v for r, v in by_r.items() if np.isfinite(v)}
    if not finite:  # cannot happen for an instance that passed check_fits
        raise InputError(f"instance {instance.name!r}", "no root run count has a usable "
                         "row for every layer", "use a chip with larger buffers")
    best_r = min(finite, key=finite.__getitem__)
    ds = sorted({d for c, _ in curves for d, _ in c})
    env = []
    for d in ds:
        # a tree with root run count R and latency ≤ d has energy ≥ that R's floor at
        # the smallest of its points ≥ d (or its least energy beyond its last point)
        lows = []
        for c, e_r in curves:
            nxt = [e for dd, e in c if dd >= d]
            lows.append(nxt[0] if nxt else e_r)
        env.append((d, float(min(lows))))
    return FullSpaceBound(objective=finite[best_r], root_runs=best_r, energy_j=float(e_min),
                          latency_s=float(d_min), by_root_runs=by_r, envelope=tuple(env),
                          basic=basic, seconds=time.perf_counter() - t0)
