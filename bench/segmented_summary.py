#!/usr/bin/env python3
"""Summarizes the segmented-matmul runs into summary.json and a Markdown
table (table.md).

Inputs: the JSON of examples/bench_segmented.py (PyTorch: impls
torch_loop, torch_bmm_padded, pyg_heterolinear, gnnc; and "rgcn") and,
optionally, the JSON of `gnn-bench --segments` (the same "records" format,
impls cublas_loop, cublas_grouped, gnnc_tuned). Records are merged by case
(set, dtype, K, M, pass). Per case, gnnc's time is the fastest of its
impls that passed their check (gnnc, gnnc_tuned) and the baseline the
fastest other impl that passed; the speedup is baseline / gnnc (above 1:
gnnc is faster). A case without a passing gnnc or baseline is listed and
left out of the statistics.

summary.json: forward_vs_best and backward_vs_best ({"geomean", "worst",
"cases"}, each with "by_dtype": tf32 and f16 apart; forward_vs_best over
both dtypes; and "ceiling": over the cases gnn-bench timed, the best
baseline's time over the bound (compulsory bytes at the copy bandwidth or
flops at the tensor-core peak), the largest speedup any kernel could
reach, with the counts of cases below 2x and 1.2x), rgcn_vs_pyg (per dataset, the fastest of PyG's RGCNConv and
FastRGCNConv over gnnc's RGCNConv; same statistics), bound_fraction_large
(gnn-bench's gnnc_tuned on the cases whose compulsory bytes, X and Y with
the weights, exceed LARGE_BYTES: the larger of the copy-bandwidth fraction
of those bytes and the tensor-core-peak fraction of the flops, both passes;
same statistics), and the cases.

usage: segmented_summary.py BENCH_SEGMENTED.json [--gnn-bench GNN_BENCH.json]
                            [--out DIR]
"""
import argparse
import json
import math
import os

#: gnnc as a user runs it: the PyTorch op and gnn-bench's tuned choice.
GNNC_IMPLS = ("gnnc", "gnnc_tuned")
#: gnnc's best of a measured sweep: how good the model's pick is, neither
#: ours as run nor a baseline.
GNNC_REFERENCE = ("gnnc_best",)
#: Cases whose compulsory bytes exceed this are "large": the hardware bound
#: (copy bandwidth or tensor-core peak) is what they are held to.
LARGE_BYTES = 64 * 2**20


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def stats(values):
    if not values:
        return None
    return {"geomean": round(geomean(values), 3), "worst": round(min(values), 3),
            "cases": len(values)}


def case_key(r):
    return (r["set"], r["dtype"], int(r["K"]), int(r["M"]), r["pass"])


def passed(r):
    return r.get("ok") is True and r.get("ms") is not None and r["ms"] > 0


def merge(docs):
    """Records by case, then by impl; a later document's record of the same
    case and impl replaces an earlier one."""
    cases = {}
    for doc in docs:
        for r in doc.get("records", []):
            cases.setdefault(case_key(r), {})[r["impl"]] = r
    return cases


def bound_terms(docs):
    """Per gnn-bench record with its bytes: the record, the seconds its
    compulsory bytes take at the run's copy bandwidth and the seconds its
    flops take at the run's tensor-core peak (0 without one)."""
    for doc in docs:
        copy_gbs = doc.get("copy_gbs")
        peaks = doc.get("tensor_core_peak_flops") or {}
        if not copy_gbs:
            continue
        for r in doc.get("records", []):
            if not r.get("bytes"):
                continue
            peak = peaks.get(r["dtype"])
            yield (r, r["bytes"] / (copy_gbs * 1e9),
                   r.get("flops", 0) / peak if peak else 0.0)


def bound_ms(docs):
    """Per case that gnn-bench timed: the time no kernel can beat, the
    larger of its compulsory bytes at the copy bandwidth and its flops at
    the tensor-core peak (the same run's figures)."""
    return {case_key(r): max(b, c) * 1e3 for r, b, c in bound_terms(docs)}


def compare(cases, bounds=None):
    """One row per case: gnnc's best, the best baseline, the speedup, and
    where gnn-bench gives the bound, the ceiling: the best baseline over
    the bound, the largest speedup any kernel could reach."""
    bounds = bounds or {}
    rows = []
    for key in sorted(cases):
        impls = cases[key]
        ours = [r for name, r in impls.items() if name in GNNC_IMPLS and passed(r)]
        base = [r for name, r in impls.items()
                if name not in GNNC_IMPLS + GNNC_REFERENCE and passed(r)]
        best_ours = min(ours, key=lambda r: r["ms"]) if ours else None
        best_base = min(base, key=lambda r: r["ms"]) if base else None
        row = dict(zip(("set", "dtype", "K", "M", "pass"), key))
        row.update(gnnc_impl=best_ours and best_ours["impl"],
                   gnnc_ms=best_ours and best_ours["ms"],
                   baseline_impl=best_base and best_base["impl"],
                   baseline_ms=best_base and best_base["ms"],
                   speedup=(round(best_base["ms"] / best_ours["ms"], 3)
                            if best_ours and best_base else None),
                   bound_ms=bounds.get(key),
                   ceiling=(round(best_base["ms"] / bounds[key], 3)
                            if best_base and key in bounds else None),
                   failed=sorted(name for name, r in impls.items()
                                 if r.get("ok") is False))
        rows.append(row)
    return rows


def pass_stats(rows, pass_):
    chosen = [r for r in rows if r["pass"] == pass_ and r["speedup"] is not None]
    out = stats([r["speedup"] for r in chosen]) or {}
    out["by_dtype"] = {d: stats([r["speedup"] for r in chosen if r["dtype"] == d])
                       for d in sorted({r["dtype"] for r in chosen})}
    # The hardware's share: how far the best baseline is from the bound,
    # and in how many cases even a kernel at the bound stays under 2x.
    ceilings = [r["ceiling"] for r in chosen if r["ceiling"] is not None]
    if ceilings:
        out["ceiling"] = stats(ceilings)
        out["ceiling"]["below_2x"] = sum(c < 2 for c in ceilings)
        out["ceiling"]["below_1_2x"] = sum(c < 1.2 for c in ceilings)
    return out


def rgcn_rows(docs):
    by_dataset = {}
    for doc in docs:
        for r in doc.get("rgcn", []):
            by_dataset.setdefault(r["dataset"], {})[r["impl"]] = r
    rows = []
    for name in sorted(by_dataset):
        impls = by_dataset[name]
        ours = impls.get("gnnc_rgcnconv")
        pyg = [r for n, r in impls.items() if n.startswith("pyg_") and passed(r)]
        best = min(pyg, key=lambda r: r["ms"]) if pyg else None
        ok = ours is not None and passed(ours)
        rows.append(dict(dataset=name, gnnc_ms=ours and ours.get("ms"),
                         pyg_impl=best and best["impl"], pyg_ms=best and best["ms"],
                         speedup=(round(best["ms"] / ours["ms"], 3)
                                  if ok and best else None)))
    return rows


def bound_fractions(docs):
    """Per large case of gnn-bench's gnnc_tuned, the fraction of the bound
    that applies: max(bytes / time / copy bandwidth, flops / time / peak)."""
    out = []
    for r, bandwidth_s, compute_s in bound_terms(docs):
        if r.get("impl") != "gnnc_tuned" or not passed(r):
            continue
        if r["bytes"] <= LARGE_BYTES:
            continue
        seconds = r["ms"] * 1e-3
        bandwidth, compute = bandwidth_s / seconds, compute_s / seconds
        out.append(dict(zip(("set", "dtype", "K", "M", "pass"), case_key(r)),
                        fraction=round(max(bandwidth, compute), 3),
                        bound="bandwidth" if bandwidth >= compute else "tensor cores"))
    return out


def fmt(v, digits=3):
    return "-" if v is None else f"{v:.{digits}f}"


def table(rows, rgcn, summary):
    lines = ["# Segmented matmul: gnnc against the fastest baseline", "",
             "Speedup = fastest passing baseline / fastest passing gnnc (above 1: "
             "gnnc is faster).", ""]
    for name in ("forward_vs_best", "backward_vs_best", "rgcn_vs_pyg",
                 "bound_fraction_large"):
        s = summary.get(name) or {}
        lines.append(f"- {name}: geomean {fmt(s.get('geomean'))}, worst "
                     f"{fmt(s.get('worst'))} over {s.get('cases', 0)} cases"
                     + "".join(f"; {d} {fmt(v and v['geomean'])} (worst "
                               f"{fmt(v and v['worst'])})"
                               for d, v in (s.get("by_dtype") or
                                            s.get("by_pass") or {}).items()))
    for name in ("forward_vs_best", "backward_vs_best"):
        c = (summary.get(name) or {}).get("ceiling")
        if c:
            lines.append(f"- {name} ceiling (best baseline / bound): geomean "
                         f"{fmt(c['geomean'])}, worst {fmt(c['worst'])}; below "
                         f"2x in {c['below_2x']} of {c['cases']} cases, below "
                         f"1.2x in {c['below_1_2x']}")
    lines += ["", "| set | dtype | K | M | pass | gnnc ms | best baseline | "
              "baseline ms | speedup | bound ms | ceiling | failed checks |",
              "|---|---|--:|--:|---|--:|---|--:|--:|--:|--:|---|"]
    for r in rows:
        lines.append(f"| {r['set']} | {r['dtype']} | {r['K']} | {r['M']} | {r['pass']} | "
                     f"{fmt(r['gnnc_ms'])} ({r['gnnc_impl'] or '-'}) | "
                     f"{r['baseline_impl'] or '-'} | {fmt(r['baseline_ms'])} | "
                     f"{fmt(r['speedup'], 2)} | {fmt(r.get('bound_ms'))} | "
                     f"{fmt(r.get('ceiling'), 2)} | {', '.join(r['failed']) or ''} |")
    if rgcn:
        lines += ["", "| RGCN dataset | gnnc ms | fastest PyG | PyG ms | speedup |",
                  "|---|--:|---|--:|--:|"]
        for r in rgcn:
            lines.append(f"| {r['dataset']} | {fmt(r['gnnc_ms'])} | {r['pyg_impl'] or '-'} "
                         f"| {fmt(r['pyg_ms'])} | {fmt(r['speedup'], 2)} |")
    return "\n".join(lines) + "\n"


def summarize(bench_path, gnn_bench_path=None, out_dir="."):
    docs = [json.load(open(bench_path))]
    if gnn_bench_path:
        docs.append(json.load(open(gnn_bench_path)))
    rows = compare(merge(docs), bound_ms(docs))
    rgcn = rgcn_rows(docs)
    speedups = [r["speedup"] for r in rgcn if r["speedup"] is not None]
    large = bound_fractions(docs)
    bound = dict(stats([r["fraction"] for r in large]) or {})
    bound["by_pass"] = {p: stats([r["fraction"] for r in large if r["pass"] == p])
                        for p in sorted({r["pass"] for r in large})}
    summary = {
        "sources": [bench_path] + ([gnn_bench_path] if gnn_bench_path else []),
        "device": docs[0].get("device"),
        "forward_vs_best": pass_stats(rows, "forward"),
        "backward_vs_best": pass_stats(rows, "backward"),
        "rgcn_vs_pyg": dict(stats(speedups) or {}),
        "bound_fraction_large": bound,
        "large_cases": large,
        "cases": rows,
        "rgcn": rgcn,
    }
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(out_dir, "table.md"), "w") as f:
        f.write(table(rows, rgcn, summary))
    return summary


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench", help="examples/bench_segmented.py's JSON")
    ap.add_argument("--gnn-bench", help="gnn-bench --segments' JSON (optional)")
    ap.add_argument("--out", default=".", help="folder of summary.json and table.md")
    args = ap.parse_args(argv)
    s = summarize(args.bench, args.gnn_bench, args.out)
    for name in ("forward_vs_best", "backward_vs_best", "rgcn_vs_pyg",
                 "bound_fraction_large"):
        print(name, json.dumps({k: v for k, v in (s[name] or {}).items()}))


if __name__ == "__main__":
    main()
