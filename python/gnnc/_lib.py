"""ctypes binding of the gnnc C ABI (include/gnnc-c/Gnnc.h).

Every struct, enum and function of the header is mirrored here with its
exact argument and result types. This module needs neither torch nor a GPU:
it loads libgnnc_c.so lazily, on the first call of :func:`lib`.

The library is looked for, in order, at ``$GNNC_LIBRARY`` (a file, or a
folder holding libgnnc_c.so), in this package's folder, then in the build
tree of the repository this package sits in (``<repo>/build/lib``).
"""
from __future__ import annotations

import ctypes
import enum
import os
import sys
import threading
from pathlib import Path
from typing import List, Optional

#: The GNNC_ABI_VERSION this binding was written for.
ABI_VERSION = 2

LIBRARY_NAME = "libgnnc_c.so"


class GnncError(RuntimeError):
    """An error reported by gnnc (the message of gnnc_last_error()), or a
    failure to find or load the library."""


# --- Enums (values as in Gnnc.h) ----------------------------------------


class Status(enum.IntEnum):
    OK = 0
    ERROR = 1


class DType(enum.IntEnum):
    F32 = 0
    F16 = 1
    BF16 = 2


class OpKind(enum.IntEnum):
    SPMM = 0
    SDDMM = 1
    EDGE_SOFTMAX = 2
    EDGE_SOFTMAX_GRAD = 3


class Reduce(enum.IntEnum):
    SUM = 0
    MEAN = 1
    MAX = 2


class Scale(enum.IntEnum):
    NONE = 0
    LEFT = 1
    RIGHT = 2
    BOTH = 3


class SddmmForm(enum.IntEnum):
    DOT = 0
    ADD = 1


class SegmentPass(enum.IntEnum):
    FORWARD = 0
    INPUT_GRAD = 1
    WEIGHT_GRAD = 2


# C enums are ints in the ABI.
_c_enum = ctypes.c_int


# --- Structs -------------------------------------------------------------


class OpDescStruct(ctypes.Structure):
    """gnnc_op_desc."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("kind", _c_enum),
        ("dtype", _c_enum),
        ("width", ctypes.c_int64),
        ("row_stride", ctypes.c_int64),
        ("edge_values", ctypes.c_int32),
        ("reduce", _c_enum),
        ("scale", _c_enum),
        ("has_self_weight", ctypes.c_int32),
        ("self_weight", ctypes.c_double),
        ("has_col_norm_exponent", ctypes.c_int32),
        ("col_norm_exponent", ctypes.c_double),
        ("form", _c_enum),
        ("has_leaky_relu", ctypes.c_int32),
        ("leaky_relu", ctypes.c_double),
        ("attention", ctypes.c_int32),
    ]


class Buffer(ctypes.Structure):
    """gnnc_buffer: a device address and its size in bytes ({0, 0}: absent)."""

    _fields_ = [("address", ctypes.c_uint64), ("bytes", ctypes.c_uint64)]


NULL_BUFFER = Buffer(0, 0)


class SegmentDescStruct(ctypes.Structure):
    """gnnc_segment_desc."""

    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("dtype", ctypes.c_int),
        ("k", ctypes.c_int64),
        ("m", ctypes.c_int64),
        ("pass_", ctypes.c_int),
        ("allow_tf32", ctypes.c_int32),
    ]


class SnapshotGroupSizeStruct(ctypes.Structure):
    """gnnc_snapshot_group_size: one group size measured by
    gnnc_snapshot_group_choose."""

    _fields_ = [
        ("snapshots", ctypes.c_int64),
        ("overlap_rate", ctypes.c_double),
        ("feature_bytes", ctypes.c_int64),
        ("structure_bytes", ctypes.c_int64),
        ("device_bytes", ctypes.c_int64),
        ("groups", ctypes.c_int64),
        ("cached_groups", ctypes.c_int64),
        ("copy_ms", ctypes.c_double),
        ("aggregate_ms", ctypes.c_double),
        ("ms_per_snapshot", ctypes.c_double),
        ("fits", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
    ]


#: GNNC_SNAPSHOT_GROUP_SIZES: the sizes a choice can hold.
SNAPSHOT_GROUP_SIZES = 8


class SnapshotGroupChoiceStruct(ctypes.Structure):
    """gnnc_snapshot_group_choice."""

    _fields_ = [
        ("snapshots", ctypes.c_int64),
        ("groups", ctypes.c_int64),
        ("cached_groups", ctypes.c_int64),
        ("memory_budget", ctypes.c_int64),
        ("host_to_device_gbps", ctypes.c_double),
        ("num_sizes", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
        ("sizes", SnapshotGroupSizeStruct * SNAPSHOT_GROUP_SIZES),
    ]


# Opaque handles.
gnnc_context = ctypes.c_void_p
gnnc_graph = ctypes.c_void_p
gnnc_kernel = ctypes.c_void_p
gnnc_snapshot_group = ctypes.c_void_p
gnnc_segments = ctypes.c_void_p
gnnc_segment_kernel = ctypes.c_void_p

_i64p = ctypes.POINTER(ctypes.c_int64)
_i32p = ctypes.POINTER(ctypes.c_int32)
_f32p = ctypes.POINTER(ctypes.c_float)
_f64p = ctypes.POINTER(ctypes.c_double)
_descp = ctypes.POINTER(OpDescStruct)
_segdescp = ctypes.POINTER(SegmentDescStruct)

#: name -> (restype, argtypes), in the header's order.
SIGNATURES = {
    "gnnc_abi_version": (ctypes.c_int, []),
    "gnnc_last_error": (ctypes.c_char_p, []),
    "gnnc_op_desc_init": (None, [_descp]),
    "gnnc_gpu_available": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_size_t]),
    "gnnc_coo_to_csr": (
        _c_enum,
        [ctypes.c_int64, ctypes.c_int64, _i64p, _i64p, _i64p, _i32p, _i64p],
    ),
    "gnnc_csr_validate": (
        _c_enum,
        [ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
         _i64p, _i32p],
    ),
    "gnnc_op_check": (_c_enum, [_descp, ctypes.c_char_p]),
    "gnnc_context_create": (
        _c_enum,
        [ctypes.c_int, ctypes.c_char_p, ctypes.c_char_p,
         ctypes.POINTER(gnnc_context)],
    ),
    "gnnc_context_set_measure": (_c_enum, [gnnc_context, ctypes.c_int]),
    "gnnc_context_destroy": (None, [gnnc_context]),
    "gnnc_context_device": (
        _c_enum,
        [gnnc_context, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
         ctypes.c_size_t],
    ),
    "gnnc_graph_create": (
        _c_enum,
        [gnnc_context, ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64,
         ctypes.c_int64, _i64p, _i32p, Buffer, Buffer,
         ctypes.POINTER(gnnc_graph)],
    ),
    "gnnc_graph_destroy": (None, [gnnc_graph]),
    "gnnc_kernel_get": (
        _c_enum,
        [gnnc_graph, _descp, ctypes.c_char_p, ctypes.POINTER(gnnc_kernel)],
    ),
    "gnnc_kernel_schedule": (
        _c_enum,
        [gnnc_kernel, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
         ctypes.c_size_t],
    ),
    "gnnc_spmm_feature_grad_op": (_c_enum, [_descp, _descp]),
    "gnnc_graph_spmm_factors": (_c_enum, [gnnc_graph, _descp, _f32p, _f32p]),
    "gnnc_spmm": (
        _c_enum, [gnnc_kernel, Buffer, Buffer, Buffer, ctypes.c_uint64]),
    "gnnc_spmm_attention": (
        _c_enum, [gnnc_kernel, Buffer, Buffer, Buffer, Buffer, ctypes.c_uint64]),
    "gnnc_sddmm": (
        _c_enum, [gnnc_kernel, Buffer, Buffer, Buffer, ctypes.c_uint64]),
    "gnnc_edge_softmax": (_c_enum, [gnnc_kernel, Buffer, Buffer, ctypes.c_uint64]),
    "gnnc_edge_softmax_grad": (
        _c_enum, [gnnc_kernel, Buffer, Buffer, Buffer, ctypes.c_uint64]),
    "gnnc_snapshot_group_create": (
        _c_enum,
        [gnnc_context, ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64,
         ctypes.POINTER(_i64p), ctypes.POINTER(_i32p), _i64p,
         ctypes.POINTER(gnnc_snapshot_group)],
    ),
    "gnnc_snapshot_group_destroy": (None, [gnnc_snapshot_group]),
    "gnnc_snapshot_group_choose": (
        _c_enum,
        [gnnc_context, ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64,
         ctypes.POINTER(_i64p), ctypes.POINTER(_i32p), _i64p, ctypes.c_int64,
         _c_enum, ctypes.c_int64, ctypes.c_int,
         ctypes.POINTER(SnapshotGroupChoiceStruct)],
    ),
    "gnnc_snapshot_group_edges": (
        _c_enum, [gnnc_snapshot_group, _i64p, _i64p, _i64p, _f64p]),
    "gnnc_snapshot_op_check": (_c_enum, [_descp, ctypes.c_int64, ctypes.c_char_p]),
    "gnnc_snapshot_kernel_get": (
        _c_enum,
        [gnnc_snapshot_group, _descp, ctypes.c_char_p, ctypes.c_int,
         ctypes.POINTER(gnnc_kernel)],
    ),
    "gnnc_snapshot_spmm": (_c_enum, [gnnc_kernel, Buffer, Buffer, ctypes.c_uint64]),
    "gnnc_segment_desc_init": (None, [_segdescp]),
    "gnnc_segment_op_check": (
        _c_enum,
        [_segdescp, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p,
         ctypes.c_size_t],
    ),
    "gnnc_segments_create": (
        _c_enum,
        [gnnc_context, ctypes.c_char_p, ctypes.c_int64, ctypes.c_int64, _i64p,
         ctypes.POINTER(gnnc_segments)],
    ),
    "gnnc_segments_destroy": (None, [gnnc_segments]),
    "gnnc_segments_shape": (_c_enum, [gnnc_segments, _i64p, _i64p]),
    "gnnc_segment_kernel_get": (
        _c_enum,
        [gnnc_segments, _segdescp, ctypes.c_char_p,
         ctypes.POINTER(gnnc_segment_kernel)],
    ),
    "gnnc_segment_kernel_schedule": (
        _c_enum,
        [gnnc_segment_kernel, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
         ctypes.c_size_t],
    ),
    "gnnc_segment_matmul": (
        _c_enum, [gnnc_segment_kernel, Buffer, Buffer, Buffer, ctypes.c_uint64]),
    "gnnc_segment_matmul_weight_grad": (
        _c_enum, [gnnc_segment_kernel, Buffer, Buffer, Buffer, ctypes.c_uint64]),
}

#: Functions added within ABI version 1: bound when the library has them
#: (an older build of the same version lacks them), else `require` says so.
OPTIONAL = frozenset((
    "gnnc_snapshot_group_create", "gnnc_snapshot_group_destroy",
    "gnnc_snapshot_group_choose",
    "gnnc_snapshot_group_edges", "gnnc_snapshot_op_check",
    "gnnc_snapshot_kernel_get", "gnnc_snapshot_spmm",
    "gnnc_segment_desc_init", "gnnc_segment_op_check", "gnnc_segments_create",
    "gnnc_segments_destroy", "gnnc_segments_shape", "gnnc_segment_kernel_get",
    "gnnc_segment_kernel_schedule", "gnnc_segment_matmul",
    "gnnc_segment_matmul_weight_grad",
))


# --- Finding and loading the library ----------------------------------------


def candidate_paths() -> List[Path]:
    """The places the library is looked for, in order."""
    paths: List[Path] = []
    env = os.environ.get("GNNC_LIBRARY")
    if env:
        p = Path(env)
        paths.append(p / LIBRARY_NAME if p.is_dir() else p)
    here = Path(__file__).resolve().parent
    paths.append(here / LIBRARY_NAME)
    # <repo>/python/gnnc/_lib.py -> <repo>/build/lib
    paths.append(here.parent.parent / "build" / "lib" / LIBRARY_NAME)
    return paths


_lock = threading.Lock()
_lib: Optional[ctypes.CDLL] = None
_lib_path: Optional[Path] = None


def _bind(cdll: ctypes.CDLL) -> None:
    for name, (restype, argtypes) in SIGNATURES.items():
        try:
            fn = getattr(cdll, name)
        except AttributeError as e:
            if name in OPTIONAL:
                continue
            raise GnncError(
                f"{cdll._name} lacks the C ABI function {name}; it is not a "
                f"gnnc C library of ABI version {ABI_VERSION}") from e
        fn.restype = restype
        fn.argtypes = argtypes


def load(path: Optional[os.PathLike] = None) -> ctypes.CDLL:
    """Loads (once) and returns the gnnc C library. Raises GnncError naming
    every place looked at when none holds it."""
    global _lib, _lib_path
    with _lock:
        if _lib is not None and path is None:
            return _lib
        tried = [Path(path)] if path is not None else candidate_paths()
        errors = []
        for p in tried:
            if not p.is_file():
                errors.append(f"  {p}: not found")
                continue
            try:
                cdll = ctypes.CDLL(str(p))
            except OSError as e:
                errors.append(f"  {p}: cannot be loaded: {e}")
                continue
            _bind(cdll)
            version = cdll.gnnc_abi_version()
            if version != ABI_VERSION:
                raise GnncError(
                    f"{p} implements gnnc C ABI version {version}; this "
                    f"package was written for version {ABI_VERSION}")
            if path is None:
                _lib, _lib_path = cdll, p
            return cdll
        raise GnncError(
            f"cannot find the gnnc C library ({LIBRARY_NAME}); looked at:\n"
            + "\n".join(errors)
            + "\nBuild the target gnnc_c or set GNNC_LIBRARY to its path.")


def lib() -> ctypes.CDLL:
    return _lib if _lib is not None else load()


def library_path() -> Path:
    lib()
    assert _lib_path is not None
    return _lib_path


def available() -> bool:
    """Whether the library can be loaded (never raises)."""
    try:
        lib()
        return True
    except GnncError:
        return False


def has(name: str) -> bool:
    """Whether the loaded library exports the C function `name`."""
    return hasattr(lib(), name)


def require(name: str, what: str) -> None:
    """Raises GnncError, naming `what` needs it, when the library lacks the
    C function `name` (one of OPTIONAL: a build from before it was added)."""
    if not has(name):
        raise GnncError(
            f"{what} needs {name}, which {library_path()} lacks (built before "
            f"it was added); rebuild the target gnnc_c")


def last_error() -> str:
    msg = lib().gnnc_last_error()
    return msg.decode("utf-8", "replace") if msg else ""


def check(status: int, doing: str = "") -> None:
    """Raises GnncError with gnnc_last_error() when `status` is GNNC_ERROR."""
    if status != Status.OK:
        msg = last_error() or "(no message)"
        raise GnncError(f"{doing}: {msg}" if doing else msg)


def _enc(s: Optional[str]) -> Optional[bytes]:
    return None if s is None else s.encode("utf-8")


# --- Thin Python wrappers ---------------------------------------------------


def abi_version() -> int:
    return lib().gnnc_abi_version()


def gpu_available() -> tuple:
    """(available, reason)."""
    buf = ctypes.create_string_buffer(512)
    ok = lib().gnnc_gpu_available(buf, len(buf))
    return bool(ok), buf.value.decode("utf-8", "replace")


def op_desc_init() -> OpDescStruct:
    d = OpDescStruct()
    lib().gnnc_op_desc_init(ctypes.byref(d))
    return d


def op_check(desc: OpDescStruct, schedule: Optional[str] = None) -> None:
    check(lib().gnnc_op_check(ctypes.byref(desc), _enc(schedule)))


def snapshot_op_check(desc: OpDescStruct, num_snapshots: int,
                      schedule: Optional[str] = None) -> None:
    """gnnc_snapshot_op_check: desc (width = features of one snapshot) over
    a group of `num_snapshots` snapshots."""
    require("gnnc_snapshot_op_check", "checking a multi-snapshot spmm")
    check(lib().gnnc_snapshot_op_check(ctypes.byref(desc), int(num_snapshots),
                                       _enc(schedule)))


def spmm_feature_grad_op(fwd: OpDescStruct) -> OpDescStruct:
    out = op_desc_init()
    check(lib().gnnc_spmm_feature_grad_op(ctypes.byref(fwd), ctypes.byref(out)),
          "the feature gradient of spmm")
    return out


def _ptr(array, ctype):
    return array.ctypes.data_as(ctypes.POINTER(ctype))


def coo_to_csr(num_nodes: int, src, dst):
    """CSR of src[i] -> dst[i] with rows = destinations: (row_ptr int64,
    col_idx int32, perm int64) as numpy arrays (see gnnc_coo_to_csr)."""
    import numpy as np

    src = np.ascontiguousarray(src, dtype=np.int64)
    dst = np.ascontiguousarray(dst, dtype=np.int64)
    if src.ndim != 1 or dst.ndim != 1 or src.shape != dst.shape:
        raise ValueError(
            f"coo_to_csr: src and dst must be 1-D of one length, got shapes "
            f"{tuple(src.shape)} and {tuple(dst.shape)}")
    nnz = int(src.shape[0])
    # An impossible num_nodes is left to gnnc to report (before it writes).
    fits = 0 <= int(num_nodes) <= 2**31
    row_ptr = np.empty(int(num_nodes) + 1 if fits else 1, dtype=np.int64)
    col_idx = np.empty(nnz, dtype=np.int32)
    perm = np.empty(nnz, dtype=np.int64)
    check(lib().gnnc_coo_to_csr(int(num_nodes), nnz, _ptr(src, ctypes.c_int64),
                                _ptr(dst, ctypes.c_int64),
                                _ptr(row_ptr, ctypes.c_int64),
                                _ptr(col_idx, ctypes.c_int32),
                                _ptr(perm, ctypes.c_int64)))
    return row_ptr, col_idx, perm


def _snapshot_csrs(what: str, num_nodes: int, row_ptrs, col_idxs):
    """Per-snapshot host CSRs as the C functions take them: the pointer
    arrays (offsets, columns, counts) and the numpy arrays they point into
    (keep them alive for the call)."""
    import numpy as np

    if len(row_ptrs) != len(col_idxs):
        raise ValueError(
            f"{what} needs one row_ptr and one col_idx per snapshot, "
            f"got {len(row_ptrs)} and {len(col_idxs)}")
    rps, cis = [], []
    for s, (rp, ci) in enumerate(zip(row_ptrs, col_idxs)):
        rp = np.ascontiguousarray(rp, dtype=np.int64)
        ci = np.asarray(ci)
        if rp.ndim != 1 or ci.ndim != 1:
            raise ValueError(f"snapshot {s}: row_ptr and col_idx must be 1-D")
        # gnnc reads num_nodes + 1 offsets (an impossible num_nodes is left
        # to it to report, before it reads).
        if 0 <= num_nodes <= 2**31 and rp.shape[0] != num_nodes + 1:
            raise ValueError(
                f"snapshot {s}: row_ptr has {rp.shape[0]} entries, expected "
                f"num_nodes + 1 = {num_nodes + 1}")
        if ci.size and ci.dtype != np.int32 and (
                ci.min() < np.iinfo(np.int32).min or ci.max() > np.iinfo(np.int32).max):
            raise ValueError(f"snapshot {s}: col_idx does not fit 32-bit column indices")
        rps.append(rp)
        cis.append(np.ascontiguousarray(ci, dtype=np.int32))
    n = len(rps)
    row_arg = (_i64p * n)(*[_ptr(r, ctypes.c_int64) for r in rps])
    col_arg = (_i32p * n)(*[_ptr(c, ctypes.c_int32) for c in cis])
    nnz_arg = (ctypes.c_int64 * n)(*[int(c.shape[0]) for c in cis])
    return (row_arg, col_arg, nnz_arg), (rps, cis)


def snapshot_group_create(ctx, name: Optional[str], num_nodes: int, row_ptrs,
                          col_idxs):
    """gnnc_snapshot_group_create on per-snapshot host CSRs (rows =
    destinations; row_ptrs[s]: num_nodes + 1 offsets, col_idxs[s]: the
    sources, sorted and unique within a row; numpy arrays or lists). `ctx`:
    a context handle, or None for a host-only group. Returns the handle
    (free it with gnnc_snapshot_group_destroy); the arrays are copied."""
    require("gnnc_snapshot_group_create", "a snapshot group")
    num_nodes = int(num_nodes)
    (row_arg, col_arg, nnz_arg), _keep = _snapshot_csrs(
        "a snapshot group", num_nodes, row_ptrs, col_idxs)
    handle = gnnc_snapshot_group()
    check(lib().gnnc_snapshot_group_create(ctx, _enc(name), num_nodes,
                                           len(row_ptrs), row_arg, col_arg,
                                           nnz_arg, ctypes.byref(handle)),
          "creating a snapshot group")
    return handle


def snapshot_group_choose(ctx, name: Optional[str], num_nodes: int, row_ptrs,
                          col_idxs, width: int, dtype: DType, memory_budget: int,
                          pipelined: bool) -> dict:
    """gnnc_snapshot_group_choose on a series of per-snapshot host CSRs
    (as snapshot_group_create takes them; any number of snapshots): the
    chosen group size and the sizes tried, as a dict."""
    require("gnnc_snapshot_group_choose", "choosing a snapshot group size")
    num_nodes = int(num_nodes)
    (row_arg, col_arg, nnz_arg), _keep = _snapshot_csrs(
        "a snapshot series", num_nodes, row_ptrs, col_idxs)
    out = SnapshotGroupChoiceStruct()
    check(lib().gnnc_snapshot_group_choose(
        ctx, _enc(name), num_nodes, len(row_ptrs), row_arg, col_arg, nnz_arg,
        int(width), int(dtype), int(memory_budget), 1 if pipelined else 0,
        ctypes.byref(out)), "choosing a snapshot group size")
    sizes = [{f: getattr(out.sizes[i], f) for f, _ in SnapshotGroupSizeStruct._fields_
              if f != "reserved"} for i in range(out.num_sizes)]
    for size in sizes:
        size["fits"] = bool(size["fits"])
    return dict(snapshots=out.snapshots, groups=out.groups,
                cached_groups=out.cached_groups, memory_budget=out.memory_budget,
                host_to_device_gbps=out.host_to_device_gbps, sizes=sizes)


def snapshot_group_edges(handle) -> dict:
    """gnnc_snapshot_group_edges: overlap_edges, stored_edges,
    snapshot_edges and overlap_rate of a snapshot group."""
    overlap, stored, total = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
    rate = ctypes.c_double()
    check(lib().gnnc_snapshot_group_edges(handle, ctypes.byref(overlap),
                                          ctypes.byref(stored), ctypes.byref(total),
                                          ctypes.byref(rate)))
    return dict(overlap_edges=overlap.value, stored_edges=stored.value,
                snapshot_edges=total.value, overlap_rate=rate.value)


def csr_validate(row_ptr, col_idx, num_cols: int, name: Optional[str] = None):
    import numpy as np

    row_ptr = np.ascontiguousarray(row_ptr, dtype=np.int64)
    col_idx = np.ascontiguousarray(col_idx, dtype=np.int32)
    if row_ptr.ndim != 1 or row_ptr.shape[0] < 1:
        raise ValueError("csr_validate: row_ptr must be 1-D with at least one entry")
    check(lib().gnnc_csr_validate(_enc(name), int(row_ptr.shape[0] - 1),
                                  int(num_cols), int(col_idx.shape[0]),
                                  _ptr(row_ptr, ctypes.c_int64),
                                  _ptr(col_idx, ctypes.c_int32)))


# --- Segmented matmul -------------------------------------------------------


def segment_desc(dtype: int, k: int, m: int, pass_: int,
                 allow_tf32: bool = False) -> SegmentDescStruct:
    """gnnc_segment_desc of one segmented matmul (see SegmentPass)."""
    require("gnnc_segment_desc_init", "a segmented matmul")
    d = SegmentDescStruct()
    lib().gnnc_segment_desc_init(ctypes.byref(d))
    d.dtype = int(dtype)
    d.k = int(k)
    d.m = int(m)
    d.pass_ = int(pass_)
    d.allow_tf32 = 1 if allow_tf32 else 0
    return d


def segment_op_check(desc: SegmentDescStruct, schedule: Optional[str] = None,
                     arch: Optional[str] = None) -> str:
    """gnnc_segment_op_check: checks, without a GPU, that gnnc compiles the
    segmented matmul (with NVRTC for `arch` when given) and returns the
    schedule it would run."""
    require("gnnc_segment_op_check", "checking a segmented matmul")
    buf = ctypes.create_string_buffer(1024)
    check(lib().gnnc_segment_op_check(ctypes.byref(desc), _enc(schedule),
                                      _enc(arch), buf, len(buf)),
          "checking a segmented matmul")
    return buf.value.decode()


def segments_create(ctx, name: Optional[str], num_rows: int, offsets):
    """gnnc_segments_create on host offsets (num_types + 1 int64 values;
    numpy array or list). `ctx`: a context handle, or None for a host-only
    layout. Returns the handle (free it with gnnc_segments_destroy); the
    offsets are copied."""
    import numpy as np

    require("gnnc_segments_create", "a segment layout")
    off = np.ascontiguousarray(np.asarray(offsets), dtype=np.int64)
    if off.ndim != 1 or off.shape[0] < 1:
        raise ValueError(
            f"segment offsets must be 1-D with num_types + 1 >= 1 entries, got "
            f"shape {tuple(off.shape)}")
    handle = gnnc_segments()
    check(lib().gnnc_segments_create(ctx, _enc(name), int(num_rows),
                                     int(off.shape[0] - 1),
                                     _ptr(off, ctypes.c_int64),
                                     ctypes.byref(handle)),
          "creating a segment layout")
    return handle
