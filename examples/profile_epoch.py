"""Profiles training epochs of one model on an R-MAT graph with
torch.profiler and prints the ops and kernels by GPU time (gnnc's kernels
appear under the names of their CUDA functions).

  python examples/profile_epoch.py --scale 20 --model gcn --lib gnnc --precision f16
"""
from __future__ import annotations

import argparse

import gnn_common as C
import torch
from torch.profiler import ProfilerActivity, profile


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=int, default=18)
    p.add_argument("--model", default="gcn", choices=["gcn", "gin", "gat"])
    p.add_argument("--lib", default="gnnc", choices=["gnnc", "pyg"])
    p.add_argument("--precision", default="f32", choices=["f32", "f16", "bf16"])
    p.add_argument("--dataset", help="cora or citeseer instead of an R-MAT graph")
    p.add_argument("--sort", default="cuda_time_total",
                   help="profiler table order, e.g. cpu_time_total for host overhead")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--rows", type=int, default=25)
    p.add_argument("--directed", action="store_true")
    a = p.parse_args()
    dev = C.device()
    if a.dataset:
        data = C.load_planetoid(a.dataset, dev)
        if data is None:
            return C.skip(f"{a.dataset}_planetoid.npz not found")
        ei, n, x, y = data["edge_index"], data["num_nodes"], data["x"], data["y"]
        classes = data["num_classes"]
    else:
        ei, n = C.rmat_edge_index(a.scale, 16, seed=a.scale, dev=dev,
                                  symmetrize=not a.directed)
        x = torch.randn(n, a.hidden, device=dev)
        classes = 16
        y = torch.randint(0, classes, (n,), device=dev)
    net = C.NodeModel(a.lib, a.model, x.shape[1], a.hidden, classes, dropout=0.0).to(dev)
    opt = C.optimizer(net.parameters(), dev)
    scaler = C.grad_scaler(dev, a.precision)
    xin = x.to(C.feature_dtype(dev, a.precision))

    def epoch():
        return C.train_step(net, opt, scaler, xin, ei, y, a.precision, dev)

    for _ in range(3):
        epoch()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            epoch()
        torch.cuda.synchronize()
    print(prof.key_averages().table(sort_by=a.sort, row_limit=a.rows))
    timer = C.EpochTimer(dev)
    for _ in range(10):
        with timer:
            loss = epoch()
    print(f"median epoch {timer.median(0):.3f} ms, loss {float(loss):.4f}, peak "
          f"{C.peak_mib(dev):.0f} MiB")


if __name__ == "__main__":
    main()
