"""gnnc.SnapshotGroup: several snapshots of a dynamic graph over one node
set, aggregated together by gnnc.ops.snapshot_spmm. Needs torch."""
from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch

from . import _context, _host, _lib
from ._cache import graphs
from ._desc import OpSpec, dtype_code
from .graph import _device_index


def _snapshot_csrs(edge_indices: Sequence, num_nodes: Optional[int], device):
    """Host CSRs (rows = destinations) of one PyG edge_index per snapshot,
    num_nodes (default: the largest node id plus one) and the device (default:
    the first edge_index's CUDA device, else "cuda")."""
    eis = [_host.edge_index_to_numpy(ei) for ei in edge_indices]
    if num_nodes is None:
        num_nodes = max((_host.infer_num_nodes(ei) for ei in eis), default=0)
    if device is None:
        first = edge_indices[0] if len(edge_indices) else None
        device = first.device if isinstance(first, torch.Tensor) and first.is_cuda \
            else "cuda"
    hosts = [_host.csr_from_edge_index(ei, int(num_nodes)) for ei in eis]
    return hosts, int(num_nodes), device


class SnapshotGroup:
    """S graph snapshots over one node set, in PyG's convention (rows =
    destinations: row r aggregates the messages of its sources), for
    multi-snapshot aggregation (:func:`gnnc.ops.snapshot_spmm`).

    Build it with :meth:`from_edge_index` (one edge_index per snapshot) or
    :meth:`from_csr`. gnnc splits the snapshots into the edges all of them
    share (the overlap, read once per aggregation of the whole group) and
    each snapshot's exclusive edges, and keeps its own device copies; the
    transposed group that the gradient runs over is built on first use.
    Within a snapshot an edge may appear once (rows sorted, no repeats: a
    CSR from an edge list with repeated edges is refused, naming the
    snapshot). At most 64 snapshots per group.
    """

    def __init__(self, snapshots: Sequence[_host.HostCsr], num_nodes: int,
                 device=None, name: Optional[str] = None):
        index = _device_index(device if device is not None else "cuda")
        self.device = torch.device("cuda", index) if index >= 0 else torch.device("cpu")
        self._device_index = index
        self.name = name
        self.host: List[_host.HostCsr] = list(snapshots)
        self._num_nodes = int(num_nodes)
        for s, g in enumerate(self.host):
            if g.num_rows != self._num_nodes or g.num_cols != self._num_nodes:
                raise ValueError(
                    f"snapshot {s} is {g.num_rows} x {g.num_cols}; every snapshot "
                    f"of the group is num_nodes x num_nodes ({self._num_nodes})")
        self._lock = threading.RLock()
        self._kernels: Dict[Tuple[OpSpec, bool, Optional[str]], ctypes.c_void_p] = {}
        self._edges: Dict[Tuple[int, bool], Tuple[torch.Tensor, torch.Tensor]] = {}
        # Without a GPU (the emulated tests) the group is host-only: the
        # same checks and counts, no kernels.
        self._handle = None
        row_ptrs = [g.row_ptr for g in self.host]
        col_idxs = [g.col_idx for g in self.host]
        if index >= 0:
            torch.cuda.init()
            # gnnc makes the device current to upload; the guard restores the
            # caller's.
            with torch.cuda.device(index):
                self._handle = _lib.snapshot_group_create(
                    _context.get(index).handle, name, self._num_nodes, row_ptrs,
                    col_idxs)
        else:
            self._handle = _lib.snapshot_group_create(None, name, self._num_nodes,
                                                      row_ptrs, col_idxs)
        self._counts = _lib.snapshot_group_edges(self._handle)
        self.id = graphs.register(self)

    # --- construction -------------------------------------------------------

    @classmethod
    def from_edge_index(cls, edge_indices: Sequence, num_nodes: Optional[int] = None,
                        device=None, name: Optional[str] = None) -> "SnapshotGroup":
        """From one PyG edge_index ([2, E_s]: sources, destinations) per
        snapshot; num_nodes defaults to the largest node id plus one."""
        hosts, num_nodes, device = _snapshot_csrs(edge_indices, num_nodes, device)
        return cls(hosts, num_nodes, device, name)

    @classmethod
    def from_csr(cls, row_ptrs: Sequence, col_idxs: Sequence,
                 num_nodes: Optional[int] = None, device=None,
                 name: Optional[str] = None) -> "SnapshotGroup":
        """From one CSR per snapshot (rows = destinations; row_ptr int64,
        col_idx int32 or int64, sorted and unique within a row; numpy arrays
        or tensors). num_nodes defaults to the rows of the first."""
        def np_of(a):
            return a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
        if len(row_ptrs) != len(col_idxs):
            raise ValueError(f"{len(row_ptrs)} row_ptr arrays but {len(col_idxs)} "
                             f"col_idx arrays; give one of each per snapshot")
        if num_nodes is None:
            num_nodes = len(row_ptrs[0]) - 1 if len(row_ptrs) else 0
        if device is None:
            first = row_ptrs[0] if len(row_ptrs) else None
            device = first.device if isinstance(first, torch.Tensor) and first.is_cuda \
                else "cuda"
        hosts = [_host.csr_from_arrays(np_of(rp), np_of(ci), int(num_nodes),
                                       f"{name or 'snapshot group'}: snapshot {s}")
                 for s, (rp, ci) in enumerate(zip(row_ptrs, col_idxs))]
        return cls(hosts, int(num_nodes), device, name)

    # --- shape and counts -------------------------------------------------------

    @property
    def num_nodes(self) -> int:
        return self._num_nodes

    @property
    def num_snapshots(self) -> int:
        return len(self.host)

    def __len__(self) -> int:
        return len(self.host)

    @property
    def overlap_edges(self) -> int:
        """The edges every snapshot has (stored and read once)."""
        return self._counts["overlap_edges"]

    @property
    def stored_edges(self) -> int:
        """The overlap plus every snapshot's exclusive edges."""
        return self._counts["stored_edges"]

    @property
    def snapshot_edges(self) -> int:
        """The snapshots' edges summed."""
        return self._counts["snapshot_edges"]

    @property
    def overlap_rate(self) -> float:
        """overlap_edges x S / snapshot_edges: the fraction of the
        snapshots' edges that are shared (0 without edges)."""
        return self._counts["overlap_rate"]

    def __repr__(self):
        return (f"gnnc.SnapshotGroup(snapshots={self.num_snapshots}, "
                f"nodes={self.num_nodes}, edges={self.snapshot_edges}, "
                f"overlap_rate={self.overlap_rate:.3f}, device={self.device})")

    def edges(self, s: int, transposed: bool = False) -> Tuple[torch.Tensor, torch.Tensor]:
        """(rows, cols) of snapshot s's CSR edges (int64, on the group's
        device; rows are destinations); swapped for its transpose."""
        key = (int(s), bool(transposed))
        hit = self._edges.get(key)
        if hit is None:
            g = self.host[s]
            rows = torch.from_numpy(g.edge_rows()).to(self.device)
            cols = torch.from_numpy(g.col_idx.astype(np.int64)).to(self.device)
            hit = (cols, rows) if transposed else (rows, cols)
            self._edges[key] = hit
        return hit

    # --- kernels -------------------------------------------------------------

    def kernel(self, spec: OpSpec, transposed: bool = False,
               schedule: Optional[str] = None):
        """The kernel handle of the multi-snapshot spmm `spec` (width: the
        features of one snapshot) over the group, or its transpose."""
        key = (spec, bool(transposed), schedule)
        k = self._kernels.get(key)
        if k is not None:
            return k
        with self._lock:
            k = self._kernels.get(key)
            if k is None:
                _lib.require("gnnc_snapshot_kernel_get", "snapshot_spmm")
                k = _lib.gnnc_kernel()
                desc = spec.to_struct()
                # The first transposed kernel uploads the transpose: on the
                # group's device, the caller's restored afterwards.
                with torch.cuda.device(self._device_index):
                    _lib.check(_lib.lib().gnnc_snapshot_kernel_get(
                        self._handle, ctypes.byref(desc), _lib._enc(schedule),
                        int(bool(transposed)), ctypes.byref(k)),
                        f"compiling {spec.describe()} over {self!r}"
                        + (" transposed" if transposed else ""))
                self._kernels[key] = k
            return k

    def close(self) -> None:
        """Destroys the C group and its kernels (also done when garbage
        collected)."""
        with self._lock:
            if self._handle is not None and not _context.exiting:
                _lib.lib().gnnc_snapshot_group_destroy(self._handle)
            self._handle = None
            self._kernels.clear()
        if hasattr(self, "id"):
            graphs.unregister(self.id)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


@dataclass
class SnapshotGroupChoice:
    """What :func:`choose_snapshot_group` chose: ``snapshots`` per group (0
    when no size fits the memory budget: aggregate each snapshot alone), the
    ``groups`` of that size in the series, how many keep their structure on
    the GPU (``cached_groups``), the budget, the measured host-to-device
    bandwidth, and for every size tried (``sizes``: dicts) its overlap rate,
    bytes, copies, aggregation, cost per snapshot and whether it fits."""

    snapshots: int
    groups: int
    cached_groups: int
    memory_budget: int
    host_to_device_gbps: float
    sizes: List[dict] = field(default_factory=list)


def choose_snapshot_group(edge_indices: Sequence, width: int, *,
                          num_nodes: Optional[int] = None,
                          dtype=torch.float32, memory_budget: int = 0,
                          pipelined: bool = True, device=None,
                          name: Optional[str] = None) -> SnapshotGroupChoice:
    """How many snapshots of a series one :class:`SnapshotGroup` should take
    (PiPAD's runtime tuner): groups of 2, 4 and 8 snapshots (those the
    series holds) from its start are aggregated on the GPU (sum over
    ``width`` features of ``dtype`` per snapshot), their copies priced at
    the measured host-to-device bandwidth, and the size with the least cost
    per snapshot wins among those whose groups fit ``memory_budget`` bytes
    two at a time (0: half the GPU's memory). With ``pipelined`` a group
    costs the larger of its copies and its aggregation (the next group's
    copies overlap this one's aggregation), otherwise their sum.
    ``edge_indices``: one PyG edge_index per snapshot of the series, any
    number of them. Needs a GPU."""
    hosts, num_nodes, device = _snapshot_csrs(edge_indices, num_nodes, device)
    index = _device_index(device)
    if index < 0:
        raise RuntimeError("choose_snapshot_group times the group sizes on a GPU; "
                           "none is available")
    torch.cuda.init()
    with torch.cuda.device(index):
        chosen = _lib.snapshot_group_choose(
            _context.get(index).handle, name, num_nodes,
            [g.row_ptr for g in hosts], [g.col_idx for g in hosts], int(width),
            dtype_code(dtype), int(memory_budget), bool(pipelined))
    return SnapshotGroupChoice(**chosen)
