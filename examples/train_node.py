"""Node classification (GCN, 4-head GAT, GIN) on cora and citeseer with
gnnc's layers and, in the same run on the same GPU, the same model over
torch_geometric's layers (always f32, the baseline). Prints test accuracy
(mean and std over seeds; the test accuracy at the best validation
accuracy), the median epoch time (forward + backward + optimizer step, CUDA
events, after warm-up) and peak GPU memory (torch.cuda.max_memory_allocated).

  python examples/train_node.py --dataset cora --model gcn --precision f16 --seeds 10

--precision f16: HalfGNN style, f16 features and activations (autocast),
f32 master weights, torch.amp.GradScaler loss scaling. The datasets come
from $GNNC_DATASETS or ../shared/datasets (the stored Planetoid split);
the script skips, saying so, when they are absent.
"""
from __future__ import annotations

import argparse

import gnn_common as C
import torch
import torch.nn.functional as F


def train_one(lib, model, data, precision, seed, args, dev):
    torch.manual_seed(seed)
    net = C.NodeModel(lib, model, data["x"].shape[1], args.hidden, data["num_classes"],
                      dropout=args.dropout).to(dev)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr, weight_decay=args.weight_decay)
    scaler = C.grad_scaler(dev, precision)
    x = data["x"].half() if precision == "f16" and lib == "gnnc" and dev.type == "cuda" \
        else data["x"]
    if precision == "f16" and dev.type != "cuda":
        x = data["x"].bfloat16()
    ei, y, split = data["edge_index"], data["y"], data["split"]
    timer = C.EpochTimer(dev)
    best_val = best_test = 0.0
    C.reset_peak(dev)
    for epoch in range(args.epochs):
        net.train()
        with timer:
            opt.zero_grad(set_to_none=True)
            with C.amp_context(dev, precision):
                out = net(x, ei)
            loss = F.cross_entropy(out[split["train"]].float(), y[split["train"]])
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        if (epoch + 1) % args.eval_every == 0 or epoch + 1 == args.epochs:
            net.eval()
            with torch.no_grad(), C.amp_context(dev, precision):
                pred = net(x, ei).argmax(-1)
            acc = {k: float((pred[v] == y[v]).float().mean()) for k, v in split.items()}
            if acc["val"] >= best_val:
                best_val, best_test = acc["val"], acc["test"]
    return dict(test_acc=100 * best_test, val_acc=100 * best_val,
                epoch_ms=timer.median(args.warmup), peak_mib=C.peak_mib(dev))


def run(args, dev=None):
    dev = dev or C.device()
    datasets = ["cora", "citeseer"] if args.dataset == "all" else [args.dataset]
    models = ["gcn", "gat", "gin"] if args.model == "all" else [args.model]
    precisions = ["f32", "f16"] if args.precision == "all" else [args.precision]
    results = []
    for name in datasets:
        data = C.load_planetoid(name, dev)
        if data is None:
            C.skip(f"{name}_planetoid.npz not found (set GNNC_DATASETS or provide "
                   f"../shared/datasets)")
            continue
        print(f"{name}: {data['num_nodes']} nodes, {data['edge_index'].shape[1]} edges, "
              f"stored Planetoid split, from {data['path']}")
        for model in models:
            pyg = None
            if not args.no_pyg:
                pyg = C.summarize([train_one("pyg", model, data, "f32", s, args, dev)
                                 for s in range(args.seeds)])
            for precision in precisions:
                ours = C.summarize([train_one("gnnc", model, data, precision, s, args, dev)
                                  for s in range(args.seeds)])
                row = dict(dataset=name, model=model, precision=precision, gnnc=ours, pyg_f32=pyg)
                if pyg:
                    row["acc_delta_points"] = abs(ours["acc_mean"] - pyg["acc_mean"])
                    row["epoch_speedup"] = pyg["epoch_ms"] / ours["epoch_ms"]
                    row["memory_ratio"] = ours["peak_mib"] / pyg["peak_mib"]
                results.append(row)
                p = pyg or dict(acc_mean=float("nan"), acc_std=float("nan"),
                                epoch_ms=float("nan"), peak_mib=float("nan"))
                print(f"  {model:3s} gnnc {precision}: acc {ours['acc_mean']:5.2f} ± "
                      f"{ours['acc_std']:4.2f}  epoch {ours['epoch_ms']:7.3f} ms  "
                      f"peak {ours['peak_mib']:8.1f} MiB | PyG f32: acc {p['acc_mean']:5.2f} ± "
                      f"{p['acc_std']:4.2f}  epoch {p['epoch_ms']:7.3f} ms  "
                      f"peak {p['peak_mib']:8.1f} MiB")
    return dict(device=C.gpu_name(dev), seeds=args.seeds, epochs=args.epochs,
                results=results)


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="cora", choices=["cora", "citeseer", "all"])
    p.add_argument("--model", default="gcn", choices=["gcn", "gat", "gin", "all"])
    p.add_argument("--precision", default="f32", choices=["f32", "f16", "all"])
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--epochs", type=int, default=200)
    p.add_argument("--warmup", type=int, default=10, help="epochs left out of the timing")
    p.add_argument("--eval-every", type=int, default=5)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--dropout", type=float, default=0.5)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--weight-decay", type=float, default=5e-4)
    p.add_argument("--no-pyg", action="store_true", help="skip the PyG baseline")
    p.add_argument("--out", help="write the results as JSON here")
    return p


if __name__ == "__main__":
    a = parser().parse_args()
    C.write_json(a.out, run(a))
