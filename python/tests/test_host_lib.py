"""The ctypes binding against the real libgnnc_c.so (no GPU, no torch).
Skips, saying why, when the library is not found (build the target gnnc_c
or set GNNC_LIBRARY)."""
import ctypes

import numpy as np
import pytest

from gnnc import _host, _lib
from gnnc._desc import OpSpec
from gnnc._lib import DType, GnncError, OpKind, Reduce, Scale

try:
    _lib.load()
    _why = ""
except GnncError as e:
    _why = str(e)

pytestmark = pytest.mark.skipif(bool(_why), reason=f"libgnnc_c.so not available: {_why}")


def ref_csr(num_nodes, src, dst):
    """rows = dst, columns = src ascending, ties in input order."""
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    perm = np.lexsort((src, dst))  # stable: ties keep input order
    row_ptr = np.zeros(num_nodes + 1, np.int64)
    np.cumsum(np.bincount(dst, minlength=num_nodes), out=row_ptr[1:])
    return row_ptr, src[perm].astype(np.int32), perm


def test_abi_version():
    assert _lib.abi_version() == _lib.ABI_VERSION


def test_op_desc_init_defaults():
    d = _lib.op_desc_init()
    assert d.struct_size == ctypes.sizeof(_lib.OpDescStruct)
    assert (d.kind, d.dtype, d.width, d.reduce, d.scale) == (0, 0, 0, 0, 0)
    assert not d.edge_values and not d.has_self_weight and not d.has_leaky_relu
    assert d.form == 0


def test_gpu_available_answers():
    ok, why = _lib.gpu_available()
    assert isinstance(ok, bool)
    if not ok:
        assert why


@pytest.mark.parametrize("seed", range(4))
def test_coo_to_csr_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    e = int(rng.integers(0, 200))
    # Ragged: a hub row, empty rows, duplicate edges.
    dst = np.where(rng.random(e) < 0.3, 0, rng.integers(0, max(n // 2, 1), e))
    src = rng.integers(0, n, e)
    if e > 3:
        src[1], dst[1] = src[0], dst[0]
    row_ptr, col_idx, perm = _lib.coo_to_csr(n, src, dst)
    want = ref_csr(n, src, dst)
    np.testing.assert_array_equal(row_ptr, want[0])
    np.testing.assert_array_equal(col_idx, want[1])
    np.testing.assert_array_equal(perm, want[2])


def test_coo_to_csr_empty():
    row_ptr, col_idx, perm = _lib.coo_to_csr(3, [], [])
    np.testing.assert_array_equal(row_ptr, [0, 0, 0, 0])
    assert col_idx.size == 0 and perm.size == 0


def test_coo_to_csr_errors_name_the_position():
    with pytest.raises(GnncError, match=r"gnnc_coo_to_csr: src\[2\] = 5 is outside \[0, 4\)"):
        _lib.coo_to_csr(4, [0, 1, 5], [1, 2, 3])
    with pytest.raises(GnncError, match=r"dst\[0\] = -1"):
        _lib.coo_to_csr(4, [0], [-1])
    with pytest.raises(GnncError, match="num_nodes"):
        _lib.coo_to_csr(2**40, [0], [0])
    with pytest.raises(ValueError, match="1-D of one length"):
        _lib.coo_to_csr(4, [0, 1], [1])


def test_csr_validate():
    _lib.csr_validate([0, 1, 3], [1, 0, 1], 2, "ok")
    with pytest.raises(GnncError, match="gnnc_csr_validate"):
        _lib.csr_validate([0, 2, 1], [0, 0], 2, "bad")
    with pytest.raises(GnncError, match="mygraph"):
        _lib.csr_validate([0, 1], [7], 2, "mygraph")
    with pytest.raises(GnncError):
        _lib.csr_validate([1, 1], [0], 2)


def test_csr_from_arrays_checks():
    with pytest.raises(GnncError):
        _host.csr_from_arrays([0, 1], [3], num_cols=2)
    g = _host.csr_from_arrays([0, 2, 2], [0, 1])
    assert (g.num_rows, g.num_cols, g.nnz) == (2, 2, 2)


def test_op_check_ok_and_errors():
    OpSpec.spmm(DType.F32, 64).check()
    OpSpec.spmm(DType.F16, 33, reduce="mean", norm="both").check()
    OpSpec.sddmm(DType.F32, 4, form="add", leaky_relu=0.2).check()
    OpSpec.edge_softmax(DType.F32, 4).check()
    with pytest.raises(GnncError, match="gnnc_op_check") as info:
        OpSpec.spmm(DType.F32, 64).check("#gnn.schedule<vector_width = 8>")
    assert "16 bytes" in str(info.value) or "32 bytes" in str(info.value)
    with pytest.raises(GnncError, match="gnnc_op_check"):
        OpSpec.spmm(DType.F32, 64).check("#gnn.schedule<not a schedule")


def test_op_check_bad_struct():
    d = OpSpec.spmm(DType.F32, 8).to_struct()
    d.struct_size = 3
    with pytest.raises(GnncError, match="struct_size"):
        _lib.op_check(d)
    d = OpSpec.spmm(DType.F32, 8).to_struct()
    d.dtype = 9
    with pytest.raises(GnncError):
        _lib.op_check(d)


def test_feature_grad_op():
    g = OpSpec.spmm(DType.F32, 16, reduce="mean").feature_grad()
    assert g.kind == OpKind.SPMM and g.reduce == Reduce.SUM and g.width == 16
    g = OpSpec.spmm(DType.F16, 16, norm="both", edge_values=True,
                    self_weight=0.5).feature_grad()
    assert g.scale == Scale.BOTH and g.edge_values and g.self_weight == 0.5
    with pytest.raises(GnncError, match="max"):
        OpSpec.spmm(DType.F32, 16, reduce="max").feature_grad()


def test_spec_roundtrip():
    s = OpSpec.spmm(DType.BF16, 12, row_stride=48, edge_values=True, reduce="mean",
                    norm="left", self_weight=0.25)
    assert OpSpec.from_struct(s.to_struct()) == s
    s = OpSpec.sddmm(DType.F16, 4, form="add", leaky_relu=0.2)
    assert OpSpec.from_struct(s.to_struct()) == s
    assert hash(s) == hash(OpSpec.sddmm(DType.F16, 4, form="add", leaky_relu=0.2))


def test_spec_rejects_bad_names():
    with pytest.raises(ValueError, match="reduce must be one of"):
        OpSpec.spmm(DType.F32, 4, reduce="min")
    with pytest.raises(ValueError, match="norm must be one of"):
        OpSpec.spmm(DType.F32, 4, norm="sym")
    with pytest.raises(TypeError, match="float64"):
        OpSpec.spmm("torch.float64", 4)


def _random_graph(seed, n=30, e=150, rect=None):
    rng = np.random.default_rng(seed)
    dst = np.where(rng.random(e) < 0.2, 3, rng.integers(0, n // 2, e))
    src = rng.integers(0, n, e)
    return _host.csr_from_edge_index(np.stack([src, dst]), n)


@pytest.mark.parametrize("seed", range(3))
def test_transpose_and_edge_map(seed):
    g = _random_graph(seed)
    t, t2f = _host.transpose(g)
    rows = g.edge_rows()
    trows = t.edge_rows()
    # Transposed edge k = (c, r) is forward edge t2f[k] = (r, c).
    np.testing.assert_array_equal(rows[t2f], t.col_idx)
    np.testing.assert_array_equal(g.col_idx[t2f], trows)
    assert sorted(t2f.tolist()) == list(range(g.nnz))
    _lib.csr_validate(t.row_ptr, t.col_idx, t.num_cols, "transpose")
    # Transposing twice gives the graph back.
    tt, _ = _host.transpose(t)
    np.testing.assert_array_equal(tt.row_ptr, g.row_ptr)
    np.testing.assert_array_equal(tt.col_idx, g.col_idx)


def test_transpose_rectangular():
    g = _host.csr_from_arrays([0, 2, 3], [4, 0, 4], num_cols=5)
    t, t2f = _host.transpose(g)
    assert (t.num_rows, t.num_cols) == (5, 2)
    np.testing.assert_array_equal(t.row_ptr, [0, 1, 1, 1, 1, 3])
    np.testing.assert_array_equal(t.col_idx, [0, 0, 1])
    np.testing.assert_array_equal(t2f, [1, 0, 2])


def test_edge_maps_compose_like_transpose():
    rng = np.random.default_rng(7)
    src, dst = rng.integers(0, 20, 80), rng.integers(0, 20, 80)
    fwd = _host.csr_from_edge_index(np.stack([src, dst]), 20)
    _, _, t_perm = _lib.coo_to_csr(20, dst, src)  # transpose from the edge list
    _, t2f = _host.transpose(fwd)
    np.testing.assert_array_equal(_host.compose_edge_maps(fwd.perm, t_perm), t2f)


def test_symmetry():
    ei = np.array([[0, 1, 1, 2], [1, 0, 2, 1]])
    assert _host.is_symmetric(_host.csr_from_edge_index(ei, 3))
    assert not _host.is_symmetric(_host.csr_from_edge_index(ei[:, :3], 3))
    assert _host.is_symmetric(_host.csr_from_edge_index(_host.add_self_loops(ei, 3), 3))


def test_edge_graphs_are_valid_and_sum_per_edge():
    g = _random_graph(1)
    t, t2f = _host.transpose(g)
    re, ce = _host.row_edge_csr(g), _host.column_edge_csr(t, t2f, g.nnz)
    _lib.csr_validate(re.row_ptr, re.col_idx, re.num_cols, "row edges")
    _lib.csr_validate(ce.row_ptr, ce.col_idx, ce.num_cols, "column edges")
    w = np.random.default_rng(0).random(g.nnz)
    per_row = np.add.reduceat(np.append(w[re.col_idx], 0), re.row_ptr[:-1])
    per_row[np.diff(re.row_ptr) == 0] = 0
    np.testing.assert_allclose(per_row, np.bincount(g.edge_rows(), w, g.num_rows))
    per_col = np.bincount(ce.edge_rows(), w[ce.col_idx], ce.num_rows)
    np.testing.assert_allclose(per_col, np.bincount(g.col_idx, w, g.num_cols))


# --- snapshot groups (host-only: no context, no GPU) ---------------------------

def test_host_only_snapshot_group_counts():
    # Snapshot 0: 0 -> 1, 2 -> 1, 1 -> 2; snapshot 1: 0 -> 1, 1 -> 0.
    csrs = [ref_csr(3, [0, 2, 1], [1, 1, 2]), ref_csr(3, [0, 1], [1, 0])]
    h = _lib.snapshot_group_create(None, "tiny", 3, [c[0] for c in csrs],
                                   [c[1] for c in csrs])
    try:
        counts = _lib.snapshot_group_edges(h)
    finally:
        _lib.lib().gnnc_snapshot_group_destroy(h)
    assert counts == dict(overlap_edges=1, stored_edges=4, snapshot_edges=5,
                          overlap_rate=pytest.approx(2 / 5))


def test_snapshot_group_errors_name_the_snapshot():
    good = ref_csr(4, [0, 1, 2], [1, 2, 3])
    repeated = ref_csr(4, [0, 0], [1, 1])
    with pytest.raises(GnncError, match="grp: snapshot 1: row 1 is not sorted and unique"):
        _lib.snapshot_group_create(None, "grp", 4, [good[0], repeated[0]],
                                   [good[1], repeated[1]])
    with pytest.raises(GnncError, match="grp: snapshot 0: .*out of range"):
        _lib.snapshot_group_create(None, "grp", 4, [good[0]], [good[1] + 3])
    with pytest.raises(ValueError, match="snapshot 1: row_ptr has 4 entries, expected"):
        _lib.snapshot_group_create(None, "grp", 4, [good[0], good[0][:4]],
                                   [good[1], good[1]])
    with pytest.raises(ValueError, match="one row_ptr and one col_idx per snapshot"):
        _lib.snapshot_group_create(None, "grp", 4, [good[0]], [])
    with pytest.raises(GnncError, match="num_snapshots is 0"):
        _lib.snapshot_group_create(None, "grp", 4, [], [])


def test_snapshot_group_choose_checks_before_the_gpu():
    # Any number of snapshots (70 here); the arguments and every snapshot
    # are checked before the sizes are timed, which needs a context.
    good = ref_csr(4, [0, 1, 2], [1, 2, 3])
    rps, cis = [good[0]] * 70, [good[1]] * 70
    with pytest.raises(GnncError, match="ctx is NULL: the group sizes are timed"):
        _lib.snapshot_group_choose(None, "covid", 4, rps, cis, 16, DType.F32, 0, True)
    with pytest.raises(GnncError, match="series 'covid'.*width is 0; at least 1"):
        _lib.snapshot_group_choose(None, "covid", 4, rps, cis, 0, DType.F32, 0, True)
    with pytest.raises(GnncError, match="memoryBudget is -5"):
        _lib.snapshot_group_choose(None, "covid", 4, rps, cis, 8, DType.F16, -5, False)
    repeated = ref_csr(4, [0, 0], [1, 1])
    with pytest.raises(GnncError, match="covid.*snapshot 69.*not sorted and unique"):
        _lib.snapshot_group_choose(None, "covid", 4, rps[:69] + [repeated[0]],
                                   cis[:69] + [repeated[1]], 8, DType.F32, 0, True)
    with pytest.raises(GnncError, match="the series has no snapshots"):
        _lib.snapshot_group_choose(None, None, 4, [], [], 8, DType.F32, 0, True)
    with pytest.raises(ValueError, match="a snapshot series needs one row_ptr"):
        _lib.snapshot_group_choose(None, "covid", 4, rps, cis[:3], 8, DType.F32, 0,
                                   True)


def test_snapshot_group_choice_structs_match_the_header():
    # gnnc_snapshot_group_size and gnnc_snapshot_group_choice (the C side
    # asserts the same sizes).
    assert ctypes.sizeof(_lib.SnapshotGroupSizeStruct) == 88
    assert ctypes.sizeof(_lib.SnapshotGroupChoiceStruct) == 48 + 8 * 88


def test_snapshot_op_check():
    spec = OpSpec.spmm(DType.F16, 12, reduce="mean", norm="both")
    _lib.snapshot_op_check(spec.to_struct(), 8)
    _lib.snapshot_op_check(spec.feature_grad().to_struct(), 8,
                           "#gnn.schedule<strategy = sliced, slice_size = 16>")
    with pytest.raises(GnncError, match="reduce = sum or mean"):
        _lib.snapshot_op_check(OpSpec.spmm(DType.F32, 4, reduce="max").to_struct(), 2)
    with pytest.raises(GnncError, match="at most 64"):
        _lib.snapshot_op_check(spec.to_struct(), 65)
