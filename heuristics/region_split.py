"""Heuristics and baselines for region_split: seeds 000 and 001, equal splits.

Seed 000 (CN115421897A, claims 5–7, ``docs/sources.md``):
:func:`seed000_regions` — recursive lightest-edge bisection of the group graph S with
the proportional sub-chiplet split, the "each side ≥ total/M" rule and the
t0 > t1 + t2 + t3 stop, costed with the expected-cost formula (C + D); then
serpentine placement. Steps 1–3 (G, G', pipeline groups, S) are ``chipsched.graph``.

Seed 001 (CN115114033B, claims 1–7; section 001): :func:`threshold_split` — one
sub-model on the first processor, two when the predicted time exceeds threshold 1,
three when the two-way split still exceeds threshold 2; :func:`simulate` — a
frame-level pipeline of the sub-models exchanging frames through k shared buffers
(double/triple buffering) on processors with a time-varying background load, where
the history policy (idle/busy ratio over a window) or the real-time policy (current
load) moves layer boundaries between frames.

Baselines: :func:`equal_split` by layer count or by compute, the best region count.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from chipsched.errors import InputError
from chipsched.method import MethodOutput, method, param
from chipsched.problems.region_split import (
    ChipletInstance,
    ChipletSolution,
    LayerPrefix,
    LoadTrace,
    SocInstance,
    SocSolution,
    apportion,
    chiplet_solution,
    chiplet_stage,
    combine,
    expected_cost,
    soc_solution,
    soc_stage,
    soc_tables,
)
from chipsched.result import Status
from chipsched.solvers.options import SolveOptions

DECISION = "region_split"


# =======================================================================================
# Seed 000: recursive region splitting on the chiplet grid


def cut_weights(inst: ChipletInstance, i: int, j: int, rank: str = "cut"
                ) -> list[tuple[float, int]]:
    """Candidate cuts of the sub-graph of items i..j, lightest first (seed 000, step 4.3).

    A cut after item k (i ≤ k < j) splits S[i..j] into S1 = i..k and S2 = k+1..j, the
    only splits that keep regions contiguous in depth order. ``rank="cut"`` (default)
    weighs it by all edges of S[i..j] it severs (= the edge itself when S is a chain,
    and the only reading under which "cutting the edge splits S"); ``rank="edge"`` by
    the weight of the edge (k, k+1) alone, the literal wording (positions without
    that edge are skipped). Ties go to the earlier cut.
    """
    w = inst.edge_bytes
    out = []
    for k in range(i, j):
        if rank == "cut":
            out.append((float(w[i:k + 1, k + 1:j + 1].sum()), k))
        elif rank == "edge":
            if w[k, k + 1] > 0:
                out.append((float(w[k, k + 1]), k))
        else:
            raise InputError("rank", f"unknown cut ranking {rank!r}", "use 'cut' or 'edge'")
    return sorted(out)


def proportional_split(M: int, c1: float, c2: float) -> tuple[int, int]:
    """Seed 000, step 4.4: split M sub-chiplets into M1 + M2 in proportion to the compute
    of S1 and S2 (rounded half up, each side at least 1)."""
    tot = c1 + c2
    m1 = int(math.floor(M * (c1 / tot if tot > 0 else 0.5) + 0.5))
    m1 = min(max(m1, 1), M - 1)
    return m1, M - m1


def item_compute(inst: ChipletInstance, i: int, j: int) -> float:
    """Compute (MACs + non-MAC ops) of items i..j: seed 000's "compute amount"."""
    return float(sum(inst.groups.compute[i:j + 1]))


def choose_cut(inst: ChipletInstance, i: int, j: int, M: int, rank: str = "cut"
               ) -> tuple[int, int, int] | None:
    """Seed 000, steps 4.3–4.4: the lightest cut both of whose sides have compute ≥
    total/M ("if a side has less than 1/M of S's compute, take the next lightest edge"),
    with its proportional split (k, M1, M2); None if no cut qualifies or M < 2."""
    if M < 2 or j <= i:
        return None
    total = item_compute(inst, i, j)
    for _, k in cut_weights(inst, i, j, rank):
        c1, c2 = item_compute(inst, i, k), item_compute(inst, k + 1, j)
        if c1 < total / M or c2 < total / M:
            continue
        m1, m2 = proportional_split(M, c1, c2)
        return k, m1, m2
    return None


def expected_transfer(inst: ChipletInstance, i: int, k: int, j: int) -> float:
    """Seed 000, step 4.6: t3, the expected transfer from S1 = i..k to S2 = k+1..j
    (one die-to-die hop carrying the bytes on the edges from S1 to S2)."""
    return float(inst.transfer.between(inst.edge_bytes[i:k + 1, k + 1:j + 1].sum()))


@dataclass(frozen=True)
class SplitStep:
    """One decision of the recursion (for the docs and the stats)."""

    items: tuple[int, int]
    chiplets: int
    cut: int | None
    counts: tuple[int, int] | None
    t0: float
    t1: float | None
    t2: float | None
    t3: float | None
    split: bool


def seed000_regions(inst: ChipletInstance, rank: str = "cut"
                    ) -> tuple[list[tuple[int, int]], list[int], list[SplitStep]]:
    """Seed 000, step 4: recursive splitting of S on the M sub-chiplets.

    t0 = expected cost of S on M (step 4.2, :func:`chipsched.problems.region_split.
    expected_cost`: C + D); take the lightest admissible cut (4.3–4.4); t1, t2 = the
    expected costs of the two sides on M1 and M2, t3 = the transfer between them
    (4.5–4.6); recurse into both sides (depth first, S1 before S2) while
    t0 > t1 + t2 + t3 and the number of regions is below the number of sub-chiplets
    (and below ``max_regions``); otherwise S is a region (4.7–4.9).
    """
    limit = inst.region_limit
    count = [1]
    regions: list[tuple[int, int]] = []
    counts: list[int] = []
    log: list[SplitStep] = []

    def rec(i: int, j: int, m: int) -> None:
        t0 = expected_cost(inst, i, j, m)
        cut = choose_cut(inst, i, j, m, rank) if count[0] < limit else None
        if cut is None:
            log.append(SplitStep((i, j), m, None, None, t0, None, None, None, False))
            regions.append((i, j))
            counts.append(m)
            return
        k, m1, m2 = cut
        t1, t2 = expected_cost(inst, i, k, m1), expected_cost(inst, k + 1, j, m2)
        t3 = expected_transfer(inst, i, k, j)
        split = t0 > t1 + t2 + t3 and count[0] < limit
        log.append(SplitStep((i, j), m, k, (m1, m2), t0, t1, t2, t3, split))
        if not split:
            regions.append((i, j))
            counts.append(m)
            return
        count[0] += 1
        rec(i, k, m1)
        rec(k + 1, j, m2)

    rec(0, inst.n_items - 1, inst.chiplets)
    return regions, counts, log


@dataclass(frozen=True)
class Seed000Params:
    rank: str = param("cut", "how a candidate cut is weighed: every edge of S it severs "
                      "('cut') or the edge (k, k+1) alone ('edge', the literal wording)",
                      choices=("cut", "edge"))


@method(DECISION, "seed000", "heuristic", "seed 000: recursive lightest-edge bisection, "
        "proportional sub-chiplets, t0 > t1+t2+t3 stop, serpentine placement",
        source="CN115421897A (seed 000)", params=Seed000Params, platforms=("chiplet",))
def seed000(instance: ChipletInstance, options: SolveOptions, params: Seed000Params
            ) -> MethodOutput:
    """Seed 000 on a chiplet grid (see :func:`seed000_regions`, :func:`cut_weights`)."""
    regions, counts, log = seed000_regions(instance, params.rank)
    stages = [chiplet_stage(instance, a, b, m) for (a, b), m in zip(regions, counts,
                                                                      strict=True)]
    stats = {"splits": sum(s.split for s in log), "steps": len(log),
             "additive_cost_s": combine("cost", stages)}
    return MethodOutput(Status.FEASIBLE, chiplet_solution(instance, regions, counts),
                        objective=combine(instance.objective, stages), stats=stats)


# =======================================================================================
# Seed 001: threshold split over the processor chain


def predicted_time(inst: SocInstance, i: int, j: int, p: int) -> float:
    """Seed 001, step 1: predicted time of layers i..j on chain processor p under the
    instance's background load (the shared cost model's processor times)."""
    return float(inst.loaded_time[i:j + 1, p].sum())


def balanced_cuts(inst: SocInstance, procs: Sequence[int], loads: Sequence[float] | None = None
                  ) -> tuple[float, list[tuple[int, int]]]:
    """The layer boundaries that minimize the slowest sub-model on the given processors
    (chain positions, increasing), handovers included; exhaustive over the boundaries
    (R ≤ 3 in seed 001; any R works, O(L^(R−1))). ``loads`` overrides the instance's.

    Seed 001 does not say where the first cut goes; we put it where the predicted
    stages balance (our choice). Returns (period, regions).
    """
    L, R = inst.n_items, len(procs)
    if R > L:
        raise InputError("processors", f"{R} sub-models for {L} layers")
    scale = 1.0 / (1.0 - np.asarray(inst.loads if loads is None else loads))
    pre = LayerPrefix.of(inst.layer_time * scale[None, :])
    _, hand = soc_tables(inst)
    if R == 1:
        return float(pre.seg(0, L - 1, procs[0])), [(0, L - 1)]
    best = (math.inf, None)
    # cuts c_1 < … < c_{R−1}: sub-model r holds layers c_{r}..c_{r+1}−1 (c_0 = 0, c_R = L)
    for inner in itertools.combinations(range(1, L), R - 1):
        cuts = (0, *inner, L)
        stages = []
        for r in range(R):
            a, b = cuts[r], cuts[r + 1] - 1
            s = float(pre.seg(a, b, procs[r]))
            if r + 1 < R:
                s += hand[b, procs[r], procs[r + 1]]
            stages.append(s)
        v = max(stages)
        if v < best[0]:
            best = (float(v), [(cuts[r], cuts[r + 1] - 1) for r in range(R)])
    return best[0], best[1]  # type: ignore[return-value]


def threshold_split(inst: SocInstance
                    ) -> tuple[list[tuple[int, int]] | None, list[int], list[float]]:
    """Seed 001, steps 1–2: the number of sub-models from the thresholds.

    Predict the whole model on the first processor; if that exceeds threshold 1,
    split into two sub-models on the first two processors; if the predicted time of
    that split (its slowest sub-model) still exceeds threshold 2, split into three on
    the first three, and so on along the chain. Returns (regions, processors, the
    predicted times compared with the thresholds).
    """
    L = inst.n_items
    limit = inst.region_limit
    t = predicted_time(inst, 0, L - 1, 0)
    regions, procs, seen = [(0, L - 1)], [0], [t]
    kept = t
    for k, th in enumerate(inst.thresholds):
        if t <= th or k + 2 > limit:
            break
        cand = list(range(k + 2))
        t, regs = balanced_cuts(inst, cand)
        seen.append(t)
        # no boundaries may let every sub-model run its layers (a processor without a
        # throughput for some op class): the split before it stands, the next is tried
        if regs is not None:
            regions, procs, kept = regs, cand, t
    if not math.isfinite(kept):
        return None, procs, seen
    return regions, procs, seen


#: What a processor-chain heuristic says when none of its splits can run every layer.
NO_SPLIT = ("no split this method tries puts every layer on a processor that can run it "
            "(a processor without a throughput for some op class); dp finds the optimum "
            "if one exists")


def soc_value(inst: SocInstance, regions: Sequence[tuple[int, int]], procs: Sequence[int]
              ) -> float:
    """The objective of sub-models on chain processors, by the heuristics' own tally."""
    return combine(inst.objective, [soc_stage(inst, a, b, procs[r], procs[r + 1]
                                              if r + 1 < len(procs) else None)
                                    for r, (a, b) in enumerate(regions)])


@method(DECISION, "seed001-threshold", "heuristic", "seed 001: 1/2/3 sub-models on "
        "NPU→GPU→CPU by thresholds, balanced boundaries", source="CN115114033B (seed 001)",
        platforms=("soc",))
def seed001_threshold(instance: SocInstance, options: SolveOptions) -> MethodOutput:
    """The static split of seed 001 under the instance's background loads."""
    regions, procs, seen = threshold_split(instance)
    if regions is None:
        return MethodOutput(Status.ERROR, None, message=NO_SPLIT)
    return MethodOutput(Status.FEASIBLE, soc_solution(regions, procs),
                        objective=soc_value(instance, regions, procs),
                        stats={"predicted_s": seen, "thresholds_s": list(instance.thresholds)})


# =======================================================================================
# Seed 001: frame-level pipeline simulation with dynamic layer reallocation


@dataclass(frozen=True)
class Move:
    """A boundary move made before ``frame``: ``layers`` layers from sub-model ``src`` to
    its neighbour ``dst``; ``regions`` is the split from then on."""

    frame: int
    time_s: float
    src: int
    dst: int
    layers: int
    regions: tuple[tuple[int, int], ...]


@dataclass(frozen=True, eq=False)
class SimulationResult:
    """What :func:`simulate` measured. Per frame f (arrays of length F): ``start[f]``
    when its first sub-model started, ``end[f]`` when its last one finished,
    ``latency = end − start``; ``throughput[f]`` = frames per second over the last
    ``tp_window`` completions; ``cuts[f]`` the first layer of every sub-model but the
    first (the split frame f ran with). ``busy[p]`` the (start, end) intervals of
    chain processor p; ``in_flight_max`` the most frames holding buffers at once."""

    policy: str
    processors: tuple[int, ...]
    buffers: int
    start: np.ndarray
    end: np.ndarray
    latency: np.ndarray
    throughput: np.ndarray
    cuts: np.ndarray
    moves: tuple[Move, ...]
    busy: tuple[np.ndarray, ...]
    in_flight_max: int
    final_regions: tuple[tuple[int, int], ...]
    tp_window: int

    @property
    def frames(self) -> int:
        return len(self.end)

    def regions_at(self, f: int) -> tuple[tuple[int, int], ...]:
        return _cuts_to_regions(self.cuts[f], int(self.cuts.shape[1]) + 1,
                                self._layers)

    @property
    def _layers(self) -> int:
        return int(self.final_regions[-1][1] + 1)


def _cuts_to_regions(cuts: Sequence[int], R: int, L: int) -> tuple[tuple[int, int], ...]:
    c = [0, *[int(x) for x in cuts], L]
    return tuple((c[r], c[r + 1] - 1) for r in range(R))


def _nominal_tables(inst: SocInstance) -> tuple[LayerPrefix, np.ndarray]:
    """Prefix sums of the nominal layer times and the handover table."""
    return inst.nominal_prefix, inst.handover_table


def stage_nominal(inst: SocInstance, regions: Sequence[tuple[int, int]], procs: Sequence[int]
                  ) -> tuple[list[float], list[float]]:
    """Nominal compute (no background load) and handover time of every sub-model."""
    pre, htab = _nominal_tables(inst)
    comp, hand = [], []
    for r, (a, b) in enumerate(regions):
        comp.append(float(pre.seg(a, b, procs[r])))
        hand.append(float(htab[b, procs[r], procs[r + 1]]) if r + 1 < len(procs) else 0.0)
    return comp, hand


def estimate_slowdown_realtime(trace: LoadTrace, now: float, procs: Sequence[int]
                               ) -> np.ndarray:
    """Real-time policy (claim 6): read each processor's current load; a processor at
    load ℓ runs our layers 1/(1 − ℓ) times slower."""
    ld = trace.at(now)
    return np.array([1.0 / (1.0 - ld[p]) for p in procs])


def idle_busy_ratio(busy: Sequence[tuple[float, float, float]], now: float, window: float
                    ) -> tuple[float, float]:
    """History policy (claims 4–5): idle/busy ratio of one processor over the window
    [now − window, now], and its measured slowdown (busy time / nominal work in it).

    ``busy`` holds (start, end, nominal seconds) of our stage runs on the processor.
    The ratio formula was lost in the scraped text; we use idle time / busy time.
    """
    lo = now - window
    b, nom = 0.0, 0.0
    for s, e, w in reversed(busy):  # runs of one processor are in time order
        if e <= lo:
            break
        ov = min(e, now) - max(s, lo)
        if ov > 0 and e > s:
            b += ov
            nom += w * ov / (e - s)
    ratio = (window - b) / b if b > 0 else math.inf
    slow = b / nom if nom > 0 else math.nan
    return ratio, slow


def propose_move(est: np.ndarray, hand: Sequence[float], slow: np.ndarray,
                 regions: Sequence[tuple[int, int]], procs: Sequence[int], inst: SocInstance,
                 order: Sequence[int], step: int | None, directions: str, hysteresis: float
                 ) -> tuple[int, int, list[tuple[int, int]]] | None:
    """One boundary move for the next frame, or None (claim 6).

    "When processor 1 is overloaded and processor 2 has headroom, the next frame moves
    layers from sub-model 1 to sub-model 2" (likewise 2 → 3). The overloaded candidates
    are tried in ``order`` (slowest predicted stage first, or lowest idle/busy ratio);
    a neighbour q has headroom when its predicted stage is shorter, the one with the
    most headroom is tried first. ``step`` layers
    move (None: the boundary that best balances the pair). A move is made only if the
    slower of the pair gets faster by more than ``hysteresis`` (relative) — the sorted
    stage times then drop lexicographically, so the policy cannot cycle under
    constant loads. ``directions``: 'forward' (1 → 2 → 3 only, as in the document)
    or 'both' (layers may also move back, to follow a load that goes away).
    Predicted stage = nominal compute × the policy's slowdown estimate + handover.
    """
    R = len(regions)
    for b in order:
        nbrs = [b + 1] if directions == "forward" else [b + 1, b - 1]
        # the neighbour with the most headroom first (ties: forward, as in the document)
        nbrs = sorted((q for q in nbrs if 0 <= q < R and est[q] < est[b]),
                      key=lambda q: (est[q], q < b))
        for q in nbrs:
            lo, hi = (b, q) if q > b else (q, b)  # lo's last layer is before hi's first
            a0, e0 = regions[lo][0], regions[hi][1]
            cut0 = regions[hi][0]
            if step is None:
                cuts = range(a0 + 1, e0 + 1)
            else:
                cuts = [cut0 + step if q < b else cut0 - step]  # toward q
            pl, ph = procs[lo], procs[hi]
            cs = np.array([c for c in cuts if a0 + 1 <= c <= e0 and c != cut0], dtype=np.int64)
            if not len(cs):
                continue
            pre, htab = _nominal_tables(inst)
            t_lo = pre.seg(a0, cs - 1, pl) * slow[lo] + htab[cs - 1, pl, ph]
            t_hi = pre.seg(cs, e0, ph) * slow[hi] + hand[hi]
            v = np.maximum(t_lo, t_hi)
            k = int(np.argmin(v))
            best = (float(v[k]), int(cs[k]))
            if best[0] < est[b] * (1 - hysteresis):
                new = list(regions)
                new[lo] = (a0, best[1] - 1)
                new[hi] = (best[1], e0)
                return b, q, new
    return None


def simulate(inst: SocInstance, regions: Sequence[tuple[int, int]], procs: Sequence[int],
             frames: int = 200, policy: str = "none", trace: LoadTrace | None = None,
             buffers: int | None = None, step: int | None = None,
             window_s: float | None = None,
             directions: str = "both", hysteresis: float = 1e-6, arrival_period_s: float = 0.0,
             tp_window: int = 10) -> SimulationResult:
    """Seed 001, steps 3–4: run ``frames`` frames through the sub-models.

    Pipeline: sub-model r of frame f starts when frame f left sub-model r−1 and
    processor r finished frame f−1; a frame enters the first sub-model only when its
    shared buffer is free — frame f uses buffer f mod k and holds it until it leaves
    the last sub-model, so at most k frames are in flight (k = ``buffers``, default:
    one per sub-model — double buffering for two sub-models, triple for three, as in
    claims 1 and 7). Frames arrive every ``arrival_period_s`` (0: always ready).

    A stage runs its layers' nominal time under the processor's background load from
    ``trace`` (speed 1 − load, integrated over the trace's phases), then hands its
    boundary tensors over (interconnect latency + bytes / bandwidth, unloaded).

    ``policy``: 'none' (static split), 'history' (the busiest processor by idle/busy
    ratio over the last ``window_s``, slowdown measured from our own busy time) or
    'realtime' (the current load read from the trace). Before each frame the policy
    may move layers between neighbouring sub-models (:func:`propose_move`); the layer
    counts always sum to the total.
    """
    if policy not in ("none", "history", "realtime"):
        raise InputError("policy", f"unknown policy {policy!r}", "use none, history or realtime")
    if directions not in ("forward", "both"):
        raise InputError("directions", f"unknown {directions!r}", "use forward or both")
    if step is not None and step < 1:
        raise InputError("step", f"must be >= 1 or None, got {step}")
    if frames < 1:
        raise InputError("frames", f"must be >= 1, got {frames}")
    R = len(regions)
    L = inst.n_items
    k = int(buffers or inst.buffers or R)
    if k < 1:
        raise InputError("buffers", f"must be >= 1, got {k}")
    trace = trace or inst.trace or LoadTrace(np.zeros(1), np.array([inst.loads]))
    if trace.processors != inst.n_procs:
        raise InputError("trace.loads", f"{trace.processors} columns for {inst.n_procs} "
                         "processors")
    comp0, hand0 = stage_nominal(inst, regions, procs)
    window = window_s or 8 * max(c + h for c, h in zip(comp0, hand0, strict=True))
    cur = [tuple(r) for r in regions]
    proc_free = [0.0] * R
    buf_free = [0.0] * k
    busy: list[list[tuple[float, float, float]]] = [[] for _ in range(inst.n_procs)]
    start = np.zeros(frames)
    end = np.zeros(frames)
    cuts = np.zeros((frames, R - 1), dtype=np.int64)
    moves: list[Move] = []
    slow_hist = np.ones(R)
    for f in range(frames):
        t_ready = max(f * arrival_period_s, proc_free[0], buf_free[f % k])
        comp, hand = stage_nominal(inst, cur, procs)
        if policy != "none" and R > 1:
            if policy == "realtime":
                slow = estimate_slowdown_realtime(trace, t_ready, procs)
            else:
                ratios = np.full(R, math.inf)
                for r in range(R):
                    ratio, sd = idle_busy_ratio(busy[procs[r]], t_ready, window)
                    ratios[r] = ratio
                    if math.isfinite(sd):
                        slow_hist[r] = sd
                slow = slow_hist.copy()
            est = np.array([c * sd + h for c, sd, h in zip(comp, slow, hand, strict=True)])
            # the overloaded first: slowest predicted stage, or busiest by idle/busy ratio
            order = np.argsort(-est, kind="stable") if policy == "realtime" else \
                np.lexsort((-est, ratios))
            mv = propose_move(est, hand, slow, cur, procs, inst, [int(x) for x in order],
                              step, directions, hysteresis)
            if mv is not None:
                src, dst, new = mv
                moved = abs(new[max(src, dst)][0] - cur[max(src, dst)][0])
                cur = [tuple(r) for r in new]
                moves.append(Move(f, t_ready, src, dst, moved, tuple(cur)))
                comp, hand = stage_nominal(inst, cur, procs)
        cuts[f] = [cur[r][0] for r in range(1, R)]
        t = t_ready
        start[f] = t
        for r in range(R):
            s0 = max(t, proc_free[r])
            p = procs[r]
            ce = trace.finish_time(p, s0, comp[r])
            # the history policy measures compute only: the hand-over is not slowed by the
            # background load, and counting it as busy read as a slowdown of 1.002–1.031
            # at zero load (spurious moves)
            busy[p].append((s0, ce, comp[r]))
            e = ce + hand[r]
            proc_free[r] = e
            t = e
        end[f] = t
        buf_free[f % k] = t
    lat = end - start
    tp = np.zeros(frames)
    for f in range(frames):
        a = max(0, f - tp_window)
        span = end[f] - (end[a] if a < f else start[0])
        tp[f] = (f - a if a < f else 1) / span if span > 0 else math.inf
    in_flight = _max_in_flight(start, end)
    if sum(b - a + 1 for a, b in cur) != L:  # moves keep the layer count; a bug otherwise
        raise RuntimeError("layer counts of the sub-models no longer sum to the total")
    return SimulationResult(policy, tuple(procs), k, start, end, lat, tp, cuts, tuple(moves),
                            tuple(np.array(b).reshape(-1, 3) for b in busy), in_flight,
                            tuple(cur), tp_window)


def _max_in_flight(start: np.ndarray, end: np.ndarray) -> int:
    """Most frames between their start and end at any instant (buffers held)."""
    ev = sorted([(float(s), 1) for s in start] + [(float(e), -1) for e in end],
                key=lambda x: (x[0], x[1]))
    cur = best = 0
    for _, d in ev:
        cur += d
        best = max(best, cur)
    return best


@dataclass(frozen=True)
class PhaseReport:
    """The split in force at the end of a load phase versus the exact optimum."""

    phase: int
    loads: tuple[float, ...]
    regions: tuple[tuple[int, int], ...]
    period_s: float  # of the settled split under the phase's loads
    optimum_s: float  # the best period over every split (exact DP)
    same_processors_s: float  # the best period on the same processors

    @property
    def gap(self) -> float:
        return self.period_s / self.optimum_s - 1.0


def settled_vs_optimum(inst: SocInstance, sim: SimulationResult, trace: LoadTrace
                       ) -> list[PhaseReport]:
    """For every phase of ``trace`` that frames ran in: the split of the last frame that
    started in it, its period under the phase's loads, the exact optimum for those loads
    (the DP of ``chipsched.formulations`` is not imported here — heuristics and
    formulations stay apart — so the optimum is found by exhaustive search over every
    processor subset and boundary, :func:`balanced_cuts`)."""
    out = []
    for ph in range(len(trace.times)):
        in_ph = np.nonzero((sim.start >= trace.times[ph]) &
                           (sim.start < (trace.times[ph + 1] if ph + 1 < len(trace.times)
                                         else math.inf)))[0]
        if not len(in_ph):
            continue
        loads = tuple(float(x) for x in trace.loads[ph])
        li = inst.with_loads(loads)
        f = int(in_ph[-1])
        regs = sim.regions_at(f)
        procs = list(sim.processors)
        st = [soc_stage(li, a, b, procs[r], procs[r + 1] if r + 1 < len(procs) else None)
              for r, (a, b) in enumerate(regs)]
        period = max(st)
        same = balanced_cuts(li, procs)[0]
        best = math.inf
        for R in range(1, li.region_limit + 1):
            for ps in itertools.combinations(range(li.n_procs), R):
                if R <= li.n_items:
                    best = min(best, balanced_cuts(li, list(ps))[0])
        out.append(PhaseReport(ph, loads, regs, float(period), float(best), float(same)))
    return out


@dataclass(frozen=True)
class DynamicParams:
    frames: int = param(200, "frames simulated", ge=1)
    step: int | None = param(None, "layers a boundary moves per frame", ge=1,
                             none="the boundary that best balances the pair")
    directions: str = param("both", "'forward' moves layers only toward the next processor "
                            "(the document), 'both' also back", choices=("forward", "both"))
    window_s: float | None = param(None, "history window (s)", gt=0,
                                   none="8 × the slowest predicted stage")


def _dynamic(inst: SocInstance, options: SolveOptions, policy: str, params: DynamicParams
             ) -> MethodOutput:
    trace = inst.trace or LoadTrace(np.zeros(1), np.array([inst.loads]))
    # the first split is predicted under the loads at the start of the trace
    regions, procs, _ = threshold_split(inst.with_loads(trace.loads[0]))
    if regions is None:
        return MethodOutput(Status.ERROR, None, message=NO_SPLIT)
    sim = simulate(inst, regions, procs, frames=params.frames, policy=policy, trace=trace,
                   step=params.step, directions=params.directions, window_s=params.window_s)
    stats = {"frames": params.frames, "moves": len(sim.moves), "buffers": sim.buffers,
             "mean_throughput_fps": float(params.frames / (sim.end[-1] - sim.start[0])),
             "mean_latency_s": float(sim.latency.mean()),
             "initial_regions": [list(r) for r in regions]}
    return MethodOutput(Status.FEASIBLE, soc_solution(sim.final_regions, procs),
                        objective=soc_value(inst, sim.final_regions, procs), stats=stats)


@method(DECISION, "seed001-history", "heuristic", "seed 001: threshold split, then the "
        "history policy (idle/busy ratio over a window) moves boundaries over frames",
        source="CN115114033B (seed 001)", params=DynamicParams, platforms=("soc",))
def seed001_history(instance: SocInstance, options: SolveOptions, params: DynamicParams
                    ) -> MethodOutput:
    """Simulate ``frames`` frames under the instance's trace; return the settled split."""
    return _dynamic(instance, options, "history", params)


@method(DECISION, "seed001-realtime", "heuristic", "seed 001: threshold split, then the "
        "real-time policy (current load) moves boundaries over frames",
        source="CN115114033B (seed 001)", params=DynamicParams, platforms=("soc",))
def seed001_realtime(instance: SocInstance, options: SolveOptions, params: DynamicParams
                     ) -> MethodOutput:
    """Simulate ``frames`` frames under the instance's trace; return the settled split."""
    return _dynamic(instance, options, "realtime", params)


# =======================================================================================
# Baselines: equal splits


def equal_cuts(weights: Sequence[float], R: int) -> list[tuple[int, int]]:
    """Cut a sequence into R contiguous non-empty runs of nearly equal total weight:
    run r ends at the first item where the prefix reaches (r+1)/R of the total."""
    n = len(weights)
    pre = np.cumsum(np.asarray(weights, dtype=float))
    tot = pre[-1]
    ends = []
    last = -1
    for r in range(1, R):
        target = tot * r / R
        e = int(np.searchsorted(pre, target - 1e-12 * max(tot, 1.0)))
        e = min(max(e, last + 1), n - (R - r) - 1)
        ends.append(e)
        last = e
    ends.append(n - 1)
    starts = [0] + [e + 1 for e in ends[:-1]]
    return list(zip(starts, ends, strict=True))


def equal_split(instance: Any, by: str
                ) -> tuple[ChipletSolution | SocSolution, int, float]:
    """Equal split by ``by`` ('layers' or 'compute') for every region count; keep the best.

    Chiplet grid: equal layer counts get equal sub-chiplet shares (M//R, the first M%R
    one more); equal-compute regions get shares in proportion to their compute.
    Processor chain: R sub-models on the first R processors of the chain. Returns the
    best solution, its region count and its objective (by this baseline's own tally).
    """
    if isinstance(instance, ChipletInstance):
        S = instance.groups
        w = [len(S.layers[p]) for p in range(len(S))] if by == "layers" else list(S.compute)
        M = instance.chiplets
        best: tuple[float, ChipletSolution | None, int] = (math.inf, None, 0)
        for R in range(1, instance.region_limit + 1):
            regs = equal_cuts(w, R)
            if by == "layers":
                cnts = [M // R + (1 if r < M % R else 0) for r in range(R)]
            else:
                cnts = apportion([sum(S.compute[a:b + 1]) for a, b in regs], M)
            v = combine(instance.objective, [chiplet_stage(instance, a, b, m)
                                             for (a, b), m in zip(regs, cnts, strict=True)])
            if v < best[0]:
                best = (v, chiplet_solution(instance, regs, cnts), R)
        return best[1], best[2], best[0]  # type: ignore[return-value]
    inst = instance
    w = [1.0] * inst.n_items if by == "layers" else [float(ly.work) for ly in
                                                       inst.workload.layers]
    best2: tuple[float, SocSolution | None, int] = (math.inf, None, 0)
    for R in range(1, inst.region_limit + 1):
        regs = equal_cuts(w, R)
        procs = list(range(R))
        st = [soc_stage(inst, a, b, procs[r], procs[r + 1] if r + 1 < R else None)
              for r, (a, b) in enumerate(regs)]
        v = combine(inst.objective, st)
        if v < best2[0]:
            best2 = (v, soc_solution(regs, procs), R)
    return best2[1], best2[2], best2[0]  # type: ignore[return-value]


@method(DECISION, "equal-layers", "baseline", "equal layer counts per region (best region "
        "count), equal sub-chiplet shares / first processors of the chain")
def equal_layers(instance: Any, options: SolveOptions) -> MethodOutput:
    sol, R, value = equal_split(instance, "layers")
    if sol is None:
        return MethodOutput(Status.ERROR, None, message=NO_SPLIT)
    return MethodOutput(Status.FEASIBLE, sol, objective=value, stats={"regions": R})


@method(DECISION, "equal-compute", "baseline", "equal compute per region (best region "
        "count), sub-chiplets in proportion to compute / first processors of the chain")
def equal_compute(instance: Any, options: SolveOptions) -> MethodOutput:
    sol, R, value = equal_split(instance, "compute")
    if sol is None:
        return MethodOutput(Status.ERROR, None, message=NO_SPLIT)
    return MethodOutput(Status.FEASIBLE, sol, objective=value, stats={"regions": R})
