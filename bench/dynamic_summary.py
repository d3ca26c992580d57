#!/usr/bin/env python3
"""Summarizes the dynamic-graph runs of one directory into summary.json and
a Markdown table (table.md):

- gnn-bench --snapshots results (every JSON with "snapshot_cases"; a case
  run again in a later file, by name, replaces the earlier): per case
  gnnc's multi-snapshot aggregation of a group against gnnc's best schedule
  per snapshot summed over the group, and against cuSPARSE on the group's
  block-diagonal graph; the structure bytes sent against the ideal (the
  overlap once plus the exclusive parts; the work items count there only
  where the host built them, as before they were built on the GPU) and,
  apart, the bytes the structure takes on the GPU, the ideal plus the work
  items, against the ideal (the items read from "work_items", then the
  items sent, in runs that predate the GPU build); on the temporal sets,
  cuSPARSE's
  time over the floor of one launch of the sliced kernel (the most any
  kernel could gain over it);
- the cases run at the group size the runtime tuner picked (gnn-bench
  --group auto: "tuned"), apart: the same two ratios over them, and the
  size picked for each series, type and width;
- examples/train_dgnn.py --compare --json results (every JSON with
  "results"): the epoch of the dynamic GNN through gnnc against the same
  model as PyG's per-snapshot loop, data starting in host memory, and the
  fraction of the host-to-device copy time hidden behind compute.

usage: dynamic_summary.py DIR
"""
import glob
import json
import os
import sys

from batched_summary import geomean, stats


def main():
    out = sys.argv[1]
    # A case run again in a later file (in name order) replaces the earlier.
    by_key, tuned, dgnn = {}, {}, []
    for path in sorted(glob.glob(os.path.join(out, "*.json"))):
        if os.path.basename(path) == "summary.json":
            continue
        doc = json.load(open(path))
        for c in doc.get("snapshot_cases", []):
            if c.get("tuned") and "group_choice" in c:
                tuned[(c["series"], c["type"], c["width"])] = c
            elif "best" in c:
                by_key[(c["series"], c["group"], c["type"], c["width"])] = c
        dgnn += doc.get("results", [])
    cases = list(by_key.values())
    vs_per, vs_cus, vs_cus_rmat, sent, rows, floors = [], [], [], [], [], []
    on_gpu = []
    for c in cases:
        b = c["best"]
        per = b.get("multisnap_vs_gnnc_per_snapshot")
        cus = b.get("multisnap_vs_cusparse_blockdiag")
        if per:
            vs_per.append(per)
        if cus:
            vs_cus.append(cus)
            if c["series"].startswith("rmat"):
                vs_cus_rmat.append(cus)
        if c.get("launch_floor_ms") and cus and not c["series"].startswith("rmat"):
            # The most any kernel can gain over cuSPARSE's one launch here:
            # its time over the floor of one launch of this kernel.
            floors.append(b["cusparse_blockdiag_ms"] / c["launch_floor_ms"])
        structure = c.get("structure_bytes", {})
        ratio = structure.get("sent_vs_ideal")
        if ratio and c["series"].startswith("rmat"):
            sent.append(ratio)
        items = structure.get("work_items_on_gpu", structure.get("work_items"))
        if items is not None and structure.get("ideal") and \
                c["series"].startswith("rmat"):
            on_gpu.append(1 + items / structure["ideal"])
        rows.append("| %s | %d | %s | %d | %.2f | %.4f | %.4f | %.4f | %.2fx | %.2fx | %s |" % (
            c["series"], c["group"], c["type"], c["width"], c["overlap_rate"],
            b["multi_snapshot_ms"], b["per_snapshot_sum_ms"], b["cusparse_blockdiag_ms"],
            per or 0, cus or 0,
            "%.3f" % ratio if ratio else "-"))
    tuned_per, tuned_cus, picks, trows = [], [], {}, []
    for (series, type_, width), c in sorted(tuned.items()):
        choice = c["group_choice"]
        picks["%s %s w%d" % (series, type_, width)] = choice["group"]
        b = c.get("best", {})
        per = b.get("multisnap_vs_gnnc_per_snapshot")
        cus = b.get("multisnap_vs_cusparse_blockdiag")
        if per:
            tuned_per.append(per)
        if cus:
            tuned_cus.append(cus)
        trows.append("| %s | %s | %d | %s | %d | %d | %s | %s |" % (
            series, type_, width,
            ", ".join("S%d %.4f" % (k["group"], k["ms_per_snapshot"])
                      for k in choice["candidates"]),
            choice["group"], choice["cached_groups"],
            "%.2fx" % per if per else "-", "%.2fx" % cus if cus else "-"))
    epochs, hidden, drows = [], [], []
    for r in dgnn:
        ratio = r.get("epoch_ratio_pyg_over_gnnc")
        gnnc = r["runs"].get("gnnc")
        if ratio:
            epochs.append(ratio)
        if gnnc:
            hidden.append((r["dataset"], gnnc["transfer_hidden_fraction"],
                           gnnc["copy_ms"], gnnc["pipelined_ms"]))
            drows.append("| %s | %.2f | %.2f | %.2fx | %.1e | %.2f | %.0f%% |" % (
                r["dataset"], r["runs"]["pyg"]["epoch_ms"], gnnc["epoch_ms"], ratio or 0,
                r.get("loss_max_rel_diff", 0), gnnc["copy_ms"],
                100 * gnnc["transfer_hidden_fraction"]))
    # The copies that are a measurable share of the epoch (at least 5%):
    # below that, the hidden fraction is the epoch's noise.
    measurable = [h for _, h, copy, epoch in hidden if copy >= 0.05 * epoch]
    summary = {
        "multisnap_vs_gnnc_per_snapshot": stats(vs_per),
        "multisnap_vs_cusparse_blockdiag": stats(vs_cus),
        "multisnap_vs_cusparse_blockdiag_rmat": stats(vs_cus_rmat),
        "multisnap_vs_gnnc_per_snapshot_tuned": stats(tuned_per),
        "multisnap_vs_cusparse_blockdiag_tuned": stats(tuned_cus),
        "tuned_group": picks or None,
        "cusparse_blockdiag_over_launch_floor_temporal": {
            "max": round(max(floors), 3), "cases": len(floors)} if floors else None,
        "transfer_bytes_vs_ideal": {"max": round(max(sent), 3),
                                    "geomean": round(geomean(sent), 3),
                                    "cases": len(sent)} if sent else None,
        "gpu_structure_bytes_vs_ideal": {"max": round(max(on_gpu), 3),
                                         "geomean": round(geomean(on_gpu), 3),
                                         "cases": len(on_gpu)} if on_gpu else None,
        "transfer_hidden_fraction": {
            d: round(h, 3) for d, h, _, _ in hidden},
        "transfer_hidden_fraction_measurable": round(min(measurable), 3)
        if measurable else None,
        "dgnn_epoch_vs_pyg_loop": stats(epochs),
    }
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write("| series | S | type | width | overlap | multi ms | per-snapshot ms | "
                "cuSPARSE ms | vs per-snapshot | vs cuSPARSE | bytes vs ideal |\n")
        f.write("|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|\n")
        f.write("\n".join(rows) + "\n\n")
        if trows:
            f.write("| series | type | width | tuner's ms per snapshot | S picked | "
                    "groups cached | vs per-snapshot | vs cuSPARSE |\n"
                    "|---|---|--:|---|--:|--:|--:|--:|\n")
            f.write("\n".join(trows) + "\n\n")
        f.write("| dataset | PyG epoch ms | gnnc epoch ms | speedup | loss diff | "
                "copy ms | copy hidden |\n|---|--:|--:|--:|--:|--:|--:|\n")
        f.write("\n".join(drows) + "\n")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
