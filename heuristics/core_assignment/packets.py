"""Multicast-aware refinement of a partition: fewer packets leaving the parts.

On a multicast NoC (the ``multicast`` objective, docs/core_assignment.md) neuron u sends
one packet per spike to every *other* part holding any of its targets v > u, however
many synapses it feeds there. The number of packets a partition sends is the
connectivity metric of a hypergraph — one net per source neuron, its pins the neuron
and its targets, Σ spikes(u)·(λ(u) − 1) with λ(u) the parts the net touches — not the
edge cut the multilevel partitioners minimize (which only bounds it from above).
:func:`packet_refine` takes any capacity-feasible partition and moves single vertices
to the part that removes the most packets, in the greedy random-order passes of seed
004's refinement (§ 79–80) but with the (λ − 1) gain of hypergraph partitioners.

Sources: the connectivity (λ − 1) objective and its move gain, Karypis & Kumar,
"Multilevel k-way hypergraph partitioning", DAC 1999 (hMETIS), and Akhremtsev, Heuer,
Sanders & Schlag, "Engineering a direct k-way hypergraph partitioning algorithm",
ALENEX 2017 (KaHyPar-K);
the net model of a spiking network's multicast traffic is ours (after SNEAP /
SpiNeMap, which partition the spike-weighted synapse graph instead).

Data: per net, the parts its targets lie in and how many targets each holds, in a slot
of the net's out-degree (λ(u) ≤ out-degree), so a move updates the nets of the moved
vertex's sources in O(Σ λ). Memory: two int64 per undirected edge (16 bytes) on top of
the graph.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from chipsched.neurongraph import NeuronGraph

#: Passes stop after one that removes at most this share of the starting packets.
MIN_GAIN = 1e-4
#: At most this many passes.
PASSES = 8


@nb.njit(cache=True)
def _nets(ptr, idx, part):  # pragma: no cover - numba
    """Per source vertex u: the parts of its targets v > u with target counts —
    ``npart/ncnt[nstart[u]:nstart[u] + nlen[u]]``."""
    n = ptr.shape[0] - 1
    nstart = np.zeros(n + 1, np.int64)
    for u in range(n):
        c = 0
        for j in range(ptr[u], ptr[u + 1]):
            if idx[j] > u:
                c += 1
        nstart[u + 1] = nstart[u] + c
    npart = np.empty(nstart[n], np.int64)
    ncnt = np.empty(nstart[n], np.int64)
    nlen = np.zeros(n, np.int64)
    for u in range(n):
        s = nstart[u]
        for j in range(ptr[u], ptr[u + 1]):
            x = idx[j]
            if x <= u:
                continue
            _net_add(npart, ncnt, nlen, s, u, part[x])
    return nstart, npart, ncnt, nlen


@nb.njit(cache=True)
def _net_add(npart, ncnt, nlen, s, u, p):  # pragma: no cover - numba
    for q in range(s, s + nlen[u]):
        if npart[q] == p:
            ncnt[q] += 1
            return
    q = s + nlen[u]
    npart[q] = p
    ncnt[q] = 1
    nlen[u] += 1


@nb.njit(cache=True)
def _net_remove(npart, ncnt, nlen, s, u, p):  # pragma: no cover - numba
    for q in range(s, s + nlen[u]):
        if npart[q] == p:
            ncnt[q] -= 1
            if ncnt[q] == 0:  # keep the slot dense: the last entry fills the hole
                last = s + nlen[u] - 1
                npart[q] = npart[last]
                ncnt[q] = ncnt[last]
                nlen[u] -= 1
            return


@nb.njit(cache=True)
def _packets(spk, part, nstart, npart, nlen):  # pragma: no cover - numba
    total = 0
    for u in range(part.shape[0]):
        lam = nlen[u]
        for q in range(nstart[u], nstart[u] + nlen[u]):
            if npart[q] == part[u]:
                lam -= 1
                break
        total += spk[u] * lam
    return total


@nb.njit(cache=True)
def _touch(p, v, w, acc, mark, touched, t):  # pragma: no cover - numba
    """``acc[p] += w`` for vertex v's scan (acc reset on p's first touch); returns the
    new count of touched parts."""
    if mark[p] != v:
        mark[p] = v
        acc[p] = 0
        touched[t] = p
        t += 1
    acc[p] += w
    return t


@nb.njit(cache=True)
def _packet_pass(ptr, idx, sizes, spk, part, load, cap, order, nstart, npart, ncnt, nlen,
                 acc, mark, touched):  # pragma: no cover - numba
    """One greedy pass in ``order``: each vertex moves to the part with room that removes
    the most packets, if any does. Returns (packets removed, moves)."""
    removed = 0
    moves = 0
    for v in order:
        a = part[v]
        t = 0
        # gain(b) = base - s_in + acc[b]: base collects the packets that leaving a
        # removes, acc[b] the packet weight of the nets that already reach b (moving
        # there adds nothing to them); a part no net reaches cannot gain
        base = 0
        s_in = 0
        sv = spk[v]
        for q in range(nstart[v], nstart[v] + nlen[v]):  # v's own net: its targets' parts
            p = npart[q]
            if p == a:
                base -= sv
            t = _touch(p, v, sv, acc, mark, touched, t)
        for j in range(ptr[v], ptr[v + 1]):
            u = idx[j]
            if u >= v:
                continue
            su = spk[u]
            if su == 0:
                continue
            s_in += su
            pu = part[u]
            pu_seen = False
            for q in range(nstart[u], nstart[u] + nlen[u]):
                p = npart[q]
                if p == a and ncnt[q] == 1 and a != pu:
                    base += su
                if p == pu:
                    pu_seen = True
                t = _touch(p, v, su, acc, mark, touched, t)
            if not pu_seen:
                t = _touch(pu, v, su, acc, mark, touched, t)
        best = -1
        best_gain = 0
        for k in range(t):
            p = touched[k]
            if p == a or load[p] + sizes[v] > cap:
                continue
            g = base - s_in + acc[p]
            if g > best_gain or (g == best_gain and best >= 0 and load[p] < load[best]):
                best = p
                best_gain = g
        for k in range(t):
            mark[touched[k]] = -1
        if best < 0 or best_gain <= 0:
            continue
        part[v] = best
        load[a] -= sizes[v]
        load[best] += sizes[v]
        for j in range(ptr[v], ptr[v + 1]):
            u = idx[j]
            if u < v:
                _net_remove(npart, ncnt, nlen, nstart[u], u, a)
                _net_add(npart, ncnt, nlen, nstart[u], u, best)
        removed += best_gain
        moves += 1
    return removed, moves


def packet_count(graph: NeuronGraph, part: np.ndarray, spikes: np.ndarray | None = None
                 ) -> int:
    """Packets a partition sends: Σ_u spikes(u) × (parts other than u's holding a target
    v > u of u) — ``neurongraph.multicast_flows(graph, part, …)``'s total."""
    p = np.ascontiguousarray(part, dtype=np.int64)
    _check(graph, p, int(p.max(initial=-1)) + 1, spikes)
    nstart, npart, _, nlen = _nets(graph.indptr, graph.indices, p)
    return int(_packets(_spikes(graph, spikes), p, nstart, npart, nlen))


def _check(graph: NeuronGraph, part: np.ndarray, nparts: int,
           spikes: np.ndarray | None) -> None:
    """One-line errors for what the kernels would read out of bounds."""
    from chipsched.errors import InputError

    if part.shape != (graph.n,):
        raise InputError("part", f"has {part.size} entries, the graph has {graph.n} vertices",
                         "give one part per vertex")
    if graph.n and (part.min() < 0 or part.max() >= nparts):
        bad = int(np.flatnonzero((part < 0) | (part >= nparts))[0])
        raise InputError(f"part[{bad}]", f"{int(part[bad])} is not in 0..{nparts - 1}",
                         "number the parts 0..nparts-1")
    if spikes is not None:
        s = np.asarray(spikes)
        if s.shape != (graph.n,):
            raise InputError("spikes", f"has {s.size} entries, the graph has {graph.n} "
                             "vertices", "give one spike count per vertex")
        if graph.n and s.min() < 0:
            bad = int(np.argmin(s))
            raise InputError(f"spikes[{bad}]", f"negative count {s[bad]}",
                             "spike counts are >= 0")


def _spikes(graph: NeuronGraph, spikes: np.ndarray | None) -> np.ndarray:
    if spikes is None:
        return np.ones(graph.n, np.int64)
    return np.ascontiguousarray(spikes, dtype=np.int64)


def packet_refine(graph: NeuronGraph, part: np.ndarray, nparts: int, capacity: int,
                  spikes: np.ndarray | None = None, seed: int = 0, passes: int = PASSES
                  ) -> tuple[int, int, int]:
    """Greedy (λ − 1) refinement of a capacity-feasible partition for the multicast
    objective (module docstring), in place on ``part`` (labels 0..nparts-1): up to
    ``passes`` passes over the vertices in random order; a vertex moves to the part with
    room that removes the most packets (ties: the lighter part), never above
    ``capacity`` and never into an empty part; stop after a pass that removes at most
    0.01 % of the packets the partition started with. A pass costs
    Σ_v Σ_{nets of v} λ (each visited vertex reads the part lists of its sources' nets).
    Returns (packets before, packets removed, moves)."""
    if part.dtype != np.int64 or not part.flags.c_contiguous:
        raise TypeError("part must be a contiguous int64 array (refined in place)")
    _check(graph, part, nparts, spikes)
    rng = np.random.default_rng(seed)
    spk = _spikes(graph, spikes)
    load = np.bincount(part, weights=graph.sizes, minlength=nparts).astype(np.int64)
    nstart, npart, ncnt, nlen = _nets(graph.indptr, graph.indices, part)
    before = int(_packets(spk, part, nstart, npart, nlen))
    acc = np.zeros(nparts, np.int64)
    mark = np.full(nparts, -1, np.int64)
    touched = np.empty(nparts, np.int64)
    removed = moves = 0
    for _ in range(passes):
        r, mv = _packet_pass(graph.indptr, graph.indices, graph.sizes, spk, part, load,
                             int(capacity), rng.permutation(graph.n), nstart, npart, ncnt,
                             nlen, acc, mark, touched)
        removed += int(r)
        moves += int(mv)
        if r <= MIN_GAIN * max(1, before):
            break
    return before, removed, moves
