"""Pure-torch reference implementations of gnnc's ops (index_add/scatter
based), on the CSR edge list (rows = destinations, cols = sources). Used in
float64 as the ground truth of the GPU tests and to emulate the kernels on
the CPU."""
import torch


def _row_factors(rows, num_rows, reduce, norm, dtype):
    deg = torch.bincount(rows, minlength=num_rows).to(dtype)
    f = torch.ones(num_rows, dtype=dtype, device=rows.device)
    inv = torch.where(deg > 0, 1.0 / deg.clamp_min(1), torch.zeros_like(deg))
    if reduce == "mean":
        f = f * inv
    if norm in ("left", "both"):
        f = f * inv.sqrt()
    return f


def _col_factors(cols, num_cols, norm, exponent, dtype):
    if norm not in ("right", "both"):
        return None
    cnt = torch.bincount(cols, minlength=num_cols).to(dtype)
    return torch.where(cnt > 0, cnt.clamp_min(1).pow(-exponent), torch.zeros_like(cnt))


def spmm_factors(rows, cols, num_rows, num_cols, reduce="sum", norm="none",
                 exponent=0.5, dtype=torch.float64):
    rf = _row_factors(rows, num_rows, reduce, norm, dtype)
    cf = _col_factors(cols, num_cols, norm, exponent, dtype)
    if cf is None:
        cf = torch.ones(num_cols, dtype=dtype, device=rows.device)
    return rf, cf


def spmm(rows, cols, num_rows, x, values=None, reduce="sum", norm="none",
         self_weight=None, exponent=0.5):
    """y[r] = row[r] * reduce_e col[c] * (v_e *) x[c] (+ (1 + eps) x[r]).
    x: [C, ...]; values: [E] or [E, H] with x [C, H, F]."""
    msg = x.index_select(0, cols)
    if values is not None:
        v = values.reshape(values.shape + (1,) * (msg.dim() - values.dim()))
        msg = msg * v
    cf = _col_factors(cols, x.shape[0], norm, exponent, x.dtype)
    if cf is not None:
        msg = msg * cf[cols].reshape((-1,) + (1,) * (msg.dim() - 1))
    out = torch.zeros((num_rows,) + tuple(x.shape[1:]), dtype=x.dtype, device=x.device)
    if reduce == "max":
        idx = rows.reshape((-1,) + (1,) * (msg.dim() - 1)).expand_as(msg)
        out = out.scatter_reduce(0, idx, msg, "amax", include_self=False)
    else:
        out = out.index_add(0, rows, msg)
    rf = _row_factors(rows, num_rows, reduce, norm, x.dtype)
    out = out * rf.reshape((-1,) + (1,) * (out.dim() - 1))
    if self_weight is not None:
        out = out + (1.0 + self_weight) * x
    return out


def sddmm(rows, cols, a, b, form="dot", leaky_relu=None):
    if form == "dot":
        out = (a.index_select(0, rows) * b.index_select(0, cols)).sum(-1)
    else:
        out = a.index_select(0, rows) + b.index_select(0, cols)
    if leaky_relu is not None:
        out = torch.nn.functional.leaky_relu(out, leaky_relu)
    return out


def edge_softmax(rows, num_rows, logits):
    shape = (num_rows,) + tuple(logits.shape[1:])
    idx = rows.reshape((-1,) + (1,) * (logits.dim() - 1)).expand_as(logits)
    m = torch.full(shape, float("-inf"), dtype=logits.dtype, device=logits.device)
    m = m.scatter_reduce(0, idx, logits, "amax", include_self=True)
    e = torch.exp(logits - m.index_select(0, rows).detach())
    s = torch.zeros(shape, dtype=logits.dtype, device=logits.device).index_add(0, rows, e)
    return e / s.index_select(0, rows)


def edge_softmax_grad(rows, num_rows, out, grad):
    shape = (num_rows,) + tuple(out.shape[1:])
    s = torch.zeros(shape, dtype=out.dtype, device=out.device).index_add(0, rows, out * grad)
    return out * (grad - s.index_select(0, rows))
