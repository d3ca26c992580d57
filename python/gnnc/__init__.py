"""gnnc for PyTorch: graph neural network kernels compiled by gnnc, as
autograd ops and PyG-compatible layers.

Host-side parts (the library binding, graph building on numpy arrays,
argument checks) import without torch; ``gnnc.Graph``, ``gnnc.ops`` and
``gnnc.nn`` import torch on first use.
"""
from ._lib import ABI_VERSION, GnncError

__version__ = "0.1.0"

__all__ = ["ABI_VERSION", "GnncError", "Graph", "SnapshotGroup", "ops", "nn",
           "spmm", "sddmm", "edge_softmax", "gat_attention", "snapshot_spmm",
           "choose_snapshot_group", "cached_graph",
           "segment_matmul"]

_LAZY = {
    "Graph": ("graph", "Graph"),
    "cached_graph": ("graph", "cached_graph"),
    "graph_cache": ("graph", "graph_cache"),
    "spmm": ("ops", "spmm"),
    "sddmm": ("ops", "sddmm"),
    "edge_softmax": ("ops", "edge_softmax"),
    "gat_attention": ("ops", "gat_attention"),
    "SnapshotGroup": ("snapshots", "SnapshotGroup"),
    "snapshot_spmm": ("ops", "snapshot_spmm"),
    "choose_snapshot_group": ("snapshots", "choose_snapshot_group"),
    "segment_matmul": ("segment", "segment_matmul"),
}


def __getattr__(name):
    import importlib

    if name in ("ops", "nn", "graph", "snapshots", "segment"):
        return importlib.import_module(f".{name}", __name__)
    if name in _LAZY:
        module, attr = _LAZY[name]
        return getattr(importlib.import_module(f".{module}", __name__), attr)
    raise AttributeError(f"module 'gnnc' has no attribute {name!r}")
