"""Runs the training examples (node classification, R-MAT speed, PROTEINS)
and writes summary.json and the raw results (results.json) to --out-dir.

  python examples/bench_training.py --out-dir bench-out            # everything (~8 min on an H100)
  python examples/bench_training.py --quick --out-dir bench-out    # smoke run
  python examples/bench_training.py --parts rmat --scales 22 --out-dir bench-22
  python examples/bench_training.py --merge a/results.json rmat=rmat22.json --out-dir all

--merge summarizes runs made apart (on several GPUs, or in several sittings)
without training: each FILE is a results.json of this script, or PART=FILE
the --out of train_node.py, train_rmat.py or train_proteins.py. Node and
R-MAT rows are pooled, a later file's row of the same case (node: dataset,
model, precision; R-MAT: scale, model) replacing an earlier one's; a later
file's PROTEINS part replaces an earlier one.

summary.json:
- accuracy_delta_points: the largest |gnnc - PyG| mean test accuracy (points)
  over models (GCN, GAT, GIN), datasets (cora, citeseer) and precisions
  (gnnc f32 and f16; PyG f32), over --seeds seeds (10 by default);
- epoch_speedup_f16_vs_pyg_f32, epoch_speedup_f32_vs_pyg_f32: PyG's epoch
  time (its faster configuration, edge_index or torch.sparse CSR) over
  gnnc's, the smallest over GCN and GIN and the R-MAT scales run. The half
  precision run is f16; where f16 training overflowed (a loss that is not
  finite: GIN's unnormalised sums over R-MAT hubs exceed f16's range) the
  bf16 run of the same model stands in, and half_precision_runs says so;
- gat_epoch_speedup: the same for 4-head GAT, gnnc f16 vs PyG's fastest f32;
- memory_ratio_f16_vs_pyg_f32: gnnc half-precision peak memory / PyG f32
  peak (its fastest configuration), the largest over the R-MAT models and
  scales (the same f16-or-bf16 run as above);
- proteins_epoch_speedup: PROTEINS GIN epoch time, PyG f32 over gnnc f32
  (proteins_epoch_speedup_f16: over gnnc f16; proteins_epoch_speedup_cuda_graphs:
  over gnnc f32 with each batch's step captured in a CUDA graph, and
  ..._vs_pyg_graphs: PyG captured the same way over it).
A key is null when its part did not run (or, for a dataset, was absent).
"""
from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

import gnn_common as C
import train_node
import train_proteins
import train_rmat


def _min(xs):
    xs = [x for x in xs if x is not None]
    return min(xs) if xs else None


def _max(xs):
    xs = [x for x in xs if x is not None]
    return max(xs) if xs else None


def half_run(row):
    """'f16', or 'bf16' where the f16 run's loss is not finite and a bf16 run
    exists."""
    loss = row.get("gnnc_f16", {}).get("loss")
    if loss is not None and not math.isfinite(loss) and "speedup_bf16" in row:
        return "bf16"
    return "f16"


def summarize(raw):
    node = raw.get("node", {}).get("results", [])
    rmat = raw.get("rmat", {}).get("results", [])
    prot = raw.get("proteins", {}).get("results", {}) or {}
    gcn_gin = [r for r in rmat if r["model"] in ("gcn", "gin")]
    return dict(
        accuracy_delta_points=_max(r.get("acc_delta_points") for r in node),
        accuracy_seeds={r["model"]: r["gnnc"].get("seeds") for r in node if "gnnc" in r},
        epoch_speedup_f16_vs_pyg_f32=_min(r.get(f"speedup_{half_run(r)}") for r in gcn_gin),
        epoch_speedup_f32_vs_pyg_f32=_min(r.get("speedup_f32") for r in gcn_gin),
        gat_epoch_speedup=_min(r.get("speedup_f16") for r in rmat if r["model"] == "gat"),
        memory_ratio_f16_vs_pyg_f32=_max(r.get(f"memory_ratio_{half_run(r)}") for r in rmat),
        half_precision_runs={f"{r['model']} scale {r['scale']}": half_run(r) for r in rmat},
        proteins_epoch_speedup=prot.get("speedup_f32"),
        proteins_epoch_speedup_f16=prot.get("speedup_f16"),
        # Each batch's step captured in a CUDA graph (f32): against PyG as
        # run, and against PyG captured the same way.
        proteins_epoch_speedup_cuda_graphs=prot.get("speedup_f32_graphs"),
        proteins_epoch_speedup_cuda_graphs_vs_pyg_graphs=prot.get(
            "speedup_f32_graphs_vs_pyg_graphs"),
    )


PARTS = ("node", "rmat", "proteins")


def case(part, row):
    """What a row of `part` measures: a later run's row of the same case
    replaces an earlier one's in --merge."""
    if part == "node":
        return row["dataset"], row["model"], row["precision"]
    return row["scale"], row["model"]


def merge(files):
    """The raw results of several runs as one (see --merge)."""
    raw = dict(device=None, merged=[])
    for spec in files:
        part, sep, path = spec.partition("=")
        if not sep or part not in PARTS:
            part, path = None, spec
        data = json.loads(Path(path).read_text())
        pieces = {part: data} if part else {k: data[k] for k in PARTS if k in data}
        if not pieces:
            raise SystemExit(f"--merge: {path} holds none of the parts {', '.join(PARTS)}; "
                             "name a part's own output as PART=FILE")
        for name, piece in pieces.items():
            device = piece.get("device") or data.get("device")
            if raw["device"] not in (None, device):
                raise SystemExit(f"--merge: {path} ({name}) ran on {device}, "
                                 f"the earlier files on {raw['device']}")
            raw["device"] = device
            if name == "proteins" or name not in raw:
                raw[name] = dict(piece, results=piece.get("results", []))
            else:
                rows = {case(name, r): r for r in raw[name]["results"]}
                rows.update({case(name, r): r for r in piece.get("results", [])})
                raw[name]["results"] = list(rows.values())
            raw["merged"].append(f"{name} from {path}")
    return raw


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out-dir", default="bench-training")
    p.add_argument("--parts", nargs="+", default=["node", "rmat", "proteins"],
                   choices=list(PARTS))
    p.add_argument("--quick", action="store_true",
                   help="smoke run: 2 seeds, few epochs, R-MAT scale 16")
    p.add_argument("--seeds", type=int, help="node classification seeds (default 10)")
    p.add_argument("--scales", type=int, nargs="+", help="R-MAT scales (default 20)")
    p.add_argument("--datasets", default="all", choices=["cora", "citeseer", "all"])
    p.add_argument("--models", default="all", choices=["gcn", "gat", "gin", "all"])
    p.add_argument("--merge", nargs="+", metavar="FILE",
                   help="summarize these runs' results instead of training")
    args = p.parse_args()
    if args.merge:
        raw = merge(args.merge)
        summary = summarize(raw)
        summary["device"] = raw["device"]
        summary["parts"] = [k for k in PARTS if k in raw]
        out = Path(args.out_dir)
        C.write_json(out / "results.json", raw)
        C.write_json(out / "summary.json", summary)
        print(json.dumps(summary, indent=2))
        return
    dev = C.device()
    out = Path(args.out_dir)
    raw = dict(device=C.gpu_name(dev), quick=args.quick)
    t0 = time.perf_counter()
    if "node" in args.parts:
        a = train_node.parser().parse_args([
            "--dataset", args.datasets, "--model", args.models, "--precision", "all",
            "--seeds", str(args.seeds or (2 if args.quick else 10)),
            "--epochs", "30" if args.quick else "200", "--warmup", "5"])
        raw["node"] = train_node.run(a, dev)
    if "rmat" in args.parts:
        scales = args.scales or ([16] if args.quick else [20])
        a = train_rmat.parser().parse_args(
            ["--scales", *map(str, scales)] + (["--epochs", "3", "--warmup", "1"]
                                               if args.quick else []))
        raw["rmat"] = train_rmat.run(a, dev)
    if "proteins" in args.parts:
        a = train_proteins.parser().parse_args(
            ["--seeds", "1" if args.quick else "5", "--epochs", "10" if args.quick else "100",
             "--warmup", "2" if args.quick else "5", "--cuda-graphs"])
        raw["proteins"] = train_proteins.run(a, dev)
    raw["wall_s"] = time.perf_counter() - t0
    summary = summarize(raw)
    summary["device"] = raw["device"]
    summary["parts"] = args.parts
    C.write_json(out / "results.json", raw)
    C.write_json(out / "summary.json", summary)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
