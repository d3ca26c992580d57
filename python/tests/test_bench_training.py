"""examples/bench_training.py --merge: the summary of parts run apart (no
training, no GPU). Needs torch (the examples import it)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "examples" / "bench_training.py"


def _node_row(dataset, model, precision, delta, seeds):
    return dict(dataset=dataset, model=model, precision=precision,
                gnnc=dict(acc_mean=80.0, seeds=seeds), pyg_f32=dict(acc_mean=80.0 + delta),
                acc_delta_points=delta)


def _rmat_row(scale, model, f32, f16, bf16=None, f16_loss=1.0, mem=0.4):
    row = dict(scale=scale, model=model, speedup_f32=f32, speedup_f16=f16,
               memory_ratio_f16=mem, gnnc_f16=dict(loss=f16_loss))
    if bf16 is not None:
        row.update(speedup_bf16=bf16, memory_ratio_bf16=mem + 0.01)
    return row


def _merge(tmp_path, *specs):
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, str(SCRIPT), "--merge", *specs,
                          "--out-dir", str(out)], capture_output=True, text=True)
    return run, out


def _write(path, obj):
    path.write_text(json.dumps(obj))
    return str(path)


def test_merge_pools_parts_and_later_rows_replace_earlier(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed")
    dev = "GPU X"
    first = _write(tmp_path / "a.json", dict(
        device=dev,
        node=dict(device=dev, results=[_node_row("cora", "gcn", "f32", 0.2, 10),
                                       _node_row("cora", "gin", "f32", 1.1, 10)]),
        rmat=dict(device=dev, results=[_rmat_row(20, "gcn", 3.0, 5.5),
                                       _rmat_row(20, "gin", 1.8, float("nan"), 4.1,
                                                 f16_loss=float("nan"))])))
    gin30 = _write(tmp_path / "b.json", dict(
        device=dev, node=dict(device=dev, results=[_node_row("cora", "gin", "f32", 0.3, 30)])))
    scale22 = _write(tmp_path / "c.json", dict(
        device=dev, results=[_rmat_row(22, "gin", 1.7, float("nan"), 4.0,
                                       f16_loss=float("nan"), mem=0.45)]))
    run, out = _merge(tmp_path, first, gin30, f"rmat={scale22}")
    assert run.returncode == 0, run.stderr
    summary = json.loads((out / "summary.json").read_text())
    # GIN's 10-seed row (1.1 points) was replaced by the 30-seed one.
    assert summary["accuracy_delta_points"] == pytest.approx(0.3)
    assert summary["accuracy_seeds"] == {"gcn": 10, "gin": 30}
    # GIN's f16 loss is not finite: its bf16 run stands in, over both scales.
    assert summary["epoch_speedup_f16_vs_pyg_f32"] == pytest.approx(4.0)
    assert summary["epoch_speedup_f32_vs_pyg_f32"] == pytest.approx(1.7)
    assert summary["memory_ratio_f16_vs_pyg_f32"] == pytest.approx(0.46)
    assert summary["half_precision_runs"] == {
        "gcn scale 20": "f16", "gin scale 20": "bf16", "gin scale 22": "bf16"}
    assert summary["parts"] == ["node", "rmat"]
    assert summary["proteins_epoch_speedup"] is None
    assert summary["device"] == dev


def test_merge_refuses_other_devices_and_unknown_files(tmp_path):
    pytest.importorskip("torch", reason="torch is not installed")
    a = _write(tmp_path / "a.json", dict(device="GPU X", rmat=dict(
        device="GPU X", results=[_rmat_row(20, "gcn", 3.0, 5.5)])))
    b = _write(tmp_path / "b.json", dict(device="GPU Y", results=[_rmat_row(21, "gcn", 3.0, 5.5)]))
    run, out = _merge(tmp_path, a, f"rmat={b}")
    assert run.returncode != 0
    assert "ran on GPU Y" in run.stderr and "GPU X" in run.stderr
    assert not (out / "summary.json").exists()
    # A part's own output needs its part named.
    run, _ = _merge(tmp_path, b)
    assert run.returncode != 0 and "PART=FILE" in run.stderr
