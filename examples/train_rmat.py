"""Training speed on generated R-MAT graphs (Graph500: a=0.57, b=c=0.19,
edge factor 16; generated with torch on the GPU and made undirected as PyG's
to_undirected does: both directions, duplicates removed, about 31M edges at
scale 20; --directed keeps the generated directed edges): epoch time (forward + backward +
Adam step of a two-layer model, CUDA events, median after warm-up) and peak
GPU memory for GCN, GIN and 4-head GAT, random features and labels.

Each model runs as gnnc f32, gnnc f16 and bf16 (half-precision features
and activations, f32 master weights; the features are stored in that
precision, as HalfGNN stores them: no f32 copy is alive during a half run),
and PyG f32 twice: with edge_index (gather/scatter
message passing) and with a torch.sparse CSR adjacency passed as adj_t
(cuSPARSE); the faster PyG configuration is the baseline.

  python examples/train_rmat.py --scales 20 21 --models gcn gin gat --out rmat.json

Peak memory is torch.cuda.max_memory_allocated: gnnc's own derived arrays
(neighbour groups, column factors, workspace) are allocated by gnnc, not
through PyTorch's allocator, and are not counted.
"""
from __future__ import annotations

import argparse
import gc
import math
import time

import gnn_common as C
import torch

import gnnc
from gnnc.graph import graph_cache


def free():
    graph_cache.clear()
    gc.collect()
    if torch.cuda.is_available():
        torch.cuda.empty_cache()


def pyg_adjacency(edge_index, n, self_loops):
    """The torch.sparse CSR adjacency (rows = destinations) PyG takes as
    adj_t; with self_loops, PyG's remove-then-add self loops first."""
    g = gnnc.Graph.from_edge_index(edge_index, n, device=edge_index.device)
    if self_loops:
        g = g.add_self_loops()
    adj = torch.sparse_csr_tensor(g.row_ptr, g.col_idx.long(),
                                  torch.ones(g.nnz, device=edge_index.device), (n, n))
    return adj


def features(n, width, dtype, dev):
    """The run's random features (the same values for every run, rounded
    to `dtype`), generated on the device without an f32 copy left alive."""
    g = torch.Generator(device=dev).manual_seed(1)
    return torch.randn(n, width, generator=g, device=dev).to(dtype)


def labels(n, classes, dev):
    g = torch.Generator(device=dev).manual_seed(2)
    return torch.randint(0, classes, (n,), generator=g, device=dev)


def time_config(lib, model, precision, graph_arg, n, y, args, dev, pyg_sparse=False):
    xin = features(n, args.hidden, C.feature_dtype(dev, precision), dev)
    torch.manual_seed(0)
    net = C.NodeModel(lib, model, xin.shape[1], args.hidden, args.classes,
                      dropout=0.0).to(dev)
    if pyg_sparse and model == "gat":
        net.c1.add_self_loops = net.c2.add_self_loops = False  # adj_t has them
    opt = C.optimizer(net.parameters(), dev)
    scaler = C.grad_scaler(dev, precision)
    timer = C.EpochTimer(dev)
    C.reset_peak(dev)
    t0 = time.perf_counter()
    for epoch in range(args.warmup + args.epochs):
        with timer:
            loss = C.train_step(net, opt, scaler, xin, graph_arg, y, precision, dev)
        if epoch == 0:
            first_s = time.perf_counter() - t0
    res = dict(epoch_ms=timer.median(args.warmup), peak_mib=C.peak_mib(dev),
               first_epoch_s=first_s, loss=float(loss.detach()))
    if lib == "gnnc":
        res["schedules"] = gnnc_schedules(graph_arg, n, model, xin.dtype)
    del net, opt, loss, xin
    return res


def gnnc_schedules(edge_index, n, model, dtype):
    """The schedules gnnc chose for the graph's kernels of this run (op
    signature -> schedule and where it came from)."""
    variant = "self_loops" if model in ("gcn", "gat") else None
    g = gnnc.graph.cached_graph(edge_index, n, variant, edge_index.device)
    return {desc: dict(schedule=s, source=src) for desc, (s, src) in g.chosen().items()}


def guarded(fn):
    try:
        return fn()
    except torch.cuda.OutOfMemoryError as e:
        free()
        return dict(error="out of memory", detail=str(e).split("\n")[0])
    except Exception as e:  # a baseline that cannot run this configuration
        free()
        return dict(error=type(e).__name__, detail=str(e).split("\n")[0][:300])


def run(args, dev=None):
    dev = dev or C.device()
    results = []
    for scale in args.scales:
        t0 = time.perf_counter()
        edge_index, n = C.rmat_edge_index(scale, args.edge_factor, seed=scale, dev=dev,
                                          symmetrize=not args.directed)
        gen_s = time.perf_counter() - t0
        y = labels(n, args.classes, dev)
        kind = "directed edges" if args.directed else "edges (undirected, both directions)"
        print(f"R-MAT scale {scale}: {n} nodes, {edge_index.shape[1]} {kind}, "
              f"generated in {gen_s:.1f} s")
        for model in args.models:
            row = dict(scale=scale, model=model, nodes=n, edges=int(edge_index.shape[1]))
            free()
            t0 = time.perf_counter()
            # Build the graph gnnc's layers will use (cached by edge_index).
            gnnc.graph.cached_graph(edge_index, n, "self_loops" if model in ("gcn", "gat")
                                    else None, dev)
            row["gnnc_graph_build_s"] = time.perf_counter() - t0
            for precision in args.precisions:
                row[f"gnnc_{precision}"] = guarded(
                    lambda: time_config("gnnc", model, precision, edge_index, n, y, args, dev))
            free()
            if not args.no_pyg:
                row["pyg_f32_edge_index"] = guarded(
                    lambda: time_config("pyg", model, "f32", edge_index, n, y, args, dev))
                free()

                def sparse():
                    adj = pyg_adjacency(edge_index, n, self_loops=(model == "gat"))
                    return time_config("pyg", model, "f32", adj, n, y, args, dev,
                                       pyg_sparse=True)
                row["pyg_f32_sparse_csr"] = guarded(sparse)
                free()
                ok = {k: row[k] for k in ("pyg_f32_edge_index", "pyg_f32_sparse_csr")
                      if "epoch_ms" in row[k]}
                if ok:
                    best = min(ok, key=lambda k: ok[k]["epoch_ms"])
                    row["pyg_fastest"] = best
                    base = ok[best]
                    for p in args.precisions:
                        r = row[f"gnnc_{p}"]
                        if "epoch_ms" in r:
                            row[f"speedup_{p}"] = base["epoch_ms"] / r["epoch_ms"]
                            row[f"memory_ratio_{p}"] = r["peak_mib"] / base["peak_mib"]
            results.append(row)
            print_row(row)
        del edge_index, y
        free()
    return dict(device=C.gpu_name(dev), hidden=args.hidden, edge_factor=args.edge_factor,
                undirected=not args.directed,
                epochs=args.epochs, warmup=args.warmup, results=results)


def fmt(r):
    if r is None:
        return "-"
    if "error" in r:
        return r["error"]
    return f"{r['epoch_ms']:8.2f} ms {r['peak_mib']:9.0f} MiB"


def print_row(row):
    print(f"  {row['model']:3s} gnnc graph build {row['gnnc_graph_build_s']:.2f} s")
    for k in ("gnnc_f32", "gnnc_f16", "gnnc_bf16", "pyg_f32_edge_index",
              "pyg_f32_sparse_csr"):
        if k in row:
            loss = row[k].get("loss")
            note = "" if loss is None or math.isfinite(loss) else "  (loss not finite)"
            print(f"    {k:20s} {fmt(row[k])}{note}")
    if "pyg_fastest" in row:
        parts = ", ".join(f"{p} {row[f'speedup_{p}']:.2f}x" for p in ("f32", "f16", "bf16")
                          if f"speedup_{p}" in row)
        print(f"    PyG fastest: {row['pyg_fastest']}; speedup {parts}; memory f16/PyG "
              f"{row.get('memory_ratio_f16', float('nan')):.2f}")


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scales", type=int, nargs="+", default=[20])
    p.add_argument("--models", nargs="+", default=["gcn", "gin", "gat"],
                   choices=["gcn", "gin", "gat"])
    p.add_argument("--edge-factor", type=int, default=16)
    p.add_argument("--directed", action="store_true",
                   help="keep the generated directed edges (default: undirected)")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--classes", type=int, default=16)
    p.add_argument("--precisions", nargs="+", default=["f32", "f16", "bf16"],
                   choices=["f32", "f16", "bf16"], help="gnnc's runs")
    p.add_argument("--epochs", type=int, default=10, help="timed epochs")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--no-pyg", action="store_true")
    p.add_argument("--out")
    return p


if __name__ == "__main__":
    a = parser().parse_args()
    C.write_json(a.out, run(a))
