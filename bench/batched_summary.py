#!/usr/bin/env python3
"""Summarizes a gnn-bench --batched run (its JSON) into summary.json and a
Markdown table: per case the fastest cuSPARSE algorithm, gnnc's best general
schedule and the best batched schedule on the same block-diagonal batch, and
the batched kernel's fraction of the copy bandwidth on compulsory bytes.

usage: batched_summary.py RESULTS.json OUT_DIR
"""
import json
import math
import sys


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def stats(values):
    if not values:
        return None
    return {"geomean": round(geomean(values), 3), "worst": round(min(values), 3),
            "cases": len(values)}


def main():
    doc = json.load(open(sys.argv[1]))
    out = sys.argv[2]
    rows, vs_general, vs_cusparse, copy64 = [], [], [], []
    for case in doc.get("batched_cases", []):
        best = case.get("best")
        if not best:
            continue
        b, g, c = best["batched_ms"], best["general_ms"], best["cusparse_ms"]
        if b > 0 and g > 0:
            vs_general.append(g / b)
        if b > 0 and c > 0:
            vs_cusparse.append(c / b)
        if b > 0 and case["width"] >= 64:
            copy64.append(best["batched_copy_fraction"])
        rows.append(
            "| %s | %d | %s | %d | %.4f | %.4f | %.4f | %.2fx | %.2fx | %.0f%% | %.0f%% | `%s` | `%s` |"
            % (case["batch"], case["graphs"], case["type"], case["width"], c,
               g, b, g / b if b and g else 0, c / b if b and c else 0,
               100 * best["batched_copy_fraction"],
               100 * best["general_copy_fraction"],
               best["batched_schedule"].replace("#gnn.schedule<", "<"),
               best["general_schedule"].replace("#gnn.schedule<", "<")))
    device = doc.get("device", {})
    summary = {
        "device": device.get("name"),
        "date": doc.get("date"),
        "copy_bandwidth_gbs": doc.get("copy_bandwidth_gbs"),
        "batched_vs_gnnc_general": stats(vs_general),
        "batched_vs_cusparse_blockdiag": stats(vs_cusparse),
        "batched_copy_fraction_w64plus": stats(copy64),
        "readout": None,
        "fused_layer": None,
        "note": "readout and its backward are checked on the GPU but not "
                "timed; the fused GCN/GIN layer is not implemented. "
                "copy fraction: compulsory bytes (X read once, Y written "
                "once, row offsets and column indices read once) per second "
                "over the device-to-device copy bandwidth (read + write).",
    }
    json.dump(summary, open(out + "/summary.json", "w"), indent=1)
    with open(out + "/results.md", "w") as f:
        f.write("# Batched SpMM, %s, %s\n\n" % (device.get("name"),
                                              doc.get("date")))
        f.write("Median ms of %s runs, L2 flushed before each; copy "
                "bandwidth %.0f GB/s (read + write).\n\n"
                % (doc.get("options", {}).get("runs", "?"),
                   doc.get("copy_bandwidth_gbs", 0)))
        f.write("| batch | graphs | type | width | cuSPARSE | gnnc general "
                "| gnnc batched | vs general | vs cuSPARSE | batched copy "
                "| general copy | batched schedule | general schedule |\n")
        f.write("|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|---|---|\n")
        f.write("\n".join(rows) + "\n\n")
        f.write("```\n" + json.dumps(summary, indent=1) + "\n```\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
