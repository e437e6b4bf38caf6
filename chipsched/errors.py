"""Errors that reach the user as one line naming the field and the fix.

The CLI turns any :class:`ChipschedError` into ``error: <message>`` on stderr and
exit code 2; Python callers get an exception they can catch.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ChipschedError(Exception):
    """Base class of every error chipsched raises on purpose."""


class InputError(ChipschedError, ValueError):
    """Bad input: names the offending field (or file/line) and, when known, the fix."""

    def __init__(self, field: str, problem: str, fix: str | None = None):
        self.field = field
        self.problem = problem
        self.fix = fix
        msg = f"{field}: {problem}" if field else problem
        if fix:
            msg += f"; {fix}"
        super().__init__(msg)

    def __reduce__(self) -> tuple:
        # pickled across process pools (bench workers): rebuild from the fields
        return (InputError, (self.field, self.problem, self.fix))


class UnknownNameError(InputError, KeyError):
    """A name (network, chip, method, decision, …) that is not known; suggests the nearest."""

    #: at most this many known names are spelled out; a longer list is counted, and
    #: ``listing`` (a command) says where to see it (a 105-name line helps nobody)
    LIST_MAX = 24

    def __init__(self, what: str, name: str, known: Iterable[str], listing: str | None = None):
        known = sorted(set(known))
        near = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        if near:
            fix = "did you mean " + " or ".join(repr(n) for n in near) + "?"
        elif not known:
            fix = "none are registered"
        elif len(known) <= self.LIST_MAX:
            fix = "known: " + ", ".join(known)
        else:
            fix = (f"{len(known)} are known ({', '.join(known[:self.LIST_MAX])}, …)"
                   + (f"; `{listing}` lists them" if listing else ""))
        self.name = name
        self.known = known
        self.what = what
        self.listing = listing
        super().__init__(what, f"unknown name {name!r}", fix)

    def __reduce__(self) -> tuple:
        return (UnknownNameError, (self.what, self.name, self.known, self.listing))

    def __str__(self) -> str:  # KeyError would otherwise quote the message
        return self.args[0]


class SolverError(ChipschedError, RuntimeError):
    """A solver backend failed or is unavailable."""
