#!/usr/bin/env bash
# The benchmark suite in one command, run from the repository root on a GPU
# machine (no network, nothing installed):
#
#   bash bench/run.sh [--quick] --bin DIR --datasets DIR --out DIR
#
#   1. gnn-bench (DIR/gnn-bench from --bin) times gnnc against cuSPARSE and
#      dumps the graphs it ran to a temporary folder,
#   2. bench/torch_baseline.py times torch.sparse.mm and PyG-style message
#      passing on those same graphs,
#   3. bench/report.py merges both into OUT/<gpu>/<date>/{results.json,
#      results.md,speedup.png} and prints the markdown.
#
# Also in OUT: gnn-bench.json, torch.json and the two logs (7 files in all).
# Options:
#   --quick                  a few cases (well under a minute)
#   --stage all|bench|torch|report   run one step (default all); torch
#                            re-dumps the graphs itself (gnn-bench
#                            --dump-only), report reads OUT/*.json
#   --bench-time-limit S     gnn-bench starts no case after S s (default 360)
#   --torch-time-limit S     the same for the torch script (default 150)
#   --bench-args "..."       more gnn-bench flags (e.g. "--rmat 18,19")
#   --torch-args "..."       more torch_baseline.py flags
# The exit status is gnn-bench's (1 when a gnnc kernel failed its check),
# else the first failing step's.
set -uo pipefail
export PYTHONUNBUFFERED=1

quick=""
bin=""
datasets=""
out=""
stage="all"
bench_limit=360
torch_limit=150
bench_args=""
torch_args=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick="--quick" ;;
    --bin) bin="$2"; shift ;;
    --datasets) datasets="$2"; shift ;;
    --out) out="$2"; shift ;;
    --stage) stage="$2"; shift ;;
    --bench-time-limit) bench_limit="$2"; shift ;;
    --torch-time-limit) torch_limit="$2"; shift ;;
    --bench-args) bench_args="$2"; shift ;;
    --torch-args) torch_args="$2"; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
if [ -z "$bin" ] || [ -z "$out" ]; then
  echo "usage: bash bench/run.sh [--quick] --bin DIR --datasets DIR --out DIR" >&2
  exit 2
fi
case "$stage" in all|bench|torch|report) ;; *)
  echo "run.sh: --stage must be all, bench, torch or report" >&2; exit 2 ;;
esac
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
exe="$bin/gnn-bench"
dataset_args=()
if [ -n "$datasets" ]; then
  if [ -d "$datasets" ]; then
    dataset_args=(--datasets "$datasets")
  else
    echo "run.sh: warning: no datasets folder at '$datasets'; R-MAT only"
  fi
fi
if [ -n "$quick" ]; then
  bench_limit=0
  torch_limit=0
fi
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }

# The binary needs libnvrtc, libcudart and libcusparse from the CUDA toolkit
# (found through its rpath). If the loader misses any, look in the usual
# toolkit folders and in the CUDA wheels next to PyTorch.
check_libraries() {
  [ -x "$exe" ] || { echo "run.sh: no executable $exe" >&2; return 1; }
  local missing
  missing=$(ldd "$exe" 2>/dev/null | grep "not found")
  [ -z "$missing" ] && return 0
  echo "run.sh: the loader misses:"; echo "$missing"
  if echo "$missing" | grep -q libLLVM; then
    echo "run.sh: gnn-bench links libLLVM dynamically; build it with" \
         "-DGNNC_STATIC_LLVM=ON for machines without LLVM" >&2
    return 1
  fi
  local dirs=""
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib \
           /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -d "$d" ] && dirs="$dirs:$d"
  done
  dirs="$dirs:$(python3 - <<'EOF' 2>/dev/null
import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except Exception:
    roots = []
found = []
for root in roots:
    for d in glob.glob(os.path.join(root, "*", "lib")) + glob.glob(
            os.path.join(root, "cu*", "lib")):
        if os.path.isdir(d):
            found.append(d)
print(":".join(found))
EOF
)"
  export LD_LIBRARY_PATH="${dirs#:}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  missing=$(ldd "$exe" 2>/dev/null | grep "not found")
  if [ -n "$missing" ]; then
    echo "run.sh: still missing after adding the CUDA folders:" >&2
    echo "$missing" >&2
    return 1
  fi
  echo "run.sh: found them with LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
}

tmp=$(mktemp -d /tmp/gnn-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
graphs="$tmp/graphs"
bench_rc=0
first_rc=0

if [ "$stage" = all ] || [ "$stage" = bench ] || [ "$stage" = torch ]; then
  check_libraries || exit 1
fi

if [ "$stage" = all ] || [ "$stage" = bench ]; then
  echo "== [$(elapsed) s] gnn-bench $quick (time limit ${bench_limit} s)"
  # shellcheck disable=SC2086
  "$exe" $quick "${dataset_args[@]}" --dump-graphs "$graphs" \
    --out "$out/gnn-bench.json" --time-limit "$bench_limit" $bench_args \
    2>&1 | tee "$out/gnn-bench.log"
  bench_rc=${PIPESTATUS[0]}
  echo "== [$(elapsed) s] gnn-bench exited with $bench_rc"
  if [ ! -s "$out/gnn-bench.json" ]; then
    echo "run.sh: gnn-bench wrote no results" >&2
    exit $(( bench_rc ? bench_rc : 1 ))
  fi
fi

if [ "$stage" = all ] || [ "$stage" = torch ]; then
  if [ ! -f "$graphs/graphs.json" ]; then
    echo "== [$(elapsed) s] dumping the graphs (gnn-bench --dump-only)"
    # shellcheck disable=SC2086
    "$exe" $quick "${dataset_args[@]}" --dump-graphs "$graphs" --dump-only \
      $bench_args || exit 1
  fi
  echo "== [$(elapsed) s] torch_baseline.py (time limit ${torch_limit} s)"
  # shellcheck disable=SC2086
  python3 "$here/torch_baseline.py" --graphs "$graphs" \
    --out "$out/torch.json" --time-limit "$torch_limit" $torch_args \
    2>&1 | tee "$out/torch.log"
  rc=${PIPESTATUS[0]}
  echo "== [$(elapsed) s] torch_baseline.py exited with $rc"
  [ $rc -ne 0 ] && [ $first_rc -eq 0 ] && first_rc=$rc
fi

if [ "$stage" = all ] || [ "$stage" = report ]; then
  echo "== [$(elapsed) s] report.py"
  torch_json=()
  [ -f "$out/torch.json" ] && torch_json=(--torch "$out/torch.json")
  python3 "$here/report.py" --bench "$out/gnn-bench.json" "${torch_json[@]}" \
    --out "$out"
  rc=$?
  [ $rc -ne 0 ] && [ $first_rc -eq 0 ] && first_rc=$rc
fi

echo "== [$(elapsed) s] done"
if [ $bench_rc -ne 0 ]; then
  echo "run.sh: gnn-bench reported failures (exit $bench_rc); see" \
       "$out/gnn-bench.log" >&2
  exit $bench_rc
fi
exit $first_rc
