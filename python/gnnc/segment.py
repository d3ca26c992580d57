"""gnnc.segment_matmul: pyg_lib's segmented matmul on gnnc's kernels.

``segment_matmul(inputs, ptr, other)`` computes, for each type t, the rows
``inputs[ptr[t]:ptr[t+1]] @ other[t]``: inputs is [N, K] with rows grouped
by type, ptr the T + 1 offsets (int64, on the CPU or the GPU), other
[T, K, M]. Its gradient runs gnnc's transposed-weights kernel for the
inputs (dY_t W_t^T) and its weight-gradient kernel for the weights
(X_t^T dY_t).

Precision: f32, f16 and bf16 (inputs and weights of one dtype; 16-bit
types accumulate in f32). f32 runs on tensor cores with TF32 inputs when
``torch.backends.cuda.matmul.allow_tf32`` is true (as torch.mm would),
else in exact f32 arithmetic; the backward uses the forward's choice.

The segment layout (gnnc's device copy of the offsets and the routing
tables of its kernels) is cached: by the ptr tensor's identity (storage,
shape, device, version counter), then by the offsets' values, so a ptr
rebuilt every step with the same values uploads nothing again.
"""
from __future__ import annotations

import ctypes
import threading
from collections import OrderedDict
from typing import Dict, Optional, Tuple

import numpy as np
import torch
from torch import Tensor

from . import _context, _lib
from . import ops as _ops
from . import graph as _graph_module
from ._cache import GraphCache
from ._desc import dtype_code
from ._lib import SegmentPass
from .graph import buffer_of

__all__ = ["segment_matmul", "Segments", "cached_segments"]


def _device_index(device: torch.device) -> int:
    """The CUDA index of `device`; -1 for the CPU where tests allow it (the
    launches are then emulated)."""
    if device.type == "cpu" and _graph_module._allow_cpu:
        return -1
    if device.type != "cuda":
        raise ValueError(
            f"gnnc.segment_matmul runs on CUDA tensors, got {device}")
    return device.index if device.index is not None else torch.cuda.current_device()


class Segments:
    """A segment layout on a device: gnnc's handle (its own copy of the
    offsets and the routing tables of its kernels) and the kernels by what
    they compute. Host-only (no kernels) on the CPU."""

    def __init__(self, offsets: np.ndarray, num_rows: int, device: torch.device,
                 name: Optional[str] = None):
        self.offsets = np.ascontiguousarray(offsets, dtype=np.int64)
        self.num_rows = int(num_rows)
        self.num_types = int(self.offsets.shape[0]) - 1
        self._device_index = _device_index(device)
        self.device = (torch.device("cuda", self._device_index)
                       if self._device_index >= 0 else torch.device("cpu"))
        ctx = (_context.get(self._device_index).handle
               if self._device_index >= 0 else None)
        self._handle = _lib.segments_create(ctx, name, self.num_rows, self.offsets)
        self._kernels: Dict[Tuple, object] = {}
        self._lock = threading.Lock()

    def kernel(self, dtype, k: int, m: int, pass_: SegmentPass, tf32: bool):
        """gnnc's kernel of this pass on this layout (compiled on first
        request, kept)."""
        key = (dtype, int(k), int(m), int(pass_), bool(tf32))
        found = self._kernels.get(key)
        if found is not None:
            return found
        with self._lock:
            found = self._kernels.get(key)
            if found is None:
                desc = _lib.segment_desc(dtype_code(dtype), k, m, pass_, tf32)
                found = _lib.gnnc_segment_kernel()
                _lib.check(_lib.lib().gnnc_segment_kernel_get(
                    self._handle, ctypes.byref(desc), None, ctypes.byref(found)),
                    "gnnc.segment_matmul")
                self._kernels[key] = found
        return found

    def schedule(self, dtype, k: int, m: int, pass_: SegmentPass = SegmentPass.FORWARD,
                 tf32: bool = False) -> str:
        """The schedule gnnc runs for this pass (compiling its kernel)."""
        kernel = self.kernel(dtype, k, m, pass_, tf32)
        text = ctypes.create_string_buffer(1024)
        _lib.check(_lib.lib().gnnc_segment_kernel_schedule(kernel, text, len(text),
                                                           None, 0))
        return text.value.decode()

    def __del__(self):
        handle = getattr(self, "_handle", None)
        self._handle = None
        try:
            # At interpreter exit the modules may already be torn down.
            if handle and not _context.exiting:
                _lib.lib().gnnc_segments_destroy(handle)
        except Exception:
            pass


# --- the layout cache -------------------------------------------------------

_by_identity = GraphCache(capacity=64)
_by_value: "OrderedDict[Tuple, Segments]" = OrderedDict()
_by_value_lock = threading.Lock()
_BY_VALUE_CAPACITY = 64


def _host_offsets(ptr: Tensor) -> np.ndarray:
    if ptr.dim() != 1 or ptr.shape[0] < 1:
        raise ValueError(
            f"gnnc.segment_matmul: ptr must be 1-D with num_types + 1 >= 1 "
            f"offsets, got shape {tuple(ptr.shape)}")
    if ptr.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"gnnc.segment_matmul: ptr must hold int64 offsets, got {ptr.dtype}")
    return ptr.detach().to("cpu", torch.int64).numpy()


def cached_segments(ptr: Tensor, num_rows: int, device: torch.device) -> Segments:
    """The layout of `ptr` over `num_rows` rows on `device`: the one built
    for this tensor (unchanged since), else the one of the same offsets,
    else a new one (its offsets checked by gnnc)."""
    device = torch.device("cuda", _device_index(device)) if device.type == "cuda" \
        else device

    def build() -> Segments:
        offsets = _host_offsets(ptr)
        key = (str(device), int(num_rows), offsets.tobytes())
        with _by_value_lock:
            found = _by_value.get(key)
            if found is not None:
                _by_value.move_to_end(key)
                return found
        made = Segments(offsets, num_rows, device)
        with _by_value_lock:
            _by_value[key] = made
            while len(_by_value) > _BY_VALUE_CAPACITY:
                _by_value.popitem(last=False)
        return made

    return _by_identity.get_or_build(ptr, int(num_rows), ("segments", str(device)), build)


def clear_cache() -> None:
    _by_identity.clear()
    with _by_value_lock:
        _by_value.clear()


# --- launches (replaced by the emulation in the CPU tests) -----------------


# Launched as gnnc's other ops are (ops._run: the layout's device current,
# the current stream read without torch.cuda's Python layers).
_run = _ops._run


def _launch_segment_matmul(seg: Segments, x: Tensor, w: Tensor, y: Tensor,
                           pass_: SegmentPass, tf32: bool) -> None:
    """y = x W_t per type (FORWARD: x [N, K], y [N, M]) or x W_t^T
    (INPUT_GRAD: x [N, M], y [N, K]); w [T, K, M]."""
    k, m = int(w.shape[1]), int(w.shape[2])
    kernel = seg.kernel(x.dtype, k, m, pass_, tf32)
    _run(seg, _lib.lib().gnnc_segment_matmul, "gnnc.segment_matmul", kernel,
         buffer_of(x), buffer_of(w), buffer_of(y))


def _launch_segment_weight_grad(seg: Segments, x: Tensor, dy: Tensor, dw: Tensor,
                                tf32: bool) -> None:
    """dw[t] = x_t^T dy_t (x [N, K], dy [N, M], dw [T, K, M])."""
    k, m = int(dw.shape[1]), int(dw.shape[2])
    kernel = seg.kernel(x.dtype, k, m, SegmentPass.WEIGHT_GRAD, tf32)
    _run(seg, _lib.lib().gnnc_segment_matmul_weight_grad,
         "gnnc.segment_matmul (weight gradient)", kernel, buffer_of(x),
         buffer_of(dy), buffer_of(dw))


# --- the autograd op ---------------------------------------------------------

_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def _check(inputs: Tensor, ptr: Tensor, other: Tensor) -> None:
    if not isinstance(inputs, Tensor) or not isinstance(other, Tensor) \
            or not isinstance(ptr, Tensor):
        raise TypeError("gnnc.segment_matmul takes tensors (inputs, ptr, other)")
    if inputs.dim() != 2:
        raise ValueError(
            f"gnnc.segment_matmul: inputs must be [N, K], got shape {tuple(inputs.shape)}")
    if other.dim() != 3:
        raise ValueError(
            f"gnnc.segment_matmul: other must be [T, K, M], got shape {tuple(other.shape)}")
    if inputs.shape[1] != other.shape[1]:
        raise ValueError(
            f"gnnc.segment_matmul: inputs has K = {inputs.shape[1]} columns but "
            f"other is [T, K, M] = {tuple(other.shape)}")
    if ptr.dim() != 1 or ptr.shape[0] != other.shape[0] + 1:
        raise ValueError(
            f"gnnc.segment_matmul: ptr must hold T + 1 = {other.shape[0] + 1} offsets "
            f"for other of shape {tuple(other.shape)}, got shape {tuple(ptr.shape)}")
    if inputs.dtype not in _DTYPES or other.dtype != inputs.dtype:
        raise TypeError(
            f"gnnc.segment_matmul: inputs and other must share one dtype of f32, f16 "
            f"or bf16, got {inputs.dtype} and {other.dtype}")
    if inputs.device != other.device:
        raise ValueError(
            f"gnnc.segment_matmul: inputs is on {inputs.device}, other on {other.device}")
    if ptr.device.type != "cpu" and ptr.device != inputs.device:
        raise ValueError(
            f"gnnc.segment_matmul: ptr is on {ptr.device}, inputs on {inputs.device}")


def _tf32(dtype) -> bool:
    return dtype == torch.float32 and bool(torch.backends.cuda.matmul.allow_tf32)


class _SegmentMatmul(torch.autograd.Function):
    @staticmethod
    def forward(ctx, inputs: Tensor, seg: Segments, other: Tensor, tf32: bool):
        x = inputs.contiguous()
        w = other.contiguous()
        y = x.new_empty((x.shape[0], w.shape[2]))
        _launch_segment_matmul(seg, x, w, y, SegmentPass.FORWARD, tf32)
        ctx.seg, ctx.tf32 = seg, tf32
        ctx.save_for_backward(x if ctx.needs_input_grad[2] else None,
                              w if ctx.needs_input_grad[0] else None)
        return y

    @staticmethod
    def backward(ctx, dy: Tensor):
        x, w = ctx.saved_tensors
        dy = dy.contiguous()
        dx = dw = None
        if ctx.needs_input_grad[0]:
            dx = dy.new_empty((dy.shape[0], w.shape[1]))
            _launch_segment_matmul(ctx.seg, dy, w, dx, SegmentPass.INPUT_GRAD, ctx.tf32)
        if ctx.needs_input_grad[2]:
            dw = dy.new_empty((ctx.seg.num_types, x.shape[1], dy.shape[1]))
            _launch_segment_weight_grad(ctx.seg, x, dy, dw, ctx.tf32)
        return dx, None, dw, None


def segment_matmul(inputs: Tensor, ptr: Tensor, other: Tensor) -> Tensor:
    """pyg_lib.ops.segment_matmul on gnnc's kernels: for each type t,
    ``out[ptr[t]:ptr[t+1]] = inputs[ptr[t]:ptr[t+1]] @ other[t]``.

    inputs: [N, K] (rows grouped by type); ptr: [T + 1] int64 offsets (CPU
    or on inputs' device; 0 first, non-decreasing, N last); other: [T, K,
    M] of inputs' dtype. Returns [N, M]. Differentiable in inputs and
    other."""
    _check(inputs, ptr, other)
    seg = cached_segments(ptr, int(inputs.shape[0]), inputs.device)
    return _SegmentMatmul.apply(inputs, seg, other, _tf32(inputs.dtype))
