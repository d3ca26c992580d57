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


@pytest.mark.parametrize("aggregate", ["multi", "per-snapshot"])
def test_rmat_cli_losses_agree(tmp_path, aggregate):
    """The script itself, emulated on the CPU: a tiny evolving R-MAT (scale 8,
    4 snapshots), 2 epochs, --compare; gnnc aggregates each window with one
    snapshot_spmm (multi) or one spmm per snapshot."""
    _needs_torch_pyg_and_lib()
    out = tmp_path / "dgnn.json"
    env = dict(os.environ, GNNC_EMULATE="1", PYTHONPATH=str(REPO / "python"))
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "train_dgnn.py"), "--dataset", "rmat",
         "--scale", "8", "--snapshots", "4", "--epochs", "2", "--warmup", "0",
         "--window", "2", "--compare", "--aggregate", aggregate, "--json", str(out)],
        env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "compare: largest relative loss difference" in proc.stdout
    assert f"gnnc aggregates {aggregate}" in proc.stdout
    res = json.loads(out.read_text())
    assert res["emulated"] is True
    (row,) = res["results"]
    assert row["dataset"] == "rmat" and row["nodes"] == 256 and row["snapshots"] == 4
    for lib in ("gnnc", "pyg"):
        losses = row["runs"][lib]["losses"]
        assert len(losses) == 2 and all(math.isfinite(v) for v in losses)
    gnnc_run = row["runs"]["gnnc"]
    assert gnnc_run["aggregate"] == aggregate and gnnc_run["aggregate_note"] is None
    if aggregate == "multi":
        # Churn 0.05 and a self loop per node: the windows share most edges.
        assert 0.8 < gnnc_run["overlap_rate"] <= 1.0
    else:
        assert gnnc_run["overlap_rate"] is None
    # Training moves the loss, and both libraries move it the same way.
    assert gnnc_run["losses"][0] != gnnc_run["losses"][1]
    assert row["loss_max_rel_diff"] < 1e-4
    assert row["epoch_ratio_pyg_over_gnnc"] > 0
    # --prefetch auto: gnnc prefetches; PyG runs without and with.
    assert gnnc_run["prefetch"] is True and row["runs"]["pyg"]["prefetch"] is False
    assert row["runs"]["pyg_prefetch"]["prefetch"] is True
    assert row["prefetch_loss_max_rel_diff_pyg"] == 0  # the CPU: bit for bit
    assert row["loss_max_rel_diff_pyg_prefetch"] < 1e-4
    assert row["epoch_ratio_pyg_prefetch_over_gnnc"] > 0
    for r in row["runs"].values():
        # Training windows of 2 snapshots: 3 of 4 snapshots train, each
        # [256 nodes x 16 features] f32 features and 256 f32 targets.
        assert r["h2d_bytes_per_epoch"] == 3 * (256 * 16 + 256) * 4
        assert r["copy_ms"] >= 0 and r["resident_compute_ms"] > 0
        assert r["pipelined_ms"] == r["epoch_ms"]
        assert r["transfer_hidden_fraction"] is None  # nothing is copied on the CPU


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


def _directed_sequence(T, n=40, snapshots=6, seed=5):
    """Directed unweighted snapshots (bitcoinalpha's kind) that keep most of
    a base edge set, with self loops present in some and nodes without
    edges."""
    rng = np.random.default_rng(seed)
    e = 150
    base_s, base_d = rng.integers(0, n, e), np.minimum(rng.integers(0, n, e),
                                                       rng.integers(0, n, e))
    src, dst = [], []
    for _ in range(snapshots):
        keep = rng.random(e) < 0.8
        s = np.concatenate([base_s[keep], rng.integers(0, n, 20)])
        d = np.concatenate([base_d[keep], rng.integers(0, n - 5, 20)])
        d[:2] = s[:2]  # self loops
        _, first = np.unique(s * n + d, return_index=True)
        src.append(s[first].astype(np.int64))
        dst.append(d[first].astype(np.int64))
    x = rng.standard_normal((snapshots, n, 5)).astype(np.float32)
    y = rng.standard_normal((snapshots, n)).astype(np.float32)
    return T.Sequence("directed", n, src, dst, [None] * snapshots, x, y, train_end=4)


def test_directed_multi_snapshot_losses_agree(dev, monkeypatch):
    """Directed unweighted snapshots with --aggregate multi: one
    snapshot_spmm per window (norm='left', features scaled by deg^-1/2)
    against PyG's per-snapshot GCNConv and gnnc's per-snapshot spmm."""
    pytest.importorskip("torch_geometric", reason="torch_geometric is not installed")
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import train_dgnn as T

    seq = _directed_sequence(T)
    args = T.parser().parse_args(["--epochs", "3", "--warmup", "0", "--window", "3",
                                  "--hidden", "8"])
    init = T.initial_state(seq, args)
    runs = {}
    for name, lib, aggregate in [("multi", "gnnc", "multi"),
                                 ("per-snapshot", "gnnc", "per-snapshot"),
                                 ("pyg", "pyg", None)]:
        graphs = T.build_graphs(lib, seq, dev, aggregate, args.window)
        if lib == "gnnc":
            assert graphs.aggregate == aggregate and graphs.note is None
        runs[name] = T.train_one(lib, seq, graphs, init, "f32", args, dev)
    multi = runs["multi"]
    assert multi["aggregate"] == "multi" and 0 < multi["overlap_rate"] < 1
    for other in ("pyg", "per-snapshot"):
        assert T.max_rel_diff(multi["losses"], runs[other]["losses"]) < 1e-4
        assert multi["test_loss"] == pytest.approx(runs[other]["test_loss"], rel=1e-4)


def test_weighted_snapshots_fall_back_to_per_snapshot(dev, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import train_dgnn as T

    graphs = T.build_graphs("gnnc", _weighted_sequence(T), dev, "multi", 2)
    assert graphs.aggregate == "per-snapshot"
    assert "weighted" in graphs.note
    assert graphs.window([0, 1]).group is None and graphs.overlap_rate() is None
    seq = _directed_sequence(T)
    graphs = T.build_graphs("gnnc", seq, dev, "multi", 65)
    assert graphs.aggregate == "per-snapshot" and "exceed" in graphs.note


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


def test_aggregate_window_multi_matches_per_snapshot(dev, monkeypatch):
    """One snapshot_spmm per window against one spmm per snapshot, values
    and gradients: a window of symmetric snapshots (norm='both') and one
    that mixes a symmetric and a directed snapshot (norm='left' with the
    features scaled by deg^-1/2)."""
    import torch
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import train_dgnn as T

    seq = _directed_sequence(T, snapshots=3)
    n = seq.num_nodes

    def symmetric(t):
        s, d = seq.src[t], seq.dst[t]
        key = np.unique(np.concatenate([s * n + d, d * n + s]))
        return key // n, key % n

    sym = [T.gnnc_snapshot(*symmetric(t), None, n, dev) for t in range(2)]
    directed = T.gnnc_snapshot(seq.src[2], seq.dst[2], None, n, dev)
    assert all(s.values is None for s in sym) and directed.values is not None
    for snaps, norm in [(sym, "both"), ([sym[0], directed], "left")]:
        assert T.multi_unavailable(snaps, len(snaps)) is None
        window = T.gnnc_window(snaps, dev)
        assert window.group is not None and window.norm == norm
        xs = [torch.randn(n, 7, device=dev, requires_grad=True) for _ in snaps]
        ys = T.aggregate_window(window, xs)
        refs_in = [x.detach().clone().requires_grad_(True) for x in xs]
        refs = T.aggregate_window(snaps, refs_in)
        dys = [torch.randn(n, 7, device=dev) for _ in snaps]
        sum((y * dy).sum() for y, dy in zip(ys, dys)).backward()
        sum((r * dy).sum() for r, dy in zip(refs, dys)).backward()
        for y, r, x, xr in zip(ys, refs, xs, refs_in):
            torch.testing.assert_close(y, r, rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(x.grad, xr.grad, rtol=1e-5, atol=1e-5)


def test_unsorted_rows_in_one_pass(monkeypatch):
    """The check --aggregate multi runs on every snapshot (one pass over the
    edges; it replaced a hash-based np.unique over all edge keys that took
    most of the 24 s of building an R-MAT scale-16 window's groups): row
    boundaries are not compared, empty rows are skipped, a repeated edge
    and an unsorted row are told apart."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    pytest.importorskip("torch", reason="torch is not installed")
    import train_dgnn as T

    rp = np.array([0, 2, 2, 2, 5, 6], dtype=np.int64)
    ok = np.array([3, 7, 0, 1, 9, 0], dtype=np.int32)  # rows may restart low
    assert T.unsorted_rows(rp, ok) is None
    assert T.unsorted_rows(rp, np.array([3, 3, 0, 1, 9, 0], np.int32)) == "repeats an edge"
    assert T.unsorted_rows(rp, np.array([3, 7, 0, 9, 1, 0], np.int32)) == \
        "has a row that is not sorted"
    assert T.unsorted_rows(np.array([0, 0], np.int64), np.zeros(0, np.int32)) is None
    assert T.unsorted_rows(np.array([0, 1, 2], np.int64), np.array([4, 4], np.int32)) is None


def test_repeated_edge_falls_back(dev, monkeypatch):
    """A snapshot whose edge list repeats an edge keeps it in gnnc's CSR
    (next to its twin): --aggregate multi says so and runs per snapshot."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import train_dgnn as T

    src = np.array([0, 1, 2, 1], dtype=np.int64)
    dst = np.array([1, 2, 0, 2], dtype=np.int64)  # 1 -> 2 twice
    snap = T.gnnc_snapshot(src, dst, None, 4, dev)
    clean = T.gnnc_snapshot(src[:3], dst[:3], None, 4, dev)
    assert T.multi_unavailable([clean], 2) is None
    why = T.multi_unavailable([clean, snap], 2)
    assert why == "snapshot 1 repeats an edge, which a snapshot group cannot hold"


def _window_reference(T, net, graphs, x, h):
    """The model as it was written before the window form, over a PyG
    TGCN's parameters: per snapshot, its GCNConv layers, a
    torch.nn.GRUCell step (the GRU's weights) carrying h, the head.
    x: [S, N, F]; returns [S, N] predictions and the last state [N, H]."""
    import torch
    import torch.nn.functional as F

    hidden = net.gru.hidden_size
    cell = torch.nn.GRUCell(hidden, hidden).to(x.device)
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        getattr(cell, name).data.copy_(getattr(net.gru, name + "_l0"))
    outs = []
    for (ei, w), xt in zip(graphs, x.unbind(0)):
        for conv in net.convs:
            xt = F.relu(conv(xt, ei, w))
        h = cell(xt, h)
        outs.append(net.head(h).squeeze(-1))
    return torch.stack(outs), h


@pytest.mark.parametrize("recurrence", ["sequence", "step", "cell"])
def test_window_model_is_the_per_snapshot_model(dev, monkeypatch, recurrence):
    """TGCN over a whole window (gnnc: [N, S, F], one matmul, aggregation,
    bias and ReLU per layer, the GRU and head once; PyG: GCNConv per
    snapshot, the GRU and head once) computes what the per-snapshot
    GRUCell formulation computes, from the same weights, with a hidden
    state carried in, for both recurrences."""
    pytest.importorskip("torch_geometric", reason="torch_geometric is not installed")
    import torch
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import train_dgnn as T

    # The reference's GRUCell computes in f32; so does the GRU under
    # train_one's full_f32 (cuDNN would otherwise use TF32 on a GPU).
    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", False)
    seq = _directed_sequence(T, snapshots=4)
    args = T.parser().parse_args(["--hidden", "8", "--recurrence", recurrence])
    init = T.initial_state(seq, args)
    w = [1, 2, 3]
    x = torch.from_numpy(seq.x[1:4]).to(dev)  # [S, N, F]
    h0 = torch.randn(seq.num_nodes, 8, device=dev)
    pyg_graphs = T.build_graphs("pyg", seq, dev)
    gnnc_graphs = T.build_graphs("gnnc", seq, dev, "multi", 3)
    nets = {}
    for lib in ("gnnc", "pyg"):
        net = T.TGCN(lib, seq.x.shape[2], 8, 2, recurrence).to(dev)
        net.load_state_dict(init)
        nets[lib] = net
    with torch.no_grad():
        want, h_want = _window_reference(T, nets["pyg"], T.window_graphs(pyg_graphs, w),
                                          x, h0)
        got_pyg, h_pyg = nets["pyg"](T.window_graphs(pyg_graphs, w), x, h0[None])
        got_gnnc, h_gnnc = nets["gnnc"](T.window_graphs(gnnc_graphs, w),
                                        x.transpose(0, 1).contiguous(), h0[None])
    assert got_pyg.shape == (3, seq.num_nodes) and got_gnnc.shape == (seq.num_nodes, 3)
    torch.testing.assert_close(got_pyg, want, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(got_gnnc.t(), want, rtol=1e-5, atol=1e-6)
    for h in (h_pyg, h_gnnc):
        assert h.shape == (1, seq.num_nodes, 8)
        torch.testing.assert_close(h[0], h_want, rtol=1e-5, atol=1e-6)


def test_prefetch_gives_the_same_losses(dev, monkeypatch):
    """Training with the next window prefetched (side stream on CUDA) and
    without: the same losses, for both libraries (bit for bit on the CPU;
    on CUDA the atomics of the aggregations may reorder sums between any
    two runs), the same bytes moved, and the transfer measurements."""
    pytest.importorskip("torch_geometric", reason="torch_geometric is not installed")
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import train_dgnn as T

    seq = _directed_sequence(T)
    args = T.parser().parse_args(["--epochs", "3", "--warmup", "0", "--window", "3",
                                  "--hidden", "8", "--timing-reps", "1"])
    init = T.initial_state(seq, args)
    for lib in ("gnnc", "pyg"):
        graphs = T.build_graphs(lib, seq, dev, "multi", args.window)
        off, on = (T.train_one(lib, seq, graphs, init, "f32", args, dev, prefetch=p)
                   for p in (False, True))
        assert off["prefetch"] is False and on["prefetch"] is True
        if dev.type == "cpu":
            assert on["losses"] == off["losses"] and on["test_loss"] == off["test_loss"]
        else:
            assert T.max_rel_diff(on["losses"], off["losses"]) < 1e-5
        # 4 training snapshots of 40 nodes: 5 f32 features and a target each.
        assert on["h2d_bytes_per_epoch"] == off["h2d_bytes_per_epoch"] == 4 * 40 * 6 * 4
        for r in (on, off):
            assert r["resident_compute_ms"] > 0 and r["copy_ms"] >= 0
            if dev.type == "cuda":
                assert 0 <= r["transfer_hidden_fraction"] <= 1
            else:
                assert r["transfer_hidden_fraction"] is None


def test_feed_queues_the_next_window_first(monkeypatch):
    """WindowFeed's order: with prefetch, get(i, then=j) queues window j's
    copies before it hands out window i (so they overlap i's compute) and
    hands out a queued window without copying it again; without prefetch
    each window is copied when asked for, and `then` is ignored."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import train_dgnn as T

    host = T.HostWindows([torch.full((2, 3), float(i)) for i in range(3)],
                         [torch.full((2,), float(i)) for i in range(3)])
    assert host.nbytes() == 3 * (6 + 2) * 4
    for prefetch, want in [(True, [0, 1, 2, 0, 1]), (False, [0, 1, 2, 0])]:
        feed = T.WindowFeed(host, torch.device("cpu"), prefetch)
        copies = []
        real = feed._copy

        def spy(i, real=real, copies=copies):
            copies.append(i)
            return real(i)
        monkeypatch.setattr(feed, "_copy", spy)
        got = [feed.get(i, then=(i + 1) % 3)[0] for i in (0, 1, 2, 0)]
        assert [float(x[0, 0]) for x in got] == [0, 1, 2, 0]
        assert copies == want
        feed.drop()
        assert not feed.pending


def test_host_windows_layouts(monkeypatch):
    """Each window's features and targets as one contiguous tensor each:
    [N, S, F] and [N, S] for gnnc, [S, N, F] and [S, N] for PyG."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import train_dgnn as T

    seq = _directed_sequence(T, snapshots=5)
    wins = T.windows(0, 5, 2)
    cpu = torch.device("cpu")
    nsf = T.host_windows(seq, wins, "nsf", "f32", cpu)
    snf = T.host_windows(seq, wins, "snf", "f32", cpu)
    assert [tuple(x.shape) for x in nsf.x] == [(40, 2, 5), (40, 2, 5), (40, 1, 5)]
    assert [tuple(y.shape) for y in snf.y] == [(2, 40), (2, 40), (1, 40)]
    for a, b, w in zip(nsf.x + nsf.y, snf.x + snf.y, wins + wins):
        assert a.is_contiguous() and b.is_contiguous()
        torch.testing.assert_close(a, b.transpose(0, 1), rtol=0, atol=0)
    torch.testing.assert_close(nsf.x[1][:, 1], torch.from_numpy(seq.x[3]), rtol=0, atol=0)
    assert nsf.nbytes() == snf.nbytes() == 5 * 40 * 6 * 4
    with pytest.raises(ValueError, match="consecutive"):
        T.host_windows(seq, [[0, 2]], "nsf", "f32", cpu)


def test_hidden_fraction(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    pytest.importorskip("torch", reason="torch is not installed")
    import train_dgnn as T

    assert T.hidden_fraction(2.0, 10.0, 10.5) == pytest.approx(0.75)
    assert T.hidden_fraction(2.0, 10.0, 13.0) == 0.0  # slower than copy + compute
    assert T.hidden_fraction(2.0, 10.0, 9.0) == 1.0  # faster than the compute alone
    assert T.hidden_fraction(0.0, 10.0, 9.0) is None
    assert T.hidden_fraction(None, 10.0, 9.0) is None


def test_sorted_set_helpers_match_numpy(monkeypatch):
    """The evolving R-MAT's set operations (sorting instead of numpy 2.4's
    hash-based np.unique) give np.unique's and np.setdiff1d's answers."""
    monkeypatch.syspath_prepend(str(EXAMPLES))
    pytest.importorskip("torch", reason="torch is not installed")
    import train_dgnn as T

    rng = np.random.default_rng(7)
    for size in (0, 1, 2, 50, 5000):
        a = rng.integers(0, 3 * size + 1, size)
        b = np.unique(rng.integers(0, 3 * size + 1, size // 2))
        assert np.array_equal(T.sorted_unique(a), np.unique(a))
        ua = np.unique(a)
        assert np.array_equal(T.not_in_sorted(ua, b), np.setdiff1d(ua, b))
        assert np.array_equal(T.not_in_sorted(ua, b[:0]), ua)


def test_full_f32_restores_the_setting(monkeypatch):
    torch = pytest.importorskip("torch", reason="torch is not installed")
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import train_dgnn as T

    monkeypatch.setattr(torch.backends.cudnn, "allow_tf32", True)
    with T.full_f32("f32"):
        assert torch.backends.cudnn.allow_tf32 is False
    assert torch.backends.cudnn.allow_tf32 is True
    with T.full_f32("bf16"):
        assert torch.backends.cudnn.allow_tf32 is True
