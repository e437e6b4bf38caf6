"""Screenshots of what a reader sees, taken in headless Chromium (issue 29): the bench
HTML report (with its embedded plots) and every kind of ``--plot`` figure the CLI draws
— the S-T graph (tile_groups), the Gantt chart (op_placement), the chiplet placement
(region_split), the core-load heat map (core_assignment), ``lib run --plot``'s
objective / best known against size and ``compare --plot``'s pictures — each opened in
the browser and saved as a PNG to look at before a change that touches a report or a
figure lands.

    python benchmarks/screenshots.py --out out/screens            # bench smoke + figures
    python benchmarks/screenshots.py --out out/screens --html out/bench/bench-ID.html
    python benchmarks/screenshots.py --out out/screens --chromium /path/to/chromium

Needs Playwright (``pip install -e '.[screenshots]'``) and a Chromium: Playwright's own
(``playwright install chromium``) or any other build given with ``--chromium`` (e.g. on a
machine that cannot reach Playwright's download host; the flags below suit a headless
build without a GPU). The bench suite runs first unless ``--html`` names a report.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

#: The figures drawn by ``chipsched solve --plot`` (one per decision), ``lib run`` and
#: ``compare --plot`` (tile_groups' energy-latency picture and the generic one).
FIGURES = [
    ("st-graph", ["solve", "tile_groups", "-i", "tiny-chain", "-c", "edge-4x4", "--batch",
                  "4", "-m", "sa", "--seed", "0"]),
    ("gantt", ["solve", "op_placement", "-i", "tiny", "-c", "soc-npu-gpu-cpu", "-m",
               "seed003"]),
    ("placement", ["solve", "region_split", "-i", "resnet50", "-c", "chiplet-4x4", "-m",
                   "dp"]),
    ("core-load", ["solve", "core_assignment", "-i", "lenet5-neurons", "-c", "neuro-8x8",
                   "-m", "seed004"]),
    ("lib-run", ["lib", "run", "tile_groups", "-m", "ls,lp", "--tier", "tiny",
                 "--time-limit", "5"]),
    ("compare-energy-latency", ["compare", "tile_groups", "-i", "tiny-chain", "-c",
                                "edge-4x4", "--batch", "4", "--methods", "ls,lp,sa,bound"]),
    ("compare-objectives", ["compare", "core_assignment", "-i", "lenet5-neurons", "-c",
                            "neuro-8x8", "--methods", "rowmajor,seed004,bound"]),
]
#: Chromium flags for a headless build on a machine without a GPU or a sandbox.
FLAGS = ["--no-sandbox", "--no-zygote", "--single-process", "--disable-gpu",
         "--disable-dev-shm-usage", "--hide-scrollbars"]


def _chipsched(args: list[str]) -> None:
    cmd = [sys.executable, "-c", "from chipsched.cli import main; main()", *args]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        raise SystemExit(f"chipsched {' '.join(args)} failed:\n{res.stdout}{res.stderr}")


def figures(out: Path) -> list[Path]:
    """Draw every figure of :data:`FIGURES` into ``out`` (PNG), return their paths."""
    paths = []
    for name, args in FIGURES:
        p = out / f"{name}.png"
        t = time.perf_counter()
        _chipsched([*args, "--plot", str(p)])
        print(f"{p}: drawn in {time.perf_counter() - t:.1f} s", file=sys.stderr, flush=True)
        paths.append(p)
    return paths


def bench_report(out: Path, suite: str, workers: int) -> Path:
    """Run the bench suite into ``out`` and return its HTML report."""
    t = time.perf_counter()
    _chipsched(["bench", suite, "--out", str(out), "--workers", str(workers), "--fresh"])
    html = max(out.glob("bench-*.html"), key=lambda p: p.stat().st_mtime)
    print(f"{html}: bench {suite} in {time.perf_counter() - t:.0f} s", file=sys.stderr,
          flush=True)
    return html


def screenshots(pages: list[Path], out: Path, chromium: str | None, width: int
                ) -> list[Path]:
    """Open each page (an HTML report or a picture) in headless Chromium and save the
    whole page as ``out/<name>.screen.png``."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        raise SystemExit("screenshots need Playwright: pip install -e '.[screenshots]' "
                         "(and `playwright install chromium`, or --chromium PATH)") from None
    shots = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=FLAGS, headless=True)
        page = browser.new_page(viewport={"width": width, "height": 800})
        for p in pages:
            page.goto(p.resolve().as_uri())
            page.wait_for_load_state("load")
            shot = out / f"{p.stem}.screen.png"
            page.screenshot(path=str(shot), full_page=True)
            shots.append(shot)
            print(f"{shot}", flush=True)
        browser.close()
    return shots


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=Path("out/screens"))
    ap.add_argument("--html", type=Path, default=None,
                    help="a bench report to photograph instead of running the suite")
    ap.add_argument("--suite", default="smoke", help="bench suite to run for the report")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chromium", default=None,
                    help="a Chromium executable (default: Playwright's)")
    ap.add_argument("--width", type=int, default=1280, help="browser width in pixels")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    html = args.html or bench_report(args.out / "bench", args.suite, args.workers)
    pages = [html, *figures(args.out)]
    screenshots(pages, args.out, args.chromium, args.width)


if __name__ == "__main__":
    main()
