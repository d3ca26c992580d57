#!/usr/bin/env bash
# Re-scores stored exhaustive measurements with the current cost model: runs
# gnn-tune without measuring on every graph for every evaluation kernel
# file, then evaluate.py --model with those rankings. Needs no GPU; the
# measured kernels must be the ones the current compiler emits.
#
#   bash bench/tune/rescore.sh --bin BIN [--calibration FILE] \
#        --logs "MEASURED.log..." [GRAPH...] [--rmat S...]
#
# Prints evaluate.py's table; the model's logs go to a temporary folder
# (or --keep DIR).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin="" logs="" keep="" calibration=""
graphs=()
while [ $# -gt 0 ]; do
  case "$1" in
  --bin) bin=$2; shift 2 ;;
  --logs) logs=$2; shift 2 ;;
  --keep) keep=$2; shift 2 ;;
  --calibration) calibration=$2; shift 2 ;;
  --rmat) graphs+=(--rmat "$2"); shift 2 ;;
  --edge-factor) graphs+=(--edge-factor "$2"); shift 2 ;;
  -h | --help) sed -n '2,11p' "$0"; exit 0 ;;
  -*) echo "rescore.sh: unknown option $1" >&2; exit 2 ;;
  *) graphs+=("$1"); shift ;;
  esac
done
if [ -z "$bin" ] || [ -z "$logs" ] || [ ${#graphs[@]} -eq 0 ]; then
  echo "usage: rescore.sh --bin BIN --logs \"LOG...\" GRAPH... [--rmat S...]" >&2
  exit 2
fi
dir=${keep:-$(mktemp -d)}
mkdir -p "$dir"
[ -z "$keep" ] && trap 'rm -rf "$dir"' EXIT
extra=()
[ -n "$calibration" ] && extra+=(--calibration "$calibration")
model=()
for k in spmm-eval spmm-eval-widths sddmm-eval sddmm-eval-add; do
  "$bin/gnn-tune" "$here/$k.gnn" "${graphs[@]}" --no-db --no-measure \
    --show 1000 -o "$dir/tuned" --force "${extra[@]}" >"$dir/$k.log" 2>&1 ||
    { echo "rescore.sh: gnn-tune failed on $k.gnn:" >&2; tail -3 "$dir/$k.log" >&2; exit 1; }
  model+=("$dir/$k.log")
done
# shellcheck disable=SC2086
python3 "$here/evaluate.py" $logs --model "${model[@]}"
