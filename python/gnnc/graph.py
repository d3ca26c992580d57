"""gnnc.Graph: a CSR graph on a CUDA device, its derived graphs and its
kernels. Needs torch."""
from __future__ import annotations

import ctypes
import threading
from typing import Dict, Optional, Tuple

import numpy as np
import torch

from . import _context, _host, _lib
from ._cache import GraphCache, graphs
from ._desc import OpSpec, dtype_code
from ._lib import Buffer, OpKind


def buffer_of(t: Optional[torch.Tensor]) -> Buffer:
    """The gnnc_buffer of a tensor: its address and the bytes from there to
    the end of its storage ({0, 0} for None)."""
    if t is None:
        return _lib.NULL_BUFFER
    # data_ptr() is the storage's address plus storage_offset() elements.
    return Buffer(t.data_ptr(),
                  t.untyped_storage().nbytes() - t.storage_offset() * t.element_size())


#: Tests only: lets graphs live on the CPU, where the kernels are emulated.
_allow_cpu = False


def _device_index(device) -> int:
    device = torch.device(device)
    if device.type == "cpu" and _allow_cpu:
        return -1
    if device.type != "cuda":
        raise ValueError(f"gnnc graphs live on CUDA devices, got {device}")
    return device.index if device.index is not None else torch.cuda.current_device()


class Graph:
    """A graph in PyG's convention (rows = destinations: row r aggregates the
    messages of its sources), as a CSR on a CUDA device.

    Build it with :meth:`from_edge_index` or :meth:`from_csr`. The device
    arrays (``row_ptr`` int64, ``col_idx`` int32) are torch tensors the
    graph owns; ``perm[e]`` is the position in ``edge_index`` of CSR edge e
    (to bring per-edge inputs given in edge_index order into CSR order:
    ``w[graph.perm]``). Derived graphs (transpose, row-edge and column-edge
    graphs, self loops) are built on first use and kept.
    """

    def __init__(self, host: _host.HostCsr, device=None, name: Optional[str] = None,
                 coo: Optional[np.ndarray] = None):
        index = _device_index(device if device is not None else "cuda")
        device = torch.device("cuda", index) if index >= 0 else torch.device("cpu")
        self.host = host
        self.device = device
        self._device_index = index
        # The shape, read on every op call.
        self._num_rows, self._num_cols = int(host.num_rows), int(host.num_cols)
        self._nnz = int(host.nnz)
        self.name = name
        self._coo = coo  # the [2, E] edge list it was built from, if any
        self.row_ptr = torch.from_numpy(host.row_ptr).to(device)
        self.col_idx = torch.from_numpy(host.col_idx).to(device)
        self.id = graphs.register(self)
        self._handle = None
        self._kernels: Dict[Tuple[OpSpec, Optional[str]], ctypes.c_void_p] = {}
        self._kernel_ids: Dict[int, Tuple[OpSpec, ctypes.c_void_p]] = {}
        self._derived: Dict[str, object] = {}
        #: The ops' per-graph cache (gnnc.ops): launch-invariant values.
        self._op_cache: Dict[object, object] = {}
        self._lock = threading.RLock()

    # --- construction -------------------------------------------------------

    @classmethod
    def from_edge_index(cls, edge_index, num_nodes: Optional[int] = None,
                        device=None, name: Optional[str] = None) -> "Graph":
        """From PyG's COO edge_index ([2, E]: sources, destinations)."""
        ei = _host.edge_index_to_numpy(edge_index)
        if num_nodes is None:
            num_nodes = _host.infer_num_nodes(ei)
        if device is None:
            device = edge_index.device if isinstance(edge_index, torch.Tensor) \
                and edge_index.is_cuda else "cuda"
        host = _host.csr_from_edge_index(ei, int(num_nodes))
        return cls(host, device, name, coo=ei)

    @classmethod
    def from_csr(cls, row_ptr, col_idx, num_cols: Optional[int] = None,
                 device=None, name: Optional[str] = None) -> "Graph":
        """From a CSR whose rows are destinations (row_ptr int64, col_idx int32
        or int64; numpy arrays or tensors)."""
        def np_of(a):
            return a.detach().cpu().numpy() if isinstance(a, torch.Tensor) else np.asarray(a)
        if device is None:
            device = row_ptr.device if isinstance(row_ptr, torch.Tensor) \
                and row_ptr.is_cuda else "cuda"
        host = _host.csr_from_arrays(np_of(row_ptr), np_of(col_idx), num_cols, name)
        return cls(host, device, name)

    # --- shape ---------------------------------------------------------------

    @property
    def num_rows(self) -> int:
        return self._num_rows

    @property
    def num_cols(self) -> int:
        return self._num_cols

    @property
    def num_nodes(self) -> int:
        return self._num_rows

    @property
    def nnz(self) -> int:
        return self._nnz

    def __repr__(self):
        return (f"gnnc.Graph(rows={self.num_rows}, cols={self.num_cols}, "
                f"nnz={self.nnz}, device={self.device})")

    @property
    def perm(self) -> Optional[torch.Tensor]:
        """For each CSR edge, its position in the edge list the graph was
        built from (int64 on the graph's device; None when built from CSR).
        Uploaded on first use: only edge values given in edge-list order need
        it, and it is 8 bytes per edge."""
        if self.host.perm is None:
            return None
        return self._get("perm", lambda: torch.from_numpy(self.host.perm).to(self.device))

    # --- derived graphs ------------------------------------------------------

    def _get(self, key, build):
        v = self._derived.get(key)  # a dict read needs no lock
        if v is not None:
            return v
        with self._lock:
            v = self._derived.get(key)
            if v is None:
                v = build()
                self._derived[key] = v
            return v

    def _transpose_host(self):
        return self._get("t_host", lambda: _host.transpose(self.host))

    @property
    def T(self) -> "Graph":
        """The transposed graph (rows = this graph's columns)."""
        return self._get("T", lambda: Graph(self._transpose_host()[0], self.device,
                                             f"{self.name or 'graph'}^T"))

    @property
    def t2f(self) -> torch.Tensor:
        """For each edge of the transpose (in its CSR order), the id of the same
        edge in this graph's CSR order (int64)."""
        return self._get("t2f", lambda: torch.from_numpy(
            self._transpose_host()[1]).to(self.device))

    @property
    def row_edge_graph(self) -> "Graph":
        """Same row_ptr, col_idx = arange(nnz): an spmm over it sums per-edge
        features per row."""
        return self._get("row_edge", lambda: Graph(
            _host.row_edge_csr(self.host), self.device, "row edges"))

    @property
    def col_edge_graph(self) -> "Graph":
        """The transpose's row_ptr, col_idx = the forward id of each transposed
        edge: an spmm over it sums per-edge features per column."""
        def build():
            t, t2f = self._transpose_host()
            return Graph(_host.column_edge_csr(t, t2f, self.nnz), self.device,
                         "column edges")
        return self._get("col_edge", build)

    @property
    def edge_rows(self) -> torch.Tensor:
        """The row (destination) of each CSR edge, int64."""
        return self._get("edge_rows", lambda: torch.repeat_interleave(
            torch.arange(self.num_rows, device=self.device),
            self.row_ptr.diff(), output_size=self.nnz))

    @property
    def edge_cols(self) -> torch.Tensor:
        """The column (source) of each CSR edge, int64."""
        return self._get("edge_cols", lambda: self.col_idx.long())

    @property
    def is_symmetric(self) -> bool:
        """Whether this CSR equals its transpose."""
        return self._get("sym", lambda: bool(_host.is_symmetric(
            self.host, self._transpose_host()[0])))

    def in_degrees(self) -> torch.Tensor:
        """Edges per row (int64)."""
        return self._get("deg", lambda: self.row_ptr.diff())

    def coo(self) -> np.ndarray:
        """The [2, E] edge list (sources, destinations) the graph was built
        from, or its CSR edge order for a graph given as CSR."""
        if self._coo is None:
            src, dst = self.host.to_coo()
            self._coo = np.stack([src, dst])
        return self._coo

    def add_self_loops(self) -> "Graph":
        """PyG semantics: existing self loops removed, one loop added per node.
        Its ``perm`` refers to the edge list ``[edge_index[:, no loops],
        loops]``."""
        if self.num_rows != self.num_cols:
            raise ValueError("add_self_loops needs a square graph")
        return self._get("self_loops", lambda: Graph.from_edge_index(
            _host.add_self_loops(self.coo(), self.num_nodes), self.num_nodes,
            self.device, f"{self.name or 'graph'}+loops"))

    def gcn_edge_values(self) -> torch.Tensor:
        """PyG's gcn_norm values per CSR edge (f32): deg^-1/2[src]*deg^-1/2[dst]
        with deg the in-degree."""
        return self._get("gcn_values", lambda: torch.from_numpy(
            _host.gcn_edge_values(self.host)).to(self.device))

    # --- C handles and kernels ----------------------------------------------

    @property
    def handle(self):
        with self._lock:
            if self._handle is None:
                torch.cuda.init()
                ctx = _context.get(self.device.index)
                h = _lib.gnnc_graph()
                rp = self.host.row_ptr
                ci = self.host.col_idx
                _lib.check(_lib.lib().gnnc_graph_create(
                    ctx.handle, _lib._enc(self.name), self.num_rows, self.num_cols,
                    self.nnz, rp.ctypes.data_as(ctypes.POINTER(ctypes.c_int64)),
                    ci.ctypes.data_as(ctypes.POINTER(ctypes.c_int32)),
                    buffer_of(self.row_ptr), buffer_of(self.col_idx),
                    ctypes.byref(h)), "creating a gnnc graph")
                self._handle = h
            return self._handle

    def kernel(self, spec: OpSpec, schedule: Optional[str] = None):
        """The kernel handle of `spec` (and `schedule`, None: gnnc chooses)."""
        if schedule is None:  # by identity first: no hashing of the spec
            hit = self._kernel_ids.get(id(spec))
            if hit is not None and hit[0] is spec:
                return hit[1]
        key = (spec, schedule)
        with self._lock:
            k = self._kernels.get(key)
            if k is None:
                k = _lib.gnnc_kernel()
                desc = spec.to_struct()
                _lib.check(_lib.lib().gnnc_kernel_get(
                    self.handle, ctypes.byref(desc), _lib._enc(schedule),
                    ctypes.byref(k)), f"compiling {spec.describe()} for {self!r}")
                self._kernels[key] = k
            if schedule is None:
                # The entry keeps `spec` alive, so its id is not reused while
                # it is there; bounded (callers that build a new spec per call
                # hit by hash).
                if len(self._kernel_ids) >= 256:
                    self._kernel_ids.clear()
                self._kernel_ids[id(spec)] = (spec, k)
            return k

    def kernel_schedule(self, op: str = "spmm", width: int = 1, dtype=torch.float32,
                        schedule: Optional[str] = None, **kwargs) -> Tuple[str, str]:
        """(schedule, where it came from) of the kernel gnnc runs for an op on
        this graph, e.g. ``g.kernel_schedule('spmm', 64, torch.float16,
        reduce='mean')`` -> ('#gnn.schedule<...>', 'cost model'); the source is
        what gnnc_kernel_schedule reports ('written', 'database', 'cost model'
        or 'default'). `op`:
        'spmm', 'sddmm', 'edge_softmax' or 'edge_softmax_grad'."""
        if op == "spmm":
            spec = OpSpec.spmm(dtype_code(dtype), width, **kwargs)
        elif op == "sddmm":
            spec = OpSpec.sddmm(dtype_code(dtype), width, **kwargs)
        elif op in ("edge_softmax", "edge_softmax_grad"):
            spec = OpSpec.edge_softmax(dtype_code(dtype), width, op.endswith("grad"))
        else:
            raise ValueError(f"unknown op {op!r}")
        return _schedule_of(self.kernel(spec, schedule))

    def chosen(self) -> Dict[str, Tuple[str, str]]:
        """For every kernel this graph and the graphs derived from it (its
        transpose, its self-loop graph) hold: a description of the op ->
        (schedule, where it came from), as kernel_schedule reports them."""
        out: Dict[str, Tuple[str, str]] = {}
        for (spec, _), k in list(self._kernels.items()):
            out[f"{self.name or 'graph'}: {spec.describe()}"] = _schedule_of(k)
        for derived in list(self._derived.values()):
            if isinstance(derived, Graph) and derived is not self:
                out.update(derived.chosen())
        return out

    def spmm_edge_factors(self, spec: OpSpec) -> Optional[torch.Tensor]:
        """row[r] * col[c] of each edge for spmm `spec` (gnnc_graph_spmm_factors),
        f32 on the device; None when every factor is 1."""
        key = ("factors", spec.reduce, spec.scale, spec.col_norm_exponent)

        def build():
            row = np.empty(self.num_rows, dtype=np.float32)
            col = np.empty(self.num_cols, dtype=np.float32)
            desc = spec.to_struct()
            _lib.check(_lib.lib().gnnc_graph_spmm_factors(
                self.handle, ctypes.byref(desc),
                row.ctypes.data_as(ctypes.POINTER(ctypes.c_float)),
                col.ctypes.data_as(ctypes.POINTER(ctypes.c_float))),
                "the spmm factors")
            if np.all(row == 1) and np.all(col == 1):
                return False
            f = row[self.host.edge_rows()] * col[self.host.col_idx]
            return torch.from_numpy(f.astype(np.float32)).to(self.device)
        f = self._get(key, build)
        return None if f is False else f

    def close(self) -> None:
        """Destroys the C graph and its kernels (also done when garbage
        collected). The derived graphs close themselves."""
        with self._lock:
            if self._handle is not None and not _context.exiting:
                _lib.lib().gnnc_graph_destroy(self._handle)
            self._handle = None
            self._kernels.clear()
            self._kernel_ids.clear()
            self._op_cache.clear()
        graphs.unregister(self.id)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _schedule_of(kernel) -> Tuple[str, str]:
    """(schedule, where it came from) of a kernel handle (gnnc_kernel_schedule)."""
    sched = ctypes.create_string_buffer(1024)
    source = ctypes.create_string_buffer(64)
    _lib.check(_lib.lib().gnnc_kernel_schedule(kernel, sched, len(sched), source,
                                               len(source)))
    return sched.value.decode(), source.value.decode()


#: The process-wide cache of graphs built by the layers from edge_index.
graph_cache = GraphCache(capacity=16)


def cached_graph(edge_index, num_nodes: int, variant: Optional[str] = None,
                 device=None) -> Graph:
    """The Graph of `edge_index` (optionally with 'self_loops' added),
    built once per (storage, shape, device, version, num_nodes, variant).
    `device`: where the graph lives (default: edge_index's device)."""
    if device is None:
        device = edge_index.device

    def build():
        if variant == "self_loops":  # straight from the edge list, one CSR build
            return Graph.from_edge_index(_host.add_self_loops(edge_index, num_nodes),
                                         num_nodes, device)
        return Graph.from_edge_index(edge_index, num_nodes, device)
    return graph_cache.get_or_build(edge_index, num_nodes, variant, build)
