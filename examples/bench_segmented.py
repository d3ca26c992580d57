#!/usr/bin/env python3
"""Segmented matmul from PyTorch: gnnc.segment_matmul against what PyTorch
and PyG offer without pyg_lib, then the RGCN layer.

Part 1, for each segment set of $GNNC_DATASETS/segments/*.csv (else
../shared/datasets/segments; one `Start,End` row per type), K = M in 32,
64, 128, 256, TF32 (torch.backends.cuda.matmul.allow_tf32 on for every
library) and f16:

- torch_loop: one torch.mm per type into slices of the output (backward:
  two per type, dX and dW);
- torch_bmm_padded: every type padded to the largest, one torch.bmm (the
  copies into and out of the padded tensors counted; skipped, and
  recorded so, when the padded tensors exceed --pad-budget-gib);
- pyg_heterolinear: torch_geometric.nn.HeteroLinear (no bias, rows
  sorted by type) with the backend it picks (recorded: without pyg_lib,
  its per-type loop), backward through autograd;
- gnnc: gnnc.segment_matmul, backward through its autograd function (the
  transposed-weights kernel for dX, the weight-gradient kernel for dW).

The forward pass computes Y; the backward pass dX and dW together. Each
result is checked against a float64 reference on a sample (up to three
types, up to 256 rows each; dW of those types in full). CUDA events,
--warmup runs, the median of --runs (at least 20).

Part 2, the RGCN layer (forward + backward, hidden width 64, TF32) on
hetero_acm_heco and hetero_fb15k237: gnnc.nn.RGCNConv against PyG's
RGCNConv and FastRGCNConv with the same weights, outputs compared with a
float64 PyG RGCNConv.

Writes --out (JSON): {"device", "date", "torch", "torch_geometric",
"emulated", "heterolinear_backend", "records": [{"set", "dtype": "tf32" |
"f16", "K", "M", "pass": "forward" | "backward", "impl", "ms", "ok"[,
"note"]}], "rgcn": [{"dataset", "impl", "ms", "ok"[, "note"]}]}. ms and ok
are null for a skipped case. --quick: two small sets at K = M = 64.
GNNC_EMULATE=1 runs on the CPU with gnnc's launches emulated (a check of
the script; the times mean nothing).

Summarize with bench/segmented_summary.py.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
try:
    import gnnc  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "python"))
    import gnnc  # noqa: F401

import numpy as np
import torch

import gnn_common as C
import hetero_data

EMULATE = os.environ.get("GNNC_EMULATE") == "1"

SETS = ["AIFB", "AM", "BGS", "MUTAG", "ACM", "DBLP", "IMDB", "Freebase"]
QUICK_SETS = ["IMDB", "DBLP"]
WIDTHS = [32, 64, 128, 256]
DTYPES = {"tf32": torch.float32, "f16": torch.float16}
#: Relative tolerance of each output against the float64 reference, of the
#: output's term magnitude (sum of |products|): TF32 rounds each input to
#: 10 mantissa bits (2^-10 per product), f16 results round to 11 bits and
#: cuBLAS may reduce f16 in f16 (torch's default) - lenient enough for
#: every library, far below a wrong result.
TOLERANCE = {"tf32": 2.0 ** -8, "f16": 2.0 ** -6}


# --- device and timing ------------------------------------------------------


def device() -> torch.device:
    return C.device()


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def time_ms(fn, dev, runs: int, warmup: int) -> float:
    """The median of `runs` timings of fn() in ms (CUDA events on a GPU)."""
    for _ in range(warmup):
        fn()
    sync(dev)
    times = []
    for _ in range(runs):
        if dev.type == "cuda":
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
        else:
            t = time.perf_counter()
            fn()
            times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def fmt_ms(ms) -> str:
    return "-" if ms is None else f"{ms:.3f} ms"


# --- segment sets -----------------------------------------------------------


def segments_dir() -> Path | None:
    d = hetero_data.datasets_dir()
    return d / "segments" if d is not None and (d / "segments").is_dir() else None


def read_segments(path: Path) -> list:
    """The T + 1 offsets of a Start,End CSV (types back to back)."""
    offsets = [0]
    with open(path, newline="") as f:
        for i, row in enumerate(csv.DictReader(f)):
            start, end = int(row["Start"]), int(row["End"])
            if start != offsets[-1] or end < start:
                raise ValueError(f"{path}: row {i + 2} is {start},{end}; types must "
                                 f"follow each other from {offsets[-1]}")
            offsets.append(end)
    return offsets


# --- the implementations ------------------------------------------------------


class Problem:
    """One case: rows grouped by type, weights, output gradient."""

    def __init__(self, offsets, k, m, dtype, dev, seed=0):
        self.offsets = offsets
        self.ptr = torch.tensor(offsets, dtype=torch.int64)
        self.ptr_dev = self.ptr.to(dev)
        self.n, self.t, self.k, self.m = offsets[-1], len(offsets) - 1, k, m
        self.dtype, self.dev = dtype, dev
        g = torch.Generator(device=dev).manual_seed(seed)
        self.x = torch.randn(self.n, k, generator=g, device=dev).to(dtype)
        self.w = (torch.randn(self.t, k, m, generator=g, device=dev) / k ** 0.5).to(dtype)
        self.dy = torch.randn(self.n, m, generator=g, device=dev).to(dtype)
        self.sizes = [b - a for a, b in zip(offsets[:-1], offsets[1:])]
        self.spans = [(i, a, b) for i, (a, b) in enumerate(zip(offsets[:-1], offsets[1:]))
                      if b > a]


def torch_loop(p: Problem):
    def forward():
        y = p.x.new_empty(p.n, p.m)
        for i, a, b in p.spans:
            torch.mm(p.x[a:b], p.w[i], out=y[a:b])
        return y

    def backward():
        dx = p.x.new_empty(p.n, p.k)
        dw = p.w.new_zeros(p.t, p.k, p.m)
        for i, a, b in p.spans:
            torch.mm(p.dy[a:b], p.w[i].t(), out=dx[a:b])
            torch.mm(p.x[a:b].t(), p.dy[a:b], out=dw[i])
        return dx, dw
    return forward, backward


def padded_bytes(p: Problem) -> int:
    """What torch_bmm_padded allocates: padded x, y, dy, dx."""
    largest = max(p.sizes) if p.sizes else 0
    return p.t * largest * (2 * p.k + 2 * p.m) * p.x.element_size()


def torch_bmm_padded(p: Problem):
    largest = max(p.sizes) if p.sizes else 0
    # Each row's type and position within it: the scatter into the padded
    # tensors and the gather out of them.
    type_of = torch.repeat_interleave(torch.arange(p.t, device=p.dev),
                                      torch.tensor(p.sizes, device=p.dev))
    pos = torch.arange(p.n, device=p.dev) - p.ptr_dev[:-1][type_of]

    def pad(rows, width):
        out = rows.new_zeros(p.t, largest, width)
        out[type_of, pos] = rows
        return out

    def forward():
        y = torch.bmm(pad(p.x, p.k), p.w)
        return y[type_of, pos]

    def backward():
        dy = pad(p.dy, p.m)
        dx = torch.bmm(dy, p.w.transpose(1, 2))[type_of, pos]
        dw = torch.bmm(pad(p.x, p.k).transpose(1, 2), dy)
        return dx, dw
    return forward, backward


def heterolinear_backend() -> str:
    import torch_geometric
    if getattr(torch_geometric.typing, "WITH_SEGMM", False):
        return "pyg_lib.ops.segment_matmul or its per-type loop (timed choice)"
    return "per-type loop (forward_naive: no pyg_lib)"


def pyg_heterolinear(p: Problem):
    from torch_geometric.nn import HeteroLinear
    lin = HeteroLinear(p.k, p.m, p.t, is_sorted=True, bias=False).to(p.dev)
    with torch.no_grad():
        lin.weight.copy_(p.w.float())
    lin = lin.to(p.dtype)
    type_vec = torch.repeat_interleave(torch.arange(p.t, device=p.dev),
                                       torch.tensor(p.sizes, device=p.dev))
    x = p.x.clone().requires_grad_()

    def forward():
        with torch.no_grad():
            return lin(p.x, type_vec)
    y = lin(x, type_vec)

    def backward():
        return torch.autograd.grad(y, (x, lin.weight), p.dy, retain_graph=True)
    return forward, backward


def gnnc_impl(p: Problem):
    x = p.x.clone().requires_grad_()
    w = p.w.clone().requires_grad_()

    def forward():
        with torch.no_grad():
            return gnnc.segment_matmul(p.x, p.ptr, p.w)
    y = gnnc.segment_matmul(x, p.ptr, w)

    def backward():
        return torch.autograd.grad(y, (x, w), p.dy, retain_graph=True)
    return forward, backward


IMPLS = {"torch_loop": torch_loop, "torch_bmm_padded": torch_bmm_padded,
         "pyg_heterolinear": pyg_heterolinear, "gnnc": gnnc_impl}


# --- checks -------------------------------------------------------------------


def sample_types(p: Problem) -> list:
    """Up to three types with rows: the first, the largest and the last."""
    if not p.spans:
        return []
    largest = max(p.spans, key=lambda s: s[2] - s[1])
    picked = {p.spans[0][0]: p.spans[0], largest[0]: largest, p.spans[-1][0]: p.spans[-1]}
    return [picked[i] for i in sorted(picked)]


def close(got, expected, magnitude, tol) -> bool:
    err = (got.double() - expected).abs()
    return bool((err <= tol * magnitude + 1e-30).all())


def check(p: Problem, pass_: str, result, tol: float) -> bool:
    """The sampled rows (and dW of the sampled types) against float64."""
    ok = True
    for i, a, b in sample_types(p):
        rows = slice(a, min(b, a + 256))
        wd = p.w[i].double()
        if pass_ == "forward":
            xd = p.x[rows].double()
            ok &= close(result[rows], xd @ wd, xd.abs() @ wd.abs(), tol)
        else:
            dx, dw = result
            dyd = p.dy[rows].double()
            ok &= close(dx[rows], dyd @ wd.t(), dyd.abs() @ wd.abs().t(), tol)
            xa, dya = p.x[a:b].double(), p.dy[a:b].double()
            ok &= close(dw[i], xa.t() @ dya, xa.abs().t() @ dya.abs(), tol)
    return bool(ok)


# --- part 1 ---------------------------------------------------------------------


def run_segments(args, dev, records):
    sdir = segments_dir()
    if sdir is None:
        print("SKIP: no segments/ folder in the datasets directory ($GNNC_DATASETS "
              "or ../shared/datasets)")
        return
    sets = QUICK_SETS if args.quick else (args.sets or SETS)
    widths = [64] if args.quick else (args.widths or WIDTHS)
    for name in sets:
        path = sdir / f"{name}.csv"
        if not path.is_file():
            print(f"SKIP: {path} not found")
            continue
        offsets = read_segments(path)
        for width in widths:
            for dname in args.dtypes:
                run_case(args, dev, name, offsets, width, dname, records)


def run_case(args, dev, name, offsets, width, dname, records):
    dtype = DTYPES[dname]
    torch.backends.cuda.matmul.allow_tf32 = dname == "tf32"
    p = Problem(offsets, width, width, dtype, dev)
    tol = TOLERANCE[dname]
    base = dict(set=name, dtype=dname, K=width, M=width)
    for impl, make in IMPLS.items():
        note = None
        if impl == "torch_bmm_padded" and \
                padded_bytes(p) > args.pad_budget_gib * 2 ** 30:
            note = (f"skipped: the padded tensors take "
                    f"{padded_bytes(p) / 2 ** 30:.1f} GiB (budget "
                    f"{args.pad_budget_gib} GiB)")
        try:
            fns = None if note else make(p)
        except Exception as e:  # a library refusing the case is a result
            note = f"failed: {type(e).__name__}: {e}"
        for pass_, index in (("forward", 0), ("backward", 1)):
            rec = dict(base, **{"pass": pass_, "impl": impl, "ms": None, "ok": None})
            if note is None:
                try:
                    fn = fns[index]
                    rec["ok"] = check(p, pass_, fn(), tol)
                    rec["ms"] = round(time_ms(fn, dev, args.runs, args.warmup), 4)
                except Exception as e:
                    rec["note"] = f"failed: {type(e).__name__}: {e}"
            else:
                rec["note"] = note
            records.append(rec)
            print(f"{name:9s} {dname:4s} K=M={width:<4d} {pass_:8s} {impl:17s} "
                  f"{fmt_ms(rec['ms']):>12s}  ok={rec['ok']}"
                  + (f"  ({rec['note']})" if rec.get("note") else ""), flush=True)
        fns = None
    del p
    if dev.type == "cuda":
        torch.cuda.empty_cache()


# --- part 2: RGCN -----------------------------------------------------------------


def run_rgcn(args, dev, results):
    from torch_geometric.nn import FastRGCNConv
    from torch_geometric.nn import RGCNConv as PygRGCNConv

    from gnnc.nn import RGCNConv

    torch.backends.cuda.matmul.allow_tf32 = True
    hidden = args.hidden
    for name in (["hetero_acm_heco"] if args.quick else
                 ["hetero_acm_heco", "hetero_fb15k237"]):
        data = hetero_data.load_hetero(name)
        if data is None:
            print(f"SKIP: {name}.npz not found")
            continue
        n, r = data["num_nodes"], data["num_relations"]
        ei = torch.from_numpy(data["edge_index"]).to(dev)
        et = torch.from_numpy(data["edge_type"]).to(dev)
        torch.manual_seed(0)
        ref = PygRGCNConv(hidden, hidden, r).to(dev)
        state = ref.state_dict()
        g = torch.Generator(device=dev).manual_seed(1)
        x = torch.randn(n, hidden, generator=g, device=dev)
        dy = torch.randn(n, hidden, generator=g, device=dev)
        # The float64 reference output.
        ref64 = PygRGCNConv(hidden, hidden, r).to(dev).double()
        ref64.load_state_dict({k: v.double() for k, v in state.items()})
        with torch.no_grad():
            expected = ref64(x.double(), ei, et)
        scale = max(1.0, float(expected.abs().max()))
        del ref64
        layers = {"gnnc_rgcnconv": RGCNConv(hidden, hidden, r),
                  "pyg_rgcnconv": PygRGCNConv(hidden, hidden, r),
                  "pyg_fastrgcnconv": FastRGCNConv(hidden, hidden, r)}
        for impl, layer in layers.items():
            layer.load_state_dict(state)
            layer = layer.to(dev)
            rec = dict(dataset=name, impl=impl, ms=None, ok=None)
            try:
                xr = x.clone().requires_grad_()

                def step():
                    out = layer(xr, ei, et)
                    out.backward(dy)
                    return out
                out = step()
                err = float((out.detach().double() - expected).abs().max())
                rec["ok"] = err <= 1e-2 * scale
                rec["max_abs_error"] = err
                rec["ms"] = round(time_ms(step, dev, args.runs, args.warmup), 4)
            except Exception as e:
                rec["note"] = f"failed: {type(e).__name__}: {e}"
            results.append(rec)
            print(f"rgcn {name:16s} {impl:17s} {fmt_ms(rec['ms']):>12s}  ok={rec['ok']}"
                  + (f"  ({rec['note']})" if rec.get("note") else ""), flush=True)
            del layer
            if dev.type == "cuda":
                torch.cuda.empty_cache()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="bench_segmented.json")
    ap.add_argument("--quick", action="store_true",
                    help=f"sets {QUICK_SETS}, K = M = 64, ACM only")
    ap.add_argument("--sets", nargs="*", help=f"default: all of {SETS}")
    ap.add_argument("--widths", nargs="*", type=int, help=f"K = M; default {WIDTHS}")
    ap.add_argument("--dtypes", nargs="*", default=list(DTYPES), choices=list(DTYPES))
    ap.add_argument("--runs", type=int, default=None, help="timed runs (median); >= 20")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--pad-budget-gib", type=float, default=16.0)
    ap.add_argument("--no-rgcn", action="store_true")
    ap.add_argument("--no-segments", action="store_true")
    args = ap.parse_args(argv)
    if args.runs is None:
        args.runs = 2 if EMULATE else 20
    if args.runs < 20 and not EMULATE:
        ap.error("--runs must be at least 20 (the median of 20 or more runs)")
    if EMULATE:
        args.warmup = min(args.warmup, 1)
    dev = device()
    import torch_geometric
    doc = {"device": "cpu (emulated)" if EMULATE else torch.cuda.get_device_name(dev),
           "date": datetime.datetime.now().isoformat(timespec="seconds"),
           "torch": torch.__version__, "torch_geometric": torch_geometric.__version__,
           "emulated": EMULATE, "heterolinear_backend": heterolinear_backend(),
           "records": [], "rgcn": []}
    print(f"device {doc['device']}, torch {doc['torch']}, PyG {doc['torch_geometric']}; "
          f"HeteroLinear: {doc['heterolinear_backend']}")
    saved = torch.backends.cuda.matmul.allow_tf32
    try:
        if not args.no_segments:
            run_segments(args, dev, doc["records"])
        if not args.no_rgcn:
            run_rgcn(args, dev, doc["rgcn"])
    finally:
        torch.backends.cuda.matmul.allow_tf32 = saved
        Path(args.out).write_text(json.dumps(doc, indent=1))
    print(f"wrote {args.out}")
    return doc


if __name__ == "__main__":
    main()
