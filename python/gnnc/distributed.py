"""Full-graph training over several processes (torch.distributed): each
process (rank) holds a contiguous block of the graph's rows, their CSR
slice and their features, and exchanges only the rows its edges reference.

- :func:`partition_rows` cuts N rows into P contiguous blocks of about the
  same cost (edges + rows), optionally after a renumbering.
- :class:`PartitionedGraph` is built on every rank from the full CSR (rows
  = destinations, columns = sources, as in :class:`gnnc.Graph`) or from an
  edge_index. It keeps the rank's rows only: a rectangular local graph
  whose columns are the rank's rows (0 .. n_local - 1) then its halo, the
  remote rows its edges reference (n_local .. n_local + n_halo - 1), and
  the send lists (which of its rows each peer needs), learnt with two
  all_to_all collectives.
- :meth:`PartitionedGraph.exchange` is the halo exchange, differentiable:
  forward sends each peer the rows it references (one all_to_all_single)
  and returns ``cat([local, halo])``; backward sends the halo's gradients
  back and adds them into the rows they came from. Rows travel as bytes,
  so any dtype and width goes through NCCL and gloo alike.
- :class:`DistGCNConv` and :class:`DistGINConv`: gnnc.nn's GCNConv and
  GINConv (same parameters, same initialisation) over a PartitionedGraph,
  each layer a transform, a halo exchange and gnnc's spmm over the local
  graph. GCN's normalisation uses global degrees, so a distributed model
  computes what the same model computes on the whole graph.
- :func:`global_dropout` and :class:`GlobalDropout`: dropout whose mask does
  not depend on the partition (drawn for all N rows from a generator
  seeded alike on every rank, each rank keeping its rows), so a
  distributed model and the same model on one process draw the same masks.
- :class:`ExchangeStats` counts the bytes each exchange sent and times it;
  :meth:`PartitionedGraph.boundary_bytes` is what the partition implies
  (distinct referenced rows x width x element size).

With one process (or no process group) nothing is exchanged and the local
graph is the whole graph.
"""
from __future__ import annotations

import math
import os
import tempfile
import time
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np
import torch
import torch.distributed as dist
from torch import Tensor

from . import ops
from .graph import Graph
from .nn.conv import GCNConv, GINConv

__all__ = ["partition_rows", "PartitionedGraph", "ExchangeStats", "DistGCNConv",
           "DistGINConv", "init_process_group", "all_reduce_gradients", "average_buffers",
           "csr_from_edge_index", "global_dropout", "GlobalDropout"]


# --- process group ----------------------------------------------------------

def init_process_group(device_type: str = "cuda", backend: Optional[str] = None
                       ) -> Tuple[int, int, torch.device]:
    """(rank, world size, device) of this process, after joining the process
    group that torchrun describes in the environment (RANK, WORLD_SIZE,
    LOCAL_RANK, MASTER_ADDR, MASTER_PORT) or, in a process started without
    it, a group of one. device_type 'cuda': NCCL on cuda:LOCAL_RANK (made
    the current device); 'cpu': gloo."""
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if device_type == "cuda":
        torch.cuda.set_device(local)
        device = torch.device("cuda", local)
    else:
        device = torch.device("cpu")
    backend = backend or ("nccl" if device.type == "cuda" else "gloo")
    if not dist.is_initialized():
        if "RANK" in os.environ and "WORLD_SIZE" in os.environ:
            dist.init_process_group(backend)
        else:
            fd, path = tempfile.mkstemp(prefix="gnnc-pg-")
            os.close(fd)
            os.unlink(path)  # the file store creates it
            dist.init_process_group(backend, init_method=f"file://{path}", rank=0,
                                    world_size=1)
    return dist.get_rank(), dist.get_world_size(), device


def _rank_world(group) -> Tuple[int, int]:
    if not (dist.is_available() and dist.is_initialized()):
        return 0, 1
    return dist.get_rank(group), dist.get_world_size(group)


def _comm_device(group, device: torch.device) -> torch.device:
    """Where the collectives' tensors must live: CUDA when NCCL is the
    group's backend (alone or beside gloo), else the CPU."""
    if "nccl" in str(dist.get_backend(group)):
        return device if device.type == "cuda" else torch.device(
            "cuda", torch.cuda.current_device())
    return torch.device("cpu")


def _row_elems(t: Tensor) -> int:
    return math.prod(t.shape[1:])


def _as_bytes(t: Tensor) -> Tensor:
    """A contiguous [rows, ...] tensor as [rows, bytes per row] uint8 (a view)."""
    return t.reshape(t.shape[0], _row_elems(t)).view(torch.uint8)


def _all_to_all_rows(out: Tensor, inp: Tensor, out_splits: Sequence[int],
                     in_splits: Sequence[int], group, comm_device) -> None:
    """all_to_all_single of rows: peer q gets in_splits[q] rows of `inp`
    (peer after peer) and `out` (contiguous) receives out_splits[q] rows
    from peer q. The rows travel as bytes, so any dtype goes; staged
    through comm_device when the backend needs tensors elsewhere. Rows of
    no elements (the same on every rank) need no collective."""
    if _row_elems(out) == 0:
        return
    send = _as_bytes(inp.contiguous())
    recv = _as_bytes(out)
    staged = send.device != comm_device
    if staged:
        send = send.to(comm_device)
        recv = torch.empty(recv.shape, dtype=torch.uint8, device=comm_device)
    dist.all_to_all_single(recv, send, list(out_splits), list(in_splits), group=group)
    if staged:
        _as_bytes(out).copy_(recv)


# --- partitioning -------------------------------------------------------------

def _np(a) -> np.ndarray:
    return a.detach().cpu().numpy() if isinstance(a, Tensor) else np.asarray(a)


def _tensor(a) -> Tensor:
    return a if isinstance(a, Tensor) else torch.from_numpy(np.ascontiguousarray(a))


def partition_rows(row_ptr, parts: int, order=None, row_cost: int = 1) -> np.ndarray:
    """The boundaries b[0] = 0 <= b[1] <= ... <= b[parts] = N of `parts`
    contiguous blocks of rows (block p: positions b[p] .. b[p+1] - 1) of
    costs as even as a contiguous cut allows; a row costs its edges plus
    `row_cost`. With `order` (a permutation: order[i] is the row placed at
    position i), the blocks are cut in that order, so block p holds rows
    order[b[p]:b[p+1]]. int64 numpy array of parts + 1 entries."""
    if parts < 1:
        raise ValueError(f"parts must be at least 1, got {parts}")
    rp = _np(row_ptr).astype(np.int64, copy=False)
    n = rp.shape[0] - 1
    cost = np.diff(rp) + int(row_cost)
    if order is not None:
        order = _np(order).astype(np.int64, copy=False)
        if order.shape != (n,) or not np.array_equal(
                np.bincount(order, minlength=n), np.ones(n, dtype=np.int64)):
            raise ValueError(f"order must be a permutation of the {n} rows")
        cost = cost[order]
    prefix = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(cost, out=prefix[1:])
    targets = prefix[-1] * np.arange(1, parts, dtype=np.float64) / parts
    # The position whose prefix cost is nearest each target.
    hi = np.searchsorted(prefix, targets, side="left").clip(0, n)
    lo = (hi - 1).clip(0, n)
    cut = np.where(np.abs(prefix[lo] - targets) <= np.abs(prefix[hi] - targets), lo, hi)
    b = np.concatenate([[0], np.maximum.accumulate(cut), [n]]).astype(np.int64)
    return b


def csr_from_edge_index(edge_index: Tensor, num_nodes: int) -> Tuple[Tensor, Tensor]:
    """(row_ptr int64, col_idx int64) of an edge_index ([2, E]: sources,
    destinations), rows = destinations, on edge_index's device; edges keep
    their order within a row."""
    src, dst = edge_index[0], edge_index[1]
    order = torch.argsort(dst, stable=True)
    counts = torch.bincount(dst, minlength=num_nodes)
    row_ptr = torch.zeros(num_nodes + 1, dtype=torch.int64, device=dst.device)
    torch.cumsum(counts, 0, out=row_ptr[1:])
    return row_ptr, src.index_select(0, order).long()


def _rows_slice(row_ptr: Tensor, col_idx: Tensor, rows: Optional[Tensor], lo: int,
                hi: int) -> Tuple[Tensor, Tensor]:
    """(row_ptr, global columns) of rows lo..hi-1 (or of `rows`, global ids,
    when the rows were renumbered)."""
    if rows is None:
        e0, e1 = int(row_ptr[lo]), int(row_ptr[hi])
        return row_ptr[lo:hi + 1] - e0, col_idx[e0:e1].long()
    starts = row_ptr.index_select(0, rows)
    deg = row_ptr.index_select(0, rows + 1) - starts
    local_ptr = torch.zeros(rows.shape[0] + 1, dtype=torch.int64, device=rows.device)
    torch.cumsum(deg, 0, out=local_ptr[1:])
    nnz = int(local_ptr[-1])
    # Edge k of the slice is edge starts[r] + (k - local_ptr[r]) of row r.
    shift = torch.repeat_interleave(starts - local_ptr[:-1], deg, output_size=nnz)
    eids = torch.arange(nnz, device=rows.device) + shift
    return local_ptr, col_idx.index_select(0, eids).long()


# --- statistics -----------------------------------------------------------------

class ExchangeStats:
    """Per exchange key (e.g. a layer's name): the calls and the bytes this
    rank sent in the forward (rows to the peers that reference them) and
    backward (halo gradients back to their owners) directions, the bytes
    of one exchanged row (``row_bytes``, the last call's), and their
    time (CUDA events on a GPU, read by :meth:`summary`; perf_counter on
    the CPU). :meth:`reset` starts a new count, e.g. every epoch."""

    def __init__(self, device: torch.device):
        self.cuda = torch.device(device).type == "cuda"
        self.timing = True
        self.reset()

    def reset(self) -> None:
        self._counts: Dict[str, Dict[str, float]] = {}
        self._pending: List[Tuple[str, str, object, object]] = []

    def _entry(self, key: str) -> Dict[str, float]:
        e = self._counts.get(key)
        if e is None:
            e = dict(forward_calls=0, forward_bytes=0, forward_ms=0.0,
                     backward_calls=0, backward_bytes=0, backward_ms=0.0, row_bytes=0)
            self._counts[key] = e
        return e

    def start(self):
        if not self.timing:
            return None
        if self.cuda:
            ev = torch.cuda.Event(enable_timing=True)
            ev.record()
            return ev
        return time.perf_counter()

    def stop(self, key: str, direction: str, rows: int, row_bytes: int, token) -> None:
        e = self._entry(key)
        e[f"{direction}_calls"] += 1
        e[f"{direction}_bytes"] += int(rows) * int(row_bytes)
        e["row_bytes"] = int(row_bytes)
        if token is None:
            return
        if self.cuda:
            end = torch.cuda.Event(enable_timing=True)
            end.record()
            self._pending.append((key, direction, token, end))
        else:
            e[f"{direction}_ms"] += (time.perf_counter() - token) * 1e3

    def summary(self) -> Dict[str, Dict[str, float]]:
        """{key: {forward_calls, forward_bytes, forward_ms, backward_calls,
        backward_bytes, backward_ms, row_bytes}} since the last reset
        (waits for the GPU to read the events)."""
        if self._pending:
            for key, direction, start, end in self._pending:
                end.synchronize()
                self._entry(key)[f"{direction}_ms"] += start.elapsed_time(end)
            self._pending.clear()
        return {k: dict(v) for k, v in self._counts.items()}

    def total_ms(self) -> float:
        return sum(v["forward_ms"] + v["backward_ms"] for v in self.summary().values())

    def total_bytes(self) -> int:
        return sum(v["forward_bytes"] + v["backward_bytes"]
                   for v in self.summary().values())


# --- the halo exchange --------------------------------------------------------

class _HaloExchange(torch.autograd.Function):
    """cat([x, the halo rows from their owners]); backward: the halo part of
    the gradient goes back to the owners and is added into their rows."""

    @staticmethod
    def forward(ctx, x, pg, key):
        ctx.pg, ctx.key = pg, key
        return pg._exchange_forward(x, key)

    @staticmethod
    def backward(ctx, grad):
        return ctx.pg._exchange_backward(grad, ctx.key), None, None


class PartitionedGraph:
    """The rank's part of a graph partitioned by rows (build it with
    :meth:`from_csr` or :meth:`from_edge_index` on every rank).

    - ``nodes``: the global ids of the rank's rows in local order (int64);
      ``local(x)`` picks their rows of a full [N, ...] tensor.
    - ``graph``: the local gnnc.Graph, ``n_local`` rows and ``n_local +
      n_halo`` columns: column j < n_local is local row j, column n_local + h
      is ``halo_nodes[h]``. Halo rows are ordered by owner, then position.
    - ``row_ptr``, ``col_idx``: that CSR (int64 offsets, int64 columns).
    - ``send_idx`` (local row ids, peer after peer), ``send_counts[q]``:
      the rows peer q references; ``recv_counts[q]``: the halo rows q owns.
    - ``boundaries``: the blocks' positions (:func:`partition_rows`);
      ``edge_cut``: edges whose two ends lie in different blocks;
      ``boundary_rows[q]``: the distinct (peer, row) pairs by which other
      blocks reference block q's rows, for every q (from the full graph).
    - ``stats``: the :class:`ExchangeStats` of this graph's exchanges.
    """

    def __init__(self, *, rank, world_size, group, device, num_nodes, boundaries,
                 nodes, row_ptr, col_idx, halo_nodes, recv_counts, send_idx,
                 send_counts, edge_cut, boundary_rows, num_edges):
        self.rank, self.world_size, self.group = rank, world_size, group
        self.device = device
        self.num_nodes = num_nodes
        self.num_edges = num_edges
        self.boundaries = boundaries
        self.nodes = nodes
        self.n_local = int(nodes.shape[0])
        self.n_halo = int(halo_nodes.shape[0])
        self.row_ptr, self.col_idx = row_ptr, col_idx
        self.halo_nodes = halo_nodes
        self.recv_counts: List[int] = [int(c) for c in recv_counts]
        self.send_counts: List[int] = [int(c) for c in send_counts]
        self.send_idx = send_idx
        self.edge_cut = edge_cut
        self.boundary_rows: List[int] = [int(c) for c in boundary_rows]
        self.stats = ExchangeStats(device)
        self._comm = (_comm_device(group, device) if world_size > 1 else device)
        self._derived: Dict[object, object] = {}
        self.graph = Graph.from_csr(row_ptr, col_idx, num_cols=self.n_local + self.n_halo,
                                    device=device, name=f"part {rank}/{world_size}")

    # --- construction ---------------------------------------------------------

    @classmethod
    def from_csr(cls, row_ptr, col_idx, *, order=None, boundaries=None, group=None,
                 device=None, row_cost: int = 1) -> "PartitionedGraph":
        """From the full CSR (rows = destinations; numpy arrays or tensors,
        the same on every rank). `order`: a renumbering (order[i]: the row
        at position i) cut into contiguous blocks; `boundaries`: the blocks
        (default: :func:`partition_rows` with one block per rank). `device`:
        where the local graph and the exchanged rows live (default: the
        current CUDA device). Collective: every rank of `group` calls it."""
        rank, world = _rank_world(group)
        if device is None:
            device = torch.device("cuda", torch.cuda.current_device())
        device = torch.device(device)
        # The heavy lifting on the CSR's device when it is a CUDA tensor,
        # else on `device`.
        work = row_ptr.device if isinstance(row_ptr, Tensor) and row_ptr.is_cuda \
            else device
        row_ptr = _tensor(row_ptr).to(work, torch.int64)
        col_idx = _tensor(col_idx).to(work)
        n = int(row_ptr.shape[0]) - 1
        if boundaries is None:
            boundaries = partition_rows(row_ptr, world, order, row_cost)
        boundaries = np.asarray(boundaries, dtype=np.int64)
        if boundaries.shape != (world + 1,) or boundaries[0] != 0 or boundaries[-1] != n \
                or np.any(np.diff(boundaries) < 0):
            raise ValueError(f"boundaries must rise from 0 to {n} in {world + 1} steps, "
                             f"got {boundaries.tolist()}")
        if order is not None:
            order = _tensor(order).to(work, torch.int64)
            pos_of = torch.empty_like(order)
            pos_of[order] = torch.arange(n, device=work)
        else:
            pos_of = None
        bounds = torch.from_numpy(boundaries).to(work)

        def part_view(p):
            lo, hi = int(boundaries[p]), int(boundaries[p + 1])
            rows = order[lo:hi] if order is not None else None
            ptr, cols = _rows_slice(row_ptr, col_idx, rows, lo, hi)
            pos = pos_of.index_select(0, cols) if pos_of is not None else cols
            owner = torch.searchsorted(bounds, pos, right=True) - 1
            return ptr, pos, owner

        # What the partition implies, from the full graph: the edge cut and
        # the distinct rows each block's rows are referenced by per peer.
        edge_cut = 0
        boundary_rows = np.zeros(world, dtype=np.int64)
        mine = None
        for p in range(world):
            ptr, pos, owner = part_view(p)
            remote = owner != p
            halo_pos = torch.unique(pos[remote])  # sorted: by owner, then position
            edge_cut += int(remote.sum())
            halo_owner = torch.searchsorted(bounds, halo_pos, right=True) - 1
            boundary_rows += torch.bincount(halo_owner, minlength=world).cpu().numpy()
            if p == rank:
                mine = (ptr, pos, remote, halo_pos, halo_owner)
            else:
                del ptr, pos, owner, remote, halo_pos, halo_owner
        ptr, pos, remote, halo_pos, halo_owner = mine
        lo, hi = int(boundaries[rank]), int(boundaries[rank + 1])
        local_cols = torch.where(remote, (hi - lo) + torch.searchsorted(halo_pos, pos),
                                 pos - lo)
        recv_counts = torch.bincount(halo_owner, minlength=world)
        # Each owner's local ids of the rows this rank needs, owner by owner.
        wanted = halo_pos - bounds.index_select(0, halo_owner)
        send_counts, send_idx = _swap_requests(recv_counts, wanted, group, world,
                                               _comm_device(group, device)
                                               if world > 1 else device)
        nodes = (order[lo:hi] if order is not None
                 else torch.arange(lo, hi, device=work))
        halo_nodes = order.index_select(0, halo_pos) if order is not None else halo_pos
        return cls(rank=rank, world_size=world, group=group, device=device,
                   num_nodes=n, boundaries=boundaries, nodes=nodes.to(device),
                   row_ptr=ptr.to(device), col_idx=local_cols.to(device),
                   halo_nodes=halo_nodes.to(device),
                   recv_counts=recv_counts.tolist(), send_idx=send_idx.to(device),
                   send_counts=send_counts, edge_cut=edge_cut,
                   boundary_rows=boundary_rows.tolist(), num_edges=int(col_idx.shape[0]))

    @classmethod
    def from_edge_index(cls, edge_index: Tensor, num_nodes: int, **kwargs
                        ) -> "PartitionedGraph":
        """From PyG's [2, E] edge_index (sources, destinations), the same on
        every rank; the keyword arguments are :meth:`from_csr`'s."""
        row_ptr, col_idx = csr_from_edge_index(torch.as_tensor(edge_index), num_nodes)
        return cls.from_csr(row_ptr, col_idx, **kwargs)

    def __repr__(self):
        return (f"PartitionedGraph(rank {self.rank}/{self.world_size}: {self.n_local} "
                f"rows of {self.num_nodes}, {self.n_halo} halo rows, "
                f"{int(self.col_idx.shape[0])} edges)")

    # --- local views ----------------------------------------------------------

    def local(self, x: Tensor) -> Tensor:
        """The rank's rows of a full [N, ...] tensor (in local order)."""
        return x.index_select(0, self.nodes.to(x.device))

    def _get(self, key, build):
        v = self._derived.get(key)
        if v is None:
            v = build()
            self._derived[key] = v
        return v

    @property
    def self_loop_graph(self) -> Graph:
        """The local graph with PyG's remaining self loops: each row's
        existing loops removed, one loop added (a loop is always local, so
        the halo is unchanged)."""
        def build():
            ptr, cols = self._self_loop_csr()
            return Graph.from_csr(ptr, cols, num_cols=self.n_local + self.n_halo,
                                  device=self.device,
                                  name=f"part {self.rank}/{self.world_size}+loops")
        return self._get("self_loop_graph", build)

    def _self_loop_csr(self) -> Tuple[Tensor, Tensor]:
        def build():
            n = self.n_local
            rows = torch.repeat_interleave(torch.arange(n, device=self.device),
                                           self.row_ptr.diff(), output_size=self.col_idx.shape[0])
            keep = self.col_idx != rows
            loops = torch.arange(n, device=self.device)
            rows = torch.cat([rows[keep], loops])
            cols = torch.cat([self.col_idx[keep], loops])
            order = torch.argsort(rows, stable=True)
            ptr = torch.zeros(n + 1, dtype=torch.int64, device=self.device)
            torch.cumsum(torch.bincount(rows, minlength=n), 0, out=ptr[1:])
            return ptr, cols.index_select(0, order)
        return self._get("self_loop_csr", build)

    def gcn_values(self, dtype=torch.float32) -> Tensor:
        """PyG's gcn_norm of :attr:`self_loop_graph`'s edges (its CSR order),
        deg^-1/2[src] * deg^-1/2[dst] with deg the GLOBAL in-degree (self
        loop included), as on the whole graph: the halo rows' degrees come
        from their owners through one exchange."""
        def build_f64():
            ptr, cols = self._self_loop_csr()
            deg = ptr.diff().double()
            inv = deg.clamp_min(1).pow(-0.5).masked_fill_(deg == 0, 0).unsqueeze(1)
            inv_all = self._exchange_forward(inv, None).squeeze(1)
            rows = torch.repeat_interleave(torch.arange(self.n_local, device=self.device),
                                           ptr.diff(), output_size=cols.shape[0])
            return inv_all.index_select(0, rows) * inv_all.index_select(0, cols)
        f64 = self._get("gcn_values_f64", build_f64)
        return self._get(("gcn_values", dtype), lambda: f64.to(dtype))

    # --- the exchange -----------------------------------------------------------

    def exchange(self, x: Tensor, key: str = "halo") -> Tensor:
        """cat([x, halo rows]) ([n_local + n_halo, ...]) of the rank's rows x
        ([n_local, ...]); differentiable in x. Collective: every rank calls
        it, with the same trailing shape and dtype. `key` names the exchange
        in :attr:`stats`."""
        if x.shape[0] != self.n_local:
            raise ValueError(f"x must have {self.n_local} rows (this rank's), got "
                             f"{list(x.shape)}")
        if self.world_size == 1:
            return x
        return _HaloExchange.apply(x, self, key)

    def _exchange_forward(self, x: Tensor, key: Optional[str]) -> Tensor:
        if self.world_size == 1:
            return x
        x = x.contiguous()
        token = self.stats.start() if key is not None else None
        send = x.index_select(0, self.send_idx)
        halo = x.new_empty((self.n_halo,) + tuple(x.shape[1:]))
        _all_to_all_rows(halo, send, self.recv_counts, self.send_counts, self.group,
                         self._comm)
        out = torch.cat([x, halo])
        if key is not None:
            self.stats.stop(key, "forward", send.shape[0], _row_elems(x) * x.element_size(),
                            token)
        return out

    def _exchange_backward(self, grad: Tensor, key: Optional[str]) -> Tensor:
        grad = grad.contiguous()
        token = self.stats.start() if key is not None else None
        halo = grad[self.n_local:]
        back = grad.new_empty((int(self.send_idx.shape[0]),) + tuple(grad.shape[1:]))
        _all_to_all_rows(back, halo, self.send_counts, self.recv_counts, self.group,
                         self._comm)
        dx = grad[:self.n_local].clone()
        dx.index_add_(0, self.send_idx, back)
        if key is not None:
            self.stats.stop(key, "backward", halo.shape[0],
                            _row_elems(grad) * grad.element_size(), token)
        return dx

    # --- what the partition implies -------------------------------------------

    def boundary_bytes(self, width: int, dtype=torch.float32, rank: Optional[int] = None
                       ) -> int:
        """Bytes rank `rank` (default: this one) must send in one forward
        exchange of rows of `width` elements of `dtype`: the distinct rows
        of its block that other blocks reference, per peer, x width x
        element size (from the full graph, not from the send lists)."""
        r = self.rank if rank is None else rank
        return self.boundary_rows[r] * int(width) * torch.empty(0, dtype=dtype).element_size()

    def describe(self) -> Dict[str, object]:
        """The partition's numbers (JSON-friendly)."""
        return dict(rank=self.rank, world_size=self.world_size, num_nodes=self.num_nodes,
                    num_edges=self.num_edges, boundaries=self.boundaries.tolist(),
                    n_local=self.n_local, n_halo=self.n_halo,
                    local_edges=int(self.col_idx.shape[0]),
                    send_rows=int(self.send_idx.shape[0]), edge_cut=self.edge_cut,
                    edge_cut_fraction=self.edge_cut / max(1, self.num_edges),
                    boundary_rows=self.boundary_rows)


def _swap_requests(recv_counts: Tensor, wanted: Tensor, group, world: int,
                   comm_device: torch.device) -> Tuple[List[int], Tensor]:
    """Tells every owner which of its rows this rank needs (recv_counts[q]
    ids in `wanted`, owner after owner) and learns what the peers need from
    it: (send_counts, send_idx)."""
    if world == 1:
        return [0], wanted.new_empty((0,))
    mine = recv_counts.to(comm_device, torch.int64)
    theirs = torch.empty_like(mine)
    dist.all_to_all_single(theirs, mine, group=group)
    send_counts = theirs.tolist()
    send_idx = torch.empty(sum(send_counts), dtype=torch.int64, device=comm_device)
    dist.all_to_all_single(send_idx, wanted.to(comm_device, torch.int64), send_counts,
                           mine.tolist(), group=group)
    return send_counts, send_idx


def all_reduce_gradients(module: torch.nn.Module, group=None) -> None:
    """Sums the parameters' gradients over the ranks (one flat all_reduce).
    With each rank's loss its rows' share of the global loss, the result is
    the global loss's gradient. A missing gradient counts as zeros."""
    if _rank_world(group)[1] == 1:
        return
    params = [p for p in module.parameters() if p.requires_grad]
    for p in params:
        if p.grad is None:
            p.grad = torch.zeros_like(p)
    grads = [p.grad for p in params]
    flat = torch.cat([g.reshape(-1).float() for g in grads])
    dist.all_reduce(flat, group=group)
    offset = 0
    for g in grads:
        g.copy_(flat[offset:offset + g.numel()].view_as(g))
        offset += g.numel()


def average_buffers(module: torch.nn.Module, group=None) -> None:
    """Makes the module's buffers the same on every rank of `group`: the
    floating-point ones (BatchNorm's running mean and variance) become
    their mean over the ranks (one flat all_reduce per dtype), the others
    (counters such as num_batches_tracked) take rank 0's value.

    For DistributedDataParallel with ``broadcast_buffers=False``: DDP then
    skips the buffer broadcast it otherwise runs before every forward
    (host work and a collective each step), each rank's BatchNorm tracks
    the statistics of its own batches, and calling this before evaluating
    or saving gives every rank one model whose statistics come from all
    ranks' batches rather than rank 0's alone."""
    rank, world = _rank_world(group)
    if world == 1:
        return
    by_dtype: Dict[torch.dtype, List[Tensor]] = {}
    others: List[Tensor] = []
    for b in module.buffers():
        (by_dtype.setdefault(b.dtype, []) if b.is_floating_point() else others).append(b)
    for bufs in by_dtype.values():
        flat = torch.cat([b.detach().reshape(-1) for b in bufs])
        dist.all_reduce(flat, group=group)
        flat.div_(world)
        offset = 0
        with torch.no_grad():
            for b in bufs:
                b.copy_(flat[offset:offset + b.numel()].view_as(b))
                offset += b.numel()
    src = dist.get_global_rank(group, 0) if group is not None else 0
    for b in others:
        dist.broadcast(b, src, group=group)


# --- dropout ----------------------------------------------------------------

def global_dropout(x: Tensor, p: float, training: bool, pg: Optional["PartitionedGraph"],
                   generator: Optional[torch.Generator]) -> Tensor:
    """Dropout of the rank's rows x ([n_local, ...]) with a mask that does
    not depend on the partition: the uniform numbers are drawn for ALL
    ``pg.num_nodes`` global rows (``torch.rand(num_nodes, ...)`` from
    `generator`, on x's device) and the rank keeps its rows (``pg.local``);
    an element survives where its number is >= p and is scaled by
    1 / (1 - p), as F.dropout does. With `generator` seeded alike on every
    rank, every rank draws the same numbers, so each keeps its slice of the
    mask one process would draw for the whole graph: a distributed model
    and the same model on one process differ only by the order of
    floating-point sums. (Uniform numbers on a GPU depend on its model, so
    the ranks' GPUs should be of one kind.) The price: every rank draws N x
    width numbers per call. p == 0 or not training: x itself, nothing drawn
    (the generator does not advance). pg None: x holds all rows."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0
    num_nodes = x.shape[0] if pg is None else pg.num_nodes
    u = torch.rand((num_nodes,) + tuple(x.shape[1:]), generator=generator, device=x.device)
    if pg is not None:
        u = pg.local(u)
    keep = (u >= p).to(x.dtype)
    return x * (keep * (1.0 / (1.0 - p)))


class GlobalDropout(torch.nn.Module):
    """:func:`global_dropout` as a module with its own generator, created on
    the input's device at the first draw and seeded with `seed` (the same
    on every rank); :meth:`reseed` starts the sequence again. Every call in
    training mode advances the generator by one draw over all rows, in the
    same order on every rank; eval mode draws nothing."""

    def __init__(self, p: float = 0.5, seed: int = 0):
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability must be in [0, 1], got {p}")
        self.p, self.seed = float(p), int(seed)
        self.generator: Optional[torch.Generator] = None

    def reseed(self, seed: Optional[int] = None) -> None:
        """Restarts the masks' sequence from `seed` (default: the current one)."""
        if seed is not None:
            self.seed = int(seed)
        self.generator = None

    def forward(self, x: Tensor, pg: Optional["PartitionedGraph"]) -> Tensor:
        if not self.training or self.p == 0.0:
            return x
        if self.generator is None or self.generator.device != x.device:
            self.generator = torch.Generator(device=x.device).manual_seed(self.seed)
        return global_dropout(x, self.p, True, pg, self.generator)

    def extra_repr(self) -> str:
        return f"p={self.p}, seed={self.seed}"


# --- layers -------------------------------------------------------------------

class DistGCNConv(GCNConv):
    """gnnc.nn.GCNConv (its parameters, initialisation and state_dict) over a
    :class:`PartitionedGraph`: x' = D^-1/2 (A + I) D^-1/2 X W + b with global
    degrees. When the layer narrows the width (out <= in) it transforms
    first, so the exchange moves the narrower rows; otherwise it exchanges
    and aggregates first."""

    def __init__(self, in_channels: int, out_channels: int, bias: bool = True):
        super().__init__(in_channels, out_channels, bias=bias)

    def forward(self, x: Tensor, pg: PartitionedGraph, key: str = "gcn") -> Tensor:
        g = pg.self_loop_graph
        if self.out_channels <= self.in_channels:
            h = pg.exchange(self.lin(x), key)
            out = ops.spmm(g, h, pg.gcn_values(h.dtype))
        else:
            h = pg.exchange(x, key)
            out = self.lin(ops.spmm(g, h, pg.gcn_values(h.dtype)))
        if self.bias is not None:
            out = out + self.bias.to(out.dtype)
        return out


class DistGINConv(GINConv):
    """gnnc.nn.GINConv over a :class:`PartitionedGraph`: exchanges x, sums the
    neighbours with gnnc's spmm over the local graph and adds (1 + eps) x
    (the local graph is rectangular, so the self term is added in torch)."""

    def forward(self, x: Tensor, pg: PartitionedGraph, key: str = "gin") -> Tensor:
        h = pg.exchange(x, key)
        agg = ops.spmm(pg.graph, h)
        if self.train_eps:
            out = agg + (1 + self.eps.to(x.dtype)) * x
        else:
            out = torch.add(agg, x, alpha=1.0 + self._fixed_eps())
        return self.nn(out)
