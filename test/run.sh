#!/usr/bin/env bash
# Runs every gnnc test in a build directory: GoogleTest suites, lit tests and
# the GPU tests (ctest label "gpu"), which skip when no GPU is present. When
# they skip, this says so and why.
#
#   bash test/run.sh [build-dir]
set -uo pipefail
build=${1:-build}
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
exit $rc
