"""Data-parallel GIN graph classification over the processes of a torchrun
group: examples/train_proteins.py's model and block-diagonal batches, the
model wrapped in DistributedDataParallel, each epoch's training batches
split over the ranks as torch's DistributedSampler does (shuffled with
the epoch as seed, padded to a multiple of the world size).

  torchrun --nproc_per_node=2 examples/train_ddp_proteins.py --data proteins molecules

Data: tu_PROTEINS (1,113 graphs, from $GNNC_DATASETS or
../shared/datasets; skipped, saying so, when absent) and generated
molecule-like graphs (a ring of 10 to 60 atoms with random chords, one-hot
atom types; the class says whether the ring has few or many chords; fixed
seed), numerous enough to keep the GPUs busy. Per epoch: the training
throughput (training graphs / the slowest rank's epoch time, CUDA
events), the loss and, every --eval-every epochs, validation and test
accuracy (the batches split over the ranks, the counts summed).

Warm-up: gnnc chooses (tunes) a graph's kernels the first time it sees
the graph. With the batches dealt out afresh every epoch, a rank of two
keeps meeting batches for the first time in later epochs, inside the
timing, while one process meets them all in epoch 1; so before the first
epoch every rank runs every training batch once through the plain model
(forward and backward, outside DDP: no gradient all_reduce, no optimizer
step; the gradients, BatchNorm statistics and random state are put back,
so training is unchanged) and
its evaluation batches once (no_grad), and prints how long that took.
Kernel choice then happens outside the timing whatever the world size.

One process (a plain `python` run or a torchrun group of one) trains the
model without the DDP wrapper, the baseline a one-GPU user runs;
--ddp-single wraps it anyway.

DDP's options (ddp_options; each on by default, --no-... turns it off):
--static-graph (the model uses every parameter in the same order every
step: DDP records the graph in the first synchronised step and checks
it afterwards), --one-bucket (bucket_cap_mb large enough for all the
gradients: one all_reduce per step; at the default width they fit DDP's
default first bucket of 1 MiB anyway, so this matters for wider models)
and --inputs-on-device (device_ids=None: the batches already live on
the rank's GPU, so DDP does not walk the inputs to move them each
forward). None changes the arithmetic: the gradients are still each
rank's mean-loss gradient summed over the ranks and divided by the world
size.

Buffers: DDP runs with broadcast_buffers=False (--broadcast-buffers turns
the broadcast back on): each rank's BatchNorm tracks its own batches, and
before every evaluation gnnc.distributed.average_buffers makes the
running statistics the ranks' mean, so all ranks evaluate one model.

A plain
`python examples/train_ddp_proteins.py` runs one process; GNNC_EMULATE=1
runs on the CPU (gloo, kernels emulated) to check the script. Rank 0
prints and writes --out.
"""
from __future__ import annotations

import argparse
import math
import statistics
import time

import gnn_common as C
import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
import train_proteins as P
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data.distributed import DistributedSampler

from gnnc import distributed as gd


def molecules(num_graphs, seed, dev, min_atoms=10, max_atoms=60, atom_types=7):
    """Molecule-like graphs in load_proteins' layout (one CSR of all graphs,
    rows = destinations, undirected; graph_ptr; one-hot atom types; labels):
    a ring of n atoms plus f n chords between random atoms, f drawn from
    [0.04, 0.3]; the class says whether f is above 0.17 (near it, the two
    classes look alike)."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(min_atoms, max_atoms + 1, num_graphs)
    density = rng.uniform(0.04, 0.3, num_graphs)
    labels = (density > 0.17).astype(np.int64)
    graph_ptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    src, dst = [], []
    for g in range(num_graphs):
        n, base = int(sizes[g]), int(graph_ptr[g])
        ring = np.arange(n)
        chords = max(1, round(n * density[g]))
        a = rng.integers(0, n, chords)
        b = (a + rng.integers(2, n - 1, chords)) % n  # never a ring neighbour
        s = np.concatenate([ring, a]) + base
        d = np.concatenate([(ring + 1) % n, b]) + base
        src += [s, d]
        dst += [d, s]
    src, dst = np.concatenate(src), np.concatenate(dst)
    total = int(graph_ptr[-1])
    order = np.lexsort((src, dst))
    indptr = np.concatenate([[0], np.cumsum(np.bincount(dst, minlength=total))])
    atoms = rng.integers(0, atom_types, total)
    x = np.eye(atom_types, dtype=np.float32)[atoms]
    return dict(indptr=indptr.astype(np.int64), indices=src[order].astype(np.int64),
                graph_ptr=graph_ptr, edge_graph_ptr=indptr[graph_ptr].astype(np.int64),
                x=torch.from_numpy(x).to(dev), y=torch.from_numpy(labels).to(dev),
                num_classes=2, path=f"generated ({num_graphs} graphs, seed {seed})")


def load(name, args, dev):
    if name == "proteins":
        return C.load_proteins(dev), args.batch_size
    return molecules(args.molecules, 0, dev), args.molecule_batch_size


def evaluate(net, batches, rank, world, precision, dev):
    """Accuracy of the batches, split over the ranks."""
    counts = torch.zeros(2, dtype=torch.float64, device=dev)
    net.eval()
    with torch.no_grad(), C.amp_context(dev, precision):
        for b in batches[rank::world]:
            x = b["x"].to(torch.float16 if dev.type == "cuda" else torch.bfloat16) \
                if precision == "f16" else b["x"]
            pred = net(x, b["graph"], b["batch"], b["num_graphs"]).argmax(-1)
            counts[0] += (pred == b["y"]).sum()
            counts[1] += b["num_graphs"]
    if world > 1:
        dist.all_reduce(counts)
    return float(counts[0] / counts[1])


def warm_up(net, opt, scaler, batches, rank, world, precision, dev):
    """Runs every training batch once (forward + backward through the plain
    model `net`, not its DDP wrapper: no all_reduce, gradients dropped, no
    step) and this rank's evaluation batches once (no_grad), so gnnc
    chooses every graph's kernels here and not inside a timed epoch. The
    BatchNorm buffers and the random state (dropout) are restored: training
    goes on as without the warm-up. It runs before DDP wraps the model
    (prepare), so DDP's first step, where static_graph records the graph,
    is the first training step. Returns the seconds it took (the slowest
    rank)."""
    half = torch.float16 if dev.type == "cuda" else torch.bfloat16
    saved = [b.detach().clone() for b in net.buffers()]
    t0 = time.perf_counter()
    with torch.random.fork_rng(devices=[dev] if dev.type == "cuda" else []):
        net.train()
        for b in batches["train"]:
            x = b["x"].to(half) if precision == "f16" else b["x"]
            with C.amp_context(dev, precision):
                out = net(x, b["graph"], b["batch"], b["num_graphs"])
            scaler.scale(F.cross_entropy(out.float(), b["y"])).backward()
            opt.zero_grad(set_to_none=True)
        net.eval()
        with torch.no_grad(), C.amp_context(dev, precision):
            for k in ("val", "test"):
                for b in batches[k][rank::world]:  # the ones evaluate() gives this rank
                    x = b["x"].to(half) if precision == "f16" else b["x"]
                    net(x, b["graph"], b["batch"], b["num_graphs"])
    with torch.no_grad():
        for b, v in zip(net.buffers(), saved):
            b.copy_(v)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
    secs = torch.tensor([time.perf_counter() - t0], dtype=torch.float64, device=dev)
    if world > 1:
        dist.all_reduce(secs, op=dist.ReduceOp.MAX)
    return float(secs)


def ddp_options(net, args, dev):
    """DistributedDataParallel's keyword arguments for `net` (see the module
    docstring). None of them changes what a step computes."""
    grad_bytes = sum(p.numel() * p.element_size() for p in net.parameters()
                     if p.requires_grad)
    return dict(
        # broadcast_buffers=False: no buffer broadcast before every forward
        # (on two H200s it cost 1.7 ms of a 6.6 ms step, host work and a
        # collective that the next step waits for); BatchNorm's statistics
        # are averaged over the ranks before each evaluation instead
        # (gd.average_buffers).
        broadcast_buffers=args.broadcast_buffers,
        # gradient_as_bucket_view: the gradients live in DDP's all_reduce
        # buckets, so no copy back from the buckets after each all_reduce.
        gradient_as_bucket_view=True,
        static_graph=args.static_graph,
        # One bucket: its cap (MiB, whole) covers every gradient. Left out,
        # DDP's defaults apply (a first bucket of 1 MiB, then 25 MiB).
        bucket_cap_mb=max(1, math.ceil(grad_bytes / 2**20)) if args.one_bucket else None,
        device_ids=[dev.index] if dev.type == "cuda" and not args.inputs_on_device
        else None)


def wrap(net, args, world, dev):
    """The model a rank trains: `net` itself with one process (the one-GPU
    baseline) unless --ddp-single asks for DDP in a group of one (0.65 ms
    of host work more per 5 ms step on an H200), else `net` in
    DistributedDataParallel with ddp_options."""
    if world == 1 and not args.ddp_single:
        return net
    return DistributedDataParallel(net, **ddp_options(net, args, dev))


def bucket_sizes(model):
    """The bytes of each of DDP's gradient buckets as they stand after the
    first synchronised step ([] for a plain model or when torch does not
    say)."""
    if not isinstance(model, DistributedDataParallel):
        return []
    try:
        info = model._get_ddp_logging_data()
    except (AttributeError, RuntimeError):
        return []
    sizes = info.get("rebuilt_bucket_sizes") or info.get("bucket_sizes") or ""
    return [int(v) for v in str(sizes).split(",") if v.strip()]


def prepare(net, args, batches, rank, world, dev):
    """(model to train, optimizer, grad scaler, warm-up seconds): the
    warm-up runs before DDP wraps `net`, so DDP's reducer sees no backward
    before the first training step. With static_graph, backward passes
    through the plain model after wrapping (its hooks firing outside a
    synchronised step) left the second synchronised step with gradients
    other than the ranks' mean (torch 2.15, gloo; the CPU test catches it)."""
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    scaler = C.grad_scaler(dev, args.precision)
    warmup_s = warm_up(net, opt, scaler, batches, rank, world, args.precision, dev)
    return wrap(net, args, world, dev), opt, scaler, warmup_s


def train_step(model, opt, scaler, b, precision, dev):
    """One optimizer step on batch `b`; returns the (detached) mean loss of
    the batch. `model` is the plain model or its DDP wrapper."""
    x = b["x"].to(C.feature_dtype(dev, precision))
    opt.zero_grad(set_to_none=True)
    with C.amp_context(dev, precision):
        out = model(x, b["graph"], b["batch"], b["num_graphs"])
    loss = F.cross_entropy(out.float(), b["y"])
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    return loss.detach()


def train_one(data, batch_size, seed, args, rank, world, dev):
    batches = P.splits(data, seed, batch_size, dev)
    torch.manual_seed(seed)
    net = P.GIN("gnnc", data["x"].shape[1], args.hidden, data["num_classes"]).to(dev)
    ddp, opt, scaler, warmup_s = prepare(net, args, batches, rank, world, dev)
    train = batches["train"]
    sampler = DistributedSampler(range(len(train)), num_replicas=world, rank=rank,
                                 shuffle=True, seed=seed)
    train_graphs = sum(b["num_graphs"] for b in train)
    if rank == 0:
        print(f"    warm-up (kernel choice): {len(train)} training and "
              f"{len(batches['val']) + len(batches['test'])} evaluation batches in "
              f"{warmup_s:.1f} s")
    timer = C.EpochTimer(dev)
    epochs, best_val, best_test = [], 0.0, 0.0
    C.reset_peak(dev)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        ddp.train()
        loss_sum = torch.zeros((), device=dev)
        with timer:
            for i in sampler:
                loss_sum += train_step(ddp, opt, scaler, train[i], args.precision, dev)
        # The slowest rank's epoch time; the mean loss over the ranks' steps.
        stats = torch.tensor([timer.times[-1], float(loss_sum) / len(sampler)],
                             dtype=torch.float64, device=dev)
        if world > 1:
            ms = stats[0:1].clone()
            dist.all_reduce(ms, op=dist.ReduceOp.MAX)
            dist.all_reduce(stats)
            stats[0], stats[1] = ms[0], stats[1] / world
        row = dict(epoch=epoch + 1, epoch_ms=float(stats[0]), loss=float(stats[1]),
                   graphs_per_s=train_graphs / (float(stats[0]) / 1e3))
        if (epoch + 1) % args.eval_every == 0 or epoch + 1 == args.epochs:
            gd.average_buffers(net)  # one model on every rank
            row["val_acc"] = 100 * evaluate(net, batches["val"], rank, world,
                                            args.precision, dev)
            row["test_acc"] = 100 * evaluate(net, batches["test"], rank, world,
                                             args.precision, dev)
            if row["val_acc"] >= best_val:
                best_val, best_test = row["val_acc"], row["test_acc"]
        epochs.append(row)
        if rank == 0 and not args.quiet:
            acc = (f", val {row['val_acc']:5.1f}, test {row['test_acc']:5.1f}"
                   if "val_acc" in row else "")
            print(f"    epoch {epoch + 1:3d}: {row['epoch_ms']:8.2f} ms, "
                  f"{row['graphs_per_s']:9.0f} graphs/s, loss {row['loss']:.4f}{acc}")
    timed = epochs[args.warmup:] or epochs
    peak = torch.tensor([C.peak_mib(dev)], dtype=torch.float64, device=dev)
    if world > 1:
        dist.all_reduce(peak, op=dist.ReduceOp.MAX)
    return dict(test_acc=best_test, val_acc=best_val,
                epoch_ms=statistics.median(r["epoch_ms"] for r in timed),
                graphs_per_s=statistics.median(r["graphs_per_s"] for r in timed),
                peak_mib=float(peak), steps_per_rank=len(sampler), warmup_s=warmup_s,
                train_graphs=train_graphs, ddp_buckets=bucket_sizes(ddp), epochs=epochs)


def run(args):
    dev = C.device()
    rank, world, dev = gd.init_process_group(dev.type)
    out = dict(device=C.gpu_name(dev), world_size=world, precision=args.precision,
               broadcast_buffers=args.broadcast_buffers,
               ddp_wrapper=world > 1 or args.ddp_single, static_graph=args.static_graph,
               one_bucket=args.one_bucket, inputs_on_device=args.inputs_on_device,
               hidden=args.hidden,
               epochs=args.epochs, warmup=args.warmup, results={})
    for name in args.data:
        data, batch_size = load(name, args, dev)
        if data is None:
            if rank == 0:
                C.skip("tu_PROTEINS.npz not found (set GNNC_DATASETS or provide "
                       "../shared/datasets)")
            out["results"][name] = dict(skipped="tu_PROTEINS.npz not found")
            continue
        if rank == 0:
            print(f"{name}: {len(data['graph_ptr']) - 1} graphs, {data['x'].shape[0]} nodes, "
                  f"{len(data['indices'])} edges, batches of {batch_size}, {world} rank(s), "
                  f"from {data['path']}")
        runs = [train_one(data, batch_size, s, args, rank, world, dev)
                for s in range(args.seeds)]
        res = C.summarize(runs)
        res.update(graphs_per_s=statistics.median(r["graphs_per_s"] for r in runs),
                   warmup_s=statistics.median(r["warmup_s"] for r in runs),
                   batch_size=batch_size, steps_per_rank=runs[0]["steps_per_rank"],
                   train_graphs=runs[0]["train_graphs"], runs=runs)
        out["results"][name] = res
        if rank == 0:
            print(f"  GIN DDP ({world}): {res['graphs_per_s']:9.0f} graphs/s, epoch "
                  f"{res['epoch_ms']:8.2f} ms, test acc {res['acc_mean']:5.2f} ± "
                  f"{res['acc_std']:4.2f} over {args.seeds} seed(s), peak "
                  f"{res['peak_mib']:7.1f} MiB")
    return rank, out


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", nargs="+", default=["proteins", "molecules"],
                   choices=["proteins", "molecules"])
    p.add_argument("--molecules", type=int, default=32768, help="generated graphs")
    p.add_argument("--seeds", type=int, default=1)
    p.add_argument("--epochs", type=int, default=50)
    p.add_argument("--warmup", type=int, default=2, help="epochs left out of the timing")
    p.add_argument("--eval-every", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=128, help="PROTEINS graphs per batch")
    p.add_argument("--molecule-batch-size", type=int, default=512)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--precision", default="f32", choices=["f32", "f16"])
    p.add_argument("--broadcast-buffers", action=argparse.BooleanOptionalAction,
                   default=False,
                   help="DDP's buffer broadcast before every forward (default off: "
                        "the BatchNorm statistics are averaged before evaluating)")
    p.add_argument("--static-graph", action=argparse.BooleanOptionalAction, default=True,
                   help="DDP's static_graph (default on: every step uses every parameter "
                        "in the same order)")
    p.add_argument("--one-bucket", action=argparse.BooleanOptionalAction, default=True,
                   help="one gradient bucket, one all_reduce per step (default on; off: "
                        "DDP's default bucket sizes)")
    p.add_argument("--inputs-on-device", action=argparse.BooleanOptionalAction,
                   default=True,
                   help="device_ids=None: DDP leaves the inputs, already on the GPU, "
                        "where they are (default on; off: device_ids=[local GPU], DDP "
                        "walks the inputs every forward)")
    p.add_argument("--ddp-single", action="store_true",
                   help="wrap the model in DDP with one process too (default: the plain "
                        "model, the one-GPU baseline)")
    p.add_argument("--quiet", action="store_true", help="no line per epoch")
    p.add_argument("--out", help="write the results as JSON here (rank 0)")
    return p


if __name__ == "__main__":
    a = parser().parse_args()
    rank, res = run(a)
    if rank == 0:
        C.write_json(a.out, res)
    dist.barrier()
    dist.destroy_process_group()
