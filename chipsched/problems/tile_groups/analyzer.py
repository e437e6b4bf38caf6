"""The tile_groups analyzer: a resource allocation tree → tile groups, dataflow, time,
energy.

Every number comes from ``chipsched.cost`` (the layer table, XY link loads, DRAM and
NoC formulas); the rules that turn a tree into those numbers are SET's (seed 002)
where the document gives them and ours where it is silent — each one is written out
in ``docs/tile_groups.md`` ("The analyzer") with the hand-computed test that pins it.

Structure of the computation (one function per step):

1. :meth:`Analyzer.walk` — batch, tile range and run count of every node; S cuts
   split their tiles by :func:`optimal_allocation` of the children's NPT
   (:meth:`Analyzer.npt`) or by an explicit allocation; stripe ids → mesh positions.
2. :meth:`Analyzer.routes` — the dataflow rules: which inputs come from DRAM and which
   over the NoC from the producer's tiles, which outputs go to DRAM.
3. :meth:`Analyzer.segment` — per root child ("segment"): per-layer costs from the
   layer table, buffer-capacity accounting, DRAM bytes, NoC link loads, the event
   simulation of the segment (:func:`pipeline_finish` at every S cut) and the
   segment's time = max(compute, DRAM, NoC).
4. :meth:`Analyzer.totals` — sums over the root T cut's children and sub-batches.

Segments are cached by (subtree, batch): a tree that differs from a known one in one
root child costs one segment evaluation (the SA's incremental re-evaluation). Steps 1–3
run compiled (``segment_kernel.py``, the same rules and arithmetic in one numba kernel;
:attr:`Analyzer.compiled`); the Python methods below are its reference, and they give
the per-layer, per-flow and per-tile details of :meth:`Analyzer.segment_detail` and the
messages of rejected segments.
"""

from __future__ import annotations

import functools
import heapq
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from chipsched.cost import (
    CostModel,
    EnergyBreakdown,
    LayerTable,
    divisors,
    dram_energy_j,
    dram_time_s,
    noc_energy_j,
    noc_time_s,
)
from chipsched.errors import InputError
from chipsched.objective import Objective
from chipsched.problems.tile_groups import geometry as geo
from chipsched.problems.tile_groups import segment_kernel as sk
from chipsched.problems.tile_groups.tree import (
    LEAF,
    SCUT,
    TCUT,
    Node,
    iter_nodes,
    path_str,
    short_text,
)

if TYPE_CHECKING:
    from chipsched.problems.tile_groups.instance import Instance

class Infeasible(InputError):
    """A tree the analyzer cannot run (names the node or layer); an :class:`InputError`."""


#: How many segment results an analyzer keeps (a plain dict, cleared when full).
SEGMENT_CACHE_SIZE = 200_000


class LayerRow(NamedTuple):
    """One layer-table entry as the analyzer reads it — a layer on g units at one
    sub-batch (``chipsched.cost.LayerTable``'s fields of the same names). The analyzer
    stacks the table in this column order (``Analyzer.rows``, last axis)."""

    compute_s: float
    units_used: float
    weight_fetch_bytes: float
    ifmap_fetch_bytes: float
    ofmap_bytes: float
    footprint_bytes: float
    mac_energy_j: float
    buffer_energy_j: float
    weight_rereads: float
    input_rereads: float


#: column index of each :class:`LayerRow` field in ``Analyzer.rows``
COLUMN = {name: k for k, name in enumerate(LayerRow._fields)}


# ---------------------------------------------------------------------------------------
# tile allocation


def optimal_allocation(npt: Sequence[float], tiles: int) -> tuple[int, ...]:
    """Integer tile counts ``a`` (all ≥ 1, summing to ``tiles``) minimizing
    ``max_i npt_i / a_i`` — SET's allocation of an S cut's tiles to its children in
    proportion to their normalized processing time (seed 002 "Tile allocation",
    docs/tile_groups.md).

    Greedy: start from one tile each and give every further tile to the child with the
    largest ``npt_i / a_i`` (lowest index on ties). Each step lowers the current
    maximum as far as one tile can, so the result is optimal for the min-max (the
    classical argument for separable non-increasing functions; a test checks it
    against a MILP on random cases). Among optimal allocations it is the
    lexicographically smallest vector of sorted ratios.
    """
    n = len(npt)
    if n < 1 or n > tiles:
        raise InputError("allocation", f"{n} children for {tiles} tiles")
    a = [1] * n
    heap = [(-float(t), i) for i, t in enumerate(npt)]
    heapq.heapify(heap)
    for _ in range(tiles - n):
        _, i = heapq.heappop(heap)
        a[i] += 1
        heapq.heappush(heap, (-float(npt[i]) / a[i], i))
    return tuple(a)


def pipeline_finish(durations: Sequence[float], deps: Sequence[Sequence[int]],
                    sb: int) -> np.ndarray:
    """Event simulation of one run of an S cut: finish time of child i on sub-batch k.

    Child i processes sub-batches 0..sb-1 in order on its own tiles; it starts
    sub-batch k when it has finished k-1 and every child it depends on (within the
    cut) has finished k (seed 002: "a child that depends on another starts at least
    one sub-batch after it")::

        F[i][k] = max(F[i][k-1], max_{p in deps[i]} F[p][k]) + d_i,   F[i][-1] = 0

    Small cuts run this recurrence directly; large ones (children × sb > 512) use its
    unrolled form ``F[i][k] = (k+1)·d_i + max(0, max_{j≤k} (a[j] − j·d_i))`` with
    ``a = max_p F[p]``, a cumulative maximum vectorized over k (equal up to rounding; a
    test checks both).
    """
    n = len(durations)
    if n * sb <= 512:
        rows: list[list[float]] = []
        for i in range(n):
            d = float(durations[i])
            ps = [rows[p] for p in deps[i]]
            f, row = 0.0, []
            for k in range(sb):
                a = f
                for q in ps:
                    if q[k] > a:
                        a = q[k]
                f = a + d
                row.append(f)
            rows.append(row)
        return np.array(rows, dtype=float).reshape(n, sb)
    F = np.zeros((n, sb))
    kk = np.arange(sb, dtype=float)
    for i in range(n):
        d = float(durations[i])
        if deps[i]:
            a = F[deps[i][0]].copy()
            for p in deps[i][1:]:
                np.maximum(a, F[p], out=a)
            F[i] = (kk + 1) * d + np.maximum(0.0, np.maximum.accumulate(a - kk * d))
        else:
            F[i] = (kk + 1) * d
    return F


# ---------------------------------------------------------------------------------------
# results


class SegmentCost(NamedTuple):
    """One run of one root child (segment): seconds, joules, bytes."""

    time: float  # max(compute, dram, noc)
    compute: float  # event-simulated compute time
    dram_time: float
    noc_time: float
    dram_j: float
    noc_j: float
    mac_j: float
    buffer_j: float
    dram_bytes: float
    byte_hops: float
    dram_read: float
    dram_write: float

    @property
    def energy(self) -> float:
        return self.dram_j + self.noc_j + self.mac_j + self.buffer_j

    @property
    def bound_by(self) -> str:
        """What limits the segment: 'compute', 'dram' or 'noc'."""
        if self.time <= self.compute:
            return "compute"
        return "dram" if self.dram_time >= self.noc_time else "noc"


@dataclass(frozen=True)
class Totals:
    """A whole tree: latency (s), energy split, bytes."""

    latency: float
    energy: EnergyBreakdown
    dram_bytes: float
    byte_hops: float
    segments: tuple[SegmentCost, ...]
    root_runs: int

    @property
    def energy_j(self) -> float:
        return self.energy.total


def get_layer(node: Node, path: tuple[int, ...]) -> int:
    """Layer of the leaf at ``path`` below ``node``."""
    for i in path:
        node = node.children[i]
    return node.layer



class _Rejected:
    """A cached rejection of a segment: the fields of its :class:`Infeasible` (not the
    exception, whose traceback holds every frame's locals — the tile-cover matrices,
    15 GiB on PNASNet-5 Large/cloud), or, for a segment the compiled kernel rejected,
    the recipe that builds them when a caller first reads the message."""

    __slots__ = ("_fields", "_build")

    def __init__(self, fields: tuple[str, str, str | None] | None = None,
                 build: Callable[[], Infeasible] | None = None):
        self._fields = fields
        self._build = build

    def fields(self) -> tuple[str, str, str | None]:
        if self._fields is None:
            assert self._build is not None
            exc = self._build()
            self._fields, self._build = (exc.field, exc.problem, exc.fix), None
        return self._fields

    def error(self) -> Infeasible:
        if self._fields is not None:
            return Infeasible(*self._fields)
        return _KernelRejection(self)


class _KernelRejection(Infeasible):
    """The :class:`Infeasible` of a segment the compiled kernel rejected, whose message
    (the Python steps' words, :meth:`Analyzer._kernel_rejection`) is built on first
    read: the SA drops thousands of rejected segments a run without reading why, and
    building each message walked the segment again (a tenth of its time)."""

    def __init__(self, rejected: _Rejected):
        Exception.__init__(self)
        self.rejected = rejected

    field = property(lambda self: self.rejected.fields()[0])  # type: ignore[assignment]
    problem = property(lambda self: self.rejected.fields()[1])  # type: ignore[assignment]
    fix = property(lambda self: self.rejected.fields()[2])  # type: ignore[assignment]

    @property  # type: ignore[override]
    def args(self) -> tuple[str]:
        return (str(self),)

    def __str__(self) -> str:
        return str(Infeasible(*self.rejected.fields()))

    def __repr__(self) -> str:
        return f"Infeasible({str(self)!r})"


@dataclass(slots=True)
class _Leaf:
    layer: int
    batch: int
    lo: int
    hi: int
    runs: int
    path: tuple[int, ...]


@dataclass(slots=True)
class _Traffic:
    """What the leaves of one segment move and hold (filled by ``Analyzer._traffic``):
    NoC link loads (bytes per link), each leaf's used tile range [lo, hi), its per-tile
    DRAM input/output bytes, pinned weights, working set and waiting inputs, and the
    segment's DRAM bytes, energies, longest flow and (with details) its flows."""

    link: np.ndarray
    los: np.ndarray
    his: np.ndarray
    v_in: np.ndarray
    v_out: np.ndarray
    v_pin: np.ndarray
    v_own: np.ndarray
    v_held: np.ndarray
    dram_read: float = 0.0
    dram_write: float = 0.0
    mac_j: float = 0.0
    buf_j: float = 0.0
    hops_max: int = 0
    flows: list[dict[str, Any]] = field(default_factory=list)



# ---------------------------------------------------------------------------------------
# the analyzer


@dataclass(frozen=True)
class SegmentSums:
    """A tree's segments, their costs (one root run), its root batch and runs, and the
    sums of segment time and energy (:meth:`Analyzer.sums`)."""

    segments: tuple[Node, ...]
    costs: tuple[SegmentCost, ...]
    batch: int
    runs: int
    time: float
    energy: float

    def objective(self, objective: Objective) -> float:
        return objective(self.runs * self.energy, self.runs * self.time)


class Analyzer:
    """Turns trees of one :class:`Instance` into costs; caches tables and segments."""

    def __init__(self, instance: Instance):
        self.inst = instance
        w, hw = instance.workload, instance.hardware
        self.names = instance.layer_names
        self.G = hw.n_units
        self.B = instance.batch
        self.buf = float(hw.unit.buffer_bytes)
        self.prec = w.precision_bytes
        self.hw = hw
        self.table: LayerTable = CostModel(w, hw).layer_table(divisors(self.B), self.G)
        t = self.table
        self.bidx = {b: j for j, b in enumerate(t.batches)}
        # (layer, units − 1, sub-batch index, LayerRow column)
        self.rows = np.stack([np.asarray(getattr(t, f), dtype=float)
                              for f in LayerRow._fields], axis=-1)
        n = len(w)
        self.preds = [tuple((p, w.edge_elems[(p, c)]) for p in w.preds[c]) for c in range(n)]
        self.succs = w.succs
        # network inputs: what no producer supplies, plus an embedding's gathered rows
        self.ext = [max(0, w.layers[c].in_elems - sum(e for _, e in self.preds[c]))
                    + w.layers[c].gathered_elems for c in range(n)]
        self.src_total = [self.ext[c] + sum(e for _, e in self.preds[c]) for c in range(n)]
        self.weight_bytes = [float(ly.resident_weight_elems * self.prec) for ly in w.layers]
        self.npt1 = [float(x) for x in t.compute_s[:, 0, self.bidx[1]]]
        # geometry: stripe id -> (row, col), DRAM port flows per stripe id
        self.tr, self.tc = geo.stripe_positions(hw.rows, hw.cols, instance.stripe_width)
        self.m_in, self.m_out, self.dram_hops = geo.port_matrices(
            hw.rows, hw.cols, self.tr, self.tc, hw.dram.ports)
        self.n_links = geo.n_links(hw.rows, hw.cols)
        self.ar = np.arange(self.G)
        self.hop_pj = hw.noc.hop_energy_pj_per_bit
        self._seg: dict[tuple[Node, int], SegmentCost | _Rejected] = {}
        self._a2a_cache: dict[tuple[int, int, int, int], tuple[np.ndarray, float, int]] = {}
        self._npt: dict[Node, float] = {}
        self._sdeps: dict[Node, tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]] = {}
        self._rows: dict[tuple[int, int, int], LayerRow] = {}
        self.check_fits()
        #: segments are evaluated by the compiled kernel (``segment_kernel.py``); False
        #: runs the Python steps below instead (the kernel's reference in the tests)
        self.compiled = sk.HAVE_NUMBA and isinstance(self.prec, int)
        self._kernel_args = self._kernel_arrays()

    def _kernel_arrays(self) -> tuple[Any, ...]:
        """The instance's arrays in the order :func:`segment_kernel.segment_kernel` takes
        them after (flat, batch, G, buffer, precision, weight scale)."""
        n = len(self.names)
        pred_ptr = np.zeros(n + 1, dtype=np.int64)
        succ_ptr = np.zeros(n + 1, dtype=np.int64)
        for c in range(n):
            pred_ptr[c + 1] = pred_ptr[c] + len(self.preds[c])
            succ_ptr[c + 1] = succ_ptr[c] + len(self.succs[c])
        pred_src = np.array([p for c in range(n) for p, _ in self.preds[c]], dtype=np.int64)
        pred_e = np.array([e for c in range(n) for _, e in self.preds[c]], dtype=np.int64)
        succ_dst = np.array([s for c in range(n) for s in self.succs[c]], dtype=np.int64)
        bidx = np.full(self.B + 1, -1, dtype=np.int64)
        for b, j in self.bidx.items():
            bidx[b] = j
        return (np.ascontiguousarray(self.rows), bidx,
                pred_ptr, pred_src, pred_e, succ_ptr, succ_dst,
                np.array(self.ext, dtype=np.int64), np.array(self.src_total, dtype=np.int64),
                np.array(self.weight_bytes, dtype=float), np.array(self.npt1, dtype=float),
                np.ascontiguousarray(self.tr, dtype=np.int64),
                np.ascontiguousarray(self.tc, dtype=np.int64), self.hw.rows, self.hw.cols,
                np.ascontiguousarray(self.m_in), np.ascontiguousarray(self.m_out),
                np.ascontiguousarray(self.dram_hops, dtype=np.int64), self.n_links)

    # -- step 0: the network must fit layer by layer ---------------------------------
    def check_fits(self) -> None:
        """Every layer must run alone on all tiles with sub-batch 1: its working set fits
        the buffer, or (weights streaming, cost-model §3) its activations fit half of it.
        Otherwise no tree can run the network: :class:`InputError` naming the layer."""
        j = self.bidx[1]
        for lay in range(len(self.names)):
            r = LayerRow._make(self.rows[lay, self.G - 1, j].tolist())
            fp = r.footprint_bytes
            act = fp - r.weight_fetch_bytes / (r.units_used * r.weight_rereads)
            if fp > self.buf and act > self.buf / 2:
                raise InputError(
                    f"layer {self.names[lay]!r}",
                    f"needs {act:,.0f} B of activations per tile even alone on all {self.G} "
                    f"tiles with sub-batch 1, more than half the {self.buf:,.0f} B buffer",
                    "use a chip with more tiles or larger buffers")

    # -- step 1: NPT, derived dependencies, allocation, the walk ----------------------
    def npt(self, node: Node) -> float:
        """Normalized processing time (seed 002, docs/tile_groups.md): leaf = the layer's
        time for one sample on one tile; T cut = sum of the children's; S cut = that sum divided by
        b/(b+s) with b = sub-batches and s = the cut's pipeline stages − 1 (fill/drain)."""
        v = self._npt.get(node)
        if v is not None:
            return v
        if node.kind == LEAF:
            v = self.npt1[node.layer]
        else:
            v = sum(self.npt(c) for c in node.children)
            if node.kind == SCUT:
                _, stages = self.s_deps(node)
                v = v * (node.sb + max(stages)) / node.sb
        if len(self._npt) > SEGMENT_CACHE_SIZE:
            self._npt.clear()
        self._npt[node] = v
        return v

    def s_deps(self, node: Node) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
        """Derived dependencies between the children of a cut — child j depends on an
        earlier child i if a layer of j consumes a layer of i — and pipeline stages:
        stage(j) = 0 without such dependencies, else 1 + max stage of those i
        (seed 002 "dependencies … derived"; SET ``traverse_pass1``)."""
        v = self._sdeps.get(node)
        if v is not None:
            return v
        where = {lay: i for i, c in enumerate(node.children) for lay in c.layers}
        deps: list[tuple[int, ...]] = []
        stages: list[int] = []
        for j, c in enumerate(node.children):
            ds = sorted({where[p] for lay in c.layers for p, _ in self.preds[lay]
                         if p in where and where[p] != j})
            deps.append(tuple(ds))
            stages.append(1 + max(stages[i] for i in ds) if ds else 0)
        v = (tuple(deps), tuple(stages))
        if len(self._sdeps) > SEGMENT_CACHE_SIZE:
            self._sdeps.clear()
        self._sdeps[node] = v
        return v

    def allocation(self, node: Node, tiles: int, path: tuple[int, ...]) -> tuple[int, ...]:
        """Tile counts of an S cut's children: the explicit ``alloc`` or the optimal NPT
        allocation; :class:`Infeasible` when there are more children than tiles."""
        n = len(node.children)
        if n > tiles:
            raise self._bad(path, node, f"S cut has {n} children but only {tiles} tiles",
                            "give it more tiles or group children into T cuts")
        if node.alloc is not None:
            if len(node.alloc) != n or min(node.alloc) < 1 or sum(node.alloc) != tiles:
                raise self._bad(path, node, f"allocation {list(node.alloc)} does not split "
                                f"its {tiles} tiles into {n} positive parts",
                                f"give {n} positive tile counts summing to {tiles}")
            return node.alloc
        return optimal_allocation([self.npt(c) for c in node.children], tiles)

    def walk(self, node: Node, batch: int, lo: int, hi: int, runs: int,
             path: tuple[int, ...], leaves: list[_Leaf],
             cuts: dict[tuple[int, ...], Node]) -> None:
        """Batch, tile range [lo, hi) (stripe ids) and runs of every node below ``node``:
        T-cut children share the range, S-cut children split it; children of a cut
        with ``sb`` sub-batches get batch/sb and run ``sb`` times per run of the cut."""
        if node.kind == LEAF:
            leaves.append(_Leaf(node.layer, batch, lo, hi, runs, path))
            return
        cuts[path] = node
        if batch % node.sb:
            raise self._sub_batch_error(path, node, batch)
        cb = batch // node.sb
        if node.kind == TCUT:
            for i, c in enumerate(node.children):
                self.walk(c, cb, lo, hi, runs * node.sb, path + (i,), leaves, cuts)
            return
        alloc = self.allocation(node, hi - lo, path)
        start = lo
        for i, (c, a) in enumerate(zip(node.children, alloc, strict=True)):
            self.walk(c, cb, start, start + a, runs * node.sb, path + (i,), leaves, cuts)
            start += a

    # -- step 2: dataflow --------------------------------------------------------------
    def direct(self, pp: tuple[int, ...], pc: tuple[int, ...],
               cuts: dict[tuple[int, ...], Node]) -> tuple[bool, bool]:
        """(over the NoC?, waits?) for the feature map from the leaf at ``pp`` to the leaf
        at ``pc`` (same segment).

        Over the NoC or through DRAM — at their lowest common ancestor, a T cut passes
        it on when the consumer's child comes right after the producer's ("consumed
        immediately"); an S cut when the consumer's child is exactly one pipeline stage
        later; otherwise it waits in DRAM (seed 002 "Dataflow"; SET
        ``is_shortcut``). It *waits* on the consumer's tiles [ours] unless the producer is
        the last leaf of its child and the consumer the first leaf of its child, i.e.
        the two run back to back; waiting data is charged to the buffers.
        """
        d = 0
        while d < len(pp) and d < len(pc) and pp[d] == pc[d]:
            d += 1
        lca = cuts[pc[:d]]
        i, j = pp[d], pc[d]
        if lca.kind == TCUT:
            ok = j == i + 1
        else:
            _, stages = self.s_deps(lca)
            ok = stages[j] == stages[i] + 1
        if not ok:
            return False, False
        a, b = lca.children[i], lca.children[j]
        waits = len(pp) > d + 1 and get_layer(a, pp[d + 1:]) != a.layers[-1] or \
            len(pc) > d + 1 and get_layer(b, pc[d + 1:]) != b.layers[0]
        return True, waits

    # -- step 3: one segment -----------------------------------------------------------
    def segment(self, seg: Node, batch: int, path: tuple[int, ...] = (),
                cache: bool = True) -> SegmentCost:
        """Cost of one run of the root child ``seg`` with ``batch`` samples (cached;
        ``cache=False`` for callers that evaluate each segment once — an exact DP over
        long segments would otherwise fill the cache with keys of up to hundreds of
        leaves, gigabytes on cloud-12x12)."""
        key = (seg, batch)
        v = self._seg.get(key)
        if v is None:
            try:
                v = self._compiled_segment(seg, batch, path, cache, lazy=True)
            except _KernelRejection as exc:
                v = exc.rejected
            except Infeasible as exc:
                v = _Rejected((exc.field, exc.problem, exc.fix))
            if cache:
                if len(self._seg) >= SEGMENT_CACHE_SIZE:
                    self._seg.clear()
                self._seg[key] = v
        if isinstance(v, _Rejected):
            raise v.error()
        return v

    def segment_detail(self, seg: Node, batch: int, path: tuple[int, ...] = ()
                       ) -> tuple[SegmentCost, dict[str, Any]]:
        """:meth:`segment` plus per-layer, per-flow and per-tile details (not cached)."""
        detail: dict[str, Any] = {}
        cost = self._segment(seg, batch, path, detail)
        if self.compiled:  # the numbers every other caller gets, to the last bit
            cost = self._compiled_segment(seg, batch, path)
        return cost, detail

    def _compiled_segment(self, seg: Node, batch: int, path: tuple[int, ...],
                          keep: bool = True, lazy: bool = False) -> SegmentCost:
        """:meth:`_segment` by the compiled kernel (when :attr:`compiled`); a segment it
        rejects raises the Python step's message (:meth:`_kernel_rejection`; with
        ``lazy``, an :class:`Infeasible` that builds it when first read). ``keep``: keep
        the flat encodings of its subtrees for the next segments."""
        if not self.compiled:
            return self._segment(seg, batch, path, None)
        flat = np.array(sk.flatten(seg, keep), dtype=np.int64)
        status, out = sk.segment_kernel(flat, batch, self.G, self.buf, int(self.prec),
                                        self._weight_scale(batch),
                                        *self._kernel_args)
        if status != sk.OK:
            if lazy:
                raise _KernelRejection(_Rejected(build=functools.partial(
                    self._kernel_rejection, seg, batch, path, status, out.tolist())))
            raise self._kernel_rejection(seg, batch, path, status, out.tolist())
        compute, dram_read, dram_write, max_link, hops_max, byte_hops, mac_j, buf_j = \
            out.tolist()
        return self._segment_cost(compute, dram_read, dram_write, max_link, int(hops_max),
                                  byte_hops, mac_j, buf_j)

    def _weight_scale(self, batch: int) -> float:
        """The share of a layer's weight traffic one segment run of ``batch`` samples
        pays: 1, or under SET's convention (weights once per total batch) 1/root runs."""
        return batch / self.B if self.inst.weight_accounting == "set" else 1.0

    def _segment_cost(self, compute: float, dram_read: float, dram_write: float,
                      max_link: float, hops_max: int, byte_hops: float, mac_j: float,
                      buf_j: float) -> SegmentCost:
        """A segment's time (max of compute, DRAM and NoC) and energies from what its
        leaves move and compute (the last step of both evaluators)."""
        dram_bytes = dram_read + dram_write
        dram_t = float(dram_time_s(dram_bytes, self.hw))
        noc_t = noc_time_s(max_link, hops_max, self.hw) if (max_link or hops_max) else 0.0
        return SegmentCost(
            time=max(compute, dram_t, noc_t), compute=compute, dram_time=dram_t,
            noc_time=noc_t, dram_j=float(dram_energy_j(dram_bytes, self.hw)),
            noc_j=float(noc_energy_j(byte_hops, self.hop_pj)), mac_j=mac_j,
            buffer_j=buf_j, dram_bytes=dram_bytes, byte_hops=byte_hops,
            dram_read=dram_read, dram_write=dram_write)

    def _a2a(self, plo: int, puu: int, clo: int, cuu: int) -> tuple[np.ndarray, float, int]:
        key = (plo, puu, clo, cuu)
        v = self._a2a_cache.get(key)
        if v is None:
            hw = self.hw
            pr, pc = self.tr[plo:plo + puu], self.tc[plo:plo + puu]
            cr, cc = self.tr[clo:clo + cuu], self.tc[clo:clo + cuu]
            vec = geo.all_to_all_loads(hw.rows, hw.cols, pr, pc, cr, cc) / (puu * cuu)
            v = (vec, float(vec.sum()), geo.max_hops(pr, pc, cr, cc))
            if len(self._a2a_cache) > 100_000:
                self._a2a_cache.clear()
            self._a2a_cache[key] = v
        return v

    def _bad(self, path: tuple[int, ...], node: Node, problem: str, fix: str) -> Infeasible:
        return Infeasible(f"tree node {path_str(path)} {short_text(node, self.names, 40)}",
                          problem, fix)

    def _sub_batch_error(self, path: tuple[int, ...], node: Node, batch: int) -> Infeasible:
        return self._bad(path, node, f"sub-batch count {node.sb} does not divide its batch "
                         f"{batch}", f"use a divisor of {batch}")

    def _buffer_error(self, path: tuple[int, ...], seg: Node, tile: int, pinned: float,
                      peak: float, held: float) -> Infeasible:
        r, cc = int(self.tr[tile]), int(self.tc[tile])
        return self._bad(path, seg, f"tile {tile} (row {r}, col {cc}) needs "
                         f"{pinned + peak + held:,.0f} B ({pinned:,.0f} B pinned weights + "
                         f"{peak:,.0f} B working set + {held:,.0f} B waiting inputs) > buffer "
                         f"{self.buf:,.0f} B",
                         "use smaller sub-batches, fewer layers per segment or more tiles")

    def _kernel_rejection(self, seg: Node, batch: int, path: tuple[int, ...], status: int,
                          info: list[float]) -> Infeasible:
        """The :class:`Infeasible` of a segment the compiled kernel rejected, from the
        rule and indices it returns (the messages of the Python steps)."""
        if status == sk.REJECTED_TILE:
            return self._buffer_error(path, seg, int(info[0]), *info[1:4])
        node_path, node = list(iter_nodes(seg))[int(info[0])]
        if status == sk.REJECTED_SUB_BATCH:
            return self._sub_batch_error(node_path, node, int(info[1]))
        try:
            if status == sk.REJECTED_ALLOCATION:
                self.allocation(node, int(info[1]), node_path)
            elif status == sk.REJECTED_SPILL:
                lo, hi, runs = int(info[2]), int(info[3]), int(info[4])
                self._leaf_rows([_Leaf(node.layer, int(info[1]), lo, hi, runs, node_path)],
                                path)
        except Infeasible as exc:
            return exc
        # not reached unless kernel and Python steps disagree: the Python steps decide
        self._segment(seg, batch, path, None)
        raise RuntimeError(f"the compiled segment kernel rejected segment {path_str(path)} "
                           "but the analyzer's rules accept it")

    def _segment(self, seg: Node, batch: int, path: tuple[int, ...],
                 detail: dict[str, Any] | None) -> SegmentCost:
        """The segment computation, one step per method: the walk (tile ranges), the
        leaves' table rows and buffer rules, the dataflow routes, the bytes and NoC
        loads, the per-tile buffers, the time. ``path`` is the segment's place in the
        tree (for messages); ``detail`` (a dict) receives the per-layer/flow/tile
        records."""
        leaves: list[_Leaf] = []
        cuts: dict[tuple[int, ...], Node] = {}
        self.walk(seg, batch, 0, self.G, 1, (), leaves, cuts)
        at = {lf.layer: lf for lf in leaves}
        rec, spills = self._leaf_rows(leaves, path)
        routes, waiting, writes = self._routes(leaves, at, spills, cuts)
        wscale = self._weight_scale(batch)
        tr = self._traffic(leaves, at, rec, spills, routes, waiting, writes,
                           detail is not None, wscale)
        pinned, peak, held, byte_hops, hops_max = self._buffers_and_ports(seg, path, tr)
        # time: event simulation of the segment, bounded by DRAM and the busiest link
        dur: dict[tuple[int, ...], float] = {lf.path: rec[lf.layer].compute_s
                                             for lf in leaves}
        fins: dict[tuple[int, ...], np.ndarray] = {}
        compute = self._duration(seg, (), dur, fins)
        max_link = float(tr.link.max()) if tr.link.size else 0.0
        cost = self._segment_cost(compute, tr.dram_read, tr.dram_write, max_link, hops_max,
                                  byte_hops, tr.mac_j, tr.buf_j)
        if detail is not None:
            detail.update(leaves=leaves, rec=rec, routes=routes, writes=writes,
                          flows=tr.flows, link=tr.link, pinned=pinned, peak=peak, held=held,
                          durations=dur, finish=fins, cuts=cuts, spills=spills)
        return cost

    def _leaf_rows(self, leaves: list[_Leaf], path: tuple[int, ...]
                   ) -> tuple[dict[int, LayerRow], dict[int, bool]]:
        """Each leaf's layer-table row (time, units, bytes, energies) and whether its
        working set spills the buffer; :class:`Infeasible` when a spilling layer runs
        more than once per segment run or its activations alone exceed half the buffer
        (cost-model §3, weights streaming)."""
        buf = self.buf
        rec: dict[int, LayerRow] = {}
        spills: dict[int, bool] = {}
        rows_cache = self._rows
        for lf in leaves:
            key = (lf.layer, lf.hi - lf.lo - 1, self.bidx[lf.batch])
            row = rows_cache.get(key)
            if row is None:
                row = rows_cache[key] = LayerRow._make(self.rows[key].tolist())
            rec[lf.layer] = row
            fp = row.footprint_bytes
            w_tile = row.weight_fetch_bytes / (row.units_used * row.weight_rereads)
            sp = fp > buf
            spills[lf.layer] = sp
            if sp:
                where = f"layer {self.names[lf.layer]!r} in segment {path_str(path)}"
                if lf.runs > 1:
                    raise Infeasible(where, f"runs {lf.runs} times per segment run but its "
                                     f"working set ({fp:,.0f} B per tile) exceeds the buffer, "
                                     "so its weights cannot stay on chip",
                                     "give it more tiles or a smaller sub-batch")
                if fp - w_tile > buf / 2:
                    raise Infeasible(where, f"needs {fp - w_tile:,.0f} B of activations per "
                                     f"tile (more than half the {buf:,.0f} B buffer)",
                                     "give it more tiles or a smaller sub-batch")
        return rec, spills

    def _routes(self, leaves: list[_Leaf], at: dict[int, _Leaf], spills: dict[int, bool],
                cuts: dict[tuple[int, ...], Node]
                ) -> tuple[dict[int, list[tuple[int, int, bool]]], dict[int, int],
                           dict[int, bool]]:
        """The dataflow (:meth:`direct`): per consumer, its sources ``(producer or −1 for
        the network input, elements, over the NoC?)``; the elements that wait on its
        tiles; and which layers write their output to DRAM."""
        routes: dict[int, list[tuple[int, int, bool]]] = {}
        waiting: dict[int, int] = {}
        writes = {lf.layer: not self.succs[lf.layer] for lf in leaves}
        for lf in leaves:
            c = lf.layer
            rs = []
            if self.ext[c]:
                rs.append((-1, self.ext[c], False))
            wait = 0
            for p, e in self.preds[c]:
                src = at.get(p)
                d = False
                if src is not None and not spills[c]:
                    d, wt = self.direct(src.path, lf.path, cuts)
                    wait += e if wt else 0
                rs.append((p, e, d))
                if not d and src is not None:
                    writes[p] = True
            waiting[c] = wait
            routes[c] = rs
            if any(s not in at for s in self.succs[c]):
                writes[c] = True
        return routes, waiting, writes

    def _traffic(self, leaves: list[_Leaf], at: dict[int, _Leaf], rec: dict[int, LayerRow],
                 spills: dict[int, bool], routes: dict[int, list[tuple[int, int, bool]]],
                 waiting: dict[int, int], writes: dict[int, bool], with_flows: bool,
                 wscale: float = 1.0
                 ) -> _Traffic:
        """DRAM bytes, NoC link loads of the producer → consumer flows, energies of the
        leaves, and the per-leaf per-tile buffer quantities (added over each leaf's used
        tiles by :meth:`_buffers_and_ports`)."""
        buf, prec = self.buf, self.prec
        k = len(leaves)
        tr = _Traffic(np.zeros(self.n_links), np.empty(k, dtype=np.int64),
                      np.empty(k, dtype=np.int64), np.zeros(k), np.zeros(k), np.zeros(k),
                      np.zeros(k), np.zeros(k))
        for x, lf in enumerate(leaves):
            c = lf.layer
            cs, uuf, wf, iff, of, fp, me, be, wre, ire = rec[c]
            uu = int(uuf)
            tr.los[x], tr.his[x] = lf.lo, lf.lo + uu
            runs = lf.runs
            w_tile = wf / (uu * wre)  # the weights of one tile, once
            # a spilling layer re-reads its input (or, reuse model, its weights) from DRAM
            # as the cost table's spill rule says (docs/cost-model.md §3)
            spill = int(round(ire)) if spills[c] else 1
            wspill = wre if spills[c] else 1.0
            total_src = self.src_total[c]
            dram_elems = sum(e for _, e, d in routes[c] if not d)
            direct_elems = total_src - dram_elems
            dram_share = dram_elems / total_src if total_src else 0.0
            direct_share = 1.0 - dram_share if total_src else 0.0
            # DRAM reads: weights once per segment run, DRAM-sourced inputs per run
            wbytes = self.weight_bytes[c]
            tr.dram_read += wbytes * wscale * wspill + dram_elems * prec * lf.batch * spill * runs
            tr.v_in[x] = (iff * dram_share * runs + (wf * wscale if wbytes else 0.0)) / uu
            if writes[c]:
                tr.dram_write += of * runs
                tr.v_out[x] = of * runs / uu
            if direct_elems:
                for p, e, d in routes[c]:
                    if not d:
                        continue
                    src = at[p]
                    vec, unit_hops, mh = self._a2a(src.lo, int(rec[p].units_used), lf.lo, uu)
                    nbytes = iff * (e / total_src) * runs
                    tr.link += nbytes * vec
                    if mh > tr.hops_max:
                        tr.hops_max = mh
                    if with_flows:
                        tr.flows.append({"from": self.names[p], "to": self.names[c],
                                         "route": "noc", "bytes": nbytes,
                                         "byte_hops": nbytes * unit_hops})
            if with_flows:
                for p, e, d in routes[c]:
                    if not d:
                        tr.flows.append({"from": "input" if p < 0 else self.names[p],
                                         "to": self.names[c], "route": "dram",
                                         "bytes": e * prec * lf.batch * spill * runs})
            tr.mac_j += me * runs
            tr.buf_j += be * runs
            # buffer: pinned weights + the largest working set + waiting inputs per tile
            if runs > 1:
                own = fp - w_tile
                tr.v_pin[x] = w_tile
            else:
                own = fp if fp <= buf else fp - w_tile + buf / 2
            if runs > 1 and direct_share > 0:
                own += iff / (uu * spill) * direct_share  # next sub-batch arriving
            tr.v_own[x] = own
            if waiting[c]:
                tr.v_held[x] = iff / uu * waiting[c] / total_src
        return tr

    def _buffers_and_ports(self, seg: Node, path: tuple[int, ...], tr: _Traffic
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, int]:
        """Per tile: pinned weights + the largest working set + waiting inputs must fit
        the buffer (:class:`Infeasible` naming the tile otherwise); the DRAM flows go
        through the ports (their links added to ``tr.link``). Returns (pinned, peak,
        held, byte·hops, most hops of a flow)."""
        buf = self.buf
        cover = (self.ar[None, :] >= tr.los[:, None]) & (self.ar[None, :] < tr.his[:, None])
        coverf = cover.astype(float)
        pinned = tr.v_pin @ coverf
        held = tr.v_held @ coverf
        peak = (coverf * tr.v_own[:, None]).max(axis=0)
        used = pinned + peak + held
        worst = int(np.argmax(used))
        if used[worst] > buf * (1 + 1e-12):
            raise self._buffer_error(path, seg, worst, pinned[worst], peak[worst],
                                     held[worst])
        in_vec = tr.v_in @ coverf
        out_vec = tr.v_out @ coverf
        tr.link += in_vec @ self.m_in + out_vec @ self.m_out
        dram_flow = float(in_vec.sum() + out_vec.sum())
        byte_hops = float(tr.link.sum()) + dram_flow  # + the controller link of DRAM flows
        hops_max = tr.hops_max
        if dram_flow:
            nz = cover[(tr.v_in > 0) | (tr.v_out > 0)].any(axis=0)
            hops_max = max(hops_max, int(self.dram_hops[nz].max()))
        return pinned, peak, held, byte_hops, hops_max

    def _duration(self, node: Node, path: tuple[int, ...], dur: dict[tuple[int, ...], float],
                  fins: dict[tuple[int, ...], np.ndarray]) -> float:
        """Time of one run of ``node`` (its whole batch): a leaf's compute time; a T cut
        runs its children one after another for each of its sb sub-batches; an S cut is
        simulated by :func:`pipeline_finish`."""
        if node.kind == LEAF:
            return dur[path]
        ds = [self._duration(c, path + (i,), dur, fins) for i, c in enumerate(node.children)]
        if node.kind == TCUT:
            return node.sb * sum(ds)
        deps, _ = self.s_deps(node)
        F = pipeline_finish(ds, deps, node.sb)
        fins[path] = F
        return float(F[:, -1].max())

    # -- step 4: the tree --------------------------------------------------------------
    def segments_of(self, tree: Node) -> tuple[tuple[Node, ...], int, int]:
        """(root children, their batch, runs of each): a root T cut's children run one
        after another per root sub-batch; any other root is one segment."""
        if tree.kind == TCUT and tree is not None:
            if self.B % tree.sb:
                raise self._bad((), tree, f"sub-batch count {tree.sb} does not divide the "
                                f"batch {self.B}", f"use a divisor of {self.B}")
            return tree.children, self.B // tree.sb, tree.sb
        return (tree,), self.B, 1

    def totals(self, tree: Node) -> Totals:
        """Latency and energy of a tree: root runs × Σ over segments (cached segments)."""
        segs, b, runs = self.segments_of(tree)
        costs = tuple(self.segment(s, b, (i,) if tree.kind == TCUT else ())
                      for i, s in enumerate(segs))
        return self._sum(costs, runs)

    @staticmethod
    def _sum(costs: tuple[SegmentCost, ...], runs: int) -> Totals:
        e = EnergyBreakdown(runs * sum(c.dram_j for c in costs),
                            runs * sum(c.noc_j for c in costs),
                            runs * sum(c.mac_j for c in costs),
                            runs * sum(c.buffer_j for c in costs))
        return Totals(latency=runs * sum(c.time for c in costs), energy=e,
                      dram_bytes=runs * sum(c.dram_bytes for c in costs),
                      byte_hops=runs * sum(c.byte_hops for c in costs), segments=costs,
                      root_runs=runs)

    def sums(self, tree: Node, ref: SegmentSums | None = None) -> SegmentSums:
        """Σ time and Σ energy over ``tree``'s segments (one root run), for the SA's
        incremental evaluation: with ``ref`` (the sums of another tree with the same
        root batch), only the root children between the longest common prefix and
        suffix (by identity) are looked up, so a move that changes one root child costs
        O(1) segment lookups instead of one per segment. Raises :class:`Infeasible`."""
        segs, b, runs = self.segments_of(tree)
        if ref is None or ref.batch != b:
            costs = tuple(self.segment(s, b, (i,) if tree.kind == TCUT else ())
                          for i, s in enumerate(segs))
            return SegmentSums(segs, costs, b, runs, sum(c.time for c in costs),
                               sum(c.energy for c in costs))
        old = ref.segments
        n, m = len(segs), len(old)
        # the common prefix and suffix by identity, compared in C (hundreds of root
        # children on PNASNet-5 Large, every SA round)
        same = list(map(operator.is_, segs, old))
        p = same.index(False) if False in same else len(same)
        same = list(map(operator.is_, reversed(segs[p:]), reversed(old[p:])))
        q = same.index(False) if False in same else len(same)
        mid = tuple(self.segment(segs[i], b, (i,) if tree.kind == TCUT else ())
                    for i in range(p, n - q))
        gone = ref.costs[p:m - q]
        costs = ref.costs[:p] + mid + ref.costs[m - q:]
        return SegmentSums(segs, costs, b, runs,
                           ref.time - sum(c.time for c in gone) + sum(c.time for c in mid),
                           ref.energy - sum(c.energy for c in gone)
                           + sum(c.energy for c in mid))

    def objective(self, tree: Node) -> float:
        """The instance's E^n·D^m of ``tree`` (raises :class:`Infeasible`)."""
        t = self.totals(tree)
        return self.inst.objective(t.energy.total, t.latency)

    def try_objective(self, tree: Node) -> float | None:
        """:meth:`objective`, or ``None`` for a tree the analyzer cannot run."""
        try:
            return self.objective(tree)
        except Infeasible:
            return None


