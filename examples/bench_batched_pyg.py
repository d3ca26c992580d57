#!/usr/bin/env python3
"""PyG and plain-PyTorch baselines for batches of small graphs.

The counterpart of `gnn-bench --batched`: the same batches (the TU-layout
.npz files `gnn-bench --dump-batches DIR` writes, or tu_PROTEINS.npz from
the datasets folder), types and widths (F = K = M), timed on a CUDA GPU
with random features (fixed seed). Per batch, type and width:

  layer cases (gcn, gin)
    pyg            PyG's layer forward, under torch.no_grad(), in every
                   configuration it accepts; the fastest whose output passes
                   the check is the baseline ("fastest"):
                     gcn: GCNConv(F, F) + ReLU, cached=False and cached=True
                     (the normalisation computed once, outside the timed
                     region), each with
                       edge_index         a [2, E] tensor (scatter)
                       edge_index_sorted  a torch_geometric.EdgeIndex sorted
                                          by destination
                       torch_csr          a torch.sparse CSR adjacency
                                          (torch.sparse.mm)
                       sparse_tensor      a torch_sparse.SparseTensor (when
                                          torch_sparse is installed)
                     gin: GINConv(Sequential(Linear(F, F), ReLU())), eps = 0,
                     with the same four adjacencies (no cache).
    torch_unfused  the unfused layer in plain PyTorch autograd: the
                   aggregation (A_hat X for gcn with A_hat = D^-1/2 (A+I)
                   D^-1/2, (A+I) X for gin), then F.linear and ReLU;
                   forward (autograd recording) and forward+backward (grads
                   of X, W and b by torch.autograd.grad with a fixed random
                   dY), backward = (fwd+bwd) - fwd. Aggregations tried:
                   torch_csr, torch_coo (torch.sparse.mm), index_add and
                   scatter (torch_geometric.utils.scatter); the fastest
                   forward+backward that passes the check is the baseline.
  readout cases (sum, mean, max)
    global_add_pool / global_mean_pool / global_max_pool on the batch
    vector (size = number of graphs given, so no host sync), forward and
    forward+backward (grad of X), backward = (fwd+bwd) - fwd.

Every output is checked once before timing against a float64 computation
on the same inputs (layers: forward and, for torch_unfused, the three
gradients; pools: forward, and the gradient of sum and mean; max: each
graph's gradient sums to dY, whichever node takes it). A failed check is
recorded ("check_ok": false) and that candidate is not picked as fastest;
an op that refuses a type (e.g. half on CUDA) is recorded as
"unsupported: ..." and skipped.

Timing: bench/torch_baseline.py's Timer (CUDA events, warm-ups, L2 flushed
before every run, median), at least --runs runs (default 50). Matching
summary: bench/batched_summary.py RESULTS.json OUT --pyg THIS.json.

Without torch, torch_geometric or a CUDA GPU the script prints a SKIP note
and exits 0 (writing {"skipped": why} to --out). --device cpu runs the
whole script on the CPU as a check of its code paths (times mean nothing).

usage: examples/bench_batched_pyg.py [--batches DIR] [--only NAMES] [FILE.npz ...]
                                     --out FILE [--types f32,f16] [--widths 16,...]
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import sys
import time
from pathlib import Path

import warnings

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "examples"))
from torch_baseline import Timer, summarize  # noqa: E402

TYPES = ("f32", "f16", "bf16")
DEFAULT_TYPES = "f32,f16"
DEFAULT_WIDTHS = "16,32,64,128,256"
LAYERS = ("gcn", "gin")
REDUCES = ("sum", "mean", "max")
POOL_FUNCTIONS = {"sum": "global_add_pool", "mean": "global_mean_pool",
                  "max": "global_max_pool"}
PYG_ADJACENCIES = ("edge_index", "edge_index_sorted", "torch_csr",
                   "sparse_tensor")
UNFUSED_AGGREGATIONS = ("torch_csr", "torch_coo", "index_add", "scatter")
# Allowed error relative to the float64 chain of absolute values (what each
# output element sums), per type: the rounding of the GEMM's output and of
# each term of a short aggregation.
TOLERANCE = {"f32": 1e-4, "f16": 1e-2, "bf16": 6e-2}
ABS_FLOOR = 1e-6
TU_MEMBERS = ("indptr", "indices", "num_nodes", "graph_ptr")


# --- reading a batch (numpy only) -----------------------------------------------

class BatchFileError(ValueError):
    """A batch file that breaks the TU layout; the message names the file,
    the member and the rule."""


def read_batch(path) -> dict:
    """Reads a TU-layout batch (.npz: block-diagonal CSR indptr, indices,
    num_nodes, graph_ptr; rows are destinations) and validates it. Returns
    name (the file's stem, gnn-bench's batch name), num_nodes, num_graphs,
    indptr (int64), indices (int64), graph_ptr (int64), edge_index (int64
    [2, E]: sources, then destinations, in CSR order), batch (int64, the
    graph of every node) and self_loops (how many edges are)."""
    path = Path(path)
    try:
        z = np.load(path)
    except Exception as e:  # noqa: BLE001 - named and re-raised
        raise BatchFileError(f"{path}: not a readable .npz archive: {e}") from e
    with z:
        missing = [m for m in TU_MEMBERS if m not in z.files]
        if missing:
            raise BatchFileError(f"{path}: missing member(s) {', '.join(missing)} "
                                 f"(the TU layout needs {', '.join(TU_MEMBERS)})")
        indptr = z["indptr"].astype(np.int64).ravel()
        indices = z["indices"].astype(np.int64).ravel()
        graph_ptr = z["graph_ptr"].astype(np.int64).ravel()
        num_nodes = int(z["num_nodes"])
        has_values = "data" in z.files

    def bad(member, rule):
        raise BatchFileError(f"{path}: member '{member}': {rule}")

    if num_nodes < 0:
        bad("num_nodes", f"must be >= 0, is {num_nodes}")
    if len(indptr) != num_nodes + 1:
        bad("indptr", f"length must be num_nodes + 1 = {num_nodes + 1}, is {len(indptr)}")
    if indptr[0] != 0:
        bad("indptr", f"must start at 0, starts at {int(indptr[0])}")
    step = np.diff(indptr)
    if (step < 0).any():
        bad("indptr", f"must not decrease (at row {int(np.argmax(step < 0))})")
    if indptr[-1] != len(indices):
        bad("indptr", f"last entry must be len(indices) = {len(indices)}, "
                      f"is {int(indptr[-1])}")
    if len(indices) and (indices.min() < 0 or indices.max() >= num_nodes):
        k = int(np.argmax((indices < 0) | (indices >= num_nodes)))
        bad("indices", f"entry {k} = {int(indices[k])} is outside [0, {num_nodes})")
    if len(graph_ptr) < 1 or graph_ptr[0] != 0 or graph_ptr[-1] != num_nodes:
        bad("graph_ptr", f"must run from 0 to num_nodes = {num_nodes}")
    if (np.diff(graph_ptr) < 0).any():
        bad("graph_ptr", "must not decrease")
    rows = np.repeat(np.arange(num_nodes, dtype=np.int64), step)
    graph = batch_vector(graph_ptr)
    if len(indices):
        leave = graph[rows] != graph[indices]
        if leave.any():
            k = int(np.argmax(leave))
            bad("indices", f"edge {k} ({int(indices[k])} -> {int(rows[k])}) "
                           f"leaves its graph {int(graph[rows[k]])}")
    return dict(name=path.stem, path=str(path), num_nodes=num_nodes,
                num_graphs=len(graph_ptr) - 1, indptr=indptr, indices=indices,
                graph_ptr=graph_ptr, edge_index=np.stack([indices, rows]),
                batch=graph, self_loops=int((rows == indices).sum()),
                edge_values_ignored=has_values)


def batch_vector(graph_ptr) -> np.ndarray:
    """PyG's `batch`: the graph of every node, from the node offsets."""
    graph_ptr = np.asarray(graph_ptr, dtype=np.int64)
    return np.repeat(np.arange(len(graph_ptr) - 1, dtype=np.int64), np.diff(graph_ptr))


def layer_adjacency(indptr, indices, layer):
    """The adjacency the unfused layer multiplies by, in CSR with sorted
    columns: gcn A_hat = D^-1/2 (A + I) D^-1/2 (D the degree of A + I, an
    edge already on the diagonal counting as well: A + I is taken
    literally), gin A + I. Returns (crow int64, col int64, values
    float64)."""
    if layer not in LAYERS:
        raise ValueError(f"layer must be one of {LAYERS}, is {layer!r}")
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    n = len(indptr) - 1
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    diag = np.arange(n, dtype=np.int64)
    r = np.concatenate([rows, diag])
    c = np.concatenate([indices, diag])
    order = np.lexsort((c, r))
    r, c = r[order], c[order]
    values = np.ones(len(r))
    if layer == "gcn":
        deg = np.bincount(r, minlength=n).astype(np.float64)
        inv = 1.0 / np.sqrt(deg)
        values = inv[r] * inv[c]
    crow = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(r, minlength=n), out=crow[1:])
    return crow, c, values


def parse_list(text, allowed=None, what="value"):
    items = [s.strip() for s in text.split(",") if s.strip()]
    if allowed is not None:
        for s in items:
            if s not in allowed:
                raise SystemExit(f"bench_batched_pyg: unknown {what} {s!r} "
                                 f"(one of {', '.join(allowed)})")
    return items


def parse_widths(text):
    try:
        widths = [int(w) for w in parse_list(text)]
    except ValueError:
        raise SystemExit(f"bench_batched_pyg: --widths must be integers, is {text!r}")
    if not widths or min(widths) <= 0:
        raise SystemExit(f"bench_batched_pyg: --widths must be positive, is {text!r}")
    return widths


def find_batches(files, batches_dir, only, datasets_dir):
    """(name, path) of every batch to run: the files given; else every .npz
    in batches_dir (those named in `only` if given); else the names in
    `only` (default tu_PROTEINS) looked up in datasets_dir. Names that
    cannot be found come back with path None."""
    if files:
        found = [(Path(f).stem, Path(f)) for f in files]
    elif batches_dir:
        d = Path(batches_dir)
        if not d.is_dir():
            raise SystemExit(f"bench_batched_pyg: --batches {d}: not a directory")
        found = [(p.stem, p) for p in sorted(d.glob("*.npz"))]
        if only:
            have = dict(found)
            found = [(n, have.get(n)) for n in only]
    else:
        names = only or ["tu_PROTEINS"]
        found = []
        for n in names:
            p = Path(datasets_dir) / f"{n}.npz" if datasets_dir else None
            found.append((n, p if p is not None and p.is_file() else None))
    return found


# --- torch pieces -----------------------------------------------------------------

def torch_dtype(torch, type_name):
    return {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}[type_name]


class CpuTimer:
    """Timer's interface on the CPU (perf_counter): --device cpu only, a
    check of the script's paths."""

    def __init__(self, warmups, runs):
        self.warmups, self.runs = warmups, runs

    def time(self, fn):
        for _ in range(self.warmups):
            fn()
        times = []
        for _ in range(self.runs):
            t0 = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t0) * 1e3)
        return summarize(times, self.warmups)


def failure(e, kind=None):
    """'unsupported: Type: first line' for an op that refuses its inputs
    (RuntimeError, NotImplementedError, TypeError), else 'error: ...'."""
    if kind is None:
        kind = ("unsupported" if isinstance(e, (RuntimeError, NotImplementedError, TypeError))
                else "error")
    lines = str(e).strip().splitlines()
    first = lines[0] if lines else type(e).__name__
    if "out of memory" in str(e).lower():
        return "error: out of memory"
    return f"{kind}: {type(e).__name__}: {first[:300]}"


def compare(got, ref, mag, tol, what):
    """(ok, report): |got - ref| <= tol * mag + ABS_FLOOR elementwise."""
    got = got.detach().double()
    if not bool(got.isfinite().all()):
        return False, f"{what}: non-finite values"
    ratio = float(((got - ref).abs() / (tol * mag + ABS_FLOOR)).max()) if got.numel() else 0.0
    return ratio <= 1.0, f"{what} {ratio:.3g}"


def check_all(parts, tol):
    ok, reports = True, []
    for got, ref, mag, what in parts:
        o, r = compare(got, ref, mag, tol, what)
        ok &= o
        reports.append(r)
    return ok, ("largest error / allowed (%g * |terms| + %g): " % (tol, ABS_FLOOR)
                + ", ".join(reports))


class Graph:
    """One batch on the device: the index tensors every candidate takes."""

    def __init__(self, torch, batch, dev):
        self.n = batch["num_nodes"]
        self.num_graphs = batch["num_graphs"]
        ei = torch.from_numpy(batch["edge_index"]).to(dev)
        self.edge_index = ei  # sources, destinations; sorted by destination
        self.src, self.dst = ei[0], ei[1]
        self.batch = torch.from_numpy(batch["batch"]).to(dev)
        self.counts = torch.from_numpy(np.diff(batch["graph_ptr"])).to(dev)
        self.indptr = torch.from_numpy(batch["indptr"]).to(dev)
        self.adj = {layer: layer_adjacency(batch["indptr"], batch["indices"], layer)
                    for layer in LAYERS}

    def csr(self, torch, layer, dtype, with_self=True, normalized=True):
        """The layer's A_hat (gcn) / A + I (gin) as a torch CSR tensor, or
        the plain adjacency (with_self=False: ones, no diagonal)."""
        dev = self.src.device
        if not with_self:
            vals = torch.ones(self.src.numel(), dtype=dtype, device=dev)
            return torch.sparse_csr_tensor(self.indptr, self.src, vals, (self.n, self.n),
                                           check_invariants=True)
        crow, col, vals = self.adj[layer]
        return torch.sparse_csr_tensor(torch.from_numpy(crow).to(dev),
                                       torch.from_numpy(col).to(dev),
                                       torch.from_numpy(vals).to(dev, dtype),
                                       (self.n, self.n), check_invariants=True)

    def coo_parts(self, torch, layer, dtype):
        """(destination, source, value) of every term of the aggregation."""
        crow, col, vals = self.adj[layer]
        dev = self.src.device
        r = np.repeat(np.arange(self.n, dtype=np.int64), np.diff(crow))
        return (torch.from_numpy(r).to(dev), torch.from_numpy(col).to(dev),
                torch.from_numpy(vals).to(dev, dtype))


def reference_layer(torch, g, layer, x, w, b, dy):
    """The float64 layer on the same inputs: Y = ReLU(agg(X) W^T + b), the
    same chain over absolute values (what each element's error scales
    with: "mags", for Y and for the gradients), and grads(mask): dX, dW and
    db for dY masked by a candidate's own ReLU mask (Y > 0), so that an
    element whose pre-activation rounds to the other side of 0 does not
    count against the backward."""
    dst, src, val = g.coo_parts(torch, layer, torch.float64)

    def agg(h):
        return torch.zeros_like(h).index_add_(0, dst, h[src] * val[:, None])

    def agg_t(h):
        return torch.zeros_like(h).index_add_(0, src, h[dst] * val[:, None])

    x64, w64, b64, dy64 = x.double(), w.double(), b.double(), dy.double()
    ax = agg(x64)
    y = torch.relu(ax @ w64.t() + b64)
    ady, aw = dy64.abs(), w64.abs()
    agg_abs = agg(x64.abs())
    mags = dict(y=agg_abs @ aw.t() + b64.abs(), gx=agg_t(ady @ aw), gw=ady.t() @ agg_abs,
                gb=ady.sum(0))

    def grads(mask):
        dz = dy64 * mask
        return dict(gx=agg_t(dz @ w64), gw=dz.t() @ ax, gb=dz.sum(0))

    return y, mags, grads


def pyg_layer(layer, width, cached, w, b, dtype):
    import torch
    from torch_geometric.nn import GCNConv, GINConv
    if layer == "gcn":
        m = GCNConv(width, width, cached=cached)
        lin, bias = m.lin, m
    else:
        m = GINConv(torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU()))
        lin, bias = m.nn[0], m.nn[0]
    with torch.no_grad():
        lin.weight.copy_(w.float())
        bias.bias.copy_(b.float())
    m = m.to(w.device)
    return m.half() if dtype == torch.float16 else m.to(dtype)


def pyg_adjacency(torch, g, kind, layer, dtype):
    """The graph in the form `kind` for a PyG layer; raises when this PyG
    lacks it."""
    if kind == "edge_index":
        return g.edge_index
    if kind == "edge_index_sorted":
        from torch_geometric import EdgeIndex
        return EdgeIndex(g.edge_index, sparse_size=(g.n, g.n), sort_order="col")
    if kind == "torch_csr":
        # adj_t: rows are destinations, as stored; GCNConv normalises it.
        return g.csr(torch, layer, dtype, with_self=False)
    if kind == "sparse_tensor":
        import torch_geometric.typing as tgt
        if not tgt.WITH_TORCH_SPARSE:
            raise ModuleNotFoundError("torch_sparse is not installed")
        from torch_sparse import SparseTensor
        return SparseTensor(row=g.dst, col=g.src, sparse_sizes=(g.n, g.n))
    raise ValueError(kind)


def unfused_aggregation(torch, g, layer, kind, dtype):
    """agg(h) = A_hat h (gcn) or (A + I) h (gin) by `kind`."""
    if kind in ("torch_csr", "torch_coo"):
        a = g.csr(torch, layer, dtype)
        if kind == "torch_coo":
            a = a.to_sparse_coo().coalesce()
        return lambda h: torch.sparse.mm(a, h)
    if layer == "gin":
        # (A + I) h: the neighbours' rows summed onto h, no multiply.
        e_src, e_dst = g.src, g.dst
        if kind == "index_add":
            return lambda h: h.index_add(0, e_dst, h[e_src])
        from torch_geometric.utils import scatter
        return lambda h: h + scatter(h[e_src], e_dst, 0, dim_size=g.n, reduce="sum")
    dst, src, val = g.coo_parts(torch, layer, dtype)
    if kind == "index_add":
        return lambda h: torch.zeros_like(h).index_add_(0, dst, h[src] * val[:, None])
    from torch_geometric.utils import scatter
    return lambda h: scatter(h[src] * val[:, None], dst, 0, dim_size=g.n, reduce="sum")


def fastest(candidates, key):
    best = None
    for name, r in candidates.items():
        t = r.get(key)
        if r.get("status") == "ok" and r.get("check_ok") and t is not None:
            if best is None or t["median"] < candidates[best][key]["median"]:
                best = name
    return best


def run_layer_case(torch, timer, g, layer, type_name, width, seed, has_sparse):
    F = torch.nn.functional
    dev = g.src.device
    dtype = torch_dtype(torch, type_name)
    tol = TOLERANCE[type_name]
    gen = torch.Generator(device="cpu").manual_seed(seed)
    x = (torch.rand(g.n, width, generator=gen) * 2 - 1).to(dev, dtype)
    bound = 1 / math.sqrt(width)
    w = ((torch.rand(width, width, generator=gen) * 2 - 1) * bound).to(dev, dtype)
    b = ((torch.rand(width, generator=gen) * 2 - 1) * bound).to(dev, dtype)
    dy = (torch.rand(g.n, width, generator=gen) * 2 - 1).to(dev, dtype)
    ref_y, mag, ref_grads = reference_layer(torch, g, layer, x, w, b, dy)

    record = {"layer": layer, "type": type_name, "width": width}
    pyg = {}
    configs = [(a, c) for a in PYG_ADJACENCIES for c in ((False, True) if layer == "gcn"
                                                        else (False,))]
    for adjacency, cached in configs:
        name = adjacency + ("_cached" if cached else "")
        r = {"adjacency": adjacency, "cached": cached}
        try:
            if adjacency == "sparse_tensor" and not has_sparse:
                raise ModuleNotFoundError("torch_sparse is not installed")
            m = pyg_layer(layer, width, cached, w, b, dtype)
            adj = pyg_adjacency(torch, g, adjacency, layer, dtype)
            if layer == "gcn":
                def fn(m=m, adj=adj):
                    with torch.no_grad():
                        return torch.relu(m(x, adj))
            else:
                def fn(m=m, adj=adj):
                    with torch.no_grad():
                        return m(x, adj)
            y = fn()
            r["check_ok"], r["check_report"] = check_all([(y, ref_y, mag["y"], "Y")], tol)
            del y
            r["time_ms"] = timer.time(fn)
            r["status"] = "ok"
        except ModuleNotFoundError as e:
            r["status"] = f"unavailable: {e}"
        except Exception as e:  # noqa: BLE001 - recorded
            r["status"] = failure(e)
        pyg[name] = r
    best = fastest(pyg, "time_ms")
    record["pyg"] = {"candidates": pyg, "fastest": best,
                     "forward_ms": pyg[best]["time_ms"]["median"] if best else None}

    unfused = {}
    for kind in UNFUSED_AGGREGATIONS:
        r = {}
        try:
            agg = unfused_aggregation(torch, g, layer, kind, dtype)
            xr = x.detach().clone().requires_grad_()
            wr = w.detach().clone().requires_grad_()
            br = b.detach().clone().requires_grad_()

            def forward(agg=agg, xr=xr, wr=wr, br=br):
                return F.relu(F.linear(agg(xr), wr, br))

            def forward_backward(forward=forward, xr=xr, wr=wr, br=br):
                return torch.autograd.grad(forward(), (xr, wr, br), dy)

            y = forward()
            gx, gw, gb = torch.autograd.grad(y, (xr, wr, br), dy)
            ref = ref_grads((y > 0).double())
            r["check_ok"], r["check_report"] = check_all(
                [(y, ref_y, mag["y"], "Y"), (gx, ref["gx"], mag["gx"], "dX"),
                 (gw, ref["gw"], mag["gw"], "dW"), (gb, ref["gb"], mag["gb"], "db")], tol)
            del y, gx, gw, gb
            r["forward"] = timer.time(forward)
            r["forward_backward"] = timer.time(forward_backward)
            r["status"] = "ok"
        except Exception as e:  # noqa: BLE001 - recorded
            r["status"] = failure(e)
        unfused[kind] = r
    best = fastest(unfused, "forward_backward")
    out = {"candidates": unfused, "fastest": best, "forward_ms": None,
           "forward_backward_ms": None, "backward_ms": None}
    if best:
        fwd = unfused[best]["forward"]["median"]
        both = unfused[best]["forward_backward"]["median"]
        out.update(forward_ms=fwd, forward_backward_ms=both, backward_ms=both - fwd)
    record["torch_unfused"] = out
    return record


def run_readout_case(torch, timer, g, reduce, type_name, width, seed):
    import torch_geometric.nn as pygnn
    dev = g.src.device
    dtype = torch_dtype(torch, type_name)
    tol = TOLERANCE[type_name]
    pool = getattr(pygnn, POOL_FUNCTIONS[reduce])
    gen = torch.Generator(device="cpu").manual_seed(seed + 1)
    x = (torch.rand(g.n, width, generator=gen) * 2 - 1).to(dev, dtype)
    dy = (torch.rand(g.num_graphs, width, generator=gen) * 2 - 1).to(dev, dtype)
    record = {"reduce": reduce, "type": type_name, "width": width,
              "function": POOL_FUNCTIONS[reduce], "status": None}
    try:
        xr = x.detach().clone().requires_grad_()

        def forward():
            return pool(xr, g.batch, size=g.num_graphs)

        def forward_backward():
            return torch.autograd.grad(forward(), (xr,), dy)

        # Reference: segment_reduce over the node ranges in float64 (empty
        # graphs give 0, as PyG's pools do).
        x64 = x.double()
        mode = {"sum": "sum", "mean": "mean", "max": "max"}[reduce]
        ref = torch.segment_reduce(x64, mode, lengths=g.counts, unsafe=True)
        empty = (g.counts == 0)[:, None]
        ref = torch.where(empty, torch.zeros_like(ref), ref)
        mag = torch.segment_reduce(x64.abs(), mode, lengths=g.counts, unsafe=True)
        mag = torch.where(empty, torch.zeros_like(mag), mag)
        y = forward()
        (gx,) = torch.autograd.grad(y, (xr,), dy)
        dy64 = dy.double()
        scale = torch.ones(g.num_graphs, dtype=torch.float64, device=dev)
        if reduce == "mean":
            scale = 1.0 / g.counts.clamp(min=1).double()
        parts = [(y, ref, mag, "Y")]
        if reduce == "max":
            # Whichever node takes a maximum's gradient, a graph's column
            # sums to dY (ties may split it).
            per_graph = torch.zeros(g.num_graphs, width, dtype=torch.float64, device=dev)
            per_graph.index_add_(0, g.batch, gx.double())
            want = torch.where(empty, torch.zeros_like(dy64), dy64)
            parts.append((per_graph, want, dy64.abs(), "sum of dX per graph"))
        else:
            want = (dy64 * scale[:, None])[g.batch]
            parts.append((gx, want, want.abs(), "dX"))
        record["check_ok"], record["check_report"] = check_all(parts, tol)
        del y, gx
        record["forward"] = timer.time(forward)
        record["forward_backward"] = timer.time(forward_backward)
        fwd, both = record["forward"]["median"], record["forward_backward"]["median"]
        record.update(forward_ms=fwd, forward_backward_ms=both, backward_ms=both - fwd,
                      status="ok")
    except Exception as e:  # noqa: BLE001 - recorded
        record["status"] = failure(e)
        record.update(forward_ms=None, forward_backward_ms=None, backward_ms=None)
    return record


# --- driver -----------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog=__doc__.split("\n", 2)[2],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="*", metavar="FILE.npz",
                   help="batch files (TU layout); the name is the file's stem")
    p.add_argument("--batches", metavar="DIR",
                   help="every DIR/<name>.npz (gnn-bench --dump-batches DIR)")
    p.add_argument("--only", default="", metavar="NAMES",
                   help="comma-separated batch names: within --batches DIR, or "
                        "looked up in the datasets folder (default tu_PROTEINS)")
    p.add_argument("--datasets", metavar="DIR",
                   help="the datasets folder (default: $GNNC_DATASETS, else "
                        "../shared/datasets)")
    p.add_argument("--out", required=True, metavar="FILE", help="JSON results")
    p.add_argument("--types", default=DEFAULT_TYPES,
                   help="comma-separated f32,f16,bf16 (default %(default)s)")
    p.add_argument("--widths", default=DEFAULT_WIDTHS,
                   help="comma-separated widths F = K = M (default %(default)s)")
    p.add_argument("--layers", default=",".join(LAYERS),
                   help="comma-separated gcn,gin (default %(default)s)")
    p.add_argument("--reduces", default=",".join(REDUCES),
                   help="comma-separated pools sum,mean,max (default %(default)s)")
    p.add_argument("--warmups", type=int, default=10, help="default %(default)s")
    p.add_argument("--runs", type=int, default=50,
                   help="timed runs per measurement, all of them kept (default "
                        "%(default)s)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-flush", action="store_true",
                   help="do not overwrite the L2 before every run")
    p.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                   help="cpu: run every path on the CPU to check the script "
                        "(times mean nothing)")
    return p.parse_args(argv)


def write(path, doc):
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


def skip(out, why):
    print(f"SKIP: bench_batched_pyg: {why}")
    write(out, {"tool": "bench_batched_pyg", "format_version": 1, "skipped": why,
                "layer_cases": [], "readout_cases": []})
    return 0


def log_case(rec):
    def ms(v):
        return "-" if v is None else "%.4f" % v
    if "layer" in rec:
        p, u = rec["pyg"], rec["torch_unfused"]
        print("%-14s %-4s %4d %-3s | PyG %s ms (%s) | torch fwd %s bwd %s ms (%s)"
              % (rec["batch"][:14], rec["type"], rec["width"], rec["layer"],
                 ms(p["forward_ms"]), p["fastest"], ms(u["forward_ms"]),
                 ms(u["backward_ms"]), u["fastest"]), flush=True)
    else:
        print("%-14s %-4s %4d %-4s| %s fwd %s bwd %s ms%s"
              % (rec["batch"][:14], rec["type"], rec["width"], rec["reduce"],
                 rec["function"], ms(rec["forward_ms"]), ms(rec["backward_ms"]),
                 "" if rec["status"] == "ok" else " " + rec["status"][:80]), flush=True)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    types = parse_list(args.types, TYPES, "type")
    widths = parse_widths(args.widths)
    layers = parse_list(args.layers, LAYERS, "layer")
    reduces = parse_list(args.reduces, REDUCES, "reduce")
    if args.runs < 1 or args.warmups < 0:
        raise SystemExit("bench_batched_pyg: --runs must be >= 1 and --warmups >= 0")
    try:
        import torch
    except ImportError as e:
        return skip(args.out, f"torch is not installed ({e})")
    try:
        import torch_geometric
    except ImportError as e:
        return skip(args.out, f"torch_geometric is not installed ({e})")
    if args.device == "cuda" and not torch.cuda.is_available():
        return skip(args.out, "no CUDA GPU visible to torch")
    import gnn_common
    import torch_geometric.typing as tgt
    for noise in ("Sparse CSR tensor support is in beta",
                  "Sparse invariant checks are implicitly disabled"):
        warnings.filterwarnings("ignore", message=".*" + noise)

    dev = torch.device(args.device)
    datasets = Path(args.datasets) if args.datasets else gnn_common.datasets_dir()
    batches = find_batches(args.files, args.batches, parse_list(args.only), datasets)
    if args.device == "cuda":
        props = torch.cuda.get_device_properties(0)
        l2 = int(getattr(props, "L2_cache_size", 50 << 20))
        timer = Timer(torch, args.warmups, args.runs, 0 if args.no_flush else 2 * l2,
                      min_runs=args.runs)
        device = {"name": torch.cuda.get_device_name(0),
                  "sm_count": props.multi_processor_count, "l2_bytes": l2}
    else:
        timer = CpuTimer(args.warmups, args.runs)
        device = {"name": "cpu (a check of the script; times mean nothing)"}
    has_sparse = bool(getattr(tgt, "WITH_TORCH_SPARSE", False))
    doc = {
        "tool": "bench_batched_pyg", "format_version": 1,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": device, "torch_version": torch.__version__,
        "torch_cuda_version": torch.version.cuda,
        "pyg_version": torch_geometric.__version__,
        "torch_sparse": has_sparse,
        "options": {"types": types, "widths": widths, "layers": layers,
                    "reduces": reduces, "warmups": args.warmups, "runs": args.runs,
                    "seed": args.seed, "flush_l2": not args.no_flush,
                    "device": args.device, "tolerance": TOLERANCE,
                    "pyg_forward": "torch.no_grad()",
                    "unfused_backward": "torch.autograd.grad of X, W, b"},
        "batches": [], "layer_cases": [], "readout_cases": [], "skipped": [],
    }
    print("device   %s, torch %s, PyG %s, torch_sparse %s"
          % (device["name"], torch.__version__, torch_geometric.__version__,
             "yes" if has_sparse else "no"), flush=True)
    start = time.time()
    for name, path in batches:
        if path is None:
            why = f"{name}.npz not found"
            print(f"SKIP: {name}: {why}")
            doc["skipped"].append({"batch": name, "why": why})
            continue
        try:
            batch = read_batch(path)
        except BatchFileError as e:
            print(f"SKIP: {e}")
            doc["skipped"].append({"batch": name, "why": str(e)})
            continue
        doc["batches"].append({"batch": name, "path": str(path), "graphs": batch["num_graphs"],
                               "nodes": batch["num_nodes"], "edges": len(batch["indices"]),
                               "self_loops": batch["self_loops"],
                               "edge_values_ignored": batch["edge_values_ignored"]})
        g = Graph(torch, batch, dev)
        for type_name in types:
            for width in widths:
                for layer in layers:
                    rec = {"batch": name}
                    rec.update(run_layer_case(torch, timer, g, layer, type_name, width,
                                              args.seed, has_sparse))
                    doc["layer_cases"].append(rec)
                    log_case(rec)
                for reduce in reduces:
                    rec = {"batch": name}
                    rec.update(run_readout_case(torch, timer, g, reduce, type_name, width,
                                                args.seed))
                    doc["readout_cases"].append(rec)
                    log_case(rec)
                # A run cut short keeps what it measured.
                write(args.out, doc)
        del g
        if args.device == "cuda":
            torch.cuda.empty_cache()
    doc["wall_seconds"] = time.time() - start
    write(args.out, doc)
    print("wrote    %s (%d layer cases, %d readout cases, %.0f s)"
          % (args.out, len(doc["layer_cases"]), len(doc["readout_cases"]),
             doc["wall_seconds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
