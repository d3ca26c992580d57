"""Shared pieces of the PyTorch training examples: finding gnnc and the
datasets, loading them, models built from either gnnc.nn or
torch_geometric.nn, timing with CUDA events and peak memory.

Set GNNC_EMULATE=1 to run on the CPU with the kernels emulated in torch
(a check of the scripts' Python paths only; timings mean nothing then).
"""
from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
try:
    import gnnc  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "python"))
    import gnnc  # noqa: F401

import numpy as np
import torch
import torch.nn.functional as F

EMULATE = os.environ.get("GNNC_EMULATE") == "1"


def device() -> torch.device:
    if EMULATE:
        sys.path.insert(0, str(REPO / "python" / "tests"))
        import emulate_segment  # emulate's graphs and ops, and segment_matmul

        class _Patch:
            def setattr(self, obj, name, value):
                setattr(obj, name, value)
        emulate_segment.install(_Patch())
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise SystemExit("these examples need a CUDA GPU (GNNC_EMULATE=1 emulates the "
                         "kernels on the CPU to check the scripts)")
    return torch.device("cuda")


def datasets_dir() -> Path | None:
    env = os.environ.get("GNNC_DATASETS")
    for p in ([Path(env)] if env else []) + [REPO.parent / "shared" / "datasets",
                                              REPO / "shared" / "datasets"]:
        if p.is_dir():
            return p
    return None


def find_dataset(name: str) -> Path | None:
    d = datasets_dir()
    if d is None:
        return None
    p = d / name
    return p if p.is_file() else None


def skip(msg: str) -> None:
    print(f"SKIP: {msg}")


# --- datasets -----------------------------------------------------------------

def load_planetoid(name: str, dev):
    """cora / citeseer from <name>_planetoid.npz: edge_index (the stored
    symmetrised CSR, no self loops), row-normalised dense features, labels
    and the stored Planetoid split (train_idx, val_idx, test_idx)."""
    path = find_dataset(f"{name}_planetoid.npz")
    if path is None:
        return None
    z = np.load(path)
    n = int(z["num_nodes"])
    indptr, indices = z["indptr"].astype(np.int64), z["indices"].astype(np.int64)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    edge_index = torch.from_numpy(np.stack([indices, rows]))  # sources, destinations
    shape = tuple(int(s) for s in z["feat_shape"])
    x = np.zeros(shape, dtype=np.float32)
    fr = np.repeat(np.arange(shape[0]), np.diff(z["feat_indptr"]))
    x[fr, z["feat_indices"]] = z["feat_data"]
    s = x.sum(1, keepdims=True)
    x = x / np.where(s == 0, 1, s)
    labels = torch.from_numpy(z["labels"].astype(np.int64))
    split = {k: torch.from_numpy(z[f"{k}_idx"].astype(np.int64)) for k in ("train", "val", "test")}
    num_classes = int(labels.max()) + 1
    return dict(name=name, x=torch.from_numpy(x).to(dev), edge_index=edge_index.to(dev),
                y=labels.to(dev), split={k: v.to(dev) for k, v in split.items()},
                num_nodes=n, num_classes=num_classes, path=str(path))


def rmat_edge_index(scale: int, edge_factor: int = 16, seed: int = 0, dev="cuda",
                    a=0.57, b=0.19, c=0.19, symmetrize: bool = False):
    """A Graph500 R-MAT graph generated with torch on the device: 2^scale
    nodes, edge_factor * 2^scale directed edges (duplicates and self loops
    kept), node ids permuted at random. With `symmetrize`, PyG's
    to_undirected of it: every edge in both directions, duplicates removed
    (self loops kept), sorted by destination then source (about 31M edges
    at scale 20)."""
    n = 1 << scale
    e = edge_factor * n
    g = torch.Generator(device=dev).manual_seed(seed)
    src = torch.zeros(e, dtype=torch.int64, device=dev)
    dst = torch.zeros(e, dtype=torch.int64, device=dev)
    for level in range(scale):
        r = torch.rand(e, generator=g, device=dev)
        src_bit = r > (a + b)
        dst_bit = ((r > a) & (r <= a + b)) | (r > a + b + c)
        src |= src_bit.long() << level
        dst |= dst_bit.long() << level
        del r, src_bit, dst_bit
    perm = torch.randperm(n, generator=g, device=dev)
    src, dst = perm[src], perm[dst]
    if symmetrize:
        key = torch.cat([dst * n + src, src * n + dst])
        del src, dst
        key = torch.unique(key)  # sorted: by destination, then source
        dst, src = key // n, key % n
        del key
    return torch.stack([src, dst]), n


def load_proteins(dev):
    path = find_dataset("tu_PROTEINS.npz")
    if path is None:
        return None
    z = np.load(path)
    node_labels = z["node_labels"].astype(np.int64)
    x = np.eye(int(node_labels.max()) + 1, dtype=np.float32)[node_labels]
    gl = z["graph_labels"].astype(np.int64)
    gl = gl - gl.min()
    return dict(indptr=z["indptr"].astype(np.int64), indices=z["indices"].astype(np.int64),
                graph_ptr=z["graph_ptr"].astype(np.int64),
                edge_graph_ptr=z["edge_graph_ptr"].astype(np.int64),
                x=torch.from_numpy(x).to(dev), y=torch.from_numpy(gl).to(dev),
                num_classes=int(gl.max()) + 1, path=str(path))


# --- models -------------------------------------------------------------------

def conv_module(lib: str):
    if lib == "gnnc":
        import gnnc.nn as m
    else:
        import torch_geometric.nn as m
    return m


class NodeModel(torch.nn.Module):
    """Two graph convolutions (GCN, 4-head GAT or GIN) with ReLU/ELU and
    dropout, the same architecture over either library's layers."""

    def __init__(self, lib, model, in_ch, hidden, out_ch, dropout=0.5, heads=4):
        super().__init__()
        m = conv_module(lib)
        self.model, self.dropout = model, dropout
        if model == "gcn":
            self.c1 = m.GCNConv(in_ch, hidden, cached=True)
            self.c2 = m.GCNConv(hidden, out_ch, cached=True)
        elif model == "gat":
            self.c1 = m.GATConv(in_ch, hidden // heads, heads=heads, dropout=dropout)
            self.c2 = m.GATConv(hidden, out_ch, heads=1, concat=False, dropout=dropout)
        elif model == "gin":
            def mlp(i, o):
                return torch.nn.Sequential(torch.nn.Linear(i, hidden), torch.nn.ReLU(),
                                           torch.nn.Linear(hidden, o))
            self.c1 = m.GINConv(mlp(in_ch, hidden))
            self.c2 = m.GINConv(mlp(hidden, out_ch))
        else:
            raise ValueError(f"unknown model {model!r}")

    def forward(self, x, edge_index):
        x = F.dropout(x, self.dropout, self.training)
        x = self.c1(x, edge_index)
        x = F.elu(x) if self.model == "gat" else F.relu(x)
        x = F.dropout(x, self.dropout, self.training)
        return self.c2(x, edge_index)


# --- measuring ----------------------------------------------------------------

class Span:
    """Elapsed milliseconds of a region: CUDA events on a GPU, read (and
    waited for) only by ms(), perf_counter on the CPU."""

    def __init__(self, dev):
        self.cuda = dev.type == "cuda"

    def __enter__(self):
        if self.cuda:
            self.start = torch.cuda.Event(enable_timing=True)
            self.end = torch.cuda.Event(enable_timing=True)
            self.start.record()
        else:
            self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        if self.cuda:
            self.end.record()
        else:
            self.t1 = time.perf_counter()

    def ms(self) -> float:
        if self.cuda:
            self.end.synchronize()
            return self.start.elapsed_time(self.end)
        return (self.t1 - self.t0) * 1e3


class EpochTimer:
    """Times each epoch (a Span each, read at its end)."""

    def __init__(self, dev):
        self.dev = dev
        self.times = []

    def __enter__(self):
        self.span = Span(self.dev).__enter__()
        return self

    def __exit__(self, *exc):
        self.span.__exit__(*exc)
        self.times.append(self.span.ms())

    def median(self, warmup: int) -> float:
        t = self.times[warmup:] or self.times
        return statistics.median(t)


def reset_peak(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def peak_mib(dev) -> float:
    if dev.type != "cuda":
        return float("nan")
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() / 2**20


def gpu_name(dev) -> str:
    return torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu (emulated)"


def summarize(runs):
    """Mean and spread of the test accuracy over seeds, median epoch time and
    largest peak memory of training runs (dicts with test_acc, epoch_ms and
    peak_mib)."""
    accs = [r["test_acc"] for r in runs]
    return dict(acc_mean=statistics.mean(accs),
                acc_std=statistics.stdev(accs) if len(accs) > 1 else 0.0,
                epoch_ms=statistics.median(r["epoch_ms"] for r in runs),
                peak_mib=max(r["peak_mib"] for r in runs), seeds=len(runs))


def write_json(path, obj):
    if path:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as f:
            json.dump(obj, f, indent=2, default=str)
        print(f"wrote {path}")


HALF_DTYPES = {"f16": torch.float16, "bf16": torch.bfloat16}


def feature_dtype(dev, precision):
    """The dtype features are stored in for a run at `precision` (f16 is
    emulated in bf16 on the CPU)."""
    if precision == "f16" and dev.type != "cuda":
        return torch.bfloat16
    return HALF_DTYPES.get(precision, torch.float32)


def amp_context(dev, precision):
    """f16 / bf16: HalfGNN style, half-precision features and activations
    (autocast), f32 master weights."""
    if precision in HALF_DTYPES:
        return torch.autocast(dev.type, dtype=feature_dtype(dev, precision))
    import contextlib
    return contextlib.nullcontext()


def grad_scaler(dev, precision):
    return torch.amp.GradScaler(dev.type, enabled=(precision == "f16" and dev.type == "cuda"))


def optimizer(params, dev, lr=0.01):
    """Adam for the full-graph runs: on a GPU the fused implementation, one
    kernel for all parameters, which also takes GradScaler's overflow flag
    on the device, so an f16 step does not wait for the GPU to read it."""
    return torch.optim.Adam(params, lr=lr, fused=dev.type == "cuda")


def node_loss(out, y):
    """Mean cross entropy of every node's logits (in f32) against its label:
    log_softmax, then each label's entry. The value of F.cross_entropy,
    whose nll_loss reduces the whole graph in one thread block (on an H200
    at a million nodes 0.9 ms forward and 0.8 ms backward, the same for
    every library)."""
    logp = F.log_softmax(out.float(), dim=-1)
    return -logp.gather(1, y.unsqueeze(1)).mean()


def train_step(net, opt, scaler, x, graph, y, precision, dev):
    """One full-graph epoch of node classification: forward (autocast in
    f16 / bf16), node_loss, backward with loss scaling, optimizer step.
    Returns the loss without reading it."""
    opt.zero_grad(set_to_none=True)
    with amp_context(dev, precision):
        out = net(x, graph)
    loss = node_loss(out, y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    return loss
