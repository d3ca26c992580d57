#!/usr/bin/env python3
"""Summarizes a gnn-bench --batched run (its JSON) into summary.json and a
Markdown table (table.md; the same text also as results.md): per case the
fastest cuSPARSE algorithm, gnnc's best general schedule and the best
batched schedule on the same block-diagonal batch, and the batched kernel's
fraction of the copy bandwidth on compulsory bytes.

Where the run has them, gnnc's layers ("batched_layer_cases": spmm_ms,
gemm_ms, unfused_ms, fused_ms, fused_backward_ms) and readouts
("batched_readout_cases": forward_ms, backward_ms, copy_fraction) are
tabled too, and with --pyg (examples/bench_batched_pyg.py's JSON) set
against PyG and plain PyTorch, cases matched by (batch, type, width,
layer or reduce). Ratios, each {"geomean", "worst", "cases"} (worst = the
smallest ratio; null where no case has both times):

  fused_vs_unfused         gnnc unfused_ms / fused_ms
  fused_vs_pyg             PyG layer's fastest forward / fused_ms
  fused_backward_vs_torch  plain-PyTorch unfused backward / fused_backward_ms
  backward_plan_vs_best    backward_best_ms / fused_backward_ms (the picked
                           plan against the fastest timed; picked_fastest
                           counts the cases where they are the same plan)
  readout_vs_pyg           PyG global_*_pool forward / gnnc readout forward_ms

the layer ratios with "by_layer" (gcn, gin) as well. Where a case records
what the compiler chose for an unscheduled op ("compiler_choice",
compileForBatch, with its "strategy"), compiler_choice_vs_best is
min(general_ms, batched_ms) / its time (1 when it found the faster of the
two strategies' best measured schedules), with "batched_picks", the cases where it chose batched, and
"right_strategy", those where its strategy's best was the faster
(general_ms and batched_ms in a choice are the two sides' predicted, or
with "measured" in its source measured, times);
compiler_choice_measured_vs_best the same for the choice made with the
leaders measured ("compiler_choice_measured"). A case whose check
failed (gnnc's "check" false or not "ok"; PyG's "check_ok" false) counts in
no ratio.

usage: batched_summary.py RESULTS.json OUT_DIR [--pyg BENCH_BATCHED_PYG.json]
"""
import argparse
import json
import math
import os


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


def stats(values):
    if not values:
        return None
    return {"geomean": round(geomean(values), 3), "worst": round(min(values), 3),
            "cases": len(values)}


def check_passed(check):
    """gnnc's "check" of a case: absent counts as passed; else a bool, a
    status string ("ok"/"pass"/"passed") or an object with "ok" or
    "status"."""
    if check is None:
        return True
    if isinstance(check, bool):
        return check
    if isinstance(check, str):
        return check.strip().lower() in ("ok", "pass", "passed")
    if isinstance(check, dict):
        for k in ("ok", "passed", "status"):
            if k in check:
                return check_passed(check[k])
        return True
    return False


def positive(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0


def ratio(num, den):
    return num / den if positive(num) and positive(den) else None


def case_key(case, kind):
    return (case.get("batch"), case.get("type"), case.get("width"), case.get(kind))


def by_key(cases, kind):
    return {case_key(c, kind): c for c in cases if c.get(kind) is not None}


def with_layers(ratios):
    """stats over all (layer, ratio) pairs, plus "by_layer"."""
    all_stats = stats([r for _, r in ratios])
    if all_stats is None:
        return None
    layers = sorted({layer for layer, _ in ratios})
    all_stats["by_layer"] = {layer: stats([r for l, r in ratios if l == layer])
                             for layer in layers}
    return all_stats


def fmt(v, digits=4):
    return "–" if v is None else ("%.*f" % (digits, v))


def fmt_ratio(v):
    return "–" if v is None else "%.2fx" % v


def layer_section(doc, pyg):
    """Markdown rows and ratio lists of the fused-layer cases."""
    gnnc = by_key(doc.get("batched_layer_cases", []), "layer")
    theirs = by_key(pyg.get("layer_cases", []), "layer") if pyg else {}
    vs_unfused, vs_pyg, bwd_vs_torch, rows = [], [], [], []
    for key in sorted(set(gnnc) | set(theirs), key=lambda k: tuple(map(str, k))):
        g, p = gnnc.get(key, {}), theirs.get(key, {})
        ok = check_passed(g.get("check"))
        layer = key[3]
        pyg_fwd = (p.get("pyg") or {}).get("forward_ms")
        pyg_cfg = (p.get("pyg") or {}).get("fastest")
        torch_u = p.get("torch_unfused") or {}
        torch_bwd = torch_u.get("backward_ms")
        fused, fused_bwd = g.get("fused_ms"), g.get("fused_backward_ms")
        r_unfused = ratio(g.get("unfused_ms"), fused)
        r_pyg = ratio(pyg_fwd, fused)
        r_bwd = ratio(torch_bwd, fused_bwd)
        if ok:
            for lst, r in ((vs_unfused, r_unfused), (vs_pyg, r_pyg), (bwd_vs_torch, r_bwd)):
                if r is not None:
                    lst.append((layer, r))
        rows.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            key[0], key[1], key[2], layer, fmt(g.get("spmm_ms")), fmt(g.get("gemm_ms")),
            fmt(g.get("unfused_ms")), fmt(fused), fmt(fused_bwd),
            fmt(pyg_fwd) + (" (%s)" % pyg_cfg if pyg_cfg else ""),
            fmt(torch_u.get("forward_ms")), fmt(torch_bwd),
            fmt_ratio(r_unfused), fmt_ratio(r_pyg), fmt_ratio(r_bwd),
            "" if ok else "check failed"))
    return rows, vs_unfused, vs_pyg, bwd_vs_torch


def readout_section(doc, pyg):
    gnnc = by_key(doc.get("batched_readout_cases", []), "reduce")
    theirs = by_key(pyg.get("readout_cases", []), "reduce") if pyg else {}
    vs_pyg, copy, rows = [], [], []
    for key in sorted(set(gnnc) | set(theirs), key=lambda k: tuple(map(str, k))):
        g, p = gnnc.get(key, {}), theirs.get(key, {})
        ok = check_passed(g.get("check")) and p.get("check_ok", True) is not False
        r = ratio(p.get("forward_ms"), g.get("forward_ms"))
        if ok and r is not None:
            vs_pyg.append(r)
        if g and check_passed(g.get("check")) and positive(g.get("copy_fraction")):
            copy.append(g["copy_fraction"])
        cf = g.get("copy_fraction")
        rows.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            key[0], key[1], key[2], key[3], fmt(g.get("forward_ms")),
            fmt(g.get("backward_ms")), "–" if cf is None else "%.0f%%" % (100 * cf),
            fmt(p.get("forward_ms")), fmt(p.get("backward_ms")), fmt_ratio(r),
            "" if ok else "check failed"))
    return rows, vs_pyg, copy


def plan_vs_best(layers):
    """The backward plan planLayerBackward picked against the fastest plan
    gnn-bench timed (backward_best_ms / fused_backward_ms: 1 when the pick
    was the fastest), over the checked layer cases that have both."""
    ratios, picked_best = [], 0
    for c in layers:
        if c.get("backward_check") != "ok":
            continue
        picked, best = c.get("fused_backward_ms"), c.get("backward_best_ms")
        r = ratio(best, picked)
        if r is None:
            continue
        ratios.append(r)
        picked_best += c.get("backward_plan") == c.get("backward_best_plan")
    if not ratios:
        return None
    return dict(stats(ratios), picked_fastest=picked_best)


def unfused_room(layers):
    """The unfused layer's time over a copy of the fused layer's compulsory
    bytes (gnn-bench's same_size_copy_ms of each layer case): the most a
    fused kernel running at copy speed could gain over the unfused one."""
    room = [c["unfused_ms"] / c["same_size_copy_ms"] for c in layers
            if positive(c.get("unfused_ms")) and positive(c.get("same_size_copy_ms"))]
    if not room:
        return None
    return dict(stats(room), below_2=sum(1 for r in room if r < 2))


def summarize(doc, pyg=None):
    """(summary, Markdown text) of a gnn-bench --batched JSON and, if given,
    bench_batched_pyg.py's JSON."""
    rows, vs_general, vs_cusparse, copy64 = [], [], [], []
    # Against a copy of the same bytes timed in the same run: the share of
    # that floor the batched kernel reaches (widths >= 64), and how far
    # the best general schedule is from it (no kernel can beat it by more).
    same64, headroom, cusparse_room = [], [], []
    choice_stats = {key: ([], [0], [0]) for key in
                    ("compiler_choice", "compiler_choice_measured")}
    for case in doc.get("batched_cases", []):
        best = case.get("best")
        if not best:
            continue
        b, g, c = best["batched_ms"], best["general_ms"], best["cusparse_ms"]
        for key, (ratios, picks, right) in choice_stats.items():
            choice = case.get(key) or {}
            if choice.get("ms") and choice.get("status") == "ok" and b > 0 and g > 0:
                ratios.append(min(b, g) / choice["ms"])
                picked_batched = choice.get("strategy") == "batched"
                picks[0] += picked_batched
                right[0] += picked_batched == (b < g)
        if b > 0 and g > 0:
            vs_general.append(g / b)
        if b > 0 and c > 0:
            vs_cusparse.append(c / b)
        if b > 0 and case["width"] >= 64:
            copy64.append(best["batched_copy_fraction"])
        same = best.get("same_size_copy_ms") or 0
        if same > 0 and b > 0 and case["width"] >= 64:
            same64.append(same / b)
        if same > 0 and g > 0:
            headroom.append(g / same)
        if same > 0 and c > 0:
            cusparse_room.append(c / same)
        rows.append(
            "| %s | %d | %s | %d | %.4f | %.4f | %.4f | %s | %.2fx | %.2fx | %.0f%% | %.0f%% | %s | `%s` | `%s` |"
            % (case["batch"], case["graphs"], case["type"], case["width"], c,
               g, b, "%.4f" % same if same else "–",
               g / b if b and g else 0, c / b if b and c else 0,
               100 * best["batched_copy_fraction"],
               100 * best["general_copy_fraction"],
               "%.0f%%" % (100 * same / b) if same and b else "–",
               best["batched_schedule"].replace("#gnn.schedule<", "<"),
               best["general_schedule"].replace("#gnn.schedule<", "<")))
    layer_rows, vs_unfused, vs_pyg, bwd_vs_torch = layer_section(doc, pyg)
    readout_rows, readout_vs_pyg, readout_copy = readout_section(doc, pyg)
    gnnc_layers = doc.get("batched_layer_cases", [])
    gnnc_readouts = doc.get("batched_readout_cases", [])
    device = doc.get("device", {})
    note = ("copy fraction: compulsory bytes (X read once, Y written once, "
            "row offsets and column indices read once) per second over the "
            "device-to-device copy bandwidth (read + write).")
    if not gnnc_readouts:
        note = "readout is not timed in this run. " + note
    if not any(positive(c.get("fused_ms")) for c in gnnc_layers):
        note = "no fused GCN/GIN layer is timed in this run. " + note
    if pyg is None:
        note += " No PyG baseline given (--pyg)."
    elif pyg.get("skipped"):
        note += " PyG baseline skipped: %s." % pyg["skipped"]
    summary = {
        "device": device.get("name"),
        "date": doc.get("date"),
        "copy_bandwidth_gbs": doc.get("copy_bandwidth_gbs"),
        "batched_vs_gnnc_general": stats(vs_general),
        "batched_vs_cusparse_blockdiag": stats(vs_cusparse),
        "batched_copy_fraction_w64plus": stats(copy64),
        "batched_same_size_copy_fraction_w64plus": stats(same64),
        "general_over_same_size_copy": (
            dict(stats(headroom),
                 below_1_3=sum(1 for h in headroom if h < 1.3))
            if headroom else None),
        # The most any kernel could gain over cuSPARSE if it ran as fast as
        # a copy of its own bytes.
        "cusparse_over_same_size_copy": (
            dict(stats(cusparse_room),
                 below_2_5=sum(1 for h in cusparse_room if h < 2.5))
            if cusparse_room else None),
        "unfused_over_same_size_copy": unfused_room(gnnc_layers),
        **{key + "_vs_best": (dict(stats(ratios), batched_picks=picks[0],
                                   right_strategy=right[0]) if ratios else None)
           for key, (ratios, picks, right) in choice_stats.items()},
        "readout": ({"cases": len(gnnc_readouts), "copy_fraction": stats(readout_copy)}
                    if gnnc_readouts else None),
        "fused_layer": ({"cases": len(gnnc_layers),
                         "fused": sum(1 for c in gnnc_layers if positive(c.get("fused_ms"))),
                         "fused_backward": sum(1 for c in gnnc_layers
                                               if positive(c.get("fused_backward_ms")))}
                        if gnnc_layers else None),
        "readout_vs_pyg": stats(readout_vs_pyg),
        "fused_vs_unfused": with_layers(vs_unfused),
        "fused_vs_pyg": with_layers(vs_pyg),
        "fused_backward_vs_torch": with_layers(bwd_vs_torch),
        "backward_plan_vs_best": plan_vs_best(gnnc_layers),
        "pyg": ({"device": (pyg.get("device") or {}).get("name"),
                 "date": pyg.get("date"), "torch": pyg.get("torch_version"),
                 "pyg": pyg.get("pyg_version")} if pyg else None),
        "note": note,
    }
    md = ["# Batched SpMM, %s, %s\n" % (device.get("name"), doc.get("date")),
          "Median ms of %s runs, L2 flushed before each; copy bandwidth %.0f GB/s "
          "(read + write).\n" % (doc.get("options", {}).get("runs", "?"),
                                  doc.get("copy_bandwidth_gbs") or 0),
          "Same-size copy: a device-to-device copy of the case's compulsory bytes "
          "(half read, half written), timed the same way; batched / copy: its time "
          "over the batched kernel's.\n",
          "| batch | graphs | type | width | cuSPARSE | gnnc general | gnnc batched "
          "| same-size copy | vs general | vs cuSPARSE | batched copy | general copy "
          "| batched / same-size copy | batched schedule | general schedule |",
          "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|---|"] + rows + [""]
    if layer_rows:
        md += ["## Layers (gcn: ReLU(A_hat X W + b), gin: ReLU((X + sum of neighbours) W + b))\n",
               "PyG: the fastest configuration's forward (in brackets); torch: the "
               "unfused layer in PyTorch autograd, backward = (fwd+bwd) - fwd.\n",
               "| batch | type | width | layer | gnnc spmm | gnnc gemm | gnnc unfused "
               "| gnnc fused | gnnc fused bwd | PyG fwd | torch fwd | torch bwd "
               "| unfused / fused | PyG / fused | torch bwd / fused bwd | |",
               "|---|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
        md += layer_rows + [""]
    if readout_rows:
        md += ["## Readout (global pooling per graph)\n",
               "| batch | type | width | reduce | gnnc fwd | gnnc bwd | gnnc copy "
               "| PyG fwd | PyG bwd | PyG / gnnc fwd | |",
               "|---|---|--:|---|--:|--:|--:|--:|--:|--:|---|"]
        md += readout_rows + [""]
    md += ["```", json.dumps(summary, indent=1), "```", ""]
    return summary, "\n".join(md)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                epilog=__doc__.split("\n", 1)[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", help="gnn-bench --batched JSON")
    p.add_argument("out", help="folder of summary.json, table.md and results.md")
    p.add_argument("--pyg", metavar="FILE", help="examples/bench_batched_pyg.py JSON")
    args = p.parse_args(argv)
    doc = json.load(open(args.results))
    pyg = json.load(open(args.pyg)) if args.pyg else None
    summary, text = summarize(doc, pyg)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    for name in ("table.md", "results.md"):
        with open(os.path.join(args.out, name), "w") as f:
            f.write(text)
    print(json.dumps(summary, indent=1))
    return summary


if __name__ == "__main__":
    main()
