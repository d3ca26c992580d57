#!/usr/bin/env bash
# Configures (once) and builds gnnc in ./build (or $GNNC_BUILD_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${GNNC_BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCUDAToolkit_ROOT=/usr/local/cuda
fi
cmake --build "$build" -j "$(nproc)"
