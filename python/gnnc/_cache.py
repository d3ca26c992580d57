"""Graph caching for layers, and the registry that lets custom ops refer to
a graph by an integer id. No torch needed."""
from __future__ import annotations

import itertools
import threading
import weakref
from collections import OrderedDict
from typing import Any, Callable, Hashable, Optional, Tuple


def graph_cache_key(edge_index, num_nodes: int, variant: Hashable = None) -> Tuple:
    """The key of a graph built from `edge_index`: its storage address,
    shape, device and version counter (bumped by every in-place write, so a
    modified tensor misses), the node count and the variant
    (e.g. 'self_loops')."""
    return (int(edge_index.data_ptr()), tuple(map(int, edge_index.shape)),
            str(edge_index.device), int(getattr(edge_index, "_version", 0)),
            int(num_nodes), variant)


class GraphCache:
    """A small LRU of graphs built from edge_index tensors.

    An entry is used only while the tensor it was built from is alive and
    is the same object: a freed tensor whose address is reused by another
    misses (the entry keeps a weak reference, never the tensor itself).
    """

    def __init__(self, capacity: int = 16):
        self.capacity = capacity
        self._entries: "OrderedDict[Tuple, Tuple[Any, Any]]" = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get_or_build(self, edge_index, num_nodes: int, variant: Hashable,
                     build: Callable[[], Any]):
        key = graph_cache_key(edge_index, num_nodes, variant)
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                ref, value = entry
                if _deref(ref) is edge_index:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return value
                del self._entries[key]
        value = build()
        with self._lock:
            self.misses += 1
            self._entries[key] = (_weak(edge_index), value)
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def _weak(obj):
    try:
        return weakref.ref(obj)
    except TypeError:  # objects without weak references: compare by identity
        return lambda: obj


def _deref(ref):
    return ref()


class Registry:
    """Integer ids for live objects (weak references): custom ops take the
    id, not the object."""

    def __init__(self):
        self._next = itertools.count(1)
        self._refs = {}
        self._lock = threading.Lock()

    def register(self, obj) -> int:
        with self._lock:
            i = next(self._next)
            self._refs[i] = weakref.ref(obj, lambda _r, i=i: self._refs.pop(i, None))
            return i

    def get(self, i: int):
        ref = self._refs.get(int(i))
        obj = ref() if ref is not None else None
        if obj is None:
            raise KeyError(
                f"gnnc graph {i} no longer exists (keep the gnnc.Graph alive "
                f"while its ops and their backward run)")
        return obj

    def unregister(self, i: int) -> None:
        with self._lock:
            self._refs.pop(int(i), None)

    def live(self):
        return [o for o in (r() for r in list(self._refs.values())) if o is not None]


graphs = Registry()
