"""PyG's RGCNConv on gnnc's segmented matmul and spmm.

out_i = x_i W_root + b + sum over relations r of the mean (or sum) over
the edges j -> i of relation r of x_j W_r.

Instead of a transform per edge (x_j W_r for every edge, as pyg_lib's path
does), each relation transforms each of its distinct source nodes once:

1. S_r, the distinct sources of relation r's edges; the rows X[S_r] are
   gathered grouped by relation (sorted by relation, then node);
2. H = gnnc.segment_matmul(X[S], ptr, W): one matmul per relation on its
   rows, sum over r of |S_r| rows of out_channels;
3. out = spmm over a graph whose rows are the destinations and whose
   columns are H's rows: edge j -> i of relation r is the entry (i, row of
   (r, j) in H) with value 1 / |N_r(i)| (the edges of relation r into i:
   PyG's mean per relation) or 1 (sum);
4. plus x W_root and the bias.

The index structures (the gather, the segment offsets, the graph and its
values) depend on edge_index and edge_type only: they are built once on
the host and kept by the layer, keyed by both tensors' storage, shape,
device and version counter (an in-place change rebuilds them). The
gradients flow through torch's gather, gnnc.segment_matmul's backward and
gnnc.spmm's.
"""
from __future__ import annotations

import math
import weakref
from typing import Optional

import numpy as np
import torch
from torch import Tensor
from torch.nn import Parameter

from .. import ops
from .._cache import graph_cache_key
from ..graph import Graph
from ..segment import segment_matmul
from .conv import glorot


def _sorted_unique(keys: np.ndarray):
    """(unique sorted keys, the index of each key among them, the count of
    each), by one stable sort (numpy's hash-based unique of int64 is far
    slower)."""
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    starts = np.ones(sorted_keys.shape[0], dtype=bool)
    if sorted_keys.shape[0]:
        starts[1:] = sorted_keys[1:] != sorted_keys[:-1]
    group = np.cumsum(starts) - 1
    inverse = np.empty_like(group)
    inverse[order] = group
    uniq = sorted_keys[starts]
    counts = np.bincount(group, minlength=uniq.shape[0]) if uniq.shape[0] else \
        np.zeros(0, dtype=np.int64)
    return uniq, inverse, counts


class RgcnStructure:
    """What an RGCN layer precomputes for one (edge_index, edge_type): the
    rows of X to gather (grouped by relation), their segment offsets, and
    the graph that sums H's rows into destinations with its values."""

    def __init__(self, edge_index: Tensor, edge_type: Tensor, num_nodes: int,
                 num_relations: int, mean: bool, device: torch.device):
        ei = edge_index.detach().to("cpu", torch.int64).numpy()
        et = edge_type.detach().to("cpu", torch.int64).numpy()
        if ei.ndim != 2 or ei.shape[0] != 2:
            raise ValueError(f"edge_index must be [2, E], got shape {tuple(ei.shape)}")
        if et.ndim != 1 or et.shape[0] != ei.shape[1]:
            raise ValueError(
                f"edge_type must hold one relation per edge ({ei.shape[1]}), got "
                f"shape {tuple(et.shape)}")
        n, r = int(num_nodes), int(num_relations)
        if et.size and (et.min() < 0 or et.max() >= r):
            bad = int(np.flatnonzero((et < 0) | (et >= r))[0])
            raise ValueError(
                f"edge_type[{bad}] is {int(et[bad])}, outside the layer's "
                f"{r} relations")
        if ei.size and (ei.min() < 0 or ei.max() >= n):
            raise ValueError(f"edge_index holds a node outside [0, {n})")
        src, dst = ei[0], ei[1]
        # One H row per distinct (relation, source), sorted by relation.
        pairs, column, _ = _sorted_unique(et * n + src)
        rel_of_row = pairs // n if pairs.size else np.zeros(0, dtype=np.int64)
        self.num_h_rows = int(pairs.shape[0])
        self.gather = torch.from_numpy(pairs % n if pairs.size else
                                       np.zeros(0, dtype=np.int64)).to(device)
        ptr = np.zeros(r + 1, dtype=np.int64)
        np.cumsum(np.bincount(rel_of_row, minlength=r), out=ptr[1:])
        self.ptr = torch.from_numpy(ptr)
        # Per-edge values: 1 / (edges of its relation into its destination).
        if mean:
            _, into, counts = _sorted_unique(et * n + dst)
            value = 1.0 / counts[into].astype(np.float64) if into.size else \
                np.zeros(0)
        else:
            value = np.ones(src.shape[0])
        # The CSR of destinations x H rows, rows sorted by column.
        order = np.lexsort((column, dst)) if dst.size else np.zeros(0, dtype=np.int64)
        row_ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(dst, minlength=n), out=row_ptr[1:])
        col_idx = column[order].astype(np.int32)
        self.graph = Graph.from_csr(row_ptr, col_idx, num_cols=self.num_h_rows,
                                    device=device, name="rgcn")
        self._values = torch.from_numpy(value[order].astype(np.float32)).to(device)
        self._values_by_dtype = {torch.float32: self._values}

    def values(self, dtype) -> Tensor:
        v = self._values_by_dtype.get(dtype)
        if v is None:
            v = self._values.to(dtype)
            self._values_by_dtype[dtype] = v
        return v


class RGCNConv(torch.nn.Module):
    """PyG's RGCNConv (``torch_geometric.nn.RGCNConv``): parameters
    ``weight`` [num_relations, in, out] (or [num_bases, in, out] with
    ``comp`` [num_relations, num_bases]), ``root`` [in, out] and ``bias``,
    initialised as PyG does (glorot, zeros), so a PyG state_dict of the same
    configuration loads. ``forward(x, edge_index, edge_type)``: x float
    [N, in_channels]. aggr 'mean' (per relation, PyG's) or 'add'/'sum'.

    Not supported: num_blocks, featureless (index) or bipartite x, and
    SparseTensor adjacencies."""

    def __init__(self, in_channels: int, out_channels: int, num_relations: int,
                 num_bases: Optional[int] = None, num_blocks: Optional[int] = None,
                 aggr: str = "mean", root_weight: bool = True, is_sorted: bool = False,
                 bias: bool = True):
        super().__init__()
        if num_blocks is not None:
            raise NotImplementedError("gnnc's RGCNConv has no block-diagonal "
                                      "decomposition (num_blocks)")
        if aggr not in ("mean", "add", "sum"):
            raise ValueError(f"RGCNConv aggregates with 'mean', 'add' or 'sum', got {aggr!r}")
        if not isinstance(in_channels, int):
            raise NotImplementedError("gnnc's RGCNConv takes one in_channels "
                                      "(no bipartite inputs)")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.num_relations = num_relations
        self.num_bases = num_bases
        self.num_blocks = None
        self.aggr = aggr
        self.is_sorted = is_sorted
        if num_bases is not None:
            self.weight = Parameter(torch.empty(num_bases, in_channels, out_channels))
            self.comp = Parameter(torch.empty(num_relations, num_bases))
        else:
            self.weight = Parameter(torch.empty(num_relations, in_channels, out_channels))
            self.register_parameter("comp", None)
        if root_weight:
            self.root = Parameter(torch.empty(in_channels, out_channels))
        else:
            self.register_parameter("root", None)
        if bias:
            self.bias = Parameter(torch.empty(out_channels))
        else:
            self.register_parameter("bias", None)
        self._structure = None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        glorot(self.weight)
        glorot(self.comp)
        glorot(self.root)
        if self.bias is not None:
            with torch.no_grad():
                self.bias.zero_()

    def structure(self, edge_index: Tensor, edge_type: Tensor, num_nodes: int,
                  device) -> RgcnStructure:
        """The index structures of (edge_index, edge_type), built once per
        pair of tensors (and rebuilt when either changes in place)."""
        key = (graph_cache_key(edge_index, num_nodes, "rgcn"),
               graph_cache_key(edge_type, num_nodes, "rgcn_types"),
               str(device), self.aggr)
        cached = self._structure
        if cached is not None:
            ckey, ref_index, ref_type, built = cached
            if ckey == key and ref_index() is edge_index and ref_type() is edge_type:
                return built
        built = RgcnStructure(edge_index, edge_type, num_nodes, self.num_relations,
                              self.aggr == "mean", torch.device(device))
        self._structure = (key, weakref.ref(edge_index), weakref.ref(edge_type), built)
        return built

    def relation_weights(self) -> Tensor:
        """[num_relations, in, out]: the weights, composed from the bases
        when the layer has them."""
        if self.num_bases is None:
            return self.weight
        return (self.comp @ self.weight.view(self.num_bases, -1)).view(
            self.num_relations, self.in_channels, self.out_channels)

    def forward(self, x: Tensor, edge_index: Tensor, edge_type: Tensor) -> Tensor:
        if not isinstance(x, Tensor) or not x.is_floating_point() or x.dim() != 2:
            raise TypeError("gnnc's RGCNConv takes float node features [N, in_channels] "
                            "(no featureless or bipartite inputs)")
        if not isinstance(edge_index, Tensor) or not isinstance(edge_type, Tensor):
            raise TypeError("RGCNConv takes edge_index [2, E] and edge_type [E] tensors "
                            "(SparseTensor adjacencies are not supported)")
        if x.shape[1] != self.in_channels:
            raise ValueError(f"x has {x.shape[1]} features, the layer takes "
                             f"{self.in_channels}")
        s = self.structure(edge_index, edge_type, int(x.shape[0]), x.device)
        w = self.relation_weights().to(x.dtype)
        h = segment_matmul(x.index_select(0, s.gather), s.ptr, w)
        out = ops.spmm(s.graph, h, values=s.values(x.dtype))
        if self.root is not None:
            out = out + x @ self.root.to(x.dtype)
        if self.bias is not None:
            out = out + self.bias.to(x.dtype)
        return out

    def __repr__(self) -> str:
        return (f"{self.__class__.__name__}({self.in_channels}, {self.out_channels}, "
                f"num_relations={self.num_relations})")
