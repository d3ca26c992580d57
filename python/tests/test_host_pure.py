"""Host-side logic that needs neither the library, torch nor a GPU."""
import ctypes
import ctypes.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gnnc import _cache, _host, _validate


# --- a tiny stand-in for a tensor -------------------------------------------

class Dev:
    def __init__(self, type, index=None):
        self.type, self.index = type, index

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class FakeTensor:
    def __init__(self, shape, dtype="torch.float32", device=Dev("cuda", 0),
                 contiguous=True, ptr=0x1000, version=0):
        self.shape, self.dtype, self.device = tuple(shape), dtype, device
        self._contig, self._ptr, self._version = contiguous, ptr, version

    def is_contiguous(self):
        return self._contig

    def data_ptr(self):
        return self._ptr


def test_host_modules_do_not_import_torch():
    code = ("import sys; import gnnc, gnnc._lib, gnnc._host, gnnc._desc, "
            "gnnc._validate, gnnc._cache, gnnc._context; "
            "assert 'torch' not in sys.modules, 'torch was imported'")
    subprocess.run([sys.executable, "-c", code], check=True,
                   cwd=str(Path(__file__).resolve().parents[1]))


def test_loader_says_where_it_looked(monkeypatch, tmp_path):
    from gnnc import _lib
    monkeypatch.setenv("GNNC_LIBRARY", str(tmp_path / "nowhere.so"))
    paths = _lib.candidate_paths()
    assert paths[0] == tmp_path / "nowhere.so"
    assert paths[1].parent.name == "gnnc"
    assert paths[2].parts[-3:] == ("build", "lib", "libgnnc_c.so")
    with pytest.raises(_lib.GnncError, match=r"(?s)cannot find.*nowhere.so: not found"):
        _lib.load(tmp_path / "nowhere.so")
    monkeypatch.setenv("GNNC_LIBRARY", str(tmp_path))
    assert _lib.candidate_paths()[0] == tmp_path / "libgnnc_c.so"


def test_loader_rejects_other_libraries(tmp_path):
    from gnnc import _lib
    libc = ctypes.util.find_library("c")
    if libc is None:
        pytest.skip("no C library found to load")
    import ctypes as c
    path = None
    for cand in ("/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6"):
        if Path(cand).exists():
            path = Path(cand)
    if path is None:
        pytest.skip("libc.so.6 not at a known path")
    with pytest.raises(_lib.GnncError, match="lacks the C ABI function gnnc_abi_version"):
        _lib.load(path)


def test_validate_dtype():
    _validate.check_dtype("x", FakeTensor([2, 3]))
    _validate.check_dtype("x", FakeTensor([2, 3], "torch.bfloat16"))
    with pytest.raises(TypeError, match="x: gnnc kernels take float32"):
        _validate.check_dtype("x", FakeTensor([2, 3], "torch.float64"))
    with pytest.raises(TypeError, match=r"values has dtype torch.float16 but .* torch.float32"):
        _validate.check_dtype("values", FakeTensor([4], "torch.float16"), "torch.float32")


def test_validate_device():
    _validate.check_device("x", FakeTensor([1]), Dev("cuda", 0))
    _validate.check_device("x", FakeTensor([1], device=Dev("cuda", None)), Dev("cuda", 0))
    with pytest.raises(ValueError, match="x is on cpu; gnnc kernels run on CUDA"):
        _validate.check_device("x", FakeTensor([1], device=Dev("cpu")), Dev("cuda", 0))
    with pytest.raises(ValueError, match="x is on cuda:1 but the graph is on cuda:0"):
        _validate.check_device("x", FakeTensor([1], device=Dev("cuda", 1)), Dev("cuda", 0))


def test_validate_shape():
    _validate.check_shape("x", FakeTensor([5, 7]), [5, None])
    with pytest.raises(ValueError,
                       match=r"x must have shape \[5, \*\] \(num_cols x features\), got \[4, 7\]"):
        _validate.check_shape("x", FakeTensor([4, 7]), [5, None], "num_cols x features")
    with pytest.raises(ValueError, match=r"values must have shape \[9\], got \[9, 1\]"):
        _validate.check_shape("values", FakeTensor([9, 1]), [9])


def test_needs_contiguous():
    assert _validate.needs_contiguous(FakeTensor([2, 2], contiguous=False))
    assert not _validate.needs_contiguous(FakeTensor([2, 2]))


# --- cache keys ---------------------------------------------------------------

def test_cache_key_parts():
    t = FakeTensor([2, 10], "torch.int64", ptr=0xabc, version=3)
    k = _cache.graph_cache_key(t, 7, "self_loops")
    assert k == (0xabc, (2, 10), "cuda:0", 3, 7, "self_loops")
    t._version = 4
    assert _cache.graph_cache_key(t, 7, "self_loops") != k
    assert _cache.graph_cache_key(t, 8, "self_loops") != _cache.graph_cache_key(t, 7, "self_loops")
    assert _cache.graph_cache_key(t, 7, None) != _cache.graph_cache_key(t, 7, "self_loops")


def test_graph_cache_hits_and_invalidation():
    cache = _cache.GraphCache(capacity=2)
    t = FakeTensor([2, 10], "torch.int64")
    built = []

    def build():
        built.append(object())
        return built[-1]

    a = cache.get_or_build(t, 5, None, build)
    assert cache.get_or_build(t, 5, None, build) is a and len(built) == 1
    t._version += 1  # an in-place write
    b = cache.get_or_build(t, 5, None, build)
    assert b is not a and len(built) == 2
    cache.get_or_build(t, 5, "self_loops", build)
    assert len(built) == 3


def test_graph_cache_address_reuse_misses():
    cache = _cache.GraphCache()
    t = FakeTensor([2, 4], "torch.int64", ptr=0x42)
    cache.get_or_build(t, 3, None, lambda: "first")
    del t  # freed; another tensor gets the same address, shape and version
    u = FakeTensor([2, 4], "torch.int64", ptr=0x42)
    assert cache.get_or_build(u, 3, None, lambda: "second") == "second"


def test_graph_cache_capacity():
    cache = _cache.GraphCache(capacity=2)
    ts = [FakeTensor([2, 1], ptr=i) for i in range(3)]
    for i, t in enumerate(ts):
        cache.get_or_build(t, 1, None, lambda i=i: i)
    assert len(cache) == 2
    assert cache.get_or_build(ts[0], 1, None, lambda: "rebuilt") == "rebuilt"


def test_registry():
    reg = _cache.Registry()

    class Obj:
        pass

    o = Obj()
    i = reg.register(o)
    assert reg.get(i) is o
    del o
    with pytest.raises(KeyError, match="no longer exists"):
        reg.get(i)


# --- numpy graph helpers ------------------------------------------------------

def test_add_self_loops_pyg_semantics():
    ei = np.array([[0, 1, 1, 2], [1, 1, 0, 2]])
    out = _host.add_self_loops(ei, 4)
    np.testing.assert_array_equal(out, [[0, 1, 0, 1, 2, 3], [1, 0, 0, 1, 2, 3]])


def test_remove_self_loops():
    ei = np.array([[0, 1, 2], [0, 2, 2]])
    np.testing.assert_array_equal(_host.remove_self_loops(ei), [[1], [2]])


def test_edge_index_checks():
    with pytest.raises(ValueError, match=r"shape \[2, num_edges\]"):
        _host.edge_index_to_numpy(np.zeros((3, 2), dtype=np.int64))
    with pytest.raises(TypeError, match="integers"):
        _host.edge_index_to_numpy(np.zeros((2, 2), dtype=np.float32))
    assert _host.infer_num_nodes(np.array([[0, 5], [2, 1]])) == 6


def test_compose_edge_maps():
    # Edge list positions 0..3; forward order and another order of them.
    fwd_perm = np.array([2, 0, 3, 1])
    other_perm = np.array([0, 1, 2, 3])
    m = _host.compose_edge_maps(fwd_perm, other_perm)
    np.testing.assert_array_equal(fwd_perm[m], other_perm)


def _csr(rows):
    row_ptr = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    col = np.array([c for r in rows for c in r], dtype=np.int32)
    return _host.HostCsr(len(rows), len(rows), row_ptr, col)


def test_gcn_edge_values_and_edge_graphs():
    g = _csr([[0, 1], [0], []])  # edges 0->0, 1->0, 0->1
    deg = np.array([2.0, 1.0, 0.0])
    want = [deg[0] ** -0.5 * deg[0] ** -0.5, deg[1] ** -0.5 * deg[0] ** -0.5,
            deg[0] ** -0.5 * deg[1] ** -0.5]
    np.testing.assert_allclose(_host.gcn_edge_values(g), want, rtol=1e-6)
    np.testing.assert_array_equal(g.edge_rows(), [0, 0, 1])
    re = _host.row_edge_csr(g)
    np.testing.assert_array_equal(re.col_idx, [0, 1, 2])
    assert re.num_cols == 3
    src, dst = g.to_coo()
    np.testing.assert_array_equal(src, [0, 1, 0])
    np.testing.assert_array_equal(dst, [0, 0, 1])


def test_is_symmetric_given_transpose():
    g = _csr([[1], [0]])
    assert _host.is_symmetric(g, g)
    h = _csr([[1], []])
    t = _csr([[], [0]])
    assert not _host.is_symmetric(h, t)
