"""gnnc.SnapshotGroup and gnnc.ops.snapshot_spmm against per-snapshot torch
references in float64: forward and gradients on directed snapshots (a hub
row, rows without edges, edges kept and churned between snapshots), every
reduce and scaling, f32/f16/bf16, both layouts, argument errors. Runs on
CUDA (the real kernels) and, without a GPU, on the CPU with emulated
launches (the Python side, with the op descriptions checked by the
library)."""
import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")

import torch_ref  # noqa: E402
import gnnc  # noqa: E402
from gnnc import GnncError, SnapshotGroup, ops  # noqa: E402

TOL = {torch.float32: (2e-4, 2e-4), torch.float16: (2e-2, 2e-2),
       torch.bfloat16: (8e-2, 8e-2)}


def snapshot_edges(n=50, snapshots=3, edges=300, keep=0.75, extra=40, seed=0):
    """One [2, E_s] edge_index (sources, destinations) per snapshot, no edge
    repeated inside one: a base set each snapshot keeps an edge of with
    probability `keep`, plus `extra` edges of its own. Node 1 receives ~30%
    of the edges; the last fifth of the nodes receive none."""
    rng = np.random.default_rng(seed)

    def draw(count):
        dst = np.where(rng.random(count) < 0.3, 1, rng.integers(0, n - n // 5, count))
        return rng.integers(0, n, count), dst

    base_src, base_dst = draw(edges)
    out = []
    for _ in range(snapshots):
        kept = rng.random(edges) < keep
        src_x, dst_x = draw(extra)
        src = np.concatenate([base_src[kept], src_x])
        dst = np.concatenate([base_dst[kept], dst_x])
        key = np.unique(dst * n + src)
        out.append(torch.from_numpy(np.stack([key % n, key // n])))
    return out


def make_group(dev, **kw):
    eis = snapshot_edges(**kw)
    n = kw.get("n", 50)
    return SnapshotGroup.from_edge_index([ei.to(dev) for ei in eis], n, device=dev), eis


def reference(eis, n, x, reduce, norm):
    """Per snapshot: torch_ref.spmm over its edges (rows = destinations) of
    its features x[:, s]; x [N, S, F] in float64."""
    norm = "none" if norm is None else norm
    ys = []
    for s, ei in enumerate(eis):
        src, dst = ei[0].to(x.device), ei[1].to(x.device)
        ys.append(torch_ref.spmm(dst, src, n, x[:, s], None, reduce, norm))
    return torch.stack(ys, dim=1)


def sparse_reference(eis, n, x, reduce, norm):
    """Per snapshot: torch.sparse.mm of its adjacency with the row and
    column factors folded into the values, in float64."""
    ys = []
    for s, ei in enumerate(eis):
        src, dst = ei[0].long(), ei[1].long()
        deg = torch.bincount(dst, minlength=n).double()
        deg_in = torch.bincount(src, minlength=n).double()
        inv = torch.where(deg > 0, 1 / deg.clamp_min(1), torch.zeros_like(deg))
        row = torch.ones(n, dtype=torch.float64)
        if reduce == "mean":
            row = row * inv
        if norm in ("left", "both"):
            row = row * inv.sqrt()
        col = torch.ones(n, dtype=torch.float64)
        if norm in ("right", "both"):
            col = torch.where(deg_in > 0, deg_in.clamp_min(1).rsqrt(),
                              torch.zeros_like(deg_in))
        a = torch.sparse_coo_tensor(torch.stack([dst, src]), row[dst] * col[src],
                                    (n, n), check_invariants=True).to(x.device)
        ys.append(torch.sparse.mm(a, x[:, s]))
    return torch.stack(ys, dim=1)


def close(got, want, dtype, scale=None):
    rtol, atol = TOL[dtype]
    want = want.detach().double()
    s = scale if scale is not None else max(1.0, float(want.abs().max()))
    torch.testing.assert_close(got.double(), want, rtol=rtol, atol=atol * s)


def leaf(shape, dev, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.rand(shape, generator=g, dtype=torch.float64) * 2 - 1
    return t.to(dtype).to(dev).requires_grad_(True)


def forward_backward(group, eis, x, reduce, norm, dtype, ref=reference, **kw):
    """gnnc's y and dx (in dtype) and the reference's (float64, same x and
    dy)."""
    y = ops.snapshot_spmm(group, x, reduce=reduce, norm=norm, **kw)
    dy = torch.rand(y.shape, generator=torch.Generator().manual_seed(7),
                    dtype=torch.float64) * 2 - 1
    xr = x.detach().double().requires_grad_(True)
    yr = ref(eis, group.num_nodes, xr, reduce, norm)
    y.backward(dy.to(dtype).to(x.device))
    yr.backward(dy.to(yr.device))
    return y, yr, x.grad, xr.grad


# --- the group ------------------------------------------------------------------

def test_group_counts_match_sets(dev):
    group, eis = make_group(dev, snapshots=4)
    sets = [set(map(tuple, ei.t().tolist())) for ei in eis]
    common = set.intersection(*sets)
    total = sum(len(s) for s in sets)
    assert group.num_snapshots == len(group) == 4 and group.num_nodes == 50
    assert group.overlap_edges == len(common)
    assert group.snapshot_edges == total
    assert group.stored_edges == total - 3 * len(common)
    assert group.overlap_rate == pytest.approx(4 * len(common) / total)
    assert 0.3 < group.overlap_rate < 1
    assert group.device == dev
    assert "overlap_rate=" in repr(group)
    # From the same snapshots as CSR: the same group.
    rps, cis = [], []
    for ei in eis:
        rp, ci, _ = gnnc._lib.coo_to_csr(50, ei[0].numpy(), ei[1].numpy())
        rps.append(rp)
        cis.append(ci)
    again = SnapshotGroup.from_csr(rps, cis, device=dev)
    assert again.num_nodes == 50
    assert (again.overlap_edges, again.stored_edges) == (group.overlap_edges,
                                                         group.stored_edges)
    x = torch.rand(50, 4, 3, device=dev)
    torch.testing.assert_close(ops.snapshot_spmm(again, x, norm="both"),
                               ops.snapshot_spmm(group, x, norm="both"))


def test_identical_and_single_snapshots(dev):
    (ei,) = snapshot_edges(snapshots=1)
    same = SnapshotGroup.from_edge_index([ei, ei, ei], 50, device=dev)
    assert same.overlap_rate == 1.0 and same.stored_edges == ei.shape[1]
    one = SnapshotGroup.from_edge_index([ei], 50, device=dev)
    assert one.overlap_rate == 1.0
    x = leaf((50, 1, 8), dev, torch.float32, 3)
    y, yr, dx, dxr = forward_backward(one, [ei], x, "mean", "left", torch.float32)
    close(y, yr, torch.float32)
    close(dx, dxr, torch.float32)


# --- forward and gradients ------------------------------------------------------------

@pytest.mark.parametrize("reduce", ["sum", "mean"])
@pytest.mark.parametrize("norm", [None, "left", "right", "both"])
@pytest.mark.parametrize("width", [1, 5, 32])
def test_snapshot_spmm_f32(dev, reduce, norm, width):
    group, eis = make_group(dev)
    x = leaf((group.num_nodes, 3, width), dev, torch.float32, width)
    y, yr, dx, dxr = forward_backward(group, eis, x, reduce, norm, torch.float32)
    close(y, yr, torch.float32)
    close(dx, dxr, torch.float32)


@pytest.mark.parametrize("reduce,norm", [("mean", "both"), ("sum", "right"),
                                         ("mean", "left")])
def test_snapshot_spmm_against_sparse_mm(dev, reduce, norm):
    """An independent reference: each snapshot's adjacency, factors folded
    in, through torch.sparse.mm (and its autograd)."""
    group, eis = make_group(dev, snapshots=5, seed=4)
    x = leaf((group.num_nodes, 5, 6), dev, torch.float32, 11)
    y, yr, dx, dxr = forward_backward(group, eis, x, reduce, norm, torch.float32,
                                      ref=sparse_reference)
    close(y, yr, torch.float32)
    close(dx, dxr, torch.float32)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
@pytest.mark.parametrize("reduce,norm", [("sum", "both"), ("mean", None)])
def test_snapshot_spmm_half(dev, dtype, reduce, norm):
    group, eis = make_group(dev, snapshots=4, seed=2)
    x = leaf((group.num_nodes, 4, 16), dev, dtype, 5)
    y, yr, dx, dxr = forward_backward(group, eis, x, reduce, norm, dtype)
    assert y.dtype == dtype and dx.dtype == dtype
    close(y, yr, dtype)
    close(dx, dxr, dtype)


def test_snapshot_spmm_is_spmm_per_snapshot(dev):
    """The same numbers as gnnc.spmm over each snapshot's own graph."""
    group, eis = make_group(dev, snapshots=3, seed=6)
    x = torch.rand(group.num_nodes, 3, 8, device=dev)
    y = ops.snapshot_spmm(group, x, reduce="mean", norm="both")
    for s, ei in enumerate(eis):
        g = gnnc.Graph.from_edge_index(ei.to(dev), group.num_nodes, device=dev)
        close(y[:, s], ops.spmm(g, x[:, s].contiguous(), reduce="mean", norm="both"),
              torch.float32)


def test_snf_layout(dev):
    group, eis = make_group(dev, snapshots=3, seed=8)
    xs = leaf((3, group.num_nodes, 4), dev, torch.float32, 9)
    y = ops.snapshot_spmm(group, xs, norm="both", layout="snf")
    assert y.shape == (3, group.num_nodes, 4)
    y.backward(torch.ones_like(y))
    xn = xs.detach().transpose(0, 1).contiguous().requires_grad_(True)
    yn = ops.snapshot_spmm(group, xn, norm="both")
    yn.backward(torch.ones_like(yn))
    torch.testing.assert_close(y, yn.transpose(0, 1))
    torch.testing.assert_close(xs.grad, xn.grad.transpose(0, 1))


def test_no_features_and_no_grad(dev):
    group, _ = make_group(dev)
    empty = torch.rand(group.num_nodes, 3, 0, device=dev)
    assert ops.snapshot_spmm(group, empty).shape == (group.num_nodes, 3, 0)
    x = torch.rand(group.num_nodes, 3, 2, device=dev)
    with torch.no_grad():
        assert not ops.snapshot_spmm(group, x).requires_grad
    # A non-contiguous x just works.
    xt = torch.rand(group.num_nodes, 2, 3, device=dev).transpose(1, 2)
    torch.testing.assert_close(ops.snapshot_spmm(group, xt),
                               ops.snapshot_spmm(group, xt.contiguous()))


# --- torch.compile, opcheck -----------------------------------------------------------

def test_opcheck(dev):
    group, _ = make_group(dev)
    x = torch.rand(group.num_nodes, 3, 4, device=dev, requires_grad=True)
    torch.library.opcheck(
        torch.ops.gnnc.snapshot_spmm.default, (group.id, x, "mean", "both"),
        test_utils=["test_schema", "test_faketensor", "test_autograd_registration"])


def test_torch_compile(dev):
    group, _ = make_group(dev, snapshots=2)
    lin = torch.nn.Linear(6, 4).to(dev)

    def model(x):
        return ops.snapshot_spmm(group, lin(x), norm="both").relu().sum()

    backend = "inductor" if dev.type == "cuda" else "aot_eager"
    compiled = torch.compile(model, backend=backend, fullgraph=False)
    x = torch.rand(group.num_nodes, 2, 6, device=dev, requires_grad=True)
    want = model(x)
    want.backward()
    gx = x.grad.clone()
    x.grad = None
    got = compiled(x)
    got.backward()
    close(got, want.detach(), torch.float32)
    close(x.grad, gx, torch.float32)


# --- errors ---------------------------------------------------------------------------

def test_argument_errors(dev):
    group, eis = make_group(dev)
    x = torch.rand(group.num_nodes, 3, 4, device=dev)
    with pytest.raises(ValueError, match=r"x must have shape \[50, 3, \*\]"):
        ops.snapshot_spmm(group, x[:, :2])
    with pytest.raises(ValueError, match=r"x must have shape \[50, 3, \*\]"):
        ops.snapshot_spmm(group, x[:10])
    with pytest.raises(ValueError, match=r"x must have shape \[3, 50, \*\]"):
        ops.snapshot_spmm(group, x, layout="snf")
    with pytest.raises(TypeError, match="float64"):
        ops.snapshot_spmm(group, x.double())
    with pytest.raises(ValueError, match="reduce must be 'sum' or 'mean'"):
        ops.snapshot_spmm(group, x, reduce="max")
    with pytest.raises(ValueError, match="norm must be"):
        ops.snapshot_spmm(group, x, norm="gcn")
    with pytest.raises(ValueError, match="layout must be"):
        ops.snapshot_spmm(group, x, layout="nfs")
    g = gnnc.Graph.from_edge_index(eis[0].to(dev), 50, device=dev)
    with pytest.raises(TypeError, match="expected a gnnc.SnapshotGroup"):
        ops.snapshot_spmm(g, x)


def test_group_errors(dev):
    eis = snapshot_edges(snapshots=3)
    repeated = torch.cat([eis[1], eis[1][:, :1]], dim=1)
    with pytest.raises(GnncError, match="snapshot 1: row .* is not sorted and unique"):
        SnapshotGroup.from_edge_index([eis[0], repeated, eis[2]], 50, device=dev)
    with pytest.raises(GnncError, match="a group holds 1 to 64 snapshots"):
        SnapshotGroup.from_edge_index([eis[0]] * 65, 50, device=dev)
    with pytest.raises(GnncError, match="num_snapshots is 0"):
        SnapshotGroup.from_edge_index([], 50, device=dev)
    with pytest.raises(GnncError, match="outside"):
        SnapshotGroup.from_edge_index(eis, 10, device=dev)
    with pytest.raises(ValueError, match="2 row_ptr arrays but 1 col_idx"):
        SnapshotGroup.from_csr([np.zeros(3, np.int64)] * 2, [np.zeros(0, np.int32)],
                               device=dev)


def test_choose_snapshot_group(dev):
    eis = snapshot_edges(snapshots=6)
    if dev.type == "cpu":
        # The sizes are timed on a GPU: without one, a clear refusal.
        with pytest.raises(RuntimeError, match="times the group sizes on a GPU"):
            gnnc.choose_snapshot_group(eis, 16, num_nodes=50, device=dev)
        return
    chosen = gnnc.choose_snapshot_group([ei.to(dev) for ei in eis], 16, num_nodes=50)
    # A series of 6: groups of 2 and 4 (8 exceeds it).
    assert [s["snapshots"] for s in chosen.sizes] == [2, 4]
    assert chosen.snapshots in (2, 4)
    assert chosen.groups == -(-6 // chosen.snapshots)
    assert chosen.cached_groups == chosen.groups
    assert chosen.host_to_device_gbps > 0
    for s in chosen.sizes:
        assert s["aggregate_ms"] > 0 and s["fits"]
        assert s["feature_bytes"] == 50 * s["snapshots"] * 16 * 4
        assert 0 < s["overlap_rate"] <= 1
    with pytest.raises(GnncError, match="width is 0"):
        gnnc.choose_snapshot_group([ei.to(dev) for ei in eis], 0, num_nodes=50)
