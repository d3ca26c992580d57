#!/usr/bin/env python3
"""Scores the cost model's first choice on a gnn-bench run.

gnn-bench times a fixed list of SDDMM (or, with --op spmm, SpMM) schedules
per case (graph, type, width). gnn-tune without a GPU ranks every enumerated schedule by the cost
model alone. For each case this takes the model's ranking restricted to the
schedules gnn-bench timed, and prints the model's first choice, the fastest
measured schedule, and the first choice's measured time over the fastest;
then the geomean and the worst of that ratio.

    for g in GRAPH.npz...; do
      gnn-tune bench/tune/sddmm-eval-widths.gnn $g --no-measure --no-db \\
        --arch sm_90 --show 400 -o OUT > LOGS/$(basename $g .npz).txt
    done
    python3 bench/tune/bench_first_choice.py GNN_BENCH.json LOGS [--op spmm]

The logs are named after gnn-bench's graphs (LOGS/<graph>.txt); the kernels
are named ..._<type>_<width> or ..._<type>_w<width> (sddmm-eval-widths.gnn,
spmm-eval-peers.gnn for --op spmm).
"""
import json
import math
import os
import re
import sys


def schedule_key(text):
    """gnn-tune's table name of a #gnn.schedule<...>."""
    fields = dict(re.findall(r"(\w+) = (\w+)", text))
    key = "vw={} dw={} tpb={}".format(fields.get("vector_width"),
                                      fields.get("dim_workers"),
                                      fields.get("threads_per_block"))
    if fields.get("strategy") == "neighbor_group":
        key += " gs=" + fields["group_size"]
    elif fields.get("strategy") == "edge_parallel":
        key += " ep=" + fields["edges_per_warp"]
    if "blocks_per_sm" in fields:
        key += " bps=" + fields["blocks_per_sm"]
    if "edge_batch" in fields:
        key += " eb=" + fields["edge_batch"]
    return key


def predictions(path):
    """{(type, width): {schedule: predicted us}} from a gnn-tune log."""
    out, kernel = {}, None
    for line in open(path):
        m = re.match(r"kernel \w+?_(f\d+|bf16)_w?(\d+) ", line)
        if m:
            kernel = (m.group(1), int(m.group(2)))
            out[kernel] = {}
            continue
        m = re.match(r"\s+\d+\s+(vw=\S+ dw=\S+ tpb=\S+(?: gs=\S+| ep=\S+)?"
                     r"(?: bps=\S+)?(?: eb=\S+)?)\s+([\d.]+) us", line)
        if m and kernel:
            out[kernel][m.group(1)] = float(m.group(2))
    return out


def main(argv):
    op = "sddmm"
    if len(argv) == 5 and argv[3] == "--op" and argv[4] in ("sddmm", "spmm"):
        op = argv[4]
    elif len(argv) != 3:
        sys.exit(__doc__)
    results = "gnnc_sddmm" if op == "sddmm" else "gnnc"
    bench = json.load(open(argv[1]))
    ratios = []
    print("| graph | type | width | model's first | fastest | first / fastest |")
    print("|---|---|--:|---|---|--:|")
    for case in bench["cases"]:
        log = os.path.join(argv[2], case["graph"] + ".txt")
        if not os.path.exists(log):
            continue
        ranked = predictions(log).get((case["type"], case["width"]), {})
        measured = {schedule_key(k["schedule"]): k["time_ms"]["median"]
                    for k in case.get(results, [])
                    if k.get("status") == "ok"}
        both = [k for k in measured if k in ranked]
        if not both:
            continue
        first = min(both, key=lambda k: ranked[k])
        fastest = min(both, key=lambda k: measured[k])
        ratio = measured[first] / measured[fastest]
        ratios.append(ratio)
        print("| {} | {} | {} | {} | {} | {:.2f} |".format(
            case["graph"], case["type"], case["width"], first, fastest, ratio))
    if ratios:
        geomean = math.exp(sum(map(math.log, ratios)) / len(ratios))
        print("\n{} cases: first / fastest geomean {:.3f}, worst {:.2f}".format(
            len(ratios), geomean, max(ratios)))


if __name__ == "__main__":
    main(sys.argv)
