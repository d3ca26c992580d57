"""Combines several runs of examples/bench_multigpu.py (and of
train_ddp_proteins.py pairs at world sizes 1 and 2) into one summary.json:
the full-graph and accuracy keys from --full (a complete bench_multigpu
run), ddp_scaling_2gpu as the median over --ddp-pairs of the one-GPU /
two-GPU molecule throughput ratios, every pair listed.

  python bench/multigpu_combine.py --full full --ddp-pairs A/raw/ddp_w1.json A/raw/ddp_w2.json \
      B/w1.json B/w2.json --out summary.json

One-GPU host-bound training varies by 10-20% between processes on the same
machine, so one pair of processes is not enough to judge a scaling target.
"""
from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def throughput(path, data):
    res = json.loads(Path(path).read_text())
    r = res["results"][data]
    return dict(file=str(path), graphs_per_s=r["graphs_per_s"], epoch_ms=r["epoch_ms"],
                batch_size=r.get("batch_size"), world_size=res["world_size"],
                ddp_wrapper=res.get("ddp_wrapper", True),
                broadcast_buffers=res.get("broadcast_buffers", True),
                test_acc=r.get("acc_mean"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--full", required=True, help="a bench_multigpu --out-dir")
    p.add_argument("--ddp-pairs", nargs="+", required=True,
                   help="results JSON of world 1 then world 2, pair after pair")
    p.add_argument("--data", default="molecules")
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if len(a.ddp_pairs) % 2:
        raise SystemExit("--ddp-pairs takes pairs: world 1, then world 2")
    summary = json.loads((Path(a.full) / "summary.json").read_text())
    pairs = []
    for one, two in zip(a.ddp_pairs[::2], a.ddp_pairs[1::2]):
        r1, r2 = throughput(one, a.data), throughput(two, a.data)
        if r1["world_size"] != 1 or r2["world_size"] != 2:
            raise SystemExit(f"{one}, {two}: not a world-1 / world-2 pair")
        pairs.append(dict(one_gpu=r1, two_gpu=r2, scaling=r2["graphs_per_s"] / r1["graphs_per_s"]))
    summary["ddp_scaling_2gpu_full_run"] = summary["ddp_scaling_2gpu"]
    summary["ddp_scaling_2gpu"] = statistics.median(q["scaling"] for q in pairs)
    summary["ddp_scaling_2gpu_pairs"] = pairs
    summary["combined_from"] = dict(full=a.full, ddp_pairs=a.ddp_pairs)
    Path(a.out).write_text(json.dumps(summary, indent=2, default=str))
    print(json.dumps({k: summary[k] for k in ("ddp_scaling_2gpu", "fullgraph_scaling_2gpu",
                                              "exchange_volume_vs_boundary",
                                              "accuracy_delta_points")}, indent=2))
    print("pairs:", [round(q["scaling"], 3) for q in pairs])


if __name__ == "__main__":
    main()
