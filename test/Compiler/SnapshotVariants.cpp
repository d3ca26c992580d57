//===- SnapshotVariants.cpp - gnn.spmm over snapshot groups for tests -----===//
#include "SnapshotVariants.h"

#include <sstream>

using namespace gnnc::test;

std::vector<SnapshotVariant> gnnc::test::snapshotVariants() {
  return {
      {"f32", 4, 32, "sum", "none", 0},    {"f32", 4, 32, "sum", "both", 0},
      {"f32", 2, 3, "mean", "none", 4},    {"f32", 8, 8, "sum", "left", 0},
      {"f32", 3, 64, "mean", "right", 16}, {"f32", 1, 1, "sum", "both", 2},
      {"f32", 2, 256, "sum", "both", 0},   {"f32", 8, 1, "mean", "both", 0},
      {"f16", 4, 32, "sum", "both", 0},    {"f16", 8, 6, "mean", "none", 8},
      {"f16", 2, 64, "sum", "left", 0},    {"bf16", 4, 16, "sum", "both", 0},
      {"bf16", 3, 5, "mean", "right", 4},
  };
}

std::string
gnnc::test::snapshotModuleText(const std::vector<SnapshotVariant> &variants) {
  std::ostringstream os;
  os << "gnn.module @snapshots {\n";
  int i = 0;
  for (const SnapshotVariant &v : variants) {
    std::string t = "tensor<?x" + std::to_string(v.snapshots) + "x" +
                    std::to_string(v.width) + "x" + v.type + ">";
    os << "gnn.kernel @k" << i++
       << "(%g: !gnn.graph<snapshot_csr, i64, i32>, %x: " << t << ") -> " << t
       << " {\n  %y = gnn.spmm %g, %x {reduce = #gnn<reduce " << v.reduce
       << ">, scale = #gnn<scale " << v.scale
       << ">, schedule = #gnn.schedule<strategy = sliced";
    if (v.sliceSize)
      os << ", slice_size = " << v.sliceSize;
    os << ">} : !gnn.graph<snapshot_csr, i64, i32>, " << t << " -> " << t
       << "\n  gnn.return %y : " << t << "\n}\n";
  }
  os << "}\n";
  return os.str();
}
