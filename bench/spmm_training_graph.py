#!/usr/bin/env python3
"""Times gnn.spmm schedules on the graph of the R-MAT training runs.

The graph is examples/train_rmat.py's: R-MAT at --scale (16 edges per node,
seed = scale) made undirected as PyG's to_undirected does. Per op:

  gcn   the graph with self loops, norm='both' (GCNConv's aggregation)
  plain the same graph, a plain sum
  gin   the graph without added loops, a sum with the self term (eps 0)

For each type, the kernel gnnc chooses (as the layers would get it: the
cost model's leaders timed, $GNNC_TUNE_MEASURE) and the edge-parallel
and neighbour-group schedules of --vector-widths, --items and --groups (a
schedule gnnc refuses is recorded with its reason), timed with CUDA events (median of --runs after 3 warm-ups, the L2 warm as
in training). Each output is compared with the chosen kernel's (the
largest difference relative to the row's largest magnitude), and
torch.sparse.mm over the same CSR is timed beside them. Needs a CUDA GPU.

  python3 bench/spmm_training_graph.py --scale 20 --types f16 f32 --out spmm.json
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

import gnn_common as C  # noqa: E402
import gnnc  # noqa: E402
from gnnc import _lib, ops  # noqa: E402
from gnnc.graph import _schedule_of, buffer_of  # noqa: E402

TYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
OPS = {"gcn": ("self_loops", "both", None), "plain": ("self_loops", "none", None),
       "gin": (None, "none", 0.0)}


def schedules(vector_widths, items, groups):
    """Edge-parallel schedules with `items` per worker and neighbour groups
    of `groups`, at each vector width (gnnc fills in the rest and refuses a
    width the type or the features cannot take)."""
    out = []
    for vw in vector_widths:
        out += [f"#gnn.schedule<strategy = edge_parallel, vector_width = {vw}, "
                f"edges_per_warp = {e}>" for e in items]
        out += [f"#gnn.schedule<strategy = neighbor_group, vector_width = {vw}, "
                f"group_size = {g}>" for g in groups]
    return out


def median_ms(fn, dev, runs):
    """Median of `runs` timed calls (gnn_common.Span) after 3 untimed ones."""
    times = []
    for i in range(runs + 3):
        with C.Span(dev) as span:
            fn()
        if i >= 3:
            times.append(span.ms())
    return sorted(times)[len(times) // 2]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--scale", type=int, default=20)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--types", nargs="+", default=["f16", "f32"], choices=list(TYPES))
    p.add_argument("--ops", nargs="+", default=["gcn", "plain", "gin"], choices=list(OPS))
    p.add_argument("--vector-widths", type=int, nargs="+", default=[4, 8])
    p.add_argument("--items", type=int, nargs="+", default=[256, 512],
                   help="edge-parallel items per worker")
    p.add_argument("--groups", type=int, nargs="+", default=[32, 64],
                   help="neighbour-group sizes")
    p.add_argument("--runs", type=int, default=15)
    p.add_argument("--out")
    a = p.parse_args()
    if not torch.cuda.is_available():
        return C.skip("needs a CUDA GPU")
    dev = torch.device("cuda")
    ei, n = C.rmat_edge_index(a.scale, 16, seed=a.scale, dev=dev, symmetrize=True)
    rows = []
    for tname in a.types:
        dtype = TYPES[tname]
        x = torch.randn(n, a.width, device=dev).to(dtype)
        y = torch.empty_like(x)
        for op in a.ops:
            variant, norm, self_weight = OPS[op]
            g = gnnc.graph.cached_graph(ei, n, variant, dev)
            spec = ops._spmm_spec(dtype, a.width, 0, False, "sum", norm, self_weight, False)
            ref = None
            for asked in [None] + schedules(a.vector_widths, a.items, a.groups):
                row = dict(type=tname, op=op, nnz=g.nnz, asked=asked or "chosen")
                try:
                    t0 = time.perf_counter()
                    k = g.kernel(spec, asked)
                    row["kernel_s"] = time.perf_counter() - t0

                    def run():
                        ops._run(g, _lib.lib().gnnc_spmm, "spmm", k, buffer_of(x),
                                 buffer_of(None), buffer_of(y))
                    y.fill_(float("nan"))
                    run()
                    got = y.float()
                    if ref is None:
                        ref = got.clone()
                    scale = ref.abs().amax(dim=1, keepdim=True).clamp_min(1e-6)
                    row["max_diff_vs_chosen"] = float(((got - ref).abs() / scale).max())
                    row["ms"] = median_ms(run, dev, a.runs)
                    row["schedule"], row["source"] = _schedule_of(k)
                except Exception as e:  # a schedule this op refuses
                    row["error"] = str(e).split("\n")[0][:300]
                rows.append(row)
                print(json.dumps(row), flush=True)
        adj = torch.sparse_csr_tensor(g.row_ptr, g.col_idx.long(),
                                      torch.ones(g.nnz, device=dev, dtype=dtype), (n, n))
        row = dict(type=tname, op="torch.sparse.mm (last graph)",
                   ms=median_ms(lambda: torch.sparse.mm(adj, x), dev, a.runs))
        rows.append(row)
        print(json.dumps(row), flush=True)
        del x, y, adj
    if a.out:
        Path(a.out).write_text(json.dumps(dict(device=C.gpu_name(dev), scale=a.scale,
                                               width=a.width, rows=rows), indent=1))


if __name__ == "__main__":
    main()
