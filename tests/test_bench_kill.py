"""``kill -9`` of a bench with pool workers leaves no process behind (issue 29)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")


def _children(pid: int) -> set[int]:
    out = set()
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.add(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended; only its exit status is left


def test_kill_9_leaves_no_worker_behind(tmp_path):
    suite = tmp_path / "long.yaml"
    suite.write_text(yaml.safe_dump({
        "name": "long", "decision": "tile_groups", "instances": ["tiny", "tiny-chain"],
        "chip": "edge-4x4", "options": {"time_limit": 60},
        "methods": [{"method": "sa", "params": {"iterations": 10_000_000}}]}))
    exe = Path(sys.executable).with_name("chipsched")
    proc = subprocess.Popen([str(exe), "bench", str(suite), "--out", str(tmp_path / "o"),
                             "--workers", "2", "--format", "csv"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(workers) < 2:
            time.sleep(0.5)
            workers = {c for c in _children(proc.pid) if _alive(c)}
        assert len(workers) >= 2, "the bench never started its workers"
        time.sleep(2)  # the workers are inside their runs
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and any(_alive(w) for w in workers):
            time.sleep(0.2)
        left = [w for w in workers if _alive(w)]
        assert not left, f"workers {left} outlived the bench"
    finally:  # never leave a worker running, whatever failed
        for w in workers | _children(proc.pid):
            try:
                os.kill(w, signal.SIGKILL)
            except OSError:
                pass
        if proc.poll() is None:
            proc.kill()
