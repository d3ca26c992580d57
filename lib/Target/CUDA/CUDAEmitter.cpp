//===- CUDAEmitter.cpp - Print lowered gnn IR as CUDA C++ -----------------===//
//
// One emission routine per op, an indenting printer, and a diagnostic for
// anything without a routine. Everything printed comes from the IR: types,
// the `gnn.plan`, `gnn.launch` and `gnn.params` attributes written by
// gnn-lower-to-kernels.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Target/CUDA/CUDAEmitter.h"
#include "gnnc/Transforms/Passes.h"

#include "gnnc/Dialect/Gnn/GnnOps.h"
#include "mlir/Support/IndentedOstream.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/StringSet.h"

#include <cstdio>
#include <set>

using namespace mlir;
using namespace gnnc;
using namespace gnnc::gnn;

namespace {

/// CUDA spelling of an element type, and the tag used in helper names.
struct ElementSpelling {
  StringRef cType;   // __half
  StringRef tag;     // f16
  StringRef toFloat; // __half2float
};

FailureOr<ElementSpelling> spellElement(Type type, Operation *op) {
  if (type.isF32())
    return ElementSpelling{"float", "f32", ""};
  if (type.isF16())
    return ElementSpelling{"__half", "f16", "__half2float"};
  if (type.isBF16())
    return ElementSpelling{"__nv_bfloat16", "bf16", "__bfloat162float"};
  return op->emitError() << "no CUDA spelling for element type " << type;
}

StringRef spellIndex(IntegerType type) {
  return type.getWidth() == 32 ? "int" : "long long";
}

/// The unsigned vector type that moves `bytes` bytes in one load.
StringRef rawVectorType(int64_t bytes) {
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

class CUDAEmitter {
public:
  CUDAEmitter(raw_ostream &os) : os(os) {}

  LogicalResult emitModule(ModuleOp module, std::vector<rt::KernelSpec> *specs);

private:
  LogicalResult collectHelpers(Operation *op, Type elementType);
  void emitLoadHelper(const ElementSpelling &e, int64_t vw);
  /// Prints `gnnc_unpack_<tag>x<vw>`: the 16-bit elements of one raw vector
  /// word as floats (f16 and bf16, vw >= 2).
  void emitUnpackHelper(const ElementSpelling &e, int64_t vw);
  void emitStoreHelper(const ElementSpelling &e, int64_t vw);
  /// Prints `gnnc_atomic_add_<tag>x<vw>`: adds `vw` floats to the elements
  /// at `p` with atomicAdd (in pairs for 16-bit types, vw >= 2).
  void emitAtomicAddHelper(const ElementSpelling &e, int64_t vw);
  LogicalResult emitKernel(GnnModuleOp module, KernelOp kernel,
                           std::vector<rt::KernelSpec> *specs);
  /// What the printers of one gnn.spmm share.
  struct SpmmParts {
    VertexPlanAttr plan;
    std::string prefix;
    StringRef x, y, colNorm, values, workspace, numEdges;
    /// neighbor_group: the host's groups.
    StringRef groupPtr, groupRows, numGroups;
    ElementSpelling e;
    StringRef indexType;
    int64_t width = 0, vw = 0, accs = 0;
    /// Elements from one row of x (and y) to the next: the width, or the
    /// stride of padded rows. Workspace slot rows have this size too.
    int64_t stride = 0;
    /// Elements of the last chunk of a row that are stored (the rest is
    /// padding); 0 when the width is a multiple of the vector width.
    int64_t tail() const { return width % vw; }
    bool max = false;
    /// accumulate = f16: terms are added in half2 pairs into `part`.
    bool half = false;
    /// disc_batch: `part` is folded into `acc` after this many neighbours.
    int64_t disc = 0;
    /// Whether the row has a factor of its degree (mean, left scaling).
    bool rowFactor = false;
    /// Terms go to `part` rather than straight to `acc`.
    bool usesPart() const { return half || disc > 0; }
    /// The row factor multiplies each batch, not the finished row.
    bool scalesBatches() const { return disc > 0 && rowFactor; }
    /// Loaded feature vectors stay raw 16-bit words until they are added.
    bool packed = false;
    /// write = atomic: pieces of split rows are added to `y` atomically.
    bool atomic = false;
    /// write = shared: pieces of rows split inside a block meet in shared
    /// memory.
    bool sharedMerge = false;
    /// Number of half2 pairs in `part` (f16 accumulation).
    int64_t pairs() const { return (accs + 1) / 2; }
  };
  SpmmParts spmmParts(SpmmOp op);
  /// What every printer of a gnn op starts from: its plan, the prefix of
  /// its graph's parameters, the name of the kernel's result parameter and
  /// the spelling of its element type.
  struct OpNames {
    VertexPlanAttr plan;
    KernelOp kernel;
    std::string prefix;
    StringRef y;
    ElementSpelling e;
  };
  OpNames opNames(Operation *op, Value graph, Type elementType);
  LogicalResult emitSpmm(SpmmOp op);
  /// Prints `acc`, the reduction of the neighbours in [begin, end).
  void emitSpmmAccumulate(const SpmmParts &p);
  /// Prints `acc[i] = <identity>` for every accumulator.
  void emitAccReset(const SpmmParts &p);
  /// Declares the batch partial sums `part` (and the batch counter), when
  /// the op uses them.
  void emitPartDecl(const SpmmParts &p);
  /// Prints the addition of neighbour `u`'s term `f[u]` to `part`, and the
  /// fold of a full batch.
  /// `packed`: the batch `f` holds raw 16-bit vector words (floats in `h`
  /// unless `part` is half2).
  void emitPartAdd(const SpmmParts &p, StringRef batchScale, bool packed);
  /// Prints the fold of `part` into `acc`, times `batchScale` (none when
  /// empty), and the restart of `part`.
  void emitFold(const SpmmParts &p, StringRef batchScale);
  /// Prints the loop over the neighbours in [begin, end) that adds each
  /// into `acc`; `afterAdd` (if any) is printed after each addition, with
  /// `e` the neighbour's position from `begin`. With `rowEnd` (the end of
  /// the current row, from `begin`), a batch that lies wholly inside the
  /// current row and does not reach its end skips `afterAdd` and the
  /// per-neighbour tests.
  void emitSpmmGather(const SpmmParts &p, StringRef afterAdd = "",
                      StringRef batchScale = "", StringRef rowEnd = "");
  /// Prints the end of a row: the empty-row rule of max, mean and left
  /// scaling with `deg` neighbours, and the store of `acc` to row `row`.
  void emitSpmmFinish(SpmmOp op, const SpmmParts &p, StringRef deg);
  /// Prints the opening of an edge-parallel kernel: `worker`, `lane`,
  /// `workers`, the return of idle workers, and the worker's stretch of the
  /// merge path: `d0`, `d1`, `i0`, `i1`.
  /// Prints the worker's index and, with `search`, its stretch [d0, d1) of
  /// the merge path and the rows i0..i1 it touches.
  /// With `beforeActive` (not empty), idle workers stay: it is printed
  /// after `workers`, and the rest runs inside `if (worker < workers) {`,
  /// which the caller closes.
  void emitEdgeWorkerPrologue(VertexPlanAttr plan, StringRef prefix,
                              StringRef numEdges, int64_t itemsPerWorker,
                              StringRef comment, bool search = true,
                              StringRef beforeActive = "");
  /// gnn.sddmm, edge_parallel: workers walk equal stretches of the merge
  /// path; `numEdges` is the kernel parameter holding the edge count.
  void emitSddmmEdgeParallel(SddmmOp op, StringRef numEdges);
  void emitEdgeWorkerPrologue(const SpmmParts &p, int64_t itemsPerWorker,
                              StringRef comment, StringRef beforeActive = "");
  void emitSpmmEdgeParallel(SpmmOp op);
  void emitSpmmEdgeFixup(SpmmOp op);
  /// write = shared: what an edge-parallel gnn.spmm declares before its
  /// active workers (the block's slots, the row to merge, helpers).
  std::string blockMergeHeader(const SpmmParts &p, int64_t items);
  /// gnn.spmm, neighbor_group (GNNAdvisor): a worker per group of
  /// neighbours, partial sums merged in shared memory by the row's first
  /// group in the block, rows that span blocks added atomically.
  void emitSpmmNeighbourGroups(SpmmOp op);
  /// Prints the addition of `acc`, a piece of row `row` (an expression),
  /// to the result with atomics, after the row factor (unless the batches
  /// carry it).
  void emitAtomicPiece(SpmmOp op, const SpmmParts &p, StringRef row);
  /// Prints the body of the kernel that runs before a gnn.spmm with write =
  /// atomic: every row of the result is set to its self term, or 0.
  void emitSpmmInit(SpmmOp op);
  /// Prints `split_rows`, the row index list after the workspace slots.
  void emitSplitRows(const SpmmParts &p);
  LogicalResult emitSddmm(SddmmOp op);
  LogicalResult emitEdgeSoftmax(EdgeSoftmaxOp op);
  LogicalResult emitEdgeSoftmaxGrad(EdgeSoftmaxGradOp op);
  /// Prints the row/lane prologue shared by vertex-parallel kernels.
  void emitVertexPrologue(VertexPlanAttr plan, StringRef prefix,
                          StringRef comment);
  /// Prints the cooperative neighbour loop head: the threads of a row load
  /// up to `lanes` column indices at once and pass them round; leaves the
  /// printer inside `for (int t ...)` with `col` defined. With
  /// `colNormParam`, each thread also loads the column factor of its index
  /// into `my_n`.
  void emitNeighbourLoopHead(VertexPlanAttr plan, StringRef prefix,
                             StringRef indexType, StringRef valuesParam,
                             const ElementSpelling &e,
                             bool perEdgeOutput = false,
                             StringRef colNormParam = "",
                             bool declareRange = true);
  /// Prints `group_mask`: the bits of the `lanes` threads that share a row.
  void emitGroupMask(int64_t lanes);
  /// Name of the kernel parameter bound to block argument `v`.
  StringRef paramName(KernelOp kernel, Value v);
  /// Index in gnn.params of the first parameter of block argument `v` (a
  /// graph has three: row_ptr, col_idx, num_rows).
  static unsigned graphParamIndex(KernelOp kernel, Value v);
  /// Index in gnn.params of the first result's parameter; the parameters
  /// the op needs beyond its operands follow the results.
  static unsigned firstResultParam(KernelOp kernel);

  raw_indented_ostream os;
  /// Element types (by tag) that need a header.
  llvm::StringSet<> headers;
  /// (element tag, vector width) pairs that need load/store helpers.
  std::set<std::pair<std::string, int64_t>> helpers;
  /// (element tag, vector width) pairs that need atomic-add helpers.
  std::set<std::pair<std::string, int64_t>> atomicHelpers;
  /// Whether an edge-parallel kernel needs the row search helper.
  bool needsRowSearch = false;
};

void CUDAEmitter::emitLoadHelper(const ElementSpelling &e, int64_t vw) {
  os << "__device__ __forceinline__ void gnnc_load_" << e.tag << "x" << vw
     << "(const " << e.cType << " *__restrict__ p, float *f) {\n";
  os.indent();
  if (e.tag == "f32") {
    if (vw == 1) {
      os << "f[0] = __ldg(p);\n";
    } else {
      os << "const float" << vw << " v = __ldg(reinterpret_cast<const float"
         << vw << " *>(p));\n";
      const char *fields = "xyzw";
      for (int64_t i = 0; i < vw; ++i)
        os << "f[" << i << "] = v." << fields[i] << ";\n";
    }
  } else if (vw == 1) {
    os << "const unsigned short raw = __ldg(reinterpret_cast<const unsigned "
          "short *>(p));\n";
    os << "f[0] = " << e.toFloat << "("
       << (e.tag == "f16" ? "__ushort_as_half" : "__ushort_as_bfloat16")
       << "(raw));\n";
  } else {
    StringRef raw = rawVectorType(vw * 2);
    os << "gnnc_unpack_" << e.tag << "x" << vw
       << "(__ldg(reinterpret_cast<const " << raw << " *>(p)), f);\n";
  }
  os.unindent();
  os << "}\n\n";
}

void CUDAEmitter::emitUnpackHelper(const ElementSpelling &e, int64_t vw) {
  StringRef pair = e.tag == "f16" ? "__half2" : "__nv_bfloat162";
  StringRef pairToFloat2 =
      e.tag == "f16" ? "__half22float2" : "__bfloat1622float2";
  StringRef raw = rawVectorType(vw * 2);
  os << "__device__ __forceinline__ void gnnc_unpack_" << e.tag << "x" << vw
     << "(const " << raw << " v, float *f) {\n";
  os.indent();
  os << "const unsigned *w = reinterpret_cast<const unsigned *>(&v);\n";
  os << "#pragma unroll\n";
  os << "for (int i = 0; i < " << vw / 2 << "; ++i) {\n";
  os.indent();
  os << "const float2 t = " << pairToFloat2 << "(*reinterpret_cast<const "
     << pair << " *>(&w[i]));\n";
  os << "f[2 * i] = t.x;\n";
  os << "f[2 * i + 1] = t.y;\n";
  os.unindent();
  os << "}\n";
  os.unindent();
  os << "}\n\n";
}

void CUDAEmitter::emitStoreHelper(const ElementSpelling &e, int64_t vw) {
  os << "__device__ __forceinline__ void gnnc_store_" << e.tag << "x" << vw
     << "(" << e.cType << " *__restrict__ p, const float *f) {\n";
  os.indent();
  if (e.tag == "f32") {
    if (vw == 1) {
      os << "*p = f[0];\n";
    } else {
      os << "float" << vw << " v;\n";
      const char *fields = "xyzw";
      for (int64_t i = 0; i < vw; ++i)
        os << "v." << fields[i] << " = f[" << i << "];\n";
      os << "*reinterpret_cast<float" << vw << " *>(p) = v;\n";
    }
  } else if (vw == 1) {
    os << "*p = "
       << (e.tag == "f16" ? "__float2half_rn" : "__float2bfloat16_rn")
       << "(f[0]);\n";
  } else {
    StringRef pair = e.tag == "f16" ? "__half2" : "__nv_bfloat162";
    StringRef fromFloats =
        e.tag == "f16" ? "__floats2half2_rn" : "__floats2bfloat162_rn";
    StringRef raw = rawVectorType(vw * 2);
    os << raw << " v;\n";
    os << "unsigned *w = reinterpret_cast<unsigned *>(&v);\n";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << vw / 2 << "; ++i) {\n";
    os.indent();
    os << "const " << pair << " h = " << fromFloats
       << "(f[2 * i], f[2 * i + 1]);\n";
    os << "w[i] = *reinterpret_cast<const unsigned *>(&h);\n";
    os.unindent();
    os << "}\n";
    os << "*reinterpret_cast<" << raw << " *>(p) = v;\n";
  }
  os.unindent();
  os << "}\n\n";
}

void CUDAEmitter::emitAtomicAddHelper(const ElementSpelling &e, int64_t vw) {
  os << "__device__ __forceinline__ void gnnc_atomic_add_" << e.tag << "x" << vw
     << "(" << e.cType << " *p, const float *f) {\n";
  os.indent();
  if (e.tag == "f32") {
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << vw << "; ++i)\n";
    os << "  atomicAdd(p + i, f[i]);\n";
  } else if (vw == 1) {
    os << "atomicAdd(p, "
       << (e.tag == "f16" ? "__float2half_rn" : "__float2bfloat16_rn")
       << "(f[0]));\n";
  } else {
    StringRef pair = e.tag == "f16" ? "__half2" : "__nv_bfloat162";
    StringRef fromFloats =
        e.tag == "f16" ? "__floats2half2_rn" : "__floats2bfloat162_rn";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << vw / 2 << "; ++i)\n";
    os << "  atomicAdd(reinterpret_cast<" << pair << " *>(p) + i, "
       << fromFloats << "(f[2 * i], f[2 * i + 1]));\n";
  }
  os.unindent();
  os << "}\n\n";
}

LogicalResult CUDAEmitter::collectHelpers(Operation *op, Type elementType) {
  auto plan = op->getAttrOfType<VertexPlanAttr>(kPlanAttrName);
  if (!plan)
    return op->emitOpError()
           << "has no gnn.plan; run gnn-lower-to-kernels before printing";
  FailureOr<ElementSpelling> e = spellElement(elementType, op);
  if (failed(e))
    return failure();
  headers.insert(e->tag);
  helpers.insert({e->tag.str(), plan.getVectorWidth()});
  if (auto spmm = dyn_cast<SpmmOp>(op))
    if (spmm.getScheduleAttr() &&
        spmm.getScheduleAttr().getWrite() == WriteMode::atomic)
      atomicHelpers.insert({e->tag.str(), plan.getVectorWidth()});
  return success();
}

unsigned CUDAEmitter::graphParamIndex(KernelOp kernel, Value v) {
  auto arg = cast<BlockArgument>(v);
  unsigned index = 0;
  for (unsigned i = 0; i < arg.getArgNumber(); ++i)
    index += isa<GnnGraphType>(kernel.getArgumentTypes()[i]) ? 3 : 1;
  return index;
}

StringRef CUDAEmitter::paramName(KernelOp kernel, Value v) {
  auto params = kernel->getAttrOfType<ArrayAttr>(kParamsAttrName);
  return cast<StringAttr>(params[graphParamIndex(kernel, v)]).getValue();
}

unsigned CUDAEmitter::firstResultParam(KernelOp kernel) {
  unsigned index = 0;
  for (Type type : kernel.getArgumentTypes())
    index += isa<GnnGraphType>(type) ? 3 : 1;
  return index;
}

/// True when `op` scales each neighbour term by its column's factor.
static bool scalesColumns(SpmmOp op) {
  return op.getScale() == DegreeScale::right ||
         op.getScale() == DegreeScale::both;
}

void CUDAEmitter::emitVertexPrologue(VertexPlanAttr plan, StringRef prefix,
                                     StringRef comment) {
  int64_t lanes = plan.getLanes();
  os << "// " << comment << ", vertex_parallel: " << lanes << " thread"
     << (lanes == 1 ? "" : "s") << " per row, " << plan.getRowsPerBlock()
     << " rows per block, " << plan.getVectorWidth() << " elements per load\n";
  os << "const long long row = (long long)blockIdx.x * "
     << plan.getRowsPerBlock() << " + threadIdx.x / " << lanes << ";\n";
  os << "const int lane = threadIdx.x % " << lanes << ";\n";
  os << "if (row >= " << prefix << "num_rows)\n";
  os << "  return;\n";
}

void CUDAEmitter::emitGroupMask(int64_t lanes) {
  if (lanes == 32)
    os << "const unsigned group_mask = 0xffffffffu;\n";
  else
    os << "const unsigned group_mask = " << ((1ull << lanes) - 1)
       << "u << (threadIdx.x % 32 / " << lanes << " * " << lanes << ");\n";
}

void CUDAEmitter::emitNeighbourLoopHead(
    VertexPlanAttr plan, StringRef prefix, StringRef indexType,
    StringRef valuesParam, const ElementSpelling &e, bool perEdgeOutput,
    StringRef colNormParam, bool declareRange) {
  int64_t lanes = plan.getLanes();
  if (declareRange) {
    os << "const long long begin = " << prefix << "row_ptr[row];\n";
    os << "const long long end = " << prefix << "row_ptr[row + 1];\n";
  }
  emitGroupMask(lanes);
  os << "for (long long base = begin; base < end; base += " << lanes << ") {\n";
  os.indent();
  os << "const int n = (int)min((long long)" << lanes << ", end - base);\n";
  os << indexType << " my_col = 0;\n";
  if (!valuesParam.empty())
    os << "float my_w = 0.0f;\n";
  if (!colNormParam.empty())
    os << "float my_n = 0.0f;\n";
  os << "if (lane < n) {\n";
  os.indent();
  os << "my_col = " << prefix << "col_idx[base + lane];\n";
  if (!valuesParam.empty()) {
    if (e.tag == "f32")
      os << "my_w = __ldg(" << valuesParam << " + base + lane);\n";
    else
      os << "my_w = " << e.toFloat << "(" << valuesParam << "[base + lane]);\n";
  }
  if (!colNormParam.empty())
    os << "my_n = __ldg(" << colNormParam << " + my_col);\n";
  os.unindent();
  os << "}\n";
  if (perEdgeOutput) {
    os << "float my_out = 0.0f;\n";
    os << "#pragma unroll " << plan.getEdgeUnroll() << "\n";
    os << "for (int t = 0; t < n; ++t) {\n";
    os.indent();
    os << "const long long col = __shfl_sync(group_mask, my_col, t, " << lanes
       << ");\n";
  }
}

/// Prints `for (k ...) { chunk; [ragged break] ` opening a loop over the
/// vector chunks a lane owns.
static void openChunkLoop(raw_indented_ostream &os, VertexPlanAttr plan) {
  os << "#pragma unroll\n";
  os << "for (int k = 0; k < " << plan.getChunksPerLane() << "; ++k) {\n";
  os.indent();
  os << "const int chunk = lane + k * " << plan.getLanes() << ";\n";
  if (plan.getChunks() % plan.getLanes() != 0) {
    os << "if (chunk >= " << plan.getChunks() << ")\n";
    os << "  break;\n";
  }
}

static void closeBlock(raw_indented_ostream &os) {
  os.unindent();
  os << "}\n";
}

/// True when `op` runs edge-parallel.
static bool isEdgeParallel(Operation *op) {
  auto spmm = dyn_cast<SpmmOp>(op);
  return spmm && spmm.getScheduleAttr() &&
         spmm.getScheduleAttr().getStrategy() == Strategy::edge_parallel;
}

/// True when `op` is a gnn.spmm with neighbour groups.
static bool isNeighbourGroup(Operation *op) {
  auto spmm = dyn_cast<SpmmOp>(op);
  return spmm && spmm.getScheduleAttr() &&
         spmm.getScheduleAttr().getStrategy() == Strategy::neighbor_group;
}

/// True when `op` is a gnn.sddmm that runs edge-parallel.
static bool isEdgeParallelSddmm(Operation *op) {
  auto sddmm = dyn_cast<SddmmOp>(op);
  return sddmm && sddmm.getScheduleAttr() &&
         sddmm.getScheduleAttr().getStrategy() == Strategy::edge_parallel;
}

CUDAEmitter::OpNames CUDAEmitter::opNames(Operation *op, Value graph,
                                          Type elementType) {
  OpNames n;
  n.plan = op->getAttrOfType<VertexPlanAttr>(kPlanAttrName);
  n.kernel = op->getParentOfType<KernelOp>();
  auto params = n.kernel->getAttrOfType<ArrayAttr>(kParamsAttrName);
  n.prefix = paramName(n.kernel, graph).drop_back(strlen("row_ptr")).str();
  n.y = cast<StringAttr>(params[firstResultParam(n.kernel)]).getValue();
  n.e = *spellElement(elementType, op);
  return n;
}

CUDAEmitter::SpmmParts CUDAEmitter::spmmParts(SpmmOp op) {
  SpmmParts p;
  p.plan = op->getAttrOfType<VertexPlanAttr>(kPlanAttrName);
  auto kernel = op->getParentOfType<KernelOp>();
  auto params = kernel->getAttrOfType<ArrayAttr>(kParamsAttrName);
  StringRef graph = paramName(kernel, op.getGraph());
  p.prefix = graph.drop_back(strlen("row_ptr")).str();
  p.x = paramName(kernel, op.getFeatures());
  unsigned next = firstResultParam(kernel);
  p.y = cast<StringAttr>(params[next++]).getValue();
  // The parameters after the result: column factors, when scaling columns;
  // the edge count and workspace of an edge-parallel kernel.
  if (scalesColumns(op))
    p.colNorm = cast<StringAttr>(params[next++]).getValue();
  p.atomic = op.getScheduleAttr() &&
             op.getScheduleAttr().getWrite() == WriteMode::atomic;
  p.sharedMerge = op.getScheduleAttr() &&
                  op.getScheduleAttr().getWrite() == WriteMode::shared;
  if (isNeighbourGroup(op)) {
    p.groupPtr = cast<StringAttr>(params[next++]).getValue();
    p.groupRows = cast<StringAttr>(params[next++]).getValue();
    p.numGroups = cast<StringAttr>(params[next++]).getValue();
  }
  if (isEdgeParallel(op)) {
    p.numEdges = cast<StringAttr>(params[next++]).getValue();
    if (!p.atomic)
      p.workspace = cast<StringAttr>(params[next++]).getValue();
  }
  p.e = *spellElement(op.getElementType(), op);
  p.values = op.getValues() ? paramName(kernel, op.getValues()) : "";
  p.indexType =
      spellIndex(cast<GnnGraphType>(op.getGraph().getType()).getIndexType());
  p.width = op.getFeatureWidth();
  p.stride = op.getRowStride();
  p.vw = p.plan.getVectorWidth();
  p.accs = p.plan.getChunksPerLane() * p.vw;
  p.max = op.getReduce() == Reduce::max;
  p.packed = keepsVectorsPacked(op.getElementType(), p.vw);
  if (ScheduleAttr schedule = op.getScheduleAttr()) {
    p.half = schedule.getAccumulate() == Accumulate::f16;
    p.disc = schedule.getDiscBatch();
  }
  p.rowFactor = op.getReduce() == Reduce::mean ||
                op.getScale() == DegreeScale::left ||
                op.getScale() == DegreeScale::both;
  return p;
}

/// The row factor of `op` for a row of `deg` neighbours (an identifier):
/// 1/deg for mean times 1/sqrt(deg) for left scaling, 0 for an empty row.
static std::string rowScaleOf(SpmmOp op, StringRef deg) {
  bool mean = op.getReduce() == Reduce::mean;
  bool left =
      op.getScale() == DegreeScale::left || op.getScale() == DegreeScale::both;
  std::string d = deg.str();
  std::string factor;
  if (mean && left)
    factor = "((float)" + d + " * sqrtf((float)" + d + "))";
  else if (mean)
    factor = "(float)" + d;
  else
    factor = "sqrtf((float)" + d + ")";
  return d + " > 0 ? 1.0f / " + factor + " : 0.0f";
}

/// Spells `v` as a CUDA float literal.
static std::string floatLiteral(double v) {
  char literal[32];
  std::snprintf(literal, sizeof(literal), "%.9g", v);
  std::string text = literal;
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text + "f";
}

void CUDAEmitter::emitAccReset(const SpmmParts &p) {
  os << "#pragma unroll\n";
  os << "for (int i = 0; i < " << p.accs << "; ++i)\n";
  if (p.max)
    os << "  acc[i] = __int_as_float(0xff800000); // -infinity\n";
  else
    os << "  acc[i] = 0.0f;\n";
}

void CUDAEmitter::emitPartDecl(const SpmmParts &p) {
  if (!p.usesPart())
    return;
  if (p.disc > 0)
    os << "// Discretized reduction: each batch of at most " << p.disc
       << " neighbours is summed in `part` (" << (p.half ? "f16" : "f32")
       << "),\n// " << (p.rowFactor ? "multiplied by the row factor and " : "")
       << "added to the f32 running total `acc`.\n";
  else
    os << "// accumulate = f16: `part` is one f16 running sum per row (or "
          "piece of a row).\n";
  if (p.half) {
    os << "__half2 part[" << p.pairs() << "];\n";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << p.pairs() << "; ++i)\n";
    os << "  part[i] = __float2half2_rn(0.0f);\n";
  } else {
    os << "float part[" << p.accs << "];\n";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << p.accs << "; ++i)\n";
    os << "  part[i] = 0.0f;\n";
  }
  if (p.disc > 0)
    os << "int in_batch = 0;\n";
}

void CUDAEmitter::emitFold(const SpmmParts &p, StringRef batchScale) {
  std::string times;
  if (!batchScale.empty()) {
    os << "const float fold_scale = " << batchScale << ";\n";
    times = "fold_scale * ";
  }
  if (p.half) {
    if (p.accs / 2 > 0) {
      os << "#pragma unroll\n";
      os << "for (int i = 0; i < " << p.accs / 2 << "; ++i) {\n";
      os.indent();
      os << "const float2 t = __half22float2(part[i]);\n";
      os << "acc[2 * i] += " << times << "t.x;\n";
      os << "acc[2 * i + 1] += " << times << "t.y;\n";
      os << "part[i] = __float2half2_rn(0.0f);\n";
      closeBlock(os);
    }
    if (p.accs % 2) {
      // The last pair holds one accumulator; its high half is padding.
      int64_t last = p.pairs() - 1;
      os << "acc[" << p.accs - 1 << "] += " << times << "__low2float(part["
         << last << "]);\n";
      os << "part[" << last << "] = __float2half2_rn(0.0f);\n";
    }
  } else {
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << p.accs << "; ++i) {\n";
    os.indent();
    os << "acc[i] += " << times << "part[i];\n";
    os << "part[i] = 0.0f;\n";
    closeBlock(os);
  }
  if (p.disc > 0)
    os << "in_batch = 0;\n";
}

void CUDAEmitter::emitPartAdd(const SpmmParts &p, StringRef batchScale,
                              bool packed) {
  std::string factor = std::string(p.values.empty() ? "" : "wb[u]") +
                       (!p.values.empty() && !p.colNorm.empty() ? " * " : "") +
                       (p.colNorm.empty() ? "" : "nb[u]");
  if (p.half) {
    if (!factor.empty())
      os << "const __half2 w2 = __float2half2_rn(" << factor << ");\n";
    auto add = [&](const std::string &index, const std::string &pair) {
      os << "part[" << index << "] = ";
      if (factor.empty())
        os << "__hadd2(part[" << index << "], " << pair << ");\n";
      else
        os << "__hfma2(w2, " << pair << ", part[" << index << "]);\n";
    };
    if (p.accs / 2 > 0) {
      os << "#pragma unroll\n";
      os << "for (int i = 0; i < " << p.accs / 2 << "; ++i)\n";
      os.indent();
      add("i", packed ? "reinterpret_cast<const __half2 *>(f[u])[i]"
                      : "__floats2half2_rn(f[u][2 * i], f[u][2 * i + 1])");
      os.unindent();
    }
    if (p.accs % 2)
      add(std::to_string(p.pairs() - 1),
          "__floats2half2_rn(f[u][" + std::to_string(p.accs - 1) + "], 0.0f)");
  } else {
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << p.accs << "; ++i)\n";
    os << "  part[i] += " << (factor.empty() ? "" : factor + " * ")
       << (packed ? "h[i]" : "f[u][i]") << ";\n";
  }
  if (p.disc > 0) {
    os << "if (++in_batch == " << p.disc << ") {\n";
    os.indent();
    emitFold(p, batchScale);
    closeBlock(os);
  }
}

void CUDAEmitter::emitSpmmAccumulate(const SpmmParts &p) {
  os << "float acc[" << p.accs << "];\n";
  emitAccReset(p);
  emitPartDecl(p);
  emitGroupMask(p.plan.getLanes());
  emitSpmmGather(p, "", p.scalesBatches() ? "batch_scale" : "");
  if (p.usesPart())
    emitFold(p, p.scalesBatches() ? "batch_scale" : "");
}

void CUDAEmitter::emitSpmmGather(const SpmmParts &p, StringRef afterAdd,
                                 StringRef batchScale, StringRef rowEnd) {
  const VertexPlanAttr &plan = p.plan;
  const ElementSpelling &e = p.e;
  int64_t vw = p.vw, accs = p.accs;
  // The threads of a row load `lanes * batch` column indices at once, each
  // `batch` consecutive ones, and pass them round with shuffles. Neighbours
  // are then taken `batch` at a time: every feature load of a batch is
  // issued before the first is used, so a long row keeps `batch` loads per
  // thread in flight instead of one.
  int64_t batch = plan.getEdgeUnroll();
  int64_t lanes = plan.getLanes();
  int64_t window = lanes * batch;
  bool ragged = plan.getChunks() % lanes != 0;
  os << "for (long long base = begin; base < end; base += " << window
     << ") {\n";
  os.indent();
  os << "const int n = (int)min((long long)" << window << ", end - base);\n";
  os << p.indexType << " my_col[" << batch << "];\n";
  if (!p.values.empty())
    os << "float my_w[" << batch << "];\n";
  if (!p.colNorm.empty())
    os << "float my_n[" << batch << "];\n";
  os << "#pragma unroll\n";
  os << "for (int m = 0; m < " << batch << "; ++m) {\n";
  os.indent();
  os << "const int t = lane * " << batch << " + m;\n";
  os << "my_col[m] = t < n ? " << p.prefix << "col_idx[base + t] : 0;\n";
  if (!p.values.empty()) {
    if (e.tag == "f32")
      os << "my_w[m] = t < n ? __ldg(" << p.values << " + base + t) : 0.0f;\n";
    else
      os << "my_w[m] = t < n ? " << e.toFloat << "(" << p.values
         << "[base + t]) : 0.0f;\n";
  }
  if (!p.colNorm.empty())
    os << "my_n[m] = t < n ? __ldg(" << p.colNorm << " + my_col[m]) : 0.0f;\n";
  closeBlock(os);
  // 16-bit vectors stay packed until they are added: a batch of raw words
  // takes half the registers of the same elements as floats, which keeps
  // the occupancy of f16 and bf16 kernels at that of f32.
  bool packed = p.packed;
  StringRef raw = rawVectorType(vw * 2);
  os << "for (int j = 0; j * " << batch << " < n; ++j) {\n";
  os.indent();
  if (packed)
    os << raw << " f[" << batch << "][" << plan.getChunksPerLane() << "];\n";
  else
    os << "float f[" << batch << "][" << accs << "];\n";
  if (!p.values.empty())
    os << "float wb[" << batch << "];\n";
  if (!p.colNorm.empty())
    os << "float nb[" << batch << "];\n";
  // Every slot of a batch loads, without tests: a dead slot (past the end
  // of the window) has column 0, a row that exists whenever there is an
  // edge, and is never added. One form of the loads for every batch keeps
  // the compiler from copying the loaded registers where two forms join.
  os << "// Dead slots load row 0 (they hold column 0) and are not added.\n";
  os << "#pragma unroll\n";
  os << "for (int u = 0; u < " << batch << "; ++u) {\n";
  os.indent();
  os << "const " << p.indexType
     << " col = __shfl_sync(group_mask, my_col[u], j, " << lanes << ");\n";
  if (!p.values.empty())
    os << "wb[u] = __shfl_sync(group_mask, my_w[u], j, " << lanes << ");\n";
  if (!p.colNorm.empty())
    os << "nb[u] = __shfl_sync(group_mask, my_n[u], j, " << lanes << ");\n";
  os << "const " << e.cType << " *src = " << p.x << " + (long long)col * "
     << p.stride << ";\n";
  os << "#pragma unroll\n";
  os << "for (int k = 0; k < " << plan.getChunksPerLane() << "; ++k) {\n";
  os.indent();
  os << "const int chunk = lane + k * " << lanes << ";\n";
  StringRef indent = ragged ? "  " : "";
  if (ragged)
    os << "if (chunk < " << plan.getChunks() << ")\n";
  if (packed)
    os << indent << "f[u][k] = __ldg(reinterpret_cast<const " << raw
       << " *>(src + chunk * " << vw << "));\n";
  else
    os << indent << "gnnc_load_" << e.tag << "x" << vw << "(src + chunk * "
       << vw << ", f[u] + k * " << vw << ");\n";
  // A chunk past the row's width is never stored; packed 16-bit slots
  // are zeroed all the same.
  if (packed && ragged)
    os << "else\n  f[u][k] = {};\n";
  closeBlock(os); // chunks
  closeBlock(os); // loads of the batch
  // f16 accumulation adds the packed words as they are; everything else
  // widens them to floats first.
  bool halfPairs = packed && p.half;
  auto emitAdd = [&] {
    if (packed && !halfPairs) {
      os << "float h[" << accs << "];\n";
      os << "#pragma unroll\n";
      os << "for (int k = 0; k < " << plan.getChunksPerLane() << "; ++k)\n";
      os << "  gnnc_unpack_" << e.tag << "x" << vw << "(f[u][k], h + k * " << vw
         << ");\n";
    }
    if (p.usesPart()) {
      emitPartAdd(p, batchScale, packed);
      return;
    }
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << accs << "; ++i)\n";
    std::string term = std::string(p.values.empty() ? "" : "wb[u] * ") +
                       (p.colNorm.empty() ? "" : "nb[u] * ") +
                       (packed ? "h[i]" : "f[u][i]");
    if (p.max)
      os << "  acc[i] = fmaxf(acc[i], " << term << ");\n";
    else
      os << "  acc[i] += " << term << ";\n";
  };
  bool fastBatch = !rowEnd.empty();
  if (fastBatch) {
    os << "const unsigned int e0 = (unsigned int)(base - begin) + j * " << batch
       << ";\n";
    os << "if (j * " << batch << " + " << batch << " <= n && e0 + " << batch
       << " < " << rowEnd << ") {\n";
    os.indent();
    os << "// The whole batch is live and inside the current row, which goes\n"
          "// on after it.\n";
    os << "#pragma unroll\n";
    os << "for (int u = 0; u < " << batch << "; ++u) {\n";
    os.indent();
    emitAdd();
    closeBlock(os);
    os.unindent();
    os << "} else {\n";
    os.indent();
  }
  os << "#pragma unroll\n";
  os << "for (int u = 0; u < " << batch << "; ++u) {\n";
  os.indent();
  // Only live neighbours count: a skipped slot holds no load (and must not
  // be multiplied by zero either: an infinite feature would turn into NaN).
  os << "if (j * " << batch << " + u < n) {\n";
  os.indent();
  emitAdd();
  if (!afterAdd.empty()) {
    os << "const unsigned int e = (unsigned int)(base - begin) + j * " << batch
       << " + u;\n";
    os << afterAdd;
  }
  closeBlock(os);
  closeBlock(os); // accumulation
  if (fastBatch)
    closeBlock(os); // the batch that crosses a row end
  closeBlock(os);   // batches
  closeBlock(os);   // index windows
}

void CUDAEmitter::emitSpmmFinish(SpmmOp op, const SpmmParts &p, StringRef deg) {
  int64_t accs = p.accs, vw = p.vw;
  bool mean = op.getReduce() == Reduce::mean;
  bool left =
      op.getScale() == DegreeScale::left || op.getScale() == DegreeScale::both;
  // With discretized reduction every batch already carries the row factor.
  bool scaleRow = (mean || left) && !p.scalesBatches();
  if (p.max || scaleRow)
    os << "const long long deg = " << deg << ";\n";
  // Mean and left degree scaling multiply the row by one factor of its
  // degree; an empty row (all-zero accumulators) gets the factor 0.
  if (p.max) {
    os << "// max: an empty row gives 0\n";
    os << "if (deg == 0)\n";
    os << "  for (int i = 0; i < " << accs << "; ++i)\n";
    os << "    acc[i] = 0.0f;\n";
  }
  if (scaleRow) {
    os << "// " << (mean ? "mean" : "") << (mean && left ? ", " : "")
       << (left ? "left degree scaling" : "") << "\n";
    os << "const float row_scale = " << rowScaleOf(op, "deg") << ";\n";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << accs << "; ++i)\n";
    os << "  acc[i] *= row_scale;\n";
  }
  if (FloatAttr self = op.getSelfWeightAttr()) {
    // The self term is not scaled: it is added after the row factor.
    os << "// GIN self term: (1 + eps) * x[row], after the row factor\n";
    os << "const " << p.e.cType << " *self_src = " << p.x << " + row * "
       << p.stride << ";\n";
    openChunkLoop(os, p.plan);
    os << "float self_f[" << vw << "];\n";
    os << "gnnc_load_" << p.e.tag << "x" << vw << "(self_src + chunk * " << vw
       << ", self_f);\n";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << vw << "; ++i)\n";
    os << "  acc[k * " << vw
       << " + i] += " << floatLiteral(1.0 + self.getValueAsDouble())
       << " * self_f[i];\n";
    closeBlock(os);
  }
  os << p.e.cType << " *dst = " << p.y << " + row * " << p.stride << ";\n";
  openChunkLoop(os, p.plan);
  if (int64_t tail = p.tail()) {
    // The last chunk ends in the padding, which belongs to the caller:
    // only its first `tail` elements are stored.
    os << "if (chunk == " << p.plan.getChunks() - 1 << ") {\n";
    os.indent();
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << tail << "; ++i)\n";
    os << "  gnnc_store_" << p.e.tag << "x1(dst + chunk * " << vw
       << " + i, acc + k * " << vw << " + i);\n";
    os << "continue;\n";
    closeBlock(os);
  }
  os << "gnnc_store_" << p.e.tag << "x" << vw << "(dst + chunk * " << vw
     << ", acc + k * " << vw << ");\n";
  closeBlock(os);
}

LogicalResult CUDAEmitter::emitSpmm(SpmmOp op) {
  if (isEdgeParallel(op)) {
    emitSpmmEdgeParallel(op);
    return success();
  }
  if (isNeighbourGroup(op)) {
    emitSpmmNeighbourGroups(op);
    return success();
  }
  SpmmParts p = spmmParts(op);
  emitVertexPrologue(p.plan, p.prefix, "gnn.spmm");
  os << "const long long begin = " << p.prefix << "row_ptr[row];\n";
  os << "const long long end = " << p.prefix << "row_ptr[row + 1];\n";
  if (p.scalesBatches()) {
    os << "const long long batch_deg = end - begin;\n";
    os << "const float batch_scale = " << rowScaleOf(op, "batch_deg") << ";\n";
  }
  emitSpmmAccumulate(p);
  emitSpmmFinish(op, p, "end - begin");
  return success();
}

void CUDAEmitter::emitEdgeWorkerPrologue(const SpmmParts &p,
                                         int64_t itemsPerWorker,
                                         StringRef comment,
                                         StringRef beforeActive) {
  emitEdgeWorkerPrologue(p.plan, p.prefix, p.numEdges, itemsPerWorker, comment,
                         /*search=*/true, beforeActive);
}

void CUDAEmitter::emitEdgeWorkerPrologue(VertexPlanAttr plan, StringRef prefix,
                                         StringRef numEdges,
                                         int64_t itemsPerWorker,
                                         StringRef comment, bool search,
                                         StringRef beforeActive) {
  int64_t lanes = plan.getLanes();
  os << "// " << comment << "\n";
  os << "const long long worker = (long long)blockIdx.x * "
     << plan.getRowsPerBlock() << " + threadIdx.x / " << lanes << ";\n";
  os << "const int lane = threadIdx.x % " << lanes << ";\n";
  os << "const long long total = " << prefix << "num_rows + " << numEdges
     << ";\n";
  os << "const long long workers = total > 0 ? (total + " << itemsPerWorker - 1
     << ") / " << itemsPerWorker << " : 1;\n";
  if (beforeActive.empty()) {
    os << "if (worker >= workers)\n";
    os << "  return;\n";
  } else {
    os << beforeActive;
    os << "if (worker < workers) {\n";
    os.indent();
  }
  if (!search)
    return;
  os << "// This worker's stretch [d0, d1) of the merge path: rows i0..i1,\n";
  os << "// edges [j0, j1).\n";
  os << "const long long d0 = worker * " << itemsPerWorker << ";\n";
  os << "const long long d1 = min(d0 + " << itemsPerWorker << ", total);\n";
  emitGroupMask(lanes);
  os << "long long i0, i1;\n";
  os << "gnnc_merge_rows<" << lanes << ">(" << prefix << "row_ptr, " << prefix
     << "num_rows, d0, d1, group_mask, lane, i0, i1);\n";
}

/// Prints the store of `acc` to workspace row `slotExpr` (f32, `width`
/// elements), or (with `load`) its combination into `acc`.
static void emitSlotLoop(raw_indented_ostream &os, VertexPlanAttr plan,
                         int64_t vw, bool load, bool max) {
  openChunkLoop(os, plan);
  os << "#pragma unroll\n";
  os << "for (int i = 0; i < " << vw << "; ++i)\n";
  if (!load)
    os << "  slot[chunk * " << vw << " + i] = acc[k * " << vw << " + i];\n";
  else if (max)
    os << "  acc[k * " << vw << " + i] = fmaxf(acc[k * " << vw
       << " + i], slot[chunk * " << vw << " + i]);\n";
  else
    os << "  acc[k * " << vw << " + i] += slot[chunk * " << vw << " + i];\n";
  closeBlock(os);
}

void CUDAEmitter::emitSpmmEdgeParallel(SpmmOp op) {
  SpmmParts p = spmmParts(op);
  int64_t items = op.getScheduleAttr().getEdgesPerWarp();
  int64_t lanes = p.plan.getLanes();
  emitEdgeWorkerPrologue(
      p, items,
      ("gnn.spmm, edge_parallel: the merge path of row ends and edges in "
       "stretches of " +
       Twine(items) + " per worker of " + Twine(lanes) + " thread" +
       (lanes == 1 ? "" : "s") + ", " + Twine(p.plan.getRowsPerBlock()) +
       " workers per block, " + Twine(p.vw) + " elements per load. " +
       (p.atomic ? "Rows that cross a stretch boundary are added to the "
                   "result in pieces with atomics (the first kernel set "
                   "those rows to their self term or 0)."
        : p.sharedMerge
            ? "Rows that cross a stretch boundary leave pieces in shared "
              "memory when the row lies within the block (its first "
              "worker adds them after the block's barrier), in the "
              "workspace otherwise (the fix-up kernel adds those)."
            : "Rows that cross a stretch boundary go to the workspace "
              "in pieces; the fix-up kernel adds them."))
          .str(),
      p.sharedMerge ? blockMergeHeader(p, items) : "");
  os << "const long long begin = d0 - i0; // j0\n";
  os << "const long long end = d1 - i1;   // j1\n";
  os << "// The ends of rows i0..i1 relative to j0, in shared memory.\n";
  if (!p.sharedMerge)
    os << "extern __shared__ unsigned int gnnc_row_ends[];\n";
  os << "unsigned int *ends = gnnc_row_ends + threadIdx.x / " << lanes << " * "
     << items + 1 << ";\n";
  os << "const int rows_here = (int)(min(i1, " << p.prefix
     << "num_rows - 1) - i0 + 1);\n";
  os << "for (int r = lane; r < rows_here; r += " << lanes << ")\n";
  os << "  ends[r] = (unsigned int)min((long long)" << p.prefix
     << "row_ptr[i0 + r + 1] - begin, 0xffffffffll);\n";
  os << "__syncwarp(group_mask);\n";
  os << "float acc[" << p.accs << "];\n";
  emitAccReset(p);
  emitPartDecl(p);
  if (p.scalesBatches()) {
    os << "// The row factor of row rr, for the batches of its pieces.\n";
    os << "auto batch_scale_of = [&](long long rr) {\n";
    os.indent();
    os << "const long long batch_deg = " << p.prefix << "row_ptr[rr + 1] - "
       << p.prefix << "row_ptr[rr];\n";
    os << "return " << rowScaleOf(op, "batch_deg") << ";\n";
    os.unindent();
    os << "};\n";
  }
  // A row that ends here is written out, except the first row of a worker
  // after the first: it began in an earlier worker (even if with no edges
  // there), so it is a piece.
  os << "// Ends row i0 + r: writes it, or its last piece ("
     << (p.atomic ? "atomically" : "slot 0") << ") when it\n";
  os << "// began in an earlier worker; then restarts the accumulators.\n";
  os << "auto flush = [&](int r) {\n";
  os.indent();
  if (p.usesPart())
    emitFold(p, p.scalesBatches() ? "batch_scale_of(i0 + r)" : "");
  os << "if (r == 0 && worker > 0) {\n";
  os.indent();
  if (p.atomic) {
    emitAtomicPiece(op, p, "i0");
  } else if (p.sharedMerge) {
    os << "float *slot = began_in(i0) >= block_first\n"
       << "                  ? block_slots + (worker - block_first) * "
       << 2 * p.stride << "\n"
       << "                  : " << p.workspace << " + worker * "
       << 2 * p.stride << ";\n";
    emitSlotLoop(os, p.plan, p.vw, /*load=*/false, p.max);
  } else {
    os << "float *slot = " << p.workspace << " + worker * " << 2 * p.stride
       << ";\n";
    emitSlotLoop(os, p.plan, p.vw, /*load=*/false, p.max);
  }
  os.unindent();
  os << "} else {\n";
  os.indent();
  os << "const long long row = i0 + r;\n";
  emitSpmmFinish(op, p,
                 "(long long)ends[r] - (r > 0 ? (long long)ends[r - 1] : 0)");
  closeBlock(os);
  emitAccReset(p);
  os.unindent();
  os << "};\n";
  // Rows are written as soon as their last edge is added. The current
  // row's end stays in a register; row i1, which goes on past this
  // worker, never ends here.
  os << "int r = 0;\n";
  os << "auto end_of = [&](int rr) {\n";
  os << "  return i0 + rr < i1 ? ends[rr] : 0xffffffffu;\n";
  os << "};\n";
  os << "unsigned int row_end = end_of(0);\n";
  os << "// Rows that end before this worker's first edge: the last (empty)\n";
  os << "// piece of a row that began earlier, and rows without edges.\n";
  os << "while (row_end == 0) {\n";
  os << "  flush(r);\n";
  os << "  row_end = end_of(++r);\n";
  os << "}\n";
  emitSpmmGather(p,
                 "while (e + 1 >= row_end) {\n  flush(r);\n"
                 "  row_end = end_of(++r);\n}\n",
                 p.scalesBatches() ? "batch_scale_of(i0 + r)" : "", "row_end");
  if (p.atomic) {
    os << "// Row i1 goes on past d1: add this worker's piece of it.\n";
    os << "if (i1 < " << p.prefix << "num_rows) {\n";
    os.indent();
    if (p.usesPart())
      emitFold(p, p.scalesBatches() ? "batch_scale_of(i1)" : "");
    emitAtomicPiece(op, p, "i1");
    closeBlock(os);
    return;
  }
  os << "// Row i1 goes on past d1: store this worker's piece of it (slot 0\n";
  os << "// if it began earlier, slot 1 if it began here).\n";
  os << "if (i1 < " << p.prefix << "num_rows) {\n";
  os.indent();
  if (p.usesPart())
    emitFold(p, p.scalesBatches() ? "batch_scale_of(i1)" : "");
  if (p.sharedMerge) {
    os << "const bool middle = i1 == i0 && worker > 0;\n";
    os << "const bool in_block =\n"
       << "    (!middle || began_in(i1) >= block_first) && ends_in(i1) <= "
          "block_last;\n";
    os << "float *slot = (in_block ? block_slots + (worker - block_first) * "
       << 2 * p.stride << "\n"
       << "                        : " << p.workspace << " + worker * "
       << 2 * p.stride << ") +\n"
       << "              (middle ? 0 : " << p.stride << ");\n";
    emitSlotLoop(os, p.plan, p.vw, /*load=*/false, p.max);
    os << "if (in_block && !middle) {\n";
    os << "  merge_row = i1;\n";
    os << "  merge_last = ends_in(i1);\n";
    os << "}\n";
  } else {
    os << "float *slot = " << p.workspace << " + worker * " << 2 * p.stride
       << " + (i1 == i0 && worker > 0 ? 0 : " << p.stride << ");\n";
    emitSlotLoop(os, p.plan, p.vw, /*load=*/false, p.max);
  }
  closeBlock(os);
  os << "// For the fix-up: the row this worker began and did not end"
     << (p.sharedMerge ? " (unless\n// the block finishes it)" : "")
     << ", or -1.\n";
  emitSplitRows(p);
  os << "if (lane == 0)\n";
  os << "  split_rows[worker] = i1 < " << p.prefix
     << "num_rows && !(i1 == i0 && worker > 0)"
     << (p.sharedMerge ? " && merge_row < 0" : "") << " ? i1 : -1;\n";
  if (!p.sharedMerge)
    return;
  closeBlock(os); // the active workers
  os << "// The rows split between this block's workers: the worker that "
        "began\n// one adds its pieces in worker order and writes it.\n";
  os << "__syncthreads();\n";
  os << "if (merge_row >= 0) {\n";
  os.indent();
  os << "const long long row = merge_row;\n";
  os << "float acc[" << p.accs << "];\n";
  emitAccReset(p);
  os << "for (long long w = worker; w <= merge_last; ++w) {\n";
  os.indent();
  os << "const float *slot = block_slots + (w - block_first) * " << 2 * p.stride
     << " + (w == worker ? " << p.stride << " : 0);\n";
  emitSlotLoop(os, p.plan, p.vw, /*load=*/true, p.max);
  closeBlock(os);
  emitSpmmFinish(op, p,
                 "(long long)" + p.prefix + "row_ptr[row + 1] - (long long)" +
                     p.prefix + "row_ptr[row]");
  closeBlock(os);
}

std::string CUDAEmitter::blockMergeHeader(const SpmmParts &p, int64_t items) {
  int64_t perBlock = p.plan.getRowsPerBlock();
  std::string text;
  llvm::raw_string_ostream out(text);
  out << "// write = shared: this block's workers, the slots of their pieces "
         "in\n// shared memory after the row ends, and the row this worker "
         "began and\n// leaves to the block (-1: none).\n";
  out << "extern __shared__ unsigned int gnnc_row_ends[];\n";
  out << "const long long block_first = (long long)blockIdx.x * " << perBlock
      << ";\n";
  out << "const long long block_last = min(block_first + " << perBlock
      << ", workers) - 1;\n";
  out << "float *block_slots =\n    reinterpret_cast<float *>(gnnc_row_ends + "
      << perBlock * (items + 1) << ");\n";
  out << "long long merge_row = -1, merge_last = 0;\n";
  out << "// The worker that began row rr (that holds the end of row rr - 1),\n"
         "// and the one that holds its end.\n";
  out << "auto began_in = [&](long long rr) {\n";
  out << "  return rr == 0 ? 0ll : (rr - 1 + (long long)" << p.prefix
      << "row_ptr[rr]) / " << items << ";\n";
  out << "};\n";
  out << "auto ends_in = [&](long long rr) {\n";
  out << "  return (rr + (long long)" << p.prefix << "row_ptr[rr + 1]) / "
      << items << ";\n";
  out << "};\n";
  return text;
}

void CUDAEmitter::emitAtomicPiece(SpmmOp op, const SpmmParts &p,
                                  StringRef row) {
  os << "{\n";
  os.indent();
  os << "const long long piece_row = " << row << ";\n";
  if (p.rowFactor && !p.scalesBatches()) {
    os << "// The row factor is linear: each piece carries it.\n";
    os << "const long long piece_deg = " << p.prefix
       << "row_ptr[piece_row + 1] - " << p.prefix << "row_ptr[piece_row];\n";
    os << "const float piece_scale = " << rowScaleOf(op, "piece_deg") << ";\n";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << p.accs << "; ++i)\n";
    os << "  acc[i] *= piece_scale;\n";
  }
  os << p.e.cType << " *piece_dst = " << p.y << " + piece_row * " << p.stride
     << ";\n";
  openChunkLoop(os, p.plan);
  if (int64_t tail = p.tail()) {
    // The padding belongs to the caller: only the first `tail` elements of
    // the last chunk are added.
    os << "if (chunk == " << p.plan.getChunks() - 1 << ") {\n";
    os.indent();
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << tail << "; ++i)\n";
    os << "  gnnc_atomic_add_" << p.e.tag << "x1(piece_dst + chunk * " << p.vw
       << " + i, acc + k * " << p.vw << " + i);\n";
    os << "continue;\n";
    closeBlock(os);
  }
  os << "gnnc_atomic_add_" << p.e.tag << "x" << p.vw << "(piece_dst + chunk * "
     << p.vw << ", acc + k * " << p.vw << ");\n";
  closeBlock(os);
  closeBlock(os);
}

void CUDAEmitter::emitSpmmInit(SpmmOp op) {
  SpmmParts p = spmmParts(op);
  emitVertexPrologue(p.plan, p.prefix,
                     "gnn.spmm, write = atomic, first kernel (each row of "
                     "the result starts as its self term or 0; the main "
                     "kernel adds split rows to it)");
  os << "float acc[" << p.accs << "];\n";
  emitAccReset(p);
  // An empty sum: the row factor of degree 0 is 0, so only the self term
  // (if any) is left.
  emitSpmmFinish(op, p, "0");
}

void CUDAEmitter::emitSpmmNeighbourGroups(SpmmOp op) {
  SpmmParts p = spmmParts(op);
  int64_t lanes = p.plan.getLanes();
  int64_t perBlock = p.plan.getRowsPerBlock();
  int64_t groupSize = op.getScheduleAttr().getGroupSize();
  os << "// gnn.spmm, neighbor_group: groups of at most " << groupSize
     << " neighbours of one row, a worker of " << lanes << " thread"
     << (lanes == 1 ? "" : "s") << " per group, " << perBlock
     << " groups per block, " << p.vw
     << " elements per load. The first group of a row in the block (its\n"
        "// leader) adds the partial sums the block's other groups of that "
        "row left in\n// shared memory; a row wholly in the block is "
        "written, a row that spans blocks\n// is added to the result "
        "atomically (the first kernel set it to its self term or 0).\n";
  os << "const long long first_group = (long long)blockIdx.x * " << perBlock
     << ";\n";
  os << "const long long group = first_group + threadIdx.x / " << lanes
     << ";\n";
  os << "const int lane = threadIdx.x % " << lanes << ";\n";
  os << "const long long last_group = min(first_group + " << perBlock << ", "
     << p.numGroups << ") - 1;\n";
  os << "extern __shared__ float gnnc_group_sums[];\n";
  os << "const bool live = group < " << p.numGroups << ";\n";
  os << "const long long row = live ? (long long)" << p.groupRows
     << "[group] : -1;\n";
  os << "float acc[" << p.accs << "];\n";
  os << "if (live) {\n";
  os.indent();
  os << "const long long row_begin = " << p.prefix << "row_ptr[row];\n";
  os << "const long long row_end = " << p.prefix << "row_ptr[row + 1];\n";
  os << "const long long begin = row_begin + (group - " << p.groupPtr
     << "[row]) * " << groupSize << ";\n";
  os << "const long long end = min(begin + " << groupSize << ", row_end);\n";
  if (p.scalesBatches()) {
    os << "const long long batch_deg = row_end - row_begin;\n";
    os << "const float batch_scale = " << rowScaleOf(op, "batch_deg") << ";\n";
  }
  // (`acc` outlives the branch: the leader goes on adding to it.)
  emitAccReset(p);
  emitPartDecl(p);
  emitGroupMask(lanes);
  emitSpmmGather(p, "", p.scalesBatches() ? "batch_scale" : "");
  if (p.usesPart())
    emitFold(p, p.scalesBatches() ? "batch_scale" : "");
  os << "float *slot = gnnc_group_sums + (group - first_group) * " << p.stride
     << ";\n";
  emitSlotLoop(os, p.plan, p.vw, /*load=*/false, false);
  closeBlock(os);
  os << "__syncthreads();\n";
  os << "if (!live || (group > first_group && " << p.groupRows
     << "[group - 1] == row))\n";
  os << "  return;\n";
  os << "// The leader: add the partial sums of the row's later groups here.\n";
  os << "for (long long h = group + 1; h <= last_group && " << p.groupRows
     << "[h] == row; ++h) {\n";
  os.indent();
  os << "const float *slot = gnnc_group_sums + (h - first_group) * " << p.stride
     << ";\n";
  emitSlotLoop(os, p.plan, p.vw, /*load=*/true, false);
  closeBlock(os);
  os << "if (" << p.groupPtr << "[row] >= first_group && " << p.groupPtr
     << "[row + 1] - 1 <= last_group) {\n";
  os.indent();
  emitSpmmFinish(op, p,
                 "(long long)" + p.prefix + "row_ptr[row + 1] - (long long)" +
                     p.prefix + "row_ptr[row]");
  os.unindent();
  os << "} else {\n";
  os.indent();
  emitAtomicPiece(op, p, "row");
  closeBlock(os);
}

void CUDAEmitter::emitSplitRows(const SpmmParts &p) {
  // The workspace holds two f32 rows (of the row stride) per worker, then
  // one row index each.
  os << "long long *split_rows = reinterpret_cast<long long *>(" << p.workspace
     << " + workers * " << 2 * p.stride << ");\n";
}

void CUDAEmitter::emitSpmmEdgeFixup(SpmmOp op) {
  SpmmParts p = spmmParts(op);
  int64_t items = op.getScheduleAttr().getEdgesPerWarp();
  emitEdgeWorkerPrologue(
      p.plan, p.prefix, p.numEdges, items,
      "gnn.spmm, edge_parallel fix-up: the worker in which a row began and "
      "which did not end it adds the row's pieces in worker order (the "
      "result does not depend on timing) and writes the row",
      /*search=*/false);
  emitSplitRows(p);
  os << "const long long row = split_rows[worker];\n";
  os << "if (row < 0)\n";
  os << "  return;\n";
  os << "const long long row_end = " << p.prefix << "row_ptr[row + 1];\n";
  os << "// The worker whose stretch holds the row's end.\n";
  os << "const long long last = (row + row_end) / " << items << ";\n";
  os << "float acc[" << p.accs << "];\n";
  emitAccReset(p);
  os << "#pragma unroll 8\n";
  os << "for (long long w = worker; w <= last; ++w) {\n";
  os.indent();
  os << "const float *slot = " << p.workspace << " + w * " << 2 * p.stride
     << " + (w == worker ? " << p.stride << " : 0);\n";
  emitSlotLoop(os, p.plan, p.vw, /*load=*/true, p.max);
  closeBlock(os);
  emitSpmmFinish(op, p, "row_end - (long long)" + p.prefix + "row_ptr[row]");
}

/// Spells `v = leaky_relu(v)` with the op's slope, if it has one.
static void emitLeakyRelu(raw_indented_ostream &os, FloatAttr slope,
                          StringRef v) {
  if (!slope)
    return;
  os << v << " = " << v << " > 0.0f ? " << v << " : " << v << " * "
     << floatLiteral(slope.getValueAsDouble()) << ";\n";
}

void CUDAEmitter::emitSddmmEdgeParallel(SddmmOp op, StringRef numEdges) {
  OpNames names = opNames(op, op.getGraph(), op.getElementType());
  VertexPlanAttr plan = names.plan;
  KernelOp kernel = names.kernel;
  const std::string &prefix = names.prefix;
  StringRef y = names.y;
  const ElementSpelling &e = names.e;
  StringRef a = paramName(kernel, op.getRowFeatures());
  StringRef b = paramName(kernel, op.getColFeatures());
  StringRef indexType =
      spellIndex(cast<GnnGraphType>(op.getGraph().getType()).getIndexType());
  int64_t width = op.getFeatureWidth();
  int64_t vw = plan.getVectorWidth();
  int64_t lanes = plan.getLanes();
  int64_t cpl = plan.getChunksPerLane();
  int64_t regs = cpl * vw;
  int64_t batch = plan.getEdgeUnroll();
  int64_t window = lanes * batch;
  int64_t items = op.getScheduleAttr().getEdgesPerWarp();
  bool ragged = plan.getChunks() % lanes != 0;
  bool dot = op.getForm() == SddmmForm::dot;
  std::string live =
      ragged ? " && chunk < " + std::to_string(plan.getChunks()) : "";
  StringRef toElement =
      e.tag == "f16" ? "__float2half_rn" : "__float2bfloat16_rn";

  // 16-bit vectors stay packed until they are used (half the registers).
  bool packed = keepsVectorsPacked(op.getElementType(), vw);
  StringRef raw = rawVectorType(vw * 2);
  emitEdgeWorkerPrologue(
      plan, prefix, numEdges, items,
      ("gnn.sddmm (" + Twine(dot ? "dot" : "add") +
       "), edge_parallel: the merge path of row ends and edges in stretches "
       "of " +
       Twine(items) + " per worker of " + Twine(lanes) + " thread" +
       (lanes == 1 ? "" : "s") + ", " + Twine(plan.getRowsPerBlock()) +
       " workers per block, " + Twine(batch) +
       " edges per batch. Every edge has its own output, so a row split "
       "between workers needs no merging.")
          .str());
  os << "const long long begin = d0 - i0; // j0\n";
  os << "const long long end = d1 - i1;   // j1\n";
  os << "// Only edges have outputs: a stretch of row ends alone (or a graph\n";
  os << "// without rows) has nothing to do.\n";
  os << "if (begin >= end)\n";
  os << "  return;\n";
  os << "int r = 0;\n";
  if (packed) {
    os << "// The ends of rows i0..i1 relative to j0, in shared memory: the\n";
    os << "// row of each edge is found there, so the loads of both\n";
    os << "// endpoints of a batch's edges go out together.\n";
    os << "extern __shared__ unsigned int gnnc_row_ends[];\n";
    os << "unsigned int *ends = gnnc_row_ends + threadIdx.x / " << lanes
       << " * " << items + 1 << ";\n";
    os << "const int rows_here = (int)(min(i1, " << prefix
       << "num_rows - 1) - i0 + 1);\n";
    os << "for (int q = lane; q < rows_here; q += " << lanes << ")\n";
    os << "  ends[q] = (unsigned int)min((long long)" << prefix
       << "row_ptr[i0 + q + 1] - begin, 0xffffffffll);\n";
    os << "__syncwarp(group_mask);\n";
  } else {
    // f32 (and scalar 16-bit) features: the row's features stay in
    // registers and are reloaded when an edge passes the row's end (read
    // from row_ptr, whose entries a stretch walks in order), which keeps
    // the batch of column loads as deep as SpMM's.
    os << "long long row_end = " << prefix << "row_ptr[i0 + 1];\n";
    os << "float ra[" << regs << "];\n";
    os << "auto load_row = [&]() {\n";
    os.indent();
    os << "const " << e.cType << " *src_a = " << a << " + (i0 + r) * " << width
       << ";\n";
    os << "#pragma unroll\n";
    os << "for (int k = 0; k < " << cpl << "; ++k) {\n";
    os.indent();
    os << "const int chunk = lane + k * " << lanes << ";\n";
    if (ragged)
      os << "if (chunk < " << plan.getChunks() << ")\n  ";
    os << "gnnc_load_" << e.tag << "x" << vw << "(src_a + chunk * " << vw
       << ", ra + k * " << vw << ");\n";
    if (ragged) {
      os << "else\n";
      os << "  for (int i = 0; i < " << vw << "; ++i)\n";
      os << "    ra[k * " << vw << " + i] = 0.0f;\n";
    }
    closeBlock(os);
    os.unindent();
    os << "};\n";
    os << "load_row();\n";
  }
  os << "for (long long base = begin; base < end; base += " << window
     << ") {\n";
  os.indent();
  os << "const int n = (int)min((long long)" << window << ", end - base);\n";
  os << indexType << " my_col[" << batch << "];\n";
  os << "#pragma unroll\n";
  os << "for (int m = 0; m < " << batch << "; ++m) {\n";
  os.indent();
  os << "const int t = lane * " << batch << " + m;\n";
  os << "my_col[m] = t < n ? " << prefix << "col_idx[base + t] : 0;\n";
  closeBlock(os);
  os << "for (int j = 0; j * " << batch << " < n; ++j) {\n";
  os.indent();
  // Every feature load of the batch (row and column side) is issued before
  // the first is used.
  if (packed)
    os << raw << " fa[" << batch << "][" << cpl << "], fb[" << batch << "]["
       << cpl << "];\n";
  else
    os << "float fb[" << batch << "][" << regs << "];\n";
  os << "#pragma unroll\n";
  os << "for (int u = 0; u < " << batch << "; ++u) {\n";
  os.indent();
  os << "const long long col = __shfl_sync(group_mask, my_col[u], j, " << lanes
     << ");\n";
  os << "const bool live = j * " << batch << " + u < n;\n";
  if (packed) {
    os << "const unsigned int e = (unsigned int)(base - begin) + j * " << batch
       << " + u;\n";
    os << "if (live)\n";
    os << "  while (e >= ends[r])\n";
    os << "    ++r;\n";
    os << "const " << e.cType << " *src_a = " << a << " + (i0 + r) * " << width
       << ";\n";
  }
  os << "const " << e.cType << " *src_b = " << b << " + col * " << width
     << ";\n";
  os << "#pragma unroll\n";
  os << "for (int k = 0; k < " << cpl << "; ++k) {\n";
  os.indent();
  os << "const int chunk = lane + k * " << lanes << ";\n";
  os << "if (live" << live << ") {\n";
  os.indent();
  if (packed) {
    os << "fa[u][k] = __ldg(reinterpret_cast<const " << raw
       << " *>(src_a + chunk * " << vw << "));\n";
    os << "fb[u][k] = __ldg(reinterpret_cast<const " << raw
       << " *>(src_b + chunk * " << vw << "));\n";
    os.unindent();
    os << "} else {\n";
    os.indent();
    os << "fa[u][k] = {};\n";
    os << "fb[u][k] = {};\n";
  } else {
    os << "gnnc_load_" << e.tag << "x" << vw << "(src_b + chunk * " << vw
       << ", fb[u] + k * " << vw << ");\n";
    os.unindent();
    os << "} else {\n";
    os.indent();
    os << "for (int i = 0; i < " << vw << "; ++i)\n";
    os << "  fb[u][k * " << vw << " + i] = 0.0f;\n";
  }
  closeBlock(os); // live
  closeBlock(os); // chunks
  closeBlock(os); // loads
  // Prints `float ha[regs], hb[regs]` holding edge u's features as floats
  // (packed: unpacked here).
  auto floatsOf = [&]() {
    if (!packed) {
      os << "if (j * " << batch << " + u < n) {\n";
      os.indent();
      os << "const long long edge = base + j * " << batch << " + u;\n";
      os << "if (edge >= row_end) {\n";
      os << "  do {\n";
      os << "    ++r;\n";
      os << "    row_end = " << prefix << "row_ptr[i0 + r + 1];\n";
      os << "  } while (edge >= row_end);\n";
      os << "  load_row();\n";
      os << "}\n";
      closeBlock(os);
      os << "const float *ha = ra, *hb = fb[u];\n";
      return;
    }
    os << "float ha[" << regs << "], hb[" << regs << "];\n";
    os << "#pragma unroll\n";
    os << "for (int k = 0; k < " << cpl << "; ++k) {\n";
    os << "  gnnc_unpack_" << e.tag << "x" << vw << "(fa[u][k], ha + k * " << vw
       << ");\n";
    os << "  gnnc_unpack_" << e.tag << "x" << vw << "(fb[u][k], hb + k * " << vw
       << ");\n";
    os << "}\n";
  };
  if (dot) {
    os << "float partial[" << batch << "];\n";
    os << "#pragma unroll\n";
    os << "for (int u = 0; u < " << batch << "; ++u) {\n";
    os.indent();
    floatsOf();
    os << "partial[u] = 0.0f;\n";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << regs << "; ++i)\n";
    os << "  partial[u] += ha[i] * hb[i];\n";
    closeBlock(os);
    // The batch's reductions are independent: their shuffles interleave.
    if (lanes > 1) {
      os << "#pragma unroll\n";
      os << "for (int offset = " << lanes / 2
         << "; offset > 0; offset /= 2) {\n";
      os.indent();
      os << "#pragma unroll\n";
      os << "for (int u = 0; u < " << batch << "; ++u)\n";
      os << "  partial[u] += __shfl_xor_sync(group_mask, partial[u], offset, "
         << lanes << ");\n";
      closeBlock(os);
    }
    os << "// Every thread holds every sum; thread u % " << lanes
       << " writes edge u.\n";
    os << "#pragma unroll\n";
    os << "for (int u = 0; u < " << batch << "; ++u) {\n";
    os.indent();
    emitLeakyRelu(os, op.getLeakyReluAttr(), "partial[u]");
    os << "if (j * " << batch << " + u < n && lane == u % " << lanes << ")\n";
    if (e.tag == "f32")
      os << "  " << y << "[base + j * " << batch << " + u] = partial[u];\n";
    else
      os << "  " << y << "[base + j * " << batch << " + u] = " << toElement
         << "(partial[u]);\n";
    closeBlock(os);
  } else {
    os << "#pragma unroll\n";
    os << "for (int u = 0; u < " << batch << "; ++u) {\n";
    os.indent();
    os << "if (j * " << batch << " + u >= n)\n";
    os << "  break;\n";
    floatsOf();
    os << e.cType << " *dst = " << y << " + (base + j * " << batch << " + u) * "
       << width << ";\n";
    os << "#pragma unroll\n";
    os << "for (int k = 0; k < " << cpl << "; ++k) {\n";
    os.indent();
    os << "const int chunk = lane + k * " << lanes << ";\n";
    if (ragged) {
      os << "if (chunk >= " << plan.getChunks() << ")\n";
      os << "  break;\n";
    }
    os << "float v[" << vw << "];\n";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << vw << "; ++i) {\n";
    os.indent();
    os << "v[i] = ha[k * " << vw << " + i] + hb[k * " << vw << " + i];\n";
    emitLeakyRelu(os, op.getLeakyReluAttr(), "v[i]");
    closeBlock(os);
    os << "gnnc_store_" << e.tag << "x" << vw << "(dst + chunk * " << vw
       << ", v);\n";
    closeBlock(os); // chunks
    closeBlock(os); // edges of the batch
  }
  closeBlock(os); // batches
  closeBlock(os); // index windows
}

LogicalResult CUDAEmitter::emitSddmm(SddmmOp op) {
  OpNames names = opNames(op, op.getGraph(), op.getElementType());
  VertexPlanAttr plan = names.plan;
  KernelOp kernel = names.kernel;
  const std::string &prefix = names.prefix;
  StringRef y = names.y;
  const ElementSpelling &e = names.e;
  StringRef a = paramName(kernel, op.getRowFeatures());
  StringRef b = paramName(kernel, op.getColFeatures());
  int64_t width = op.getFeatureWidth();
  int64_t vw = plan.getVectorWidth();
  int64_t lanes = plan.getLanes();
  int64_t regs = plan.getChunksPerLane() * vw;
  bool dot = op.getForm() == SddmmForm::dot;

  emitVertexPrologue(plan, prefix, dot ? "gnn.sddmm (dot)" : "gnn.sddmm (add)");
  // The row's features stay in registers for all its edges.
  os << "float ra[" << regs << "];\n";
  os << "#pragma unroll\n";
  os << "for (int i = 0; i < " << regs << "; ++i)\n";
  os << "  ra[i] = 0.0f;\n";
  openChunkLoop(os, plan);
  os << "gnnc_load_" << e.tag << "x" << vw << "(" << a << " + row * " << width
     << " + chunk * " << vw << ", ra + k * " << vw << ");\n";
  closeBlock(os);
  emitNeighbourLoopHead(
      plan, prefix,
      spellIndex(cast<GnnGraphType>(op.getGraph().getType()).getIndexType()),
      "", e, /*perEdgeOutput=*/true);
  os << "const " << e.cType << " *src = " << b << " + col * " << width << ";\n";
  if (dot) {
    // Lane t keeps the value of edge base + t; the stores coalesce.
    os << "float partial = 0.0f;\n";
    openChunkLoop(os, plan);
    os << "float f[" << vw << "];\n";
    os << "gnnc_load_" << e.tag << "x" << vw << "(src + chunk * " << vw
       << ", f);\n";
    os << "#pragma unroll\n";
    os << "for (int j = 0; j < " << vw << "; ++j)\n";
    os << "  partial += ra[k * " << vw << " + j] * f[j];\n";
    closeBlock(os);
    if (lanes > 1) {
      os << "#pragma unroll\n";
      os << "for (int offset = " << lanes / 2 << "; offset > 0; offset /= 2)\n";
      os << "  partial += __shfl_xor_sync(group_mask, partial, offset, "
         << lanes << ");\n";
    }
    emitLeakyRelu(os, op.getLeakyReluAttr(), "partial");
    os << "if (lane == t)\n";
    os << "  my_out = partial;\n";
    closeBlock(os); // neighbours
    os << "if (lane < n)\n";
    if (e.tag == "f32")
      os << "  " << y << "[base + lane] = my_out;\n";
    else
      os << "  " << y << "[base + lane] = "
         << (e.tag == "f16" ? "__float2half_rn" : "__float2bfloat16_rn")
         << "(my_out);\n";
    closeBlock(os); // index batches
  } else {
    os << e.cType << " *dst = " << y << " + (base + t) * " << width << ";\n";
    openChunkLoop(os, plan);
    os << "float f[" << vw << "];\n";
    os << "gnnc_load_" << e.tag << "x" << vw << "(src + chunk * " << vw
       << ", f);\n";
    os << "#pragma unroll\n";
    os << "for (int j = 0; j < " << vw << "; ++j) {\n";
    os.indent();
    os << "f[j] += ra[k * " << vw << " + j];\n";
    emitLeakyRelu(os, op.getLeakyReluAttr(), "f[j]");
    closeBlock(os);
    os << "gnnc_store_" << e.tag << "x" << vw << "(dst + chunk * " << vw
       << ", f);\n";
    closeBlock(os); // chunks
    closeBlock(os); // neighbours
    closeBlock(os); // index batches
  }
  return success();
}

/// Combines every thread's value of `var[h]` (h < `heads`) across the
/// `lanes` threads of a row: with fmaxf when `max`, by addition otherwise.
static void emitRowReduce(raw_indented_ostream &os, StringRef var,
                          int64_t heads, int64_t lanes, bool max) {
  if (lanes == 1)
    return;
  os << "#pragma unroll\n";
  os << "for (int offset = " << lanes / 2 << "; offset > 0; offset /= 2) {\n";
  os.indent();
  os << "#pragma unroll\n";
  os << "for (int h = 0; h < " << heads << "; ++h)\n";
  std::string other = ("__shfl_xor_sync(group_mask, " + var + "[h], offset, " +
                       Twine(lanes) + ")")
                          .str();
  if (max)
    os << "  " << var << "[h] = fmaxf(" << var << "[h], " << other << ");\n";
  else
    os << "  " << var << "[h] += " << other << ";\n";
  closeBlock(os);
}

LogicalResult CUDAEmitter::emitEdgeSoftmax(EdgeSoftmaxOp op) {
  OpNames names = opNames(op, op.getGraph(), op.getElementType());
  VertexPlanAttr plan = names.plan;
  KernelOp kernel = names.kernel;
  const std::string &prefix = names.prefix;
  StringRef y = names.y;
  const ElementSpelling &e = names.e;
  StringRef x = paramName(kernel, op.getLogits());
  int64_t heads = op.getNumHeads();
  int64_t vw = plan.getVectorWidth();
  int64_t lanes = plan.getLanes();
  int64_t chunks = plan.getChunks();

  emitVertexPrologue(plan, prefix,
                     "gnn.edge_softmax (" + std::to_string(heads) +
                         " heads per edge; a row's threads split its edges)");
  os << "const long long begin = " << prefix << "row_ptr[row];\n";
  os << "const long long end = " << prefix << "row_ptr[row + 1];\n";
  emitGroupMask(lanes);
  // Per head: the running maximum and sum of exponentials, in f32.
  os << "float m[" << heads << "];\n";
  os << "float s[" << heads << "];\n";
  os << "#pragma unroll\n";
  os << "for (int h = 0; h < " << heads << "; ++h) {\n";
  os << "  m[h] = __int_as_float(0xff800000); // -infinity\n";
  os << "  s[h] = 0.0f;\n";
  os << "}\n";
  // Opens a loop over this lane's edges that loads the edge's heads into v.
  auto openEdgeLoop = [&]() {
    os << "for (long long edge = begin + lane; edge < end; edge += " << lanes
       << ") {\n";
    os.indent();
    os << "float v[" << heads << "];\n";
    os << "#pragma unroll\n";
    os << "for (int k = 0; k < " << chunks << "; ++k)\n";
    os << "  gnnc_load_" << e.tag << "x" << vw << "(" << x << " + edge * "
       << heads << " + k * " << vw << ", v + k * " << vw << ");\n";
  };
  os << "// Pass 1: the maximum of each head over the row's edges.\n";
  openEdgeLoop();
  os << "#pragma unroll\n";
  os << "for (int h = 0; h < " << heads << "; ++h)\n";
  os << "  m[h] = fmaxf(m[h], v[h]);\n";
  closeBlock(os);
  emitRowReduce(os, "m", heads, lanes, /*max=*/true);
  os << "// Pass 2: the sum of exp(x - max) <= 1 per edge.\n";
  openEdgeLoop();
  os << "#pragma unroll\n";
  os << "for (int h = 0; h < " << heads << "; ++h)\n";
  os << "  s[h] += expf(v[h] - m[h]);\n";
  closeBlock(os);
  emitRowReduce(os, "s", heads, lanes, /*max=*/false);
  os << "// Pass 3: write exp(x - max) / sum.\n";
  os << "#pragma unroll\n";
  os << "for (int h = 0; h < " << heads << "; ++h)\n";
  os << "  s[h] = 1.0f / s[h];\n";
  openEdgeLoop();
  os << "#pragma unroll\n";
  os << "for (int h = 0; h < " << heads << "; ++h)\n";
  os << "  v[h] = expf(v[h] - m[h]) * s[h];\n";
  os << "#pragma unroll\n";
  os << "for (int k = 0; k < " << chunks << "; ++k)\n";
  os << "  gnnc_store_" << e.tag << "x" << vw << "(" << y << " + edge * "
     << heads << " + k * " << vw << ", v + k * " << vw << ");\n";
  closeBlock(os);
  return success();
}

LogicalResult CUDAEmitter::emitEdgeSoftmaxGrad(EdgeSoftmaxGradOp op) {
  OpNames names = opNames(op, op.getGraph(), op.getElementType());
  VertexPlanAttr plan = names.plan;
  KernelOp kernel = names.kernel;
  const std::string &prefix = names.prefix;
  StringRef y = names.y;
  const ElementSpelling &e = names.e;
  StringRef out = paramName(kernel, op.getOutput());
  StringRef grad = paramName(kernel, op.getGradOutput());
  int64_t heads = op.getNumHeads();
  int64_t vw = plan.getVectorWidth();
  int64_t lanes = plan.getLanes();
  int64_t chunks = plan.getChunks();

  emitVertexPrologue(plan, prefix,
                     "gnn.edge_softmax_grad (" + std::to_string(heads) +
                         " heads per edge; a row's threads split its edges)");
  os << "const long long begin = " << prefix << "row_ptr[row];\n";
  os << "const long long end = " << prefix << "row_ptr[row + 1];\n";
  emitGroupMask(lanes);
  // Per head: the sum over the row of out * grad_out, in f32.
  os << "float s[" << heads << "];\n";
  os << "#pragma unroll\n";
  os << "for (int h = 0; h < " << heads << "; ++h)\n";
  os << "  s[h] = 0.0f;\n";
  // Opens a loop over this lane's edges that loads the edge's heads of the
  // softmax output into o and of its gradient into d.
  auto openEdgeLoop = [&]() {
    os << "for (long long edge = begin + lane; edge < end; edge += " << lanes
       << ") {\n";
    os.indent();
    os << "float o[" << heads << "];\n";
    os << "float d[" << heads << "];\n";
    os << "#pragma unroll\n";
    os << "for (int k = 0; k < " << chunks << "; ++k) {\n";
    os.indent();
    os << "gnnc_load_" << e.tag << "x" << vw << "(" << out << " + edge * "
       << heads << " + k * " << vw << ", o + k * " << vw << ");\n";
    os << "gnnc_load_" << e.tag << "x" << vw << "(" << grad << " + edge * "
       << heads << " + k * " << vw << ", d + k * " << vw << ");\n";
    closeBlock(os);
  };
  os << "// Pass 1: the sum of out * grad_out of each head over the row.\n";
  openEdgeLoop();
  os << "#pragma unroll\n";
  os << "for (int h = 0; h < " << heads << "; ++h)\n";
  os << "  s[h] += o[h] * d[h];\n";
  closeBlock(os);
  emitRowReduce(os, "s", heads, lanes, /*max=*/false);
  os << "// Pass 2: write out * (grad_out - sum).\n";
  openEdgeLoop();
  os << "#pragma unroll\n";
  os << "for (int h = 0; h < " << heads << "; ++h)\n";
  os << "  o[h] *= d[h] - s[h];\n";
  os << "#pragma unroll\n";
  os << "for (int k = 0; k < " << chunks << "; ++k)\n";
  os << "  gnnc_store_" << e.tag << "x" << vw << "(" << y << " + edge * "
     << heads << " + k * " << vw << ", o + k * " << vw << ");\n";
  closeBlock(os);
  return success();
}

LogicalResult CUDAEmitter::emitKernel(GnnModuleOp module, KernelOp kernel,
                                      std::vector<rt::KernelSpec> *specs) {
  auto params = kernel->getAttrOfType<ArrayAttr>(kParamsAttrName);
  auto launch = kernel->getAttrOfType<LaunchAttr>(kLaunchAttrName);
  if (!params || !launch)
    return kernel.emitOpError()
           << "has no gnn.params/gnn.launch; run gnn-lower-to-kernels "
              "before printing";

  rt::KernelSpec spec;
  auto entry = kernel->getAttrOfType<StringAttr>(kEntryAttrName);
  if (!entry)
    return kernel.emitOpError()
           << "has no gnn.entry; run gnn-lower-to-kernels before printing";
  spec.name = entry.str();
  spec.launch.blockX = launch.getBlock();
  spec.launch.gridParam = launch.getGrid().str();
  spec.launch.itemsPerBlock = launch.getPerBlock();
  spec.launch.sharedBytes = launch.getShared();

  // Parameter declarations, in the order of gnn.params.
  SmallVector<std::string> decls;
  unsigned next = 0;
  auto name = [&]() {
    return cast<StringAttr>(params[next++]).getValue().str();
  };
  auto addParam = [&](std::string decl, std::string n, rt::ParamKind kind) {
    decls.push_back(decl + n);
    spec.params.push_back({n, kind});
  };
  for (Type type : kernel.getArgumentTypes()) {
    if (auto graph = dyn_cast<GnnGraphType>(type)) {
      addParam(
          ("const " + spellIndex(graph.getOffsetType()) + " *__restrict__ ")
              .str(),
          name(), rt::ParamKind::Pointer);
      addParam(("const " + spellIndex(graph.getIndexType()) + " *__restrict__ ")
                   .str(),
               name(), rt::ParamKind::Pointer);
      addParam("long long ", name(), rt::ParamKind::Int64);
      continue;
    }
    auto tensor = cast<RankedTensorType>(type);
    FailureOr<ElementSpelling> e =
        spellElement(tensor.getElementType(), kernel);
    if (failed(e))
      return failure();
    addParam(("const " + e->cType + " *__restrict__ ").str(), name(),
             rt::ParamKind::Pointer);
  }
  for (Type type : kernel.getResultTypes()) {
    FailureOr<ElementSpelling> e =
        spellElement(cast<RankedTensorType>(type).getElementType(), kernel);
    if (failed(e))
      return failure();
    addParam((e->cType + " *__restrict__ ").str(), name(),
             rt::ParamKind::Pointer);
  }
  // Parameters an op needs beyond its operands, in the order of gnn.params.
  SpmmOp edgeParallel, atomicSpmm;
  std::string sddmmEdges;
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    if (isEdgeParallelSddmm(&op)) {
      sddmmEdges = name();
      addParam("long long ", sddmmEdges, rt::ParamKind::Int64);
    }
    auto spmm = dyn_cast<SpmmOp>(op);
    if (spmm && scalesColumns(spmm))
      addParam("const float *__restrict__ ", name(), rt::ParamKind::Pointer);
    if (spmm && isNeighbourGroup(spmm)) {
      atomicSpmm = spmm;
      addParam("const long long *__restrict__ ", name(),
               rt::ParamKind::Pointer);
      addParam("const int *__restrict__ ", name(), rt::ParamKind::Pointer);
      addParam("long long ", name(), rt::ParamKind::Int64);
    }
    if (spmm && isEdgeParallel(spmm)) {
      edgeParallel = spmm;
      std::string numEdges = name();
      addParam("long long ", numEdges, rt::ParamKind::Int64);
      if (spmm.getScheduleAttr().getWrite() == WriteMode::atomic) {
        atomicSpmm = spmm;
        continue;
      }
      std::string workspace = name();
      addParam("float *__restrict__ ", workspace, rt::ParamKind::Pointer);
      // Split rows are finished by a second kernel with the same grid; each
      // worker has two f32 rows of workspace and the index of the row it
      // leaves to that kernel.
      int64_t edges = spmm.getScheduleAttr().getEdgesPerWarp();
      spec.followUps.push_back({spec.name + "_fixup", spec.launch});
      rt::WorkspaceRule ws;
      ws.param = workspace;
      ws.countParam = spec.launch.gridParam; // rows + edges
      ws.itemsPerUnit = static_cast<uint64_t>(edges);
      ws.bytesPerUnit = static_cast<uint64_t>(spmm.getRowStride()) * 2 * 4 + 8;
      ws.minUnits = 1;
      spec.workspace = ws;
    }
  }
  if (atomicSpmm) {
    // Split rows are added to the result, which a first kernel sets to the
    // self term (or 0): `rows_per_block` rows per block.
    auto plan = atomicSpmm->getAttrOfType<VertexPlanAttr>(kPlanAttrName);
    rt::LaunchRule init;
    init.blockX = launch.getBlock();
    init.gridParam =
        cast<StringAttr>(
            params[graphParamIndex(kernel, atomicSpmm.getGraph()) + 2])
            .str();
    init.itemsPerBlock = static_cast<uint64_t>(plan.getRowsPerBlock());
    spec.preludes.push_back({spec.name + "_init", init});
  }
  spec.launch.minBlocks = static_cast<uint64_t>(launch.getMinBlocks());
  for (rt::FollowUpKernel &next : spec.followUps)
    next.launch.minBlocks = spec.launch.minBlocks;

  os << "// @" << module.getSymName() << "::@" << kernel.getSymName() << "\n";
  os << "extern \"C\" __global__ void __launch_bounds__(" << launch.getBlock();
  if (launch.getBlocksPerSm() != 0)
    os << ", " << launch.getBlocksPerSm();
  os << ")\n" << spec.name << "(";
  for (auto [i, d] : llvm::enumerate(decls))
    os << (i ? ", " : "") << d;
  os << ") {\n";
  os.indent();
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    Value graph;
    Type elementType;
    int64_t width = 0;
    ScheduleAttr schedule;
    if (auto spmm = dyn_cast<SpmmOp>(op)) {
      if (failed(emitSpmm(spmm)))
        return failure();
      spec.info["op"] = "spmm";
      spec.info["edge_values"] = spmm.getValues() ? "yes" : "no";
      // Recorded only when not the default, so that the description of a
      // plain sum is unchanged.
      if (spmm.getReduce() != Reduce::sum)
        spec.info["reduce"] = stringifyReduce(spmm.getReduce()).str();
      if (spmm.getScale() != DegreeScale::none)
        spec.info["scale"] = stringifyDegreeScale(spmm.getScale()).str();
      if (FloatAttr self = spmm.getSelfWeightAttr()) {
        char text[32];
        std::snprintf(text, sizeof(text), "%.9g", self.getValueAsDouble());
        spec.info["self_weight"] = text;
      }
      if (ScheduleAttr s = spmm.getScheduleAttr()) {
        if (s.getAccumulate() != Accumulate::f32)
          spec.info["accumulate"] =
              stringifyAccumulate(s.getAccumulate()).str();
        if (s.getDiscBatch() != 0)
          spec.info["disc_batch"] = std::to_string(s.getDiscBatch());
        // Atomic pieces round once more each (in the result's type): the
        // host's tolerance needs their number.
        if (s.getWrite() == WriteMode::atomic) {
          spec.info["write"] = "atomic";
          int64_t piece = s.getEdgesPerWarp();
          if (s.getStrategy() == Strategy::neighbor_group) {
            // A row that spans blocks gets one piece per block.
            spec.info["group_size"] = std::to_string(s.getGroupSize());
            piece = int64_t(s.getGroupSize()) * s.getThreadsPerBlock() /
                    s.getDimWorkers();
          }
          spec.info["edges_per_piece"] = std::to_string(piece);
        }
      }
      if (auto exponent = spmm.getColNormExponentAttr())
        spec.info["col_norm_exponent"] =
            std::to_string(exponent.getValueAsDouble());
      // Recorded only for padded rows (stride != width).
      if (spmm.getRowStride() != spmm.getFeatureWidth())
        spec.info["row_stride"] = std::to_string(spmm.getRowStride());
      graph = spmm.getGraph();
      elementType = spmm.getElementType();
      width = spmm.getFeatureWidth();
      schedule = spmm.getScheduleAttr();
    } else if (auto sddmm = dyn_cast<SddmmOp>(op)) {
      if (!sddmmEdges.empty())
        emitSddmmEdgeParallel(sddmm, sddmmEdges);
      else if (failed(emitSddmm(sddmm)))
        return failure();
      spec.info["op"] = "sddmm";
      spec.info["form"] = stringifySddmmForm(sddmm.getForm()).str();
      if (auto slope = sddmm.getLeakyReluAttr())
        spec.info["leaky_relu"] = std::to_string(slope.getValueAsDouble());
      graph = sddmm.getGraph();
      elementType = sddmm.getElementType();
      width = sddmm.getFeatureWidth();
      schedule = sddmm.getScheduleAttr();
    } else if (auto softmax = dyn_cast<EdgeSoftmaxOp>(op)) {
      if (failed(emitEdgeSoftmax(softmax)))
        return failure();
      spec.info["op"] = "edge_softmax";
      spec.info["heads"] = std::to_string(softmax.getNumHeads());
      graph = softmax.getGraph();
      elementType = softmax.getElementType();
      width = softmax.getNumHeads();
      schedule = softmax.getScheduleAttr();
    } else if (auto grad = dyn_cast<EdgeSoftmaxGradOp>(op)) {
      if (failed(emitEdgeSoftmaxGrad(grad)))
        return failure();
      spec.info["op"] = "edge_softmax_grad";
      spec.info["heads"] = std::to_string(grad.getNumHeads());
      graph = grad.getGraph();
      elementType = grad.getElementType();
      width = grad.getNumHeads();
      schedule = grad.getScheduleAttr();
    } else {
      return op.emitOpError() << "no CUDA emission pattern for this op";
    }
    spec.info["element_type"] = spellElement(elementType, &op)->tag.str();
    spec.info["feature_width"] = std::to_string(width);
    auto graphType = cast<GnnGraphType>(graph.getType());
    spec.info["offset_type"] =
        "i" + std::to_string(graphType.getOffsetType().getWidth());
    spec.info["index_type"] =
        "i" + std::to_string(graphType.getIndexType().getWidth());
    std::string text;
    llvm::raw_string_ostream stream(text);
    stream << schedule;
    spec.schedule = text;
  }
  os.unindent();
  os << "}\n\n";
  // A kernel of the same parameters that runs before or after this one.
  auto emitCompanion = [&](StringRef which, StringRef suffix,
                           function_ref<void()> body) {
    os << "// @" << module.getSymName() << "::@" << kernel.getSymName() << ", "
       << which << " kernel\n";
    os << "extern \"C\" __global__ void __launch_bounds__(" << launch.getBlock()
       << ")\n"
       << spec.name << suffix << "(";
    for (auto [i, d] : llvm::enumerate(decls))
      os << (i ? ", " : "") << d;
    os << ") {\n";
    os.indent();
    body();
    os.unindent();
    os << "}\n\n";
  };
  if (atomicSpmm)
    emitCompanion("first", "_init", [&] { emitSpmmInit(atomicSpmm); });
  else if (edgeParallel)
    emitCompanion("second", "_fixup", [&] { emitSpmmEdgeFixup(edgeParallel); });
  if (specs)
    specs->push_back(std::move(spec));
  return success();
}

LogicalResult CUDAEmitter::emitModule(ModuleOp module,
                                      std::vector<rt::KernelSpec> *specs) {
  bool any = false;
  WalkResult walk = module.walk([&](Operation *op) {
    if (isa<KernelOp>(op))
      any = true;
    if (isEdgeParallel(op) || isEdgeParallelSddmm(op))
      needsRowSearch = true;
    if (auto spmm = dyn_cast<SpmmOp>(op)) {
      if (failed(collectHelpers(spmm, spmm.getElementType())))
        return WalkResult::interrupt();
      // Padded rows store the last chunk element by element.
      auto plan = spmm->getAttrOfType<VertexPlanAttr>(kPlanAttrName);
      if (spmm.getFeatureWidth() % plan.getVectorWidth() != 0) {
        std::string tag = spellElement(spmm.getElementType(), spmm)->tag.str();
        helpers.insert({tag, int64_t{1}});
        if (spmm.getScheduleAttr().getWrite() == WriteMode::atomic)
          atomicHelpers.insert({tag, int64_t{1}});
      }
    }
    if (auto sddmm = dyn_cast<SddmmOp>(op))
      if (failed(collectHelpers(sddmm, sddmm.getElementType())))
        return WalkResult::interrupt();
    if (auto softmax = dyn_cast<EdgeSoftmaxOp>(op))
      if (failed(collectHelpers(softmax, softmax.getElementType())))
        return WalkResult::interrupt();
    if (auto grad = dyn_cast<EdgeSoftmaxGradOp>(op))
      if (failed(collectHelpers(grad, grad.getElementType())))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  if (!any)
    return module.emitError() << "no gnn.kernel to emit";

  os << "// Generated by gnnc. Do not edit.\n";
  if (headers.contains("f16"))
    os << "#include <cuda_fp16.h>\n";
  if (headers.contains("bf16"))
    os << "#include <cuda_bf16.h>\n";
  os << "\n";
  for (auto &[tag, vw] : helpers) {
    ElementSpelling e =
        tag == "f32" ? ElementSpelling{"float", "f32", ""}
        : tag == "f16"
            ? ElementSpelling{"__half", "f16", "__half2float"}
            : ElementSpelling{"__nv_bfloat16", "bf16", "__bfloat162float"};
    if (tag != "f32" && vw >= 2)
      emitUnpackHelper(e, vw);
    emitLoadHelper(e, vw);
    emitStoreHelper(e, vw);
    if (atomicHelpers.count({tag, vw}))
      emitAtomicAddHelper(e, vw);
  }
  if (needsRowSearch) {
    os << "// The merge path of a CSR graph lists, row by row, the row's "
          "edges\n";
    os << "// and then its end; the end of row i is item i + row_ptr[i + 1].\n";
    os << "// Finds, for items d0 and d1, the first row whose end is that "
          "item\n";
    os << "// or later (num_rows if none): the row the item belongs to. The\n";
    os << "// `Lanes` threads of a worker search together: each step probes\n";
    os << "// Lanes points of both ranges at once and keeps the piece "
          "between\n";
    os << "// the last probe before the answer and the first one at or after\n";
    os << "// it, so a search takes log_(Lanes+1)(num_rows) dependent loads.\n";
    os << "template <int Lanes, typename Offset>\n";
    os << "__device__ __forceinline__ void\n";
    os << "gnnc_merge_rows(const Offset *__restrict__ row_ptr, long long "
          "num_rows,\n";
    os << "                long long d0, long long d1, unsigned mask, int "
          "lane,\n";
    os << "                long long &i0, long long &i1) {\n";
    os.indent();
    os << "const unsigned group = Lanes == 32 ? 0xffffffffu : (1u << Lanes) - "
          "1u;\n";
    os << "const int base = threadIdx.x % 32 / Lanes * Lanes;\n";
    os << "long long lo[2] = {0, 0}, hi[2] = {num_rows, num_rows};\n";
    os << "const long long d[2] = {d0, d1};\n";
    os << "while (lo[0] < hi[0] || lo[1] < hi[1]) {\n";
    os.indent();
    os << "long long probe[2];\n";
    os << "bool before[2];\n";
    os << "#pragma unroll\n";
    os << "for (int s = 0; s < 2; ++s) {\n";
    os.indent();
    os << "probe[s] = lo[s] + (hi[s] - lo[s]) * (lane + 1) / (Lanes + 1);\n";
    os << "before[s] = lo[s] < hi[s] &&\n";
    os << "            probe[s] + (long long)row_ptr[probe[s] + 1] < d[s];\n";
    closeBlock(os);
    os << "#pragma unroll\n";
    os << "for (int s = 0; s < 2; ++s) {\n";
    os.indent();
    os << "// The end test is monotone, so the probes that pass are the "
          "first c.\n";
    os << "const int c = __popc((__ballot_sync(mask, before[s]) >> base) & "
          "group);\n";
    os << "const long long below =\n";
    os << "    __shfl_sync(mask, probe[s], c > 0 ? c - 1 : 0, Lanes);\n";
    os << "const long long above =\n";
    os << "    __shfl_sync(mask, probe[s], c < Lanes ? c : 0, Lanes);\n";
    os << "if (lo[s] < hi[s]) {\n";
    os << "  if (c > 0)\n";
    os << "    lo[s] = below + 1;\n";
    os << "  if (c < Lanes)\n";
    os << "    hi[s] = above;\n";
    os << "}\n";
    closeBlock(os);
    closeBlock(os);
    os << "i0 = lo[0];\n";
    os << "i1 = lo[1];\n";
    closeBlock(os);
    os << "\n";
  }
  for (auto gm : module.getOps<GnnModuleOp>())
    for (auto kernel : gm.getOps<KernelOp>())
      if (failed(emitKernel(gm, kernel, specs)))
        return failure();
  return success();
}

} // namespace

LogicalResult gnnc::translateToCUDA(ModuleOp module, raw_ostream &os,
                                    std::vector<rt::KernelSpec> *specs) {
  std::string text;
  llvm::raw_string_ostream buffer(text);
  CUDAEmitter emitter(buffer);
  if (failed(emitter.emitModule(module, specs)))
    return failure();
  os << text;
  return success();
}

void gnnc::registerToCUDATranslation() {
  TranslateFromMLIRRegistration reg(
      "gnn-to-cuda", "print lowered gnn IR as CUDA C++",
      [](Operation *op, raw_ostream &os) -> LogicalResult {
        auto module = dyn_cast<ModuleOp>(op);
        if (!module)
          return op->emitError() << "expected a builtin.module";
        return translateToCUDA(module, os);
      },
      [](DialectRegistry &registry) { registry.insert<GnnDialect>(); });
}
