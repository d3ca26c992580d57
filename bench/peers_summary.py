#!/usr/bin/env python3
"""Sets gnn-bench's SpMM and SDDMM cases beside the research kernels' times
(bench/peers/reference-h100.json) and writes summary.json and table.md.

Per reference case (graph, width), gnnc's time is gnn-bench's fastest SpMM
kernel that passed its check (gnnc_best), f32 against RoDe and f16 against
FlashSparse; the speedup is peer / gnnc (above 1: gnnc is faster). The peers
were timed in another process, so each ratio is also given normalized by
cuSPARSE (the peer's time over cuSPARSE's fastest algorithm there, times
cuSPARSE's fastest here, over gnnc): what remains if the two machines
differ by a constant factor. SDDMM: gnnc's fastest SDDMM kernel over
cuSPARSE's on every dataset graph of the run (R-MAT graphs apart), per
type. The gather bound: gnnc_best's and cuSPARSE's time as a fraction of
the gather stream of the case (gather_bound.time_ms / kernel time; 1 = as
fast as the case's gathers alone); and, per peer, the peer's time over the
gather stream's: the most any kernel that gathers every edge's row once
could gain on the peer (a target above it needs less gather traffic).

summary.json: spmm_f32_vs_rode, spmm_f16_vs_flashsparse (each {"geomean",
"worst", "worst_case", "cases", "normalized": {...}, "stream_vs_peer":
{...}}), sddmm_vs_cusparse_all
(f32 and f16 together, with by_type), sddmm_vs_cusparse_large (graphs with
at least 1M non-zeros), gat_fused_vs_chain (the GAT chain's three launches
over the fused kernel, gnn.spmm with attention, on every case that timed
both; null: none did),
gather_bound_fraction (gnnc_best, and cuSPARSE's fastest, per type).

usage: peers_summary.py GNN_BENCH.json [--reference FILE] [--out DIR]
"""
import argparse
import json
import os

from batched_summary import geomean
from report import median as median_ms

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_REFERENCE = os.path.join(HERE, "peers", "reference-h100.json")
#: SDDMM cases on graphs this large are held to the stricter target.
LARGE_NNZ = 1_000_000
#: The widths the SDDMM comparison covers.
SDDMM_WIDTHS = (32, 64, 128)


def stats(pairs):
    """{"geomean", "worst", "worst_case", "cases"} of (label, ratio)."""
    pairs = [(k, r) for k, r in pairs if r and r > 0]
    if not pairs:
        return None
    label, worst = min(pairs, key=lambda p: p[1])
    return {"geomean": round(geomean([r for _, r in pairs]), 3), "worst": round(worst, 3),
            "worst_case": label, "cases": len(pairs)}


def index_cases(doc):
    return {(c["graph"], c["type"], c["width"]): c for c in doc.get("cases", [])}


def summarize(doc, reference):
    cases = index_cases(doc)
    rows, out = [], {}
    for peer, dtype, cus_key, key in (
            ("rode", "f32", "cusparse_f32", "spmm_f32_vs_rode"),
            ("flashsparse", "f16", "cusparse_f16", "spmm_f16_vs_flashsparse")):
        raw, normalized, missing, stream = [], [], [], []
        for ref in reference["cases"]:
            label = f"{ref['graph']} w{ref['width']}"
            case = cases.get((ref["graph"], dtype, ref["width"]))
            gnnc = median_ms(case.get("gnnc_best")) if case else None
            if not gnnc:
                missing.append(label)
                continue
            ratio = ref[peer] / gnnc
            cus_here = median_ms(case.get("cusparse_fastest"))
            norm = (ref[peer] / ref[cus_key] * cus_here / gnnc
                    if cus_here and ref.get(cus_key) else None)
            raw.append((label, ratio))
            if norm:
                normalized.append((label, norm))
            bound = (case.get("gnnc_best") or {}).get("of_gather_bound")
            stream_ms = median_ms(case.get("gather_bound"))
            if stream_ms:
                stream.append((label, ref[peer] / stream_ms))
            rows.append({"type": dtype, "case": label, "peer": peer,
                         "peer_ms": ref[peer], "gnnc_ms": gnnc,
                         "schedule": case["gnnc_best"].get("label"),
                         "speedup": ratio, "normalized": norm,
                         "cusparse_ms": cus_here,
                         "of_gather_bound": bound})
        s = stats(raw)
        if s:
            s["normalized"] = stats(normalized)
            s["stream_vs_peer"] = stats(stream)
            if missing:
                s["missing"] = missing
        out[key] = s

    sddmm, large = [], []
    by_type = {}
    for (graph, dtype, width), case in sorted(cases.items()):
        if graph.startswith("rmat") or width not in SDDMM_WIDTHS:
            continue
        g = median_ms(case.get("gnnc_sddmm_best"))
        c = median_ms(case.get("cusparse_sddmm_best"))
        if not g or not c:
            continue
        pair = (f"{graph} {dtype} w{width}", c / g)
        sddmm.append(pair)
        by_type.setdefault(dtype, []).append(pair)
        if case.get("nnz", 0) >= LARGE_NNZ:
            large.append(pair)
    s = stats(sddmm)
    if s:
        s["by_type"] = {t: stats(p) for t, p in by_type.items()}
    out["sddmm_vs_cusparse_all"] = s
    out["sddmm_vs_cusparse_large"] = stats(large)
    gat = []
    for (graph, dtype, width), case in sorted(cases.items()):
        fused = case.get("gat_fused") or {}
        chain_ms = median_ms(case.get("gat_chain"))
        fused_ms = median_ms(fused) if fused.get("status") == "ok" else None
        if chain_ms and fused_ms:
            gat.append((f"{graph} {dtype} w{width}", chain_ms / fused_ms))
    s = stats(gat)
    if s:
        s["by_type"] = {t: stats([p for p in gat if f" {t} " in p[0]])
                        for t in sorted({k[1] for k in cases})}
    out["gat_fused_vs_chain"] = s

    fractions = {}
    for (graph, dtype, width), case in sorted(cases.items()):
        label = f"{graph} w{width}"
        for who, entry in (("gnnc_best", case.get("gnnc_best")),
                           ("cusparse", case.get("cusparse_fastest"))):
            f = (entry or {}).get("of_gather_bound")
            if f:
                fractions.setdefault(f"{who} {dtype}", []).append((label, f))
    out["gather_bound_fraction"] = {
        k: dict(stats(v), best=round(max(r for _, r in v), 3))
        for k, v in fractions.items()}
    l2 = {}
    for (graph, dtype, width), case in cases.items():
        b = case.get("gather_bound") or {}
        if b.get("l2_gather_gbs"):
            l2[f"{dtype} w{width}"] = round(b["l2_gather_gbs"], 1)
    out["l2_gather_gbs"] = dict(sorted(l2.items()))
    out["device"] = (doc.get("device") or {}).get("name")
    out["date"] = doc.get("date")
    out["reference_device"] = reference.get("device")
    return out, rows


def table(rows):
    lines = ["| type | case | peer ms | gnnc ms | schedule | speedup | "
             "cuSPARSE-normalized | of gather bound |",
             "|---|---|--:|--:|---|--:|--:|--:|"]
    for r in rows:
        norm = f"{r['normalized']:.2f}x" if r["normalized"] else "-"
        bound = f"{r['of_gather_bound']:.2f}" if r["of_gather_bound"] else "-"
        lines.append(
            f"| {r['type']} | {r['case']} | {r['peer_ms']:.4f} "
            f"({r['peer']}) | {r['gnnc_ms']:.4f} | {r['schedule']} | "
            f"{r['speedup']:.2f}x | {norm} | {bound} |")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bench", help="gnn-bench JSON (--out)")
    ap.add_argument("--reference", default=DEFAULT_REFERENCE)
    ap.add_argument("--out", default=None,
                    help="folder for summary.json and table.md")
    args = ap.parse_args()
    with open(args.bench) as f:
        doc = json.load(f)
    with open(args.reference) as f:
        reference = json.load(f)
    summary, rows = summarize(doc, reference)
    text = json.dumps(summary, indent=1)
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "summary.json"), "w") as f:
            f.write(text + "\n")
        with open(os.path.join(args.out, "table.md"), "w") as f:
            f.write(table(rows))
    print(text)
    print(table(rows))


if __name__ == "__main__":
    main()
