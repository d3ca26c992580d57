#!/usr/bin/env bash
# Builds gnnc's fuzz targets (a clang build directory of their own, with
# libFuzzer, AddressSanitizer and UndefinedBehaviorSanitizer) and runs each
# for a bounded time on a fixed seed, starting from the seed corpus of the
# tests (test/fuzz/make_seeds.py). Fails if any target reports a crash, a
# hang (an input taking longer than --timeout), a leak, an out-of-memory or
# a sanitizer report; the reproducer is left in the artifacts directory.
#
#   test/fuzz/run.sh                   every target for 10 seconds (CI)
#   test/fuzz/run.sh --minutes 30      every target for 30 minutes
#   test/fuzz/run.sh --runs 1000000    every target for 1,000,000 inputs
#   test/fuzz/run.sh gnn npz           only these targets
#
# Options: --seconds N | --minutes N (time per target; default 10 s unless
# --runs is given), --runs N (inputs per target; with a time limit,
# whichever comes first), --seed N (default 1), --timeout N (seconds per
# input, default 20), --keep-corpus (keep the corpus grown by earlier runs
# instead of starting from the seeds), --work DIR (seeds, corpora, logs
# and reproducers; default BUILD/fuzz: runs at the same time need their
# own), --no-build. Environment: GNNC_FUZZ_BUILD_DIR (default build-fuzz),
# CC/CXX (default clang-22/clang++-22), GNNC_FUZZ_JOBS (build jobs).
# Targets: gnn mtx mtx-gz snap npz npy manifest tuning-db.
set -uo pipefail
cd "$(dirname "$0")/../.."
src=$PWD

seconds=
runs=0
work=
seed=1
timeout=20
keep=0
build=1
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --minutes) seconds=$(($2 * 60)); shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --timeout) timeout=$2; shift 2 ;;
    --keep-corpus) keep=1; shift ;;
    --work) work=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ -z "$seconds" ]; then
  if [ "$runs" -gt 0 ]; then seconds=0; else seconds=10; fi
fi
all=(gnn mtx mtx-gz snap npz npy manifest tuning-db)
[ ${#targets[@]} -eq 0 ] && targets=("${all[@]}")
for t in "${targets[@]}"; do
  case " ${all[*]} " in
    *" $t "*) ;;
    *) echo "run.sh: unknown target '$t' (targets: ${all[*]})" >&2; exit 2 ;;
  esac
done

dir=${GNNC_FUZZ_BUILD_DIR:-build-fuzz}
if [ $build -eq 1 ]; then
  if [ ! -f "$dir/build.ninja" ]; then
    # -O1 and no NDEBUG: assertions (gnnc's and MLIR's inline ones) stay on.
    CC=${CC:-clang-22} CXX=${CXX:-clang++-22} cmake -S . -B "$dir" -G Ninja \
      -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS_RELEASE=-O1 \
      -DCMAKE_CXX_FLAGS_RELEASE=-O1 -DCUDAToolkit_ROOT=/usr/local/cuda \
      -DGNNC_BUILD_FUZZERS=ON -DGNNC_BUILD_TESTS=OFF \
      -DGNNC_BUILD_BENCH=OFF || exit 1
  fi
  cmake --build "$dir" --target gnnc-fuzzers -j "${GNNC_FUZZ_JOBS:-$(nproc)}" ||
    exit 1
fi

work=${work:-$dir/fuzz}
rm -rf "$work/seeds"
python3 test/fuzz/make_seeds.py "$work/seeds" || exit 1
mkdir -p "$work/artifacts" "$work/logs"

dict_of() {
  case "$1" in
    gnn) echo gnn ;;
    mtx|mtx-gz) echo mtx ;;
    snap) echo snap ;;
    npz|npy) echo npy ;;
    manifest) echo manifest ;;
    tuning-db) echo tuning-db ;;
  esac
}

failed=()
total=0
began=$(date +%s)
printf '%-10s %12s %8s  %s\n' target executions seconds result
for t in "${targets[@]}"; do
  corpus=$work/corpus/$t
  [ $keep -eq 0 ] && rm -rf "$corpus"
  mkdir -p "$corpus"
  log=$work/logs/$t.log
  args=(-seed="$seed" -timeout="$timeout" -rss_limit_mb=2048
        -dict="$src/test/fuzz/dicts/$(dict_of "$t").dict"
        -artifact_prefix="$work/artifacts/$t-" -print_final_stats=1)
  [ "$seconds" -gt 0 ] && args+=(-max_total_time="$seconds")
  [ "$runs" -gt 0 ] && args+=(-runs="$runs")
  start=$(date +%s)
  "$dir/bin/gnnc-fuzz-$t" "${args[@]}" "$corpus" "$work/seeds/$t" \
    > "$log" 2>&1
  rc=$?
  elapsed=$(($(date +%s) - start))
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" |
          grep -o '[0-9]*$' | tail -1)
  if [ $rc -eq 0 ]; then
    result=ok
  else
    result="FAILED (exit $rc): $(grep -m1 -E 'ERROR:|error:|SUMMARY' "$log")"
    failed+=("$t")
  fi
  printf '%-10s %12s %8s  %s\n' "$t" "${execs:-?}" "$elapsed" "$result"
  total=$((total + ${execs:-0}))
done
printf '%-10s %12s %8s\n' all "$total" "$(($(date +%s) - began))"
if [ ${#failed[@]} -gt 0 ]; then
  echo "run.sh: failed: ${failed[*]}; logs in $work/logs, reproducers in" \
       "$work/artifacts (rerun one: $dir/bin/gnnc-fuzz-<target> FILE)" >&2
  for t in "${failed[@]}"; do
    echo "---- $work/logs/$t.log (end) ----" >&2
    tail -n 40 "$work/logs/$t.log" >&2
  done
  exit 1
fi
