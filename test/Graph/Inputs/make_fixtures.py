#!/usr/bin/env python3
"""Writes the small .npz fixtures used by gnnc-graph-tests.

Run from this directory with numpy installed:  python3 make_fixtures.py
The outputs are committed; the tests do not need Python.
"""
import numpy as np

# A 5-node directed graph: 0->1, 0->2, 1->2, 3->0, 3->4, 4->4; node 2 has no
# out-edges.
indptr = np.array([0, 2, 3, 3, 5, 6], dtype=np.int64)
indices = np.array([1, 2, 2, 0, 4, 4], dtype=np.int32)
data = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], dtype=np.float32)
num_nodes = np.int64(5)

np.savez_compressed("small_csr.npz", indptr=indptr, indices=indices,
                    num_nodes=num_nodes, data=data)
np.savez("small_csr_stored.npz", indptr=indptr, indices=indices,
         num_nodes=num_nodes)
# Heterogeneous-style prefixed relation without num_nodes (3 x 4).
np.savez_compressed("prefixed.npz",
                    **{"a__r__b__indptr": np.array([0, 1, 1, 3], np.int64),
                       "a__r__b__indices": np.array([3, 0, 2], np.int32)})

np.savez_compressed(
    "dtypes.npz",
    i1=np.array([-1, 2, -128], np.int8),
    u1=np.array([0, 255], np.uint8),
    i2=np.array([-300, 300], np.int16),
    u2=np.array([65535, 1], np.uint16),
    i4=np.array([-2147483648, 7], np.int32),
    u4=np.array([4294967295], np.uint32),
    i8=np.array([-(2 ** 62), 5], np.int64),
    u8=np.array([2 ** 63 + 1], np.uint64),
    f2=np.array([1.5, -0.25], np.float16),
    f4=np.array([0.1, 2.5], np.float32),
    f8=np.array([0.1, -1e300], np.float64),
    b1=np.array([True, False, True]),
    scalar=np.int64(42),
    matrix=np.arange(6, dtype=np.int32).reshape(2, 3),
    empty=np.zeros((0,), np.int64),
)

np.savez_compressed("bad_bigendian.npz",
                    indptr=np.array([0, 1], dtype=">i8"),
                    indices=np.array([0], dtype=">i4"))
np.savez_compressed("bad_fortran.npz",
                    matrix=np.asfortranarray(np.arange(6, dtype=np.int32)
                                             .reshape(2, 3)))
np.savez("bad_object.npz", obj=np.array([{"a": 1}, None], dtype=object))
np.savez_compressed("bad_strings.npz", names=np.array(["paper", "author"]))

np.savez_compressed("bad_indptr_nonmonotone.npz",
                    indptr=np.array([0, 2, 1, 3], np.int64),
                    indices=np.array([0, 1, 2], np.int32),
                    num_nodes=np.int64(3))
np.savez_compressed("bad_indices_range.npz",
                    indptr=np.array([0, 1, 2, 3], np.int64),
                    indices=np.array([0, 1, 9000], np.int32),
                    num_nodes=np.int64(3))
np.savez_compressed("bad_missing_indices.npz",
                    indptr=np.array([0, 1], np.int64),
                    num_nodes=np.int64(1))
np.savez_compressed("bad_num_nodes.npz",
                    indptr=np.array([0, 1, 2], np.int64),
                    indices=np.array([0, 1], np.int32),
                    num_nodes=np.int64(7))
np.savez_compressed("bad_last_offset.npz",
                    indptr=np.array([0, 1, 5], np.int64),
                    indices=np.array([0, 1], np.int32),
                    num_nodes=np.int64(2))
np.savez_compressed("bad_float_indices.npz",
                    indptr=np.array([0, 1], np.int64),
                    indices=np.array([0.0], np.float32),
                    num_nodes=np.int64(1))
