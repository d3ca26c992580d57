#!/usr/bin/env python3
"""Scores the autotuner from exhaustive gnn-tune logs.

Run gnn-tune with --top-k and --show at least the number of schedules (every
enumerated schedule measured), then:

    python3 bench/tune/evaluate.py LOG...

For each kernel whose table lists every enumerated schedule with a measured
time, it prints one Markdown row:

  (a) the measured time of the cost model's first choice,
  (b) the best measured time among the schedules a --top-k 5 run measures
      (gnn-tune's measurement order: each strategy's leader when it is
      predicted within 2x of the overall leader, then by rank),
  (c) the best measured time of all,
  (d) gnn-default-schedule's schedule (vertex-parallel, widest legal vector,
      lanes to cover the row once, 256 threads),
  (e) GNNAdvisor's dimension-worker rule on gnnc's vertex-parallel kernel
      (scalar loads, 32 dimension workers, 128 threads; without neighbour
      groups); n/a for gnn.sddmm kernels, since the rule is one for
      aggregation (SpMM),

then (a)/(c), (b)/(c) and the Spearman rank correlation of predicted against
measured times, and the geomeans and worst cases of (a)/(c) and (b)/(c).
Kernels whose table is incomplete are listed as skipped. gnn.spmm and
gnn.sddmm kernels (gnn-tune's "sddmm dot" or "sddmm add" after the width)
are told apart: the type column names the op of an sddmm kernel, and the
summary gives the geomeans of each op as well as of all kernels.

    python3 bench/tune/evaluate.py LOG... --model MODEL_LOG...

re-scores the measured times of LOG with the ranking of MODEL_LOG: gnn-tune
runs without a GPU (or with --no-measure) on the same graphs and kernels,
e.g. after a change to the cost model; the schedules are matched by name.
"""
import math
import os
import re
import sys

CLOSE_STRATEGIES = 2.0
ADVISOR = "vw=1 dw=32 tpb=128"

KERNEL = re.compile(
    r"kernel (\S+) \((\w+), width (\d+)((?:, [^)]*)?)\) on (\S+): (\d+) schedules")
ROW = re.compile(
    r"\s+(\d+)\s+(vw=\d+ dw=\d+ tpb=\d+(?: ep=\d+)?(?: gs=\d+)?)\s+([\d.]+) (us|ms)"
    r"\s+(?:[\d.]+ (?:us|ms)\s+){4}(?:([\d.]+) (us|ms)|-)")


def micro(value, unit):
    return float(value) * (1000.0 if unit == "ms" else 1.0)


def kernel_op(details):
    """The op of a kernel line from what follows its width: "spmm", or
    "sddmm dot" / "sddmm add" (with ", leaky_relu" when it has one)."""
    m = re.search(r"sddmm (dot|add)", details)
    if not m:
        return "spmm"
    return "sddmm " + m.group(1) + (
        " leaky_relu" if "leaky_relu" in details else "")


def parse(path):
    """Returns {(graph, op, type, width): (enumerated, [(rank, schedule,
    predicted_us, measured_us or None)])}."""
    kernels, current = {}, None
    for line in open(path):
        m = KERNEL.match(line)
        if m:
            current = (m.group(5), kernel_op(m.group(4)), m.group(2),
                       int(m.group(3)))
            kernels[current] = (int(m.group(6)), [])
            continue
        m = ROW.match(line)
        if m and current:
            measured = micro(m.group(5), m.group(6)) if m.group(5) else None
            kernels[current][1].append(
                (int(m.group(1)), m.group(2), micro(m.group(3), m.group(4)),
                 measured))
    return kernels


def ranks(values):
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2.0
        i = j + 1
    return out


def spearman(a, b):
    ra, rb = ranks(a), ranks(b)
    ma, mb = sum(ra) / len(ra), sum(rb) / len(rb)
    cov = sum((x - ma) * (y - mb) for x, y in zip(ra, rb))
    var = sum((x - ma) ** 2 for x in ra) * sum((y - mb) ** 2 for y in rb)
    return cov / math.sqrt(var) if var > 0 else float("nan")


def strategy(schedule):
    return "ep" if "ep=" in schedule else "gs" if "gs=" in schedule else "vp"


def measured_by_top_k(rows, k):
    # The leader, then each other strategy's leader when its prediction is
    # within CLOSE_STRATEGIES of the leader's (gnnc::tuning::measurementOrder).
    chosen = [0]
    seen = {strategy(rows[0][1])}
    for i, row in enumerate(rows):
        if len(chosen) >= k:
            break
        if strategy(row[1]) in seen:
            continue
        seen.add(strategy(row[1]))
        if row[2] <= CLOSE_STRATEGIES * rows[0][2]:
            chosen.append(i)
    chosen = sorted(chosen)[:k]
    for i in range(len(rows)):
        if len(chosen) >= k:
            break
        if i not in chosen:
            chosen.append(i)
    return chosen


def default_schedule(type_, width):
    vw = 4 if type_ == "f32" else 8
    lanes = 1
    while lanes < width // vw and lanes < 32:
        lanes *= 2
    return "vw=%d dw=%d tpb=256" % (vw, lanes)


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def rerank(measured_logs, model_logs):
    """Kernels of `model_logs` with their predictions and the measured times
    of the same schedules in `measured_logs`."""
    measured = {}
    for path in measured_logs:
        for key, (enumerated, rows) in parse(path).items():
            measured[key] = (enumerated, {r[1]: r[3] for r in rows})
    kernels = {}
    for path in model_logs:
        for key, (enumerated, rows) in parse(path).items():
            if key in measured:
                times = measured[key][1]
                kernels[key] = (measured[key][0],
                                [(r[0], r[1], r[2], times.get(r[1]))
                                 for r in rows])
    return kernels


def main(paths, model_paths=None):
    print("| graph | type | (a) model's choice | (a) us | (b) us | (c) us "
          "(best) | (d) default us | (e) GNNAdvisor rule us | (a)/(c) | "
          "(b)/(c) | Spearman |")
    print("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|")
    a_ratios, b_ratios, skipped = [], [], []
    by_op = {}
    groups = ([rerank(paths, model_paths)] if model_paths else
              [parse(path) for path in paths])
    for kernels in groups:
        for (graph, op, type_, width), (enumerated, rows) in kernels.items():
            label = "%s w%d" % (type_, width)
            if op != "spmm":
                label += " " + op
            if len(rows) != enumerated or any(r[3] is None for r in rows):
                measured = sum(r[3] is not None for r in rows)
                skipped.append("%s %s (%d of %d schedules measured)" %
                               (graph, label, measured, enumerated))
                continue
            rows.sort(key=lambda r: r[0])
            a = rows[0][3]
            b = min(rows[i][3] for i in measured_by_top_k(rows, 5))
            best = min(rows, key=lambda r: r[3])
            c = best[3]
            by_name = {r[1]: r[3] for r in rows}
            d = by_name.get(default_schedule(type_, width), float("nan"))
            # GNNAdvisor's rule is an aggregation (SpMM) rule.
            e = ("%.1f" % by_name.get(ADVISOR, float("nan"))
                 if op == "spmm" else "n/a")
            rho = spearman([r[2] for r in rows], [r[3] for r in rows])
            a_ratios.append(a / c)
            b_ratios.append(b / c)
            family = op.split()[0]
            by_op.setdefault(family, ([], []))
            by_op[family][0].append(a / c)
            by_op[family][1].append(b / c)
            print("| %s | %s | %s | %.1f | %.1f | %.1f (%s) | %.1f | %s "
                  "| %.3f | %.3f | %.2f |" %
                  (graph, label, rows[0][1], a, b, c, best[1], d, e,
                   a / c, b / c, rho))

    def summary(name, a_list, b_list):
        print("%d %s: (a)/(c) geomean %.3f, worst %.3f; (b)/(c) geomean "
              "%.3f, worst %.3f" %
              (len(a_list), name, geomean(a_list), max(a_list),
               geomean(b_list), max(b_list)))

    if a_ratios:
        print()
        summary("kernels", a_ratios, b_ratios)
        if len(by_op) > 1:
            for family in sorted(by_op):
                summary(family + " kernels", *by_op[family])
    for s in skipped:
        print("skipped: " + s)


if __name__ == "__main__":
    args = sys.argv[1:]
    model = None
    if "--model" in args:
        i = args.index("--model")
        args, model = args[:i], args[i + 1:]
    usage = "usage: evaluate.py GNN-TUNE-LOG... [--model MODEL-LOG...]"
    if "-h" in args or "--help" in args:
        print(usage)
        print(__doc__)
        sys.exit(0)
    if not args or model == []:
        sys.exit(usage)
    for path in args + (model or []):
        if not os.path.isfile(path):
            sys.exit("evaluate.py: %s: no such file" % path)
    main(args, model)
