"""Argument checks for the ops, written against any tensor-like object with
.dtype, .device (with .type and .index), .shape and .is_contiguous(), so
they need no torch."""
from __future__ import annotations

from typing import Optional, Sequence

from ._desc import DTYPES


def _shape(t) -> tuple:
    return tuple(int(s) for s in t.shape)


def _fmt(shape) -> str:
    return "[" + ", ".join("*" if s is None else str(s) for s in shape) + "]"


def check_dtype(name: str, t, dtype=None) -> None:
    """`t` is float32/float16/bfloat16, and of `dtype` when given (the dtype
    of the op's first tensor): gnnc never converts dtypes silently."""
    if str(t.dtype) not in DTYPES:
        raise TypeError(
            f"{name}: gnnc kernels take float32, float16 or bfloat16 tensors, "
            f"got {t.dtype}")
    if dtype is not None and str(t.dtype) != str(dtype):
        raise TypeError(
            f"{name} has dtype {t.dtype} but the op's features are {dtype}; "
            f"convert it explicitly (e.g. {name}.to({dtype}))")


def same_device(a, b) -> bool:
    ia = a.index if a.index is not None else 0
    ib = b.index if b.index is not None else 0
    return a.type == b.type and ia == ib


def check_device(name: str, t, device) -> None:
    """`t` is a CUDA tensor on `device` (the graph's device)."""
    if same_device(t.device, device):
        return
    if t.device.type != "cuda":
        raise ValueError(
            f"{name} is on {t.device}; gnnc kernels run on CUDA tensors "
            f"(move it with {name}.to('{device}'))")
    raise ValueError(f"{name} is on {t.device} but the graph is on {device}")


def check_shape(name: str, t, expected: Sequence[Optional[int]],
                what: str = "") -> None:
    """`t` has shape `expected` (None: any size along that dimension)."""
    shape = _shape(t)
    ok = len(shape) == len(expected) and all(
        e is None or e == s for s, e in zip(shape, expected))
    if not ok:
        hint = f" ({what})" if what else ""
        raise ValueError(
            f"{name} must have shape {_fmt(expected)}{hint}, got {_fmt(shape)}")


def check_tensor(name: str, t, expected_shape, device, dtype=None,
                 what: str = "") -> None:
    check_dtype(name, t, dtype)
    check_device(name, t, device)
    check_shape(name, t, expected_shape, what)


def needs_contiguous(t) -> bool:
    return not t.is_contiguous()
