"""gnnc.nn.RGCNConv against torch_geometric's RGCNConv with the same
weights: outputs and gradients (x, weights, root, bias) on random graphs
(a relation without edges, repeated edges, isolated nodes; mean and sum;
bases; no root or bias) and on the heterogeneous datasets of
../shared/datasets (ACM, FB15k-237 with hidden width 64; skipped when
absent). PyG runs in float64 on the CPU, gnnc in f32 on its device (the
kernels on CUDA, emulated on the CPU without a GPU)."""
from pathlib import Path

import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")
pyg_nn = pytest.importorskip("torch_geometric.nn",
                             reason="torch_geometric is not installed")

from gnnc import segment  # noqa: E402
from gnnc.nn import RGCNConv  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture
def sdev(dev, monkeypatch):
    if dev.type == "cpu":
        import emulate_segment
        emulate_segment.install(monkeypatch)
    segment.clear_cache()
    saved = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = False  # exact f32 for the check
    yield dev
    torch.backends.cuda.matmul.allow_tf32 = saved


def random_graph(seed, n=60, e=400, r=5):
    g = torch.Generator().manual_seed(seed)
    src = torch.randint(0, n - 3, (e,), generator=g)  # the last 3 nodes send nothing
    dst = torch.randint(0, n - 2, (e,), generator=g)  # the last 2 receive nothing
    et = torch.randint(0, r - 1, (e,), generator=g)   # relation r-1 has no edges
    # Repeat some edges (PyG's mean counts each).
    src = torch.cat([src, src[:20]])
    dst = torch.cat([dst, dst[:20]])
    et = torch.cat([et, et[:20]])
    return torch.stack([src, dst]), et, n, r


def compare(dev, edge_index, edge_type, n, r, in_ch, out_ch, tol=2e-5, seed=0,
            **kw):
    torch.manual_seed(seed)
    ref = pyg_nn.RGCNConv(in_ch, out_ch, r, **kw).double()
    ours = RGCNConv(in_ch, out_ch, r, **kw)
    ours.load_state_dict({k: v.float() for k, v in ref.state_dict().items()})
    ours = ours.to(dev)
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(n, in_ch, generator=g, dtype=torch.float64)
    dy = torch.randn(n, out_ch, generator=g, dtype=torch.float64)

    xr = x.clone().requires_grad_()
    yr = ref(xr, edge_index, edge_type)
    yr.backward(dy)

    xo = x.float().to(dev).requires_grad_()
    ei, et = edge_index.to(dev), edge_type.to(dev)
    yo = ours(xo, ei, et)
    yo.backward(dy.float().to(dev))

    def close(a, b, what):
        a, b = a.detach().double().cpu(), b.detach().double().cpu()
        scale = max(1.0, float(b.abs().max()))
        err = float((a - b).abs().max()) if a.numel() else 0.0
        assert err <= tol * scale, f"{what}: largest difference {err:.3g} (scale {scale:.3g})"

    close(yo, yr, "output")
    close(xo.grad, xr.grad, "x gradient")
    for name, p in ref.named_parameters():
        close(dict(ours.named_parameters())[name].grad, p.grad, f"{name} gradient")
    # A second call reuses the structures; an in-place change rebuilds them.
    s = ours.structure(ei, et, n, xo.device)
    ours(xo, ei, et)
    assert ours.structure(ei, et, n, xo.device) is s
    return ours, yo


@pytest.mark.parametrize("aggr", ["mean", "add"])
def test_random_graph_matches_pyg(sdev, aggr):
    ei, et, n, r = random_graph(1)
    compare(sdev, ei, et, n, r, 16, 8, aggr=aggr)


def test_odd_widths_no_root_no_bias(sdev):
    ei, et, n, r = random_graph(2)
    compare(sdev, ei, et, n, r, 13, 7, root_weight=False, bias=False)


def test_bases(sdev):
    ei, et, n, r = random_graph(3)
    compare(sdev, ei, et, n, r, 16, 16, num_bases=3)


def test_in_place_change_rebuilds(sdev):
    ei, et, n, r = random_graph(4)
    ours, _ = compare(sdev, ei, et, n, r, 8, 8)
    eid, etd = ei.to(sdev), et.to(sdev)
    x = torch.randn(n, 8, device=sdev)
    ours(x, eid, etd)
    first = ours.structure(eid, etd, n, x.device)
    etd[:5] = r - 1
    assert ours.structure(eid, etd, n, x.device) is not first


def test_no_edges(sdev):
    ei = torch.zeros(2, 0, dtype=torch.int64)
    et = torch.zeros(0, dtype=torch.int64)
    compare(sdev, ei, et, 10, 3, 8, 4)


def test_bad_inputs(sdev):
    conv = RGCNConv(8, 4, 3).to(sdev)
    x = torch.randn(10, 8, device=sdev)
    ei = torch.tensor([[0, 1], [2, 3]], device=sdev)
    with pytest.raises(ValueError, match="outside the layer's 3 relations"):
        conv(x, ei, torch.tensor([0, 3], device=sdev))
    with pytest.raises(ValueError, match="one relation per edge"):
        conv(x, ei, torch.tensor([0], device=sdev))
    with pytest.raises(ValueError, match="x has 7 features"):
        conv(torch.randn(10, 7, device=sdev), ei, torch.tensor([0, 1], device=sdev))
    with pytest.raises(NotImplementedError, match="num_blocks"):
        RGCNConv(8, 4, 3, num_blocks=2)


@pytest.mark.parametrize("name", ["hetero_acm_heco", "hetero_fb15k237"])
def test_datasets_match_pyg(sdev, monkeypatch, name):
    monkeypatch.syspath_prepend(str(EXAMPLES))
    import hetero_data
    data = hetero_data.load_hetero(name)
    if data is None:
        pytest.skip(f"{name}.npz not found (set GNNC_DATASETS or provide "
                    f"../shared/datasets)")
    ei = torch.from_numpy(data["edge_index"])
    et = torch.from_numpy(data["edge_type"])
    compare(sdev, ei, et, data["num_nodes"], data["num_relations"], 64, 64, tol=1e-4)
