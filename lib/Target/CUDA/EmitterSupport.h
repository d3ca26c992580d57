//===- EmitterSupport.h - What the CUDA emission patterns share -*- C++ -*-===//
//
// The pieces every emission pattern prints with: the indenting printer, the
// CUDA spellings of element and index types and of the device helpers'
// names, the kernel's parameters by role, one op's facts read once from the
// IR (OpContext), and the printing pieces several patterns share
// (BodyPrinter): the vertex prologue, the worker prologue of the merge path,
// the neighbour loop head, chunk loops and row reductions.
//
// Nothing here decides anything: it prints what the op's description
// (gnnc::OpDesc), its thread mapping (gnnc::ThreadMapping, from gnn.plan)
// and its schedule say.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_LIB_TARGET_CUDA_EMITTERSUPPORT_H
#define GNNC_LIB_TARGET_CUDA_EMITTERSUPPORT_H

#include "gnnc/Plan/Abi.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/Plan/Schedule.h"
#include "gnnc/Plan/Types.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/IndentedOstream.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace gnnc::ExportCUDA {

/// The printer of every pattern: indents each line it starts.
using Printer = mlir::raw_indented_ostream;

//===----------------------------------------------------------------------===//
// Spellings
//===----------------------------------------------------------------------===//

/// The CUDA spelling of an element type.
struct ElementSpelling {
  /// The C type: "__half".
  llvm::StringRef cType;
  /// The tag of its helpers and header: "f16" (gnnc_load_f16x8,
  /// gnnc/cuda/f16.cuh).
  llvm::StringRef tag;
  /// One element to a float and back: "__half2float", "__float2half_rn"
  /// (empty for f32).
  llvm::StringRef toFloat;
  llvm::StringRef fromFloat;
};
const ElementSpelling &spellElement(ElementType type);

/// The include name of the helpers of `type`: "gnnc/cuda/f16.cuh".
std::string elementHeader(ElementType type);
/// The include name of the merge-path search, gnnc_merge_rows.
inline constexpr const char *kMergePathHeader = "gnnc/cuda/merge_path.cuh";
/// The include name of the batched strategy's staging, gnnc_stage_rows.
inline constexpr const char *kBatchedHeader = "gnnc/cuda/batched.cuh";
/// The include name of gnn.spmm's attention weights, gnnc_softmax_add.
inline constexpr const char *kAttentionHeader = "gnnc/cuda/attention.cuh";
/// The include name of several sums across a worker's threads,
/// gnnc_lane_sums.
inline constexpr const char *kLaneSumsHeader = "gnnc/cuda/lane_sums.cuh";
/// The include name of neighbor_group's row test,
/// gnnc_group_row_in_one_block.
inline constexpr const char *kNeighborGroupsHeader =
    "gnnc/cuda/neighbor_groups.cuh";
/// The include name of the batched linear epilogue, gnnc_batched_linear.
inline constexpr const char *kBatchedLinearHeader =
    "gnnc/cuda/batched_linear.cuh";

/// The C type of a graph index: "long long" or "int".
llvm::StringRef spellIndex(bool is64);

/// The unsigned vector type that moves `bytes` bytes in one load ("uint4"
/// for 16).
llvm::StringRef rawVectorType(int64_t bytes);

/// The name of a vector helper of the element headers,
/// `gnnc_<verb>_<tag>x<vw>`: gnnc_load_f16x8.
struct VectorHelper {
  llvm::StringRef verb;
  llvm::StringRef tag;
  int64_t vw;
};
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const VectorHelper &h);

/// A CUDA float literal: 1.5f, 2.0f, 1e-05f.
struct FloatLiteral {
  double value;
};
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, FloatLiteral literal);

//===----------------------------------------------------------------------===//
// The op and its kernel
//===----------------------------------------------------------------------===//

/// A kernel's parameters (gnn.abi), found by role.
class KernelParams {
public:
  struct Param {
    std::string name;
    ParamRole role;
    /// The op's input, for role Input.
    int32_t operand = 0;
  };

  KernelParams() = default;
  explicit KernelParams(std::vector<Param> params)
      : params(std::move(params)) {}

  /// The name of the parameter with `role` (with role Input, the one of
  /// input `operand`); empty when the kernel has none.
  llvm::StringRef name(ParamRole role, int32_t operand = 0) const;

private:
  std::vector<Param> params;
};

/// The names of the parameters of the graph the op reads.
struct GraphParams {
  std::string rowPtr, colIdx, numRows;
};

/// One lowered op as an emission pattern sees it: the facts of the IR read
/// once into plain C++, and the printer to print its kernels with.
struct OpContext {
  OpContext(Printer &os, mlir::Operation *op, const OpDesc &desc,
            const ThreadMapping &plan, const Schedule &schedule,
            KernelParams params);

  Printer &os;
  /// The op, for diagnostics.
  mlir::Operation *op;
  /// What the op computes (its describe()).
  OpDesc desc;
  /// How its threads map onto the work (its gnn.plan).
  ThreadMapping plan;
  Schedule schedule;
  KernelParams params;
  GraphParams graph;
  const ElementSpelling &e;

  /// The names of the result and of input `operand`.
  llvm::StringRef result() const { return params.name(ParamRole::Result); }
  llvm::StringRef input(int32_t operand) const {
    return params.name(ParamRole::Input, operand);
  }
  /// The C type of the graph's column indices.
  llvm::StringRef indexType() const { return spellIndex(desc.indices64); }
};

//===----------------------------------------------------------------------===//
// Printing pieces
//===----------------------------------------------------------------------===//

/// The printing pieces several patterns share. A pattern prints its bodies
/// with a subclass.
class BodyPrinter {
public:
  explicit BodyPrinter(const OpContext &c);

protected:
  /// Ends a block: unindents and prints `}`.
  void closeBlock();

  /// The row and lane of a vertex-parallel thread, after a comment that
  /// starts with `what`; rows past the graph return.
  void vertexPrologue(llvm::StringRef what);
  /// `begin` and `end`: the range of the row's edges.
  void rowRange();
  /// `group_mask`: the bits of the threads that share a row (or worker).
  void groupMask();
  /// Opens a loop over the vector chunks a lane owns (`chunk`), stopping at
  /// the last chunk of a ragged row (or column block).
  void openChunkLoop();
  /// `chunk`, the row's chunk of the lane's trip `k`: `lane + k * lanes`,
  /// after the column block's first chunk `chunk0` when the row is cut
  /// into column blocks (the batched strategy); and the test that it is
  /// past the end of the row or column block (`chunk_end`), when some are.
  void printChunk();
  llvm::StringRef chunkBound() const;
  /// The windows of a row's neighbours: `for (base ...)` over the row (or,
  /// with `ownRange`, the caller's [begin, end)) in windows of `lanes`, with
  /// `n` the window's edges, lane t's column index `my_col` and `my_out`
  /// (one value per edge, written by lane t). Leaves the printer inside
  /// the window loop.
  void neighbourWindowHead(bool ownRange = false);
  /// The cooperative neighbour loop of a row: the threads of the row load up
  /// to `lanes` column indices at once and pass them round. Leaves the
  /// printer inside `for (int t ...)` with `col` defined and `my_out` (one
  /// value per edge, written by lane t) declared outside it. With
  /// `ownRange`, the caller has defined `begin` and `end` (a group of the
  /// row's edges); otherwise the loop covers the whole row (rowRange).
  void neighbourLoopHead(bool ownRange = false);

  /// The opening of an edge_parallel kernel (after `comment`): `worker`,
  /// `lane`, `workers` for merge-path stretches of `items` each and, with
  /// `search`, the worker's stretch [d0, d1) and the rows i0..i1 it
  /// touches. Idle workers return, unless `beforeActive` is given: then it
  /// is printed after `workers` and the rest runs inside
  /// `if (worker < workers) {`, which the caller closes.
  void edgeWorkerPrologue(int64_t items, llvm::StringRef comment, bool search,
                          llvm::function_ref<void()> beforeActive = nullptr);

  /// Combines every thread's `var[h]` (h < the op's heads) across the
  /// threads of a row: with fmaxf when `max`, by addition otherwise.
  void rowReduce(llvm::StringRef var, bool max);
  /// Opens the loop over this lane's share of the row's edges: `edge` from
  /// `begin + lane` in steps of the row's lanes.
  void openLaneEdgeLoop();
  /// `statement` (with its `;`) for every head `h` of the op, unrolled.
  void forEachHead(llvm::StringRef statement);
  /// Stores the heads `from[0, heads)` of edge `edge` to the result, a
  /// vector chunk at a time.
  void storeEdgeHeads(llvm::StringRef from);
  /// `v = leaky_relu(v)` with the op's slope, if it has one.
  void leakyRelu(llvm::StringRef v);

  /// The element helpers of the op's element type.
  VectorHelper load(int64_t vw) const { return {"load", e.tag, vw}; }
  VectorHelper store(int64_t vw) const { return {"store", e.tag, vw}; }
  VectorHelper unpack(int64_t vw) const { return {"unpack", e.tag, vw}; }
  VectorHelper atomicAdd(int64_t vw) const { return {"atomic_add", e.tag, vw}; }

  const OpContext &c;
  Printer &os;
  const OpDesc &desc;
  const ThreadMapping &plan;
  const GraphParams &graph;
  const ElementSpelling &e;

private:
  /// The row's chunk count, as printed.
  std::string chunkCount;
};

} // namespace gnnc::ExportCUDA

#endif // GNNC_LIB_TARGET_CUDA_EMITTERSUPPORT_H
