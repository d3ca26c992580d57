//===- Readout.cpp - gnn.readout and gnn.readout_grad, batched ------------===//
//
// A block takes its graphs one after the other. gnn.readout: sub-warps of
// `lanes` threads walk the graph's nodes, each lane reducing its vector
// chunks; the sub-warps' partial rows meet in shared memory, where the
// first sub-warp combines them, applies the mean's factor (an empty graph
// gives 0) and writes the graph's row. gnn.readout_grad writes every node's
// row from its graph's output gradient (over the node count, for mean;
// for max only on the first node that attains the maximum of a feature,
// found first in shared memory).
//
//===----------------------------------------------------------------------===//
#include "Patterns.h"

using namespace llvm;
using namespace gnnc;
using namespace gnnc::ExportCUDA;

namespace {

class ReadoutPrinter : public BodyPrinter {
public:
  using BodyPrinter::BodyPrinter;

  void print() {
    const bool grad = desc.kind == OpKind::ReadoutGrad;
    const bool max = desc.reduce == Reduce::Max;
    const int64_t lanes = plan.lanes, vw = plan.vectorWidth;
    const int64_t accs = plan.chunksPerLane * vw, stride = desc.stride();
    const int64_t gpb = c.schedule.graphsPerBlock;
    StringRef graphPtr = c.params.name(ParamRole::GraphOffsets);
    StringRef numGraphs = c.params.name(ParamRole::NumGraphs);
    os << "// " << opKindName(desc.kind) << " (" << reduceName(desc.reduce)
       << "), batched: " << gpb << " graph" << (gpb == 1 ? "" : "s")
       << " per block, " << lanes << " thread" << (lanes == 1 ? "" : "s")
       << " per node, " << plan.rowsPerBlock << " nodes at a time, " << vw
       << " elements per load.\n";
    os << "const int lane = threadIdx.x % " << lanes << ";\n";
    os << "const int sub = threadIdx.x / " << lanes << ";\n";
    os << "const long long first_graph = (long long)blockIdx.x * " << gpb
       << ";\n";
    os << "const long long last_graph = min(first_graph + " << gpb << ", "
       << numGraphs << ");\n";
    if (!grad)
      os << "extern __shared__ float gnnc_readout_parts[];\n";
    else if (max)
      os << "extern __shared__ int gnnc_readout_first[];\n";
    os << "for (long long g = first_graph; g < last_graph; ++g) {\n";
    os.indent();
    os << "const long long n0 = " << graphPtr << "[g];\n";
    os << "const long long n1 = " << graphPtr << "[g + 1];\n";
    if (grad)
      printGrad(max, vw, stride);
    else
      printForward(max, vw, accs, stride);
    closeBlock();
  }

private:
  /// `var[k * vw + i] <op>= f[i]` for the chunk's elements.
  void combine(StringRef var, StringRef from, bool max, int64_t vw) {
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << vw << "; ++i)\n";
    if (max)
      os << "  " << var << "[k * " << vw << " + i] = fmaxf(" << var << "[k * "
         << vw << " + i], " << from << ");\n";
    else
      os << "  " << var << "[k * " << vw << " + i] += " << from << ";\n";
  }

  void printForward(bool max, int64_t vw, int64_t accs, int64_t stride) {
    os << "float acc[" << accs << "];\n";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << accs << "; ++i)\n";
    os << (max ? "  acc[i] = __int_as_float(0xff800000); // -infinity\n"
               : "  acc[i] = 0.0f;\n");
    os << "for (long long n = n0 + sub; n < n1; n += " << plan.rowsPerBlock
       << ") {\n";
    os.indent();
    os << "const " << e.cType << " *src = " << c.input(0) << " + n * " << stride
       << ";\n";
    openChunkLoop();
    os << "float f[" << vw << "];\n";
    os << load(vw) << "(src + chunk * " << vw << ", f);\n";
    combine("acc", "f[i]", max, vw);
    closeBlock(); // chunks
    closeBlock(); // nodes
    os << "// The sub-warps' partial rows meet in shared memory.\n";
    os << "float *slot = gnnc_readout_parts + sub * " << stride << ";\n";
    openChunkLoop();
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << vw << "; ++i)\n";
    os << "  slot[chunk * " << vw << " + i] = acc[k * " << vw << " + i];\n";
    closeBlock();
    os << "__syncthreads();\n";
    os << "if (sub == 0) {\n";
    os.indent();
    os << "for (int s = 1; s < " << plan.rowsPerBlock << "; ++s) {\n";
    os.indent();
    os << "const float *other = gnnc_readout_parts + s * " << stride << ";\n";
    openChunkLoop();
    combine("acc", "other[chunk * " + std::to_string(vw) + " + i]", max, vw);
    closeBlock();
    closeBlock();
    os << "const long long count = n1 - n0;\n";
    if (max) {
      os << "// max: an empty graph gives 0\n";
      os << "if (count == 0)\n";
      os << "  for (int i = 0; i < " << accs << "; ++i)\n";
      os << "    acc[i] = 0.0f;\n";
    } else if (desc.reduce == Reduce::Mean) {
      os << "const float scale = count > 0 ? 1.0f / (float)count : 0.0f;\n";
      os << "#pragma unroll\n";
      os << "for (int i = 0; i < " << accs << "; ++i)\n";
      os << "  acc[i] *= scale;\n";
    }
    os << e.cType << " *dst = " << c.result() << " + g * " << stride << ";\n";
    openChunkLoop();
    os << store(vw) << "(dst + chunk * " << vw << ", acc + k * " << vw
       << ");\n";
    closeBlock();
    closeBlock(); // sub == 0
    os << "__syncthreads(); // the slots are free for the next graph\n";
  }

  void printGrad(bool max, int64_t vw, int64_t stride) {
    StringRef x = c.input(0), y = c.input(1), dy = c.input(2);
    if (max) {
      os << "// The first node of the graph that attains each feature's "
            "maximum.\n";
      os << "for (int i = threadIdx.x; i < " << stride
         << "; i += blockDim.x)\n";
      os << "  gnnc_readout_first[i] = 0x7fffffff;\n";
      os << "__syncthreads();\n";
      os << "for (long long n = n0 + sub; n < n1; n += " << plan.rowsPerBlock
         << ") {\n";
      os.indent();
      openChunkLoop();
      os << "float f[" << vw << "], m[" << vw << "];\n";
      os << load(vw) << "(" << x << " + n * " << stride << " + chunk * " << vw
         << ", f);\n";
      os << load(vw) << "(" << y << " + g * " << stride << " + chunk * " << vw
         << ", m);\n";
      os << "#pragma unroll\n";
      os << "for (int i = 0; i < " << vw << "; ++i)\n";
      os << "  if (f[i] == m[i])\n";
      os << "    atomicMin(gnnc_readout_first + chunk * " << vw
         << " + i, (int)(n - n0));\n";
      closeBlock();
      closeBlock();
      os << "__syncthreads();\n";
    }
    if (desc.reduce == Reduce::Mean)
      os << "const float scale = n1 > n0 ? 1.0f / (float)(n1 - n0) : 0.0f;\n";
    os << "for (long long n = n0 + sub; n < n1; n += " << plan.rowsPerBlock
       << ") {\n";
    os.indent();
    openChunkLoop();
    os << "float f[" << vw << "];\n";
    os << load(vw) << "(" << dy << " + g * " << stride << " + chunk * " << vw
       << ", f);\n";
    if (desc.reduce == Reduce::Mean) {
      os << "#pragma unroll\n";
      os << "for (int i = 0; i < " << vw << "; ++i)\n";
      os << "  f[i] *= scale;\n";
    } else if (max) {
      os << "#pragma unroll\n";
      os << "for (int i = 0; i < " << vw << "; ++i)\n";
      os << "  f[i] = gnnc_readout_first[chunk * " << vw
         << " + i] == (int)(n - n0) ? f[i] : 0.0f;\n";
    }
    os << store(vw) << "(" << c.result() << " + n * " << stride << " + chunk * "
       << vw << ", f);\n";
    closeBlock();
    closeBlock();
    if (max)
      os << "__syncthreads(); // the first nodes are free for the next graph\n";
  }
};

class ReadoutPattern : public EmissionPattern {
  void emitKernel(const OpContext &c) const override {
    ReadoutPrinter(c).print();
  }
};

} // namespace

const EmissionPattern &gnnc::ExportCUDA::readoutPattern() {
  static const ReadoutPattern pattern;
  return pattern;
}
