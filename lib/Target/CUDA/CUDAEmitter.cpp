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

/// The names of a graph's parameters.
struct GraphParams {
  std::string rowPtr, colIdx, numRows;
};

class CUDAEmitter {
public:
  CUDAEmitter(raw_ostream &os) : os(os) {}

  LogicalResult emitModule(ModuleOp module, std::vector<rt::KernelSpec> *specs);

private:
  /// Notes the header of `op`'s element type; fails without a gnn.plan.
  LogicalResult collectHelpers(Operation *op, Type elementType);
  LogicalResult emitKernel(GnnModuleOp module, KernelOp kernel,
                           std::vector<rt::KernelSpec> *specs);
  /// What the printers of one gnn.spmm share.
  struct SpmmParts {
    PlanAttr plan;
    GraphParams graph;
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
    PlanAttr plan;
    KernelOp kernel;
    GraphParams graph;
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
  void emitEdgeWorkerPrologue(PlanAttr plan, const GraphParams &graph,
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
  void emitVertexPrologue(PlanAttr plan, const GraphParams &graph,
                          StringRef comment);
  /// Prints the cooperative neighbour loop head: the threads of a row load
  /// up to `lanes` column indices at once and pass them round; leaves the
  /// printer inside `for (int t ...)` with `col` defined. With
  /// `colNormParam`, each thread also loads the column factor of its index
  /// into `my_n`.
  void emitNeighbourLoopHead(PlanAttr plan, const GraphParams &graph,
                             StringRef indexType, StringRef valuesParam,
                             const ElementSpelling &e,
                             bool perEdgeOutput = false,
                             StringRef colNormParam = "",
                             bool declareRange = true);
  /// Prints `group_mask`: the bits of the `lanes` threads that share a row.
  void emitGroupMask(int64_t lanes);
  /// Name of the kernel parameter with `role` (and, for role input,
  /// `operand`); empty when the kernel has none.
  static StringRef paramName(KernelOp kernel, ParamRole role,
                             int32_t operand = 0);
  /// The names of the parameters of the graph the kernel's op reads.
  static GraphParams graphParams(KernelOp kernel);

  raw_indented_ostream os;
  /// The device headers (gnnc/cuda/*.cuh) the module's kernels call into.
  std::set<std::string> headers;
};

LogicalResult CUDAEmitter::collectHelpers(Operation *op, Type elementType) {
  auto plan = op->getAttrOfType<PlanAttr>(kPlanAttrName);
  if (!plan)
    return op->emitOpError()
           << "has no gnn.plan; run gnn-lower-to-kernels before printing";
  FailureOr<ElementSpelling> e = spellElement(elementType, op);
  if (failed(e))
    return failure();
  headers.insert(("gnnc/cuda/" + e->tag + ".cuh").str());
  return success();
}

StringRef CUDAEmitter::paramName(KernelOp kernel, ParamRole role,
                                 int32_t operand) {
  auto abi = kernel->getAttrOfType<ArrayAttr>(kAbiAttrName);
  for (auto param : abi.getAsRange<ParamAttr>())
    if (param.getRole() == role &&
        (role != ParamRole::Input || param.getOperand() == operand))
      return param.getName();
  return "";
}

GraphParams CUDAEmitter::graphParams(KernelOp kernel) {
  return {paramName(kernel, ParamRole::RowOffsets).str(),
          paramName(kernel, ParamRole::ColumnIndices).str(),
          paramName(kernel, ParamRole::NumRows).str()};
}

/// True when `op` scales each neighbour term by its column's factor.
static bool scalesColumns(SpmmOp op) {
  return op.getScale() == gnn::DegreeScale::right ||
         op.getScale() == gnn::DegreeScale::both;
}

void CUDAEmitter::emitVertexPrologue(PlanAttr plan, const GraphParams &graph,
                                     StringRef comment) {
  int64_t lanes = plan.getLanes();
  os << "// " << comment << ", vertex_parallel: " << lanes << " thread"
     << (lanes == 1 ? "" : "s") << " per row, " << plan.getRowsPerBlock()
     << " rows per block, " << plan.getVectorWidth() << " elements per load\n";
  os << "const long long row = (long long)blockIdx.x * "
     << plan.getRowsPerBlock() << " + threadIdx.x / " << lanes << ";\n";
  os << "const int lane = threadIdx.x % " << lanes << ";\n";
  os << "if (row >= " << graph.numRows << ")\n";
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
    PlanAttr plan, const GraphParams &graph, StringRef indexType,
    StringRef valuesParam, const ElementSpelling &e, bool perEdgeOutput,
    StringRef colNormParam, bool declareRange) {
  int64_t lanes = plan.getLanes();
  if (declareRange) {
    os << "const long long begin = " << graph.rowPtr << "[row];\n";
    os << "const long long end = " << graph.rowPtr << "[row + 1];\n";
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
  os << "my_col = " << graph.colIdx << "[base + lane];\n";
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
static void openChunkLoop(raw_indented_ostream &os, PlanAttr plan) {
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
         spmm.getScheduleAttr().getStrategy() == Strategy::EdgeParallel;
}

/// True when `op` is a gnn.spmm with neighbour groups.
static bool isNeighbourGroup(Operation *op) {
  auto spmm = dyn_cast<SpmmOp>(op);
  return spmm && spmm.getScheduleAttr() &&
         spmm.getScheduleAttr().getStrategy() == Strategy::NeighborGroup;
}

/// True when `op` is a gnn.sddmm that runs edge-parallel.
static bool isEdgeParallelSddmm(Operation *op) {
  auto sddmm = dyn_cast<SddmmOp>(op);
  return sddmm && sddmm.getScheduleAttr() &&
         sddmm.getScheduleAttr().getStrategy() == Strategy::EdgeParallel;
}

CUDAEmitter::OpNames CUDAEmitter::opNames(Operation *op, Value graph,
                                          Type elementType) {
  OpNames n;
  n.plan = op->getAttrOfType<PlanAttr>(kPlanAttrName);
  n.kernel = op->getParentOfType<KernelOp>();
  n.graph = graphParams(n.kernel);
  n.y = paramName(n.kernel, ParamRole::Result);
  n.e = *spellElement(elementType, op);
  return n;
}

CUDAEmitter::SpmmParts CUDAEmitter::spmmParts(SpmmOp op) {
  SpmmParts p;
  p.plan = op->getAttrOfType<PlanAttr>(kPlanAttrName);
  auto kernel = op->getParentOfType<KernelOp>();
  p.graph = graphParams(kernel);
  p.x = paramName(kernel, ParamRole::Input, 0);
  p.y = paramName(kernel, ParamRole::Result);
  p.colNorm = paramName(kernel, ParamRole::ColumnFactors);
  p.atomic = op.getScheduleAttr() &&
             op.getScheduleAttr().getValue().write == WriteMode::Atomic;
  p.sharedMerge = op.getScheduleAttr() &&
                  op.getScheduleAttr().getValue().write == WriteMode::Shared;
  p.groupPtr = paramName(kernel, ParamRole::GroupOffsets);
  p.groupRows = paramName(kernel, ParamRole::GroupRows);
  p.numGroups = paramName(kernel, ParamRole::NumGroups);
  p.numEdges = paramName(kernel, ParamRole::NumEdges);
  p.workspace = paramName(kernel, ParamRole::Workspace);
  p.e = *spellElement(op.getElementType(), op);
  p.values = paramName(kernel, ParamRole::EdgeValues);
  p.indexType =
      spellIndex(cast<GnnGraphType>(op.getGraph().getType()).getIndexType());
  p.width = op.getFeatureWidth();
  p.stride = op.getRowStride();
  p.vw = p.plan.getVectorWidth();
  p.accs = p.plan.getChunksPerLane() * p.vw;
  p.max = op.getReduce() == gnn::Reduce::max;
  p.packed = p.plan.getPacked();
  if (ScheduleAttr schedule = op.getScheduleAttr()) {
    p.half = schedule.getValue().accumulate == Accumulate::F16;
    p.disc = schedule.getValue().discBatch;
  }
  p.rowFactor = op.getReduce() == gnn::Reduce::mean ||
                op.getScale() == gnn::DegreeScale::left ||
                op.getScale() == gnn::DegreeScale::both;
  return p;
}

/// The row factor of `op` for a row of `deg` neighbours (an identifier):
/// 1/deg for mean times 1/sqrt(deg) for left scaling, 0 for an empty row.
static std::string rowScaleOf(SpmmOp op, StringRef deg) {
  bool mean = op.getReduce() == gnn::Reduce::mean;
  bool left = op.getScale() == gnn::DegreeScale::left ||
              op.getScale() == gnn::DegreeScale::both;
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
  const PlanAttr &plan = p.plan;
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
  os << "my_col[m] = t < n ? " << p.graph.colIdx << "[base + t] : 0;\n";
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
  bool mean = op.getReduce() == gnn::Reduce::mean;
  bool left = op.getScale() == gnn::DegreeScale::left ||
              op.getScale() == gnn::DegreeScale::both;
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
  emitVertexPrologue(p.plan, p.graph, "gnn.spmm");
  os << "const long long begin = " << p.graph.rowPtr << "[row];\n";
  os << "const long long end = " << p.graph.rowPtr << "[row + 1];\n";
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
  emitEdgeWorkerPrologue(p.plan, p.graph, p.numEdges, itemsPerWorker, comment,
                         /*search=*/true, beforeActive);
}

void CUDAEmitter::emitEdgeWorkerPrologue(PlanAttr plan,
                                         const GraphParams &graph,
                                         StringRef numEdges,
                                         int64_t itemsPerWorker,
                                         StringRef comment, bool search,
                                         StringRef beforeActive) {
  int64_t lanes = plan.getLanes();
  os << "// " << comment << "\n";
  os << "const long long worker = (long long)blockIdx.x * "
     << plan.getRowsPerBlock() << " + threadIdx.x / " << lanes << ";\n";
  os << "const int lane = threadIdx.x % " << lanes << ";\n";
  os << "const long long total = " << graph.numRows << " + " << numEdges
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
  os << "gnnc_merge_rows<" << lanes << ">(" << graph.rowPtr << ", "
     << graph.numRows << ", d0, d1, group_mask, lane, i0, i1);\n";
}

/// Prints the store of `acc` to workspace row `slotExpr` (f32, `width`
/// elements), or (with `load`) its combination into `acc`.
static void emitSlotLoop(raw_indented_ostream &os, PlanAttr plan, int64_t vw,
                         bool load, bool max) {
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
  int64_t items = p.plan.getItemsPerWorker();
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
  os << "const int rows_here = (int)(min(i1, " << p.graph.numRows
     << " - 1) - i0 + 1);\n";
  os << "for (int r = lane; r < rows_here; r += " << lanes << ")\n";
  os << "  ends[r] = (unsigned int)min((long long)" << p.graph.rowPtr
     << "[i0 + r + 1] - begin, 0xffffffffll);\n";
  os << "__syncwarp(group_mask);\n";
  os << "float acc[" << p.accs << "];\n";
  emitAccReset(p);
  emitPartDecl(p);
  if (p.scalesBatches()) {
    os << "// The row factor of row rr, for the batches of its pieces.\n";
    os << "auto batch_scale_of = [&](long long rr) {\n";
    os.indent();
    os << "const long long batch_deg = " << p.graph.rowPtr << "[rr + 1] - "
       << p.graph.rowPtr << "[rr];\n";
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
    os << "if (i1 < " << p.graph.numRows << ") {\n";
    os.indent();
    if (p.usesPart())
      emitFold(p, p.scalesBatches() ? "batch_scale_of(i1)" : "");
    emitAtomicPiece(op, p, "i1");
    closeBlock(os);
    return;
  }
  os << "// Row i1 goes on past d1: store this worker's piece of it (slot 0\n";
  os << "// if it began earlier, slot 1 if it began here).\n";
  os << "if (i1 < " << p.graph.numRows << ") {\n";
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
  os << "  split_rows[worker] = i1 < " << p.graph.numRows
     << " && !(i1 == i0 && worker > 0)"
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
                 "(long long)" + p.graph.rowPtr + "[row + 1] - (long long)" +
                     p.graph.rowPtr + "[row]");
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
  out << "  return rr == 0 ? 0ll : (rr - 1 + (long long)" << p.graph.rowPtr
      << "[rr]) / " << items << ";\n";
  out << "};\n";
  out << "auto ends_in = [&](long long rr) {\n";
  out << "  return (rr + (long long)" << p.graph.rowPtr << "[rr + 1]) / "
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
    os << "const long long piece_deg = " << p.graph.rowPtr
       << "[piece_row + 1] - " << p.graph.rowPtr << "[piece_row];\n";
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
  emitVertexPrologue(p.plan, p.graph,
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
  int64_t groupSize = p.plan.getGroupSize();
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
  os << "const long long row_begin = " << p.graph.rowPtr << "[row];\n";
  os << "const long long row_end = " << p.graph.rowPtr << "[row + 1];\n";
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
                 "(long long)" + p.graph.rowPtr + "[row + 1] - (long long)" +
                     p.graph.rowPtr + "[row]");
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
  int64_t items = p.plan.getItemsPerWorker();
  emitEdgeWorkerPrologue(
      p.plan, p.graph, p.numEdges, items,
      "gnn.spmm, edge_parallel fix-up: the worker in which a row began and "
      "which did not end it adds the row's pieces in worker order (the "
      "result does not depend on timing) and writes the row",
      /*search=*/false);
  emitSplitRows(p);
  os << "const long long row = split_rows[worker];\n";
  os << "if (row < 0)\n";
  os << "  return;\n";
  os << "const long long row_end = " << p.graph.rowPtr << "[row + 1];\n";
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
  emitSpmmFinish(op, p, "row_end - (long long)" + p.graph.rowPtr + "[row]");
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
  PlanAttr plan = names.plan;
  KernelOp kernel = names.kernel;
  const GraphParams &graph = names.graph;
  StringRef y = names.y;
  const ElementSpelling &e = names.e;
  StringRef a = paramName(kernel, ParamRole::Input, 0);
  StringRef b = paramName(kernel, ParamRole::Input, 1);
  StringRef indexType =
      spellIndex(cast<GnnGraphType>(op.getGraph().getType()).getIndexType());
  int64_t width = op.getFeatureWidth();
  int64_t vw = plan.getVectorWidth();
  int64_t lanes = plan.getLanes();
  int64_t cpl = plan.getChunksPerLane();
  int64_t regs = cpl * vw;
  int64_t batch = plan.getEdgeUnroll();
  int64_t window = lanes * batch;
  int64_t items = plan.getItemsPerWorker();
  bool ragged = plan.getChunks() % lanes != 0;
  bool dot = op.getForm() == gnn::SddmmForm::dot;
  std::string live =
      ragged ? " && chunk < " + std::to_string(plan.getChunks()) : "";
  StringRef toElement =
      e.tag == "f16" ? "__float2half_rn" : "__float2bfloat16_rn";

  // 16-bit vectors stay packed until they are used (half the registers).
  bool packed = plan.getPacked();
  StringRef raw = rawVectorType(vw * 2);
  emitEdgeWorkerPrologue(
      plan, graph, numEdges, items,
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
    os << "const int rows_here = (int)(min(i1, " << graph.numRows
       << " - 1) - i0 + 1);\n";
    os << "for (int q = lane; q < rows_here; q += " << lanes << ")\n";
    os << "  ends[q] = (unsigned int)min((long long)" << graph.rowPtr
       << "[i0 + q + 1] - begin, 0xffffffffll);\n";
    os << "__syncwarp(group_mask);\n";
  } else {
    // f32 (and scalar 16-bit) features: the row's features stay in
    // registers and are reloaded when an edge passes the row's end (read
    // from row_ptr, whose entries a stretch walks in order), which keeps
    // the batch of column loads as deep as SpMM's.
    os << "long long row_end = " << graph.rowPtr << "[i0 + 1];\n";
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
  os << "my_col[m] = t < n ? " << graph.colIdx << "[base + t] : 0;\n";
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
      os << "    row_end = " << graph.rowPtr << "[i0 + r + 1];\n";
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
  PlanAttr plan = names.plan;
  KernelOp kernel = names.kernel;
  const GraphParams &graph = names.graph;
  StringRef y = names.y;
  const ElementSpelling &e = names.e;
  StringRef a = paramName(kernel, ParamRole::Input, 0);
  StringRef b = paramName(kernel, ParamRole::Input, 1);
  int64_t width = op.getFeatureWidth();
  int64_t vw = plan.getVectorWidth();
  int64_t lanes = plan.getLanes();
  int64_t regs = plan.getChunksPerLane() * vw;
  bool dot = op.getForm() == gnn::SddmmForm::dot;

  emitVertexPrologue(plan, graph, dot ? "gnn.sddmm (dot)" : "gnn.sddmm (add)");
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
      plan, graph,
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
  PlanAttr plan = names.plan;
  KernelOp kernel = names.kernel;
  const GraphParams &graph = names.graph;
  StringRef y = names.y;
  const ElementSpelling &e = names.e;
  StringRef x = paramName(kernel, ParamRole::Input, 0);
  int64_t heads = op.getNumHeads();
  int64_t vw = plan.getVectorWidth();
  int64_t lanes = plan.getLanes();
  int64_t chunks = plan.getChunks();

  emitVertexPrologue(plan, graph,
                     "gnn.edge_softmax (" + std::to_string(heads) +
                         " heads per edge; a row's threads split its edges)");
  os << "const long long begin = " << graph.rowPtr << "[row];\n";
  os << "const long long end = " << graph.rowPtr << "[row + 1];\n";
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
  PlanAttr plan = names.plan;
  KernelOp kernel = names.kernel;
  const GraphParams &graph = names.graph;
  StringRef y = names.y;
  const ElementSpelling &e = names.e;
  StringRef out = paramName(kernel, ParamRole::Input, 0);
  StringRef grad = paramName(kernel, ParamRole::Input, 1);
  int64_t heads = op.getNumHeads();
  int64_t vw = plan.getVectorWidth();
  int64_t lanes = plan.getLanes();
  int64_t chunks = plan.getChunks();

  emitVertexPrologue(plan, graph,
                     "gnn.edge_softmax_grad (" + std::to_string(heads) +
                         " heads per edge; a row's threads split its edges)");
  os << "const long long begin = " << graph.rowPtr << "[row];\n";
  os << "const long long end = " << graph.rowPtr << "[row + 1];\n";
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

/// The runtime's launch rule of a #gnn.launch.
static rt::LaunchRule launchRule(LaunchAttr launch) {
  rt::LaunchRule rule;
  rule.blockX = static_cast<unsigned>(launch.getBlock());
  rule.grid.assign(launch.getGrid().begin(), launch.getGrid().end());
  rule.itemsPerBlock = static_cast<uint64_t>(launch.getPerBlock());
  rule.sharedBytes = static_cast<unsigned>(launch.getShared());
  rule.minBlocks = static_cast<uint64_t>(launch.getMinBlocks());
  return rule;
}

LogicalResult CUDAEmitter::emitKernel(GnnModuleOp module, KernelOp kernel,
                                      std::vector<rt::KernelSpec> *specs) {
  auto abi = kernel->getAttrOfType<ArrayAttr>(kAbiAttrName);
  auto launch = kernel->getAttrOfType<LaunchAttr>(kLaunchAttrName);
  if (!abi || !launch)
    return kernel.emitOpError()
           << "has no gnn.abi/gnn.launch; run gnn-lower-to-kernels "
              "before printing";

  rt::KernelSpec spec;
  auto entry = kernel->getAttrOfType<StringAttr>(kEntryAttrName);
  if (!entry)
    return kernel.emitOpError()
           << "has no gnn.entry; run gnn-lower-to-kernels before printing";
  spec.name = entry.str();
  spec.launch = launchRule(launch);
  for (auto [key, list] : {std::pair{kPreludesAttrName, &spec.preludes},
                           std::pair{kFollowUpsAttrName, &spec.followUps}})
    if (auto companions = kernel->getAttrOfType<ArrayAttr>(key))
      for (auto companion : companions.getAsRange<CompanionAttr>())
        list->push_back({spec.name + companion.getSuffix().str(),
                         launchRule(companion.getLaunch())});
  if (auto ws = kernel->getAttrOfType<WorkspaceAttr>(kWorkspaceAttrName)) {
    rt::WorkspaceRule rule;
    rule.count.assign(ws.getCount().begin(), ws.getCount().end());
    rule.itemsPerUnit = static_cast<uint64_t>(ws.getItemsPerUnit());
    rule.bytesPerUnit = static_cast<uint64_t>(ws.getBytesPerUnit());
    rule.minUnits = static_cast<uint64_t>(ws.getMinUnits());
    spec.workspace = rule;
  }

  // Parameter declarations, in the order of gnn.abi: kernel arguments and
  // results take their types from the kernel's signature, the parameters
  // the plan adds from their roles.
  SmallVector<std::string> decls;
  auto params = abi.getAsRange<ParamAttr>();
  auto next = params.begin();
  auto addParam = [&](std::string decl) {
    ParamAttr param = *next++;
    decls.push_back(decl + param.getName().str());
    spec.params.push_back({param.getName().str(), paramKindOf(param.getRole()),
                           param.getRole(), param.getOperand()});
  };
  for (Type type : kernel.getArgumentTypes()) {
    if (auto graph = dyn_cast<GnnGraphType>(type)) {
      addParam(
          ("const " + spellIndex(graph.getOffsetType()) + " *__restrict__ ")
              .str());
      addParam(("const " + spellIndex(graph.getIndexType()) + " *__restrict__ ")
                   .str());
      addParam("long long ");
      continue;
    }
    auto tensor = cast<RankedTensorType>(type);
    FailureOr<ElementSpelling> e =
        spellElement(tensor.getElementType(), kernel);
    if (failed(e))
      return failure();
    addParam(("const " + e->cType + " *__restrict__ ").str());
  }
  for (Type type : kernel.getResultTypes()) {
    FailureOr<ElementSpelling> e =
        spellElement(cast<RankedTensorType>(type).getElementType(), kernel);
    if (failed(e))
      return failure();
    addParam((e->cType + " *__restrict__ ").str());
  }
  for (; next != params.end();) {
    switch ((*next).getRole()) {
    case ParamRole::ColumnFactors:
      addParam("const float *__restrict__ ");
      break;
    case ParamRole::GroupOffsets:
      addParam("const long long *__restrict__ ");
      break;
    case ParamRole::GroupRows:
      addParam("const int *__restrict__ ");
      break;
    case ParamRole::Workspace:
      addParam("float *__restrict__ ");
      break;
    default: // the counts
      addParam("long long ");
      break;
    }
  }
  // The op's companion kernels.
  SpmmOp edgeParallel, atomicSpmm;
  std::string sddmmEdges;
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    if (isEdgeParallelSddmm(&op))
      sddmmEdges = paramName(kernel, ParamRole::NumEdges).str();
    auto spmm = dyn_cast<SpmmOp>(op);
    if (spmm && !spec.preludes.empty())
      atomicSpmm = spmm;
    else if (spmm && !spec.followUps.empty())
      edgeParallel = spmm;
  }

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
    if (auto spmm = dyn_cast<SpmmOp>(op)) {
      if (failed(emitSpmm(spmm)))
        return failure();
    } else if (auto sddmm = dyn_cast<SddmmOp>(op)) {
      if (!sddmmEdges.empty())
        emitSddmmEdgeParallel(sddmm, sddmmEdges);
      else if (failed(emitSddmm(sddmm)))
        return failure();
    } else if (auto softmax = dyn_cast<EdgeSoftmaxOp>(op)) {
      if (failed(emitEdgeSoftmax(softmax)))
        return failure();
    } else if (auto grad = dyn_cast<EdgeSoftmaxGradOp>(op)) {
      if (failed(emitEdgeSoftmaxGrad(grad)))
        return failure();
    } else {
      return op.emitOpError() << "no CUDA emission pattern for this op";
    }
    auto scheduled = cast<ScheduledOpInterface>(op);
    spec.op = scheduled.describe();
    spec.schedule = scheduled.getScheduleAttr().getValue();
    spec.atomicPieceEdges =
        op.getAttrOfType<PlanAttr>(kPlanAttrName).getAtomicPieceEdges();
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
      headers.insert("gnnc/cuda/merge_path.cuh");
    if (auto spmm = dyn_cast<SpmmOp>(op))
      if (failed(collectHelpers(spmm, spmm.getElementType())))
        return WalkResult::interrupt();
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
  os << "// The helpers these kernels call are gnnc's CUDA headers\n"
        "// (runtime/include/gnnc/cuda), which gnnc's runtime hands to NVRTC;\n"
        "// to compile this file elsewhere, add -I <gnnc>/runtime/include.\n";
  for (const std::string &header : headers)
    os << "#include \"" << header << "\"\n";
  os << "\n";
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
