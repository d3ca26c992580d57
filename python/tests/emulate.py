"""Emulates gnnc's kernel launches with torch_ref on the CPU, so that the
Python side (custom ops, autograd wiring, transposes, edge maps, layers)
can be checked without a GPU. The op descriptions of the gradients still
come from the real library (gnnc_spmm_feature_grad_op)."""
import torch

import torch_ref
from gnnc import graph as ggraph
from gnnc import ops
from gnnc import _lib
from gnnc._lib import OpKind, Reduce, Scale

_REDUCE = {Reduce.SUM: "sum", Reduce.MEAN: "mean", Reduce.MAX: "max"}
_NORM = {Scale.NONE: "none", Scale.LEFT: "left", Scale.RIGHT: "right",
         Scale.BOTH: "both"}


def _rows(spec, x, y):
    """The spec.width features of each row of x and y: a strided head's view
    (row_stride set) or the rows as they are."""
    w = spec.width
    if spec.row_stride:
        assert x.dim() == 2 and x.stride(0) == spec.row_stride
        return x[:, :w], y[:, :w]
    xv, yv = x.reshape(x.shape[0], -1), y.reshape(y.shape[0], -1)
    assert xv.shape[1] == w
    return xv, yv


def _launch_spmm(g, spec, x, values, y):
    assert spec.kind == OpKind.SPMM
    xv, yv = _rows(spec, x, y)
    assert (values is not None) == spec.edge_values
    out = torch_ref.spmm(g.edge_rows, g.edge_cols, g.num_rows, xv.double(),
                         None if values is None else values.double(),
                         _REDUCE[spec.reduce], _NORM[spec.scale], spec.self_weight,
                         0.5 if spec.col_norm_exponent is None else spec.col_norm_exponent)
    yv.copy_(out.to(y.dtype))


_checked_snapshot_ops = set()


def _launch_snapshot_spmm(group, spec, transposed, x, y):
    """Each snapshot on its own with the reference: over snapshot s's edges
    (swapped for the transposed group), snapshot s's degrees. The op is
    first checked by the library as it would compile it for the group
    (gnnc_snapshot_op_check)."""
    assert spec.kind == OpKind.SPMM and not spec.edge_values
    assert spec.self_weight is None and not spec.row_stride
    key = (spec, group.num_snapshots)
    if key not in _checked_snapshot_ops:
        _lib.snapshot_op_check(spec.to_struct(), group.num_snapshots)
        _checked_snapshot_ops.add(key)
    assert x.shape == y.shape == (group.num_nodes, group.num_snapshots, spec.width)
    exponent = 0.5 if spec.col_norm_exponent is None else spec.col_norm_exponent
    for s in range(group.num_snapshots):
        rows, cols = group.edges(s, transposed)
        out = torch_ref.spmm(rows, cols, group.num_nodes, x[:, s].double(), None,
                             _REDUCE[spec.reduce], _NORM[spec.scale], None, exponent)
        y[:, s].copy_(out.to(y.dtype))


def _launch_spmm_attention(g, spec, x, att_dst, att_src, y):
    """The fused GAT kernel as the reference chain: logits, softmax, spmm."""
    assert spec.kind == OpKind.SPMM and spec.attention and not spec.edge_values
    xv, yv = _rows(spec, x, y)
    assert att_dst.shape == (g.num_rows,) and att_src.shape == (g.num_cols,)
    logits = torch_ref.sddmm(g.edge_rows, g.edge_cols, att_dst.double(),
                             att_src.double(), "add", spec.leaky_relu)
    alpha = torch_ref.edge_softmax(g.edge_rows, g.num_rows, logits)
    out = torch_ref.spmm(g.edge_rows, g.edge_cols, g.num_rows, xv.double(), alpha,
                         "sum", "none", None, 0.5)
    yv.copy_(out.to(y.dtype))


def _sddmm_launch(g, a, b, form, leaky_relu):
    out = torch_ref.sddmm(g.edge_rows, g.edge_cols, a.double(), b.double(), form, leaky_relu)
    return out.to(a.dtype)


def _edge_softmax_launch(g, x, grad_out):
    if grad_out is None:
        return torch_ref.edge_softmax(g.edge_rows, g.num_rows, x.double()).to(x.dtype)
    return torch_ref.edge_softmax_grad(g.edge_rows, g.num_rows, x.double(),
                                       grad_out.double()).to(x.dtype)


def _spmm_edge_factors(self, spec):
    rf, cf = torch_ref.spmm_factors(
        self.edge_rows, self.edge_cols, self.num_rows, self.num_cols,
        _REDUCE[spec.reduce], _NORM[spec.scale],
        0.5 if spec.col_norm_exponent is None else spec.col_norm_exponent)
    if bool((rf == 1).all()) and bool((cf == 1).all()):
        return None
    return (rf[self.edge_rows] * cf[self.edge_cols]).float()


def install(monkeypatch):
    monkeypatch.setattr(ggraph, "_allow_cpu", True)
    monkeypatch.setattr(ops, "_launch_spmm", _launch_spmm)
    monkeypatch.setattr(ops, "_launch_snapshot_spmm", _launch_snapshot_spmm)
    monkeypatch.setattr(ops, "_sddmm_launch", _sddmm_launch)
    monkeypatch.setattr(ops, "_launch_spmm_attention", _launch_spmm_attention)
    monkeypatch.setattr(ops, "_edge_softmax_launch", _edge_softmax_launch)
    monkeypatch.setattr(ggraph.Graph, "spmm_edge_factors", _spmm_edge_factors)
