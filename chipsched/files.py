"""Reading and writing YAML/JSON files with one-line errors and atomic writes."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chipsched.errors import InputError


def _strict_loader() -> Any:
    """PyYAML's safe loader that refuses what a chipsched file never needs and a hostile
    one abuses: aliases (``*name`` — an alias bomb expands to gigabytes) and a key given
    twice in one mapping (PyYAML keeps the last silently)."""
    import yaml

    class StrictLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            if self.check_event(yaml.AliasEvent):
                ev = self.peek_event()
                raise yaml.constructor.ConstructorError(
                    None, None, f"alias *{ev.anchor} (YAML aliases are not supported: "
                    "write the value out)", ev.start_mark)
            return super().compose_node(parent, index)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            seen: set[Any] = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    dup = key in seen
                except TypeError:  # an unhashable key: PyYAML reports it itself
                    break
                if dup:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} given twice in one mapping",
                        key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep)

    return StrictLoader


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` without aliases and with each mapping's keys unique (see
    :func:`_strict_loader`); raises ``yaml.YAMLError``."""
    import yaml

    return yaml.load(text, Loader=_strict_loader())  # noqa: S506 - a SafeLoader subclass


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"key {k!r} given twice in one object")
        out[k] = v
    return out


def read_data(path: str | os.PathLike[str]) -> Any:
    """Parse a YAML (``.yaml``/``.yml``) or JSON file; errors name the file and line."""
    import yaml

    p = Path(path)
    if p.is_dir():
        raise InputError(str(p), "is a directory, not a file", "give the file inside it")
    if not p.is_file():
        raise InputError(str(p), "file not found", "check the path")
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(str(p), f"cannot read: {exc.__class__.__name__}") from None
    if not text.strip():
        raise InputError(str(p), "file is empty", "give a YAML or JSON document")
    deep = InputError(str(p), "nested too deeply to be a chipsched file",
                      "give a YAML or JSON document of ordinary depth")
    if p.suffix.lower() == ".json":
        try:
            return json.loads(text, object_pairs_hook=_unique_pairs)
        except json.JSONDecodeError as exc:
            raise InputError(f"{p}:{exc.lineno}", f"malformed JSON: {exc.msg}",
                             "fix the syntax at that line") from None
        except ValueError as exc:
            raise InputError(str(p), str(exc), "give each key once") from None
        except RecursionError:
            raise deep from None
    try:
        data = load_yaml(text)
    except RecursionError:
        raise deep from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{p}:{mark.line + 1}" if mark is not None else str(p)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(where, f"malformed YAML: {problem}", "fix the syntax at that line") \
            from None
    if data is None:  # only comments
        raise InputError(str(p), "file holds no data (only comments)",
                         "give a YAML or JSON document")
    return data


def check_output_file(path: str | os.PathLike[str], field: str = "--out") -> Path:
    """Refuse an output file path that cannot be written — before any work is done."""
    p = Path(path)
    if p.is_dir():
        raise InputError(field, f"{p} is a directory", "give a file path inside it, e.g. "
                         f"{p / 'result.json'}")
    parent = next((q for q in (p.parent, *p.parent.parents) if q.exists()), None)
    if parent is not None and not parent.is_dir():
        raise InputError(field, f"{parent} is a file, not a folder", "choose another path")
    if parent is not None:
        _check_writable(parent, field)
    return p


def _check_writable(folder: Path, field: str) -> None:
    """Create and remove a file in ``folder``: ``os.access`` says yes to root on a
    read-only mount or a pseudo file system such as /sys."""
    try:
        fd, probe = tempfile.mkstemp(prefix=".chipsched-probe-", dir=folder)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise InputError(field, f"folder {folder} is not writable ({exc.strerror or exc})",
                         "choose another path") from None


def check_output_dir(path: str | os.PathLike[str], field: str = "--out") -> Path:
    """Refuse an output folder path that is a file or cannot be created — before any work."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InputError(field, f"{p} is a file, not a folder", "give a folder path")
    parent = next((q for q in (p, *p.parents) if q.exists()), None)
    if parent is not None and not parent.is_dir():
        raise InputError(field, f"{parent} is a file, not a folder", "give a folder path")
    if parent is not None:
        _check_writable(parent, field)
    return p


def _umask() -> int:
    # /proc first: os.umask can only read the mask by setting it, which races with
    # other threads creating files
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str | os.PathLike[str], writer: Callable[[Any], None],
                 mode: str = "w") -> Path:
    """Write through a temporary file in the same folder and rename it into place,
    so that a failure never leaves a half-written output file. The file gets the
    permissions of an ordinary new file (0666 less the umask), not mkstemp's 0600."""
    p = check_output_file(path, str(path))
    try:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    except OSError as exc:  # e.g. the disk filled since the check
        raise InputError(str(p), f"cannot write: {exc.strerror or exc}",
                         "choose another path") from None
    try:
        text = "b" not in mode  # UTF-8 whatever the locale: YAML keeps µ and ×
        with (os.fdopen(fd, mode, encoding="utf-8", newline="") if text
              else os.fdopen(fd, mode)) as fh:
            writer(fh)
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, p)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(str(p), f"cannot write: {exc.strerror or exc}",
                         "choose another path") from None
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
    return atomic_write(p, lambda fh: yaml.safe_dump(data, fh, sort_keys=False,
                                                     allow_unicode=True))
