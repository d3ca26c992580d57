"""One gnnc_context per CUDA device for the process, created lazily. No
torch needed (the caller makes sure the device's primary context exists)."""
from __future__ import annotations

import atexit
import ctypes
import os
import threading
from typing import Dict, Optional

from . import _lib

_contexts: Dict[int, "Context"] = {}
_lock = threading.Lock()


#: How many of the cost model's leading schedules are timed on the GPU when
#: a graph's kernel for an op signature is first requested (the fastest is
#: kept for the graph); 0 takes the model's first choice untimed.
DEFAULT_MEASURE_TOP_K = 4


def measure_top_k() -> int:
    """$GNNC_TUNE_MEASURE, else DEFAULT_MEASURE_TOP_K. Its range is checked
    by gnnc_context_set_measure."""
    env = os.environ.get("GNNC_TUNE_MEASURE")
    if env is None or env == "":
        return DEFAULT_MEASURE_TOP_K
    try:
        return int(env)
    except ValueError:
        raise ValueError(f"GNNC_TUNE_MEASURE must be an integer, got {env!r}") from None


class Context:
    def __init__(self, device: int, cache_dir: Optional[str] = None,
                 tuning_db: Optional[str] = None, measure: Optional[int] = None):
        self.device = int(device)
        k = measure_top_k() if measure is None else int(measure)
        handle = _lib.gnnc_context()
        _lib.check(_lib.lib().gnnc_context_create(
            self.device, _lib._enc(cache_dir), _lib._enc(tuning_db),
            ctypes.byref(handle)), f"opening CUDA device {device}")
        self.handle = handle
        self.set_measure(k)

    def set_measure(self, top_k: int) -> None:
        """Time the cost model's `top_k` leading schedules of each kernel
        requested from now on (0: take its first choice)."""
        _lib.check(_lib.lib().gnnc_context_set_measure(self.handle, int(top_k)),
                   "setting how schedules are measured")
        self.measure = int(top_k)

    def device_info(self):
        """(name, NVRTC architecture), e.g. ('NVIDIA H100 80GB HBM3', 'sm_90')."""
        name = ctypes.create_string_buffer(256)
        arch = ctypes.create_string_buffer(64)
        _lib.check(_lib.lib().gnnc_context_device(self.handle, name, len(name),
                                                  arch, len(arch)))
        return name.value.decode(), arch.value.decode()

    def close(self):
        if self.handle:
            _lib.lib().gnnc_context_destroy(self.handle)
            self.handle = None


def get(device: int) -> Context:
    """The context of CUDA device `device`. The kernel cache directory and the
    tuning database come from $GNNC_CACHE_DIR and $GNNC_TUNING_DB (unset:
    gnnc's defaults), how many schedules are timed per kernel from
    $GNNC_TUNE_MEASURE (default DEFAULT_MEASURE_TOP_K)."""
    with _lock:
        ctx = _contexts.get(int(device))
        if ctx is None:
            ctx = Context(device, os.environ.get("GNNC_CACHE_DIR") or None,
                          os.environ.get("GNNC_TUNING_DB") or None)
            _contexts[int(device)] = ctx
        return ctx


exiting = False


@atexit.register
def _shutdown():
    # At exit the process's device memory goes away with it; calling into
    # the driver while CUDA and torch shut down would only risk a crash, so
    # graphs and contexts are not destroyed then.
    global exiting
    exiting = True
