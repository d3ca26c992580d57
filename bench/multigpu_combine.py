"""Combines several runs of examples/bench_multigpu.py (and of
train_ddp_proteins.py pairs at world sizes 1 and 2) into one summary.json:
the full-graph and accuracy keys from --full (a complete bench_multigpu
run), ddp_scaling_2gpu as the median over --ddp-pairs of the two-GPU /
one-GPU molecule throughput ratios, every pair listed, with the same
statistics bench_multigpu --interleave writes (examples/bench_multigpu.py
ddp_scaling: one computation for both).

  python bench/multigpu_combine.py --full full --ddp-pairs A/raw/ddp_w1.json A/raw/ddp_w2.json \
      B/w1.json B/w2.json --out summary.json

One-GPU host-bound training varies by 10-20% between processes on the same
machine, so one pair of processes is not enough to judge a scaling target;
`bench_multigpu.py --interleave N` makes N pairs in one run.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import bench_multigpu as B  # noqa: E402


def load_pair(one, two, data):
    r1, r2 = json.loads(Path(one).read_text()), json.loads(Path(two).read_text())
    if r1.get("world_size") != 1 or r2.get("world_size") != 2:
        raise SystemExit(f"{one}, {two}: not a world-1 / world-2 pair")
    if B.ddp_throughput(r1, data) is None or B.ddp_throughput(r2, data) is None:
        raise SystemExit(f"{one}, {two}: no {data} throughput in both")
    return B.ddp_pair(r1, r2, f"{one} + {two}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--full", required=True, help="a bench_multigpu --out-dir")
    p.add_argument("--ddp-pairs", nargs="+", required=True,
                   help="results JSON of world 1 then world 2, pair after pair")
    p.add_argument("--data", default="molecules", choices=B.DDP_DATA)
    p.add_argument("--out", required=True)
    a = p.parse_args()
    if len(a.ddp_pairs) % 2:
        raise SystemExit("--ddp-pairs takes pairs: world 1, then world 2")
    summary = json.loads((Path(a.full) / "summary.json").read_text())
    pairs = [load_pair(one, two, a.data)
             for one, two in zip(a.ddp_pairs[::2], a.ddp_pairs[1::2])]
    ddp = B.ddp_scaling(pairs)
    summary["ddp_scaling_2gpu_full_run"] = summary["ddp_scaling_2gpu"]
    summary.update(ddp)
    summary["ddp_scaling_2gpu"] = ddp["ddp_scaling_2gpu_stats"][a.data]["median_of_ratios"]
    summary["combined_from"] = dict(full=a.full, ddp_pairs=a.ddp_pairs)
    Path(a.out).write_text(json.dumps(summary, indent=2, default=str))
    print(json.dumps({k: summary[k] for k in ("ddp_scaling_2gpu", "fullgraph_scaling_2gpu",
                                              "exchange_volume_vs_boundary",
                                              "accuracy_delta_points")}, indent=2))
    st = ddp["ddp_scaling_2gpu_stats"][a.data]
    print("pairs:", [round(r, 3) for r in st["ratios"]],
          f"ratio of medians {st['ratio_of_medians']:.3f}")


if __name__ == "__main__":
    main()
