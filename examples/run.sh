#!/usr/bin/env bash
# gnnc's main job on data it generates itself:
#   1. gnnc compiles examples/spmm.gnn to CUDA, a manifest and an sm_90 cubin;
#   2. a host program generates an R-MAT graph (Graph500 parameters, scale
#      18: 262,144 nodes, ~4M edges), compiles a kernel for it through the
#      C++ API (the tuning database or the cost model schedules sum_f32
#      and weighted_f16, which leave that to gnnc) and, when a GPU is
#      present, runs it, checks every output against the CPU reference,
#      times it, and times cuSPARSE's SpMM beside it on the same inputs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
build=${GNNC_BUILD_DIR:-build}
out=${GNNC_EXAMPLE_OUT:-$build/example-out}
"$build/bin/gnnc" examples/spmm.gnn -o "$out" --emit=cubin --arch=sm_90
"$build/bin/gnnc-spmm-example" --gnn examples/spmm.gnn --kernel sum_f32 --rmat 18
"$build/bin/gnnc-spmm-example" --gnn examples/spmm.gnn --kernel weighted_f16 --rmat 18
