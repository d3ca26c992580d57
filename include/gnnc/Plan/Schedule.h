//===- Schedule.h - How a gnnc op runs on a GPU -----------------*- C++ -*-===//
//
// One schedule type for the whole project: the `#gnn.schedule<...>`
// attribute holds a Schedule, the tuner ranks and stores Schedules, the
// benchmark runs them. Its one text form is the attribute's own syntax,
// `#gnn.schedule<strategy = edge_parallel, vector_width = 4>`: fields in
// declaration order, those at their default left out. The field table
// below is the single list of fields, their spellings and defaults; the
// IR's parser and printer, the text form and the tuning database all go
// through it. Plain C++, no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_PLAN_SCHEDULE_H
#define GNNC_PLAN_SCHEDULE_H

#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace gnnc {

/// How the work of an op is spread over threads.
enum class Strategy {
  VertexParallel,
  NeighborGroup,
  EdgeParallel,
  Sliced,
  Batched,
  TileRouted
};
/// Precision of running sums.
enum class Accumulate { F32, F16 };
/// How partial results of rows split between workers reach memory.
enum class WriteMode { Direct, Atomic, Staged, Shared };
/// The arithmetic of a tile_routed gnn.segment_matmul: open (the plan
/// chooses), SIMT (exact f32 products and sums) or tensor cores (mma.sync:
/// TF32 inputs for f32, f16/bf16 inputs, f32 accumulation).
/// tensor_core: mma.sync (sm_80 and later); wgmma: Hopper's warpgroup
/// instructions (sm_90a only: the kernel needs the arch-specific target).
enum class MathMode { Auto, Simt, TensorCore, Wgmma };

/// Whether `math` runs on tensor cores (mma.sync or wgmma).
inline bool onTensorCores(MathMode math) {
  return math == MathMode::TensorCore || math == MathMode::Wgmma;
}

/// IR spellings ("vertex_parallel", "f16", "staged", ...).
const char *strategyName(Strategy strategy);
const char *accumulateName(Accumulate accumulate);
const char *writeModeName(WriteMode write);
const char *mathModeName(MathMode math);
std::optional<Strategy> parseStrategy(const std::string &name);
std::optional<Accumulate> parseAccumulate(const std::string &name);
std::optional<WriteMode> parseWriteMode(const std::string &name);
std::optional<MathMode> parseMathMode(const std::string &name);

/// Every schedule parameter gnnc knows; 0 (or the enum's first value) means
/// "let gnnc choose" (completeSchedule in Plan.h fills it in).
struct Schedule {
  Strategy strategy = Strategy::VertexParallel;
  /// Elements per vector load (1, 2, 4, 8).
  int32_t vectorWidth = 0;
  /// Neighbours per discretized-reduction batch (HalfGNN; 0 = none).
  int32_t discBatch = 0;
  /// Neighbours per neighbour group (GNNAdvisor).
  int32_t groupSize = 0;
  /// Threads sharing one row (or group, or worker) along the features.
  int32_t dimWorkers = 0;
  int32_t threadsPerBlock = 0;
  /// Merge-path items (edges plus row ends) per edge_parallel worker.
  int32_t edgesPerWarp = 0;
  /// Non-zeros per slice of sliced CSR (PiPAD).
  int32_t sliceSize = 0;
  /// Route segmented-matmul tiles through a table (FASTEN).
  bool tileRouting = false;
  Accumulate accumulate = Accumulate::F32;
  WriteMode write = WriteMode::Direct;
  /// Blocks that must fit on one SM (a register cap); 0 = no cap.
  int32_t blocksPerSm = 0;
  /// batched: most nodes whose feature rows (of one column block) a block
  /// stages in shared memory; a larger graph is gathered from global
  /// memory. tile_routed: most rows of one type per tile of the routing
  /// table.
  int32_t tileRows = 0;
  /// batched: most consecutive graphs one block takes (gnn.spmm: those
  /// that fit its tile, up to this many).
  int32_t graphsPerBlock = 0;
  /// tile_routed: SIMT or tensor-core arithmetic ("auto" = choose).
  MathMode math = MathMode::Auto;
  /// tile_routed with math = tensor_core: the shared-memory buffers of the
  /// cp.async pipeline (2 to 4): the loads of stages - 1 K steps are in
  /// flight while one is multiplied.
  int32_t stages = 0;
  /// Neighbours whose feature loads a thread issues before it uses the
  /// first (1, 2, 4 or 8; 0 = as many as kMaxPrefetchRegisters allow).
  /// Fewer cost fewer registers: more rows in flight per SM.
  int32_t edgeBatch = 0;

  bool operator==(const Schedule &o) const;
  bool operator!=(const Schedule &o) const { return !(*this == o); }

  /// The text form, `#gnn.schedule<...>`.
  std::string str() const;
};

/// The fields of a Schedule, in declaration (and printing) order.
enum class ScheduleField {
  Strategy,
  VectorWidth,
  DiscBatch,
  GroupSize,
  DimWorkers,
  ThreadsPerBlock,
  EdgesPerWarp,
  SliceSize,
  TileRouting,
  Accumulate,
  Write,
  BlocksPerSm,
  TileRows,
  GraphsPerBlock,
  Math,
  Stages,
  EdgeBatch
};
constexpr size_t kNumScheduleFields = 17;

/// The field's name in the text form ("vector_width").
const char *scheduleFieldName(ScheduleField field);
std::optional<ScheduleField> parseScheduleFieldName(const std::string &name);
/// The value of `field` as the text form spells it ("4", "edge_parallel",
/// "true").
std::string scheduleFieldValue(const Schedule &s, ScheduleField field);
/// Whether `field` holds its default (and is left out of the text form).
bool isDefaultField(const Schedule &s, ScheduleField field);
/// Sets `field` from its spelling; the error says what the field takes.
Status setScheduleField(Schedule &s, ScheduleField field,
                        const std::string &value);

/// The fields that differ from their defaults, `key = value` joined by ", "
/// (the text between `#gnn.schedule<` and `>`).
std::string scheduleBody(const Schedule &s);
/// Parses the text form, `#gnn.schedule<...>`, or its body alone. Fields
/// may come in any order, each at most once.
Expected<Schedule> parseSchedule(const std::string &text);

/// The rules on a schedule's own fields, whatever the op: ranges, powers
/// of two, fields that belong to another strategy. The verifier of
/// `#gnn.schedule` calls it.
Status checkScheduleFields(const Schedule &s);

} // namespace gnnc

#endif // GNNC_PLAN_SCHEDULE_H
