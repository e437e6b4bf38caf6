"""CP-SAT and Pyomo MILP models of core_assignment (each written for both backends).

(a) **partition** — capacity-constrained k-way min-cut (objective ``cut``):
    ``x[v,p]`` ∈ {0,1}, Σ_p x[v,p] = 1, Σ_v size_v·x[v,p] ≤ K, cut indicator
    ``y_e ≥ x[u,p] − x[v,p]`` and ``y_e ≥ x[v,p] − x[u,p]`` for every part p,
    min Σ w_e·y_e. Parts are interchangeable: vertex v may only use parts 0..v
    (every partition has such a labelling), k = min(n, cores). Part p ↦ core p.
(b) **qap** — placement when every vertex needs its own core (or of fixed groups):
    integer coordinates ``X_g`` ∈ [0, cols), ``Y_g`` ∈ [0, rows), all-different cores
    ``cols·Y_g + X_g`` (CP-SAT ``AddAllDifferent``; MILP: assignment binaries
    ``x[g,c]`` with at most one group per core, coordinates their linear images),
    Manhattan distance linearised per axis: ``dx_e ≥ ±(X_u − X_v)``,
    ``dy_e ≥ ±(Y_u − Y_v)``, min Σ w_e·(dx_e + dy_e). Valid inequalities: the
    Gilmore–Lawler bound per group, ``Σ_h F_gh·d_gh ≥ Σ_c l_gc·x[g,c]`` with l_gc the
    minimal scalar product of g's flows and the distances from core c. Symmetry: the
    group with the largest total flow sits on a representative core of its orbit under
    the mesh's reflections/rotations.
(c) **joint** — several vertices per core and the traffic objective: ``x[v,c]`` over all
    cores with capacities, coordinates ``X_v = Σ_c col(c)·x[v,c]``, ``Y_v`` likewise,
    and the per-axis linearisation of (b); symmetry as in (b) for the vertex with the
    largest weighted degree.
(d) **multicast joint** — the ``multicast`` objective with several vertices per core:
    the assignment of (c), a packet indicator ``y[u,c] ≥ x[v,c] − x[u,c]`` for every
    source u, target v > u and core c (u sends to c when a target sits there and u does
    not), its hop count ``h[u,c] ≥ Σ_c' d(c',c)·x[u,c'] − (R+C−2)·(1 − y[u,c])`` (the
    distance from u's core is linear in x), min Σ spikes_u·h[u,c]; symmetry as in (c)
    (the objective is invariant under the mesh's reflections and rotations). With one
    vertex per core the multicast objective is model (b) on the packet graph.

Every model's objective is an integer (cut weight or Σ w·hops); the instance's objective
(energy is a positive multiple of traffic) is reported through
``Instance.objective_from_traffic``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyomo.environ as pyo
from ortools.sat.python import cp_model

from chipsched.budget import Budget
from chipsched.problems.core_assignment import Instance
from chipsched.solvers.cpsat import solve_cpsat
from chipsched.solvers.milp import polled, solve_pyomo
from chipsched.solvers.options import SolveOptions
from chipsched.solvers.outcome import ExactOutcome

from .bnb import symmetry_representatives

BUILD_CPSAT = "building the CP-SAT model"
BUILD_MILP = "building the MILP"


@dataclass(frozen=True)
class ModelInput:
    """What a model needs: n items (vertices or groups) with sizes, undirected edges with
    integer weights, the mesh and the capacity."""

    sizes: np.ndarray
    u: np.ndarray
    v: np.ndarray
    w: np.ndarray
    rows: int
    cols: int
    capacity: int
    #: multicast sources: (source vertex, target pointer, targets, spikes) — source i is
    #: ``src[i]`` with targets ``tgt[ptr[i]:ptr[i+1]]`` and ``spikes[i]`` spikes
    nets: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None

    @property
    def n(self) -> int:
        return int(self.sizes.shape[0])

    @property
    def cores(self) -> int:
        return self.rows * self.cols

    def flows(self) -> np.ndarray:
        f = np.zeros((self.n, self.n), np.int64)
        np.add.at(f, (self.u, self.v), self.w)
        np.add.at(f, (self.v, self.u), self.w)
        return f


def from_instance(instance: Instance, nets: bool = True) -> ModelInput:
    """The model input of an instance: its graph's edges; for the ``multicast``
    objective also its sources and targets (``nets``) — or, with ``nets=False``, the
    packet graph of one vertex per core (for model (b))."""
    g = instance.graph
    if instance.multicast and not nets:
        g = instance.quotient(np.arange(g.n, dtype=np.int64), g.n)
    u, v, w = g.edges()
    mc = None
    if instance.multicast and nets:
        src = np.unique(u)  # edges() lists u < v: u is the source
        order = np.argsort(u, kind="stable")
        ptr = np.zeros(src.shape[0] + 1, np.int64)
        np.cumsum(np.bincount(np.searchsorted(src, u), minlength=src.shape[0]),
                  out=ptr[1:])
        spk = np.ones(src.shape[0], np.int64) if instance.spikes is None else \
            instance.spikes[src]
        mc = (src, ptr, v[order], spk)
    return ModelInput(g.sizes, u, v, w, instance.rows, instance.cols, instance.capacity,
                      mc)


def multicast_value(inp: ModelInput, core: np.ndarray) -> int:
    """Σ spikes·hops of the packets of a vertex → core map (model (d)'s objective)."""
    src, ptr, tgt, spk = inp.nets
    total = 0
    for i in range(src.shape[0]):
        cs = int(core[src[i]])
        dests = set(core[tgt[ptr[i]:ptr[i + 1]]].tolist()) - {cs}
        total += int(spk[i]) * sum(abs(cs // inp.cols - d // inp.cols) +
                                   abs(cs % inp.cols - d % inp.cols) for d in dests)
    return total


def _mesh_distances(inp: ModelInput) -> np.ndarray:
    r, c = np.divmod(np.arange(inp.cores), inp.cols)
    return np.abs(r[:, None] - r[None, :]) + np.abs(c[:, None] - c[None, :])


def glb_coefficients(inp: ModelInput) -> np.ndarray:
    """l[g, c]: lower bound on Σ_h F_gh·d(c, p_h) when g sits on core c and the others on
    distinct other cores (Gilmore–Lawler: flows descending × distances ascending)."""
    f = inp.flows()
    r, c = np.divmod(np.arange(inp.cores), inp.cols)
    d = np.abs(r[:, None] - r[None, :]) + np.abs(c[:, None] - c[None, :])
    out = np.zeros((inp.n, inp.cores), np.int64)
    for g in range(inp.n):
        fs = np.sort(np.delete(f[g], g))[::-1]
        for k in range(inp.cores):
            ds = np.sort(np.delete(d[k], k))[: inp.n - 1]
            out[g, k] = int((fs * ds).sum())
    return out


def _pivot(inp: ModelInput) -> int:
    """The item whose placement breaks the mesh symmetry: the largest weighted degree."""
    deg = np.zeros(inp.n, np.int64)
    np.add.at(deg, inp.u, inp.w)
    np.add.at(deg, inp.v, inp.w)
    return int(np.argmax(deg)) if inp.n else 0


def _canonical_parts(core: np.ndarray) -> np.ndarray:
    """Relabel parts by first occurrence (vertex v then uses a part ≤ v)."""
    _, first, inv = np.unique(core, return_index=True, return_inverse=True)
    rank = np.empty(first.shape[0], np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.shape[0])
    return rank[inv]


# ---------------------------------------------------------------------------------------
# CP-SAT


def cpsat_partition(inp: ModelInput, options: SolveOptions, hint: np.ndarray | None = None
                    ) -> tuple[ExactOutcome, np.ndarray | None]:
    """Model (a) in CP-SAT. Returns the outcome and core (= part) per vertex."""
    m = cp_model.CpModel()
    n, k = inp.n, min(inp.n, inp.cores)
    bud = options.budget
    x = [[m.new_bool_var(f"x{v}_{p}") for p in range(min(v + 1, k))] for v in range(n)]
    for v in range(n):
        m.add_exactly_one(x[v])
    for p in range(k):
        m.add(sum(int(inp.sizes[v]) * x[v][p] for v in range(p, n)) <= inp.capacity)
    obj = []
    for e in range(inp.u.shape[0]):
        bud.tick(BUILD_CPSAT, 16)
        a, c = int(inp.u[e]), int(inp.v[e])
        y = m.new_bool_var(f"y{e}")
        for p in range(k):
            xa = x[a][p] if p < len(x[a]) else 0
            xb = x[c][p] if p < len(x[c]) else 0
            if isinstance(xa, int) and isinstance(xb, int):
                continue
            m.add(y >= xa - xb)
            m.add(y >= xb - xa)
        obj.append(int(inp.w[e]) * y)
    m.minimize(sum(obj))
    hints = {}
    if hint is not None:
        lab = _canonical_parts(hint)
        if lab.max() < k:
            for v in range(n):
                for p in range(len(x[v])):
                    hints[x[v][p]] = int(lab[v] == p)
    out, solver = solve_cpsat(m, options, hints)
    if not out.has_solution:
        return out, None
    core = np.array([next(p for p in range(len(x[v])) if solver.value(x[v][p]))
                     for v in range(n)], np.int64)
    return out, core


def _manhattan(m: Any, inp: Any, X: Sequence[Any], Y: Sequence[Any], R: int, C: int,
               budget: Budget) -> dict[tuple[int, int], Any]:
    """Per edge {a, b}: |X_a − X_b| + |Y_a − Y_b| linearised per axis (dx ≥ ±ΔX,
    dy ≥ ±ΔY; minimisation drives them down), keyed both ways."""
    dist: dict[tuple[int, int], Any] = {}
    for e in range(inp.u.shape[0]):
        budget.tick(BUILD_CPSAT)
        a, b = int(inp.u[e]), int(inp.v[e])
        dx = m.new_int_var(0, C - 1, f"dx{e}")
        dy = m.new_int_var(0, R - 1, f"dy{e}")
        m.add(dx >= X[a] - X[b])
        m.add(dx >= X[b] - X[a])
        m.add(dy >= Y[a] - Y[b])
        m.add(dy >= Y[b] - Y[a])
        dist[a, b] = dist[b, a] = dx + dy
    return dist


def cpsat_qap(inp: ModelInput, options: SolveOptions, hint: np.ndarray | None = None,
              glb: bool = True) -> tuple[ExactOutcome, np.ndarray | None]:
    """Model (b) in CP-SAT (one item per core)."""
    m = cp_model.CpModel()
    n, R, C = inp.n, inp.rows, inp.cols
    X = [m.new_int_var(0, C - 1, f"X{g}") for g in range(n)]
    Y = [m.new_int_var(0, R - 1, f"Y{g}") for g in range(n)]
    m.add_all_different([C * Y[g] + X[g] for g in range(n)])
    x = [[m.new_bool_var(f"x{g}_{c}") for c in range(inp.cores)] for g in range(n)]
    for g in range(n):
        options.budget.tick(BUILD_CPSAT, 8)
        m.add_exactly_one(x[g])
        m.add(X[g] == sum((c % C) * x[g][c] for c in range(inp.cores)))
        m.add(Y[g] == sum((c // C) * x[g][c] for c in range(inp.cores)))
    for c in range(inp.cores):
        m.add_at_most_one(x[g][c] for g in range(n))
    dist = _manhattan(m, inp, X, Y, R, C, options.budget)
    obj = [int(w) * dist[int(a), int(b)] for a, b, w in zip(inp.u, inp.v, inp.w, strict=True)]
    if glb and n > 1:
        f = inp.flows()
        lgc = glb_coefficients(inp)
        for g in range(n):
            options.budget.tick(BUILD_CPSAT, 8)
            terms = [int(f[g, h]) * dist[g, h] for h in range(n) if h != g and f[g, h]]
            if terms:
                m.add(sum(terms) >= sum(int(lgc[g, c]) * x[g][c] for c in range(inp.cores)))
    rep = symmetry_representatives(R, C)
    piv = _pivot(inp)
    for c in np.flatnonzero(~rep):
        m.add(x[piv][int(c)] == 0)
    m.minimize(sum(obj))
    hints = {}
    if hint is not None:
        hint = _symmetric_image(hint, piv, R, C)
        for g in range(n):
            hints[X[g]] = int(hint[g] % C)
            hints[Y[g]] = int(hint[g] // C)
            for c in range(inp.cores):
                hints[x[g][c]] = int(hint[g] == c)
    out, solver = solve_cpsat(m, options, hints)
    if not out.has_solution:
        return out, None
    return out, np.array([solver.value(Y[g]) * C + solver.value(X[g]) for g in range(n)],
                         np.int64)


def cpsat_joint(inp: ModelInput, options: SolveOptions, hint: np.ndarray | None = None
                ) -> tuple[ExactOutcome, np.ndarray | None]:
    """Model (c) in CP-SAT (several items per core, traffic objective)."""
    m = cp_model.CpModel()
    n, R, C, N = inp.n, inp.rows, inp.cols, inp.cores
    x = _cpsat_assignment(m, inp, options.budget)
    X = [m.new_int_var(0, C - 1, f"X{v}") for v in range(n)]
    Y = [m.new_int_var(0, R - 1, f"Y{v}") for v in range(n)]
    for v in range(n):
        options.budget.tick(BUILD_CPSAT, 8)
        m.add(X[v] == sum((c % C) * x[v][c] for c in range(N)))
        m.add(Y[v] == sum((c // C) * x[v][c] for c in range(N)))
    dist = _manhattan(m, inp, X, Y, R, C, options.budget)
    obj = [int(w) * dist[int(a), int(b)] for a, b, w in zip(inp.u, inp.v, inp.w, strict=True)]
    return _cpsat_solve_mesh(m, inp, x, obj, options, hint)


def _cpsat_assignment(m: Any, inp: ModelInput, budget: Budget) -> list[list[Any]]:
    """x[v][c]: item v on core c, one core per item, core loads within the capacity."""
    n, N = inp.n, inp.cores
    x = [[m.new_bool_var(f"x{v}_{c}") for c in range(N)] for v in range(n)]
    for v in range(n):
        budget.tick(BUILD_CPSAT, 16)
        m.add_exactly_one(x[v])
    for c in range(N):
        budget.tick(BUILD_CPSAT, 16)
        m.add(sum(int(inp.sizes[v]) * x[v][c] for v in range(n)) <= inp.capacity)
    return x


def _cpsat_solve_mesh(m: Any, inp: ModelInput, x: list[list[Any]], obj: list[Any],
                      options: SolveOptions, hint: np.ndarray | None
                      ) -> tuple[ExactOutcome, np.ndarray | None]:
    """Models (c) and (d): the pivot on a symmetry representative, minimize ``obj``,
    the warm start mapped by the mesh symmetry, the core of every item."""
    n, R, C, N = inp.n, inp.rows, inp.cols, inp.cores
    rep = symmetry_representatives(R, C)
    piv = _pivot(inp)
    for c in np.flatnonzero(~rep):
        m.add(x[piv][int(c)] == 0)
    m.minimize(sum(obj))
    hints = {}
    if hint is not None:
        hint = _symmetric_image(hint, piv, R, C)
        for v in range(n):
            for c in range(N):
                hints[x[v][c]] = int(hint[v] == c)
    out, solver = solve_cpsat(m, options, hints)
    if not out.has_solution:
        return out, None
    return out, np.array([next(c for c in range(N) if solver.value(x[v][c]))
                          for v in range(n)], np.int64)


def cpsat_multicast(inp: ModelInput, options: SolveOptions, hint: np.ndarray | None = None
                    ) -> tuple[ExactOutcome, np.ndarray | None]:
    """Model (d) in CP-SAT (several items per core, multicast objective)."""
    m = cp_model.CpModel()
    R, C, N = inp.rows, inp.cols, inp.cores
    d = _mesh_distances(inp)
    big = R + C - 2
    x = _cpsat_assignment(m, inp, options.budget)
    src, ptr, tgt, spk = inp.nets
    y: dict[tuple[int, int], Any] = {}
    obj = []
    for i in range(src.shape[0]):
        a = int(src[i])
        for c in range(N):
            options.budget.tick(BUILD_CPSAT, 16)
            yi = y[a, c] = m.new_bool_var(f"y{a}_{c}")
            for t in tgt[ptr[i]:ptr[i + 1]]:
                m.add(yi >= x[int(t)][c] - x[a][c])
            h = m.new_int_var(0, big, f"h{a}_{c}")
            m.add(h >= sum(int(d[k, c]) * x[a][k] for k in range(N)) - big * (1 - yi))
            obj.append(int(spk[i]) * h)
    return _cpsat_solve_mesh(m, inp, x, obj, options, hint)


def _symmetric_image(core: np.ndarray, pivot: int, rows: int, cols: int) -> np.ndarray:
    """Map a placement by the mesh symmetry that puts ``pivot`` on a representative core
    (so that a warm start satisfies the symmetry-breaking constraints)."""
    r, c = np.divmod(np.asarray(core, dtype=np.int64), cols)
    if r[pivot] > (rows - 1) // 2:
        r = rows - 1 - r
    if c[pivot] > (cols - 1) // 2:
        c = cols - 1 - c
    if rows == cols and r[pivot] > c[pivot]:
        r, c = c, r
    return r * cols + c


# ---------------------------------------------------------------------------------------
# Pyomo MILP


def _pyomo_solution(M: Any, n: int, k: int) -> np.ndarray:
    return np.array([max(range(k), key=lambda p: pyo.value(M.x[v, p]) if (v, p) in M.x
                         else -1.0) for v in range(n)], np.int64)


def milp_partition(inp: ModelInput, options: SolveOptions, hint: np.ndarray | None = None
                   ) -> tuple[ExactOutcome, np.ndarray | None]:
    """Model (a) in Pyomo."""
    n, k = inp.n, min(inp.n, inp.cores)
    M = pyo.ConcreteModel()
    idx = [(v, p) for v in range(n) for p in range(min(v + 1, k))]
    M.x = pyo.Var(idx, domain=pyo.Binary)
    E = range(inp.u.shape[0])
    M.y = pyo.Var(E, bounds=(0, 1))
    bud = options.budget
    M.one = pyo.Constraint(range(n), rule=polled(bud, BUILD_MILP, lambda M, v: sum(
        M.x[v, p] for p in range(min(v + 1, k))) == 1))
    M.cap = pyo.Constraint(range(k), rule=polled(bud, BUILD_MILP, lambda M, p: sum(
        int(inp.sizes[v]) * M.x[v, p] for v in range(p, n)) <= inp.capacity, 8))

    def xv(v: int, p: int) -> Any:
        return M.x[v, p] if p <= v else 0

    cuts = [(e, p) for e in E for p in range(min(k, max(int(inp.u[e]), int(inp.v[e])) + 1))]
    M.cut1 = pyo.Constraint(cuts, rule=polled(bud, BUILD_MILP, lambda M, e, p: M.y[e] >= xv(
        int(inp.u[e]), p) - xv(int(inp.v[e]), p), 256))
    M.cut2 = pyo.Constraint(cuts, rule=polled(bud, BUILD_MILP, lambda M, e, p: M.y[e] >= xv(
        int(inp.v[e]), p) - xv(int(inp.u[e]), p), 256))
    M.obj = pyo.Objective(expr=sum(int(inp.w[e]) * M.y[e] for e in E), sense=pyo.minimize)
    warm = False
    if hint is not None:
        lab = _canonical_parts(hint)
        if lab.max() < k:
            for v, p in idx:
                M.x[v, p].value = float(lab[v] == p)
            for e in E:
                M.y[e].value = float(lab[int(inp.u[e])] != lab[int(inp.v[e])])
            warm = True
    out = solve_pyomo(M, options, warm_start=warm)
    if not out.has_solution:
        return out, None
    return out, _pyomo_solution(M, n, k)


def _pyomo_mesh(inp: ModelInput, one_per_core: bool, glb: bool, bud: Budget) -> Any:
    """Models (b) (``one_per_core``) and (c) in Pyomo: assignment binaries, coordinates as
    linear expressions, per-axis distance variables."""
    n, R, C, N = inp.n, inp.rows, inp.cols, inp.cores
    M = pyo.ConcreteModel()
    M.x = pyo.Var(range(n), range(N), domain=pyo.Binary)
    E = range(inp.u.shape[0])
    M.dx = pyo.Var(E, bounds=(0, C - 1))
    M.dy = pyo.Var(E, bounds=(0, R - 1))
    M.one = pyo.Constraint(range(n), rule=polled(bud, BUILD_MILP, lambda M, v: sum(
        M.x[v, c] for c in range(N)) == 1, 8))
    if one_per_core:
        M.cap = pyo.Constraint(range(N), rule=polled(bud, BUILD_MILP, lambda M, c: sum(
            M.x[v, c] for v in range(n)) <= 1, 8))
    else:
        M.cap = pyo.Constraint(range(N), rule=polled(bud, BUILD_MILP, lambda M, c: sum(
            int(inp.sizes[v]) * M.x[v, c] for v in range(n)) <= inp.capacity, 8))

    def X(v: int) -> Any:
        return sum((c % C) * M.x[v, c] for c in range(N))

    def Y(v: int) -> Any:
        return sum((c // C) * M.x[v, c] for c in range(N))

    def axis(D: Any, Z: Any, a: Any, c: Any) -> Any:
        return polled(bud, BUILD_MILP, lambda M, e: D[e] >= Z(int(a[e])) - Z(int(c[e])), 8)

    M.dx1 = pyo.Constraint(E, rule=axis(M.dx, X, inp.u, inp.v))
    M.dx2 = pyo.Constraint(E, rule=axis(M.dx, X, inp.v, inp.u))
    M.dy1 = pyo.Constraint(E, rule=axis(M.dy, Y, inp.u, inp.v))
    M.dy2 = pyo.Constraint(E, rule=axis(M.dy, Y, inp.v, inp.u))
    rep = symmetry_representatives(R, C)
    piv = _pivot(inp)
    M.sym = pyo.Constraint(expr=sum(M.x[piv, int(c)] for c in np.flatnonzero(~rep)) == 0) \
        if (~rep).any() else pyo.Constraint.Skip
    if one_per_core and glb and n > 1:
        f = inp.flows()
        lgc = glb_coefficients(inp)
        inc: dict[int, list[int]] = {g: [] for g in range(n)}
        for e in E:
            inc[int(inp.u[e])].append(e)
            inc[int(inp.v[e])].append(e)
        M.glb = pyo.Constraint([g for g in range(n) if inc[g]], rule=polled(
            bud, BUILD_MILP, lambda M, g: sum(
                int(f[int(inp.u[e]), int(inp.v[e])]) * (M.dx[e] + M.dy[e]) for e in inc[g])
            >= sum(int(lgc[g, c]) * M.x[g, c] for c in range(N)), 4))
    M.obj = pyo.Objective(expr=sum(int(inp.w[e]) * (M.dx[e] + M.dy[e]) for e in E),
                          sense=pyo.minimize)
    bud.checkpoint(BUILD_MILP)
    return M


def milp_mesh(inp: ModelInput, options: SolveOptions, one_per_core: bool,
              hint: np.ndarray | None = None, glb: bool = True
              ) -> tuple[ExactOutcome, np.ndarray | None]:
    """Model (b) or (c) in Pyomo."""
    M = _pyomo_mesh(inp, one_per_core, glb, options.budget)
    warm = False
    if hint is not None:
        h = _symmetric_image(hint, _pivot(inp), inp.rows, inp.cols)
        for v in range(inp.n):
            for c in range(inp.cores):
                M.x[v, c].value = float(h[v] == c)
        r, c = np.divmod(h, inp.cols)
        for e in range(inp.u.shape[0]):
            a, b = int(inp.u[e]), int(inp.v[e])
            M.dx[e].value = float(abs(c[a] - c[b]))
            M.dy[e].value = float(abs(r[a] - r[b]))
        warm = True
    out = solve_pyomo(M, options, warm_start=warm)
    if not out.has_solution:
        return out, None
    return out, _pyomo_solution(M, inp.n, inp.cores)


def milp_multicast(inp: ModelInput, options: SolveOptions, hint: np.ndarray | None = None
                   ) -> tuple[ExactOutcome, np.ndarray | None]:
    """Model (d) in Pyomo."""
    n, R, C, N = inp.n, inp.rows, inp.cols, inp.cores
    d = _mesh_distances(inp)
    big = R + C - 2
    src, ptr, tgt, spk = inp.nets
    M = pyo.ConcreteModel()
    M.x = pyo.Var(range(n), range(N), domain=pyo.Binary)
    S = range(src.shape[0])
    M.y = pyo.Var(S, range(N), bounds=(0, 1))
    M.h = pyo.Var(S, range(N), bounds=(0, big))
    bud = options.budget
    M.one = pyo.Constraint(range(n), rule=polled(bud, BUILD_MILP, lambda M, v: sum(
        M.x[v, c] for c in range(N)) == 1, 8))
    M.cap = pyo.Constraint(range(N), rule=polled(bud, BUILD_MILP, lambda M, c: sum(
        int(inp.sizes[v]) * M.x[v, c] for v in range(n)) <= inp.capacity, 8))
    pairs = [(i, int(t), c) for i in S for t in tgt[ptr[i]:ptr[i + 1]] for c in range(N)]
    M.send = pyo.Constraint(pairs, rule=polled(bud, BUILD_MILP, lambda M, i, t, c: M.y[i, c]
                                               >= M.x[t, c] - M.x[int(src[i]), c], 256))
    M.hop = pyo.Constraint(S, range(N), rule=polled(bud, BUILD_MILP, lambda M, i, c: M.h[i, c]
                                                    >= sum(int(d[k, c]) * M.x[int(src[i]), k]
                                                           for k in range(N))
                                                    - big * (1 - M.y[i, c]), 8))
    rep = symmetry_representatives(R, C)
    piv = _pivot(inp)
    M.sym = pyo.Constraint(expr=sum(M.x[piv, int(c)] for c in np.flatnonzero(~rep)) == 0) \
        if (~rep).any() else pyo.Constraint.Skip
    M.obj = pyo.Objective(expr=sum(int(spk[i]) * M.h[i, c] for i in S for c in range(N)),
                          sense=pyo.minimize)
    warm = False
    if hint is not None:
        h = _symmetric_image(hint, piv, R, C)
        for v in range(n):
            for c in range(N):
                M.x[v, c].value = float(h[v] == c)
        for i in S:
            a = int(src[i])
            dests = set(h[tgt[ptr[i]:ptr[i + 1]]].tolist()) - {int(h[a])}
            for c in range(N):
                M.y[i, c].value = float(c in dests)
                M.h[i, c].value = float(d[int(h[a]), c]) if c in dests else 0.0
        warm = True
    out = solve_pyomo(M, options, warm_start=warm)
    if not out.has_solution:
        return out, None
    return out, _pyomo_solution(M, n, N)
