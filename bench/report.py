#!/usr/bin/env python3
"""Merges gnn-bench's and torch_baseline.py's JSON into a results folder.

Writes OUT/<gpu-name-slug>/<YYYY-MM-DD>/:
  results.json  both inputs, unchanged, plus one summary row per case
  results.md    a table per element type (graph, width, gnnc's best schedule,
                cuSPARSE default and fastest, torch.sparse, PyG scatter,
                index_add, speedups, bandwidth against the compulsory and
                gather bounds as GB/s and as fractions of the measured copy
                bandwidth), SDDMM (gnnc's best beside cuSPARSE SDDMM f32 and
                f16), the GAT chain (gnnc beside PyTorch/PyG), cuSPARSE
                SDDMM, PyTorch baselines timed with fewer than the nominal
                runs (slow calls, marked †), failures and what was skipped
  speedup.png   gnnc's best over cuSPARSE's fastest per graph, grouped by
                type (width 64 when it was run, else the first width)
and prints the markdown. Needs the standard library only; numpy and matplotlib for
the chart (skipped with a message without them).

usage: python3 bench/report.py --bench gnn-bench.json [--torch torch.json]
                               --out DIR
"""

import argparse
import json
import os
import re
import sys


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench", required=True, help="gnn-bench --out JSON")
    p.add_argument("--torch", default="", help="torch_baseline.py JSON")
    p.add_argument("--out", required=True,
                   help="root folder; results go to OUT/<gpu>/<date>/")
    p.add_argument("--plot-width", type=int, default=64)
    return p.parse_args(argv)


def slug(text):
    s = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return s or "unknown-gpu"


def median(entry):
    """The median time in ms of a record with 'time_ms', or None."""
    if not entry:
        return None
    t = entry.get("time_ms")
    if isinstance(t, dict):
        return t.get("median")
    return entry.get("median_ms")


def ratio(num, den):
    if num is None or den is None or den <= 0:
        return None
    return num / den


def fmt_ms(ms):
    return "-" if ms is None else ("%.4f" % ms if ms < 10 else "%.2f" % ms)


def fmt_x(x):
    return "-" if x is None else "%.2f×" % x


def fmt_bw(gbs, frac):
    if gbs is None:
        return "-"
    return "%.0f (%.2f)" % (gbs, frac) if frac is not None else "%.0f" % gbs


def summarize(bench, torch_doc):
    """One flat row per gnn-bench case, joined with the torch case."""
    torch_cases = {}
    if torch_doc:
        for c in torch_doc.get("cases", []):
            torch_cases[(c["graph"], c["type"], int(c["width"]))] = c
    copy_gbs = bench.get("copy_bandwidth_gbs") or None
    rows = []
    for c in bench.get("cases", []):
        key = (c["graph"], c["type"], int(c["width"]))
        best = c.get("gnnc_best")
        cs_default = c.get("cusparse_default")
        cs_fastest = c.get("cusparse_fastest")
        tc = torch_cases.get(key, {}).get("methods", {})
        ve = [k for k in c.get("gnnc", [])
              if k.get("edge_values") and k.get("status") == "ok"]
        wrong = [k for k in c.get("gnnc", []) if k.get("status") != "ok"]

        def torch_ms(method):
            m = tc.get(method)
            return median(m) if m and m.get("status") == "ok" else None

        def torch_status(method):
            m = tc.get(method)
            return None if m is None else m.get("status")

        def torch_runs(method):
            m = tc.get(method)
            t = (m or {}).get("time_ms")
            return t.get("runs") if isinstance(t, dict) else None

        row = {
            "graph": c["graph"], "type": c["type"], "width": c["width"],
            "nnz": c.get("nnz"),
            "gnnc_best_ms": median(best),
            "gnnc_best_schedule": best.get("label") if best else None,
            "gnnc_best_schedule_text": best.get("schedule") if best else None,
            "gnnc_ve_ms": median(ve[0]) if ve else None,
            "gnnc_failures": len(wrong),
            "cusparse_default_ms": median(cs_default),
            "cusparse_fastest_ms": median(cs_fastest),
            "cusparse_fastest_alg": (cs_fastest or {}).get("algorithm"),
            "torch_sparse_mm_ms": torch_ms("torch_sparse_mm"),
            "pyg_scatter_ms": torch_ms("pyg_scatter"),
            "index_add_ms": torch_ms("index_add"),
            "torch_sparse_mm_status": torch_status("torch_sparse_mm"),
            "pyg_scatter_status": torch_status("pyg_scatter"),
            "torch_sparse_mm_runs": torch_runs("torch_sparse_mm"),
            "pyg_scatter_runs": torch_runs("pyg_scatter"),
            "index_add_runs": torch_runs("index_add"),
            "gbs_compulsory": best.get("gbs_compulsory") if best else None,
            "gbs_gather": best.get("gbs_gather") if best else None,
            # The case's gather stream (gnn-bench's gather bound) and gnnc's
            # best as a fraction of it.
            "gather_stream_ms": median(c.get("gather_bound")),
            "of_gather_bound": best.get("of_gather_bound") if best else None,
        }
        row["frac_copy_compulsory"] = ratio(row["gbs_compulsory"], copy_gbs)
        row["frac_copy_gather"] = ratio(row["gbs_gather"], copy_gbs)
        g = row["gnnc_best_ms"]
        row["speedup_vs_cusparse_default"] = ratio(row["cusparse_default_ms"], g)
        row["speedup_vs_cusparse_fastest"] = ratio(row["cusparse_fastest_ms"], g)
        row["speedup_vs_torch_sparse_mm"] = ratio(row["torch_sparse_mm_ms"], g)
        row["speedup_vs_pyg_scatter"] = ratio(row["pyg_scatter_ms"], g)
        rows.append(row)
    return rows


def sddmm_rows(bench):
    """One row per case with gnnc SDDMM records: gnnc's best and default,
    and cuSPARSE SDDMM of the f32 and f16 cases of the same graph and
    width."""
    cusparse = {}
    for c in bench.get("cases", []):
        best = c.get("cusparse_sddmm_best")
        if best is None:
            timed = [s for s in c.get("cusparse_sddmm", [])
                     if median(s) is not None]
            if timed:
                best = min(timed, key=median)
                best = {"types": best.get("types"),
                        "median_ms": median(best)}
        if best:
            cusparse[(c["graph"], c["type"], int(c["width"]))] = best
    rows = []
    for c in bench.get("cases", []):
        records = c.get("gnnc_sddmm") or []
        if not records:
            continue
        key = (c["graph"], int(c["width"]))
        best = c.get("gnnc_sddmm_best")
        default = [k for k in records
                   if k.get("label") == "default" and k.get("status") == "ok"]
        f32 = cusparse.get((key[0], "f32", key[1]))
        f16 = cusparse.get((key[0], "f16", key[1]))
        g = median(best)
        rows.append({
            "graph": c["graph"], "type": c["type"], "width": c["width"],
            "gnnc_best_ms": g,
            "gnnc_best_schedule": best.get("label") if best else None,
            "gnnc_default_ms": median(default[0]) if default else None,
            "gnnc_failures": len([k for k in records
                                  if k.get("status") != "ok"]),
            "cusparse_f32_ms": median(f32),
            "cusparse_f16_ms": median(f16),
            "cusparse_f16_types": (f16 or {}).get("types"),
            "speedup_vs_cusparse_f32": ratio(median(f32), g),
            "speedup_vs_cusparse_f16": ratio(median(f16), g),
            "gbs_compulsory": best.get("gbs_compulsory") if best else None,
            "frac_copy_compulsory": (best.get("frac_copy_compulsory")
                                     if best else None),
        })
    return rows


def gat_rows(bench, torch_doc):
    """One row per gnn-bench case with a GAT chain, joined with the torch
    chain of the same graph, type and width."""
    torch_gat = {}
    for c in (torch_doc or {}).get("gat_cases", []):
        torch_gat[(c["graph"], c["type"], int(c["width"]))] = c.get(
            "result", {})
    rows = []
    for c in bench.get("cases", []):
        chain = c.get("gat_chain")
        if not chain:
            continue
        width = int(chain.get("width", c["width"]))
        t = torch_gat.get((c["graph"], c["type"], width), {})
        g = median(chain) if chain.get("status") == "ok" else None
        tm = median(t) if t.get("status") == "ok" else None
        runs = (t.get("time_ms") or {}).get("runs")
        rows.append({
            "graph": c["graph"], "type": c["type"], "width": width,
            "heads": chain.get("heads", 1), "nnz": c.get("nnz"),
            "gnnc_ms": g, "gnnc_status": chain.get("status"),
            "torch_ms": tm, "torch_status": t.get("status"),
            "torch_runs": runs,
            "torch_softmax": t.get("softmax"),
            "torch_check_ok": t.get("check_ok"),
            "speedup_vs_torch": ratio(tm, g),
        })
    return rows


def torch_nominal_runs(torch_doc):
    """The timed runs torch_baseline.py meant to make per method."""
    if not torch_doc:
        return None
    return torch_doc.get("options", {}).get("runs")


def reduced_runs(torch_doc):
    """(case, method, timing) of the torch baselines timed with fewer runs
    than the nominal count (slow calls; see torch_baseline.py)."""
    nominal = torch_nominal_runs(torch_doc)
    found = []
    if not nominal:
        return found
    for c in torch_doc.get("cases", []):
        for name, m in c.get("methods", {}).items():
            t = m.get("time_ms")
            if (m.get("status") == "ok" and isinstance(t, dict)
                    and t.get("runs") is not None and t["runs"] < nominal):
                found.append((c, name, t))
    for c in torch_doc.get("gat_cases", []):
        m = c.get("result", {})
        t = m.get("time_ms")
        if (m.get("status") == "ok" and isinstance(t, dict)
                and t.get("runs") is not None and t["runs"] < nominal):
            found.append((c, "gat_chain", t))
    return found


def markdown(bench, torch_doc, rows):
    dev = bench.get("device", {})
    out = []
    out.append("# gnn-bench results: %s" % dev.get("name", "unknown GPU"))
    out.append("")
    copy = bench.get("copy_bandwidth_gbs")
    out.append("- date: %s; device: %s, %s SMs, %.0f MB L2, %s; driver %s; "
               "NVRTC %s; cuSPARSE %s" % (
                   bench.get("date", "?"), dev.get("name", "?"),
                   dev.get("sm_count", "?"), dev.get("l2_bytes", 0) / 1e6,
                   dev.get("compute_capability", "?"),
                   dev.get("driver_version", "?"),
                   dev.get("nvrtc_version", "?"),
                   dev.get("cusparse_version", "?")))
    out.append("- copy bandwidth (device-to-device, read + write): %s GB/s" %
               ("%.0f" % copy if copy else "not measured"))
    opts = bench.get("options", {})
    out.append("- timing: %s warm-ups, median of %s runs, L2 flushed before "
               "each run: %s; gnnc row offsets %s; gnnc kernels checked "
               "against a float64 CPU reference before timing (%s)" % (
                   opts.get("warmups"), opts.get("runs"),
                   opts.get("flush_l2"), opts.get("gnnc_offsets"),
                   opts.get("check")))
    nominal = torch_nominal_runs(torch_doc)
    if torch_doc:
        out.append("- PyTorch %s (CUDA %s), PyG %s" % (
            torch_doc.get("torch_version"), torch_doc.get("torch_cuda_version"),
            torch_doc.get("pyg_version")))
        topts = torch_doc.get("options", {})
        if reduced_runs(torch_doc):
            rule = ""
            if "slow_ms" in topts:
                rule = (" (a first call over %g ms: one warm-up, runs for "
                        "about %g s, at least %s)" % (
                            topts["slow_ms"],
                            topts.get("slow_budget_seconds", 0),
                            topts.get("min_runs", "?")))
            out.append("- PyTorch timing: %s warm-ups, median of %s runs; "
                       "slow baselines were timed with fewer runs%s: marked "
                       "† in the tables and listed under \"Baselines timed "
                       "with fewer runs\"" % (topts.get("warmups"), nominal,
                                              rule))
    else:
        out.append("- PyTorch baselines: not run")
    out.append("- times in ms (median); speedups = baseline time / gnnc "
               "time; GB/s of gnnc's best against the compulsory and the "
               "gather byte counts, with the fraction of the copy bandwidth "
               "in parentheses (bench/NOTES.md); gather stream: the case's "
               "gathers alone (every edge's row summed in column order), and "
               "gnnc's best as a fraction of it")
    out.append("")
    for type_name in ("f32", "f16", "bf16"):
        typed = [r for r in rows if r["type"] == type_name]
        if not typed:
            continue
        out.append("## %s" % type_name)
        out.append("")
        out.append("| graph | w | gnnc best (schedule) | gnnc SpMMve | "
                   "cuSPARSE default | cuSPARSE fastest (alg) | torch.sparse "
                   "| PyG scatter | index_add | × cuSP def | × cuSP fastest "
                   "| × torch.sparse | × PyG | GB/s compulsory | GB/s gather "
                   "| gather stream (fraction) |")
        out.append("|---|--:|---|--:|--:|---|--:|--:|--:|--:|--:|--:|--:|"
                   "--:|--:|--:|")
        for r in typed:
            best = ("%s (%s)" % (fmt_ms(r["gnnc_best_ms"]),
                                 r["gnnc_best_schedule"])
                    if r["gnnc_best_ms"] is not None else "**WRONG/none**")
            fastest = ("%s (%s)" % (fmt_ms(r["cusparse_fastest_ms"]),
                                    r["cusparse_fastest_alg"])
                       if r["cusparse_fastest_ms"] is not None else "-")
            def torch_cell(method):
                text = fmt_ms(r[method + "_ms"])
                used = r.get(method + "_runs")
                if (r[method + "_ms"] is not None and nominal
                        and used is not None and used < nominal):
                    text += "†"
                return text

            tsm = torch_cell("torch_sparse_mm")
            if r["torch_sparse_mm_ms"] is None and r["torch_sparse_mm_status"]:
                tsm = "n/a"
            stream = ("%s (%.2f)" % (fmt_ms(r["gather_stream_ms"]),
                                     r["of_gather_bound"])
                      if r["gather_stream_ms"] is not None
                      and r["of_gather_bound"] is not None else "-")
            out.append("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | "
                       "%s | %s | %s | %s | %s | %s |" % (
                           r["graph"], r["width"], best, fmt_ms(r["gnnc_ve_ms"]),
                           fmt_ms(r["cusparse_default_ms"]), fastest, tsm,
                           torch_cell("pyg_scatter"),
                           torch_cell("index_add"),
                           fmt_x(r["speedup_vs_cusparse_default"]),
                           fmt_x(r["speedup_vs_cusparse_fastest"]),
                           fmt_x(r["speedup_vs_torch_sparse_mm"]),
                           fmt_x(r["speedup_vs_pyg_scatter"]),
                           fmt_bw(r["gbs_compulsory"], r["frac_copy_compulsory"]),
                           fmt_bw(r["gbs_gather"], r["frac_copy_gather"]),
                           stream))
        out.append("")

    # gnnc SDDMM beside cuSPARSE SDDMM.
    srows = sddmm_rows(bench)
    if srows:
        out.append("## SDDMM")
        out.append("")
        out.append("gnnc SDDMM, dot form (`out[e] = dot(A[r, :], B[c, :])` "
                   "per edge), every kernel checked against a float64 CPU "
                   "reference before timing; cuSPARSE SDDMM of the f32 and "
                   "f16 cases of the same graph and width (its own random "
                   "inputs). × = cuSPARSE time / gnnc time.")
        out.append("")
        out.append("| graph | type | w | gnnc best (schedule) | gnnc default "
                   "| cuSPARSE f32 | × cuSP f32 | cuSPARSE f16 (types) | "
                   "× cuSP f16 | GB/s compulsory |")
        out.append("|---|---|--:|---|--:|--:|--:|---|--:|--:|")
        for r in srows:
            best = ("%s (%s)" % (fmt_ms(r["gnnc_best_ms"]),
                                 r["gnnc_best_schedule"])
                    if r["gnnc_best_ms"] is not None else "**WRONG/none**")
            f16 = fmt_ms(r["cusparse_f16_ms"])
            if r["cusparse_f16_ms"] is not None and r["cusparse_f16_types"]:
                f16 += " (%s)" % r["cusparse_f16_types"]
            out.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |"
                       % (r["graph"], r["type"], r["width"], best,
                          fmt_ms(r["gnnc_default_ms"]),
                          fmt_ms(r["cusparse_f32_ms"]),
                          fmt_x(r["speedup_vs_cusparse_f32"]), f16,
                          fmt_x(r["speedup_vs_cusparse_f16"]),
                          fmt_bw(r["gbs_compulsory"],
                                 r["frac_copy_compulsory"])))
        out.append("")

    # The GAT attention chain.
    grows = gat_rows(bench, torch_doc)
    if grows:
        out.append("## GAT chain")
        out.append("")
        out.append("One head: gnnc runs gnn.sddmm (add form, leaky_relu "
                   "0.2), gnn.edge_softmax and gnn.spmm with the weights as "
                   "edge values (three launches); PyTorch runs "
                   "`leaky_relu(a_src[row] + a_dst[col])`, the per-row "
                   "softmax and `index_add_` of `alpha * x[col]`. Each "
                   "chain is one timed region. × = torch time / gnnc time.")
        out.append("")
        out.append("| graph | type | w | heads | gnnc chain | torch chain "
                   "(softmax) | × torch | torch check |")
        out.append("|---|---|--:|--:|--:|---|--:|---|")
        for r in grows:
            gnnc_cell = (fmt_ms(r["gnnc_ms"]) if r["gnnc_ms"] is not None
                         else "**%s**" % (r["gnnc_status"] or "none"))
            if r["torch_ms"] is not None:
                torch_cell = fmt_ms(r["torch_ms"])
                if (nominal and r["torch_runs"] is not None
                        and r["torch_runs"] < nominal):
                    torch_cell += "†"
                if r["torch_softmax"]:
                    torch_cell += " (%s)" % r["torch_softmax"]
            else:
                torch_cell = (r["torch_status"] or "-")[:60]
            check = ("-" if r["torch_check_ok"] is None
                     else ("ok" if r["torch_check_ok"] else "OFF"))
            out.append("| %s | %s | %d | %d | %s | %s | %s | %s |" % (
                r["graph"], r["type"], r["width"], r["heads"], gnnc_cell,
                torch_cell, fmt_x(r["speedup_vs_torch"]), check))
        out.append("")

    # cuSPARSE SDDMM, every configuration.
    sddmm = []
    for c in bench.get("cases", []):
        for s in c.get("cusparse_sddmm", []):
            sddmm.append((c, s))
    if sddmm:
        out.append("## cuSPARSE SDDMM")
        out.append("")
        out.append("| graph | type | w | types | ms | GB/s compulsory | "
                   "GB/s gather | check | status |")
        out.append("|---|---|--:|---|--:|--:|--:|---|---|")
        for c, s in sddmm:
            check = ("ok" if s.get("check_ok") else "OFF") if s.get(
                "checked") else "-"
            out.append("| %s | %s | %d | %s | %s | %s | %s | %s | %s |" % (
                c["graph"], c["type"], c["width"], s.get("types", ""),
                fmt_ms(median(s)),
                fmt_bw(s.get("gbs_compulsory"), s.get("frac_copy_compulsory")),
                fmt_bw(s.get("gbs_gather"), s.get("frac_copy_gather")),
                check, s.get("status", "")[:80]))
        out.append("")

    # Library configurations that were refused, once each.
    refused = {}
    for c in bench.get("cases", []):
        for s in c.get("cusparse_spmm", []) + c.get("cusparse_sddmm", []):
            if s.get("status") != "ok":
                k = (c["type"], s.get("algorithm"), s.get("types"),
                     s.get("status"))
                refused.setdefault(k, 0)
                refused[k] += 1
            elif s.get("checked") and not s.get("check_ok"):
                k = (c["type"], s.get("algorithm"), s.get("types"),
                     "ran, but differs from the reference")
                refused.setdefault(k, 0)
                refused[k] += 1
    if torch_doc:
        for c in torch_doc.get("cases", []):
            for name, m in c.get("methods", {}).items():
                if m.get("status") != "ok":
                    k = (c["type"], name, "torch", m.get("status"))
                    refused.setdefault(k, 0)
                    refused[k] += 1
                elif not m.get("check_ok", True):
                    k = (c["type"], name, "torch",
                         "ran, but rows differ from the float64 reference")
                    refused.setdefault(k, 0)
                    refused[k] += 1
        for c in torch_doc.get("gat_cases", []):
            m = c.get("result", {})
            if m.get("status") != "ok":
                k = (c["type"], "gat_chain", "torch", m.get("status"))
            elif not m.get("check_ok", True):
                k = (c["type"], "gat_chain", "torch",
                     "ran, but rows differ from the float64 chain")
            else:
                continue
            refused.setdefault(k, 0)
            refused[k] += 1
    if refused:
        out.append("## Baselines refused or off")
        out.append("")
        for (t, alg, types, status), n in sorted(refused.items(),
                                                  key=lambda kv: str(kv[0])):
            out.append("- %s %s (%s): %s — %d case%s" % (
                t, alg, types, status, n, "" if n == 1 else "s"))
        out.append("")

    reduced = reduced_runs(torch_doc)
    if reduced:
        out.append("## Baselines timed with fewer runs")
        out.append("")
        for c, name, t in reduced:
            out.append("- %s %s w%d %s: timed with %d runs (%s warm-up%s) "
                       "instead of %d%s" % (
                           c["graph"], c["type"], c["width"], name, t["runs"],
                           t.get("warmups", "?"),
                           "" if t.get("warmups") == 1 else "s", nominal,
                           "; first call %s ms" % fmt_ms(t["first_call_ms"])
                           if t.get("first_call_ms") is not None else ""))
        out.append("")

    failures = []
    for c in bench.get("cases", []):
        chain = [c["gat_chain"]] if c.get("gat_chain") else []
        for k in c.get("gnnc", []) + (c.get("gnnc_sddmm") or []) + chain:
            if k.get("status") != "ok":
                failures.append((c, k))
    out.append("## gnnc kernels that failed the check or did not run")
    out.append("")
    if not failures:
        out.append("None: every gnnc kernel matched the CPU reference.")
    for c, k in failures:
        report = (k.get("report") or "").splitlines()
        out.append("- %s %s w%d %s [%s]: **%s** — %s" % (
            c["graph"], c["type"], c["width"], k.get("kernel"),
            k.get("label"), k.get("status"), report[0] if report else ""))
    out.append("")
    skipped = bench.get("skipped", []) + (torch_doc or {}).get("skipped", [])
    if skipped:
        out.append("## Skipped (time limit)")
        out.append("")
        for s in skipped:
            out.append("- %s %s %s: %s" % (s.get("graph"), s.get("type", ""),
                                           s.get("width", ""), s.get("why")))
        out.append("")
    return "\n".join(out) + "\n"


def plot(rows, path, width):
    """Draws the speedup chart; returns a reason string when it cannot."""
    try:
        import matplotlib
    except ImportError:
        return "matplotlib is not installed; no speedup.png"
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    widths = sorted(set(r["width"] for r in rows))
    if not widths:
        return "no cases to plot"
    chosen = width if width in widths else widths[0]
    picked = [r for r in rows if r["width"] == chosen]
    graphs = []
    for r in picked:
        if r["graph"] not in graphs:
            graphs.append(r["graph"])
    types = [t for t in ("f32", "f16", "bf16")
             if any(r["type"] == t for r in picked)]
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(graphs) + 2), 4.5))
    bar = 0.8 / max(1, len(types))
    x = np.arange(len(graphs))
    for i, t in enumerate(types):
        values = []
        for g in graphs:
            match = [r for r in picked if r["graph"] == g and r["type"] == t]
            v = match[0]["speedup_vs_cusparse_fastest"] if match else None
            values.append(v if v is not None else 0.0)
        ax.bar(x + (i - (len(types) - 1) / 2) * bar, values, bar, label=t)
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.set_xticks(x)
    ax.set_xticklabels(graphs, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel("speedup (cuSPARSE fastest / gnnc best)")
    ax.set_title("gnnc SpMM vs cuSPARSE, feature width %d" % chosen)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


def main(argv):
    args = parse_args(argv)
    with open(args.bench) as f:
        bench = json.load(f)
    torch_doc = None
    if args.torch and os.path.exists(args.torch):
        with open(args.torch) as f:
            torch_doc = json.load(f)
    elif args.torch:
        print("report: no torch results at %s; leaving those columns empty"
              % args.torch, file=sys.stderr)
    name = bench.get("device", {}).get("name", "unknown GPU")
    date = (bench.get("date") or "0000-00-00")[:10]
    folder = os.path.join(args.out, slug(name), date)
    os.makedirs(folder, exist_ok=True)
    rows = summarize(bench, torch_doc)
    with open(os.path.join(folder, "results.json"), "w") as f:
        json.dump({"summary": rows, "sddmm_summary": sddmm_rows(bench),
                   "gat_summary": gat_rows(bench, torch_doc),
                   "gnn_bench": bench, "torch": torch_doc}, f, indent=1)
        f.write("\n")
    text = markdown(bench, torch_doc, rows)
    with open(os.path.join(folder, "results.md"), "w") as f:
        f.write(text)
    why_not = plot(rows, os.path.join(folder, "speedup.png"), args.plot_width)
    if why_not:
        print("report: %s" % why_not, file=sys.stderr)
    sys.stdout.write(text)
    wrote = "results.json,results.md" + ("" if why_not else ",speedup.png")
    print("report: wrote %s/{%s}" % (folder, wrote))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
