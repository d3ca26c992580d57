#!/usr/bin/env python3
"""write-npz.py KIND OUT: a small CSR .npz (2 nodes, 2 edges) with one fault
the fuzz campaign found, written without numpy:
  good         no fault
  duplicate    a second indices.npy member, with an index out of range
  version-1.1  indptr.npy in .npy format version 1.1
  unknown-key  indptr.npy's header has a key 'extra'
"""
import io
import struct
import sys
import warnings
import zipfile


def npy(values, version=(1, 0), extra=""):
    header = "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), %s}" % (
        len(values), extra)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    return (b"\x93NUMPY" + bytes(version) + struct.pack("<H", len(header)) +
            header.encode() + struct.pack("<%dq" % len(values), *values))


kind, out = sys.argv[1], sys.argv[2]
indptr = npy([0, 1, 2], version=(1, 1) if kind == "version-1.1" else (1, 0),
             extra="'extra': True, " if kind == "unknown-key" else "")
members = [("indptr.npy", indptr), ("indices.npy", npy([1, 0]))]
if kind == "duplicate":
    members.append(("indices.npy", npy([1, 7])))
buffer = io.BytesIO()
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # zipfile warns of the duplicate name
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, data in members:
            archive.writestr(name, data)
open(out, "wb").write(buffer.getvalue())
