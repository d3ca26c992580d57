#!/usr/bin/env python3
"""PyTorch baselines for gnn-bench: the same graphs, widths and types.

Reads the graphs gnn-bench wrote with --dump-graphs (DIR/graphs.json and
DIR/<name>.indptr.npy / .indices.npy) and times, per graph x type x width:

  torch_sparse_mm  torch.sparse.mm with a CSR tensor (cuSPARSE underneath)
  pyg_scatter      PyG-style message passing: x[col] gathered per edge, then
                   torch_geometric.utils.scatter(..., reduce='sum')
  index_add        the same gather, then out.index_add_(0, row, messages)

Y[r] = sum of X[c] over the edges (r, c), with all edge values 1, exactly
what gnn-bench's SpMMv kernels compute.

  gat_chain        GAT attention with one head, PyTorch/PyG style, at width
                   --gat-width (64) for f32 and f16 (--gat-types):
                   e = leaky_relu(a_src[row] + a_dst[col], 0.2), then
                   alpha = torch_geometric.utils.softmax(e, row, num_nodes=N)
                   (a scatter_reduce softmax when PyG is missing), then
                   out.index_add_(0, row, alpha.unsqueeze(-1) * x[col]);
                   the whole chain is one timed region, as gnn-bench's.
 Timing follows gnn-bench: CUDA
events around each run, warm-up runs first, the L2 flushed (a buffer of
twice its size overwritten) before every run, median/min/max. A few rows of
every result are checked against a float64 reference (reported, never
fatal); a method torch refuses is recorded as "unsupported: <message>".
A method whose first (warm-up) call takes more than --slow-ms (50 ms) gets
one warm-up and only as many timed runs as fit in --slow-budget (2 s), but
at least --min-runs (5); "runs" and "warmups" in each "time_ms" say what
was used.

usage: python3 bench/torch_baseline.py --graphs DIR --out FILE
"""

import argparse
import datetime
import json
import math
import os
import sys
import time

import numpy as np

# Tolerances relative to the sum of |terms| of an output element, as in
# gnnc's checks (ops::spmmTolerance).
TOLERANCE = {"f32": 2e-5, "f16": 2e-3, "bf16": 1e-2}
CHECK_ROWS = 16


def log(message):
    print(message, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--graphs", required=True,
                   help="directory written by gnn-bench --dump-graphs")
    p.add_argument("--out", required=True, help="JSON results file")
    p.add_argument("--widths", default="",
                   help="comma-separated widths (default: gnn-bench's)")
    p.add_argument("--types", default="",
                   help="comma-separated f32,f16,bf16 (default: gnn-bench's)")
    p.add_argument("--only", default="",
                   help="comma-separated graph names to run")
    p.add_argument("--warmups", type=int, default=None)
    p.add_argument("--runs", type=int, default=None)
    p.add_argument("--slow-ms", type=float, default=50.0,
                   help="a method whose first call takes longer than this "
                        "gets one warm-up and fewer timed runs")
    p.add_argument("--slow-budget", type=float, default=2.0,
                   help="seconds of timed runs for such a method (never "
                        "fewer than --min-runs runs)")
    p.add_argument("--min-runs", type=int, default=5,
                   help="the fewest timed runs of a slow method")
    p.add_argument("--methods", default="torch_sparse_mm,pyg_scatter,index_add")
    p.add_argument("--max-gather-fraction", type=float, default=0.35,
                   help="skip the gather methods when the per-edge messages "
                        "need more than this fraction of free GPU memory")
    p.add_argument("--gat-width", type=int, default=None,
                   help="feature width of the GAT chain (default: "
                        "gnn-bench's, else 64; 0: no chain)")
    p.add_argument("--gat-types", default="f32,f16",
                   help="element types of the GAT chain")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-flush", action="store_true")
    p.add_argument("--time-limit", type=float, default=0,
                   help="skip the cases that would start after this many "
                        "seconds (recorded as skipped; 0 = no limit)")
    return p.parse_args(argv)


def summarize(times_ms, warmups=None):
    t = sorted(times_ms)
    n = len(t)
    median = t[n // 2] if n % 2 else 0.5 * (t[n // 2 - 1] + t[n // 2])
    summary = {"median": median, "min": t[0], "max": t[-1], "runs": n}
    if warmups is not None:
        summary["warmups"] = warmups
    return summary


def plan_runs(first_ms, warmups, runs, slow_ms, budget_s, min_runs):
    """(warm-ups, timed runs) once the first call took first_ms.

    A call slower than slow_ms gets one warm-up (the first call) and as many
    timed runs as fit in budget_s, but never fewer than min_runs nor more
    than the nominal count; faster calls keep the nominal counts.
    """
    if first_ms <= slow_ms:
        return warmups, runs
    fit = int(budget_s * 1e3 // max(first_ms, 1e-3))
    return min(warmups, 1), min(runs, max(min_runs, fit))


class Timer:
    """CUDA-event timing with an L2 flush before every run.

    The first call decides the run count (plan_runs): PyG's 16-bit scatter
    can take a second per call, and 25 of them per case would dominate the
    whole suite.
    """

    def __init__(self, torch, warmups, runs, flush_bytes, slow_ms=50.0,
                 budget_s=2.0, min_runs=5):
        self.torch = torch
        self.warmups = warmups
        self.runs = runs
        self.slow_ms = slow_ms
        self.budget_s = budget_s
        self.min_runs = min_runs
        self.flush = (torch.empty(flush_bytes, dtype=torch.uint8, device="cuda")
                      if flush_bytes > 0 else None)
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)
        self.count = 0

    def run_once(self, fn):
        if self.flush is not None:
            self.flush.fill_(self.count & 0xff)
        self.count += 1
        self.start.record()
        fn()
        self.stop.record()
        self.stop.synchronize()
        return self.start.elapsed_time(self.stop)

    def time(self, fn):
        """Times fn; the summary's runs and warmups are the counts used."""
        first = self.run_once(fn)
        warmups, runs = plan_runs(first, self.warmups, self.runs,
                                  self.slow_ms, self.budget_s, self.min_runs)
        # With no warm-up at all, the first call is the first timed run.
        times = [] if self.warmups > 0 else [first]
        for _ in range(max(warmups - 1, 0)):
            self.run_once(fn)
        while len(times) < runs:
            times.append(self.run_once(fn))
        self.torch.cuda.synchronize()
        summary = summarize(times, warmups)
        summary["first_call_ms"] = first
        return summary


def check_rows(torch, y, x, indptr, indices, rows, tol):
    """Compares rows of y with a float64 sum over their neighbours."""
    worst = 0.0
    bad = []
    y_rows = y[torch.as_tensor(rows, device=y.device)].double().cpu().numpy()
    for k, r in enumerate(rows):
        cols = indices[indptr[r]:indptr[r + 1]]
        if len(cols):
            terms = x[torch.as_tensor(cols.astype(np.int64), device=x.device)]
            terms = terms.double()
            ref = terms.sum(0).cpu().numpy()
            mag = terms.abs().sum(0).cpu().numpy()
        else:
            ref = np.zeros(y_rows.shape[1])
            mag = np.zeros(y_rows.shape[1])
        got = y_rows[k]
        bound = tol * mag + 1e-6
        if not np.all(np.isfinite(got)):
            bad.append(int(r))
            worst = math.inf
            continue
        ratio = float(np.max(np.abs(got - ref) / bound)) if len(got) else 0.0
        worst = max(worst, ratio)
        if ratio > 1.0:
            bad.append(int(r))
    ok = not bad
    report = ("%d rows checked against float64; largest error / allowed "
              "(%g * sum|terms| + 1e-6) = %.3g" % (len(rows), tol, worst))
    if bad:
        report += "; rows off: %s" % bad[:8]
    return ok, report


def scatter_softmax(torch, e, row, num_nodes):
    """Softmax of e over the edges of each row without PyG, the way
    torch_geometric.utils.softmax computes it (max, exp, sum, all in e's
    type)."""
    m = torch.full((num_nodes,), float("-inf"), dtype=e.dtype,
                   device=e.device)
    m = m.scatter_reduce(0, row, e, reduce="amax", include_self=True)
    p = (e - m[row]).exp()
    s = torch.zeros(num_nodes, dtype=e.dtype, device=e.device)
    s = s.index_add(0, row, p) + 1e-16
    return p / s[row]


def gat_reference_rows(torch, a_src, a_dst, x, indptr, indices, rows,
                       slope=0.2):
    """float64 GAT chain for `rows`: (expected, magnitude) per row, each of
    x's width, from the inputs as stored (the intermediates unrounded)."""
    out = []
    a_src = a_src.double().cpu().numpy()
    a_dst = a_dst.double().cpu().numpy()
    for r in rows:
        cols = indices[indptr[r]:indptr[r + 1]].astype(np.int64)
        width = x.shape[1]
        if len(cols) == 0:
            out.append((np.zeros(width), np.zeros(width)))
            continue
        e = a_src[r] + a_dst[cols]
        e = np.where(e > 0, e, slope * e)
        p = np.exp(e - e.max())
        alpha = p / p.sum()
        xs = x[torch.as_tensor(cols, device=x.device)].double().cpu().numpy()
        terms = alpha[:, None] * xs
        out.append((terms.sum(0), np.abs(terms).sum(0)))
    return out


def check_gat_rows(torch, y, a_src, a_dst, x, indptr, indices, rows, tol):
    """Compares rows of the chain's output with the float64 chain."""
    refs = gat_reference_rows(torch, a_src, a_dst, x, indptr, indices, rows)
    y_rows = y[torch.as_tensor(rows, device=y.device)].double().cpu().numpy()
    worst, bad = 0.0, []
    for k, r in enumerate(rows):
        ref, mag = refs[k]
        got = y_rows[k]
        if not np.all(np.isfinite(got)):
            bad.append(int(r))
            worst = math.inf
            continue
        ratio = float(np.max(np.abs(got - ref) / (tol * mag + 1e-6)))
        worst = max(worst, ratio)
        if ratio > 1.0:
            bad.append(int(r))
    report = ("%d rows checked against the float64 chain; largest error / "
              "allowed (%g * sum|terms| + 1e-6) = %.3g" % (len(rows), tol,
                                                           worst))
    if bad:
        report += "; rows off: %s" % bad[:8]
    return not bad, report


def pick_rows(indptr, seed):
    n = len(indptr) - 1
    if n <= 0:
        return []
    degree = np.diff(indptr)
    rng = np.random.default_rng(seed)
    rows = {0, n - 1, int(np.argmax(degree))}
    rows.update(int(r) for r in rng.integers(0, n, size=CHECK_ROWS))
    return sorted(rows)[:CHECK_ROWS + 3]


def check_then_time(torch, timer, fn, check, result):
    """Runs fn once and records in result what check(y) says of its output
    (ok, report), then frees the output and records fn's time."""
    y = fn()
    torch.cuda.synchronize()
    ok, report = check(y)
    result["check_ok"] = ok
    result["check_report"] = report
    del y
    result["time_ms"] = timer.time(fn)
    result["status"] = "ok"


def record_failure(torch, e, result, kind="error"):
    """Records the exception e as result's status, "KIND: TYPE: first line"
    ("error: out of memory" when the GPU ran out), and frees what the
    attempt left on the GPU."""
    message = str(e).strip().splitlines()
    message = message[0] if message else type(e).__name__
    result["status"] = "%s: %s: %s" % (kind, type(e).__name__, message[:300])
    if "out of memory" in str(e).lower():
        result["status"] = "error: out of memory"
    torch.cuda.synchronize()
    torch.cuda.empty_cache()


def run_gat_chain(torch, timer, generator, seed, dtype, elem, width,
                  num_rows, num_cols, nnz, row64, col64, indptr, indices,
                  rows_to_check, pyg_softmax, max_fraction, tol):
    """Times the GAT chain (one head) as one region; returns its record."""
    result = {"softmax": ("torch_geometric.utils.softmax"
                          if pyg_softmax is not None
                          else "scatter_reduce fallback")}
    try:
        generator.manual_seed(seed + 4)
        a_src = ((torch.rand(num_rows, generator=generator, device="cuda") * 8
                  - 4).to(dtype))
        a_dst = ((torch.rand(num_cols, generator=generator, device="cuda") * 8
                  - 4).to(dtype))
        x = (torch.rand((num_cols, width), generator=generator,
                        device="cuda") * 2 - 1).to(dtype)
        free, _ = torch.cuda.mem_get_info()
        if nnz * width * elem * 2 > max_fraction * free:
            result["status"] = ("skipped: the messages need %.1f GB of %.1f "
                                "GB free" % (2 * nnz * width * elem / 1e9,
                                             free / 1e9))
            return result
        softmax = (pyg_softmax if pyg_softmax is not None else
                   lambda e, index, num_nodes: scatter_softmax(
                       torch, e, index, num_nodes))

        def fn():
            e = torch.nn.functional.leaky_relu(a_src[row64] + a_dst[col64],
                                               0.2)
            alpha = softmax(e, row64, num_nodes=num_rows)
            out = torch.zeros((num_rows, width), dtype=dtype, device="cuda")
            return out.index_add_(0, row64, alpha.unsqueeze(-1) * x[col64])

        # A loose bound (the reference keeps the logits and weights
        # unrounded, torch rounds them to the type): it catches a wrong
        # formula, not the last bits.
        check_then_time(
            torch, timer, fn,
            lambda y: check_gat_rows(torch, y, a_src, a_dst, x, indptr,
                                     indices, rows_to_check, 8 * tol),
            result)
    except Exception as e:  # noqa: BLE001 - recorded
        record_failure(torch, e, result)
    return result


def main(argv):
    args = parse_args(argv)
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    manifest_path = os.path.join(args.graphs, "graphs.json")
    with open(manifest_path) as f:
        manifest = json.load(f)
    widths = ([int(w) for w in args.widths.split(",") if w]
              or manifest.get("widths", [32, 64, 128]))
    types = ([t for t in args.types.split(",") if t]
             or manifest.get("types", ["f32", "f16", "bf16"]))
    warmups = args.warmups if args.warmups is not None else manifest.get(
        "warmups", 5)
    runs = max(args.runs if args.runs is not None else manifest.get(
        "runs", 20), 1)
    methods = [m for m in args.methods.split(",") if m]
    if args.gat_width is None:
        args.gat_width = int(manifest.get("gat_width", 64))
    only = set(s for s in args.only.split(",") if s)

    import torch
    if not torch.cuda.is_available():
        log("torch_baseline: error: no GPU visible to torch")
        return 3
    try:
        import torch_geometric
        from torch_geometric.utils import scatter as pyg_scatter
        pyg_version = torch_geometric.__version__
    except Exception as e:  # noqa: BLE001 - record why and go on
        pyg_scatter = None
        pyg_version = "unavailable: %s" % e
    try:
        from torch_geometric.utils import softmax as pyg_softmax
    except Exception:  # noqa: BLE001 - fall back to scatter_reduce
        pyg_softmax = None
    gat_types = [t for t in args.gat_types.split(",") if t]

    dtypes = {"f32": torch.float32, "f16": torch.float16,
              "bf16": torch.bfloat16}
    props = torch.cuda.get_device_properties(0)
    l2 = int(getattr(props, "L2_cache_size", 50 << 20))
    timer = Timer(torch, warmups, runs, 0 if args.no_flush else 2 * l2,
                  slow_ms=args.slow_ms, budget_s=args.slow_budget,
                  min_runs=max(args.min_runs, 1))
    doc = {
        "tool": "torch_baseline",
        "format_version": 1,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%dT%H:%M:%SZ"),
        "device": {"name": torch.cuda.get_device_name(0),
                   "sm_count": props.multi_processor_count,
                   "l2_bytes": l2,
                   "total_memory_bytes": props.total_memory},
        "torch_version": torch.__version__,
        "torch_cuda_version": torch.version.cuda,
        "pyg_version": pyg_version,
        "options": {"widths": widths, "types": types, "warmups": warmups,
                    "runs": runs, "slow_ms": args.slow_ms,
                    "slow_budget_seconds": args.slow_budget,
                    "min_runs": max(args.min_runs, 1),
                    "flush_l2": not args.no_flush,
                    "methods": methods, "seed": args.seed,
                    "gat_width": args.gat_width, "gat_types": gat_types,
                    "gat_heads": 1,
                    "gat_softmax": ("torch_geometric.utils.softmax"
                                    if pyg_softmax is not None
                                    else "scatter_reduce fallback")},
        "cases": [],
        "gat_cases": [],
        "skipped": [],
    }
    log("device   %s, torch %s, PyG %s" % (doc["device"]["name"],
                                           torch.__version__, pyg_version))
    start = time.time()
    generator = torch.Generator(device="cuda")

    for entry in manifest["graphs"]:
        name = entry["name"]
        if only and name not in only:
            continue
        graph_start = time.time()
        indptr = np.load(os.path.join(args.graphs, entry["indptr"]))
        indices = np.load(os.path.join(args.graphs, entry["indices"]))
        num_rows, num_cols = int(entry["num_rows"]), int(entry["num_cols"])
        nnz = int(indices.shape[0])
        assert indptr.shape[0] == num_rows + 1 and int(indptr[-1]) == nnz, name
        crow = torch.from_numpy(indptr.astype(np.int32)).cuda()
        col = torch.from_numpy(indices.astype(np.int32)).cuda()
        col64 = col.long()
        degree = torch.from_numpy(np.diff(indptr)).cuda()
        row64 = torch.repeat_interleave(
            torch.arange(num_rows, device="cuda"), degree)
        rows_to_check = pick_rows(indptr, args.seed)

        for type_name in types:
            dtype = dtypes[type_name]
            elem = torch.tensor([], dtype=dtype).element_size()
            for width in widths:
                if args.time_limit > 0 and time.time() - start > args.time_limit:
                    doc["skipped"].append({"graph": name, "type": type_name,
                                           "width": width,
                                           "why": "time limit"})
                    continue
                case = {"graph": name, "type": type_name, "width": width,
                        "num_rows": num_rows, "num_cols": num_cols,
                        "nnz": nnz, "methods": {}}
                generator.manual_seed(args.seed)
                x = (torch.rand((num_cols, width), generator=generator,
                                device="cuda", dtype=torch.float32) * 2 - 1
                     ).to(dtype)
                values = torch.ones(nnz, dtype=dtype, device="cuda")
                free, _ = torch.cuda.mem_get_info()
                gather_bytes = nnz * width * elem
                for method in methods:
                    result = {}
                    try:
                        if method == "torch_sparse_mm":
                            a = torch.sparse_csr_tensor(
                                crow, col, values, size=(num_rows, num_cols))
                            fn = lambda a=a: torch.sparse.mm(a, x)  # noqa
                        elif method in ("pyg_scatter", "index_add"):
                            if method == "pyg_scatter" and pyg_scatter is None:
                                raise RuntimeError("torch_geometric: " +
                                                   pyg_version)
                            if gather_bytes > args.max_gather_fraction * free:
                                result["status"] = (
                                    "skipped: the messages need %.1f GB of "
                                    "%.1f GB free" % (gather_bytes / 1e9,
                                                      free / 1e9))
                                case["methods"][method] = result
                                continue
                            if method == "pyg_scatter":
                                def fn():
                                    return pyg_scatter(x[col64], row64, dim=0,
                                                       dim_size=num_rows,
                                                       reduce="sum")
                            else:
                                def fn():
                                    out = torch.zeros((num_rows, width),
                                                      dtype=dtype,
                                                      device="cuda")
                                    return out.index_add_(0, row64, x[col64])
                        else:
                            raise ValueError("unknown method " + method)
                        check_then_time(
                            torch, timer, fn,
                            lambda y: check_rows(torch, y, x, indptr, indices,
                                                 rows_to_check,
                                                 TOLERANCE[type_name]),
                            result)
                    except Exception as e:  # noqa: BLE001 - recorded
                        kind = ("unsupported"
                                if isinstance(e, (RuntimeError,
                                                  NotImplementedError,
                                                  TypeError))
                                else "error")
                        record_failure(torch, e, result, kind)
                    case["methods"][method] = result
                doc["cases"].append(case)
                cells = []
                for method in methods:
                    r = case["methods"].get(method, {})
                    if "time_ms" in r:
                        used = r["time_ms"]["runs"]
                        cells.append("%s %.4f ms%s%s" % (
                            method, r["time_ms"]["median"],
                            "" if used >= runs else " (%d runs)" % used,
                            "" if r.get("check_ok", True) else " (CHECK OFF)"))
                    else:
                        cells.append("%s %s" % (method,
                                                r.get("status", "?")[:60]))
                log("%-28s %-4s %4d | %s" % (name[:28], type_name, width,
                                            " | ".join(cells)))
                del x, values
            if args.gat_width > 0 and type_name in gat_types:
                if (args.time_limit > 0
                        and time.time() - start > args.time_limit):
                    doc["skipped"].append({"graph": name, "type": type_name,
                                           "width": args.gat_width,
                                           "method": "gat_chain",
                                           "why": "time limit"})
                else:
                    result = run_gat_chain(
                        torch, timer, generator, args.seed, dtype, elem,
                        args.gat_width, num_rows, num_cols, nnz, row64, col64,
                        indptr, indices, rows_to_check, pyg_softmax,
                        args.max_gather_fraction, TOLERANCE[type_name])
                    doc["gat_cases"].append({
                        "graph": name, "type": type_name,
                        "width": args.gat_width, "heads": 1, "nnz": nnz,
                        "result": result})
                    t = result.get("time_ms")
                    log("%-28s %-4s %4d | gat_chain %s" % (
                        name[:28], type_name, args.gat_width,
                        ("%.4f ms%s" % (t["median"],
                                        "" if result.get("check_ok", True)
                                        else " (CHECK OFF)"))
                        if t else result.get("status", "?")[:80]))
        del crow, col, col64, degree, row64
        torch.cuda.empty_cache()
        log("         (%s: %.1f s, %.0f s so far)" % (
            name, time.time() - graph_start, time.time() - start))

    doc["wall_seconds"] = time.time() - start
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    log("wrote    %s (%d cases in %.0f s)" % (args.out, len(doc["cases"]),
                                              doc["wall_seconds"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
