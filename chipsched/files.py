"""Reading and writing YAML/JSON files with one-line errors and atomic writes."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chipsched.errors import InputError


def read_data(path: str | os.PathLike[str]) -> Any:
    """Parse a YAML (``.yaml``/``.yml``) or JSON file; errors name the file and line."""
    import yaml

    p = Path(path)
    if not p.is_file():
        raise InputError(str(p), "file not found", "check the path")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(p), f"cannot read: {exc.__class__.__name__}") from None
    if p.suffix.lower() == ".json":
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"{p}:{exc.lineno}", f"malformed JSON: {exc.msg}",
                             "fix the syntax at that line") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{p}:{mark.line + 1}" if mark is not None else str(p)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(where, f"malformed YAML: {problem}", "fix the syntax at that line") \
            from None


def atomic_write(path: str | os.PathLike[str], writer: Callable[[Any], None],
                 mode: str = "w") -> Path:
    """Write through a temporary file in the same folder and rename it into place,
    so that a failure never leaves a half-written output file."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    try:
        with os.fdopen(fd, mode) as fh:
            writer(fh)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return p


def write_data(path: str | os.PathLike[str], data: Any) -> Path:
    """Write ``data`` as JSON or YAML by the file's suffix, atomically."""
    import yaml

    p = Path(path)
    if p.suffix.lower() == ".json":
        return atomic_write(p, lambda fh: json.dump(data, fh, indent=2))
    return atomic_write(p, lambda fh: yaml.safe_dump(data, fh, sort_keys=False))
