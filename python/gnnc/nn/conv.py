"""PyG-compatible graph convolutions on gnnc's kernels.

Constructors, parameter names and initialisation follow torch_geometric's
layers of the same name, so a state_dict of a PyG layer of the same
configuration loads. ``forward(x, edge_index)`` takes PyG's [2, E]
edge_index (sources, destinations) or a :class:`gnnc.Graph`. The graph
built from an edge_index is cached (keyed by the tensor's storage, shape,
device, version counter and node count): calling a layer every step with
the same edge_index builds it once, and an in-place change rebuilds it.

Layers compute in the dtype of their input features (f32, f16 or bf16):
their parameters are cast to it where they meet the features, so f16
activations stay f16 (master weights stay f32).
"""
from __future__ import annotations

import math
from typing import Callable, Optional, Union

import torch
import torch.nn.functional as F
from torch import Tensor
from torch.nn import Parameter

from .. import ops
from ..graph import Graph, cached_graph

GraphLike = Union[Tensor, Graph]


def glorot(t: Tensor) -> None:
    """PyG's glorot (uniform, bound sqrt(6 / (fan_in + fan_out)) over the
    last two dimensions)."""
    if t is not None:
        bound = math.sqrt(6.0 / (t.size(-2) + t.size(-1)))
        with torch.no_grad():
            t.uniform_(-bound, bound)


def _graph(edge_index: GraphLike, num_nodes: int, self_loops: bool,
           device) -> Graph:
    if isinstance(edge_index, Graph):
        if edge_index.num_nodes != num_nodes:
            raise ValueError(
                f"the graph has {edge_index.num_nodes} nodes but x has {num_nodes} rows")
        return edge_index.add_self_loops() if self_loops else edge_index
    if not isinstance(edge_index, Tensor):
        raise TypeError(
            f"edge_index must be a [2, E] tensor or a gnnc.Graph, got "
            f"{type(edge_index).__name__} (SparseTensor adjacencies are not supported)")
    return cached_graph(edge_index, num_nodes, "self_loops" if self_loops else None,
                        device)


def _cast(p: Optional[Tensor], dtype) -> Optional[Tensor]:
    return None if p is None else p.to(dtype)


def _reset(module) -> None:
    """PyG's reset: reset_parameters() where a module has it, else on its
    children in order (the same order of random draws as PyG)."""
    if hasattr(module, "reset_parameters"):
        module.reset_parameters()
    else:
        for child in getattr(module, "children", lambda: [])():
            _reset(child)


class GCNConv(torch.nn.Module):
    """PyG's GCNConv: x' = D^-1/2 (A + I) D^-1/2 X W + b (gcn_norm with
    in-degrees). On a symmetric graph the kernel scales by degrees itself
    (norm='both'); otherwise, or with edge weights, it reads PyG's
    normalised edge values. As in PyG's gcn_norm, ``improved`` (self loops
    of weight 2) takes effect only with edge weights: without them every
    edge, loops included, weighs 1."""

    def __init__(self, in_channels: int, out_channels: int, improved: bool = False,
                 cached: bool = False, add_self_loops: bool = True,
                 normalize: bool = True, bias: bool = True):
        super().__init__()
        self.in_channels, self.out_channels = in_channels, out_channels
        self.improved, self.cached = improved, cached
        self.add_self_loops, self.normalize = add_self_loops, normalize
        self.lin = torch.nn.Linear(in_channels, out_channels, bias=False)
        self.bias = Parameter(torch.empty(out_channels)) if bias else None
        self._cached_graph = None
        self.reset_parameters()

    def reset_parameters(self):
        glorot(self.lin.weight)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)
        self._cached_graph = None

    def _norm_graph(self, edge_index, n, device):
        if self.cached and self._cached_graph is not None:
            return self._cached_graph
        g = _graph(edge_index, n, self.normalize and self.add_self_loops, device)
        if self.cached:
            self._cached_graph = g
        return g

    def forward(self, x: Tensor, edge_index: GraphLike,
                edge_weight: Optional[Tensor] = None) -> Tensor:
        x = self.lin(x)
        g = self._norm_graph(edge_index, x.size(0), x.device)
        if not self.normalize:
            w = None if edge_weight is None else edge_weight.to(x.dtype)[g.perm]
            out = ops.spmm(g, x, w)
        elif edge_weight is None and g.is_symmetric:
            out = ops.spmm(g, x, norm="both")
        elif edge_weight is None:
            # The graph's normalised values in x's dtype, converted once.
            values = g._get(("gcn_values", x.dtype),
                            lambda: g.gcn_edge_values().to(x.dtype))
            out = ops.spmm(g, x, values)
        else:
            out = ops.spmm(g, x, self._gcn_values(g, edge_weight, x, edge_index).to(x.dtype))
        if self.bias is not None:
            out = out + self.bias.to(out.dtype)
        return out

    def _gcn_values(self, g: Graph, edge_weight: Optional[Tensor], x: Tensor,
                    edge_index: GraphLike) -> Tensor:
        """PyG's gcn_norm per CSR edge of g, differentiable in edge_weight."""
        fill = 2.0 if self.improved else 1.0
        if edge_weight is None:
            return g.gcn_edge_values()
        else:
            w = edge_weight.float()
            if self.add_self_loops:
                # add_remaining_self_loops: g's edge list is [the edges that are
                # not loops, one loop per node]; an existing loop keeps its
                # weight, the other loops get `fill`.
                ei = (torch.as_tensor(edge_index.coo(), device=x.device)
                      if isinstance(edge_index, Graph) else edge_index)
                keep = ei[0] != ei[1]
                loop_w = torch.full((g.num_nodes,), fill, device=x.device)
                loop_w = loop_w.index_put((ei[0][~keep],), w[~keep])
                w = torch.cat([w[keep], loop_w])
            w = w[g.perm]
        deg = torch.zeros(g.num_nodes, device=x.device).index_add_(0, g.edge_rows, w)
        inv = deg.pow(-0.5).masked_fill_(deg == 0, 0)
        return inv[g.edge_cols] * w * inv[g.edge_rows]

    def __repr__(self):
        return f"{type(self).__name__}({self.in_channels}, {self.out_channels})"


class GATConv(torch.nn.Module):
    """PyG's GATConv (single linear map shared by sources and destinations,
    no edge features): logits e = leaky_relu(a_dst . x_i + a_src . x_j),
    softmax over each node's incoming edges, dropout on the attention,
    then x'_i = sum_j alpha_ij x_j per head (concatenated or averaged)."""

    def __init__(self, in_channels: int, out_channels: int, heads: int = 1,
                 concat: bool = True, negative_slope: float = 0.2,
                 dropout: float = 0.0, add_self_loops: bool = True, bias: bool = True):
        super().__init__()
        self.in_channels, self.out_channels, self.heads = in_channels, out_channels, heads
        self.concat, self.negative_slope, self.dropout = concat, negative_slope, dropout
        self.add_self_loops = add_self_loops
        self.lin = torch.nn.Linear(in_channels, heads * out_channels, bias=False)
        self.att_src = Parameter(torch.empty(1, heads, out_channels))
        self.att_dst = Parameter(torch.empty(1, heads, out_channels))
        total = heads * out_channels if concat else out_channels
        self.bias = Parameter(torch.empty(total)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        glorot(self.lin.weight)
        glorot(self.att_src)
        glorot(self.att_dst)
        if self.bias is not None:
            torch.nn.init.zeros_(self.bias)

    def forward(self, x: Tensor, edge_index: GraphLike,
                return_attention_weights: bool = False):
        H, C = self.heads, self.out_channels
        x = self.lin(x).view(-1, H, C)
        g = _graph(edge_index, x.size(0), self.add_self_loops, x.device)
        # autocast computes sums in f32: bring them back to the features' dtype.
        alpha_src = (x * self.att_src.to(x.dtype)).sum(-1).to(x.dtype)
        alpha_dst = (x * self.att_dst.to(x.dtype)).sum(-1).to(x.dtype)
        # logits[e, h] = leaky_relu(alpha_dst[row(e), h] + alpha_src[col(e), h])
        if not return_attention_weights and not (self.training and self.dropout > 0):
            # The weights are needed by no one else: one kernel per head
            # when no gradient is recorded (gnn.spmm with attention), the
            # differentiable three-kernel chain otherwise.
            out = ops.gat_attention(g, x, alpha_dst, alpha_src, self.negative_slope)
            alpha = None
        else:
            logits = ops.sddmm(g, alpha_dst, alpha_src, form="add",
                               leaky_relu=self.negative_slope)
            alpha = ops.edge_softmax(g, logits)
            if self.training and self.dropout > 0:
                alpha = F.dropout(alpha, p=self.dropout, training=True)
            # One launch per head over rows H*C elements apart (strided rows).
            out = ops.spmm(g, x, alpha)
        out = out.reshape(-1, H * C) if self.concat else out.mean(dim=1)
        if self.bias is not None:
            out = out + self.bias.to(out.dtype)
        if return_attention_weights:
            return out, (g, alpha)
        return out

    def __repr__(self):
        return (f"{type(self).__name__}({self.in_channels}, {self.out_channels}, "
                f"heads={self.heads})")


class GINConv(torch.nn.Module):
    """PyG's GINConv: x' = nn((1 + eps) x + sum_j x_j). With a fixed eps the
    self term is part of the kernel (self_weight); with train_eps it is
    added in torch so that eps gets a gradient."""

    def __init__(self, nn: Callable, eps: float = 0.0, train_eps: bool = False):
        super().__init__()
        self.nn = nn
        self.initial_eps = eps
        if train_eps:
            self.eps = Parameter(torch.empty(1))
        else:
            self.register_buffer("eps", torch.empty(1))
        self.train_eps = train_eps
        self.reset_parameters()

    def reset_parameters(self):
        _reset(self.nn)
        with torch.no_grad():
            self.eps.fill_(self.initial_eps)

    def _fixed_eps(self) -> float:
        # Read the eps buffer (one device sync) only when it changed, e.g.
        # by load_state_dict.
        key = (self.eps.data_ptr(), self.eps._version)
        if getattr(self, "_eps_key", None) != key:
            self._eps_value = float(self.eps.item())
            self._eps_key = key
        return self._eps_value

    def forward(self, x: Tensor, edge_index: GraphLike) -> Tensor:
        g = _graph(edge_index, x.size(0), False, x.device)
        if self.train_eps:
            out = ops.spmm(g, x) + (1 + self.eps.to(x.dtype)) * x
        else:
            out = ops.spmm(g, x, self_weight=self._fixed_eps())
        return self.nn(out)

    def __repr__(self):
        return f"{type(self).__name__}(nn={self.nn})"


class SAGEConv(torch.nn.Module):
    """PyG's SAGEConv: x' = W_l aggr_j x_j + W_r x (+ l2 normalisation);
    aggr 'mean', 'sum' (or 'add') or 'max'."""

    def __init__(self, in_channels: int, out_channels: int, aggr: str = "mean",
                 normalize: bool = False, root_weight: bool = True, bias: bool = True):
        super().__init__()
        aggr = {"add": "sum"}.get(aggr, aggr)
        if aggr not in ("mean", "sum", "max"):
            raise ValueError(f"aggr must be 'mean', 'sum'/'add' or 'max', got {aggr!r}")
        self.in_channels, self.out_channels = in_channels, out_channels
        self.aggr, self.normalize, self.root_weight = aggr, normalize, root_weight
        self.lin_l = torch.nn.Linear(in_channels, out_channels, bias=bias)
        if root_weight:
            self.lin_r = torch.nn.Linear(in_channels, out_channels, bias=False)
        self.reset_parameters()

    def reset_parameters(self):
        self.lin_l.reset_parameters()
        if self.root_weight:
            self.lin_r.reset_parameters()

    def forward(self, x: Tensor, edge_index: GraphLike) -> Tensor:
        g = _graph(edge_index, x.size(0), False, x.device)
        out = self.lin_l(ops.spmm(g, x, reduce=self.aggr))
        if self.root_weight:
            out = out + self.lin_r(x)
        if self.normalize:
            out = F.normalize(out, p=2.0, dim=-1)
        return out

    def __repr__(self):
        return f"{type(self).__name__}({self.in_channels}, {self.out_channels}, aggr={self.aggr})"
