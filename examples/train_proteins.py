"""Graph classification with GIN on TU PROTEINS (1,113 graphs): each
mini-batch is one block-diagonal graph of its graphs, node features are
one-hot node labels, global add pooling (torch index_add), then an MLP.
gnnc's GINConv and PyG's GINConv run the same model in the same run.

  python examples/train_proteins.py --seeds 5 --precision f32 --out proteins.json

With --cuda-graphs, f32 also trains with each batch's whole step (forward,
backward, Adam) captured once in a CUDA graph and replayed, for gnnc and
for PyG alike: on batches this small the eager step is bound by the host's
launches, not by the GPU.

Splits: a random 80/10/10 split of the graphs per seed. Batches: the
training graphs are cut into batches once per seed (the order of the
batches is shuffled every epoch, their composition is fixed), so each
batch's graph is built once. Prints test accuracy (at the best validation
accuracy), the median epoch time (all training batches, CUDA events, after
warm-up) and peak GPU memory. Needs tu_PROTEINS.npz from $GNNC_DATASETS or
../shared/datasets; skips, saying so, when it is absent.
"""
from __future__ import annotations

import argparse

import gnn_common as C
import numpy as np
import torch
import torch.nn.functional as F

import gnnc


class GIN(torch.nn.Module):
    def __init__(self, lib, in_ch, hidden, classes, layers=3, dropout=0.5):
        super().__init__()
        m = C.conv_module(lib)
        self.convs = torch.nn.ModuleList()
        for i in range(layers):
            mlp = torch.nn.Sequential(
                torch.nn.Linear(in_ch if i == 0 else hidden, hidden),
                torch.nn.BatchNorm1d(hidden), torch.nn.ReLU(),
                torch.nn.Linear(hidden, hidden), torch.nn.ReLU())
            self.convs.append(m.GINConv(mlp))
        self.head = torch.nn.Sequential(torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
                                        torch.nn.Dropout(dropout),
                                        torch.nn.Linear(hidden, classes))

    def forward(self, x, graph, batch, num_graphs):
        for conv in self.convs:
            x = conv(x, graph)
        pooled = torch.zeros(num_graphs, x.shape[1], dtype=x.dtype, device=x.device)
        pooled = pooled.index_add(0, batch, x)  # global add pooling
        return self.head(pooled)


def make_batch(data, graph_ids, dev):
    """The block-diagonal CSR (rows = destinations) of `graph_ids`."""
    gp, egp = data["graph_ptr"], data["edge_graph_ptr"]
    indptr, indices = data["indptr"], data["indices"]
    nodes, rows, cols, batch = [], [], [], []
    offset = 0
    for k, gid in enumerate(graph_ids):
        n0, n1 = gp[gid], gp[gid + 1]
        deg = np.diff(indptr[n0:n1 + 1])
        e0, e1 = indptr[n0], indptr[n1]
        nodes.append(np.arange(n0, n1))
        rows.append(np.repeat(np.arange(n1 - n0), deg) + offset)
        cols.append(indices[e0:e1] - n0 + offset)
        batch.append(np.full(n1 - n0, k))
        offset += n1 - n0
    nodes = torch.from_numpy(np.concatenate(nodes)).to(dev)
    rows, cols = np.concatenate(rows), np.concatenate(cols)
    edge_index = torch.from_numpy(np.stack([cols, rows])).to(dev)
    return dict(x=data["x"][nodes], edge_index=edge_index,
                graph=gnnc.Graph.from_edge_index(edge_index, offset, device=dev),
                batch=torch.from_numpy(np.concatenate(batch)).to(dev),
                y=data["y"][torch.as_tensor(graph_ids, device=dev)],
                num_graphs=len(graph_ids))


def splits(data, seed, batch_size, dev):
    g = len(data["graph_ptr"]) - 1
    order = np.random.default_rng(seed).permutation(g)
    n_tr, n_va = int(0.8 * g), int(0.1 * g)
    parts = dict(train=order[:n_tr], val=order[n_tr:n_tr + n_va], test=order[n_tr + n_va:])
    return {k: [make_batch(data, ids[i:i + batch_size], dev)
                for i in range(0, len(ids), batch_size)] for k, ids in parts.items()}


def capture_steps(net, opt, train, inputs, warmup=3):
    """One CUDA graph per training batch, each replaying the whole step
    (forward, loss, backward, Adam): the batches' composition is fixed, so
    every step of a batch launches the same kernels on the same buffers.
    Every batch first runs `warmup` eager steps on the capture stream (gnnc
    compiles and uploads what a graph needs on first use; torch's
    optimizer makes its state), then the captures run on that stream. The
    model's weights move during the warm-up steps as in any step."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())

    def step(b):
        out = net(*inputs(b))
        loss = F.cross_entropy(out.float(), b["y"])
        loss.backward()
        opt.step()

    with torch.cuda.stream(stream):
        for b in train:
            for _ in range(warmup):
                opt.zero_grad(set_to_none=True)
                step(b)
    torch.cuda.current_stream().wait_stream(stream)
    graphs = []
    for b in train:
        g = torch.cuda.CUDAGraph()
        opt.zero_grad(set_to_none=True)
        with torch.cuda.graph(g, stream=stream):
            step(b)
        graphs.append(g)
    torch.cuda.synchronize()
    return graphs


def train_one(lib, data, batches, precision, seed, args, dev, graphs=False):
    torch.manual_seed(seed)
    net = GIN(lib, data["x"].shape[1], args.hidden, data["num_classes"]).to(dev)
    # A captured Adam step keeps its step count on the GPU.
    opt = torch.optim.Adam(net.parameters(), lr=args.lr, capturable=graphs)
    scaler = C.grad_scaler(dev, precision)
    half = precision == "f16"
    hdtype = torch.float16 if dev.type == "cuda" else torch.bfloat16

    def inputs(b):
        x = b["x"].to(hdtype) if half else b["x"]
        return x, (b["graph"] if lib == "gnnc" else b["edge_index"]), b["batch"], b["num_graphs"]

    timer = C.EpochTimer(dev)
    best_val = best_test = 0.0
    rng = np.random.default_rng(seed)
    steps = None
    if graphs:
        net.train()
        steps = capture_steps(net, opt, batches["train"], inputs, warmup=2)
    C.reset_peak(dev)
    for epoch in range(args.epochs):
        net.train()
        with timer:
            for i in rng.permutation(len(batches["train"])):
                if steps is not None:
                    steps[i].replay()
                    continue
                b = batches["train"][i]
                opt.zero_grad(set_to_none=True)
                with C.amp_context(dev, precision):
                    out = net(*inputs(b))
                loss = F.cross_entropy(out.float(), b["y"])
                scaler.scale(loss).backward()
                scaler.step(opt)
                scaler.update()
        if (epoch + 1) % args.eval_every == 0 or epoch + 1 == args.epochs:
            net.eval()
            acc = {}
            with torch.no_grad(), C.amp_context(dev, precision):
                for k in ("val", "test"):
                    correct = total = 0
                    for b in batches[k]:
                        pred = net(*inputs(b)).argmax(-1)
                        correct += int((pred == b["y"]).sum())
                        total += b["num_graphs"]
                    acc[k] = correct / total
            if acc["val"] >= best_val:
                best_val, best_test = acc["val"], acc["test"]
    return dict(test_acc=100 * best_test, epoch_ms=timer.median(args.warmup),
                peak_mib=C.peak_mib(dev))


def run(args, dev=None):
    dev = dev or C.device()
    data = C.load_proteins(dev)
    if data is None:
        C.skip("tu_PROTEINS.npz not found (set GNNC_DATASETS or provide ../shared/datasets)")
        return dict(device=C.gpu_name(dev), skipped="tu_PROTEINS.npz not found", results=[])
    print(f"PROTEINS: {len(data['graph_ptr']) - 1} graphs, {data['x'].shape[0]} nodes, "
          f"{len(data['indices'])} edges, from {data['path']}")
    precisions = ["f32", "f16"] if args.precision == "all" else [args.precision]
    runs = {("pyg", "f32", False): []} if not args.no_pyg else {}
    runs.update({("gnnc", p, False): [] for p in precisions})
    if args.cuda_graphs and dev.type == "cuda":
        # f32 only: a captured step cannot hold the f16 runs' GradScaler
        # (its step reads the inf check on the host).
        if not args.no_pyg:
            runs[("pyg", "f32", True)] = []
        runs[("gnnc", "f32", True)] = []
    failed = {}
    for seed in range(args.seeds):
        batches = splits(data, seed, args.batch_size, dev)
        for (lib, p, g) in runs:
            if (lib, p, g) in failed:
                continue
            try:
                runs[(lib, p, g)].append(train_one(lib, data, batches, p, seed, args, dev, g))
            except RuntimeError as e:
                if not g:
                    raise
                # A library whose step cannot be captured: said, not hidden.
                failed[(lib, p, g)] = str(e).splitlines()[0]
                print(f"  {lib} {p}: capturing the step failed: {failed[(lib, p, g)]}")
                torch.cuda.synchronize()
    out = {f"{lib}_{p}" + ("_graphs" if g else ""): C.summarize(r)
           for (lib, p, g), r in runs.items() if (lib, p, g) not in failed}
    for k, s in out.items():
        print(f"  GIN {k:9s}: acc {s['acc_mean']:5.2f} ± {s['acc_std']:4.2f}  epoch "
              f"{s['epoch_ms']:7.2f} ms  peak {s['peak_mib']:7.1f} MiB")
    results = dict(out)
    for (lib, p, g), why in failed.items():
        results[f"{lib}_{p}_graphs_failed"] = why
    if "pyg_f32" in out:
        for p in precisions:
            results[f"speedup_{p}"] = out["pyg_f32"]["epoch_ms"] / out[f"gnnc_{p}"]["epoch_ms"]
            results[f"acc_delta_points_{p}"] = abs(out[f"gnnc_{p}"]["acc_mean"]
                                                   - out["pyg_f32"]["acc_mean"])
        if "gnnc_f32_graphs" in out:
            # Against PyG as run (eager), and against PyG captured the same way.
            g = out["gnnc_f32_graphs"]
            results["speedup_f32_graphs"] = out["pyg_f32"]["epoch_ms"] / g["epoch_ms"]
            results["acc_delta_points_f32_graphs"] = abs(g["acc_mean"]
                                                         - out["pyg_f32"]["acc_mean"])
            if "pyg_f32_graphs" in out:
                results["speedup_f32_graphs_vs_pyg_graphs"] = (
                    out["pyg_f32_graphs"]["epoch_ms"] / g["epoch_ms"])
    return dict(device=C.gpu_name(dev), seeds=args.seeds, epochs=args.epochs,
                batch_size=args.batch_size, results=results)


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--epochs", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--eval-every", type=int, default=5)
    p.add_argument("--batch-size", type=int, default=128)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--precision", default="all", choices=["f32", "f16", "all"])
    p.add_argument("--no-pyg", action="store_true")
    p.add_argument("--cuda-graphs", action="store_true",
                   help="also train f32 with each batch's step captured in a CUDA "
                        "graph and replayed (gnnc, and PyG unless --no-pyg)")
    p.add_argument("--out")
    return p


if __name__ == "__main__":
    a = parser().parse_args()
    C.write_json(a.out, run(a))
