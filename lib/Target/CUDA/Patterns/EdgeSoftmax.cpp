//===- EdgeSoftmax.cpp - gnn.edge_softmax, vertex_parallel ----------------===//
//
// A row's threads split its edges and make three passes over them: the
// maximum of each head, the sum of exp(x - max), and the output; the
// threads of the row combine their maxima and sums with shuffles. Running
// values are f32 whatever the element type.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include <string>

using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

class EdgeSoftmaxPrinter : public BodyPrinter {
public:
  using BodyPrinter::BodyPrinter;
  void print();

private:
  /// Opens a loop over this lane's edges that loads the edge's heads into
  /// `v`.
  void openEdgeLoop();
};

void EdgeSoftmaxPrinter::openEdgeLoop() {
  int64_t heads = desc.width, vw = plan.vectorWidth;
  openLaneEdgeLoop();
  os << "float v[" << heads << "];\n";
  os << "#pragma unroll\n";
  os << "for (int k = 0; k < " << plan.chunks << "; ++k)\n";
  os << "  " << load(vw) << "(" << c.input(0) << " + edge * " << heads
     << " + k * " << vw << ", v + k * " << vw << ");\n";
}

void EdgeSoftmaxPrinter::print() {
  int64_t heads = desc.width;
  vertexPrologue("gnn.edge_softmax (" + std::to_string(heads) +
                 " heads per edge; a row's threads split its edges)");
  rowRange();
  groupMask();
  // Per head: the running maximum and sum of exponentials, in f32.
  os << "float m[" << heads << "];\n";
  os << "float s[" << heads << "];\n";
  os << "#pragma unroll\n";
  os << "for (int h = 0; h < " << heads << "; ++h) {\n";
  os << "  m[h] = __int_as_float(0xff800000); // -infinity\n";
  os << "  s[h] = 0.0f;\n";
  os << "}\n";
  os << "// Pass 1: the maximum of each head over the row's edges.\n";
  openEdgeLoop();
  forEachHead("m[h] = fmaxf(m[h], v[h]);");
  closeBlock();
  rowReduce("m", /*max=*/true);
  os << "// Pass 2: the sum of exp(x - max) <= 1 per edge.\n";
  openEdgeLoop();
  forEachHead("s[h] += expf(v[h] - m[h]);");
  closeBlock();
  rowReduce("s", /*max=*/false);
  os << "// Pass 3: write exp(x - max) / sum.\n";
  forEachHead("s[h] = 1.0f / s[h];");
  openEdgeLoop();
  forEachHead("v[h] = expf(v[h] - m[h]) * s[h];");
  storeEdgeHeads("v");
  closeBlock();
}

class EdgeSoftmaxPattern : public EmissionPattern {
  void emitKernel(const OpContext &c) const override {
    EdgeSoftmaxPrinter(c).print();
  }
};

} // namespace

const EmissionPattern &gnnc::ExportCUDA::edgeSoftmaxPattern() {
  static const EdgeSoftmaxPattern pattern;
  return pattern;
}
