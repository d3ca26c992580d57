import os
import sys
from pathlib import Path

# Kernels are chosen by timing only the cost model's leader of each strategy
# here (the package's default times four and more): the tests build many
# small graphs, and what they check is the kernels' results.
os.environ.setdefault("GNNC_TUNE_MEASURE", "1")

# Run from the source tree without installing: python/ on the path.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pytest


def _lib_reason():
    from gnnc import _lib
    try:
        _lib.load()
        return ""
    except _lib.GnncError as e:
        return f"libgnnc_c.so not available: {e}"


@pytest.fixture(params=["cpu-emulated", "cuda"])
def dev(request, monkeypatch):
    """The device the torch tests run on: 'cuda' runs gnnc's kernels (skips
    without CUDA); 'cpu-emulated' emulates the launches with the torch
    reference on the CPU to check the Python side."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    why = _lib_reason()
    if why:
        pytest.skip(why)
    if request.param == "cuda":
        return _cuda_or_skip(torch)
    import emulate
    emulate.install(monkeypatch)
    return torch.device("cpu")


def _cuda_or_skip(torch):
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device: the GPU tests run on a machine with one")
    from gnnc import _lib
    ok, reason = _lib.gpu_available()
    if not ok:
        pytest.skip(f"gnnc sees no usable GPU: {reason}")
    return torch.device("cuda", torch.cuda.current_device())


@pytest.fixture
def cuda():
    """The current CUDA device, for tests that only make sense on a GPU
    (skips without one, or without the library)."""
    torch = pytest.importorskip("torch", reason="torch is not installed")
    why = _lib_reason()
    if why:
        pytest.skip(why)
    return _cuda_or_skip(torch)
