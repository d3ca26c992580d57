"""Full-graph GCN and GIN training with the graph's rows partitioned over
the processes of a torchrun group (gnnc.distributed): each rank holds a
contiguous block of rows (balanced by edges + rows), their CSR slice and
their features; every layer transforms, exchanges the halo rows its edges
reference (one all_to_all) and aggregates with gnnc's spmm over its
local graph; the parameters' gradients are summed over the ranks.

  torchrun --nproc_per_node=2 examples/train_fullgraph_dist.py --parts rmat --scales 22
  torchrun --nproc_per_node=2 examples/train_fullgraph_dist.py --parts planetoid --seeds 10

rmat: generated R-MAT graphs (gnn_common.rmat_edge_index, undirected and
without duplicate edges unless --no-symmetrize), random features and
labels, every node trained: the median epoch time (forward + backward +
gradient all_reduce + Adam step, CUDA events, after warm-up) split into
the halo exchanges (forward and backward, CUDA events around each, which
include waiting for the slower rank), the gradient all_reduce and the
rest (aggregation and dense compute); bytes each rank sent per layer
against the boundary bytes the partition implies (distinct referenced
rows x width x element size), the edge cut and peak memory.

planetoid: cora and citeseer (the stored split), test accuracy at the best
validation accuracy, mean over seeds, beside two one-process references
with the same hyperparameters and seeds (each rank runs its share of the
seeds on a group of itself, at the same time; rank 0 gathers them):
- "single": the SAME DistNodeModel on a one-process partition (a group of
  rank 0 alone). Its dropout masks are drawn for all rows from a generator
  seeded with the run's seed (gnnc.distributed.GlobalDropout), so they do
  not depend on the partition: the two runs differ only by the order of
  floating-point sums, and acc_delta_points measures what distributing
  the rows changes.
- "single_node_model": examples/train_node.py's NodeModel (F.dropout from
  torch's generator): other dropout draws, so acc_delta_points_node_model
  also holds the seeds' noise.
Per-seed accuracies are kept, and paired_difference gives the mean,
spread and standard error of distributed - single over the seeds.

A plain `python examples/train_fullgraph_dist.py` runs one process (no
exchange). GNNC_EMULATE=1 runs on the CPU (gloo, kernels emulated) to
check the script. Rank 0 prints and writes --out.
"""
from __future__ import annotations

import argparse
import math
import statistics
import time

import gnn_common as C
import torch
import torch.distributed as dist
import torch.nn.functional as F

from gnnc import distributed as gd
from gnnc.graph import graph_cache


def setup():
    """(rank, world size, device): the process group of torchrun (or of one
    process), NCCL on this rank's GPU; gloo on the CPU when emulating."""
    dev = C.device()
    return gd.init_process_group(dev.type)


class DistNodeModel(torch.nn.Module):
    """gnn_common.NodeModel's GCN and GIN over a PartitionedGraph: the same
    layers, parameters and initialisation (a NodeModel's state_dict loads).
    Dropout is gnnc.distributed.GlobalDropout seeded with `seed`: its masks
    are drawn for all rows, the same whatever the partition, so the model
    on any number of ranks draws the masks it draws on one."""

    def __init__(self, model, in_ch, hidden, out_ch, dropout=0.5, seed=0):
        super().__init__()
        self.model = model
        self.drop = gd.GlobalDropout(dropout, seed)
        if model == "gcn":
            self.c1 = gd.DistGCNConv(in_ch, hidden)
            self.c2 = gd.DistGCNConv(hidden, out_ch)
        elif model == "gin":
            def mlp(i, o):
                return torch.nn.Sequential(torch.nn.Linear(i, hidden), torch.nn.ReLU(),
                                           torch.nn.Linear(hidden, o))
            self.c1 = gd.DistGINConv(mlp(in_ch, hidden))
            self.c2 = gd.DistGINConv(mlp(hidden, out_ch))
        else:
            raise ValueError(f"unknown model {model!r}")

    def forward(self, x, pg):
        x = self.drop(x, pg)
        x = F.relu(self.c1(x, pg, "conv1"))
        x = self.drop(x, pg)
        return self.c2(x, pg, "conv2")


def all_max(value: float, dev, group=None) -> float:
    if dist.get_world_size(group) == 1:
        return value
    t = torch.tensor([value], dtype=torch.float64, device=dev)
    dist.all_reduce(t, op=dist.ReduceOp.MAX, group=group)
    return float(t)


def all_sum(values, dev, group=None):
    t = torch.tensor(values, dtype=torch.float64, device=dev)
    if dist.get_world_size(group) > 1:
        dist.all_reduce(t, group=group)
    return t.tolist()


def gather(obj):
    out = [None] * dist.get_world_size()
    dist.all_gather_object(out, obj)
    return out


def broadcast_edges(edge_index, dev):
    """Rank 0's [2, E] edge_index on every rank."""
    if dist.get_world_size() == 1:
        return edge_index
    size = torch.tensor([edge_index.shape[1] if dist.get_rank() == 0 else 0], device=dev)
    dist.broadcast(size, 0)
    if dist.get_rank() != 0:
        edge_index = torch.empty((2, int(size)), dtype=torch.int64, device=dev)
    dist.broadcast(edge_index, 0)
    return edge_index


def partition(edge_index, n, order, dev, group=None):
    """The rank's PartitionedGraph of a full edge_index (same on every rank
    of `group`, default: all)."""
    row_ptr, col_idx = gd.csr_from_edge_index(edge_index, n)
    perm = None
    if order == "degree":  # highest in-degree first
        perm = torch.argsort(row_ptr.diff(), descending=True, stable=True)
    pg = gd.PartitionedGraph.from_csr(row_ptr, col_idx, order=perm, device=dev,
                                      group=group)
    del row_ptr, col_idx, perm
    return pg


def local_index(pg, idx):
    """The local row ids of this rank's nodes among the global ids `idx`."""
    local_of = torch.full((pg.num_nodes,), -1, dtype=torch.int64, device=pg.device)
    local_of[pg.nodes] = torch.arange(pg.n_local, device=pg.device)
    li = local_of[idx]
    return li[li >= 0]


def train_epoch(net, opt, scaler, pg, x, y, train, n_train, precision, dev):
    """One epoch over pg's ranks; returns (the loss, the all_reduce's Span)."""
    opt.zero_grad(set_to_none=True)
    with C.amp_context(dev, precision):
        out = net(x, pg)
    # This rank's share of the global mean loss; the gradients are summed.
    loss = F.cross_entropy(out[train].float(), y[train], reduction="sum") / n_train
    scaler.scale(loss).backward()
    with C.Span(dev) as reduce_span:
        gd.all_reduce_gradients(net, pg.group)
    scaler.step(opt)
    scaler.update()
    return loss, reduce_span


# --- R-MAT speed --------------------------------------------------------------

def run_rmat(args, rank, world, dev):
    rows = []
    for scale in args.scales:
        t0 = time.perf_counter()
        edge_index = None
        if rank == 0:
            edge_index, n = C.rmat_edge_index(scale, args.edge_factor, seed=scale, dev=dev,
                                              symmetrize=args.symmetrize)
        n = 1 << scale
        edge_index = broadcast_edges(edge_index, dev)
        gen_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        pg = partition(edge_index, n, args.order, dev)
        num_edges = int(edge_index.shape[1])
        del edge_index
        g = torch.Generator(device=dev).manual_seed(1)
        x = pg.local(torch.randn(n, args.hidden, generator=g, device=dev))
        y = pg.local(torch.randint(0, args.classes, (n,), generator=g, device=dev))
        if args.precision == "f16":
            x = x.half() if dev.type == "cuda" else x.bfloat16()
        part_s = time.perf_counter() - t0
        parts = gather(pg.describe())
        if rank == 0:
            kind = "undirected, no duplicates" if args.symmetrize else "directed"
            print(f"R-MAT scale {scale}: {n} nodes, {num_edges} edges ({kind}); "
                  f"generated in {gen_s:.1f} s, partitioned in {part_s:.1f} s over "
                  f"{world} rank(s); edge cut {pg.edge_cut} "
                  f"({100 * pg.edge_cut / max(1, num_edges):.1f}%)")
            for p in parts:
                print(f"  rank {p['rank']}: {p['n_local']} rows, {p['local_edges']} edges, "
                      f"{p['n_halo']} halo rows, sends {p['send_rows']} rows")
        for model in args.models:
            row = dict(scale=scale, model=model, nodes=n, edges=num_edges,
                       world_size=world, partition=parts, generate_s=gen_s,
                       partition_s=part_s)
            row.update(time_model(model, pg, x, y, args, dev))
            rows.append(row)
            if rank == 0:
                print_rmat_row(row)
        del pg, x, y
        graph_cache.clear()
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    return rows


def time_model(model, pg, x, y, args, dev):
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)
    net = DistNodeModel(model, x.shape[1], args.hidden, args.classes, dropout=0.0).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    scaler = C.grad_scaler(dev, args.precision)
    train = torch.arange(pg.n_local, device=dev)
    C.reset_peak(dev)
    timer = C.EpochTimer(dev)
    exchange_ms, reduce_ms, per_layer = [], [], None
    t0 = time.perf_counter()
    for epoch in range(args.warmup + args.epochs):
        pg.stats.reset()
        with timer:
            loss, reduce_span = train_epoch(net, opt, scaler, pg, x, y, train,
                                            pg.num_nodes, args.precision, dev)
        s = pg.stats.summary()
        exchange_ms.append(sum(v["forward_ms"] + v["backward_ms"] for v in s.values()))
        reduce_ms.append(reduce_span.ms())
        per_layer = s
        if epoch == 0:
            first_s = time.perf_counter() - t0
    w = args.warmup

    def median(xs):
        return statistics.median(xs[w:] or xs)
    compute_ms = [t - e - r for t, e, r in zip(timer.times, exchange_ms, reduce_ms)]
    # Bytes per layer (one epoch) against what the partition implies: the
    # distinct rows of this rank that others reference, at the exchanged
    # rows' width.
    layers = {}
    for key, v in sorted((per_layer or {}).items()):
        boundary = pg.boundary_rows[rank] * v["row_bytes"] * v["forward_calls"]
        layers[key] = dict(forward_bytes=v["forward_bytes"],
                           backward_bytes=v["backward_bytes"],
                           boundary_bytes=boundary, row_bytes=v["row_bytes"],
                           volume_vs_boundary=(v["forward_bytes"] / boundary
                                               if boundary else None),
                           forward_ms=v["forward_ms"], backward_ms=v["backward_ms"])
    mine = dict(rank=rank, epoch_ms=median(timer.times), exchange_ms=median(exchange_ms),
                allreduce_ms=median(reduce_ms), compute_ms=median(compute_ms),
                peak_mib=C.peak_mib(dev), first_epoch_s=first_s, layers=layers)
    ranks = gather(mine)
    sent = sum(lv["forward_bytes"] for r in ranks for lv in r["layers"].values())
    bound = sum(lv["boundary_bytes"] for r in ranks for lv in r["layers"].values())
    # The slowest rank's epoch and its parts.
    slow = max(ranks, key=lambda r: r["epoch_ms"])
    res = {k: slow[k] for k in ("epoch_ms", "exchange_ms", "allreduce_ms", "compute_ms")}
    res.update(slowest_rank=slow["rank"], peak_mib=max(r["peak_mib"] for r in ranks),
               first_epoch_s=max(r["first_epoch_s"] for r in ranks),
               exchange_bytes_sent=sent, boundary_bytes=bound,
               exchange_volume_vs_boundary=(sent / bound if bound else None),
               loss=all_sum([float(loss.detach())], dev)[0], ranks=ranks)
    del net, opt
    return res


def print_rmat_row(row):
    print(f"  {row['model']:3s}: epoch {row['epoch_ms']:8.2f} ms (rank "
          f"{row['slowest_rank']}): compute {row['compute_ms']:8.2f}, exchange {row['exchange_ms']:7.2f}, all_reduce "
          f"{row['allreduce_ms']:5.2f} ms; peak {row['peak_mib']:7.0f} MiB; first epoch "
          f"{row['first_epoch_s']:.1f} s; loss {row['loss']:.4f}")
    for r in row["ranks"]:
        for key, lv in r["layers"].items():
            ratio = lv["volume_vs_boundary"]
            print(f"    rank {r['rank']} {key}: sent {lv['forward_bytes'] / 2**20:8.2f} MiB "
                  f"forward, {lv['backward_bytes'] / 2**20:8.2f} MiB backward; boundary "
                  f"{lv['boundary_bytes'] / 2**20:8.2f} MiB"
                  + (f" (sent/boundary {ratio:.3f})" if ratio is not None else ""))
    if row["exchange_volume_vs_boundary"] is not None:
        print(f"    exchange volume / boundary: {row['exchange_volume_vs_boundary']:.3f}")


# --- accuracy on cora and citeseer --------------------------------------------

def train_accuracy(model, data, pg, seed, args, dev):
    """One training run over pg's ranks (all of them call it). The weights
    come from torch.manual_seed(seed) and the dropout masks from a
    generator seeded with `seed` (a fresh model: the masks start again), so
    a run on any partition draws the same weights and masks."""
    torch.manual_seed(seed)
    net = DistNodeModel(model, data["x"].shape[1], args.hidden, data["num_classes"],
                        dropout=args.dropout, seed=seed).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    scaler = C.grad_scaler(dev, args.precision)
    x, y = pg.local(data["x"]), pg.local(data["y"])
    if args.precision == "f16":
        x = x.half() if dev.type == "cuda" else x.bfloat16()
    split = {k: local_index(pg, v) for k, v in data["split"].items()}
    n_train = len(data["split"]["train"])
    timer = C.EpochTimer(dev)
    best_val = best_test = 0.0
    for epoch in range(args.epochs):
        net.train()
        with timer:
            train_epoch(net, opt, scaler, pg, x, y, split["train"], n_train,
                        args.precision, dev)
        if (epoch + 1) % args.eval_every == 0 or epoch + 1 == args.epochs:
            net.eval()
            with torch.no_grad(), C.amp_context(dev, args.precision):
                pred = net(x, pg).argmax(-1)
            counts = all_sum([float((pred[split[k]] == y[split[k]]).sum())
                              for k in ("val", "test")], dev, pg.group)
            acc = dict(val=counts[0] / len(data["split"]["val"]),
                       test=counts[1] / len(data["split"]["test"]))
            if acc["val"] >= best_val:
                best_val, best_test = acc["val"], acc["test"]
    return dict(test_acc=100 * best_test, val_acc=100 * best_val,
                epoch_ms=all_max(timer.median(args.warmup), dev, pg.group),
                peak_mib=all_max(C.peak_mib(dev), dev, pg.group))


def paired(a, b):
    """Mean, spread and standard error of the per-seed differences a - b
    (points), and the mean of |a - b|."""
    d = [x - y for x, y in zip(a, b)]
    sd = statistics.stdev(d) if len(d) > 1 else 0.0
    return dict(mean=statistics.mean(d), std=sd, stderr=sd / math.sqrt(len(d)),
                mean_abs=statistics.mean(abs(x) for x in d))


def run_planetoid(args, rank, world, dev):
    import train_node
    # train_node's names for this part's settings (its train_one runs the
    # single-process model).
    args = argparse.Namespace(**vars(args))
    args.hidden, args.epochs, args.warmup = args.node_hidden, args.train_epochs, 10
    # The one-process references run on every rank at once, each on a group
    # of itself (every rank takes part in creating every group) whose
    # partition is the whole graph; rank r runs the seeds s with s % world
    # == r, and rank 0 gathers them in seed order.
    solos = [dist.new_group([r]) for r in range(world)] if not args.no_single else None
    rows = []
    for name in args.datasets:
        data = C.load_planetoid(name, dev)
        if data is None:
            if rank == 0:
                C.skip(f"{name}_planetoid.npz not found (set GNNC_DATASETS or provide "
                       f"../shared/datasets)")
            continue
        pg = partition(data["edge_index"], data["num_nodes"], "none", dev)
        if rank == 0:
            print(f"{name}: {data['num_nodes']} nodes, {data['edge_index'].shape[1]} edges "
                  f"over {world} rank(s), edge cut {pg.edge_cut}, from {data['path']}")
        whole = (partition(data["edge_index"], data["num_nodes"], "none", dev, solos[rank])
                 if solos is not None else None)
        for model in args.models:
            runs = [train_accuracy(model, data, pg, s, args, dev) for s in range(args.seeds)]
            row = dict(dataset=name, model=model, precision=args.precision,
                       world_size=world, distributed=C.summarize(runs),
                       distributed_seeds=[r["test_acc"] for r in runs])
            if whole is not None:
                mine = range(rank, args.seeds, world)
                # The same model, weights and dropout masks on one process:
                # only the summation order differs.
                single = {s: train_accuracy(model, data, whole, s, args, dev) for s in mine}
                # train_node's NodeModel: other dropout draws (F.dropout).
                node = {s: train_node.train_one("gnnc", model, data, args.precision, s, args,
                                                dev) for s in mine}
                single = merge_seeds(gather(single))
                node = merge_seeds(gather(node))
                row["single"] = C.summarize(single)
                row["single_seeds"] = [r["test_acc"] for r in single]
                row["acc_delta_points"] = abs(row["distributed"]["acc_mean"]
                                              - row["single"]["acc_mean"])
                row["paired_difference"] = paired(row["distributed_seeds"],
                                                  row["single_seeds"])
                row["single_node_model"] = C.summarize(node)
                row["acc_delta_points_node_model"] = abs(
                    row["distributed"]["acc_mean"] - row["single_node_model"]["acc_mean"])
            dist.barrier()
            rows.append(row)
            if rank == 0:
                d = row["distributed"]
                msg = (f"  {model:3s} distributed ({world}): acc {d['acc_mean']:5.2f} ± "
                       f"{d['acc_std']:4.2f}  epoch {d['epoch_ms']:7.3f} ms")
                if "single" in row:
                    s, nm, pd = row["single"], row["single_node_model"], row["paired_difference"]
                    msg += (f" | same model, one process: acc {s['acc_mean']:5.2f} ± "
                            f"{s['acc_std']:4.2f}  epoch {s['epoch_ms']:7.3f} ms, delta "
                            f"{row['acc_delta_points']:.2f} points (paired: "
                            f"{pd['mean']:+.2f} ± {pd['stderr']:.2f} s.e.) | NodeModel, one "
                            f"process: acc {nm['acc_mean']:5.2f} ± {nm['acc_std']:4.2f}, "
                            f"delta {row['acc_delta_points_node_model']:.2f} points")
                print(msg)
        del pg, whole
    return rows


def merge_seeds(parts):
    """The runs of every rank's {seed: run}, in seed order."""
    merged = {}
    for p in parts:
        merged.update(p)
    return [merged[s] for s in sorted(merged)]


def run(args):
    rank, world, dev = setup()
    out = dict(device=C.gpu_name(dev), world_size=world, precision=args.precision,
               hidden=args.hidden, epochs=args.epochs, warmup=args.warmup,
               symmetrize=args.symmetrize, order=args.order)
    if "rmat" in args.parts:
        out["rmat"] = run_rmat(args, rank, world, dev)
    if "planetoid" in args.parts:
        out["planetoid"] = run_planetoid(args, rank, world, dev)
    return rank, out


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--parts", nargs="+", default=["rmat", "planetoid"],
                   choices=["rmat", "planetoid"])
    p.add_argument("--models", nargs="+", default=["gcn", "gin"], choices=["gcn", "gin"])
    p.add_argument("--precision", default="f32", choices=["f32", "f16"])
    p.add_argument("--out", help="write the results as JSON here (rank 0)")
    r = p.add_argument_group("rmat")
    r.add_argument("--scales", type=int, nargs="+", default=[22])
    r.add_argument("--edge-factor", type=int, default=16)
    r.add_argument("--symmetrize", action=argparse.BooleanOptionalAction, default=True,
                   help="both directions of every edge, duplicates removed (default on)")
    r.add_argument("--order", default="none", choices=["none", "degree"],
                   help="renumber before cutting the rows into blocks")
    r.add_argument("--hidden", type=int, default=128)
    r.add_argument("--classes", type=int, default=16)
    r.add_argument("--epochs", type=int, default=10, help="timed epochs")
    r.add_argument("--warmup", type=int, default=3)
    a = p.add_argument_group("planetoid")
    a.add_argument("--datasets", nargs="+", default=["cora", "citeseer"],
                   choices=["cora", "citeseer"])
    a.add_argument("--seeds", type=int, default=10)
    a.add_argument("--train-epochs", type=int, default=200)
    a.add_argument("--eval-every", type=int, default=5)
    a.add_argument("--node-hidden", type=int, default=64)
    a.add_argument("--dropout", type=float, default=0.5)
    a.add_argument("--lr", type=float, default=0.01)
    a.add_argument("--weight-decay", type=float, default=5e-4)
    a.add_argument("--no-single", action="store_true",
                   help="skip the one-process comparisons")
    return p


if __name__ == "__main__":
    a = parser().parse_args()
    rank, res = run(a)
    if rank == 0:
        C.write_json(a.out, res)
    dist.barrier()
    dist.destroy_process_group()
