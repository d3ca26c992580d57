//===- EmitterSupport.cpp - What the CUDA emission patterns share ---------===//

#include "EmitterSupport.h"

#include <cstdio>

using namespace llvm;
using namespace gnnc;
using namespace gnnc::ExportCUDA;

//===----------------------------------------------------------------------===//
// Spellings
//===----------------------------------------------------------------------===//

const ElementSpelling &gnnc::ExportCUDA::spellElement(ElementType type) {
  static const ElementSpelling f32{elementCudaType(ElementType::F32),
                                   elementTypeName(ElementType::F32), "", ""};
  static const ElementSpelling f16{elementCudaType(ElementType::F16),
                                   elementTypeName(ElementType::F16),
                                   "__half2float", "__float2half_rn"};
  static const ElementSpelling bf16{elementCudaType(ElementType::BF16),
                                    elementTypeName(ElementType::BF16),
                                    "__bfloat162float", "__float2bfloat16_rn"};
  switch (type) {
  case ElementType::F32:
    return f32;
  case ElementType::F16:
    return f16;
  case ElementType::BF16:
    return bf16;
  }
  llvm_unreachable("an element type without a CUDA spelling");
}

std::string gnnc::ExportCUDA::elementHeader(ElementType type) {
  return ("gnnc/cuda/" + spellElement(type).tag + ".cuh").str();
}

StringRef gnnc::ExportCUDA::spellIndex(bool is64) {
  return is64 ? "long long" : "int";
}

StringRef gnnc::ExportCUDA::rawVectorType(int64_t bytes) {
  switch (bytes) {
  case 2:
    return "unsigned short";
  case 4:
    return "unsigned int";
  case 8:
    return "uint2";
  default:
    return "uint4";
  }
}

raw_ostream &gnnc::ExportCUDA::operator<<(raw_ostream &os,
                                          const VectorHelper &h) {
  return os << "gnnc_" << h.verb << "_" << h.tag << "x" << h.vw;
}

raw_ostream &gnnc::ExportCUDA::operator<<(raw_ostream &os,
                                          FloatLiteral literal) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", literal.value);
  os << text;
  if (!StringRef(text).contains('.') && !StringRef(text).contains('e'))
    os << ".0";
  return os << "f";
}

//===----------------------------------------------------------------------===//
// The op and its kernel
//===----------------------------------------------------------------------===//

StringRef KernelParams::name(ParamRole role, int32_t operand) const {
  for (const Param &param : params)
    if (param.role == role &&
        (role != ParamRole::Input || param.operand == operand))
      return param.name;
  return "";
}

OpContext::OpContext(Printer &os, mlir::Operation *op, const OpDesc &desc,
                     const ThreadMapping &plan, const Schedule &schedule,
                     KernelParams params)
    : os(os), op(op), desc(desc), plan(plan), schedule(schedule),
      params(std::move(params)), e(spellElement(desc.type)) {
  graph = {this->params.name(ParamRole::RowOffsets).str(),
           this->params.name(ParamRole::ColumnIndices).str(),
           this->params.name(ParamRole::NumRows).str()};
}

//===----------------------------------------------------------------------===//
// Printing pieces
//===----------------------------------------------------------------------===//

BodyPrinter::BodyPrinter(const OpContext &c)
    : c(c), os(c.os), desc(c.desc), plan(c.plan), graph(c.graph), e(c.e),
      chunkCount(std::to_string(c.plan.chunks)) {}

void BodyPrinter::closeBlock() {
  os.unindent();
  os << "}\n";
}

void BodyPrinter::vertexPrologue(StringRef what) {
  int64_t lanes = plan.lanes;
  os << "// " << what << ", vertex_parallel: " << lanes << " thread"
     << (lanes == 1 ? "" : "s") << " per row, " << plan.rowsPerBlock
     << " rows per block, " << plan.vectorWidth << " elements per load\n";
  os << "const long long row = (long long)blockIdx.x * " << plan.rowsPerBlock
     << " + threadIdx.x / " << lanes << ";\n";
  os << "const int lane = threadIdx.x % " << lanes << ";\n";
  os << "if (row >= " << graph.numRows << ")\n";
  os << "  return;\n";
}

void BodyPrinter::rowRange() {
  os << "const long long begin = " << graph.rowPtr << "[row];\n";
  os << "const long long end = " << graph.rowPtr << "[row + 1];\n";
}

void BodyPrinter::groupMask() {
  int64_t lanes = plan.lanes;
  if (lanes == 32)
    os << "const unsigned group_mask = 0xffffffffu;\n";
  else
    os << "const unsigned group_mask = " << ((1ull << lanes) - 1)
       << "u << (threadIdx.x % 32 / " << lanes << " * " << lanes << ");\n";
}

void BodyPrinter::openChunkLoop() {
  os << "#pragma unroll\n";
  os << "for (int k = 0; k < " << plan.chunksPerLane << "; ++k) {\n";
  os.indent();
  printChunk();
  if (plan.raggedChunks()) {
    os << "if (chunk >= " << chunkBound() << ")\n";
    os << "  break;\n";
  }
}

void BodyPrinter::printChunk() {
  os << "const int chunk = " << (plan.columnChunks ? "chunk0 + " : "")
     << "lane + k * " << plan.lanes << ";\n";
}

StringRef BodyPrinter::chunkBound() const {
  if (plan.columnChunks)
    return "chunk_end";
  return chunkCount;
}

void BodyPrinter::neighbourWindowHead(bool ownRange) {
  int64_t lanes = plan.lanes;
  if (!ownRange)
    rowRange();
  groupMask();
  os << "for (long long base = begin; base < end; base += " << lanes << ") {\n";
  os.indent();
  os << "const int n = (int)min((long long)" << lanes << ", end - base);\n";
  os << c.indexType() << " my_col = 0;\n";
  os << "if (lane < n) {\n";
  os.indent();
  os << "my_col = " << graph.colIdx << "[base + lane];\n";
  closeBlock();
  os << "float my_out = 0.0f;\n";
}

void BodyPrinter::neighbourLoopHead(bool ownRange) {
  int64_t lanes = plan.lanes;
  neighbourWindowHead(ownRange);
  os << "#pragma unroll " << plan.edgeUnroll << "\n";
  os << "for (int t = 0; t < n; ++t) {\n";
  os.indent();
  os << "const long long col = __shfl_sync(group_mask, my_col, t, " << lanes
     << ");\n";
}

void BodyPrinter::edgeWorkerPrologue(int64_t items, StringRef comment,
                                     bool search,
                                     function_ref<void()> beforeActive) {
  int64_t lanes = plan.lanes;
  os << "// " << comment << "\n";
  os << "const long long worker = (long long)blockIdx.x * " << plan.rowsPerBlock
     << " + threadIdx.x / " << lanes << ";\n";
  os << "const int lane = threadIdx.x % " << lanes << ";\n";
  os << "const long long total = " << graph.numRows << " + "
     << c.params.name(ParamRole::NumEdges) << ";\n";
  os << "const long long workers = total > 0 ? (total + " << items - 1 << ") / "
     << items << " : 1;\n";
  if (!beforeActive) {
    os << "if (worker >= workers)\n";
    os << "  return;\n";
  } else {
    beforeActive();
    os << "if (worker < workers) {\n";
    os.indent();
  }
  if (!search)
    return;
  os << "// This worker's stretch [d0, d1) of the merge path: rows i0..i1,\n";
  os << "// edges [j0, j1).\n";
  os << "const long long d0 = worker * " << items << ";\n";
  os << "const long long d1 = min(d0 + " << items << ", total);\n";
  groupMask();
  os << "long long i0, i1;\n";
  os << "gnnc_merge_rows<" << lanes << ">(" << graph.rowPtr << ", "
     << graph.numRows << ", d0, d1, group_mask, lane, i0, i1);\n";
}

void BodyPrinter::rowReduce(StringRef var, bool max) {
  int64_t lanes = plan.lanes;
  if (lanes == 1)
    return;
  os << "#pragma unroll\n";
  os << "for (int offset = " << lanes / 2 << "; offset > 0; offset /= 2) {\n";
  os.indent();
  os << "#pragma unroll\n";
  os << "for (int h = 0; h < " << desc.width << "; ++h)\n";
  auto other = [&] {
    os << "__shfl_xor_sync(group_mask, " << var << "[h], offset, " << lanes
       << ")";
  };
  if (max) {
    os << "  " << var << "[h] = fmaxf(" << var << "[h], ";
    other();
    os << ");\n";
  } else {
    os << "  " << var << "[h] += ";
    other();
    os << ";\n";
  }
  closeBlock();
}

void BodyPrinter::openLaneEdgeLoop() {
  os << "for (long long edge = begin + lane; edge < end; edge += " << plan.lanes
     << ") {\n";
  os.indent();
}

void BodyPrinter::forEachHead(StringRef statement) {
  os << "#pragma unroll\n";
  os << "for (int h = 0; h < " << desc.width << "; ++h)\n";
  os << "  " << statement << "\n";
}

void BodyPrinter::storeEdgeHeads(StringRef from) {
  int64_t heads = desc.width, vw = plan.vectorWidth;
  os << "#pragma unroll\n";
  os << "for (int k = 0; k < " << plan.chunks << "; ++k)\n";
  os << "  " << store(vw) << "(" << c.result() << " + edge * " << heads
     << " + k * " << vw << ", " << from << " + k * " << vw << ");\n";
}

void BodyPrinter::leakyRelu(StringRef v) {
  if (!desc.leakyRelu)
    return;
  os << v << " = " << v << " > 0.0f ? " << v << " : " << v << " * "
     << FloatLiteral{*desc.leakyRelu} << ";\n";
}
