"""examples/bench_segmented.py --quick end to end on the CPU (gnnc's
launches emulated: a check of the script, not of its times), and
bench/segmented_summary.py on it and on a small synthetic JSON whose
answers are known."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))
import segmented_summary  # noqa: E402


def rec(set_, dtype, pass_, impl, ms, ok=True, k=64):
    return {"set": set_, "dtype": dtype, "K": k, "M": k, "pass": pass_, "impl": impl,
            "ms": ms, "ok": ok}


def test_summary_of_synthetic_runs(tmp_path):
    bench = {"device": "test", "records": [
        rec("A", "tf32", "forward", "torch_loop", 4.0),
        rec("A", "tf32", "forward", "torch_bmm_padded", 2.0),
        rec("A", "tf32", "forward", "gnnc", 1.0),
        rec("A", "f16", "forward", "torch_loop", 1.0),
        rec("A", "f16", "forward", "gnnc", 2.0),
        # A failed check never counts, however fast.
        rec("A", "tf32", "backward", "torch_loop", 0.1, ok=False),
        rec("A", "tf32", "backward", "pyg_heterolinear", 3.0),
        rec("A", "tf32", "backward", "gnnc", 1.5),
        # No passing gnnc: listed, not counted.
        rec("B", "f16", "backward", "torch_loop", 1.0),
        rec("B", "f16", "backward", "gnnc", None, ok=None),
    ], "rgcn": [
        {"dataset": "acm", "impl": "gnnc_rgcnconv", "ms": 2.0, "ok": True},
        {"dataset": "acm", "impl": "pyg_rgcnconv", "ms": 8.0, "ok": True},
        {"dataset": "acm", "impl": "pyg_fastrgcnconv", "ms": 6.0, "ok": True},
    ]}
    big = dict(rec("C", "f16", "forward", "gnnc_tuned", 0.1), bytes=2e8, flops=1e10)
    gnn_bench = {"copy_gbs": 4000.0, "tensor_core_peak_flops": {"f16": 1e15},
                 "records": [
        rec("A", "tf32", "forward", "cublas_grouped", 0.5),
        dict(rec("A", "tf32", "forward", "gnnc_tuned", 0.25), bytes=1e6, flops=1e6),
        rec("A", "f16", "forward", "cublas_loop", 0.5, ok=False),
        # Large: 2e8 bytes in 0.1 ms = 2 TB/s, half of 4 TB/s; 1e10 flops
        # in 0.1 ms = 1e14/s, a tenth of the peak: the bandwidth bound holds.
        big,
    ]}
    (tmp_path / "b.json").write_text(json.dumps(bench))
    (tmp_path / "g.json").write_text(json.dumps(gnn_bench))
    s = segmented_summary.summarize(str(tmp_path / "b.json"), str(tmp_path / "g.json"),
                                    str(tmp_path / "out"))
    # forward: A tf32 = 0.5 / 0.25 = 2 (cublas_grouped against gnnc_tuned);
    # A f16 = 1 / 2 = 0.5 (the failed cublas_loop is out).
    f = s["forward_vs_best"]
    assert f["cases"] == 2 and f["worst"] == 0.5
    assert math.isclose(f["geomean"], 1.0)
    assert f["by_dtype"]["tf32"]["geomean"] == 2.0
    assert f["by_dtype"]["f16"]["geomean"] == 0.5
    # The ceiling where gnn-bench gave the bound: A tf32's 1e6 bytes at
    # 4 TB/s take 0.25 us (no TF32 peak: bytes alone), and its best
    # baseline 0.5 ms, so no kernel could beat it by more than 2000x.
    assert f["ceiling"] == {"geomean": 2000.0, "worst": 2000.0, "cases": 1,
                            "below_2x": 0, "below_1_2x": 0}
    # backward: 3 / 1.5 = 2; B f16 has no passing gnnc.
    b = s["backward_vs_best"]
    assert b["cases"] == 1 and b["geomean"] == 2.0
    assert s["rgcn_vs_pyg"]["geomean"] == 3.0
    # Only C is large (A's 1 MB is not).
    assert s["bound_fraction_large"]["cases"] == 1
    assert s["bound_fraction_large"]["geomean"] == 0.5
    assert s["large_cases"][0]["bound"] == "bandwidth"
    rows = {(r["set"], r["dtype"], r["pass"]): r for r in s["cases"]}
    assert rows[("B", "f16", "backward")]["speedup"] is None
    assert math.isclose(rows[("A", "tf32", "forward")]["bound_ms"], 2.5e-4)
    assert rows[("A", "f16", "forward")]["ceiling"] is None
    assert rows[("A", "tf32", "backward")]["failed"] == ["torch_loop"]
    table = (tmp_path / "out" / "table.md").read_text()
    assert "| A | tf32 | 64 | 64 | forward |" in table and "cublas_grouped" in table
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["cases"]


def test_quick_run_emulated_end_to_end(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed")
    pytest.importorskip("torch_geometric", reason="torch_geometric is not installed")
    from gnnc import _lib
    try:
        _lib.load()
    except _lib.GnncError as e:
        pytest.skip(f"libgnnc_c.so not available: {e}")
    sys.path.insert(0, str(REPO / "examples"))
    import hetero_data
    if hetero_data.datasets_dir() is None or \
            not (hetero_data.datasets_dir() / "segments").is_dir():
        pytest.skip("no datasets folder with segments/ ($GNNC_DATASETS or "
                    "../shared/datasets)")
    out = tmp_path / "bench.json"
    env = dict(os.environ, GNNC_EMULATE="1", PYTHONPATH=str(REPO / "python"))
    proc = subprocess.run(
        [sys.executable, str(REPO / "examples" / "bench_segmented.py"), "--quick",
         "--out", str(out)], env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    assert doc["emulated"] is True and "per-type loop" in doc["heterolinear_backend"]
    impls = {"torch_loop", "torch_bmm_padded", "pyg_heterolinear", "gnnc"}
    # 2 sets x 1 width x 2 dtypes x 2 passes x 4 impls, every one checked.
    assert len(doc["records"]) == 32
    assert {r["impl"] for r in doc["records"]} == impls
    assert all(r["ok"] is True and r["ms"] > 0 for r in doc["records"]), \
        [r for r in doc["records"] if r["ok"] is not True]
    assert {(r["dataset"], r["impl"]) for r in doc["rgcn"]} == {
        ("hetero_acm_heco", i) for i in ("gnnc_rgcnconv", "pyg_rgcnconv",
                                         "pyg_fastrgcnconv")}
    assert all(r["ok"] is True for r in doc["rgcn"]), doc["rgcn"]
    s = segmented_summary.summarize(str(out), None, str(tmp_path / "sum"))
    assert s["forward_vs_best"]["cases"] == 4 and s["backward_vs_best"]["cases"] == 4
    assert set(s["forward_vs_best"]["by_dtype"]) == {"tf32", "f16"}
    assert s["rgcn_vs_pyg"]["cases"] == 1
