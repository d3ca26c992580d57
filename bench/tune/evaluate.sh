#!/usr/bin/env bash
# The autotuner evaluation: every enumerated schedule of the evaluation
# kernels (bench/tune/*.gnn) measured on each graph, then scored by
# evaluate.py. Needs a GPU and a build's gnn-tune.
#
#   bash bench/tune/evaluate.sh --bin BIN --out OUT [GRAPH...] [--rmat S...] \
#        [--edge-factor N]
#        [--kernels "spmm-eval spmm-eval-widths sddmm-eval sddmm-eval-add"]
#        [--limit SECONDS] [--calibration FILE]
#
# Writes OUT/<kernels>.log (one gnn-tune log per kernel file, every graph),
# OUT/times.txt and OUT/evaluation.md (the tuned .gnn files are dropped). Each gnn-tune run stops after --limit seconds
# (default 600); a kernel whose table is incomplete is listed as skipped.
# The kernel cache ($GNNC_CACHE_DIR) can be filled beforehand without a GPU
# with `gnn-tune KERNELS.gnn --rmat 4 --top-k 1000 --precompile`.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin="" out="" limit=600 calibration=""
kernels="spmm-eval spmm-eval-widths sddmm-eval sddmm-eval-add"
graphs=()
while [ $# -gt 0 ]; do
  case "$1" in
  --bin) bin=$2; shift 2 ;;
  --out) out=$2; shift 2 ;;
  --kernels) kernels=$2; shift 2 ;;
  --limit) limit=$2; shift 2 ;;
  --calibration) calibration=$2; shift 2 ;;
  --rmat) graphs+=(--rmat "$2"); shift 2 ;;
  --edge-factor) graphs+=(--edge-factor "$2"); shift 2 ;;
  -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
  -*) echo "evaluate.sh: unknown option $1" >&2; exit 2 ;;
  *) graphs+=("$1"); shift ;;
  esac
done
if [ -z "$bin" ] || [ -z "$out" ] || [ ${#graphs[@]} -eq 0 ]; then
  echo "usage: evaluate.sh --bin BIN --out OUT [GRAPH...] [--rmat S...]" >&2
  exit 2
fi
if [ ! -x "$bin/gnn-tune" ]; then
  echo "evaluate.sh: $bin/gnn-tune not found" >&2
  exit 2
fi
mkdir -p "$out"
tuned=$(mktemp -d)
trap 'rm -rf "$tuned"' EXIT
extra=()
[ -n "$calibration" ] && extra+=(--calibration "$calibration")
logs=()
for k in $kernels; do
  file="$here/$k.gnn"
  if [ ! -f "$file" ]; then
    echo "evaluate.sh: $file: no such kernel file" >&2
    exit 2
  fi
  log="$out/$k.log"
  logs+=("$log")
  start=$(date +%s)
  timeout "$limit" "$bin/gnn-tune" "$file" "${graphs[@]}" --no-db \
    --top-k 1000 --show 1000 -o "$tuned" --force "${extra[@]}" \
    >"$log" 2>&1
  rc=$?
  echo "$k: rc $rc, $(($(date +%s) - start)) s" | tee -a "$out/times.txt"
done
python3 "$here/evaluate.py" "${logs[@]}" | tee "$out/evaluation.md"
