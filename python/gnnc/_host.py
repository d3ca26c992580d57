"""Host-side graph building on numpy arrays (no torch, no GPU).

Conventions follow PyG's ``source_to_target`` flow: ``edge_index[0]`` holds
sources, ``edge_index[1]`` destinations, and CSR rows are destinations, so
that row r aggregates the messages of its in-neighbours.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from . import _lib


@dataclass
class HostCsr:
    """A CSR graph on the host.

    ``perm[e]``: the input position (in the edge list the graph was built
    from) of CSR edge e, or None when the graph was given as CSR.
    """

    num_rows: int
    num_cols: int
    row_ptr: np.ndarray  # int64, num_rows + 1
    col_idx: np.ndarray  # int32, nnz
    perm: Optional[np.ndarray] = None  # int64, nnz

    @property
    def nnz(self) -> int:
        return int(self.col_idx.shape[0])

    def degrees(self) -> np.ndarray:
        """Edges per row (in-degree of each destination), int64."""
        return np.diff(self.row_ptr)

    def edge_rows(self) -> np.ndarray:
        """The row of each CSR edge, int64."""
        return np.repeat(np.arange(self.num_rows, dtype=np.int64), self.degrees())

    def to_coo(self) -> Tuple[np.ndarray, np.ndarray]:
        """(src, dst) in CSR edge order: src = column, dst = row."""
        return self.col_idx.astype(np.int64), self.edge_rows()


def edge_index_to_numpy(edge_index) -> np.ndarray:
    """A [2, E] int64 numpy array from a numpy array or anything with
    .cpu().numpy() (a torch tensor)."""
    if hasattr(edge_index, "detach"):
        edge_index = edge_index.detach()
    if hasattr(edge_index, "cpu"):
        edge_index = edge_index.cpu().numpy()
    ei = np.asarray(edge_index)
    if ei.ndim != 2 or ei.shape[0] != 2:
        raise ValueError(
            f"edge_index must have shape [2, num_edges], got {tuple(ei.shape)}")
    if not np.issubdtype(ei.dtype, np.integer):
        raise TypeError(f"edge_index must hold integers, got {ei.dtype}")
    return np.ascontiguousarray(ei, dtype=np.int64)


def csr_from_edge_index(edge_index, num_nodes: int) -> HostCsr:
    """Rows = destinations (edge_index[1]), columns = sources."""
    ei = edge_index_to_numpy(edge_index)
    row_ptr, col_idx, perm = _lib.coo_to_csr(num_nodes, ei[0], ei[1])
    return HostCsr(int(num_nodes), int(num_nodes), row_ptr, col_idx, perm)


def csr_from_arrays(row_ptr, col_idx, num_cols: Optional[int] = None,
                    name: Optional[str] = None) -> HostCsr:
    """Validates (gnnc_csr_validate) and wraps a CSR given by the caller.
    ``num_cols`` defaults to the number of rows (a square graph)."""
    rp = np.ascontiguousarray(np.asarray(row_ptr), dtype=np.int64)
    ci = np.ascontiguousarray(np.asarray(col_idx))
    if ci.size and (ci.min() < np.iinfo(np.int32).min or ci.max() > np.iinfo(np.int32).max):
        raise ValueError("col_idx does not fit 32-bit column indices")
    ci = ci.astype(np.int32, copy=False)
    num_rows = int(rp.shape[0]) - 1
    if num_cols is None:
        num_cols = num_rows
    _lib.csr_validate(rp, ci, num_cols, name)
    return HostCsr(num_rows, int(num_cols), rp, ci, None)


def transpose(g: HostCsr) -> Tuple[HostCsr, np.ndarray]:
    """(A^T, t2f): the transposed CSR (num_cols rows) and, for each of its
    edges, the id of the same edge in A's CSR order."""
    src, dst = g.to_coo()  # CSR edge order: the input positions are A's edge ids
    n = max(g.num_rows, g.num_cols)
    # Transposed rows are A's columns: swap src and dst.
    row_ptr, col_idx, perm = _lib.coo_to_csr(n, dst, src)
    row_ptr = row_ptr[: g.num_cols + 1].copy()
    t = HostCsr(g.num_cols, g.num_rows, row_ptr, col_idx, None)
    return t, perm


def compose_edge_maps(fwd_perm: np.ndarray, t_perm: np.ndarray) -> np.ndarray:
    """Given two CSRs built from the same edge list (fwd_perm[e], t_perm[k]:
    input positions), the forward edge id of each edge k of the second."""
    inv = np.empty_like(fwd_perm)
    inv[fwd_perm] = np.arange(fwd_perm.shape[0], dtype=fwd_perm.dtype)
    return inv[t_perm]


def is_symmetric(g: HostCsr, t: Optional[HostCsr] = None) -> bool:
    """Whether the CSR equals its transpose (square, same arrays)."""
    if g.num_rows != g.num_cols:
        return False
    if t is None:
        t, _ = transpose(g)
    return (np.array_equal(g.row_ptr, t.row_ptr)
            and np.array_equal(g.col_idx, t.col_idx))


def row_edge_csr(g: HostCsr) -> HostCsr:
    """The row-edge graph: row r's entries are r's edge ids. An spmm of
    per-edge features over it sums them per row."""
    return HostCsr(g.num_rows, g.nnz, g.row_ptr,
                   np.arange(g.nnz, dtype=np.int32), None)


def column_edge_csr(t: HostCsr, t2f: np.ndarray, nnz: int) -> HostCsr:
    """The column-edge graph: row c's entries are the forward ids of the
    edges of column c (the transposed graph's rows with its edge map)."""
    return HostCsr(t.num_rows, nnz, t.row_ptr, t2f.astype(np.int32), None)


def add_self_loops(edge_index, num_nodes: int) -> np.ndarray:
    """PyG's add_remaining_self_loops structure: removes the existing self
    loops, then appends one loop per node (in node order)."""
    ei = edge_index_to_numpy(edge_index)
    keep = ei[0] != ei[1]
    loops = np.arange(num_nodes, dtype=np.int64)
    return np.concatenate([ei[:, keep], np.stack([loops, loops])], axis=1)


def remove_self_loops(edge_index) -> np.ndarray:
    ei = edge_index_to_numpy(edge_index)
    return ei[:, ei[0] != ei[1]]


def gcn_edge_values(g: HostCsr) -> np.ndarray:
    """PyG's gcn_norm with unit edge weights, per CSR edge:
    deg^-1/2[src] * deg^-1/2[dst], where deg is the in-degree (edges per
    row). Equal to the kernel's norm='both' only on symmetric graphs."""
    deg = g.degrees().astype(np.float64)
    inv = np.zeros_like(deg)
    nz = deg > 0
    inv[nz] = deg[nz] ** -0.5
    return (inv[g.col_idx] * inv[g.edge_rows()]).astype(np.float32)


def infer_num_nodes(edge_index) -> int:
    ei = edge_index_to_numpy(edge_index)
    return int(ei.max()) + 1 if ei.size else 0
