"""The shared cost model against ZigZag on one SET tile (issue 14): cycles, DRAM bytes,
on-chip and total energy per layer, ours vs ZigZag's.

ZigZag (KU Leuven, PyPI ``zigzag-dse`` 3.9.1) is not a dependency of chipsched: this
script creates its own virtual environment (``--venv``, default ``out/zigzag-venv``;
``pip install zigzag-dse==3.9.1 six`` — ZigZag imports ``six`` without declaring it) and
runs ``benchmarks/zigzag_runner.py`` there as a subprocess, one JSON file in, one out.

The tile (the runner's docstring has every choice): 1024 int8 MACs as 16 PEs × 8 lanes ×
8-wide vectors at 0.018 pJ per MAC (our ``edge-4x4`` preset), one private 8 B weight and
8 B input register and a 32-bit partial-sum register per MAC at 0.01 pJ/B (ZigZag needs
a register level; we have none), a 1 MiB shared SRAM at 1.0 pJ/B with 128 B/cycle read
and write ports, DRAM at 7.5 pJ/bit with the chip's DRAM bandwidth rounded to whole
bytes per cycle (16 B/cycle for ``edge-4x4``), 1 GHz. Candidate spatial unrollings: K16
C8 OX8, K16 C8 OY8, K16 OX8 OY8, K32 C32 and our two (K128 C8, OX4 OY4 K8 C8); ZigZag's
LOMA searches the temporal mapping of each (``lpf_limit`` 5) and the best by latency is
kept.

Ours: :func:`chipsched.cost.layer_on_units` on one unit — compute cycles, the roof
max(compute, DRAM bytes / bandwidth), DRAM bytes = weights + input fetches (spills
included) + outputs, on-chip energy = MAC + buffer, DRAM energy at 7.5 pJ/bit. ZigZag's
on-chip energy is given with and without its register files (we model none).

Layers: every distinct MAC layer shape (conv, fc; grouped matmuls per group × groups)
of ResNet-50, GoogLeNet and one encoder block of Transformer-base, at batch 1 and
``--batch`` (default 8). ``--quick``: four ResNet-50 layers at batch 1 (~1 minute after
the environment exists; creating it takes ~30 s).

    python benchmarks/cost_model_vs_zigzag.py --quick
    python benchmarks/cost_model_vs_zigzag.py            # ~60 minutes on one core
    python benchmarks/cost_model_vs_zigzag.py --subtiles 16   # per-tile sub-layers, batch 8

``--subtiles G``: ResNet-50's layers at ``--batch`` split over G tiles by the partition our
cost table picks; each tile's sub-layer (its samples, output channels and pixels, all
input channels, the input rows and columns with the halo) goes to ZigZag, and ours is the
same sub-layer on one tile. ``--chip edge-4x4-ideal`` prints the model before issue 14;
``--save-zigzag``/``--from-zigzag`` keep and reuse ZigZag's output so that only our side
is recomputed.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import statistics
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

from chipsched.cost import CostModel, layer_on_units
from chipsched.instances.chips import get_chip
from chipsched.instances.networks import get_network
from chipsched.workload import Layer, OpKind

ROOT = Path(__file__).resolve().parents[1]
RUNNER = Path(__file__).with_name("zigzag_runner.py")
ZIGZAG = ("zigzag-dse==3.9.1", "six")
QUICK = ("conv1", "res2a_branch2b", "res5a_branch1", "fc")


def ensure_venv(path: Path) -> Path:
    """ZigZag's own environment (created once); returns its Python."""
    py = path / "bin" / "python"
    if py.exists():
        ok = subprocess.run([str(py), "-c", "import zigzag, six"], capture_output=True)
        if ok.returncode == 0:
            return py
    print(f"creating ZigZag's environment in {path} (pip install {' '.join(ZIGZAG)}) …",
          file=sys.stderr, flush=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(path)
    subprocess.run([str(py), "-m", "pip", "install", "-q", *ZIGZAG], check=True)
    return py


def zigzag_layer(layer: Layer, batch: int, extent: tuple[int, int] | None = None
                 ) -> tuple[dict, int]:
    """The runner's description of one layer (one group of a grouped layer) and the
    group count the results are multiplied by. ``extent``: the input rows and columns
    (a sub-layer's halo; default 'same' padding)."""
    g = layer.groups
    d = {"name": layer.name, "B": batch, "K": layer.K // g, "C": layer.C // g,
         "precision_bits": 8}
    if layer.H == layer.W == layer.R == layer.S == 1:
        d["type"] = "fc"
    else:
        d.update(type="conv", OY=layer.H, OX=layer.W, FY=layer.R, FX=layer.S,
                 SY=layer.stride, SX=layer.stride)
        if extent:
            d.update(IY=extent[0], IX=extent[1])
    return d, g


def subtile_cases(units: int, batch: int, hw) -> list[tuple[str, Layer, int, tuple]]:
    """ResNet-50's distinct MAC layers at ``batch`` on ``units`` tiles, each as the
    sub-layer one tile computes under the output partition our table picks for it:
    ``n_t`` samples × ``K_t`` channels × ``H_t × W_t`` pixels, all input channels, the
    input rows and columns it reads (halo included). The partitions are the ideal
    on-chip model's whatever ``hw``'s model, so that every model meets the same
    sub-layers and a saved ZigZag run stays valid when the on-chip model changes."""
    w = get_network("resnet50")
    ideal = dataclasses.replace(hw, unit=dataclasses.replace(hw.unit, onchip_model="ideal"))
    t = CostModel(w, ideal).layer_table((batch,), units)
    out, seen = [], set()
    for i, layer in enumerate(w.layers):
        if layer.kind not in (OpKind.CONV, OpKind.FC) or layer.groups != 1:
            continue
        pN, pK, pH, pW = (int(x) for x in t.partition[i, units - 1, 0])
        n_t = -(-batch // pN)
        K_t, H_t, W_t = -(-layer.K // pK), -(-layer.H // pH), -(-layer.W // pW)
        s = layer.stride
        rows = min(layer.H * s, (H_t - 1) * s + layer.R)
        cols = min(layer.W * s, (W_t - 1) * s + layer.S)
        sub = Layer(f"{layer.name}/{pN}x{pK}x{pH}x{pW}", layer.kind, K=K_t, C=layer.C,
                    H=H_t, W=W_t, R=layer.R, S=layer.S, stride=s,
                    in_elems=layer.C * rows * cols,
                    weight_elems=layer.weight_elems * K_t // layer.K)
        key = (sub.kind, K_t, sub.C, H_t, W_t, sub.R, sub.S, s, n_t, rows, cols)
        if key not in seen:
            seen.add(key)
            out.append(("resnet50", sub, n_t, (rows, cols)))
    return out


def layers_of(quick: bool) -> list[tuple[str, Layer]]:
    """(network, layer) for every distinct MAC layer shape."""
    out: list[tuple[str, Layer]] = []
    if quick:
        w = get_network("resnet50")
        return [("resnet50", w.layers[w.index(n)]) for n in QUICK]
    for net, keep in (("resnet50", None), ("googlenet", None),
                      ("transformer-base", lambda n: n.startswith("enc1_"))):
        seen = set()
        for layer in get_network(net).layers:
            if layer.kind not in (OpKind.CONV, OpKind.FC, OpKind.MATMUL):
                continue
            if keep is not None and not keep(layer.name):
                continue
            key = (layer.kind, layer.K, layer.C, layer.H, layer.W, layer.R, layer.S,
                   layer.stride, layer.groups)
            if key not in seen:
                seen.add(key)
                out.append((net, layer))
    return out


def ours(layer: Layer, batch: int, hw, dram_bpc: float) -> dict:
    c = layer_on_units(layer, hw.unit, 1, batch)
    dram = c.weight_fetch_bytes + c.ifmap_fetch_bytes + c.ofmap_bytes
    onchip = (c.mac_energy_j + c.buffer_energy_j) * 1e12
    dram_pj = dram * 8 * hw.dram.energy_pj_per_bit
    return {"compute_cycles": c.cycles, "dataflow": c.dataflow or "ideal model",
            "cycles": max(c.cycles, dram / dram_bpc),
            "dram_bytes": dram, "onchip_pj": onchip, "total_pj": onchip + dram_pj}


#: Our cost model's two output partitions of a tile (``chipsched.cost``): PEs over output
#: channels, or over output pixels — the runner's names for them.
OUR_UNROLLINGS = ("K128_C8", "OX4OY4_K8_C8")


def theirs(rec: dict, groups: int, restrict: tuple[str, ...] | None = None) -> dict:
    """ZigZag's figures for a layer: its best candidate by latency, or the best among the
    candidates named in ``restrict`` (by name or alias)."""
    cands = rec["candidates"]
    if restrict:
        cands = [c for c in cands if set(c["aliases"]) & set(restrict)] or cands
    c = min(cands, key=lambda c: (c["latency_cycles"], c["energy_total_pj"]))
    dram = sum(v["read"] + v["write"] for v in c["dram_bytes"].values())
    onchip = c["mac_energy_pj"] + c["onchip_mem_energy_pj"]
    return {"cycles": groups * c["latency_cycles"], "dram_bytes": groups * dram,
            "onchip_pj": groups * onchip,
            "onchip_no_rf_pj": groups * (onchip - c["rf_energy_pj"]),
            "total_pj": groups * c["energy_total_pj"],
            "mapping": c["effective"], "wall_s": rec["zigzag_wall_s"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--batch", type=int, default=8, help="the second batch size")
    ap.add_argument("--venv", type=Path, default=ROOT / "out" / "zigzag-venv")
    ap.add_argument("--chip", default="edge-4x4")
    ap.add_argument("--lpf-limit", type=int, default=5)
    ap.add_argument("--json", type=Path, help="also write every number here")
    ap.add_argument("--subtiles", type=int, default=0, metavar="G",
                    help="instead: ResNet-50's layers at --batch as the per-tile sub-layers "
                         "of the partitions our table picks on G tiles")
    ap.add_argument("--save-zigzag", type=Path,
                    help="also keep ZigZag's raw output (every candidate, memory level and "
                         "loop order) here")
    ap.add_argument("--from-zigzag", type=Path,
                    help="read ZigZag's raw output from a --save-zigzag file of the same "
                         "layers instead of running ZigZag (to re-measure our side after "
                         "a cost-model change)")
    a = ap.parse_args()
    hw = get_chip(a.chip)
    freq = hw.unit.frequency_hz
    dram_bpc = max(1, round(hw.dram.bytes_per_s / freq))
    batches = (1,) if a.quick else (1, a.batch)
    if a.subtiles:
        sub = subtile_cases(a.subtiles, a.batch, hw)
        cases = [(net, layer, b) for net, layer, b, _ in sub]
        extents = [e for *_, e in sub]
    else:
        cases = [(net, layer, b) for b in batches for net, layer in layers_of(a.quick)]
        extents = [None] * len(cases)
    spec_layers, groups = [], []
    for i, ((_, layer, b), ext) in enumerate(zip(cases, extents, strict=True)):
        d, g = zigzag_layer(layer, b, ext)
        d["name"] = f"{i}:{layer.name}:b{b}"
        spec_layers.append(d)
        groups.append(g)
    u = hw.unit
    reg = u.registers
    spec = {"accelerator": {"mac_pj": u.energy.mac_pj,
                            "rf_w_bytes": reg.weight_bytes, "rf_i_bytes": reg.input_bytes,
                            "psum_bits": reg.psum_bits, "rf_pj_per_byte": reg.pj_per_byte,
                            "sram_bw_bytes_per_cycle": int(u.buffer_port_bytes_per_cycle),
                            "sram_bytes": u.buffer_bytes,
                            "sram_pj_per_byte": u.energy.buffer_pj_per_byte,
                            "dram_pj_per_bit": hw.dram.energy_pj_per_bit,
                            "dram_bw_bytes_per_cycle": dram_bpc,
                            "frequency_ghz": freq / 1e9},
            "layers": spec_layers, "optimize": "latency", "lpf_limit": a.lpf_limit}
    if a.from_zigzag:
        result = json.loads(a.from_zigzag.read_text())
        names = [rec.get("name") for rec in result["layers"]]
        if names != [d["name"] for d in spec_layers]:
            sys.exit(f"--from-zigzag: {a.from_zigzag} holds other layers than this run "
                     "(rerun with the same --quick/--batch, or without --from-zigzag)")
    else:
        py = ensure_venv(a.venv)
        with tempfile.TemporaryDirectory() as tmp:
            fin, fout = Path(tmp) / "in.json", Path(tmp) / "out.json"
            fin.write_text(json.dumps(spec))
            print(f"ZigZag on {len(spec_layers)} layers …", file=sys.stderr, flush=True)
            subprocess.run([str(py), str(RUNNER), str(fin), str(fout)], check=False)
            result = json.loads(fout.read_text())
        if a.save_zigzag:
            a.save_zigzag.write_text(json.dumps(result))
    rows = []
    for (net, layer, b), g, rec in zip(cases, groups, result["layers"], strict=True):
        if "error" in rec:
            print(f"skipped {layer.name} (b{b}): ZigZag failed: {rec['error']}", file=sys.stderr)
            continue
        rows.append((net, layer, b, ours(layer, b, hw, dram_bpc), theirs(rec, g, OUR_UNROLLINGS),
                     theirs(rec, g)))
    print(f"\nZigZag {result['zigzag_version']} on one {a.chip} tile (1024 MACs, 1 MiB SRAM "
          f"1.0 pJ/B, DRAM 7.5 pJ/bit at {dram_bpc} B/cycle), lpf_limit {a.lpf_limit}; "
          "ratio = ours / ZigZag. ZigZag restricted to our two unrollings (K128·C8, "
          "OX4·OY4·K8·C8: like for like), and its best of all six by latency (last column)\n")
    print(f"Our model: {a.chip}'s unit, on-chip model {hw.unit.onchip_model!r}; 'compute' = "
          "the array with buffer-port stalls, before the DRAM roof\n")
    print("| network | layer | batch | MACs | our dataflow | cycles ours (compute) | "
          "cycles ZigZag | ratio | "
          "DRAM B ours | DRAM B ZigZag | ratio | on-chip pJ ours | on-chip pJ ZigZag (no RF) | "
          "ratio (no RF) | total pJ ours | total pJ ZigZag | ratio | ZigZag best of all: "
          "mapping, cycles, ours / it |")
    print("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    keys = ("cycles", "dram", "onchip", "onchip_no_rf", "total", "cycles_vs_best")
    ratios: dict[str, list[float]] = {k: [] for k in keys}
    for net, layer, b, o, z, best in rows:
        r = {"cycles": o["cycles"] / z["cycles"], "dram": o["dram_bytes"] / z["dram_bytes"],
             "onchip": o["onchip_pj"] / z["onchip_pj"],
             "onchip_no_rf": o["onchip_pj"] / z["onchip_no_rf_pj"],
             "total": o["total_pj"] / z["total_pj"],
             "cycles_vs_best": o["cycles"] / best["cycles"]}
        for k, v in r.items():
            ratios[k].append(v)
        print(f"| {net} | {layer.name} | {b} | {layer.macs * b:,} | {o['dataflow']} | "
              f"{o['cycles']:,.0f} ({o['compute_cycles']:,.0f}) | {z['cycles']:,.0f} | "
              f"{r['cycles']:.2f} | {o['dram_bytes']:,.0f} | {z['dram_bytes']:,.0f} | "
              f"{r['dram']:.2f} | {o['onchip_pj']:,.0f} | {z['onchip_pj']:,.0f} "
              f"({z['onchip_no_rf_pj']:,.0f}) | {r['onchip']:.2f} ({r['onchip_no_rf']:.2f}) | "
              f"{o['total_pj']:,.0f} | {z['total_pj']:,.0f} | {r['total']:.2f} | "
              f"{best['mapping']}, {best['cycles']:,.0f}, {r['cycles_vs_best']:.2f} |")
    print("\n| quantity (ours / ZigZag) | layers | median | geometric mean | min | max |")
    print("|---|---:|---:|---:|---:|---:|")
    names = {"cycles": "cycles", "dram": "DRAM bytes", "onchip": "on-chip energy",
             "onchip_no_rf": "on-chip energy, ZigZag without registers",
             "total": "total energy",
             "cycles_vs_best": "cycles, against ZigZag's best of all six unrollings"}
    for k, vs in ratios.items():
        if vs:
            gm = math.exp(statistics.mean(math.log(v) for v in vs))
            print(f"| {names[k]} | {len(vs)} | {statistics.median(vs):.2f} | {gm:.2f} | "
                  f"{min(vs):.2f} | {max(vs):.2f} |")
    groups_: dict[tuple[str, int], list[int]] = {}
    for i, (net, _layer, b, *_) in enumerate(rows):
        groups_.setdefault((net, b), []).append(i)
    if len(groups_) > 1:
        print("\nMedians per network and batch (ours / ZigZag):\n")
        print("| network | batch | layers | cycles | on-chip energy | on-chip, no RF | "
              "DRAM bytes | total energy |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        for (net, b), idx in groups_.items():
            med = {k: statistics.median(ratios[k][i] for i in idx)
                   for k in ("cycles", "onchip", "onchip_no_rf", "dram", "total")}
            print(f"| {net} | {b} | {len(idx)} | {med['cycles']:.2f} | {med['onchip']:.2f} | "
                  f"{med['onchip_no_rf']:.2f} | {med['dram']:.2f} | {med['total']:.2f} |")
    wall = sum(z["wall_s"] for *_, z, _b in rows)
    print(f"\nZigZag time: {wall:.0f} s for {len(rows)} layers "
          f"({wall / max(len(rows), 1):.1f} s per layer)")
    if a.json:
        a.json.write_text(json.dumps([{"network": n, "layer": la.name, "batch": b, "ours": o,
                                       "zigzag": z, "zigzag_best": bz}
                                      for n, la, b, o, z, bz in rows], indent=1))


if __name__ == "__main__":
    main()
