"""gnnc.distributed on the CPU: processes started with torch.multiprocessing
in gloo process groups, kernels emulated by the torch reference. Three
processes are started once and run every check, in a group of all three
and in a subgroup of two; the tests read their results.

Checked: the row partition (every edge assigned once, the halo exactly
the referenced remote rows, the send lists what each peer references,
the edge cut and boundary rows against a brute-force count), the halo
exchange forward and backward in f64 against a single-process reference
(and f32/f16/bf16 rows moved bit for bit), the byte counters against the
boundary formula, two-layer GCN and GIN models, forward and gradients,
against gnnc.nn's layers on the whole graph with the same weights, and
partition-independent dropout: global_dropout keeps exactly the rank's
slice of the mask one process draws, and two-layer models with dropout in
training mode give, output and gradients, what the same model with the
same generator seed gives on a one-process partition (a group of one);
average_buffers (the ranks' mean of floating buffers, rank 0's counters).
"""
import json
import os
import tempfile
import traceback
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="torch is not installed")
dist = pytest.importorskip("torch.distributed", reason="torch.distributed is not available")
if not dist.is_available() or not dist.is_gloo_available():
    pytest.skip("torch.distributed with the gloo backend is not available",
                allow_module_level=True)

from conftest import _lib_reason  # noqa: E402

N = 61
SOLO = None  # in a worker: a process group of that worker alone


class _Patch:
    def setattr(self, obj, name, value):
        setattr(obj, name, value)


def random_edges(seed=0, n=N, e=420, symmetric=False):
    """Sources and destinations with duplicates, self loops, a hub row, an
    empty row and a row referenced by everyone."""
    rng = np.random.default_rng(seed)
    dst = np.where(rng.random(e) < 0.15, 3, rng.integers(0, n, e))
    src = np.where(rng.random(e) < 0.1, n - 2, rng.integers(0, n, e))
    src[:5] = dst[:5]
    keep = dst != 7  # row 7 aggregates nothing
    ei = np.stack([src[keep], dst[keep]])
    if symmetric:
        ei = np.unique(np.concatenate([ei, ei[::-1]], axis=1), axis=1)
    return ei


def order_for(seed):
    return np.random.default_rng(100 + seed).permutation(N)


# --- the checks, run on every rank --------------------------------------------

def _build(ei, group, order=None):
    from gnnc import distributed as gd
    return gd.PartitionedGraph.from_edge_index(torch.from_numpy(ei), N, order=order,
                                               group=group, device="cpu")


def check_partition(rank, world, group):
    from gnnc import distributed as gd
    for seed, order in [(0, None), (1, order_for(1))]:
        ei = random_edges(seed)
        pg = _build(ei, group, order)
        src, dst = ei
        pos = np.arange(N) if order is None else np.argsort(order)
        b = gd.partition_rows(np.concatenate([[0], np.cumsum(np.bincount(dst, minlength=N))]),
                              world, order)
        assert pg.boundaries.tolist() == b.tolist()
        owner = np.searchsorted(b, pos, side="right") - 1
        # Costs (edges + rows) as even as contiguous blocks allow.
        cost = np.bincount(owner[dst], minlength=world) + np.bincount(owner, minlength=world)
        assert cost.max() <= cost.sum() / world + np.bincount(dst, minlength=N).max() + 1
        nodes = np.flatnonzero(owner == rank)[np.argsort(pos[owner == rank])]
        assert pg.nodes.tolist() == nodes.tolist()
        # The local edges, back in global ids.
        ids = np.concatenate([pg.nodes.numpy(), pg.halo_nodes.numpy()])
        rows = np.repeat(pg.nodes.numpy(), np.diff(pg.row_ptr.numpy()))
        cols = ids[pg.col_idx.numpy()]
        # The halo: exactly the remote rows the local edges reference, by
        # owner then position.
        mine = np.isin(dst, nodes)
        remote = np.unique(src[mine][owner[src[mine]] != rank])
        remote = remote[np.argsort(pos[remote], kind="stable")]
        assert pg.halo_nodes.tolist() == remote.tolist()
        assert pg.recv_counts == np.bincount(owner[remote], minlength=world).tolist()
        everyone = [None] * world
        dist.all_gather_object(everyone, dict(
            rows=rows.tolist(), cols=cols.tolist(), halo=pg.halo_nodes.tolist()),
            group=group)
        # Every edge assigned once.
        got = sorted(zip(sum((e["cols"] for e in everyone), []),
                         sum((e["rows"] for e in everyone), [])))
        assert got == sorted(zip(src.tolist(), dst.tolist()))
        # What this rank sends peer q: q's halo rows that it owns, in q's order.
        start = 0
        for q in range(world):
            theirs = [v for v in everyone[q]["halo"] if owner[v] == rank]
            assert pg.nodes[pg.send_idx[start:start + pg.send_counts[q]]].tolist() == theirs
            start += pg.send_counts[q]
        # The edge cut and boundary rows, brute force.
        assert pg.edge_cut == int((owner[src] != owner[dst]).sum())
        pairs = {(owner[d], s) for s, d in zip(src, dst) if owner[s] != owner[d]}
        assert pg.boundary_rows == np.bincount([owner[s] for _, s in pairs],
                                               minlength=world).tolist()
        assert sum(pg.send_counts) == pg.boundary_rows[rank]


def check_exchange_f64(rank, world, group):
    for seed, order in [(2, None), (3, order_for(3))]:
        pg = _build(random_edges(seed), group, order)
        x_full = torch.randn(N, 5, dtype=torch.float64,
                             generator=torch.Generator().manual_seed(seed))
        x = pg.local(x_full).requires_grad_(True)
        out = pg.exchange(x, "t")
        ids = torch.cat([pg.nodes, pg.halo_nodes])
        assert torch.equal(out.detach(), x_full[ids])
        dy = torch.randn(out.shape, dtype=torch.float64,
                         generator=torch.Generator().manual_seed(10 + rank))
        out.backward(dy)
        # Reference: every rank's output gradient added into the rows it
        # came from.
        everyone = [None] * world
        dist.all_gather_object(everyone, (ids, dy), group=group)
        want = torch.zeros_like(x_full)
        for i, g in everyone:
            want.index_add_(0, i, g)
        torch.testing.assert_close(x.grad, want[pg.nodes], rtol=1e-12, atol=1e-12)
        # The adjoint identity, over all ranks: <E x, dy> = <x, E^T dy>.
        lhs = torch.tensor([float((out.detach() * dy).sum()),
                            float((x.detach() * x.grad).sum())], dtype=torch.float64)
        dist.all_reduce(lhs, group=group)
        assert abs(lhs[0] - lhs[1]) <= 1e-9 * abs(lhs[0])


def check_exchange_dtypes(rank, world, group):
    pg = _build(random_edges(4), group)
    ids = torch.cat([pg.nodes, pg.halo_nodes])
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for shape in ((N, 3), (N,), (N, 2, 5)):
            x_full = torch.randn(shape, generator=torch.Generator().manual_seed(5)).to(dtype)
            out = pg.exchange(pg.local(x_full), "t")
            assert out.dtype == dtype and torch.equal(out, x_full[ids])
    # A gradient of the same dtype comes back.
    x = pg.local(torch.ones(N, 3, dtype=torch.bfloat16)).requires_grad_(True)
    pg.exchange(x).float().sum().backward()
    assert x.grad.dtype == torch.bfloat16


def check_byte_counters(rank, world, group):
    ei = random_edges(5)
    pg = _build(ei, group, order_for(5))
    for width, dtype in ((7, torch.float32), (16, torch.float16)):
        pg.stats.reset()
        x = pg.local(torch.randn(N, width)).to(dtype).requires_grad_(True)
        pg.exchange(x, "layer").float().sum().backward()
        s = pg.stats.summary()["layer"]
        size = torch.empty(0, dtype=dtype).element_size()
        assert s["forward_calls"] == 1 and s["backward_calls"] == 1
        assert s["forward_bytes"] == pg.boundary_bytes(width, dtype)
        assert s["backward_bytes"] == pg.n_halo * width * size
        total = torch.tensor([s["forward_bytes"], s["backward_bytes"]])
        dist.all_reduce(total, group=group)
        # Summed over ranks, both directions move the boundary once.
        src, dst = ei
        owner = np.searchsorted(pg.boundaries, np.argsort(order_for(5)), side="right") - 1
        distinct = len({(owner[d], s) for s, d in zip(src, dst) if owner[s] != owner[d]})
        assert total.tolist() == [distinct * width * size] * 2


def _compare_models(group, make_ref, make_dist, symmetric, order, rtol=1e-5):
    """A two-layer model over gnnc.nn on the whole graph against its
    distributed twin with the same weights: rows, input and parameter
    gradients."""
    from gnnc import distributed as gd
    ei = random_edges(6, symmetric=symmetric)
    pg = _build(ei, group, order)
    torch.manual_seed(0)
    ref = make_ref()
    ours = make_dist()
    ours.load_state_dict(ref.state_dict())
    x_full = torch.randn(N, 8, generator=torch.Generator().manual_seed(7))
    dy_full = torch.randn(N, 6, generator=torch.Generator().manual_seed(8))
    xr = x_full.clone().requires_grad_(True)
    eit = torch.from_numpy(ei)  # alive while the backward runs: it keys the graph
    yr = ref[1](torch.relu(ref[0](xr, eit)), eit)
    (yr * dy_full).sum().backward()
    x = pg.local(x_full).requires_grad_(True)
    y = ours[1](torch.relu(ours[0](x, pg, "c1")), pg, "c2")
    # Each rank's share of the loss; the parameters' gradients summed.
    (y * pg.local(dy_full)).sum().backward()
    gd.all_reduce_gradients(ours, group)
    torch.testing.assert_close(y, pg.local(yr.detach()), rtol=rtol, atol=rtol)
    torch.testing.assert_close(x.grad, pg.local(xr.grad), rtol=rtol, atol=rtol)
    for (n1, p1), (n2, p2) in zip(ours.named_parameters(), ref.named_parameters()):
        assert n1 == n2
        torch.testing.assert_close(p1.grad, p2.grad, rtol=rtol, atol=rtol, msg=n1)


def check_gcn(rank, world, group):
    import gnnc.nn as gnn
    from gnnc import distributed as gd
    for symmetric, order in [(False, None), (True, order_for(6))]:
        # 8 -> 4 transforms before the exchange, 4 -> 6 after it.
        _compare_models(
            group,
            lambda: torch.nn.ModuleList([gnn.GCNConv(8, 4), gnn.GCNConv(4, 6)]),
            lambda: torch.nn.ModuleList([gd.DistGCNConv(8, 4), gd.DistGCNConv(4, 6)]),
            symmetric, order)


def check_gin(rank, world, group):
    import gnnc.nn as gnn
    from gnnc import distributed as gd

    def mlp(i, o):
        return torch.nn.Sequential(torch.nn.Linear(i, 5), torch.nn.ReLU(),
                                   torch.nn.Linear(5, o))
    for train_eps, order in [(False, None), (True, order_for(7))]:
        _compare_models(
            group,
            lambda: torch.nn.ModuleList([gnn.GINConv(mlp(8, 5), eps=0.25, train_eps=train_eps),
                                         gnn.GINConv(mlp(5, 6), train_eps=train_eps)]),
            lambda: torch.nn.ModuleList([gd.DistGINConv(mlp(8, 5), eps=0.25,
                                                        train_eps=train_eps),
                                         gd.DistGINConv(mlp(5, 6), train_eps=train_eps)]),
            False, order)


def check_global_dropout(rank, world, group):
    from gnnc import distributed as gd
    pg = _build(random_edges(9), group, order_for(9))
    x_full = torch.randn(N, 4, generator=torch.Generator().manual_seed(9))
    x = pg.local(x_full)
    for p in (0.5, 0.2):
        ours, theirs = torch.Generator().manual_seed(3), torch.Generator().manual_seed(3)
        for _ in range(2):  # two draws in a row: the generators advance alike
            got = gd.global_dropout(x, p, True, pg, ours)
            # One process: the mask of all N rows; this rank's slice of it.
            keep = (torch.rand(N, 4, generator=theirs) >= p).float()
            want = x_full * (keep * (1.0 / (1.0 - p)))
            assert torch.equal(got, pg.local(want))
            assert 0 < int((got == 0).sum()) < got.numel() or pg.n_local < 3
    # Identity, drawing nothing: p == 0, eval mode.
    g = torch.Generator().manual_seed(4)
    state = g.get_state()
    assert gd.global_dropout(x, 0.0, True, pg, g) is x
    assert gd.global_dropout(x, 0.5, False, pg, g) is x
    assert torch.equal(g.get_state(), state)
    assert torch.equal(gd.global_dropout(x, 1.0, True, pg, g), torch.zeros_like(x))


class _DropoutModel(torch.nn.Module):
    """Two layers with dropout before each, as the examples' DistNodeModel."""

    def __init__(self, kind, seed):
        super().__init__()
        from gnnc import distributed as gd
        self.drop = gd.GlobalDropout(0.5, seed)
        if kind == "gcn":
            self.c1, self.c2 = gd.DistGCNConv(8, 5), gd.DistGCNConv(5, 6)
        else:
            def mlp(i, o):
                return torch.nn.Sequential(torch.nn.Linear(i, 5), torch.nn.ReLU(),
                                           torch.nn.Linear(5, o))
            self.c1, self.c2 = gd.DistGINConv(mlp(8, 5)), gd.DistGINConv(mlp(5, 6))

    def forward(self, x, pg):
        x = torch.relu(self.c1(self.drop(x, pg), pg, "c1"))
        return self.c2(self.drop(x, pg), pg, "c2")


def check_dropout_model(rank, world, group):
    from gnnc import distributed as gd
    ei = random_edges(10, symmetric=True)
    whole = _build(ei, SOLO)  # one process: every row, in global order
    assert whole.world_size == 1 and whole.nodes.tolist() == list(range(N))
    x_full = torch.randn(N, 8, generator=torch.Generator().manual_seed(11))
    dy_full = torch.randn(N, 6, generator=torch.Generator().manual_seed(12))
    for kind, order in [("gcn", None), ("gin", order_for(10))]:
        pg = _build(ei, group, order)
        torch.manual_seed(0)
        ref = _DropoutModel(kind, seed=5)
        ours = _DropoutModel(kind, seed=5)
        ours.load_state_dict(ref.state_dict())
        xr = x_full.clone().requires_grad_(True)
        yr = ref(xr, whole)
        (yr * dy_full).sum().backward()
        x = pg.local(x_full).requires_grad_(True)
        y = ours(x, pg)
        (y * pg.local(dy_full)).sum().backward()
        gd.all_reduce_gradients(ours, group)
        torch.testing.assert_close(y, pg.local(yr.detach()), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(x.grad, pg.local(xr.grad), rtol=1e-5, atol=1e-5)
        for (n1, p1), (n2, p2) in zip(ours.named_parameters(), ref.named_parameters()):
            torch.testing.assert_close(p1.grad, p2.grad, rtol=1e-5, atol=1e-5, msg=n1)
        # The dropout was at work: without it the output differs.
        with torch.no_grad():
            assert not torch.allclose(ref.eval()(x_full, whole), yr)


def check_average_buffers(rank, world, group):
    """Floating buffers become the ranks' mean, the others rank 0's."""
    from gnnc import distributed as gd
    m = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.BatchNorm1d(5),
                            torch.nn.BatchNorm1d(5).double())

    def fill(mod, r):
        with torch.no_grad():
            for i, b in enumerate(mod.buffers()):
                if b.is_floating_point():
                    b.copy_(torch.arange(b.numel(), dtype=b.dtype) * (r + 1) + i)
                else:
                    b.fill_(10 * r + i)
    fill(m, rank)
    params = [p.detach().clone() for p in m.parameters()]
    gd.average_buffers(m, group)
    others = []
    for r in range(world):
        o = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.BatchNorm1d(5),
                                torch.nn.BatchNorm1d(5).double())
        fill(o, r)
        others.append(list(o.buffers()))
    for i, b in enumerate(m.buffers()):
        if b.is_floating_point():
            want = sum(o[i] for o in others) / world
            torch.testing.assert_close(b, want.to(b.dtype), rtol=1e-6, atol=1e-6)
        else:
            assert int(b) == int(others[0][i]), (i, int(b))
    for p, q in zip(m.parameters(), params):  # parameters untouched
        assert torch.equal(p, q)


CHECKS = [check_partition, check_exchange_f64, check_exchange_dtypes, check_byte_counters,
          check_gcn, check_gin, check_global_dropout, check_dropout_model,
          check_average_buffers]


WORLDS = (3, 2)


def _worker(rank, size, init_file, out_dir):
    """Runs every check in a group of all `size` processes, then in a
    group of the first two (a subgroup: the checks pass it everywhere)."""
    import emulate
    emulate.install(_Patch())
    dist.init_process_group("gloo", init_method=f"file://{init_file}", rank=rank,
                            world_size=size, timeout=timedelta(seconds=60))
    global SOLO
    solos = [dist.new_group([r]) for r in range(size)]  # every rank creates each
    SOLO = solos[rank]
    results = {}
    for world in WORLDS:
        group = dist.new_group(list(range(world)))  # every rank takes part
        if rank < world:
            for check in CHECKS:
                try:
                    check(rank, world, group)
                    results[f"{world}-{check.__name__}"] = "ok"
                except Exception:
                    results[f"{world}-{check.__name__}"] = traceback.format_exc()
                dist.barrier(group=group)
        dist.barrier()
    dist.destroy_process_group()
    (Path(out_dir) / f"{rank}.json").write_text(json.dumps(results))


@pytest.fixture(scope="module")
def group_results():
    why = _lib_reason()
    if why:
        pytest.skip(why)
    import torch.multiprocessing as mp
    size = max(WORLDS)
    with tempfile.TemporaryDirectory() as d:
        init_file = os.path.join(d, "init")
        mp.spawn(_worker, args=(size, init_file, d), nprocs=size, join=True)
        return [json.loads((Path(d) / f"{r}.json").read_text()) for r in range(size)]


@pytest.mark.parametrize("world", WORLDS)
@pytest.mark.parametrize("name", [c.__name__ for c in CHECKS])
def test_distributed(group_results, world, name):
    for rank in range(world):
        r = group_results[rank][f"{world}-{name}"]
        assert r == "ok", f"rank {rank} of {world}:\n{r}"


# --- one process: no group, nothing exchanged --------------------------------

def test_single_process(dev):
    import gnnc.nn as gnn
    from gnnc import distributed as gd
    ei = torch.from_numpy(random_edges(8)).to(dev)
    pg = gd.PartitionedGraph.from_edge_index(ei, N, device=dev)
    assert pg.world_size == 1 and pg.n_local == N and pg.n_halo == 0
    assert pg.edge_cut == 0 and pg.boundary_bytes(16) == 0
    x = torch.randn(N, 8, device=dev)
    assert pg.exchange(x) is x
    torch.manual_seed(0)
    ref = gnn.GCNConv(8, 4).to(dev)
    ours = gd.DistGCNConv(8, 4).to(dev)
    ours.load_state_dict(ref.state_dict())
    torch.testing.assert_close(ours(x, pg), ref(x, ei)[pg.nodes], rtol=1e-5, atol=1e-5)


def test_partition_rows():
    from gnnc import distributed as gd
    row_ptr = np.array([0, 10, 10, 11, 12, 40, 41, 42, 43, 44])  # 9 rows, a hub
    b = gd.partition_rows(row_ptr, 3)
    assert b[0] == 0 and b[-1] == 9 and np.all(np.diff(b) >= 0)
    cost = np.diff(row_ptr) + 1
    blocks = [cost[b[p]:b[p + 1]].sum() for p in range(3)]
    assert max(blocks) <= cost.sum() / 3 + cost.max()
    assert gd.partition_rows(row_ptr, 1).tolist() == [0, 9]
    # More blocks than rows: some are empty.
    b = gd.partition_rows(np.array([0, 1, 2]), 4)
    assert b[0] == 0 and b[-1] == 2 and len(b) == 5 and np.all(np.diff(b) >= 0)
    # A renumbering: the blocks are cut in its order.
    order = np.arange(9)[::-1].copy()
    b = gd.partition_rows(row_ptr, 3, order)
    assert max(cost[order][b[p]:b[p + 1]].sum() for p in range(3)) <= \
        cost.sum() / 3 + cost.max()
    with pytest.raises(ValueError, match="permutation"):
        gd.partition_rows(row_ptr, 3, np.zeros(9, dtype=np.int64))
