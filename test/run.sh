#!/usr/bin/env bash
# Builds gnnc if needed and runs every test: GoogleTest suites, lit tests and
# the GPU tests (ctest label "gpu"), which skip when no GPU is present. When
# they skip, this says so and why.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh || exit 1
build=${GNNC_BUILD_DIR:-build}
ctest --test-dir "$build" --output-on-failure -j "$(nproc)"
rc=$?
probe="$build/bin/gnnc-runtime-gpu-tests"
if [ -x "$probe" ]; then
  reason=$("$probe" --gtest_filter=Gpu.DeviceProperties 2>&1 | grep -m1 -o 'no GPU: .*')
  if [ -n "$reason" ]; then
    echo "NOTE: the GPU tests (ctest -L gpu) were skipped: $reason"
  else
    echo "NOTE: a GPU is present; the GPU tests ran."
  fi
fi
if command -v python3 >/dev/null &&
   ! python3 -c "import torch" 2>/dev/null; then
  echo "NOTE: torch is not installed: the Python package's torch tests" \
       "(ctest -R python) were skipped; its host tests ran."
fi
exit $rc
