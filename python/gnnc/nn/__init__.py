"""PyG-compatible layers on gnnc's kernels (``from gnnc.nn import GCNConv``)."""
from .conv import GATConv, GCNConv, GINConv, SAGEConv
from .rgcn import RGCNConv

__all__ = ["GCNConv", "GATConv", "GINConv", "SAGEConv", "RGCNConv"]
