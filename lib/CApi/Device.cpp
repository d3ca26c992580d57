//===- Device.cpp - The C interface's contexts, graphs and launches -------===//
//
// A context is a gnnc::rt::Runtime (the device's primary context, the
// kernel cache) plus the tuning options (Context.h); graphs and kernels
// keep it alive.
// Every call on a context, its graphs and their kernels holds the context's
// lock. Launches go through the host ops of gnnc/ops on borrowed buffers.
//
//===----------------------------------------------------------------------===//
#include "Context.h"
#include "Support.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/Limits.h"
#include "gnnc/Plan/OpText.h"
#include "gnnc/Plan/Schedule.h"
#include "gnnc/Tuning/SnapshotGroups.h"
#include "gnnc/Tuning/TunedCompile.h"
#include "gnnc/graph/Csr.h"
#include "gnnc/graph/Snapshots.h"
#include "gnnc/ops/Backward.h"
#include "gnnc/ops/EdgeSoftmax.h"
#include "gnnc/ops/KernelInfo.h"
#include "gnnc/ops/Sddmm.h"
#include "gnnc/ops/Snapshots.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/reference/Backward.h"
#include "gnnc/runtime/Runtime.h"

#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

using namespace gnnc;
using namespace gnnc::capi;

namespace {

/// A snapshot group one way round (as given, or transposed): the host
/// split, its device copy and the snapshots' column factors by exponent,
/// uploaded on first use.
struct SnapshotSide {
  graph::SnapshotGroup host;
  ops::DeviceSnapshotGroup device;
  std::map<double, rt::DeviceBuffer> columnFactors;
};

} // namespace

struct gnnc_kernel_s {
  /// The graph the kernel runs over, or (for a multi-snapshot spmm) the
  /// snapshot group and the side of it.
  gnnc_graph_s *graph = nullptr;
  gnnc_snapshot_group_s *group = nullptr;
  SnapshotSide *side = nullptr;
  /// What the kernel computes, as compiled.
  OpDesc op;
  rt::LoadedKernel loaded;
  std::string schedule;
  std::string source;
};

struct gnnc_graph_s {
  std::shared_ptr<ContextState> context;
  graph::CsrGraph host;
  /// The caller's arrays, borrowed; neighbour groups built on first use.
  ops::DeviceGraph device;
  /// Column factors by exponent, uploaded on first use.
  std::map<double, rt::DeviceBuffer> columnFactors;
  /// Kernels by their .gnn text and how the schedule was given.
  std::map<std::string, std::unique_ptr<gnnc_kernel_s>> kernels;
  /// The profiles tuning made of `host`, for the next ops tuned on it.
  graph::ProfileCache profiles;
};

struct gnnc_snapshot_group_s {
  /// Null for a host-only group (no kernels).
  std::shared_ptr<ContextState> context;
  std::string name;
  /// The group as given (uploaded with a context) and its transpose, made
  /// on the first request of a transposed kernel.
  SnapshotSide forward;
  std::unique_ptr<SnapshotSide> transposed;
  /// Kernels by their .gnn text, how the schedule was given and the side.
  std::map<std::string, std::unique_ptr<gnnc_kernel_s>> kernels;
};

namespace {

/// The kernel behind `kernel`, checked to compute `kind`, with its graph
/// locked; the error names what was wrong.
struct Launch {
  gnnc_kernel_s *kernel = nullptr;
  gnnc_graph_s *graph = nullptr;
  std::optional<ContextLock> lock;
};
Status beginLaunch(gnnc_kernel kernel, OpKind kind, Launch &launch) {
  GNNC_RETURN_IF_ERROR(requireNonNull(kernel, "kernel"));
  if (!kernel->graph)
    return Status::error("the kernel aggregates a snapshot group; launch it "
                         "with gnnc_snapshot_spmm");
  if (kernel->op.kind != kind)
    return Status::error(std::string("the kernel computes ") +
                         opKindName(kernel->op.kind) + ", not " +
                         opKindName(kind));
  launch.kernel = kernel;
  launch.graph = kernel->graph;
  launch.lock.emplace(*launch.graph->context);
  return launch.lock->status;
}

/// The column factors deg_in(c)^-exponent of every snapshot of `side`,
/// uploaded on first use.
Expected<const rt::DeviceBuffer *> snapshotColumnFactors(SnapshotSide &side,
                                                         double exponent) {
  auto found = side.columnFactors.find(exponent);
  if (found == side.columnFactors.end()) {
    Expected<rt::DeviceBuffer> uploaded =
        ops::uploadSnapshotColumnNorm(side.host, exponent);
    if (!uploaded)
      return uploaded.status().withContext(
          "uploading the snapshots' column factors");
    found = side.columnFactors.emplace(exponent, uploaded.take()).first;
  }
  return &found->second;
}

/// The series of the host CSRs of gnnc_snapshot_group_create (each
/// snapshot's arrays checked for presence here, its CSR rules and row order
/// by the caller's overlapGroup or validate); errors name the series
/// (`name`) and the snapshot.
Expected<graph::SnapshotSeries>
snapshotSeriesOf(const std::string &name, int64_t numNodes, int64_t snapshots,
                 const int64_t *const *rowPtrs, const int32_t *const *colIdxs,
                 const int64_t *nnzs) {
  GNNC_RETURN_IF_ERROR(checkNodeCount(name + ": ", numNodes));
  if (snapshots < 0)
    return Status::error(name + ": num_snapshots is " +
                         std::to_string(snapshots) + ", a negative count");
  GNNC_RETURN_IF_ERROR(requireNonNull(rowPtrs, "host_row_ptrs"));
  GNNC_RETURN_IF_ERROR(requireNonNull(colIdxs, "host_col_idxs"));
  GNNC_RETURN_IF_ERROR(requireNonNull(nnzs, "nnzs"));
  graph::SnapshotSeries series;
  series.numNodes = numNodes;
  series.name = name;
  series.snapshots.reserve(static_cast<size_t>(snapshots));
  for (int64_t s = 0; s < snapshots; ++s) {
    const std::string where = name + ": snapshot " + std::to_string(s);
    const std::string at = "[" + std::to_string(s) + "]";
    if (!rowPtrs[s])
      return Status::error(where + ": host_row_ptrs" + at + " is NULL");
    if (nnzs[s] < 0)
      return Status::error(where + ": nnzs" + at + " is negative (" +
                           std::to_string(nnzs[s]) + ")");
    if (nnzs[s] > 0 && !colIdxs[s])
      return Status::error(where + ": host_col_idxs" + at + " is NULL, for " +
                           std::to_string(nnzs[s]) + " edges");
    graph::CsrGraph g;
    g.name = name + at;
    g.numRows = g.numCols = numNodes;
    g.rowPtr.assign(rowPtrs[s], rowPtrs[s] + numNodes + 1);
    if (nnzs[s] > 0)
      g.colIdx.assign(colIdxs[s], colIdxs[s] + nnzs[s]);
    series.snapshots.push_back(std::move(g));
  }
  return series;
}

/// The snapshot group of the host CSRs of gnnc_snapshot_group_create,
/// checked; errors name the group (`name`) and the snapshot.
Expected<graph::SnapshotGroup>
snapshotGroupOf(const std::string &name, int64_t numNodes, int64_t snapshots,
                const int64_t *const *rowPtrs, const int32_t *const *colIdxs,
                const int64_t *nnzs) {
  if (snapshots < 1 || snapshots > limits::kMaxSnapshots)
    return Status::error(name + ": num_snapshots is " +
                         std::to_string(snapshots) + "; a group holds 1 to " +
                         std::to_string(limits::kMaxSnapshots) + " snapshots");
  Expected<graph::SnapshotSeries> series =
      snapshotSeriesOf(name, numNodes, snapshots, rowPtrs, colIdxs, nnzs);
  if (!series)
    return series.status();
  // overlapGroup checks the snapshots' CSR rules and sorted, unique rows
  // (SnapshotSeries::validate's, each error naming the snapshot) before it
  // splits them.
  return graph::overlapGroup(*series, 0, snapshots);
}

} // namespace

extern "C" {

//===----------------------------------------------------------------------===//
// Contexts
//===----------------------------------------------------------------------===//

gnnc_status gnnc_context_create(int device, const char *cache_dir,
                                const char *tuning_db, gnnc_context *out) {
  return guarded("gnnc_context_create", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(out, "out"));
    *out = nullptr;
    Expected<rt::Runtime> runtime =
        rt::Runtime::create(device, cache_dir ? cache_dir : "");
    if (!runtime)
      return runtime.status();
    auto state = std::make_shared<ContextState>(runtime.take());
    state->tuning.arch = state->runtime.device().archString();
    std::string db = tuning_db ? tuning_db : "";
    state->tuning.useDatabase = db != "off";
    if (state->tuning.useDatabase)
      state->tuning.databasePath = db;
    *out = new gnnc_context_s{std::move(state)};
    return Status::ok();
  });
}

gnnc_status gnnc_context_set_measure(gnnc_context ctx, int measure_top_k) {
  return guarded("gnnc_context_set_measure", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(ctx, "ctx"));
    if (measure_top_k < 0 || measure_top_k > 64)
      return Status::error("measure_top_k must be 0 to 64, got " +
                           std::to_string(measure_top_k));
    ContextState &context = *ctx->state;
    ContextLock lock(context);
    GNNC_RETURN_IF_ERROR(lock.status);
    context.tuning.runtime = measure_top_k > 0 ? &context.runtime : nullptr;
    context.tuning.measureTopK = static_cast<size_t>(measure_top_k);
    return Status::ok();
  });
}

void gnnc_context_destroy(gnnc_context ctx) {
  try {
    delete ctx;
  } catch (...) {
  }
}

gnnc_status gnnc_context_device(gnnc_context ctx, char *name, size_t name_size,
                                char *arch, size_t arch_size) {
  return guarded("gnnc_context_device", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(ctx, "ctx"));
    const rt::Device &device = ctx->state->runtime.device();
    GNNC_RETURN_IF_ERROR(copyOut(device.name(), name, name_size, "name"));
    return copyOut(device.archString(), arch, arch_size, "arch");
  });
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

gnnc_status gnnc_graph_create(gnnc_context ctx, const char *name,
                              int64_t num_rows, int64_t num_cols, int64_t nnz,
                              const int64_t *host_row_ptr,
                              const int32_t *host_col_idx,
                              gnnc_buffer dev_row_ptr, gnnc_buffer dev_col_idx,
                              gnnc_graph *out) {
  return guarded("gnnc_graph_create", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(out, "out"));
    *out = nullptr;
    GNNC_RETURN_IF_ERROR(requireNonNull(ctx, "ctx"));
    auto g = std::make_unique<gnnc_graph_s>();
    g->context = ctx->state;
    graph::CsrGraph &host = g->host;
    host.name = name && *name ? name : "graph";
    if (num_rows < 0 || num_cols < 0 || nnz < 0)
      return Status::error(host.name + ": negative size (" +
                           std::to_string(num_rows) + " rows, " +
                           std::to_string(num_cols) + " columns, " +
                           std::to_string(nnz) + " non-zeros)");
    GNNC_RETURN_IF_ERROR(requireNonNull(host_row_ptr, "host_row_ptr"));
    if (nnz > 0)
      GNNC_RETURN_IF_ERROR(requireNonNull(host_col_idx, "host_col_idx"));
    host.numRows = num_rows;
    host.numCols = num_cols;
    host.rowPtr.assign(host_row_ptr, host_row_ptr + num_rows + 1);
    if (nnz > 0)
      host.colIdx.assign(host_col_idx, host_col_idx + nnz);
    GNNC_RETURN_IF_ERROR(host.validate());
    // The device arrays: int64 offsets and int32 indices.
    const uint64_t rowPtrBytes = static_cast<uint64_t>(num_rows + 1) * 8;
    const uint64_t colIdxBytes = static_cast<uint64_t>(nnz) * 4;
    if (dev_row_ptr.bytes < rowPtrBytes || dev_row_ptr.address == 0)
      return Status::error(
          host.name + ": dev_row_ptr has " + std::to_string(dev_row_ptr.bytes) +
          " bytes at address " + std::to_string(dev_row_ptr.address) +
          ", the graph's " + std::to_string(num_rows + 1) +
          " int64 row offsets need " + std::to_string(rowPtrBytes));
    if (dev_col_idx.bytes < colIdxBytes ||
        (dev_col_idx.address == 0 && colIdxBytes > 0))
      return Status::error(
          host.name + ": dev_col_idx has " + std::to_string(dev_col_idx.bytes) +
          " bytes at address " + std::to_string(dev_col_idx.address) +
          ", the graph's " + std::to_string(nnz) +
          " int32 column indices need " + std::to_string(colIdxBytes));
    ops::DeviceGraph &device = g->device;
    device.rowPtr = rt::DeviceBuffer::borrow(dev_row_ptr.address, rowPtrBytes);
    device.colIdx = rt::DeviceBuffer::borrow(dev_col_idx.address, colIdxBytes);
    device.numRows = num_rows;
    device.numCols = num_cols;
    device.nnz = nnz;
    device.offsets64 = true;
    device.indices64 = false;
    device.hostRowPtr = host.rowPtr;
    *out = g.release();
    return Status::ok();
  });
}

void gnnc_graph_destroy(gnnc_graph graph) {
  if (!graph)
    return;
  try {
    // Derived device arrays are freed in the context's lock, with the
    // context kept alive by the graph.
    std::shared_ptr<ContextState> context = graph->context;
    ContextLock lock(*context);
    delete graph;
  } catch (...) {
  }
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

gnnc_status gnnc_kernel_get(gnnc_graph graph, const gnnc_op_desc *desc,
                            const char *schedule, gnnc_kernel *out) {
  return guarded("gnnc_kernel_get", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(out, "out"));
    *out = nullptr;
    GNNC_RETURN_IF_ERROR(requireNonNull(graph, "graph"));
    Expected<OpDesc> op = toOpDesc(desc, "desc");
    if (!op)
      return op.status();
    std::optional<Schedule> written;
    if (schedule) {
      Expected<Schedule> s = parseSchedule(schedule);
      if (!s)
        return s.status();
      written = *s;
    }
    const std::string kernelName = opKindKey(op->kind);
    const std::string text = opModuleText("gnnc", kernelName, *op, written);
    const std::string key = text + (written ? "written" : "chosen");
    ContextState &context = *graph->context;
    ContextLock lock(context);
    GNNC_RETURN_IF_ERROR(lock.status);
    if (auto found = graph->kernels.find(key); found != graph->kernels.end()) {
      *out = found->second.get();
      return Status::ok();
    }
    tuning::TuningChoices choices;
    tuning::TunedCompileOptions tuningOptions = context.tuning;
    tuningOptions.profiles = &graph->profiles;
    Expected<CompiledModule> compiled =
        written ? compileGnn(text, "gnnc_kernel")
                : tuning::compileForGraph(text, "gnnc_kernel", graph->host,
                                          tuningOptions, &choices);
    if (!compiled)
      return compiled.status();
    if (compiled->kernels.size() != 1)
      return Status::error(
          "compiling one " + std::string(opKindName(op->kind)) + " gave " +
          std::to_string(compiled->kernels.size()) + " kernels");
    const rt::KernelSpec &spec = compiled->kernels.front();
    Expected<rt::LoadedKernel> loaded = context.runtime.load(spec);
    if (!loaded)
      return loaded.status();
    auto kernel = std::make_unique<gnnc_kernel_s>();
    kernel->graph = graph;
    kernel->op = spec.op ? *spec.op : *op;
    kernel->loaded = loaded.take();
    kernel->schedule = spec.schedule.str();
    if (written) {
      kernel->source = "written";
    } else {
      auto choice = choices.schedules.find(spec.name);
      // Ops the tuner does not rank run gnnc's default schedule.
      kernel->source =
          choice != choices.schedules.end() ? choice->second.source : "default";
    }
    *out = kernel.get();
    graph->kernels.emplace(key, std::move(kernel));
    return Status::ok();
  });
}

gnnc_status gnnc_kernel_schedule(gnnc_kernel kernel, char *schedule,
                                 size_t schedule_size, char *source,
                                 size_t source_size) {
  return guarded("gnnc_kernel_schedule", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(kernel, "kernel"));
    GNNC_RETURN_IF_ERROR(
        copyOut(kernel->schedule, schedule, schedule_size, "schedule"));
    return copyOut(kernel->source, source, source_size, "source");
  });
}

//===----------------------------------------------------------------------===//
// Snapshot groups
//===----------------------------------------------------------------------===//

gnnc_status gnnc_snapshot_group_create(gnnc_context ctx, const char *name,
                                       int64_t num_nodes, int64_t num_snapshots,
                                       const int64_t *const *host_row_ptrs,
                                       const int32_t *const *host_col_idxs,
                                       const int64_t *nnzs,
                                       gnnc_snapshot_group *out) {
  return guarded("gnnc_snapshot_group_create", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(out, "out"));
    *out = nullptr;
    auto group = std::make_unique<gnnc_snapshot_group_s>();
    group->name = name && *name ? name : "snapshot group";
    Expected<graph::SnapshotGroup> host =
        snapshotGroupOf(group->name, num_nodes, num_snapshots, host_row_ptrs,
                        host_col_idxs, nnzs);
    if (!host)
      return host.status();
    group->forward.host = host.take();
    if (ctx) {
      group->context = ctx->state;
      ContextLock lock(*group->context);
      GNNC_RETURN_IF_ERROR(lock.status);
      // The kernels' form: int64 offsets, int32 indices.
      Expected<ops::DeviceSnapshotGroup> device =
          ops::uploadSnapshotGroup(group->forward.host, true, false);
      if (!device)
        return device.status().withContext(group->name + ": uploading");
      group->forward.device = device.take();
    }
    *out = group.release();
    return Status::ok();
  });
}

gnnc_status gnnc_snapshot_group_choose(gnnc_context ctx, const char *name,
                                       int64_t num_nodes, int64_t num_snapshots,
                                       const int64_t *const *host_row_ptrs,
                                       const int32_t *const *host_col_idxs,
                                       const int64_t *nnzs, int64_t width,
                                       gnnc_dtype dtype, int64_t memory_budget,
                                       int pipelined,
                                       gnnc_snapshot_group_choice *out) {
  return guarded("gnnc_snapshot_group_choose", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(out, "out"));
    *out = gnnc_snapshot_group_choice{};
    const std::string series = name && *name ? name : "snapshot series";
    Expected<ElementType> type = toElementType(dtype, "dtype");
    if (!type)
      return type.status();
    if (pipelined != 0 && pipelined != 1)
      return Status::error("pipelined is " + std::to_string(pipelined) +
                           "; 1 (copies overlap the aggregation) or 0");
    tuning::SnapshotGroupOptions options;
    options.width = width;
    options.type = *type;
    options.memoryBudget = memory_budget;
    options.pipelined = pipelined == 1;
    Expected<graph::SnapshotSeries> host = snapshotSeriesOf(
        series, num_nodes, num_snapshots, host_row_ptrs, host_col_idxs, nnzs);
    if (!host)
      return host.status();
    GNNC_RETURN_IF_ERROR(tuning::checkSnapshotGroupOptions(*host, options));
    GNNC_RETURN_IF_ERROR(host->validate());
    if (!ctx)
      return Status::error("ctx is NULL: the group sizes are timed on a "
                           "context's GPU");
    ContextLock lock(*ctx->state);
    GNNC_RETURN_IF_ERROR(lock.status);
    Expected<tuning::SnapshotGroupChoice> choice =
        tuning::chooseSnapshotGroup(ctx->state->runtime, *host, options);
    if (!choice)
      return choice.status();
    static_assert(std::size(tuning::kSnapshotGroupSizes) <=
                  GNNC_SNAPSHOT_GROUP_SIZES);
    out->snapshots = choice->snapshots;
    out->groups = choice->groups;
    out->cached_groups = choice->cachedGroups;
    out->memory_budget = choice->memoryBudget;
    out->host_to_device_gbps = choice->hostToDeviceGBps;
    for (const tuning::SnapshotGroupCandidate &c : choice->candidates) {
      gnnc_snapshot_group_size &size = out->sizes[out->num_sizes++];
      size.snapshots = c.snapshots;
      size.overlap_rate = c.overlapRate;
      size.feature_bytes = c.featureBytes;
      size.structure_bytes = c.structureBytes;
      size.device_bytes = c.deviceBytes();
      size.groups = c.groups;
      size.cached_groups = c.cachedGroups;
      size.copy_ms = c.copyMs;
      size.aggregate_ms = c.aggregateMs;
      size.ms_per_snapshot = c.msPerSnapshot;
      size.fits = c.fits ? 1 : 0;
    }
    return Status::ok();
  });
}

void gnnc_snapshot_group_destroy(gnnc_snapshot_group group) {
  if (!group)
    return;
  try {
    if (!group->context) {
      delete group;
      return;
    }
    // Device arrays are freed in the context's lock, with the context kept
    // alive by the group.
    std::shared_ptr<ContextState> context = group->context;
    ContextLock lock(*context);
    delete group;
  } catch (...) {
  }
}

gnnc_status gnnc_snapshot_group_edges(gnnc_snapshot_group group,
                                      int64_t *overlap_edges,
                                      int64_t *stored_edges,
                                      int64_t *snapshot_edges,
                                      double *overlap_rate) {
  return guarded("gnnc_snapshot_group_edges", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(group, "group"));
    // The host split does not change after creation: no lock needed.
    const graph::SnapshotGroup &g = group->forward.host;
    if (overlap_edges)
      *overlap_edges = g.overlap.nnz();
    if (stored_edges)
      *stored_edges = g.storedEdges();
    if (snapshot_edges)
      *snapshot_edges = g.snapshotEdges();
    if (overlap_rate)
      *overlap_rate = g.overlapRate();
    return Status::ok();
  });
}

gnnc_status gnnc_snapshot_kernel_get(gnnc_snapshot_group group,
                                     const gnnc_op_desc *desc,
                                     const char *schedule, int transposed,
                                     gnnc_kernel *out) {
  return guarded("gnnc_snapshot_kernel_get", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(out, "out"));
    *out = nullptr;
    GNNC_RETURN_IF_ERROR(requireNonNull(group, "group"));
    if (transposed != 0 && transposed != 1)
      return Status::error("transposed is " + std::to_string(transposed) +
                           "; 0 (the group as given) or 1 (its transpose)");
    Expected<OpDesc> op =
        toSnapshotOpDesc(desc, group->forward.host.size(), "desc");
    if (!op)
      return op.status();
    Expected<Schedule> parsed = snapshotSchedule(schedule, *op);
    if (!parsed)
      return parsed.status();
    if (!group->context)
      return Status::error(group->name +
                           " is a host-only group (created without a "
                           "context): it has no kernels");
    const std::string text =
        opModuleText("gnnc", opKindKey(op->kind), *op, *parsed);
    const std::string key = text + (schedule ? "written" : "default") +
                            (transposed ? " transposed" : "");
    ContextState &context = *group->context;
    ContextLock lock(context);
    GNNC_RETURN_IF_ERROR(lock.status);
    if (auto found = group->kernels.find(key); found != group->kernels.end()) {
      *out = found->second.get();
      return Status::ok();
    }
    Expected<CompiledModule> compiled =
        compileGnn(text, "gnnc_snapshot_kernel");
    if (!compiled)
      return compiled.status();
    if (compiled->kernels.size() != 1)
      return Status::error(
          "compiling one gnn.spmm over a snapshot group gave " +
          std::to_string(compiled->kernels.size()) + " kernels");
    const rt::KernelSpec &spec = compiled->kernels.front();
    Expected<rt::LoadedKernel> loaded = context.runtime.load(spec);
    if (!loaded)
      return loaded.status();
    if (transposed && !group->transposed) {
      auto side = std::make_unique<SnapshotSide>();
      side->host = graph::transposeGroup(group->forward.host);
      Expected<ops::DeviceSnapshotGroup> device =
          ops::uploadSnapshotGroup(side->host, true, false);
      if (!device)
        return device.status().withContext(group->name +
                                           ": uploading the transpose");
      side->device = device.take();
      group->transposed = std::move(side);
    }
    auto kernel = std::make_unique<gnnc_kernel_s>();
    kernel->group = group;
    kernel->side = transposed ? group->transposed.get() : &group->forward;
    kernel->op = spec.op ? *spec.op : *op;
    kernel->loaded = loaded.take();
    kernel->schedule = spec.schedule.str();
    kernel->source = schedule ? "written" : "default";
    *out = kernel.get();
    group->kernels.emplace(key, std::move(kernel));
    return Status::ok();
  });
}

//===----------------------------------------------------------------------===//
// Gradients
//===----------------------------------------------------------------------===//

gnnc_status gnnc_graph_spmm_factors(gnnc_graph graph, const gnnc_op_desc *desc,
                                    float *row, float *col) {
  return guarded("gnnc_graph_spmm_factors", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(graph, "graph"));
    Expected<OpDesc> op = toOpDesc(desc, "desc");
    if (!op)
      return op.status();
    if (op->kind != OpKind::Spmm)
      return Status::error(std::string("desc is a ") + opKindName(op->kind) +
                           ", not a gnn.spmm");
    const graph::CsrGraph &g = graph->host;
    if (g.numRows > 0)
      GNNC_RETURN_IF_ERROR(requireNonNull(row, "row"));
    if (g.numCols > 0)
      GNNC_RETURN_IF_ERROR(requireNonNull(col, "col"));
    std::vector<double> rowFactor, colFactor;
    ref::spmmFactors(g, op->reduce, op->scale, rowFactor, colFactor,
                     op->columnExponent());
    std::copy(rowFactor.begin(), rowFactor.end(), row);
    std::copy(colFactor.begin(), colFactor.end(), col);
    return Status::ok();
  });
}

//===----------------------------------------------------------------------===//
// Launches
//===----------------------------------------------------------------------===//

namespace {

/// The features and result of an spmm launch: x of num_cols rows and y of
/// num_rows rows, each of the op's row stride, checked against their
/// buffers.
struct SpmmRows {
  rt::DeviceBuffer x, y;
};
Expected<SpmmRows> spmmRows(const OpDesc &op, const graph::CsrGraph &g,
                            const gnnc_buffer &x, const gnnc_buffer &y) {
  Expected<rt::DeviceBuffer> dx =
      operand(x, "x", "reads", g.numCols, op.stride(), op.type);
  if (!dx)
    return dx.status();
  Expected<rt::DeviceBuffer> dy =
      operand(y, "y", "writes", g.numRows, op.stride(), op.type);
  if (!dy)
    return dy.status();
  return SpmmRows{dx.take(), dy.take()};
}

} // namespace

gnnc_status gnnc_spmm(gnnc_kernel kernel, gnnc_buffer x, gnnc_buffer values,
                      gnnc_buffer y, uint64_t stream) {
  return guarded("gnnc_spmm", [&]() -> Status {
    Launch launch;
    GNNC_RETURN_IF_ERROR(beginLaunch(kernel, OpKind::Spmm, launch));
    const OpDesc &op = kernel->op;
    if (op.attention)
      return Status::error("the kernel weighs its edges by attention: launch "
                           "it with gnnc_spmm_attention, which takes the "
                           "scores");
    gnnc_graph_s &graph = *launch.graph;
    const graph::CsrGraph &g = graph.host;
    Expected<SpmmRows> rows = spmmRows(op, g, x, y);
    if (!rows)
      return rows.status();
    std::optional<rt::DeviceBuffer> dv;
    if (op.edgeValues) {
      Expected<rt::DeviceBuffer> v =
          operand(values, "values", "reads", g.nnz(), 1, op.type, "edges");
      if (!v)
        return v.status();
      dv = v.take();
    } else if (values.address != 0 || values.bytes != 0) {
      return Status::error("the kernel reads no edge values: pass values as "
                           "{0, 0}");
    }
    const rt::DeviceBuffer *colNorm = nullptr;
    if (op.scalesColumns()) {
      auto factors = graph.columnFactors.find(op.columnExponent());
      if (factors == graph.columnFactors.end()) {
        Expected<rt::DeviceBuffer> uploaded =
            ops::uploadColumnNorm(g, op.columnExponent());
        if (!uploaded)
          return uploaded.status().withContext("uploading the column factors");
        factors =
            graph.columnFactors.emplace(op.columnExponent(), uploaded.take())
                .first;
      }
      colNorm = &factors->second;
    }
    return ops::launchSpmm(graph.context->runtime, kernel->loaded, graph.device,
                           rows->x, dv ? &*dv : nullptr, rows->y,
                           /*synchronize=*/false, colNorm, streamOf(stream));
  });
}

gnnc_status gnnc_spmm_attention(gnnc_kernel kernel, gnnc_buffer x,
                                gnnc_buffer att_dst, gnnc_buffer att_src,
                                gnnc_buffer y, uint64_t stream) {
  return guarded("gnnc_spmm_attention", [&]() -> Status {
    Launch launch;
    GNNC_RETURN_IF_ERROR(beginLaunch(kernel, OpKind::Spmm, launch));
    const OpDesc &op = kernel->op;
    if (!op.attention)
      return Status::error("the kernel has no attention: launch it with "
                           "gnnc_spmm");
    gnnc_graph_s &graph = *launch.graph;
    const graph::CsrGraph &g = graph.host;
    Expected<SpmmRows> rows = spmmRows(op, g, x, y);
    if (!rows)
      return rows.status();
    Expected<rt::DeviceBuffer> dd =
        operand(att_dst, "att_dst", "reads", g.numRows, 1, op.type);
    if (!dd)
      return dd.status();
    Expected<rt::DeviceBuffer> ds =
        operand(att_src, "att_src", "reads", g.numCols, 1, op.type);
    if (!ds)
      return ds.status();
    const ops::AttentionScores scores{&*dd, &*ds};
    return ops::launchSpmm(graph.context->runtime, kernel->loaded, graph.device,
                           rows->x, nullptr, rows->y, /*synchronize=*/false,
                           /*colNorm=*/nullptr, streamOf(stream),
                           /*linear=*/nullptr, &scores);
  });
}

gnnc_status gnnc_snapshot_spmm(gnnc_kernel kernel, gnnc_buffer x, gnnc_buffer y,
                               uint64_t stream) {
  return guarded("gnnc_snapshot_spmm", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(kernel, "kernel"));
    if (!kernel->group)
      return Status::error("the kernel runs over one graph, not a snapshot "
                           "group; launch it with gnnc_spmm");
    ContextLock lock(*kernel->group->context);
    GNNC_RETURN_IF_ERROR(lock.status);
    const OpDesc &op = kernel->op;
    SnapshotSide &side = *kernel->side;
    const int64_t nodes = side.host.numNodes;
    Expected<rt::DeviceBuffer> dx =
        operand(x, "x", "reads", nodes, op.width, op.type, "nodes");
    if (!dx)
      return dx.status();
    Expected<rt::DeviceBuffer> dy =
        operand(y, "y", "writes", nodes, op.width, op.type, "nodes");
    if (!dy)
      return dy.status();
    // The kernel zeroes parts of y before it reads all of x.
    const uint64_t bytes = static_cast<uint64_t>(nodes) *
                           static_cast<uint64_t>(op.width) *
                           elementSize(op.type);
    if (overlapping(x.address, bytes, y.address, bytes))
      return Status::error("x and y overlap; the kernel writes y while it "
                           "reads x: give y memory of its own");
    if (nodes == 0)
      return Status::ok();
    const rt::DeviceBuffer *colNorm = nullptr;
    if (op.scalesColumns()) {
      Expected<const rt::DeviceBuffer *> factors =
          snapshotColumnFactors(side, op.columnExponent());
      if (!factors)
        return factors.status();
      colNorm = *factors;
    }
    return ops::launchSnapshotSpmm(
        kernel->group->context->runtime, kernel->loaded, side.device, *dx, *dy,
        colNorm, /*synchronize=*/false, streamOf(stream));
  });
}

gnnc_status gnnc_sddmm(gnnc_kernel kernel, gnnc_buffer a, gnnc_buffer b,
                       gnnc_buffer out, uint64_t stream) {
  return guarded("gnnc_sddmm", [&]() -> Status {
    Launch launch;
    GNNC_RETURN_IF_ERROR(beginLaunch(kernel, OpKind::Sddmm, launch));
    const OpDesc &op = kernel->op;
    const graph::CsrGraph &g = launch.graph->host;
    Expected<rt::DeviceBuffer> da =
        operand(a, "a", "reads", g.numRows, op.width, op.type);
    if (!da)
      return da.status();
    Expected<rt::DeviceBuffer> db =
        operand(b, "b", "reads", g.numCols, op.width, op.type);
    if (!db)
      return db.status();
    Expected<rt::DeviceBuffer> dout =
        operand(out, "out", "writes", g.nnz(),
                op.form == SddmmForm::Dot ? 1 : op.width, op.type, "edges");
    if (!dout)
      return dout.status();
    return ops::launchSddmm(launch.graph->context->runtime, kernel->loaded,
                            launch.graph->device, *da, *db, *dout,
                            /*synchronize=*/false, streamOf(stream));
  });
}

gnnc_status gnnc_edge_softmax(gnnc_kernel kernel, gnnc_buffer logits,
                              gnnc_buffer out, uint64_t stream) {
  return guarded("gnnc_edge_softmax", [&]() -> Status {
    Launch launch;
    GNNC_RETURN_IF_ERROR(beginLaunch(kernel, OpKind::EdgeSoftmax, launch));
    const OpDesc &op = kernel->op;
    const graph::CsrGraph &g = launch.graph->host;
    Expected<rt::DeviceBuffer> dlogits =
        operand(logits, "logits", "reads", g.nnz(), op.width, op.type, "edges");
    if (!dlogits)
      return dlogits.status();
    Expected<rt::DeviceBuffer> dout =
        operand(out, "out", "writes", g.nnz(), op.width, op.type, "edges");
    if (!dout)
      return dout.status();
    return ops::launchEdgeSoftmax(
        launch.graph->context->runtime, kernel->loaded, launch.graph->device,
        *dlogits, *dout, /*synchronize=*/false, streamOf(stream));
  });
}

gnnc_status gnnc_edge_softmax_grad(gnnc_kernel kernel, gnnc_buffer out,
                                   gnnc_buffer grad_out, gnnc_buffer dx,
                                   uint64_t stream) {
  return guarded("gnnc_edge_softmax_grad", [&]() -> Status {
    Launch launch;
    GNNC_RETURN_IF_ERROR(beginLaunch(kernel, OpKind::EdgeSoftmaxGrad, launch));
    const OpDesc &op = kernel->op;
    const graph::CsrGraph &g = launch.graph->host;
    Expected<rt::DeviceBuffer> dout =
        operand(out, "out", "reads", g.nnz(), op.width, op.type, "edges");
    if (!dout)
      return dout.status();
    Expected<rt::DeviceBuffer> dgrad = operand(
        grad_out, "grad_out", "reads", g.nnz(), op.width, op.type, "edges");
    if (!dgrad)
      return dgrad.status();
    Expected<rt::DeviceBuffer> ddx =
        operand(dx, "dx", "writes", g.nnz(), op.width, op.type, "edges");
    if (!ddx)
      return ddx.status();
    return ops::launchEdgeSoftmaxGrad(launch.graph->context->runtime,
                                      kernel->loaded, launch.graph->device,
                                      *dout, *dgrad, *ddx,
                                      /*synchronize=*/false, streamOf(stream));
  });
}

} // extern "C"
