#!/usr/bin/env bash
# Installs what gnnc needs to build on Debian 12 (bookworm), and clang 22
# with its libFuzzer and sanitizer runtimes for the fuzz targets
# (test/fuzz). The CUDA 13 toolkit is expected at /usr/local/cuda (NVIDIA's
# packages).
set -euo pipefail
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends \
  cmake ninja-build g++ python3 \
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools \
  libgtest-dev nlohmann-json3-dev zlib1g-dev libzstd-dev \
  clang-22 libclang-rt-22-dev python3-numpy python3-pytest
# The Python package's host tests need numpy and pytest in the python3 on
# PATH (which may not be Debian's); torch is not needed for them.
if ! python3 -c "import numpy, pytest" 2>/dev/null; then
  python3 -m pip install --quiet numpy pytest
fi
if [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "install-deps: the CUDA toolkit was not found at /usr/local/cuda" >&2
  exit 1
fi
