"""examples/train_dgnn.py (a T-GCN style dynamic GNN): gnnc's model and
PyG's, from the same weights, compute the same per-epoch losses. Needs torch,
torch_geometric and the library; runs on the CPU with the kernels emulated
(and, in-process, on CUDA too when there is a GPU)."""
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def _needs_torch_pyg_and_lib():
    pytest.importorskip("torch", reason="torch is not installed")
    pytest.importorskip("torch_geometric", reason="torch_geometric is not installed")
    from gnnc import _lib
    try:
        _lib.load()
    except _lib.GnncError as e:
        pytest.skip(f"libgnnc_c.so not available: {e}")


def test_rmat_cli_losses_agree(tmp_path):
    """The script itself, emulated on the CPU: a tiny evolving R-MAT (scale 8,
    4 snapshots), 2 epochs, --compare."""
    _needs_torch_pyg_and_lib()
    out = tmp_path / "dgnn.json"
    env = dict(os.environ, GNNC_EMULATE="1", PYTHONPATH=str(REPO / "python"))
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "train_dgnn.py"), "--dataset", "rmat",
         "--scale", "8", "--snapshots", "4", "--epochs", "2", "--warmup", "0",
         "--window", "2", "--compare", "--json", str(out)],
        env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "compare: largest relative loss difference" in proc.stdout
    res = json.loads(out.read_text())
    assert res["emulated"] is True
    (row,) = res["results"]
    assert row["dataset"] == "rmat" and row["nodes"] == 256 and row["snapshots"] == 4
    for lib in ("gnnc", "pyg"):
        losses = row["runs"][lib]["losses"]
        assert len(losses) == 2 and all(math.isfinite(v) for v in losses)
    # Training moves the loss, and both libraries move it the same way.
    assert row["runs"]["gnnc"]["losses"][0] != row["runs"]["gnnc"]["losses"][1]
    assert row["loss_max_rel_diff"] < 1e-4
    assert row["epoch_ratio_pyg_over_gnnc"] > 0


def _weighted_sequence(T, n=40, snapshots=5, seed=3):
    """Directed weighted snapshots with some self loops already present
    (their weights kept, as PyG's add_remaining_self_loops keeps them),
    nodes without edges, and rows of very different degree."""
    rng = np.random.default_rng(seed)
    src, dst, weight = [], [], []
    for _ in range(snapshots):
        e = rng.integers(60, 120)
        s = rng.integers(0, n, e)
        d = np.minimum(rng.integers(0, n, e), rng.integers(0, n, e))  # skewed in-degree
        d[:4] = s[:4]  # a few self loops
        _, first = np.unique(s * n + d, return_index=True)
        src.append(s[first].astype(np.int64))
        dst.append(d[first].astype(np.int64))
        weight.append(rng.uniform(0.5, 20.0, len(first)).astype(np.float32))
    x = rng.standard_normal((snapshots, n, 6)).astype(np.float32)
    y = rng.standard_normal((snapshots, n)).astype(np.float32)
    return T.Sequence("weighted", n, src, dst, weight, x, y, train_end=4)


def test_weighted_directed_losses_agree(dev, monkeypatch):
    """The edge-weighted, directed path (england_covid's): gnnc's GCN values
    per CSR edge against PyG's gcn_norm inside GCNConv, one and two layers."""
    pytest.importorskip("torch_geometric", reason="torch_geometric is not installed")
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import train_dgnn as T

    seq = _weighted_sequence(T)
    for layers in (1, 2):
        args = T.parser().parse_args(["--epochs", "3", "--warmup", "0", "--window", "2",
                                      "--layers", str(layers), "--hidden", "8"])
        init = T.initial_state(seq, args)
        runs = {lib: T.train_one(lib, seq, T.build_graphs(lib, seq, dev), init, "f32",
                                 args, dev)
                for lib in ("gnnc", "pyg")}
        assert T.max_rel_diff(runs["gnnc"]["losses"], runs["pyg"]["losses"]) < 1e-4
        assert runs["gnnc"]["test_loss"] == pytest.approx(runs["pyg"]["test_loss"],
                                                          rel=1e-4)


def test_aggregate_window_matches_dense(dev, monkeypatch):
    """aggregate_window against D^-1/2 (A + I) D^-1/2 x built densely, for a
    weighted directed snapshot and a symmetric unweighted one (norm='both')."""
    import torch
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import train_dgnn as T

    seq = _weighted_sequence(T, snapshots=1)
    n = seq.num_nodes
    s, d, w = seq.src[0], seq.dst[0], seq.weight[0]
    sym_s, sym_d = np.concatenate([s, d]), np.concatenate([d, s])
    keep = sym_s != sym_d
    key = np.unique(sym_s[keep] * n + sym_d[keep])
    sym_s, sym_d = key // n, key % n

    def dense(src, dst, wt):
        a = np.zeros((n, n))
        loops = src == dst
        a[dst[~loops], src[~loops]] = wt[~loops]
        diag = np.ones(n)
        diag[src[loops]] = wt[loops]
        a += np.diag(diag)
        deg = a.sum(1)
        inv = deg ** -0.5
        return inv[:, None] * a * inv[None, :]

    graphs = [T.gnnc_snapshot(s, d, w, n, dev), T.gnnc_snapshot(sym_s, sym_d, None, n, dev)]
    assert graphs[0].values is not None and graphs[1].values is None
    xs = [torch.randn(n, 5, device=dev), torch.randn(n, 5, device=dev)]
    outs = T.aggregate_window(graphs, xs)
    refs = [dense(s, d, w.astype(np.float64)), dense(sym_s, sym_d, np.ones(len(sym_s)))]
    for out, ref, x in zip(outs, refs, xs):
        want = torch.from_numpy(ref).float().to(dev) @ x
        torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="2 graphs but 1 feature"):
        T.aggregate_window(graphs, xs[:1])
