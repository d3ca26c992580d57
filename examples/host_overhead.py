"""Measures the host overhead of gnnc's torch ops and layers on the CPU:
microseconds per call of each op's forward, and of its forward plus
backward, with the kernel launches replaced by no-ops. Needs torch and
libgnnc_c.so, but no GPU.

  python examples/host_overhead.py [--iters 2000] [--repeats 7]

What runs is gnnc's own Python path (argument checks, the custom op's
dispatch, autograd, kernel cache lookups, ctypes struct building and the
ctypes call) down to the C ABI. What is replaced:

* the launch functions of the library (gnnc_spmm, gnnc_sddmm,
  gnnc_edge_softmax, gnnc_edge_softmax_grad) by a C function that ignores
  its arguments and returns 0 (libm's fegetround: FE_TONEAREST is 0), called
  through a ctypes prototype with the real argument types, so ctypes
  converts the real arguments;
* graph and kernel creation (gnnc_graph_create, gnnc_kernel_get,
  gnnc_graph_spmm_factors), done once per graph and op, by Python stubs;
* the CUDA calls (the device guard, the current stream) by trivial stubs:
  without a GPU they cannot run, so their cost is NOT included.

Graphs live on the CPU (small: 200 nodes, 1000 edges, 16 features) so that
the torch ops the gnnc path runs around the launches (allocations, index
selects) cost little. ``reference`` rows time native torch ops the same
way, as the floor of torch's own dispatch. Each number is the least
disturbed (the minimum) of --repeats runs of --iters calls.

Set GNNC_PYTHON to a folder holding another version of the gnnc package
(e.g. an older checkout's python/) to time that one.
"""
from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import itertools
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.environ.get("GNNC_PYTHON")
                or str(Path(__file__).resolve().parents[1] / "python"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import gnnc  # noqa: E402
from gnnc import _context, _lib  # noqa: E402
from gnnc import graph as ggraph  # noqa: E402
from gnnc import ops  # noqa: E402
from gnnc.nn import GATConv, GCNConv, GINConv, SAGEConv  # noqa: E402

LAUNCHES = ("gnnc_spmm", "gnnc_sddmm", "gnnc_edge_softmax", "gnnc_edge_softmax_grad")


class _StubLib:
    """The real library with its launches, graph and kernel creation
    replaced (see the module's docstring)."""

    def __init__(self, real: ctypes.CDLL):
        self._real = real
        self._ids = itertools.count(1)
        self._graphs = {}
        libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
        noop = ctypes.cast(libm.fegetround, ctypes.c_void_p).value
        for name in LAUNCHES:
            restype, argtypes = _lib.SIGNATURES[name]
            fn = ctypes.CFUNCTYPE(restype, *argtypes)(noop)
            assert fn(*[a() for a in argtypes]) == 0
            setattr(self, name, fn)

    def __getattr__(self, name):  # the rest: the real functions
        fn = getattr(self._real, name)
        setattr(self, name, fn)
        return fn

    @staticmethod
    def _out(ref):
        return getattr(ref, "_obj", ref)

    def gnnc_graph_create(self, ctx, name, rows, cols, nnz, rp, ci, brp, bci, out):
        h = next(self._ids)
        self._graphs[h] = (rows, cols)
        self._out(out).value = h
        return 0

    def gnnc_kernel_get(self, graph, desc, schedule, out):
        self._out(out).value = next(self._ids)
        return 0

    def gnnc_graph_spmm_factors(self, graph, desc, row, col):
        h = graph.value if hasattr(graph, "value") else graph
        rows, cols = self._graphs[h]
        np.ctypeslib.as_array(row, (rows,))[:] = 0.5
        np.ctypeslib.as_array(col, (cols,))[:] = 1.0
        return 0

    def gnnc_graph_destroy(self, graph):
        pass


class _NoDevice:
    def __init__(self, device):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Ctx:
    handle = None


def install_stubs():
    _lib._lib = _StubLib(_lib.load())
    _context.get = lambda device: _Ctx()
    ggraph._allow_cpu = True
    torch.cuda.init = lambda: None
    torch.cuda.device = _NoDevice
    # The stream lookups, whichever version of ops.py this is.
    if hasattr(ops, "_stream"):
        ops._stream = lambda g: 0
    for name, stub in (("_cuda_current_device", lambda: -1),
                       ("_cuda_raw_stream", lambda i: 0)):
        if hasattr(ops, name):
            setattr(ops, name, stub)


def timeit(fn, iters, repeats):
    for _ in range(max(10, iters // 10)):
        fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(iters):
            fn()
        times.append((time.perf_counter() - t0) / iters * 1e6)
    return min(times)  # the least disturbed (other processes share the CPU)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iters", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--nodes", type=int, default=200)
    p.add_argument("--edges", type=int, default=1000)
    p.add_argument("--width", type=int, default=16)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--only", default="", help="comma-separated substrings of row names")
    a = p.parse_args()
    torch.set_num_threads(1)
    install_stubs()

    n, e, f, h = a.nodes, a.edges, a.width, a.heads
    rng = np.random.default_rng(0)
    ei_np = rng.integers(0, n, (2, e))
    ei = torch.from_numpy(np.concatenate([ei_np, ei_np[::-1]], axis=1)).contiguous()
    cpu = torch.device("cpu")
    g = gnnc.Graph.from_edge_index(ei, n, device=cpu)
    nnz = g.nnz

    def leaf(*shape):
        return torch.randn(*shape).requires_grad_(True)

    x, xh = leaf(n, f), leaf(n, h, f)
    v, vh = leaf(nnz), leaf(nnz, h).detach().abs().requires_grad_(True)
    ah, bh = leaf(n, h), leaf(n, h)
    lg = leaf(nnz, h)
    w = torch.randn(f, f, requires_grad=True)

    def fwd_bwd(make):
        def run():
            out = make()
            out.backward(run.dy)
        out = make()
        run.dy = torch.ones_like(out)
        return run

    def fwd(make):
        def run():
            with torch.no_grad():
                make()
        return run

    cases = [
        ("reference: torch.mm", lambda: torch.mm(x, w)),
        ("reference: index_select", lambda: x.index_select(0, g.edge_cols)),
        ("spmm sum", lambda: ops.spmm(g, x)),
        ("spmm sum, self_weight (GIN)", lambda: ops.spmm(g, x, self_weight=0.0)),
        ("spmm mean (SAGE)", lambda: ops.spmm(g, x, reduce="mean")),
        ("spmm norm=both (GCN)", lambda: ops.spmm(g, x, norm="both")),
        ("spmm values [nnz]", lambda: ops.spmm(g, x, v)),
        ("spmm values [nnz, H] (GAT)", lambda: ops.spmm(g, xh, vh)),
        ("sddmm dot", lambda: ops.sddmm(g, x, x)),
        ("sddmm add+leaky_relu (GAT)", lambda: ops.sddmm(g, ah, bh, "add", 0.2)),
        ("edge_softmax [nnz, H]", lambda: ops.edge_softmax(g, lg)),
    ]
    layers = [
        ("layer GCNConv", GCNConv(f, f), x),
        ("layer GINConv", GINConv(torch.nn.Identity()), x),
        ("layer SAGEConv", SAGEConv(f, f), x),
        ("layer GATConv (4 heads)", GATConv(f, f // h, heads=h), x),
    ]
    for name, layer, inp in layers:
        cases.append((name, (lambda l, i: lambda: l(i, ei))(layer, inp)))

    only = [s for s in a.only.split(",") if s]
    print(f"gnnc host overhead, us per call (CPU, launches no-ops, CUDA calls stubbed; "
          f"{n} nodes, {nnz} edges, width {f}, {h} heads; torch {torch.__version__}, "
          f"gnnc package {Path(gnnc.__file__).parent})")
    print(f"{'op':34s} {'forward':>9s} {'fwd+bwd':>9s}")
    for name, make in cases:
        if only and not any(s in name for s in only):
            continue
        tf = timeit(fwd(make), a.iters, a.repeats)
        tb = timeit(fwd_bwd(make), a.iters, a.repeats)
        print(f"{name:34s} {tf:9.1f} {tb:9.1f}", flush=True)


if __name__ == "__main__":
    main()
