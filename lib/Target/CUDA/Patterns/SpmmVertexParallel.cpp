//===- SpmmVertexParallel.cpp - gnn.spmm, vertex_parallel -----------------===//
//
// `lanes` threads per row split its features into vector chunks and take
// its neighbours in batches; each row is written once.
//
//===----------------------------------------------------------------------===//
#include "../SpmmSupport.h"
#include "Patterns.h"

using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

class SpmmVertexPrinter : public SpmmPrinter {
public:
  using SpmmPrinter::SpmmPrinter;

  void print() {
    vertexPrologue("gnn.spmm");
    rowRange();
    if (p.scalesBatches()) {
      os << "const long long batch_deg = end - begin;\n";
      os << "const float batch_scale = " << RowFactor{desc, "batch_deg"}
         << ";\n";
    }
    accumulate();
    finish(RowDegree::Range);
  }
};

class SpmmVertexParallelPattern : public EmissionPattern {
  void emitKernel(const OpContext &c) const override {
    SpmmVertexPrinter(c).print();
  }
};

} // namespace

const EmissionPattern &gnnc::ExportCUDA::spmmVertexParallelPattern() {
  static const SpmmVertexParallelPattern pattern;
  return pattern;
}
