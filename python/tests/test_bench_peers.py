"""bench/peers_summary.py on a small synthetic gnn-bench JSON whose answers
are known."""
import json
import math
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import peers_summary  # noqa: E402

REFERENCE = {"device": "ref", "cases": [
    {"graph": "g", "width": 32, "rode": 2.0, "flashsparse": 1.0,
     "cusparse_f32": 4.0, "cusparse_f16": 2.0},
    {"graph": "g", "width": 64, "rode": 1.0, "flashsparse": 3.0,
     "cusparse_f32": 1.0, "cusparse_f16": 3.0},
    {"graph": "absent", "width": 32, "rode": 1.0, "flashsparse": 1.0,
     "cusparse_f32": 1.0, "cusparse_f16": 1.0}]}


def case(graph, dtype, width, gnnc, cusparse, sddmm=None, nnz=10,
         bound=None):
    c = {"graph": graph, "type": dtype, "width": width, "nnz": nnz,
         "gnnc_best": {"label": "s", "time_ms": {"median": gnnc}},
         "cusparse_fastest": {"algorithm": "a", "median_ms": cusparse}}
    if bound:
        c["gnnc_best"]["of_gather_bound"] = bound
        c["gather_bound"] = {"l2_gather_gbs": 1000.0,
                             "time_ms": {"median": gnnc * bound}}
    if sddmm:
        c["gnnc_sddmm_best"] = {"time_ms": {"median": sddmm[0]}}
        c["cusparse_sddmm_best"] = {"median_ms": sddmm[1]}
    return c


DOC = {"device": {"name": "test"}, "date": "d", "cases": [
    case("g", "f32", 32, 1.0, 2.0, sddmm=(1.0, 2.0), bound=0.5),
    case("g", "f32", 64, 2.0, 1.0, sddmm=(2.0, 1.0), nnz=2_000_000),
    case("g", "f16", 32, 0.5, 1.0),
    case("g", "f16", 64, 1.0, 3.0),
    case("rmat18", "f32", 32, 1.0, 1.0, sddmm=(1.0, 9.0)),
]}


def test_ratios_and_normalization():
    s, rows = peers_summary.summarize(DOC, REFERENCE)
    rode = s["spmm_f32_vs_rode"]
    # 2.0 / 1.0 and 1.0 / 2.0.
    assert rode["geomean"] == 1.0 and rode["worst"] == 0.5
    assert rode["worst_case"] == "g w64"
    assert rode["missing"] == ["absent w32"]
    # Normalized: (2/4 * 2 / 1) = 1 and (1/1 * 1 / 2) = 0.5.
    assert rode["normalized"]["geomean"] == round(math.sqrt(0.5), 3)
    # The gather stream took 0.5 ms where RoDe took 2.0.
    assert rode["stream_vs_peer"] == {"geomean": 4.0, "worst": 4.0,
                                      "worst_case": "g w32", "cases": 1}
    fs = s["spmm_f16_vs_flashsparse"]
    assert fs["geomean"] == round(math.sqrt(2.0 * 3.0), 3)
    # SDDMM: R-MAT graphs apart, 2.0 and 0.5; the large one is 0.5.
    assert s["sddmm_vs_cusparse_all"]["geomean"] == 1.0
    assert s["sddmm_vs_cusparse_all"]["cases"] == 2
    assert s["sddmm_vs_cusparse_large"]["worst"] == 0.5
    assert s["gat_fused_vs_chain"] is None  # no case timed both
    assert s["gather_bound_fraction"]["gnnc_best f32"]["geomean"] == 0.5
    assert s["l2_gather_gbs"] == {"f32 w32": 1000.0}
    assert len(rows) == 4


def test_gat_fused_over_chain():
    doc = json.loads(json.dumps(DOC))
    timed = {("f32", 32): (3.0, 1.0, "ok"), ("f16", 32): (2.0, 1.0, "ok"),
             ("f16", 64): (2.0, 0.1, "wrong")}
    for c in doc["cases"]:
        key = (c["type"], c["width"])
        if key in timed:
            chain, fused, status = timed[key]
            c["gat_chain"] = {"status": "ok", "time_ms": {"median": chain}}
            c["gat_fused"] = {"status": status, "time_ms": {"median": fused}}
    s, _ = peers_summary.summarize(doc, REFERENCE)
    gat = s["gat_fused_vs_chain"]
    # Both f32 w32 cases (g and rmat18) and g f16 w32; a fused kernel
    # that failed its check does not count.
    assert gat["cases"] == 3
    assert gat["geomean"] == round((3.0 * 3.0 * 2.0) ** (1 / 3), 3)
    assert gat["worst"] == 2.0 and gat["worst_case"] == "g f16 w32"
    assert gat["by_type"]["f32"]["geomean"] == 3.0


def test_command_line_writes_summary_and_table(tmp_path):
    bench = tmp_path / "bench.json"
    ref = tmp_path / "ref.json"
    bench.write_text(json.dumps(DOC))
    ref.write_text(json.dumps(REFERENCE))
    subprocess.run([sys.executable, str(REPO / "bench" / "peers_summary.py"),
                    str(bench), "--reference", str(ref), "--out",
                    str(tmp_path / "out")], check=True, capture_output=True)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["spmm_f32_vs_rode"]["cases"] == 2
    assert "| f16 | g w64 |" in (tmp_path / "out" / "table.md").read_text()


def test_default_reference_is_readable():
    with open(peers_summary.DEFAULT_REFERENCE) as f:
        ref = json.load(f)
    assert len(ref["cases"]) == 12
