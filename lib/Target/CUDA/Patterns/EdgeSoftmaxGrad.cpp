//===- EdgeSoftmaxGrad.cpp - gnn.edge_softmax_grad, vertex_parallel -------===//
//
// A row's threads split its edges and make two passes over them: the sum of
// out * grad_out of each head, combined across the row's threads with
// shuffles, then out * (grad_out - sum). Running values are f32 whatever the
// element type.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

#include <string>

using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

class EdgeSoftmaxGradPrinter : public BodyPrinter {
public:
  using BodyPrinter::BodyPrinter;
  void print();

private:
  /// Opens a loop over this lane's edges that loads the edge's heads of the
  /// softmax output into `o` and of its gradient into `d`.
  void openEdgeLoop();
};

void EdgeSoftmaxGradPrinter::openEdgeLoop() {
  int64_t heads = desc.width, vw = plan.vectorWidth;
  openLaneEdgeLoop();
  os << "float o[" << heads << "];\n";
  os << "float d[" << heads << "];\n";
  os << "#pragma unroll\n";
  os << "for (int k = 0; k < " << plan.chunks << "; ++k) {\n";
  os.indent();
  os << load(vw) << "(" << c.input(0) << " + edge * " << heads << " + k * "
     << vw << ", o + k * " << vw << ");\n";
  os << load(vw) << "(" << c.input(1) << " + edge * " << heads << " + k * "
     << vw << ", d + k * " << vw << ");\n";
  closeBlock();
}

void EdgeSoftmaxGradPrinter::print() {
  int64_t heads = desc.width;
  vertexPrologue("gnn.edge_softmax_grad (" + std::to_string(heads) +
                 " heads per edge; a row's threads split its edges)");
  rowRange();
  groupMask();
  // Per head: the sum over the row of out * grad_out, in f32.
  os << "float s[" << heads << "];\n";
  forEachHead("s[h] = 0.0f;");
  os << "// Pass 1: the sum of out * grad_out of each head over the row.\n";
  openEdgeLoop();
  forEachHead("s[h] += o[h] * d[h];");
  closeBlock();
  rowReduce("s", /*max=*/false);
  os << "// Pass 2: write out * (grad_out - sum).\n";
  openEdgeLoop();
  forEachHead("o[h] *= d[h] - s[h];");
  storeEdgeHeads("o");
  closeBlock();
}

class EdgeSoftmaxGradPattern : public EmissionPattern {
  void emitKernel(const OpContext &c) const override {
    EdgeSoftmaxGradPrinter(c).print();
  }
};

} // namespace

const EmissionPattern &gnnc::ExportCUDA::edgeSoftmaxGradPattern() {
  static const EdgeSoftmaxGradPattern pattern;
  return pattern;
}
