//===- SddmmVertexParallel.cpp - gnn.sddmm, vertex_parallel ---------------===//
//
// `lanes` threads per row keep the row's features in registers and take its
// edges one at a time: the dot form reduces each edge's products across the
// row's threads (lane t keeps the value of edge base + t, so the stores
// coalesce), the add form writes each edge's sum of features.
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

using namespace llvm;
using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

class SddmmVertexPrinter : public BodyPrinter {
public:
  using BodyPrinter::BodyPrinter;
  void print();

private:
  void printDot(int64_t vw, int64_t lanes);
  void printAdd(int64_t vw);
};

void SddmmVertexPrinter::print() {
  int64_t vw = plan.vectorWidth;
  int64_t regs = plan.chunksPerLane * vw;
  bool dot = desc.form == SddmmForm::Dot;
  vertexPrologue(dot ? "gnn.sddmm (dot)" : "gnn.sddmm (add)");
  // The row's features stay in registers for all its edges.
  os << "float ra[" << regs << "];\n";
  os << "#pragma unroll\n";
  os << "for (int i = 0; i < " << regs << "; ++i)\n";
  os << "  ra[i] = 0.0f;\n";
  openChunkLoop();
  os << load(vw) << "(" << c.input(0) << " + row * " << desc.width
     << " + chunk * " << vw << ", ra + k * " << vw << ");\n";
  closeBlock();
  neighbourLoopHead();
  os << "const " << e.cType << " *src = " << c.input(1) << " + col * "
     << desc.width << ";\n";
  if (dot)
    printDot(vw, plan.lanes);
  else
    printAdd(vw);
}

void SddmmVertexPrinter::printDot(int64_t vw, int64_t lanes) {
  StringRef y = c.result();
  // Lane t keeps the value of edge base + t; the stores coalesce.
  os << "float partial = 0.0f;\n";
  openChunkLoop();
  os << "float f[" << vw << "];\n";
  os << load(vw) << "(src + chunk * " << vw << ", f);\n";
  os << "#pragma unroll\n";
  os << "for (int j = 0; j < " << vw << "; ++j)\n";
  os << "  partial += ra[k * " << vw << " + j] * f[j];\n";
  closeBlock();
  if (lanes > 1) {
    os << "#pragma unroll\n";
    os << "for (int offset = " << lanes / 2 << "; offset > 0; offset /= 2)\n";
    os << "  partial += __shfl_xor_sync(group_mask, partial, offset, " << lanes
       << ");\n";
  }
  leakyRelu("partial");
  os << "if (lane == t)\n";
  os << "  my_out = partial;\n";
  closeBlock(); // neighbours
  os << "if (lane < n)\n";
  if (e.fromFloat.empty())
    os << "  " << y << "[base + lane] = my_out;\n";
  else
    os << "  " << y << "[base + lane] = " << e.fromFloat << "(my_out);\n";
  closeBlock(); // index batches
}

void SddmmVertexPrinter::printAdd(int64_t vw) {
  os << e.cType << " *dst = " << c.result() << " + (base + t) * " << desc.width
     << ";\n";
  openChunkLoop();
  os << "float f[" << vw << "];\n";
  os << load(vw) << "(src + chunk * " << vw << ", f);\n";
  os << "#pragma unroll\n";
  os << "for (int j = 0; j < " << vw << "; ++j) {\n";
  os.indent();
  os << "f[j] += ra[k * " << vw << " + j];\n";
  leakyRelu("f[j]");
  closeBlock();
  os << store(vw) << "(dst + chunk * " << vw << ", f);\n";
  closeBlock(); // chunks
  closeBlock(); // neighbours
  closeBlock(); // index batches
}

class SddmmVertexParallelPattern : public EmissionPattern {
  void emitKernel(const OpContext &c) const override {
    SddmmVertexPrinter(c).print();
  }
};

} // namespace

const EmissionPattern &gnnc::ExportCUDA::sddmmVertexParallelPattern() {
  static const SddmmVertexParallelPattern pattern;
  return pattern;
}
