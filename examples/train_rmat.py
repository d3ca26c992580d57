"""Training speed on generated R-MAT graphs (Graph500: a=0.57, b=c=0.19,
edge factor 16; generated with torch on the GPU and made undirected as PyG's
to_undirected does: both directions, duplicates removed, about 31M edges at
scale 20; --directed keeps the generated directed edges): epoch time (forward + backward +
Adam step of a two-layer model, CUDA events, median after warm-up) and peak
GPU memory for GCN, GIN and 4-head GAT, random features and labels.

Each model runs as gnnc f32, gnnc f16 (f16 features and activations, f32
master weights), and PyG f32 twice: with edge_index (gather/scatter
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
import time

import gnn_common as C
import torch
import torch.nn.functional as F

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


def time_config(lib, model, precision, graph_arg, x, y, args, dev, pyg_sparse=False):
    torch.manual_seed(0)
    net = C.NodeModel(lib, model, x.shape[1], args.hidden, args.classes, dropout=0.0).to(dev)
    if pyg_sparse and model == "gat":
        net.c1.add_self_loops = net.c2.add_self_loops = False  # adj_t has them
    opt = torch.optim.Adam(net.parameters(), lr=0.01)
    scaler = C.grad_scaler(dev, precision)
    xin = x.half() if precision == "f16" else x
    timer = C.EpochTimer(dev)
    C.reset_peak(dev)
    t0 = time.perf_counter()
    for epoch in range(args.warmup + args.epochs):
        with timer:
            opt.zero_grad(set_to_none=True)
            with C.amp_context(dev, precision):
                out = net(xin, graph_arg)
            loss = F.cross_entropy(out.float(), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        if epoch == 0:
            first_s = time.perf_counter() - t0
    res = dict(epoch_ms=timer.median(args.warmup), peak_mib=C.peak_mib(dev),
               first_epoch_s=first_s, loss=float(loss))
    del net, opt, out, loss
    return res


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
        g = torch.Generator(device=dev).manual_seed(1)
        x = torch.randn(n, args.hidden, generator=g, device=dev)
        y = torch.randint(0, args.classes, (n,), generator=g, device=dev)
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
            for precision in ("f32", "f16"):
                row[f"gnnc_{precision}"] = guarded(
                    lambda: time_config("gnnc", model, precision, edge_index, x, y, args, dev))
            free()
            if not args.no_pyg:
                row["pyg_f32_edge_index"] = guarded(
                    lambda: time_config("pyg", model, "f32", edge_index, x, y, args, dev))
                free()

                def sparse():
                    adj = pyg_adjacency(edge_index, n, self_loops=(model == "gat"))
                    return time_config("pyg", model, "f32", adj, x, y, args, dev,
                                       pyg_sparse=True)
                row["pyg_f32_sparse_csr"] = guarded(sparse)
                free()
                ok = {k: row[k] for k in ("pyg_f32_edge_index", "pyg_f32_sparse_csr")
                      if "epoch_ms" in row[k]}
                if ok:
                    best = min(ok, key=lambda k: ok[k]["epoch_ms"])
                    row["pyg_fastest"] = best
                    base = ok[best]
                    for p in ("f32", "f16"):
                        r = row[f"gnnc_{p}"]
                        if "epoch_ms" in r:
                            row[f"speedup_{p}"] = base["epoch_ms"] / r["epoch_ms"]
                            row[f"memory_ratio_{p}"] = r["peak_mib"] / base["peak_mib"]
            results.append(row)
            print_row(row)
        del edge_index, x, y
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
    for k in ("gnnc_f32", "gnnc_f16", "pyg_f32_edge_index", "pyg_f32_sparse_csr"):
        if k in row:
            print(f"    {k:20s} {fmt(row[k])}")
    if "pyg_fastest" in row:
        print(f"    PyG fastest: {row['pyg_fastest']}; speedup f32 "
              f"{row.get('speedup_f32', float('nan')):.2f}x, f16 "
              f"{row.get('speedup_f16', float('nan')):.2f}x; memory f16/PyG "
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
    p.add_argument("--epochs", type=int, default=10, help="timed epochs")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--no-pyg", action="store_true")
    p.add_argument("--out")
    return p


if __name__ == "__main__":
    a = parser().parse_args()
    C.write_json(a.out, run(a))
