"""A discrete-time dynamic GNN (T-GCN style) on snapshot sequences with
gnnc's kernels and, in the same run, the same model over torch_geometric's
GCNConv in PyG-Temporal's per-snapshot loop.

The model, per snapshot t of a window of consecutive snapshots:

    Z_t = ReLU(GCN(... ReLU(GCN(X_t, A_t)) ...))   one or two GCN layers
    H_t = GRU(Z_t, H_{t-1})                         per node, carried across time
    P_t = Linear(H_t)                               one value per node

GCN is PyG's GCNConv (D^-1/2 (A + I) D^-1/2 X W + b, gcn_norm with
in-degrees; edge weights where the data has them, an existing self loop
keeping its weight as add_remaining_self_loops does). This is the
"graph convolution, then a recurrent cell per node" form of T-GCN
(GCRN-M1 in Seo et al.'s terms); T-GCN proper runs the graph convolution
inside the GRU's gates. The loss is the MSE of P_t against the snapshot's
node targets, averaged over the window's snapshots; each window is one
Adam step (truncated backpropagation through time: the hidden state is
carried to the next window, detached). No dropout, so both libraries
compute the same losses.

Only the recurrence is sequential, so both models run everything else per
window: the GRU is a torch.nn.GRU over the window's S snapshots (sequence
length S, batch N: one cuDNN call; --recurrence step calls it once per
snapshot, --recurrence cell runs torch.gru_cell per snapshot on the same
weights; the default, auto, takes cell above 16,384 nodes, where cuDNN's
f32 GRU was the slower), the head and the loss run once over all of the window's
predictions. gnnc's model holds a window as [N, S, F] and runs each GCN
layer once for the whole window: one matmul (GCNConv's lin), one
aggregation (aggregate_window), bias and ReLU once. PyG's model keeps
PyG-Temporal's loop for the graph part (GCNConv snapshot by snapshot on
[N, F] slices of an [S, N, F] window) and stacks the outputs for the same
GRU and head. Earlier versions ran a torch.nn.GRUCell, the head and the
loss per snapshot in both models; the function is unchanged (the same
parameters, initialised alike: nn.GRU's weight_ih_l0 ... are GRUCell's
weight_ih ... and the same equations; the window loss, a mean over its
nodes and snapshots, is the mean of the snapshots' MSEs since every
snapshot has N nodes), tested against that formulation.

  python examples/train_dgnn.py --dataset rmat --scale 14 --snapshots 16 --compare
  python examples/train_dgnn.py --dataset england_covid --lib gnnc --json covid.json

Datasets (--dataset):
  england_covid  129 regions, 61 daily mobility graphs (weighted, directed,
                 a self loop per region). The file has no node features:
                 X_t = the --lags previous days' targets (standardised per
                 region with the training span's mean and std); target: the
                 day's standardised value y[t]. Edge weights are the stored
                 mobility counts (--no-edge-weight drops them).
  bitcoinalpha   the trust-rating stream cut into its 30-day windows
                 (snapshot_ptr_30d), one directed unweighted graph per window
                 (rater -> rated). Task: node-degree regression. X_t =
                 [log1p in-degree, log1p out-degree, mean rating received / 10,
                 mean rating given / 10] in window t; target: log1p of the
                 node's degree (in + out) in window t + 1.
  rmat           an evolving R-MAT graph generated with numpy (Graph500
                 a=0.57, b=c=0.19, --edge-factor * 2^--scale draws, made
                 undirected, duplicates and self loops dropped; fixed seed).
                 Each later snapshot removes --churn of the edges at random
                 and adds as many new R-MAT edges. X_t random normal;
                 synthetic target y_t = tanh(A_t^ X_t w) + 0.5 y_{t-1} with A_t^
                 the GCN-normalised adjacency with self loops and a fixed w.
The first --train-frac of the snapshots train; the rest are the test span,
evaluated once after training with the hidden state carried on from the
training span.

Data starts in host memory: before training, each window's features and
targets are arranged as one contiguous tensor each in the model's layout
(gnnc [N, S, F] and [N, S], PyG [S, N, F] and [S, N]; pinned on CUDA), and
inside the timed epoch every window moves to the device in two
non_blocking copies, the same bytes for both libraries. With --prefetch
(PiPAD's overlap of transfer and compute; 'auto', the default, turns it on
for gnnc and off for PyG, 'on' and 'off' set both) the next window's copies
(the next epoch's first window after the last) are queued on a side CUDA
stream while the current window computes; the compute stream waits for
them through an event and the tensors are record_stream'ed to it
(WindowFeed). Without it the copies run on the compute stream just before
the window. Graph structure is prepared once before training for both:
gnnc builds one gnnc.Graph per snapshot (self
loops added, GCN values in CSR order, or norm='both' on a symmetric
unweighted snapshot) and reuses it every epoch; PyG keeps each snapshot's
edge_index (and edge weights) on the device and normalises in GCNConv on
every call, as PyG-Temporal does. gnnc's per-window aggregation is one
function, aggregate_window(window, x). With --aggregate multi (the
default) it is one gnnc.snapshot_spmm over the window's [N, S, F]
features, on a gnnc.SnapshotGroup of the window built
before training (PiPAD's split: the edges the snapshots share are read once
for all of them): norm='both' when every snapshot of the window is
symmetric, else norm='left' with the features scaled by each snapshot's
deg^-1/2 first (gcn_norm's source factor, in-degrees). Snapshot groups take
no edge weights, so weighted data (england_covid's mobility counts), a
window of more than 64 snapshots or a library without snapshot groups runs
per snapshot (one gnnc.spmm each; --aggregate per-snapshot always does),
and the run says why. PyG runs its per-snapshot loop either way.

Both libraries start from the same weights (built once from the seed, loaded
into each). Prints, per run: dataset, library (+prefetch), precision, the
final training loss (mean over the last epoch's windows), the test loss,
the median epoch time (forward + backward + Adam step of every training
window with its copies, CUDA events, after --warmup epochs), peak GPU
memory, and the transfers: the bytes copied host-to-device per epoch, the
time of those copies alone (a pass that only copies, median of
--timing-reps), the epoch's compute with the data already on the device (a
pass over device-resident windows, median of --timing-reps epochs; both
passes run after the results above, and the second goes on training the
model) and the pipelined epoch (the median epoch above), with
transfer_hidden_fraction = clamp((copy_ms + resident_compute_ms -
pipelined_ms) / copy_ms, 0, 1) (None on the CPU, which copies nothing).
--compare runs both libraries (PyG twice under --prefetch auto: without,
'pyg', and with, 'pyg_prefetch') and prints the largest relative
difference of the per-epoch losses over the first --compare-epochs epochs
and the epoch time ratios PyG / gnnc. gnnc's run records the aggregation
it used (and the mean overlap rate of its groups) in the JSON. The datasets
come from $GNNC_DATASETS or ../shared/datasets; the script skips a dataset,
saying so, when its file is absent (R-MAT needs none). GNNC_EMULATE=1 runs
on the CPU with the kernels emulated (a check of the script only).
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

import gnn_common as C
import numpy as np
import torch
import torch.nn.functional as F

import gnnc


# --- datasets (host memory: numpy) --------------------------------------------

@dataclass
class Sequence:
    """A snapshot sequence on the host. Snapshot t: the directed edges
    src[t] -> dst[t] (int64, sources to destinations), their weights (float32)
    or None, features x[t] ([N, F]) and node targets y[t] ([N])."""

    name: str
    num_nodes: int
    src: List[np.ndarray]
    dst: List[np.ndarray]
    weight: List[Optional[np.ndarray]]
    x: np.ndarray  # [T, N, F] float32
    y: np.ndarray  # [T, N] float32
    train_end: int  # snapshots [0, train_end) train, the rest test
    note: str = ""

    @property
    def num_snapshots(self) -> int:
        return len(self.src)

    def edges(self) -> int:
        return sum(len(s) for s in self.src)


def train_end_of(t: int, frac: float) -> int:
    """Training snapshots: at least one, and one left for testing when t > 1."""
    return max(1, min(t - 1, int(round(frac * t)))) if t > 1 else t


def load_england_covid(args) -> Optional[Sequence]:
    path = C.find_dataset("temporal_england_covid.npz")
    if path is None:
        return None
    z = np.load(path)
    n, ptr = int(z["num_nodes"]), z["edge_ptr"]
    y_all = z["y"].astype(np.float64)  # [61, N] daily cases per region
    lags = args.lags
    steps = y_all.shape[0] - lags  # snapshots lags..60 have a full history
    train_end = train_end_of(steps, args.train_frac)
    # Standardise per region with the statistics of the days the training
    # span sees (its features and targets), not the test days.
    seen = y_all[:lags + train_end]
    z_all = (y_all - seen.mean(0)) / (seen.std(0) + 1e-10)
    src, dst, weight, x, y = [], [], [], [], []
    for t in range(lags, y_all.shape[0]):
        e0, e1 = int(ptr[t]), int(ptr[t + 1])
        src.append(z["src"][e0:e1].astype(np.int64))
        dst.append(z["dst"][e0:e1].astype(np.int64))
        weight.append(None if args.no_edge_weight else z["weight"][e0:e1].astype(np.float32))
        x.append(z_all[t - lags:t].T)  # [N, lags]: the previous days, oldest first
        y.append(z_all[t])
    return Sequence("england_covid", n, src, dst, weight,
                    np.stack(x).astype(np.float32), np.stack(y).astype(np.float32),
                    train_end, note=f"lagged targets ({lags} days) as features, "
                    f"{'unweighted' if args.no_edge_weight else 'mobility weights'}")


def load_bitcoinalpha(args) -> Optional[Sequence]:
    path = C.find_dataset("temporal_bitcoinalpha.npz")
    if path is None:
        return None
    z = np.load(path)
    n, ptr = int(z["num_nodes"]), z["snapshot_ptr_30d"]
    s_all, d_all = z["src"].astype(np.int64), z["dst"].astype(np.int64)
    r_all = z["rating"].astype(np.float64)
    windows = len(ptr) - 1
    src, dst, x, deg = [], [], [], []
    for t in range(windows):
        e0, e1 = int(ptr[t]), int(ptr[t + 1])
        s, d, r = s_all[e0:e1], d_all[e0:e1], r_all[e0:e1]
        # One edge per (rater, rated) pair in a window (the file has none
        # repeated; kept so that both libraries see a simple graph).
        _, first = np.unique(s * n + d, return_index=True)
        s, d, r = s[first], d[first], r[first]
        din = np.bincount(d, minlength=n).astype(np.float64)
        dout = np.bincount(s, minlength=n).astype(np.float64)
        rin = np.bincount(d, weights=r, minlength=n) / np.maximum(din, 1)
        rout = np.bincount(s, weights=r, minlength=n) / np.maximum(dout, 1)
        src.append(s)
        dst.append(d)
        x.append(np.stack([np.log1p(din), np.log1p(dout), rin / 10, rout / 10], 1))
        deg.append(np.log1p(din + dout))
    # Snapshot t predicts window t + 1's degree: the last window has no target.
    steps = windows - 1
    return Sequence("bitcoinalpha", n, src[:steps], dst[:steps], [None] * steps,
                    np.stack(x[:steps]).astype(np.float32),
                    np.stack(deg[1:]).astype(np.float32),
                    train_end_of(steps, args.train_frac),
                    note="30-day windows, node-degree regression (next window's "
                    "log1p degree)")


def sorted_unique(keys: np.ndarray) -> np.ndarray:
    """np.unique of 1-D integer keys, by sorting: numpy 2.4's np.unique
    hashes integers and took about 100 times as long on millions of int64
    keys (most of the 24 s of generating R-MAT scale 16 x 16 snapshots)."""
    keys = np.sort(keys)
    if len(keys) < 2:
        return keys
    return keys[np.concatenate(([True], keys[1:] != keys[:-1]))]


def not_in_sorted(keys: np.ndarray, table: np.ndarray) -> np.ndarray:
    """The keys (sorted, unique) that the sorted array `table` lacks:
    np.setdiff1d(keys, table) by binary search."""
    if len(table) == 0:
        return keys
    at = np.minimum(np.searchsorted(table, keys), len(table) - 1)
    return keys[table[at] != keys]


def rmat_keys(rng, scale: int, count: int, a=0.57, b=0.19, c=0.19) -> np.ndarray:
    """`count` R-MAT draws (Graph500 parameters) as undirected keys
    min * n + max, self loops dropped, duplicates removed (sorted)."""
    n = 1 << scale
    src = np.zeros(count, dtype=np.int64)
    dst = np.zeros(count, dtype=np.int64)
    for level in range(scale):
        r = rng.random(count)
        src |= (r > a + b).astype(np.int64) << level
        dst |= (((r > a) & (r <= a + b)) | (r > a + b + c)).astype(np.int64) << level
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    keep = lo != hi
    return sorted_unique(lo[keep] * n + hi[keep])


def evolving_rmat(scale: int, snapshots: int, churn: float, edge_factor: int,
                  seed: int) -> List[np.ndarray]:
    """The undirected edge keys of each snapshot: snapshot 0 is an R-MAT
    graph; each next one drops round(churn * E) of the previous one's edges
    at random and adds as many R-MAT edges it does not have (E stays)."""
    rng = np.random.default_rng(seed)
    keys = rmat_keys(rng, scale, edge_factor << scale)
    out = [keys]
    for _ in range(1, snapshots):
        k = int(round(churn * len(keys)))
        kept = np.delete(keys, rng.choice(len(keys), k, replace=False))
        new = np.empty(0, dtype=np.int64)
        while len(new) < k:
            cand = not_in_sorted(rmat_keys(rng, scale, 2 * (k - len(new)) + 64), kept)
            new = sorted_unique(np.concatenate([new, rng.permutation(cand)[:k - len(new)]]))
        keys = sorted_unique(np.concatenate([kept, new]))
        out.append(keys)
    return out


def load_rmat(args) -> Sequence:
    n = 1 << args.scale
    keys = evolving_rmat(args.scale, args.snapshots, args.churn, args.edge_factor,
                         args.seed)
    rng = np.random.default_rng(args.seed + 1)
    relabel = rng.permutation(n)  # as Graph500 does: hubs spread over the ids
    w_true = rng.standard_normal(args.features) / np.sqrt(args.features)
    src, dst, x, y = [], [], [], []
    prev = np.zeros(n)
    for k in keys:
        lo, hi = relabel[k // n], relabel[k % n]
        s, d = np.concatenate([lo, hi]), np.concatenate([hi, lo])  # both directions
        # By destination, then source (np.lexsort((s, d))'s order, in half
        # the time: one stable sort of one key).
        order = np.argsort(d * n + s, kind="stable")
        s, d = s[order], d[order]
        xt = rng.standard_normal((n, args.features)).astype(np.float32)
        # tanh(A^ X w) + 0.5 y_{t-1}, A^ = D^-1/2 (A + I) D^-1/2.
        proj = xt.astype(np.float64) @ w_true
        dinv = (np.bincount(d, minlength=n) + 1.0) ** -0.5
        agg = (np.bincount(d, weights=proj[s] * dinv[s], minlength=n) + proj * dinv) * dinv
        prev = np.tanh(agg) + 0.5 * prev
        src.append(s)
        dst.append(d)
        x.append(xt)
        y.append(prev.copy())
    return Sequence("rmat", n, src, dst, [None] * len(keys), np.stack(x),
                    np.stack(y).astype(np.float32),
                    train_end_of(len(keys), args.train_frac),
                    note=f"evolving R-MAT scale {args.scale}, churn {args.churn}, "
                    f"random features, synthetic target")


LOADERS = dict(england_covid=load_england_covid, bitcoinalpha=load_bitcoinalpha,
               rmat=load_rmat)
FILES = dict(england_covid="temporal_england_covid.npz",
             bitcoinalpha="temporal_bitcoinalpha.npz")


# --- snapshot graphs ----------------------------------------------------------

def add_remaining_self_loops(src, dst, weight, n):
    """PyG's add_remaining_self_loops on numpy arrays: [the edges that are not
    loops, one loop per node]; a loop the input has keeps its weight, the
    others weigh 1."""
    keep = src != dst
    loops = np.arange(n, dtype=np.int64)
    s = np.concatenate([src[keep], loops])
    d = np.concatenate([dst[keep], loops])
    if weight is None:
        return s, d, None
    loop_w = np.ones(n, dtype=np.float64)
    loop_w[src[~keep]] = weight[~keep]
    return s, d, np.concatenate([weight[keep].astype(np.float64), loop_w])


def gcn_values(src, dst, weight, n) -> np.ndarray:
    """PyG's gcn_norm per edge (in the given edge order): w / sqrt(deg[src] *
    deg[dst]), deg the weighted in-degree; f64."""
    deg = np.bincount(dst, weights=weight, minlength=n)
    inv = np.zeros(n)
    inv[deg > 0] = deg[deg > 0] ** -0.5
    return inv[src] * weight * inv[dst]


@dataclass
class GcnSnapshot:
    """One snapshot for gnnc: its graph with self loops and how to normalise
    it: norm='both' in the kernel (symmetric, unweighted), else PyG's GCN
    values per CSR edge (converted to a dtype once, on first use)."""

    graph: "gnnc.Graph"
    values: Optional[torch.Tensor]  # f32, CSR order; None: norm='both'
    weighted: bool = False  # the values carry edge weights
    _by_dtype: Dict[torch.dtype, torch.Tensor] = field(default_factory=dict)

    def values_as(self, dtype) -> torch.Tensor:
        v = self._by_dtype.get(dtype)
        if v is None:
            v = self._by_dtype[dtype] = self.values.to(dtype)
        return v


def gnnc_snapshot(src, dst, weight, n, dev) -> GcnSnapshot:
    s, d, w = add_remaining_self_loops(src, dst, weight, n)
    g = gnnc.Graph.from_edge_index(np.stack([s, d]), n, device=dev)
    if w is None:
        if g.is_symmetric:
            return GcnSnapshot(g, None)
        return GcnSnapshot(g, g.gcn_edge_values())  # PyG's values, CSR order
    vals = torch.from_numpy(gcn_values(s, d, w, n).astype(np.float32)).to(dev)
    return GcnSnapshot(g, vals[g.perm], weighted=True)  # edge-list order -> CSR order


#: The most snapshots one gnnc.SnapshotGroup holds.
MAX_GROUP = 64


@dataclass
class GcnWindow:
    """The snapshots of one window for gnnc and, when they are aggregated
    together, their gnnc.SnapshotGroup: norm='both' (every snapshot
    symmetric) or norm='left' after scaling the features by `dinv`
    ([N, S, 1]: each snapshot's in-degree^-1/2, self loops counted)."""

    snapshots: List[GcnSnapshot]
    group: Optional["gnnc.SnapshotGroup"] = None
    norm: str = "both"
    dinv: Optional[torch.Tensor] = None
    _by_dtype: Dict[torch.dtype, torch.Tensor] = field(default_factory=dict)

    def dinv_as(self, dtype) -> torch.Tensor:
        v = self._by_dtype.get(dtype)
        if v is None:
            v = self._by_dtype[dtype] = self.dinv.to(dtype)
        return v


def multi_unavailable(snapshots: List[GcnSnapshot], window: int) -> Optional[str]:
    """Why the snapshots cannot be aggregated by windows of `window`
    snapshots with one snapshot_spmm each, or None when they can."""
    if not gnnc._lib.has("gnnc_snapshot_group_create"):
        return f"{gnnc._lib.library_path()} has no snapshot groups (an older build)"
    if any(s.weighted for s in snapshots):
        return "the snapshots are weighted and snapshot groups take no edge weights"
    if window > MAX_GROUP:
        return f"windows of {window} snapshots exceed a group's {MAX_GROUP}"
    for t, s in enumerate(snapshots):
        why = unsorted_rows(s.graph.host.row_ptr, s.graph.host.col_idx)
        if why is not None:
            return f"snapshot {t} {why}, which a snapshot group cannot hold"
    return None


def unsorted_rows(row_ptr: np.ndarray, col_idx: np.ndarray) -> Optional[str]:
    """None when every row of the CSR lists its columns in strictly
    increasing order (what a snapshot group takes), else what is wrong
    ('repeats an edge' or 'has a row that is not sorted'). One pass over the
    edges: each edge against the one before it, except at a row's start.
    (gnnc's CSR from an edge list sorts each row, so a repeated edge sits
    next to its twin.)"""
    if len(col_idx) < 2:
        return None
    prev, cur = col_idx[:-1], col_idx[1:]
    bad_eq, bad_lt = cur == prev, cur < prev
    # Edge e + 1 opens a row: nothing before it in its row to compare with.
    starts = row_ptr[1:-1]
    starts = starts[(starts > 0) & (starts < len(col_idx))] - 1
    bad_eq[starts] = False
    bad_lt[starts] = False
    if bad_eq.any():
        return "repeats an edge"
    if bad_lt.any():
        return "has a row that is not sorted"
    return None


def gnnc_window(snapshots: List[GcnSnapshot], dev) -> GcnWindow:
    """The window of `snapshots` aggregated by one snapshot_spmm."""
    graphs = [s.graph for s in snapshots]
    group = gnnc.SnapshotGroup.from_csr([g.host.row_ptr for g in graphs],
                                        [g.host.col_idx for g in graphs],
                                        graphs[0].num_nodes, device=dev)
    if all(s.values is None for s in snapshots):
        return GcnWindow(snapshots, group, "both")
    # gcn_norm's deg^-1/2[src] on the features, deg^-1/2[dst] in the kernel
    # (left scaling by the row's degree: the in-degree, as gcn_norm's).
    deg = torch.stack([g.in_degrees() for g in graphs], dim=1).double()
    dinv = torch.where(deg > 0, deg.clamp_min(1).rsqrt(), torch.zeros_like(deg))
    return GcnWindow(snapshots, group, "left", dinv.float().unsqueeze(-1))


def aggregate_window(window, xs):
    """A_t^ x_t for every snapshot t of a window (A_t^ the GCN-normalised
    adjacency with self loops): `window` is a GcnWindow, or a list of
    GcnSnapshot; xs is the window's features stacked [N, S, F] (the model's
    form: one tensor in, one [N, S, F] tensor out) or a list of S [N, F]
    tensors in time order (a list of [N, F] aggregates out). The gnnc
    model's only sparse work: one snapshot_spmm over the window when it has
    a group, else one spmm per snapshot."""
    snapshots = window.snapshots if isinstance(window, GcnWindow) else window
    stacked = isinstance(xs, torch.Tensor)
    if stacked and xs.dim() != 3:
        raise ValueError(f"stacked features are [N, S, F], got {list(xs.shape)}")
    count = xs.shape[1] if stacked else len(xs)
    if len(snapshots) != count:
        raise ValueError(f"{len(snapshots)} graphs but {count} feature tensors")
    if isinstance(window, GcnWindow) and window.group is not None:
        x = xs if stacked else torch.stack(xs, dim=1)  # [N, S, F]
        if window.dinv is not None:
            x = x * window.dinv_as(x.dtype)
        y = gnnc.ops.snapshot_spmm(window.group, x, norm=window.norm)
        return y if stacked else list(y.unbind(1))
    out = []
    for s, x in zip(snapshots, xs.unbind(1) if stacked else xs):
        if s.values is None:
            out.append(gnnc.ops.spmm(s.graph, x, norm="both"))
        else:
            out.append(gnnc.ops.spmm(s.graph, x, s.values_as(x.dtype)))
    return torch.stack(out, dim=1) if stacked else out


class GnncGraphs:
    """gnnc's graphs of a sequence: a GcnSnapshot per snapshot and, for
    --aggregate multi, a GcnWindow with its group per window that the run
    uses (built here, before training; another window is built on first
    use). `aggregate` says what runs, `note` why multi does not."""

    def __init__(self, snapshots: List[GcnSnapshot], dev, aggregate: str,
                 window: int, windows_used=()):
        self.snapshots, self.dev = snapshots, dev
        self.note = None
        if aggregate == "multi":
            self.note = multi_unavailable(snapshots, window)
            if self.note is not None:
                aggregate = "per-snapshot"
        self.aggregate = aggregate
        self._windows: Dict[tuple, GcnWindow] = {}
        for w in windows_used:
            self.window(w)

    def __len__(self):
        return len(self.snapshots)

    def __getitem__(self, t) -> GcnSnapshot:
        return self.snapshots[t]

    def window(self, w) -> GcnWindow:
        key = tuple(w)
        win = self._windows.get(key)
        if win is None:
            snaps = [self.snapshots[t] for t in key]
            win = gnnc_window(snaps, self.dev) if self.aggregate == "multi" \
                else GcnWindow(snaps)
            self._windows[key] = win
        return win

    def overlap_rate(self) -> Optional[float]:
        """The mean overlap rate of the windows' groups (None without)."""
        rates = [w.group.overlap_rate for w in self._windows.values()
                 if w.group is not None]
        return float(np.mean(rates)) if rates else None


def pyg_snapshot(src, dst, weight, dev):
    """(edge_index, edge_weight) on the device, for torch_geometric's GCNConv."""
    ei = torch.from_numpy(np.stack([src, dst])).to(dev)
    return ei, (None if weight is None else torch.from_numpy(weight).to(dev))


def build_graphs(lib, seq: Sequence, dev, aggregate="multi", window=8):
    """gnnc: a GnncGraphs (per snapshot, and the groups of the windows of
    `window` snapshots that training and the test pass use); PyG: a list of
    (edge_index, edge_weight) per snapshot."""
    if lib == "gnnc":
        snaps = [gnnc_snapshot(s, d, w, seq.num_nodes, dev)
                 for s, d, w in zip(seq.src, seq.dst, seq.weight)]
        used = windows(0, seq.train_end, window) + windows(0, seq.num_snapshots, window)
        return GnncGraphs(snaps, dev, aggregate, window, used)
    return [pyg_snapshot(s, d, w, dev) for s, d, w in zip(seq.src, seq.dst, seq.weight)]


def window_graphs(graphs, w):
    """What the model takes for window `w`: gnnc's GcnWindow, or PyG's list."""
    return graphs.window(w) if isinstance(graphs, GnncGraphs) else [graphs[t] for t in w]


# --- the model ----------------------------------------------------------------

#: How the GRU runs over a window's S snapshots: 'sequence', one
#: torch.nn.GRU call (cuDNN runs the whole recurrence), 'step', one such
#: call per snapshot, or 'cell', torch.gru_cell per snapshot on the same
#: parameters (no cuDNN; what a GRUCell loop does). 'auto' takes 'sequence'
#: for graphs of at most AUTO_SEQUENCE_NODES nodes and 'cell' above: on an
#: H200, cuDNN's f32 GRU over a batch of 65,536 nodes made a scale-16 R-MAT
#: epoch about 30 ms slower for both libraries than the cell loop, while on
#: small graphs the one call saves launches. The same parameters and
#: function whichever runs.
RECURRENCES = ("auto", "sequence", "step", "cell")
AUTO_SEQUENCE_NODES = 16384


class TGCN(torch.nn.Module):
    """GCN layers per snapshot, a GRU per node across the snapshots, a linear
    head per node. The same parameters (names included) over either
    library's GCNConv. A window's tensors are node-major for gnnc (features
    [N, S, F], predictions [N, S]: snapshot_spmm's layout, the GRU batch
    first) and time-major for PyG ([S, N, F] and [S, N]: each snapshot's
    features contiguous for GCNConv, the GRU sequence first)."""

    def __init__(self, lib, in_ch, hidden, layers=2, recurrence="sequence",
                 num_nodes=None):
        super().__init__()
        if layers not in (1, 2):
            raise ValueError(f"layers must be 1 or 2, got {layers}")
        if recurrence not in RECURRENCES:
            raise ValueError(f"recurrence must be one of {RECURRENCES}, got {recurrence!r}")
        if recurrence == "auto":
            recurrence = "sequence" if (num_nodes or 0) <= AUTO_SEQUENCE_NODES else "cell"
        m = C.conv_module(lib)
        self.lib, self.recurrence = lib, recurrence
        self.convs = torch.nn.ModuleList(
            [m.GCNConv(in_ch if i == 0 else hidden, hidden) for i in range(layers)])
        self.gru = torch.nn.GRU(hidden, hidden, batch_first=(lib == "gnnc"))
        self.head = torch.nn.Linear(hidden, 1)

    @property
    def time_dim(self) -> int:
        """The snapshot dimension of the window's features and predictions."""
        return 1 if self.lib == "gnnc" else 0

    def encode_window(self, window, x):
        """gnnc: the GCN layers of the whole window, [N, S, F] -> [N, S, H]:
        per layer one matmul (GCNConv's lin), one aggregation over the
        window (aggregate_window), bias and ReLU once."""
        for conv in self.convs:
            h = aggregate_window(window, conv.lin(x))
            x = F.relu(h + conv.bias.to(h.dtype))
        return x

    def encode_snapshots(self, graphs, x):
        """PyG: GCNConv snapshot by snapshot (PyG-Temporal's loop) over
        [S, N, F]; the outputs stacked [S, N, H]."""
        zs = []
        for (ei, w), xt in zip(graphs, x.unbind(0)):
            for conv in self.convs:
                xt = F.relu(conv(xt, ei, w))
            zs.append(xt)
        return torch.stack(zs)

    def recur(self, z, h):
        """The GRU over the window's snapshots from hidden state h ([1, N, H]
        or None): the outputs of every step (z's layout) and the last state."""
        if self.recurrence == "sequence":
            return self.gru(z, h)
        if self.recurrence == "cell":
            g = self.gru
            state = h[0] if h is not None else None
            outs = []
            for zt in z.unbind(self.time_dim):
                if state is None:
                    state = zt.new_zeros(zt.shape[0], g.hidden_size)
                state = torch.gru_cell(zt, state, g.weight_ih_l0, g.weight_hh_l0,
                                       g.bias_ih_l0, g.bias_hh_l0)
                outs.append(state)
            return torch.stack(outs, dim=self.time_dim), state.unsqueeze(0)
        outs = []
        for zt in z.split(1, dim=self.time_dim):
            o, h = self.gru(zt, h)
            outs.append(o)
        return torch.cat(outs, dim=self.time_dim), h

    def forward(self, graphs, x, h=None):
        """The window's predictions, one per node and snapshot ([N, S] for
        gnnc, [S, N] for PyG), and the last hidden state ([1, N, H])."""
        z = self.encode_window(graphs, x) if self.lib == "gnnc" \
            else self.encode_snapshots(graphs, x)
        out, h = self.recur(z, h)
        return self.head(out).squeeze(-1), h


def initial_state(seq: Sequence, args):
    """The weights both libraries start from (gnnc's layers initialise as
    PyG's; the state is copied into each run's model)."""
    torch.manual_seed(args.seed)
    net = TGCN("gnnc", seq.x.shape[2], args.hidden, args.layers)
    return {k: v.clone() for k, v in net.state_dict().items()}


# --- data: host windows, copies and prefetch -----------------------------------

def windows(start, end, size):
    return [list(range(t, min(t + size, end))) for t in range(start, end, size)]


@dataclass
class HostWindows:
    """Windows of a sequence in host memory (pinned on CUDA), one contiguous
    features tensor and one targets tensor per window, in a model's layout:
    'nsf' (gnnc: [N, S, F] and [N, S]) or 'snf' (PyG: [S, N, F] and [S, N]).
    Arranged once before training, like the graphs; each window then moves
    to the device in two copies of the same bytes whatever the layout."""

    x: List[torch.Tensor]
    y: List[torch.Tensor]

    def __len__(self):
        return len(self.x)

    def nbytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.x + self.y)


def host_windows(seq: Sequence, wins, layout: str, precision, dev) -> HostWindows:
    x_all = torch.from_numpy(seq.x).to(C.feature_dtype(dev, precision))  # [T, N, F]
    y_all = torch.from_numpy(seq.y)  # [T, N]
    xs, ys = [], []
    for w in wins:
        if w != list(range(w[0], w[-1] + 1)):
            raise ValueError(f"a window is consecutive snapshots, got {w}")
        x, y = x_all[w[0]:w[-1] + 1], y_all[w[0]:w[-1] + 1]
        if layout == "nsf":
            x, y = x.transpose(0, 1), y.t()
        elif layout != "snf":
            raise ValueError(f"layout must be 'nsf' or 'snf', got {layout!r}")
        x, y = x.contiguous(), y.contiguous()
        if dev.type == "cuda":
            x, y = x.pin_memory(), y.pin_memory()
        xs.append(x)
        ys.append(y)
    return HostWindows(xs, ys)


class WindowFeed:
    """Brings the windows of a HostWindows to the device, in the order the
    caller asks for them.

    Without prefetch, get(i) copies window i's features and targets on the
    current stream (non_blocking from pinned memory: queued ahead of the
    window's compute, which waits for them). With prefetch (PiPAD's overlap
    of transfer and compute), get(i, then=j) first queues window j's copies
    on a side stream, where the copy engine runs them while window i
    computes on the current stream; when window j is asked for, the current
    stream waits for its copies (an event) and its tensors are marked as
    used there (record_stream), so that the caching allocator does not
    give their memory back to the side stream before that compute is done.
    On the CPU there are no streams and no copies (the host tensors are the
    "device" tensors); the order of calls is the same."""

    def __init__(self, host: HostWindows, dev, prefetch: bool):
        self.host, self.dev, self.prefetch = host, dev, prefetch
        self.stream = torch.cuda.Stream(device=dev) if prefetch and dev.type == "cuda" \
            else None
        self.pending: Dict[int, tuple] = {}

    def _copy(self, i):
        x, y = self.host.x[i], self.host.y[i]
        if self.stream is None:
            return x.to(self.dev, non_blocking=True), y.to(self.dev, non_blocking=True), None
        with torch.cuda.stream(self.stream):
            xd, yd = x.to(self.dev, non_blocking=True), y.to(self.dev, non_blocking=True)
            done = torch.cuda.Event()
            done.record(self.stream)
        return xd, yd, done

    def get(self, i: int, then: Optional[int] = None):
        """Window i's (features, targets) on the device, ready for the current
        stream; with prefetch, window `then`'s copies are queued first."""
        hit = self.pending.pop(i, None)
        x, y, done = hit if hit is not None else self._copy(i)
        if self.prefetch and then is not None and then not in self.pending:
            self.pending[then] = self._copy(then)
        if done is not None:
            stream = torch.cuda.current_stream(self.dev)
            stream.wait_event(done)
            x.record_stream(stream)
            y.record_stream(stream)
        return x, y

    def drop(self) -> None:
        """Forgets copies queued for windows nobody will ask for."""
        self.pending.clear()


# --- training -----------------------------------------------------------------

def train_step(net, opt, scaler, window_graph, x, y, h, precision, dev):
    """One window: forward, the loss (the mean over its nodes and snapshots,
    which is the mean of the snapshots' MSEs: every snapshot has N nodes),
    backward and the Adam step. Returns the loss and the hidden state to
    carry on, both detached."""
    opt.zero_grad(set_to_none=True)
    with C.amp_context(dev, precision):
        pred, h = net(window_graph, x, h)
    loss = F.mse_loss(pred.float(), y)
    scaler.scale(loss).backward()
    scaler.step(opt)
    scaler.update()
    return loss.detach(), h.detach()


def train_epoch(net, opt, scaler, graphs, train, fetch, precision, dev):
    """Every training window once, the hidden state carried from window to
    window (truncated backpropagation through time); fetch(i) gives window
    i's (features, targets) on the device. Returns the summed losses (a
    device scalar: no synchronisation inside the epoch)."""
    total = torch.zeros((), device=dev)
    h = None
    for i, w in enumerate(train):
        x, y = fetch(i)
        loss, h = train_step(net, opt, scaler, window_graphs(graphs, w), x, y, h,
                             precision, dev)
        total += loss
    return total


def time_copies(host: HostWindows, dev, reps: int) -> float:
    """Median milliseconds (over `reps`, after one untimed) of copying every
    window of `host` to the device, features and targets, as the feed
    does, with nothing else running."""
    times = []
    for _ in range(reps + 1):
        with C.Span(dev) as span:
            out = [(x.to(dev, non_blocking=True), y.to(dev, non_blocking=True))
                   for x, y in zip(host.x, host.y)]
        times.append(span.ms())
        del out
    return statistics.median(times[1:])


def time_resident(net, opt, scaler, graphs, train, host: HostWindows, precision,
                  dev, reps: int) -> float:
    """Median milliseconds (over `reps` epochs, after one untimed) of the
    training epoch with every window's data already on the device: the
    compute alone. It goes on training the model it is given."""
    resident = [(x.to(dev), y.to(dev)) for x, y in zip(host.x, host.y)]
    net.train()
    times = []
    for _ in range(reps + 1):
        with C.Span(dev) as span:
            train_epoch(net, opt, scaler, graphs, train, resident.__getitem__,
                        precision, dev)
        times.append(span.ms())
    return statistics.median(times[1:])


def hidden_fraction(copy_ms, resident_ms, pipelined_ms) -> Optional[float]:
    """The share of the copies' time that the pipelined epoch does not pay:
    clamp((copy + resident compute - pipelined) / copy, 0, 1); None when
    nothing was copied (the CPU)."""
    if copy_ms is None or resident_ms is None or not copy_ms > 0:
        return None
    return min(1.0, max(0.0, (copy_ms + resident_ms - pipelined_ms) / copy_ms))


def prefetch_of(lib: str, mode: str) -> bool:
    """--prefetch auto: on for gnnc, off for PyG; on or off: for both."""
    return lib == "gnnc" if mode == "auto" else mode == "on"


@contextlib.contextmanager
def full_f32(precision):
    """f32 runs compute in f32: cuDNN's GRU would use TF32 tensor cores on
    Ampere and later (matmuls already run in full f32 by default), as the
    GRUCell of earlier versions did not. The setting is restored after."""
    saved = torch.backends.cudnn.allow_tf32
    if precision == "f32":
        torch.backends.cudnn.allow_tf32 = False
    try:
        yield
    finally:
        torch.backends.cudnn.allow_tf32 = saved


def train_one(lib, seq: Sequence, graphs, init, precision, args, dev,
              prefetch: Optional[bool] = None):
    """Trains one library's model (prefetch None: --prefetch's choice for
    the library), evaluates the test span, measures the transfers; returns
    the run's results."""
    if prefetch is None:
        prefetch = prefetch_of(lib, args.prefetch)
    with full_f32(precision):
        return _train_one(lib, seq, graphs, init, precision, args, dev, prefetch)


def _train_one(lib, seq, graphs, init, precision, args, dev, prefetch):
    torch.manual_seed(args.seed)
    net = TGCN(lib, seq.x.shape[2], args.hidden, args.layers, args.recurrence,
               num_nodes=seq.num_nodes).to(dev)
    net.load_state_dict(init)
    opt = torch.optim.Adam(net.parameters(), lr=args.lr)
    scaler = C.grad_scaler(dev, precision)
    layout = "nsf" if lib == "gnnc" else "snf"
    train = windows(0, seq.train_end, args.window)
    host = host_windows(seq, train, layout, precision, dev)
    feed = WindowFeed(host, dev, prefetch)
    # Window i asks for window i + 1 and the last for the next epoch's first:
    # every epoch copies one epoch's data, and in the steady state every
    # copy overlaps the window before it.
    fetch = lambda i: feed.get(i, then=(i + 1) % len(train))  # noqa: E731
    timer = C.EpochTimer(dev)
    losses = []
    C.reset_peak(dev)
    for epoch in range(args.epochs):
        net.train()
        with timer:
            total = train_epoch(net, opt, scaler, graphs, train, fetch, precision, dev)
        losses.append(float(total) / len(train))
    feed.drop()
    peak = C.peak_mib(dev)
    # The test span, continuing from the training span's hidden state.
    net.eval()
    evals = windows(0, seq.num_snapshots, args.window)
    efeed = WindowFeed(host_windows(seq, evals, layout, precision, dev), dev, prefetch)
    err = torch.zeros((), dtype=torch.float64, device=dev)
    test_n, h = 0, None
    with torch.no_grad(), C.amp_context(dev, precision):
        for i, w in enumerate(evals):
            x, y = efeed.get(i, then=i + 1 if i + 1 < len(evals) else None)
            pred, h = net(window_graphs(graphs, w), x, h)
            per_snapshot = (pred.float() - y).square().mean(dim=1 - net.time_dim)
            first = max(0, seq.train_end - w[0])  # the window's first test snapshot
            if first < len(w):
                err += per_snapshot[first:].double().sum()
                test_n += len(w) - first
    epoch_ms = timer.median(args.warmup)
    out = dict(lib=lib, precision=precision, prefetch=prefetch,
               recurrence=net.recurrence, train_loss=losses[-1],
               test_loss=float(err) / test_n if test_n else None, losses=losses,
               epoch_ms=epoch_ms, first_epoch_ms=timer.times[0], peak_mib=peak,
               h2d_bytes_per_epoch=host.nbytes(), copy_ms=None,
               resident_compute_ms=None, pipelined_ms=epoch_ms,
               transfer_hidden_fraction=None)
    if args.timing_reps > 0:
        # After the results above: these passes go on training the model.
        copy_ms = time_copies(host, dev, args.timing_reps)
        resident_ms = time_resident(net, opt, scaler, graphs, train, host, precision,
                                    dev, args.timing_reps)
        out.update(copy_ms=copy_ms, resident_compute_ms=resident_ms,
                   transfer_hidden_fraction=hidden_fraction(
                       copy_ms if dev.type == "cuda" else None, resident_ms, epoch_ms))
    if isinstance(graphs, GnncGraphs):
        out.update(aggregate=graphs.aggregate, aggregate_note=graphs.note,
                   overlap_rate=graphs.overlap_rate())
    return out


def max_rel_diff(a, b):
    return max(abs(x - y) / max(abs(y), 1e-12) for x, y in zip(a, b))


def run_plan(args):
    """The runs of a dataset: (key, library, prefetch). --compare with
    --prefetch auto runs PyG both ways ('pyg' without, 'pyg_prefetch'
    with) beside gnnc with prefetch."""
    if not args.compare:
        return [(args.lib, args.lib, prefetch_of(args.lib, args.prefetch))]
    if args.prefetch == "auto":
        return [("pyg", "pyg", False), ("pyg_prefetch", "pyg", True), ("gnnc", "gnnc", True)]
    on = args.prefetch == "on"
    return [("pyg", "pyg", on), ("gnnc", "gnnc", on)]


def describe_transfers(r) -> str:
    mb = r["h2d_bytes_per_epoch"] / 1e6
    if r["copy_ms"] is None:
        return f"{mb:.2f} MB host->device per epoch"
    frac = r["transfer_hidden_fraction"]
    return (f"{mb:.2f} MB host->device per epoch; copies alone {r['copy_ms']:.2f} ms, "
            f"compute on resident data {r['resident_compute_ms']:.2f} ms, pipelined "
            f"epoch {r['pipelined_ms']:.2f} ms"
            + (": no copies to hide (CPU)" if frac is None
               else f": {100 * frac:.0f}% of the copy time hidden"))


def run_dataset(name, args, dev):
    t0 = time.perf_counter()
    seq = LOADERS[name](args)
    if seq is None:
        C.skip(f"{FILES[name]} not found (set GNNC_DATASETS or provide ../shared/datasets)")
        return dict(dataset=name, skipped=f"{FILES[name]} not found")
    load_s = time.perf_counter() - t0
    print(f"{name}: {seq.num_nodes} nodes, {seq.num_snapshots} snapshots "
          f"({seq.train_end} train, {seq.num_snapshots - seq.train_end} test), "
          f"{seq.edges() / seq.num_snapshots:.0f} edges per snapshot, "
          f"{seq.x.shape[2]} features; {seq.note} (prepared in {load_s:.2f} s)")
    init = initial_state(seq, args)
    row = dict(dataset=name, nodes=seq.num_nodes, snapshots=seq.num_snapshots,
               train_snapshots=seq.train_end, edges=seq.edges(),
               features=int(seq.x.shape[2]), runs={})
    built = {}
    for key, lib, prefetch in run_plan(args):
        if lib not in built:
            t0 = time.perf_counter()
            graphs = build_graphs(lib, seq, dev, args.aggregate, args.window)
            built[lib] = (graphs, time.perf_counter() - t0)
            if lib == "gnnc":
                how = graphs.aggregate if graphs.note is None else \
                    f"{graphs.aggregate} ({graphs.note})"
                rate = graphs.overlap_rate()
                print(f"  {name} gnnc aggregates {how}"
                      + ("" if rate is None else f"; mean overlap rate of its groups "
                                                 f"{rate:.3f}"))
        graphs, build_s = built[lib]
        r = train_one(lib, seq, graphs, init, args.precision, args, dev, prefetch)
        r["graph_build_s"] = build_s
        row["runs"][key] = r
        test = "n/a" if r["test_loss"] is None else f"{r['test_loss']:.5f}"
        label = f"{lib}{'+prefetch' if prefetch else ''}"
        print(f"  {name} {label:13s} {args.precision}: train loss {r['train_loss']:.6f}  "
              f"test loss {test}  epoch {r['epoch_ms']:8.2f} ms (first "
              f"{r['first_epoch_ms']:.1f})  peak {r['peak_mib']:8.1f} MiB  "
              f"graphs built in {build_s:.2f} s")
        print(f"  {name} {label:13s} transfers: {describe_transfers(r)}")
    built.clear()
    if args.compare:
        k = min(args.compare_epochs, args.epochs)
        runs = row["runs"]
        g = runs["gnnc"]
        row["compare_epochs"] = k
        row["loss_max_rel_diff"] = max_rel_diff(g["losses"][:k], runs["pyg"]["losses"][:k])
        row["epoch_ratio_pyg_over_gnnc"] = runs["pyg"]["epoch_ms"] / g["epoch_ms"]
        print(f"  {name} compare: largest relative loss difference over the first {k} "
              f"epochs {row['loss_max_rel_diff']:.2e}; epoch time PyG / gnnc "
              f"{row['epoch_ratio_pyg_over_gnnc']:.2f}x (PyG "
              f"{'with' if runs['pyg']['prefetch'] else 'without'} prefetch, gnnc "
              f"{'with' if g['prefetch'] else 'without'})")
        if "pyg_prefetch" in runs:
            p = runs["pyg_prefetch"]
            row["loss_max_rel_diff_pyg_prefetch"] = max_rel_diff(g["losses"][:k],
                                                                 p["losses"][:k])
            row["prefetch_loss_max_rel_diff_pyg"] = max_rel_diff(
                p["losses"], runs["pyg"]["losses"])
            row["epoch_ratio_pyg_prefetch_over_gnnc"] = p["epoch_ms"] / g["epoch_ms"]
            print(f"  {name} compare: both with prefetch: epoch time PyG / gnnc "
                  f"{row['epoch_ratio_pyg_prefetch_over_gnnc']:.2f}x; largest relative "
                  f"loss difference {row['loss_max_rel_diff_pyg_prefetch']:.2e} (PyG "
                  f"with and without prefetch: {row['prefetch_loss_max_rel_diff_pyg']:.2e})")
    return row


def run(args, dev=None):
    dev = dev or C.device()
    names = list(LOADERS) if args.dataset == "all" else [args.dataset]
    results = [run_dataset(name, args, dev) for name in names]
    return dict(device=C.gpu_name(dev), emulated=C.EMULATE, args=vars(args),
                results=results)


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dataset", default="rmat",
                   choices=["england_covid", "bitcoinalpha", "rmat", "all"])
    p.add_argument("--lib", default="gnnc", choices=["gnnc", "pyg"])
    p.add_argument("--compare", action="store_true",
                   help="run both libraries and compare their losses and epoch times")
    p.add_argument("--compare-epochs", type=int, default=5,
                   help="epochs whose losses --compare checks")
    p.add_argument("--aggregate", default="multi", choices=["multi", "per-snapshot"],
                   help="gnnc: one snapshot_spmm per window (falls back to "
                   "per-snapshot, saying why, where it cannot) or one spmm per "
                   "snapshot")
    p.add_argument("--prefetch", default="auto", choices=["auto", "on", "off"],
                   help="copy the next window's features and targets to the device on "
                   "a side stream while the current window computes; auto: gnnc on, "
                   "PyG off (with --compare, PyG runs both ways)")
    p.add_argument("--recurrence", default="auto", choices=list(RECURRENCES),
                   help="the GRU over a window in one torch.nn.GRU call (sequence), "
                   "one call per snapshot (step), torch.gru_cell per snapshot (cell), "
                   "or auto: sequence up to %d nodes, cell above; both libraries "
                   "alike" % AUTO_SEQUENCE_NODES)
    p.add_argument("--timing-reps", type=int, default=5,
                   help="repetitions of the copies-only and resident-compute passes "
                   "after training (0: none)")
    p.add_argument("--precision", default="f32", choices=["f32", "f16", "bf16"])
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3, help="epochs left out of the timing")
    p.add_argument("--window", type=int, default=8,
                   help="snapshots per window (one optimizer step)")
    p.add_argument("--layers", type=int, default=2, choices=[1, 2])
    p.add_argument("--hidden", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--train-frac", type=float, default=0.8)
    p.add_argument("--lags", type=int, default=8, help="england_covid: days of history")
    p.add_argument("--no-edge-weight", action="store_true",
                   help="england_covid: ignore the mobility weights")
    p.add_argument("--scale", type=int, default=14, help="rmat: 2^scale nodes")
    p.add_argument("--edge-factor", type=int, default=16, help="rmat: draws per node")
    p.add_argument("--snapshots", type=int, default=8, help="rmat: snapshots")
    p.add_argument("--churn", type=float, default=0.05,
                   help="rmat: fraction of edges replaced per snapshot")
    p.add_argument("--features", type=int, default=16, help="rmat: feature width")
    p.add_argument("--json", help="write the results as JSON here")
    return p


if __name__ == "__main__":
    a = parser().parse_args()
    C.write_json(a.json, run(a))
