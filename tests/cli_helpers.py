"""Shared helpers of the command-line tests: run the app in-process, and check the
bad-input contract (one line on stderr starting with ``error:``, exit 2, no traceback)."""

from __future__ import annotations

from typing import Any

from typer.testing import CliRunner

from chipsched.cli import app

runner = CliRunner()


def run(*args: str, **kw: Any) -> Any:
    return runner.invoke(app, list(args), **kw)


def one_line_error(res: Any, *fragments: str) -> None:
    assert res.exit_code == 2, (res.exit_code, res.output)
    err = res.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err, err
    assert "Traceback" not in res.output
    for f in fragments:
        assert f in err, err
