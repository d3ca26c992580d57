"""gnnc's kernels as PyTorch ops with autograd (torch.library custom ops in
the namespace ``gnnc``), traceable by torch.compile through their fake
implementations.

The custom ops take an integer graph id (``Graph.id``); the functions of
this module take the :class:`gnnc.Graph` itself, check and prepare their
arguments (contiguity, shapes, dtypes, devices) and call them.

Precision: f32, f16 and bf16 tensors; every tensor of one call has the
same dtype (nothing is converted silently). The kernels of f16/bf16
features accumulate in f32 (the default schedules), then round the result
to the features' dtype.
"""
from __future__ import annotations

import os
from typing import Optional, Sequence

import torch
from torch import Tensor

from . import _lib
from ._cache import graphs
from ._desc import DTYPES, OpSpec, dtype_code
from ._validate import check_tensor
from .graph import Graph, buffer_of

__all__ = ["spmm", "sddmm", "edge_softmax", "gat_attention", "snapshot_spmm"]


def _graph(gid: int) -> Graph:
    return graphs.get(gid)


# --- host overhead -------------------------------------------------------------
#
# The kernels of small graphs run for microseconds, so what an op call costs
# on the host matters. What does not change between calls is cached: the
# op descriptions (OpSpec, with the spmm gradient's form) per argument tuple,
# kernel handles per graph (looked up by the spec's identity), the folded
# scaling factors per graph and dtype.

#: Eager calls with plain tensors (no torch.compile tracing, no dispatch or
#: function modes, no functorch transform, no profiler, no JIT tracing) run
#: the ops' implementations through an equivalent torch.autograd.Function
#: (or directly, when no gradient is recorded) instead of through the
#: dispatcher of the torch.library custom ops, whose Python layers cost
#: ~8 us per call without autograd and ~20 us with it (torch 2.15, CPU).
#: Same implementations, same autograd formulas, same results. Everything
#: else (torch.compile, opcheck, fake tensors, the profiler's gnnc:: ranges)
#: goes through the custom ops. GNNC_EAGER_FAST_PATH=0 turns it off.
EAGER_FAST_PATH = os.environ.get("GNNC_EAGER_FAST_PATH", "1") != "0"


def _always() -> bool:
    return True


def _c_fn(name, fallback=_always):
    fn = getattr(torch._C, name, None)
    return fn if fn is not None else fallback


_is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", None) or _always
_dispatch_modes = _c_fn("_len_torch_dispatch_stack")
_function_modes = _c_fn("_len_torch_function_stack")
_functorch_active = _c_fn("_are_functorch_transforms_active")
_profiler_on = getattr(getattr(torch._C, "_autograd", None), "_profiler_enabled", _always)
_jit_tracing = _c_fn("_get_tracing_state", lambda: True)
_is_grad_enabled = torch.is_grad_enabled


def _plain(t) -> bool:
    return t is None or type(t) is Tensor or type(t) is torch.nn.Parameter


def _eager(a: Optional[Tensor], b: Optional[Tensor] = None) -> bool:
    """Whether a call on these tensors may skip the custom op's dispatcher."""
    return (EAGER_FAST_PATH and not _is_compiling() and _plain(a) and _plain(b)
            and not _dispatch_modes() and not _function_modes()
            and not _functorch_active() and not _profiler_on()
            and _jit_tracing() is None)


def _records_grad(a: Optional[Tensor], b: Optional[Tensor] = None) -> bool:
    return _is_grad_enabled() and (
        (a is not None and a.requires_grad) or (b is not None and b.requires_grad))


# The current device and stream, without torch.cuda's Python layers.
_cuda_current_device = _c_fn("_cuda_getDevice", None) or (
    lambda: torch.cuda.current_device())
_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _cuda_raw_stream(index: int) -> int:
    if _raw_stream is not None:
        return _raw_stream(index)
    return torch.cuda.current_stream(index).cuda_stream


def _stream(g: Graph) -> int:
    """The current CUDA stream of g's device."""
    return _cuda_raw_stream(g._device_index)


def _run(g: Graph, fn, what: str, *args) -> None:
    """Calls the launch function `fn(*args, stream)` of the C library with
    g's device current (gnnc makes the graph's context current itself; the
    guard restores the caller's device afterwards), then raises GnncError
    when it fails."""
    index = g._device_index
    if _cuda_current_device() == index:
        status = fn(*args, _cuda_raw_stream(index))
    else:
        with torch.cuda.device(index):
            status = fn(*args, _cuda_raw_stream(index))
    if status:
        _lib.check(status, what)


#: torch dtype -> gnnc dtype (dtype_code's answers, without str()).
_DTYPE_CODES = {getattr(torch, name[len("torch."):]): code
                for name, code in DTYPES.items()}


def _code(dtype):
    code = _DTYPE_CODES.get(dtype)
    return code if code is not None else dtype_code(dtype)


_SPECS: dict = {}


def _spec(key, make) -> OpSpec:
    """The OpSpec of `key` (the arguments of `make`), built once."""
    spec = _SPECS.get(key)
    if spec is None:
        spec = make()
        if len(_SPECS) >= 4096:
            _SPECS.clear()
        _SPECS[key] = spec
    return spec


def _spmm_spec(dtype, width, row_stride, edge_values, reduce, norm, self_weight,
               grad) -> OpSpec:
    # Keyed by the torch dtype: hashing gnnc's enums runs Python code.
    spec = _SPECS.get(("spmm", dtype, width, row_stride, edge_values, reduce, norm,
                       self_weight, grad))
    if spec is not None:
        return spec

    def make():
        s = OpSpec.spmm(_code(dtype), width, row_stride=row_stride,
                        edge_values=edge_values, reduce=reduce, norm=norm,
                        self_weight=self_weight)
        return s.feature_grad() if grad else s
    return _spec(("spmm", dtype, width, row_stride, edge_values, reduce, norm,
                  self_weight, grad), make)


def _row_slice(t: Tensor, h: int, width: int) -> Tensor:
    """Head h's features of a contiguous [rows, H, F] tensor, as a strided
    view whose data pointer is offset by h*F elements."""
    return t.reshape(t.shape[0], -1)[:, h * width:]


def _launch_spmm(g: Graph, spec: OpSpec, x: Tensor, values: Optional[Tensor],
                 y: Tensor) -> None:
    k = g.kernel(spec)
    _run(g, _lib.lib().gnnc_spmm, "spmm", k, buffer_of(x), buffer_of(values),
         buffer_of(y))


def _with_spare_row(t: Tensor) -> Tensor:
    """`t` (contiguous) or a copy of it whose storage extends at least one row
    past its end. A head's strided view starts h*F elements into the rows,
    and gnnc checks that rows x row_stride elements lie in the buffer from
    there, which holds only when the storage has one more row."""
    need = (t.shape[0] + 1) * t[0].numel() * t.element_size()
    storage = t.untyped_storage()
    if storage.data_ptr() + storage.nbytes() - t.data_ptr() >= need:
        return t
    buf = t.new_empty((t.shape[0] + 1,) + tuple(t.shape[1:]))
    buf[: t.shape[0]].copy_(t)
    return buf[: t.shape[0]]


def _spmm_heads(g: Graph, x: Tensor, values: Optional[Tensor], reduce: str,
                norm: str, self_weight: Optional[float], rows: int,
                grad: bool = False) -> Tensor:
    """y[rows, ...] = the spmm of x over g. x: [cols, F] or [cols, H, F];
    values: None, [nnz] (one value per edge) or [nnz, H] (one per edge and
    head). With `grad`, runs the feature-gradient op of that spmm instead
    (gnnc_spmm_feature_grad_op; g is then the forward's transpose).

    Per-head values: when a head's F features fill whole 16-byte vectors,
    one launch per head reads and writes the heads' rows in place (row
    stride H*F, base pointer offset by h*F elements); otherwise each head's
    features are copied to a contiguous tensor first.
    """
    x = x.contiguous()
    out_shape = (rows, *x.shape[1:])
    numel = x.numel()
    if numel == 0 or rows == 0 or g.nnz == 0:
        y = torch.zeros(out_shape, dtype=x.dtype, device=x.device)
        if self_weight is not None and g.nnz == 0:
            y.add_(x, alpha=1.0 + self_weight)
        return y
    dtype = x.dtype

    def spec_of(width, row_stride, edge_values):
        return _spmm_spec(dtype, width, row_stride, edge_values, reduce, norm,
                          self_weight, grad)

    if values is None or values.dim() == 1:
        spec = spec_of(numel // x.shape[0], 0, values is not None)
        y = torch.empty(out_shape, dtype=x.dtype, device=x.device)
        _launch_spmm(g, spec, x, values.contiguous() if spec.edge_values else None, y)
        return y
    heads, width = x.shape[1], x.shape[2]
    # Each head's values, contiguous: one transposing copy for all heads.
    vs = values.t().contiguous()
    if (width * x.element_size()) % 16 == 0:
        spec = spec_of(width, heads * width, True)
        xs = _with_spare_row(x)
        y = x.new_empty((rows + 1,) + tuple(x.shape[1:]))[:rows]
        xf, yf = _row_slice(xs, 0, width), _row_slice(y, 0, width)
        for h in range(heads):
            o = h * width
            _launch_spmm(g, spec, xf[:, o:], vs[h], yf[:, o:])
        return y
    spec = spec_of(width, 0, True)
    # Heads first, each contiguous: one copy in, one copy out.
    xt = x.transpose(0, 1).contiguous()
    yt = torch.empty((heads, rows, width), dtype=x.dtype, device=x.device)
    for h in range(heads):
        _launch_spmm(g, spec, xt[h], vs[h], yt[h])
    return yt.transpose(0, 1).contiguous()


# --- spmm ---------------------------------------------------------------------

#: Fold degree scaling and mean's 1/deg into per-edge values: spmm(norm=...,
#: reduce='mean') then runs as a plain sum with edge values, forward and
#: backward, y[r] = sum_e (row[r] * col[c] * v_e) * x[c], at the cost of one
#: nnz-long values array per launch. Off by default: the tuner ranks scaled
#: and mean spmm like sums, so the kernels scale by degrees themselves. (It
#: was on while the tuner ranked only unscaled spmm and scaled spmm ran the
#: default schedule, 4-9x slower on an H100; to be re-measured both ways.)
FOLD_SCALING = False


def _edge_factors(g: Graph, dtype, reduce: str, norm: str):
    """(f, f in `dtype`, f as a column): g.spmm_edge_factors of the spmm
    (reduce, norm), cached on g; (None, None, None) when all are 1."""
    key = ("factors", dtype, reduce, norm)
    hit = g._op_cache.get(key)
    if hit is None:
        f = g.spmm_edge_factors(OpSpec.spmm(dtype_code(dtype), 1, reduce=reduce,
                                            norm=norm))
        hit = (None, None, None) if f is None else (f, f.to(dtype), f.unsqueeze(1))
        g._op_cache[key] = hit
    return hit


def _fold_scaling(g: Graph, dtype, values: Optional[Tensor], reduce: str, norm: str):
    """(values, reduce, norm) to launch: with FOLD_SCALING, the row and
    column factors of a sum or mean multiplied into the edge values."""
    if not FOLD_SCALING or reduce == "max" or (reduce == "sum" and norm == "none"):
        return values, reduce, norm
    f, f_dtype, f_col = _edge_factors(g, dtype, reduce, norm)
    if f is None:
        return values, "sum", "none"
    if values is None:
        return f_dtype, "sum", "none"
    ff = f if values.dim() == 1 else f_col
    return (values.float() * ff).to(dtype), "sum", "none"


def _spmm_impl(graph: int, x: Tensor, values: Optional[Tensor], reduce: str,
               norm: str, self_weight: Optional[float]) -> Tensor:
    g = _graph(graph)
    values, reduce, norm = _fold_scaling(g, x.dtype, values, reduce, norm)
    return _spmm_heads(g, x, values, reduce, norm, self_weight, g.num_rows)


@torch.library.custom_op("gnnc::spmm", mutates_args=())
def _spmm(graph: int, x: Tensor, values: Optional[Tensor], reduce: str, norm: str,
          self_weight: Optional[float]) -> Tensor:
    return _spmm_impl(graph, x, values, reduce, norm, self_weight)


@_spmm.register_fake
def _(graph, x, values, reduce, norm, self_weight):
    g = _graph(graph)
    return x.new_empty((g.num_rows,) + tuple(x.shape[1:]))


def _spmm_grad_x_impl(graph: int, dy: Tensor, values: Optional[Tensor], reduce: str,
                      norm: str, self_weight: Optional[float]) -> Tensor:
    g = _graph(graph)
    values, reduce, norm = _fold_scaling(g, dy.dtype, values, reduce, norm)
    if values is None and reduce != "max" and g.is_symmetric:
        # The transpose is the graph itself, degrees included: its kernels
        # serve the gradient, and no second copy of the graph is built.
        return _spmm_heads(g, dy, None, reduce, norm, self_weight, g.num_cols, grad=True)
    vt = values.index_select(0, g.t2f) if values is not None else None
    return _spmm_heads(g.T, dy, vt, reduce, norm, self_weight, g.num_cols, grad=True)


@torch.library.custom_op("gnnc::spmm_grad_x", mutates_args=())
def _spmm_grad_x(graph: int, dy: Tensor, values: Optional[Tensor], reduce: str,
                 norm: str, self_weight: Optional[float]) -> Tensor:
    """The feature gradient of gnnc::spmm: the kernel of the forward op's
    feature-gradient form (gnnc_spmm_feature_grad_op) over the transposed
    graph, the values permuted to its edge order. The self term's gradient
    (1 + eps) * dy is that kernel's self term."""
    return _spmm_grad_x_impl(graph, dy, values, reduce, norm, self_weight)


@_spmm_grad_x.register_fake
def _(graph, dy, values, reduce, norm, self_weight):
    g = _graph(graph)
    return dy.new_empty((g.num_cols,) + tuple(dy.shape[1:]))


def _spmm_grad_values_impl(graph: int, dy: Tensor, x: Tensor, per_head: bool,
                           reduce: str, norm: str) -> Tensor:
    g = _graph(graph)
    dy, x = dy.contiguous(), x.contiguous()
    if per_head:
        heads = x.shape[1]
        # Heads first, each contiguous: one transposing copy per operand.
        dyt, xt = dy.transpose(0, 1).contiguous(), x.transpose(0, 1).contiguous()
        dv = torch.stack([_sddmm_launch(g, dyt[h], xt[h], "dot", None)
                          for h in range(heads)], dim=1)
    else:
        dv = _sddmm_launch(g, dy.reshape(dy.shape[0], -1), x.reshape(x.shape[0], -1),
                           "dot", None)
    factors, _, f_col = _edge_factors(g, x.dtype, reduce, norm)
    if factors is not None:
        f = factors if dv.dim() == 1 else f_col
        dv = (dv.float() * f).to(x.dtype)
    return dv


@torch.library.custom_op("gnnc::spmm_grad_values", mutates_args=())
def _spmm_grad_values(graph: int, dy: Tensor, x: Tensor, per_head: bool,
                      reduce: str, norm: str) -> Tensor:
    """The edge-value gradient of gnnc::spmm: the dot-form sddmm of
    (dy rows, x columns) times each edge's factors row[r] * col[c]."""
    return _spmm_grad_values_impl(graph, dy, x, per_head, reduce, norm)


@_spmm_grad_values.register_fake
def _(graph, dy, x, per_head, reduce, norm):
    g = _graph(graph)
    return x.new_empty((g.nnz, x.shape[1]) if per_head else (g.nnz,))


def _spmm_max_backward(g: Graph, x: Tensor, values: Optional[Tensor], y: Tensor,
                       dy: Tensor, need_x: bool, need_v: bool):
    """reduce='max' backward in torch from the forward output: for each row
    and feature, the edges whose (value *) x[col] equals y[row] share dy
    equally (as torch.amax does: ties split the gradient evenly). Uses
    memory for one message per edge and feature."""
    rows, cols = g.edge_rows, g.edge_cols
    if values is not None and values.dim() == 2:
        xs = x                                  # [C, H, F]
        v = values.unsqueeze(-1)                # [E, H, 1]
    else:
        xs = x.reshape(x.shape[0], -1)          # [C, W]
        v = values.unsqueeze(-1) if values is not None else None
    xe = xs.index_select(0, cols)
    msg = xe if v is None else xe * v
    ys = y.reshape((y.shape[0],) + tuple(msg.shape[1:]))
    hit = msg == ys.index_select(0, rows)
    count = torch.zeros(ys.shape, dtype=torch.float32, device=ys.device)
    count.index_add_(0, rows, hit.float())
    share = hit.float() / count.clamp_min(1).index_select(0, rows)
    ge = share * dy.reshape(ys.shape).index_select(0, rows).float()
    dx = dv = None
    if need_x:
        gx = ge if v is None else ge * v.float()
        dx = torch.zeros(xs.shape, dtype=torch.float32, device=xs.device)
        dx = dx.index_add_(0, cols, gx).to(x.dtype).reshape(x.shape)
    if need_v:
        prod = ge * xe.float()
        dv = prod.sum(-1).to(values.dtype)
    return dx, dv


def _spmm_setup(ctx, inputs, output):
    graph, x, values, reduce, norm, self_weight = inputs
    ctx.graph, ctx.reduce, ctx.norm, ctx.self_weight = graph, reduce, norm, self_weight
    ctx.per_head = values is not None and values.dim() == 2
    ctx.x_shape = x.shape
    save_x = reduce == "max" or (values is not None and ctx.needs_input_grad[2])
    ctx.save_for_backward(x if save_x else None, values,
                          output if reduce == "max" else None)


def _spmm_backward(ctx, dy):
    x, values, y = ctx.saved_tensors
    need_x, need_v = ctx.needs_input_grad[1], ctx.needs_input_grad[2]
    dy = dy.contiguous()
    if ctx.reduce == "max":
        dx, dv = _spmm_max_backward(_graph(ctx.graph), x, values, y, dy,
                                    need_x, need_v)
        return None, dx, dv, None, None, None
    dx = dv = None
    if need_x:
        args = (ctx.graph, dy, values, ctx.reduce, ctx.norm, ctx.self_weight)
        if _eager(dy, values) and not _records_grad(dy, values):
            dx = _spmm_grad_x_impl(*args)
        else:
            dx = torch.ops.gnnc.spmm_grad_x(*args)
    if need_v:
        args = (ctx.graph, dy, x, ctx.per_head, ctx.reduce, ctx.norm)
        if _eager(dy, x) and not _records_grad(dy, x):
            dv = _spmm_grad_values_impl(*args)
        else:
            dv = torch.ops.gnnc.spmm_grad_values(*args)
    return None, dx, dv, None, None, None


_spmm.register_autograd(_spmm_backward, setup_context=_spmm_setup)


class _SpmmFunction(torch.autograd.Function):
    """gnnc::spmm's implementation and autograd formula, for eager calls."""

    @staticmethod
    def forward(ctx, graph, x, values, reduce, norm, self_weight):
        out = _spmm_impl(graph, x, values, reduce, norm, self_weight)
        _spmm_setup(ctx, (graph, x, values, reduce, norm, self_weight), out)
        return out

    backward = staticmethod(_spmm_backward)


def _call_spmm(graph: int, x: Tensor, values: Optional[Tensor], reduce: str,
               norm: str, self_weight: Optional[float]) -> Tensor:
    """torch.ops.gnnc.spmm(...), through the eager fast path where it may."""
    if _eager(x, values):
        if _records_grad(x, values):
            return _SpmmFunction.apply(graph, x, values, reduce, norm, self_weight)
        return _spmm_impl(graph, x, values, reduce, norm, self_weight)
    return torch.ops.gnnc.spmm(graph, x, values, reduce, norm, self_weight)


def spmm(graph: Graph, x: Tensor, values: Optional[Tensor] = None,
         reduce: str = "sum", norm: str = "none",
         self_weight: Optional[float] = None) -> Tensor:
    """y[r] = row[r] * reduce over edges (r, c) of col[c] * (value *) x[c]
    (+ (1 + self_weight) * x[r]).

    x: [num_cols, F], or [num_cols, H, F] with values [nnz, H] (one value
    per edge and head, GAT's aggregation); values: None or [nnz] in the
    graph's CSR edge order (``w[graph.perm]`` reorders edge_index-ordered
    values). reduce: 'sum', 'mean' or 'max'. norm: degree scaling 'none',
    'left' (1/sqrt(deg(r))), 'right' (1/sqrt(deg_in(c))) or 'both' (GCN's
    D^-1/2 A D^-1/2 on a symmetric graph). self_weight: GIN's eps (sum and
    mean; needs a square graph). Differentiable in x and values.
    """
    _check_graph(graph)
    if reduce not in _REDUCES:
        raise ValueError(f"reduce must be 'sum', 'mean' or 'max', got {reduce!r}")
    if norm not in _NORMS:
        raise ValueError(
            f"norm must be 'none', 'left', 'right' or 'both', got {norm!r}")
    xdim = x.dim()
    if xdim != 2 and xdim != 3:
        raise ValueError(
            f"x must have shape [{graph.num_cols}, F] or [{graph.num_cols}, H, F], "
            f"got {list(x.shape)}")
    device = graph.device
    # The checks' fast paths: on any doubt, the full check (and its message).
    if not (x.dtype in _DTYPE_CODES and x.device == device
            and x.shape[0] == graph._num_cols):
        check_tensor("x", x, [graph.num_cols] + [None] * (xdim - 1), device,
                     what="num_cols x features")
    if values is not None:
        if values.dim() == 2:
            if xdim != 3:
                raise ValueError(
                    "values of shape [nnz, H] need x of shape [num_cols, H, F]")
            if not (values.dtype is x.dtype and values.device == device
                    and values.shape[0] == graph._nnz
                    and values.shape[1] == x.shape[1]):
                check_tensor("values", values, [graph.nnz, x.shape[1]], device,
                             x.dtype, "one value per edge and head")
        else:
            if not (values.dtype is x.dtype and values.device == device
                    and values.dim() == 1 and values.shape[0] == graph._nnz):
                check_tensor("values", values, [graph.nnz], device, x.dtype,
                             "one value per edge, in CSR order")
        values = values.contiguous()
    if self_weight is not None:
        if reduce == "max":
            raise ValueError("self_weight is supported with reduce 'sum' or 'mean'")
        if graph.num_rows != graph.num_cols:
            raise ValueError("self_weight needs a square graph")
        self_weight = float(self_weight)
    return _call_spmm(graph.id, x.contiguous(), values, reduce, norm, self_weight)


_REDUCES = frozenset(("sum", "mean", "max"))
_NORMS = frozenset(("none", "left", "right", "both"))


# --- sddmm --------------------------------------------------------------------

def _sddmm_launch(g: Graph, a: Tensor, b: Tensor, form: str,
                  leaky_relu: Optional[float]) -> Tensor:
    adim = a.dim()
    width = a.shape[1] if adim == 2 else 1
    nnz = g.nnz
    out_shape = (nnz,) if form == "dot" or adim == 1 else (nnz, width)
    out = torch.empty(out_shape, dtype=a.dtype, device=a.device)
    if nnz == 0:
        return out
    if width == 0:
        return out.zero_()
    dtype = a.dtype
    spec = _spec(("sddmm", dtype, width, form, leaky_relu),
                 lambda: OpSpec.sddmm(_code(dtype), width, form=form,
                                      leaky_relu=leaky_relu))
    k = g.kernel(spec)
    _run(g, _lib.lib().gnnc_sddmm, "sddmm", k, buffer_of(a), buffer_of(b),
         buffer_of(out))
    return out


def _sddmm_impl(graph: int, a: Tensor, b: Tensor, form: str,
               leaky_relu: Optional[float]) -> Tensor:
    return _sddmm_launch(_graph(graph), a.contiguous(), b.contiguous(), form,
                         leaky_relu)


@torch.library.custom_op("gnnc::sddmm", mutates_args=())
def _sddmm(graph: int, a: Tensor, b: Tensor, form: str,
           leaky_relu: Optional[float]) -> Tensor:
    return _sddmm_impl(graph, a, b, form, leaky_relu)


@_sddmm.register_fake
def _(graph, a, b, form, leaky_relu):
    g = _graph(graph)
    if form == "dot" or a.dim() == 1:
        return a.new_empty((g.nnz,))
    return a.new_empty((g.nnz, a.shape[1]))


def _sddmm_setup(ctx, inputs, output):
    graph, a, b, form, leaky_relu = inputs
    ctx.graph, ctx.form, ctx.leaky_relu = graph, form, leaky_relu
    ctx.a_dim = a.dim()
    # A positive slope keeps the sign, so the output alone says where the
    # pre-activation was negative; otherwise it is recomputed.
    keep_out = leaky_relu is not None and leaky_relu > 0
    ctx.save_for_backward(a, b, output if keep_out else None)


def _sddmm_backward(ctx, ds):
    a, b, out = ctx.saved_tensors
    g = _graph(ctx.graph)
    ds = ds.contiguous()
    if ctx.leaky_relu is not None:
        pre = out if out is not None else _call_sddmm(ctx.graph, a, b, ctx.form, None)
        # As torch's leaky_relu: the slope applies where the input is <= 0.
        ds = torch.where(pre > 0, ds, ds * ctx.leaky_relu)
    da = db = None
    if ctx.form == "dot":
        if ctx.needs_input_grad[1]:
            da = _call_spmm(g.id, b, ds, "sum", "none", None)
        if ctx.needs_input_grad[2]:
            db = _call_spmm(g.T.id, a, ds.index_select(0, g.t2f), "sum", "none", None)
    else:
        dse = ds.reshape(g.nnz, -1)
        if ctx.needs_input_grad[1]:
            da = _call_spmm(g.row_edge_graph.id, dse, None, "sum", "none",
                            None).reshape(a.shape)
        if ctx.needs_input_grad[2]:
            db = _call_spmm(g.col_edge_graph.id, dse, None, "sum", "none",
                            None).reshape(b.shape)
    return None, da, db, None, None


_sddmm.register_autograd(_sddmm_backward, setup_context=_sddmm_setup)


class _SddmmFunction(torch.autograd.Function):
    """gnnc::sddmm's implementation and autograd formula, for eager calls."""

    @staticmethod
    def forward(ctx, graph, a, b, form, leaky_relu):
        out = _sddmm_impl(graph, a, b, form, leaky_relu)
        _sddmm_setup(ctx, (graph, a, b, form, leaky_relu), out)
        return out

    backward = staticmethod(_sddmm_backward)


def _call_sddmm(graph: int, a: Tensor, b: Tensor, form: str,
                leaky_relu: Optional[float]) -> Tensor:
    """torch.ops.gnnc.sddmm(...), through the eager fast path where it may."""
    if _eager(a, b):
        if _records_grad(a, b):
            return _SddmmFunction.apply(graph, a, b, form, leaky_relu)
        return _sddmm_impl(graph, a, b, form, leaky_relu)
    return torch.ops.gnnc.sddmm(graph, a, b, form, leaky_relu)


def sddmm(graph: Graph, a: Tensor, b: Tensor, form: str = "dot",
          leaky_relu: Optional[float] = None) -> Tensor:
    """One value per CSR edge (r, c) from a[r] (num_rows rows) and b[c]
    (num_cols rows).

    form='dot': sum_f a[r, f] * b[c, f], a: [num_rows, F], b: [num_cols, F]
    -> [nnz]. form='add': a[r, h] + b[c, h], a: [num_rows, H] (or
    [num_rows]), b likewise -> [nnz, H] (or [nnz]) (GAT's attention logits).
    leaky_relu: the negative slope of a leaky ReLU applied to the result.
    Differentiable in a and b.
    """
    _check_graph(graph)
    if form != "dot" and form != "add":
        raise ValueError(f"form must be 'dot' or 'add', got {form!r}")
    device = graph.device
    adim = a.dim()
    # The checks' fast paths: on any doubt, the full check (and its message).
    a_ok = a.dtype in _DTYPE_CODES and a.device == device and (
        adim > 0 and a.shape[0] == graph._num_rows)
    b_ok = (b.dtype is a.dtype and b.device == device and b.dim() == adim
            and adim > 0 and b.shape[0] == graph._num_cols
            and b.shape[1:] == a.shape[1:])
    if form == "dot":
        if adim != 2:
            raise ValueError(f"a must have shape [{graph.num_rows}, F], got {list(a.shape)}")
        if not (a_ok and b_ok):
            check_tensor("a", a, [graph.num_rows, None], device, what="num_rows x F")
            check_tensor("b", b, [graph.num_cols, a.shape[1]], device, a.dtype,
                         "num_cols x F, F as in a")
    else:
        if adim != 1 and adim != 2:
            raise ValueError(
                f"a must have shape [{graph.num_rows}, H] or [{graph.num_rows}], "
                f"got {list(a.shape)}")
        if not (a_ok and b_ok):
            check_tensor("a", a, [graph.num_rows] + [None] * (adim - 1), device,
                         what="num_rows x heads")
            check_tensor("b", b, [graph.num_cols] + list(a.shape[1:]), device,
                         a.dtype, "num_cols x heads, heads as in a")
    return _call_sddmm(graph.id, a.contiguous(), b.contiguous(), form,
                       None if leaky_relu is None else float(leaky_relu))


# --- edge softmax -------------------------------------------------------------

def _edge_softmax_launch(g: Graph, x: Tensor, grad_out: Optional[Tensor]) -> Tensor:
    heads = 1 if x.dim() == 1 else x.shape[1]
    out = torch.empty_like(x)
    if out.numel() == 0:
        return out
    dtype, grad = x.dtype, grad_out is not None
    spec = _spec(("edge_softmax", dtype, heads, grad),
                 lambda: OpSpec.edge_softmax(_code(dtype), heads, grad=grad))
    k = g.kernel(spec)
    if grad_out is None:
        _run(g, _lib.lib().gnnc_edge_softmax, "edge_softmax", k, buffer_of(x),
             buffer_of(out))
    else:
        _run(g, _lib.lib().gnnc_edge_softmax_grad, "edge_softmax_grad", k,
             buffer_of(x), buffer_of(grad_out), buffer_of(out))
    return out


def _edge_softmax_impl(graph: int, logits: Tensor) -> Tensor:
    return _edge_softmax_launch(_graph(graph), logits.contiguous(), None)


def _edge_softmax_grad_impl(graph: int, out: Tensor, grad_out: Tensor) -> Tensor:
    return _edge_softmax_launch(_graph(graph), out.contiguous(), grad_out.contiguous())


@torch.library.custom_op("gnnc::edge_softmax", mutates_args=())
def _edge_softmax(graph: int, logits: Tensor) -> Tensor:
    return _edge_softmax_impl(graph, logits)


@_edge_softmax.register_fake
def _(graph, logits):
    return torch.empty_like(logits)


@torch.library.custom_op("gnnc::edge_softmax_grad", mutates_args=())
def _edge_softmax_grad(graph: int, out: Tensor, grad_out: Tensor) -> Tensor:
    return _edge_softmax_grad_impl(graph, out, grad_out)


@_edge_softmax_grad.register_fake
def _(graph, out, grad_out):
    return torch.empty_like(out)


def _edge_softmax_setup(ctx, inputs, output):
    ctx.graph = inputs[0]
    ctx.save_for_backward(output)


def _edge_softmax_backward(ctx, grad):
    (out,) = ctx.saved_tensors
    grad = grad.contiguous()
    if _eager(out, grad) and not _records_grad(out, grad):
        return None, _edge_softmax_grad_impl(ctx.graph, out, grad)
    return None, torch.ops.gnnc.edge_softmax_grad(ctx.graph, out, grad)


_edge_softmax.register_autograd(_edge_softmax_backward,
                                setup_context=_edge_softmax_setup)


class _EdgeSoftmaxFunction(torch.autograd.Function):
    """gnnc::edge_softmax's implementation and autograd formula, for eager
    calls."""

    @staticmethod
    def forward(ctx, graph, logits):
        out = _edge_softmax_impl(graph, logits)
        _edge_softmax_setup(ctx, (graph, logits), out)
        return out

    backward = staticmethod(_edge_softmax_backward)


def edge_softmax(graph: Graph, logits: Tensor) -> Tensor:
    """Softmax of per-edge logits ([nnz] or [nnz, heads], CSR order) over each
    row's edges (each destination's incoming edges), per head. A row without
    edges has nothing to normalize. Differentiable."""
    _check_graph(graph)
    if logits.dim() not in (1, 2):
        raise ValueError(
            f"logits must have shape [{graph.nnz}] or [{graph.nnz}, heads], "
            f"got {list(logits.shape)}")
    if not (logits.dtype in _DTYPE_CODES and logits.device == graph.device
            and logits.shape[0] == graph._nnz):
        check_tensor("logits", logits, [graph.nnz] + [None] * (logits.dim() - 1),
                     graph.device, what="one per edge (and head), in CSR order")
    logits = logits.contiguous()
    if _eager(logits):
        if _records_grad(logits):
            return _EdgeSoftmaxFunction.apply(graph.id, logits)
        return _edge_softmax_impl(graph.id, logits)
    return torch.ops.gnnc.edge_softmax(graph.id, logits)


# --- GAT's attention in one kernel -------------------------------------------

def _launch_spmm_attention(g: Graph, spec: OpSpec, x: Tensor, att_dst: Tensor,
                           att_src: Tensor, y: Tensor) -> None:
    k = g.kernel(spec)
    _run(g, _lib.lib().gnnc_spmm_attention, "spmm_attention", k, buffer_of(x),
         buffer_of(att_dst), buffer_of(att_src), buffer_of(y))


def _gat_fused(g: Graph, x: Tensor, att_dst: Tensor, att_src: Tensor,
               slope: Optional[float]) -> Tensor:
    """gnn.spmm with attention, one launch per head: over strided rows (row
    stride H*F, the base pointer offset by h*F elements) when a head's F
    features fill whole 16-byte vectors, else over contiguous copies."""
    x = x.contiguous()
    rows = g.num_rows
    if x.numel() == 0 or rows == 0 or g.nnz == 0:
        return torch.zeros((rows, *x.shape[1:]), dtype=x.dtype, device=x.device)
    dtype = x.dtype

    def spec_of(width, row_stride):
        return _spec(("spmm_attention", dtype, width, row_stride, slope),
                     lambda: OpSpec.spmm_attention(_code(dtype), width,
                                                   row_stride=row_stride,
                                                   leaky_relu=slope))

    if x.dim() == 2:
        y = torch.empty((rows, x.shape[1]), dtype=dtype, device=x.device)
        _launch_spmm_attention(g, spec_of(x.shape[1], 0), x,
                               att_dst.reshape(-1).contiguous(),
                               att_src.reshape(-1).contiguous(), y)
        return y
    heads, width = x.shape[1], x.shape[2]
    # Each head's scores, contiguous: one transposing copy per side.
    ds, ss = att_dst.t().contiguous(), att_src.t().contiguous()
    if (width * x.element_size()) % 16 == 0:
        spec = spec_of(width, heads * width)
        xs = _with_spare_row(x)
        y = x.new_empty((rows + 1,) + tuple(x.shape[1:]))[:rows]
        xf, yf = _row_slice(xs, 0, width), _row_slice(y, 0, width)
        for h in range(heads):
            o = h * width
            _launch_spmm_attention(g, spec, xf[:, o:], ds[h], ss[h], yf[:, o:])
        return y
    spec = spec_of(width, 0)
    xt = x.transpose(0, 1).contiguous()
    yt = torch.empty((heads, rows, width), dtype=dtype, device=x.device)
    for h in range(heads):
        _launch_spmm_attention(g, spec, xt[h], ds[h], ss[h], yt[h])
    return yt.transpose(0, 1).contiguous()


def gat_attention(graph: Graph, x: Tensor, att_dst: Tensor, att_src: Tensor,
                  negative_slope: Optional[float] = 0.2) -> Tensor:
    """GAT's attention and aggregation: for each row r and head h,
    y[r, h] = sum over edges (r, c) of alpha[e, h] * x[c, h], with alpha
    the softmax over row r's edges of leaky_relu(att_dst[r, h] +
    att_src[c, h], negative_slope) (None: no leaky ReLU).

    x: [num_cols, F] with att_dst [num_rows] and att_src [num_cols], or
    [num_cols, H, F] with att_dst [num_rows, H] and att_src [num_cols, H].
    Without gradients to record (inference) it is one kernel per head,
    gnn.spmm with attention: neither the logits nor the weights reach
    memory. With them it runs sddmm, edge_softmax and spmm, which are
    differentiable, and gives the same values.
    """
    _check_graph(graph)
    xdim = x.dim()
    if xdim not in (2, 3):
        raise ValueError(f"x must have shape [{graph.num_cols}, F] or "
                         f"[{graph.num_cols}, H, F], got {list(x.shape)}")
    heads = [] if xdim == 2 else [x.shape[1]]
    device = graph.device
    check_tensor("x", x, [graph.num_cols] + [None] * (xdim - 1), device,
                 what="num_cols x features")
    check_tensor("att_dst", att_dst, [graph.num_rows] + heads, device, x.dtype,
                 "one score per row (and head)")
    check_tensor("att_src", att_src, [graph.num_cols] + heads, device, x.dtype,
                 "one score per column (and head)")
    slope = None if negative_slope is None else float(negative_slope)
    if _eager(x, att_dst) and _eager(att_src) and not (
            _records_grad(x, att_dst) or _records_grad(att_src)):
        return _gat_fused(graph, x, att_dst, att_src, slope)
    logits = sddmm(graph, att_dst, att_src, form="add", leaky_relu=slope)
    return spmm(graph, x, edge_softmax(graph, logits))


# --- multi-snapshot spmm ---------------------------------------------------------

def _launch_snapshot_spmm(group, spec: OpSpec, transposed: bool, x: Tensor,
                          y: Tensor) -> None:
    k = group.kernel(spec, transposed)
    _run(group, _lib.lib().gnnc_snapshot_spmm, "snapshot_spmm", k, buffer_of(x),
         buffer_of(y))


def _snapshot_spmm_impl(group: int, x: Tensor, reduce: str, norm: str,
                        grad: bool = False) -> Tensor:
    """y = the spmm (reduce, norm) over every snapshot of the group, x and y
    [N, S, F]; with `grad`, its feature gradient instead: the op of
    gnnc_spmm_feature_grad_op over the transposed group."""
    grp = _graph(group)
    x = x.contiguous()
    y = torch.empty_like(x)
    if x.numel() == 0:
        return y
    spec = _spmm_spec(x.dtype, x.shape[2], 0, False, reduce, norm, None, grad)
    _launch_snapshot_spmm(grp, spec, grad, x, y)
    return y


@torch.library.custom_op("gnnc::snapshot_spmm", mutates_args=())
def _snapshot_spmm(group: int, x: Tensor, reduce: str, norm: str) -> Tensor:
    return _snapshot_spmm_impl(group, x, reduce, norm)


@_snapshot_spmm.register_fake
def _(group, x, reduce, norm):
    return torch.empty_like(x)


@torch.library.custom_op("gnnc::snapshot_spmm_grad_x", mutates_args=())
def _snapshot_spmm_grad_x(group: int, dy: Tensor, reduce: str, norm: str) -> Tensor:
    """The feature gradient of gnnc::snapshot_spmm: the kernel of the
    forward op's feature-gradient form over the transposed group."""
    return _snapshot_spmm_impl(group, dy, reduce, norm, grad=True)


@_snapshot_spmm_grad_x.register_fake
def _(group, dy, reduce, norm):
    return torch.empty_like(dy)


def _snapshot_spmm_setup(ctx, inputs, output):
    ctx.group, _, ctx.reduce, ctx.norm = inputs


def _snapshot_spmm_backward(ctx, dy):
    if not ctx.needs_input_grad[1]:
        return None, None, None, None
    dy = dy.contiguous()
    if _eager(dy) and not _records_grad(dy):
        dx = _snapshot_spmm_impl(ctx.group, dy, ctx.reduce, ctx.norm, grad=True)
    else:
        dx = torch.ops.gnnc.snapshot_spmm_grad_x(ctx.group, dy, ctx.reduce, ctx.norm)
    return None, dx, None, None


_snapshot_spmm.register_autograd(_snapshot_spmm_backward,
                                 setup_context=_snapshot_spmm_setup)


class _SnapshotSpmmFunction(torch.autograd.Function):
    """gnnc::snapshot_spmm's implementation and autograd formula, for eager
    calls: the backward runs the transposed group's kernel."""

    @staticmethod
    def forward(ctx, group, x, reduce, norm):
        out = _snapshot_spmm_impl(group, x, reduce, norm)
        _snapshot_spmm_setup(ctx, (group, x, reduce, norm), out)
        return out

    backward = staticmethod(_snapshot_spmm_backward)


_LAYOUTS = frozenset(("nsf", "snf"))


def snapshot_spmm(group, x: Tensor, reduce: str = "sum", norm: Optional[str] = None,
                  layout: str = "nsf") -> Tensor:
    """The spmm of every snapshot of a :class:`gnnc.SnapshotGroup` in one
    launch: y[:, s] = the aggregation over snapshot s's edges of snapshot
    s's features x[:, s], as :func:`spmm` computes it over snapshot s alone
    (row[r] * reduce over edges (r, c) of col[c] * x[c]) with snapshot s's
    degrees for reduce='mean' and the scalings.

    x: [N, S, F] (layout='nsf', the kernel's own: a node's S snapshots side
    by side), or [S, N, F] with layout='snf' (x is copied into the kernel's
    layout, and the result is an [S, N, F] view of an [N, S, F] tensor).
    reduce: 'sum' or 'mean'. norm: None or 'none', 'left'
    (1/sqrt(deg(r))), 'right' (1/sqrt(deg_in(c))) or 'both' (GCN's
    D^-1/2 A D^-1/2 on symmetric snapshots), each snapshot with its own
    degrees. f32, f16 or bf16. Differentiable in x: the gradient is the
    feature-gradient kernel over the transposed group (snapshots may be
    directed).
    """
    from .snapshots import SnapshotGroup

    if not isinstance(group, SnapshotGroup):
        raise TypeError(f"expected a gnnc.SnapshotGroup, got {type(group).__name__}")
    if reduce not in ("sum", "mean"):
        raise ValueError(
            f"reduce must be 'sum' or 'mean' over a snapshot group, got {reduce!r}")
    norm = "none" if norm is None else norm
    if norm not in _NORMS:
        raise ValueError(
            f"norm must be None, 'none', 'left', 'right' or 'both', got {norm!r}")
    if layout not in _LAYOUTS:
        raise ValueError(f"layout must be 'nsf' ([N, S, F]) or 'snf' ([S, N, F]), "
                         f"got {layout!r}")
    n, snaps = group.num_nodes, group.num_snapshots
    if layout == "nsf":
        check_tensor("x", x, [n, snaps, None], group.device,
                     what="nodes x snapshots x features")
        return _call_snapshot_spmm(group.id, x.contiguous(), reduce, norm)
    check_tensor("x", x, [snaps, n, None], group.device,
                 what="snapshots x nodes x features, layout='snf'")
    y = _call_snapshot_spmm(group.id, x.transpose(0, 1).contiguous(), reduce, norm)
    return y.transpose(0, 1)


def _call_snapshot_spmm(group: int, x: Tensor, reduce: str, norm: str) -> Tensor:
    """torch.ops.gnnc.snapshot_spmm(...), through the eager fast path where
    it may."""
    if _eager(x):
        if _records_grad(x):
            return _SnapshotSpmmFunction.apply(group, x, reduce, norm)
        return _snapshot_spmm_impl(group, x, reduce, norm)
    return torch.ops.gnnc.snapshot_spmm(group, x, reduce, norm)


def _check_graph(graph) -> None:
    if not isinstance(graph, Graph):
        raise TypeError(f"expected a gnnc.Graph, got {type(graph).__name__}")
