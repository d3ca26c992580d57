"""gnnc.nn layers against torch_geometric's layers of the same
configuration: a PyG layer's state_dict is loaded into the gnnc layer and
outputs and gradients are compared. Runs on CUDA, and on the CPU with
emulated launches."""
import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")
pyg = pytest.importorskip("torch_geometric", reason="torch_geometric is not installed")

import gnnc  # noqa: E402
import gnnc.nn as gnn  # noqa: E402
from gnnc import ops  # noqa: E402
import torch_geometric.nn as pnn  # noqa: E402

N = 70


def edge_index(dev, symmetric, seed=0, e=420, loops=True):
    rng = np.random.default_rng(seed)
    dst = np.where(rng.random(e) < 0.25, 2, rng.integers(0, N - 10, e))
    src = rng.integers(0, N, e)
    if loops:
        src[:4] = dst[:4]  # some existing self loops
    ei = np.stack([src, dst])
    if symmetric:
        ei = np.unique(np.concatenate([ei, ei[::-1]], axis=1), axis=1)
    return torch.from_numpy(ei).to(dev)


def compare(ours, theirs, x, *args, rtol=1e-4, atol=1e-4, extra_leaves=()):
    ours.load_state_dict(theirs.state_dict(), strict=True)
    ours.eval(), theirs.eval()
    x1 = x.clone().requires_grad_(True)
    x2 = x.clone().requires_grad_(True)
    a1 = [a.clone().requires_grad_(True) if torch.is_tensor(a) and a.is_floating_point()
          else a for a in args]
    a2 = [a.clone().requires_grad_(True) if torch.is_tensor(a) and a.is_floating_point()
          else a for a in args]
    y1, y2 = ours(x1, *a1), theirs(x2, *a2)
    torch.testing.assert_close(y1, y2, rtol=rtol, atol=atol)
    dy = torch.randn_like(y2)
    y1.backward(dy)
    y2.backward(dy)
    torch.testing.assert_close(x1.grad, x2.grad, rtol=rtol, atol=atol)
    for (n1, p1), (n2, p2) in zip(sorted(ours.named_parameters()),
                                  sorted(theirs.named_parameters())):
        assert n1 == n2
        torch.testing.assert_close(p1.grad, p2.grad, rtol=rtol, atol=atol, msg=n1)
    for t1, t2 in zip(a1, a2):
        if torch.is_tensor(t1) and t1.requires_grad:
            torch.testing.assert_close(t1.grad, t2.grad, rtol=rtol, atol=atol)


def feats(dev, c=16, seed=1):
    return torch.randn(N, c, generator=torch.Generator().manual_seed(seed)).to(dev)


def test_state_dict_keys_match():
    pairs = [(gnn.GCNConv(8, 4), pnn.GCNConv(8, 4)),
             (gnn.GATConv(8, 4, heads=3), pnn.GATConv(8, 4, heads=3)),
             (gnn.SAGEConv(8, 4), pnn.SAGEConv(8, 4)),
             (gnn.GINConv(torch.nn.Linear(8, 4)), pnn.GINConv(torch.nn.Linear(8, 4)))]
    for ours, theirs in pairs:
        assert {k: v.shape for k, v in ours.state_dict().items()} == \
            {k: v.shape for k, v in theirs.state_dict().items()}


@pytest.mark.parametrize("symmetric", [True, False])
@pytest.mark.parametrize("kw", [{}, {"improved": True}, {"add_self_loops": False},
                                {"normalize": False}, {"cached": True}, {"bias": False}])
def test_gcn(dev, symmetric, kw):
    torch.manual_seed(0)
    theirs = pnn.GCNConv(16, 12, **kw).to(dev)
    ours = gnn.GCNConv(16, 12, **kw).to(dev)
    ei = edge_index(dev, symmetric)
    compare(ours, theirs, feats(dev), ei)
    compare(ours, theirs, feats(dev, seed=2), ei)  # the cached graph again


@pytest.mark.parametrize("loops", [True, False])
def test_gcn_edge_weight(dev, loops):
    torch.manual_seed(0)
    theirs = pnn.GCNConv(16, 12, add_self_loops=loops).to(dev)
    ours = gnn.GCNConv(16, 12, add_self_loops=loops).to(dev)
    ei = edge_index(dev, False)
    w = torch.rand(ei.shape[1], generator=torch.Generator().manual_seed(3)).to(dev) + 0.1
    compare(ours, theirs, feats(dev), ei, w)


def test_gcn_takes_a_graph(dev):
    theirs = pnn.GCNConv(16, 12).to(dev)
    ours = gnn.GCNConv(16, 12).to(dev)
    ei = edge_index(dev, True)
    g = gnnc.Graph.from_edge_index(ei, N, device=dev)
    compare(ours, theirs, feats(dev), g) if False else None
    ours.load_state_dict(theirs.state_dict())
    torch.testing.assert_close(ours(feats(dev), g), theirs(feats(dev), ei),
                               rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("heads,concat,out", [(4, True, 8), (2, False, 6), (1, True, 16),
                                              (4, True, 5)])
@pytest.mark.parametrize("symmetric", [True, False])
def test_gat(dev, heads, concat, out, symmetric):
    torch.manual_seed(0)
    theirs = pnn.GATConv(16, out, heads=heads, concat=concat).to(dev)
    ours = gnn.GATConv(16, out, heads=heads, concat=concat).to(dev)
    compare(ours, theirs, feats(dev), edge_index(dev, symmetric))


@pytest.mark.parametrize("heads,out", [(4, 8), (3, 5)])
def test_gat_inference_is_fused(dev, heads, out, monkeypatch):
    """Under torch.no_grad GATConv takes the fused kernel (gnn.spmm with
    attention) and gives PyG's output."""
    torch.manual_seed(0)
    theirs = pnn.GATConv(16, out, heads=heads).to(dev).eval()
    ours = gnn.GATConv(16, out, heads=heads).to(dev).eval()
    ours.load_state_dict(theirs.state_dict())
    launches = []
    real = ops._launch_spmm_attention
    monkeypatch.setattr(ops, "_launch_spmm_attention",
                        lambda *a: (launches.append(1), real(*a)))
    ei = edge_index(dev, False)
    with torch.no_grad():
        got, want = ours(feats(dev), ei), theirs(feats(dev), ei)
    assert len(launches) == heads
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4)


def test_gat_dropout_trains(dev):
    layer = gnn.GATConv(16, 8, heads=4, dropout=0.5).to(dev)
    layer.train()
    y = layer(feats(dev), edge_index(dev, False))
    y.sum().backward()
    assert torch.isfinite(layer.att_src.grad).all()


@pytest.mark.parametrize("eps,train_eps", [(0.0, False), (0.3, False), (0.1, True)])
def test_gin(dev, eps, train_eps):
    torch.manual_seed(0)
    mlp = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 8))
    theirs = pnn.GINConv(copy.deepcopy(mlp), eps=eps, train_eps=train_eps).to(dev)
    ours = gnn.GINConv(copy.deepcopy(mlp), eps=eps, train_eps=train_eps).to(dev)
    compare(ours, theirs, feats(dev), edge_index(dev, False))


@pytest.mark.parametrize("kw", [{}, {"normalize": True}, {"aggr": "max"}, {"aggr": "sum"},
                                {"root_weight": False}])
def test_sage(dev, kw):
    torch.manual_seed(0)
    theirs = pnn.SAGEConv(16, 12, **kw).to(dev)
    ours = gnn.SAGEConv(16, 12, **kw).to(dev)
    compare(ours, theirs, feats(dev), edge_index(dev, False))


def test_half_precision_layers(dev):
    """f16 features and activations, f32 master weights (autocast), close to
    PyG in f32."""
    dtype = torch.float16 if dev.type == "cuda" else torch.bfloat16
    tol = 3e-2 if dtype == torch.float16 else 1e-1
    ei = edge_index(dev, True)
    for ours, theirs in [(gnn.GCNConv(16, 12), pnn.GCNConv(16, 12)),
                         (gnn.GATConv(16, 8, heads=4), pnn.GATConv(16, 8, heads=4)),
                         (gnn.SAGEConv(16, 12), pnn.SAGEConv(16, 12))]:
        ours, theirs = ours.to(dev), theirs.to(dev)
        ours.load_state_dict(theirs.state_dict())
        x = feats(dev)
        with torch.autocast(dev.type, dtype=dtype):
            y = ours(x.to(dtype), ei)
        assert y.dtype == dtype
        y.float().sum().backward()
        want = theirs(x, ei)
        torch.testing.assert_close(y.float(), want, rtol=tol, atol=tol)
        assert all(p.grad.dtype == torch.float32 for p in ours.parameters())
