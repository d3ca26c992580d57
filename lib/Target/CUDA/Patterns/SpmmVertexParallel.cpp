//===- SpmmVertexParallel.cpp - gnn.spmm, vertex_parallel -----------------===//
//
// `lanes` threads per row split its features into vector chunks and take
// its neighbours in batches; each row is written once. With attention the
// row's threads first pass over its edges for the softmax's maximum and
// sum; each neighbour's weight is then computed where an edge value would
// be loaded.
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
    if (desc.attention)
      attentionStatistics();
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
  void addHeaders(const OpDesc &op,
                  std::set<std::string> &headers) const override {
    EmissionPattern::addHeaders(op, headers);
    if (op.attention)
      headers.insert(kAttentionHeader);
  }
  void emitKernel(const OpContext &c) const override {
    SpmmVertexPrinter(c).print();
  }
};

} // namespace

const EmissionPattern &gnnc::ExportCUDA::spmmVertexParallelPattern() {
  static const SpmmVertexParallelPattern pattern;
  return pattern;
}
