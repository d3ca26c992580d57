//===- SpmmSliced.cpp - gnn.spmm over a group of snapshots, sliced --------===//
//
// PiPAD's multi-snapshot aggregation: the kernel hands the group (the
// overlap CSR, the exclusive edges, the host's slices) to
// gnnc_snapshot_spmm_sliced (gnnc/cuda/snapshots.cuh) with the plan's
// thread mapping: S snapshots of F features, the vector width, the lanes
// of a slice and their chunks, the slice size, the neighbours in flight,
// the op's row and column scaling, and the fields of the host's slice
// words (gnnc/Plan/Abi.h). Prelude 0 (gnnc_snapshot_spmm_zero_split)
// zeroes the rows whose work items are added atomically.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

using namespace llvm;
using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

inline constexpr const char *kSnapshotsHeader = "gnnc/cuda/snapshots.cuh";

StringRef boolean(bool value) { return value ? "true" : "false"; }

class SpmmSlicedPattern : public EmissionPattern {
  void addHeaders(const OpDesc &op,
                  std::set<std::string> &headers) const override {
    EmissionPattern::addHeaders(op, headers);
    headers.insert(kSnapshotsHeader);
  }

  void emitKernel(const OpContext &c) const override {
    Printer &os = c.os;
    const OpDesc &d = c.desc;
    const ThreadMapping &m = c.plan;
    const KernelParams &params = c.params;
    StringRef colNorm = params.name(ParamRole::ColumnFactors);
    os << "// gnn.spmm over a group of " << d.snapshots << " snapshots of "
       << d.snapshotWidth() << " features, sliced: a worker of " << m.lanes
       << " thread" << (m.lanes == 1 ? "" : "s") << " per slice of at most "
       << m.groupSize << " shared edges, " << m.rowsPerBlock
       << " slices per block, " << m.vectorWidth << " elements per load, "
       << m.edgeUnroll
       << " neighbours in flight; a row's first slice adds the first "
       << m.groupSize
       << " exclusive edges of each snapshot, slices of one snapshot's "
          "exclusive edges the rest.\n";
    os << "gnnc_snapshot_spmm_sliced<" << c.e.cType << ", " << d.snapshots
       << ", " << d.snapshotWidth() << ", " << m.vectorWidth << ", " << m.lanes
       << ", " << m.chunksPerLane << ", " << m.groupSize << ", " << m.edgeUnroll
       << ", " << boolean(d.reduce == Reduce::Mean) << ", "
       << boolean(d.scale == DegreeScale::Left || d.scale == DegreeScale::Both)
       << ", " << boolean(d.scalesColumns()) << ", " << kSliceSnapshotShift
       << ", " << kSliceLengthShift << ", " << kSliceFirst << "ll, "
       << kSliceSplit << "ll>(" << c.graph.rowPtr << ", " << c.graph.colIdx
       << ", " << c.graph.numRows << ", " << c.input(0) << ", " << c.result()
       << ", " << (colNorm.empty() ? StringRef("nullptr") : colNorm) << ", "
       << params.name(ParamRole::ExclusiveOffsets) << ", "
       << params.name(ParamRole::ExclusiveIndices) << ", "
       << params.name(ParamRole::SliceOffsets) << ", "
       << params.name(ParamRole::SliceRows) << ", "
       << params.name(ParamRole::NumSlices) << ");\n";
  }

  unsigned numPreludes() const override { return 1; }
  void emitPrelude(const OpContext &c, unsigned) const override {
    Printer &os = c.os;
    os << "// The rows with several work items start at 0.\n";
    os << "gnnc_snapshot_spmm_zero_split<" << c.e.cType << ", " << c.desc.width
       << ", " << c.plan.lanes << ", " << kSliceFirst << "ll, " << kSliceSplit
       << "ll>(" << c.result() << ", " << c.params.name(ParamRole::SliceRows)
       << ", " << c.params.name(ParamRole::NumSplitRows) << ");\n";
  }
};

} // namespace

const EmissionPattern &gnnc::ExportCUDA::spmmSlicedPattern() {
  static const SpmmSlicedPattern pattern;
  return pattern;
}
