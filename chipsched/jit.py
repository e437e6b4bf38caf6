"""Compiled kernels off the clock: numba's kernels are compiled (or loaded from numba's
on-disk cache) once per process, before a run's time budget starts.

A decision whose methods (or file readers) use numba kernels names a ``warm_up_kernels()``
function in its ``formulations``, ``heuristics`` and/or ``instances`` module (the
registry collects them as ``Decision.warm_ups``); each runs every kernel of its layer
once on tiny inputs of the types the methods use. ``chipsched.solve`` calls
:func:`warm_up` for the decisions a run can reach before it starts the run's clock, so
the first run of a method in a process reports the same time as the second. The first
warm-up after an install compiles the kernels (about a minute; numba caches them next
to the modules, so ``make demo`` fills the cache); later processes load them from the
cache.

Which decisions are warm is process state by nature — numba's compiled code lives in
the process — and is kept here, in one set, nowhere else.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["dispatchers", "warm_up", "warmed"]

_WARM: set[str] = set()


def warmed() -> frozenset[str]:
    """The decisions whose kernels this process has compiled or loaded."""
    return frozenset(_WARM)


def warm_up(decision: str, functions: Iterable[Callable[[], Any]]) -> float:
    """Run ``decision``'s warm-up functions once per process; the seconds it took (0
    when it had run already, or there is nothing to warm up)."""
    if decision in _WARM:
        return 0.0
    t0 = time.perf_counter()
    for f in functions:
        f()
    _WARM.add(decision)
    return time.perf_counter() - t0


def dispatchers(prefix: str = "chipsched") -> dict[str, Any]:
    """Every numba dispatcher among the attributes of the loaded modules under ``prefix``
    (``module.name`` → dispatcher; its ``signatures`` are the compiled type signatures)."""
    try:
        from numba.core.dispatcher import Dispatcher
    except ImportError:  # pragma: no cover - numba is a dependency
        return {}
    out: dict[str, Any] = {}
    for name, mod in list(sys.modules.items()):
        if mod is None or not (name == prefix or name.startswith(prefix + ".")):
            continue
        for attr, obj in vars(mod).items():
            if isinstance(obj, Dispatcher) and getattr(obj, "__module__", name) == name:
                out[f"{name}.{attr}"] = obj
    return out
