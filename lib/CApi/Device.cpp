//===- Device.cpp - The C interface's contexts, graphs and launches -------===//
//
// A context is a gnnc::rt::Runtime (the device's primary context, the
// kernel cache) plus the tuning options; graphs and kernels keep it alive.
// Every call on a context, its graphs and their kernels holds the context's
// lock. Launches go through the host ops of gnnc/ops on borrowed buffers.
//
//===----------------------------------------------------------------------===//
#include "Support.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/OpText.h"
#include "gnnc/Plan/Schedule.h"
#include "gnnc/Tuning/TunedCompile.h"
#include "gnnc/graph/Csr.h"
#include "gnnc/ops/Backward.h"
#include "gnnc/ops/EdgeSoftmax.h"
#include "gnnc/ops/KernelInfo.h"
#include "gnnc/ops/Sddmm.h"
#include "gnnc/ops/Spmm.h"
#include "gnnc/reference/Backward.h"
#include "gnnc/runtime/Runtime.h"

#include <map>
#include <memory>
#include <mutex>
#include <optional>

using namespace gnnc;
using namespace gnnc::capi;

namespace {

struct ContextState {
  ContextState(rt::Runtime runtime) : runtime(std::move(runtime)) {}
  std::mutex mutex;
  rt::Runtime runtime;
  tuning::TunedCompileOptions tuning;
};

} // namespace

struct gnnc_context_s {
  std::shared_ptr<ContextState> state;
};

struct gnnc_kernel_s {
  gnnc_graph_s *graph = nullptr;
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
};

namespace {

/// Locks `context` and makes its device current on the calling thread.
struct ContextLock {
  explicit ContextLock(ContextState &context) : lock(context.mutex) {
    status = context.runtime.device().makeCurrent();
  }
  std::unique_lock<std::mutex> lock;
  Status status;
};

/// `a` * `b` * `c`, or an error naming `what` when it overflows 64 bits.
Expected<uint64_t> product(uint64_t a, uint64_t b, uint64_t c,
                           const std::string &what) {
  uint64_t ab = 0, abc = 0;
  if (__builtin_mul_overflow(a, b, &ab) || __builtin_mul_overflow(ab, c, &abc))
    return Status::error(what + ": the size overflows 64 bits");
  return abc;
}

/// Checks that `buffer` (called `name`) holds the `rows` x `perRow` elements
/// of `type` that the kernel `verb`s ("reads", "writes") and borrows it.
Expected<rt::DeviceBuffer> operand(const gnnc_buffer &buffer, const char *name,
                                   const char *verb, int64_t rows,
                                   int64_t perRow, ElementType type,
                                   const char *rowWord = "rows") {
  Expected<uint64_t> need =
      product(static_cast<uint64_t>(rows), static_cast<uint64_t>(perRow),
              elementSize(type), name);
  if (!need)
    return need.status();
  const std::string shape = "(" + std::to_string(rows) + " " + rowWord + " x " +
                            std::to_string(perRow) + " x " +
                            elementTypeName(type) + ")";
  if (buffer.bytes < *need)
    return Status::error(std::string(name) + " has " +
                         std::to_string(buffer.bytes) + " bytes, the kernel " +
                         verb + " " + std::to_string(*need) + " " + shape);
  if (buffer.address == 0 && *need > 0)
    return Status::error(std::string(name) + " is a NULL address, the kernel " +
                         verb + " " + std::to_string(*need) + " bytes " +
                         shape);
  return rt::DeviceBuffer::borrow(buffer.address, buffer.bytes);
}

/// The kernel behind `kernel`, checked to compute `kind`, with its graph
/// locked; the error names what was wrong.
struct Launch {
  gnnc_kernel_s *kernel = nullptr;
  gnnc_graph_s *graph = nullptr;
  std::optional<ContextLock> lock;
};
Status beginLaunch(gnnc_kernel kernel, OpKind kind, Launch &launch) {
  GNNC_RETURN_IF_ERROR(requireNonNull(kernel, "kernel"));
  if (kernel->op.kind != kind)
    return Status::error(std::string("the kernel computes ") +
                         opKindName(kernel->op.kind) + ", not " +
                         opKindName(kind));
  launch.kernel = kernel;
  launch.graph = kernel->graph;
  launch.lock.emplace(*launch.graph->context);
  return launch.lock->status;
}

void *streamOf(uint64_t stream) {
  return reinterpret_cast<void *>(static_cast<uintptr_t>(stream));
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
    Expected<CompiledModule> compiled =
        written ? compileGnn(text, "gnnc_kernel")
                : tuning::compileForGraph(text, "gnnc_kernel", graph->host,
                                          context.tuning, &choices);
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

gnnc_status gnnc_spmm(gnnc_kernel kernel, gnnc_buffer x, gnnc_buffer values,
                      gnnc_buffer y, uint64_t stream) {
  return guarded("gnnc_spmm", [&]() -> Status {
    Launch launch;
    GNNC_RETURN_IF_ERROR(beginLaunch(kernel, OpKind::Spmm, launch));
    const OpDesc &op = kernel->op;
    gnnc_graph_s &graph = *launch.graph;
    const graph::CsrGraph &g = graph.host;
    Expected<rt::DeviceBuffer> dx =
        operand(x, "x", "reads", g.numCols, op.stride(), op.type);
    if (!dx)
      return dx.status();
    Expected<rt::DeviceBuffer> dy =
        operand(y, "y", "writes", g.numRows, op.stride(), op.type);
    if (!dy)
      return dy.status();
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
                           *dx, dv ? &*dv : nullptr, *dy,
                           /*synchronize=*/false, colNorm, streamOf(stream));
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
