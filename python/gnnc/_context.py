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


class Context:
    def __init__(self, device: int, cache_dir: Optional[str] = None,
                 tuning_db: Optional[str] = None):
        self.device = int(device)
        handle = _lib.gnnc_context()
        _lib.check(_lib.lib().gnnc_context_create(
            self.device, _lib._enc(cache_dir), _lib._enc(tuning_db),
            ctypes.byref(handle)), f"opening CUDA device {device}")
        self.handle = handle

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
    gnnc's defaults)."""
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
