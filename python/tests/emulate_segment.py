"""Emulates gnnc.segment_matmul's launches on the CPU with a float64 loop
over the types, so that the Python side (argument checks, the layout
cache, the autograd wiring, the RGCN layer) runs without a GPU. The
layouts are still built by the library (host-only, so their offsets are
checked by gnnc), and each kernel's description is checked by it as it
would compile it (gnnc_segment_op_check: K, M, dtype, math)."""
import torch

from gnnc import _lib, segment
from gnnc._desc import dtype_code
from gnnc._lib import SegmentPass

_checked = set()


def _check_op(dtype, k, m, pass_, tf32):
    key = (dtype, k, m, int(pass_), tf32)
    if key not in _checked:
        _lib.segment_op_check(_lib.segment_desc(dtype_code(dtype), k, m, pass_, tf32))
        _checked.add(key)


def _types(seg):
    off = seg.offsets
    for t in range(seg.num_types):
        yield t, int(off[t]), int(off[t + 1])


def _launch_segment_matmul(seg, x, w, y, pass_, tf32):
    k, m = int(w.shape[1]), int(w.shape[2])
    _check_op(x.dtype, k, m, pass_, tf32)
    assert x.is_contiguous() and w.is_contiguous() and y.is_contiguous()
    assert x.shape[0] == y.shape[0] == seg.num_rows and w.shape[0] == seg.num_types
    wd = w.double()
    out = torch.zeros(y.shape, dtype=torch.float64)
    for t, a, b in _types(seg):
        wt = wd[t] if pass_ == SegmentPass.FORWARD else wd[t].t()
        out[a:b] = x[a:b].double() @ wt
    y.copy_(out.to(y.dtype))


def _launch_segment_weight_grad(seg, x, dy, dw, tf32):
    k, m = int(dw.shape[1]), int(dw.shape[2])
    _check_op(x.dtype, k, m, SegmentPass.WEIGHT_GRAD, tf32)
    assert x.shape[0] == dy.shape[0] == seg.num_rows and dw.shape[0] == seg.num_types
    out = torch.zeros(dw.shape, dtype=torch.float64)
    for t, a, b in _types(seg):
        out[t] = x[a:b].double().t() @ dy[a:b].double()
    dw.copy_(out.to(dw.dtype))


def install(monkeypatch):
    """Emulates the segmented matmul (monkeypatch: pytest's, or any object
    with setattr(obj, name, value)); graphs and ops are emulated by
    emulate.install, which this calls too."""
    import emulate
    emulate.install(monkeypatch)
    monkeypatch.setattr(segment, "_launch_segment_matmul", _launch_segment_matmul)
    monkeypatch.setattr(segment, "_launch_segment_weight_grad",
                        _launch_segment_weight_grad)
