//===- SegmentMatmul.cpp - The C interface's segmented matmuls ------------===//
//
// Segment layouts (gnnc_segments): the checked host offsets of rows
// grouped by type, their device copy and the routing tables of their
// kernels (one per tile size, built on first use), owned by the layout.
// Kernels of gnn.segment_matmul (forward and input gradient) and of
// gnn.segment_matmul_weight_grad belong to a layout and are keyed by what
// they compute and how their schedule was given; the schedule gnnc gives
// a kernel the caller leaves open is chosen in one place
// (chooseSegmentKernelSchedule). Launches borrow the caller's buffers and
// run on the caller's stream through gnnc/ops/SegmentMatmul.h.
//
//===----------------------------------------------------------------------===//
#include "Context.h"
#include "Support.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/OpText.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/Plan/Schedule.h"
#include "gnnc/Tuning/GpuModel.h"
#include "gnnc/Tuning/SegmentModel.h"
#include "gnnc/ops/SegmentMatmul.h"
#include "gnnc/runtime/Nvrtc.h"
#include "gnnc/runtime/Runtime.h"

#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

using namespace gnnc;
using namespace gnnc::capi;

struct gnnc_segment_kernel_s {
  gnnc_segments_s *segments = nullptr;
  OpDesc op;
  rt::LoadedKernel loaded;
  /// The layout's routing table for the kernel.
  const ops::DeviceRouteTable *table = nullptr;
  std::string schedule;
  std::string source;
};

struct gnnc_segments_s {
  /// Null for a host-only layout (no kernels).
  std::shared_ptr<ContextState> context;
  std::string name;
  int64_t numRows = 0;
  /// num_types + 1 offsets, checked.
  std::vector<int64_t> offsets;
  rt::DeviceBuffer deviceOffsets;
  /// Routing tables: by tile_rows, or by kernel for those partitioned for
  /// a kernel's groups of blocks (ops::routesInGroups).
  std::map<std::string, ops::DeviceRouteTable> tables;
  /// Kernels by their .gnn text and how the schedule was given.
  std::map<std::string, std::unique_ptr<gnnc_segment_kernel_s>> kernels;

  int64_t numTypes() const { return int64_t(offsets.size()) - 1; }
};

namespace {

/// The enum field at `field` as the integer the caller stored.
template <typename Enum> int32_t rawEnum(const Enum &field) {
  int32_t value = 0;
  std::memcpy(&value, &field, sizeof(value));
  return value;
}

/// The op `desc` describes, after checking its size, enums and widths;
/// `allowTf32` receives its math permission. `what` names it in messages.
Expected<OpDesc> segmentOpOf(const gnnc_segment_desc *desc, const char *what,
                             bool &allowTf32) {
  const std::string name = what;
  GNNC_RETURN_IF_ERROR(requireNonNull(desc, what));
  if (desc->struct_size != sizeof(gnnc_segment_desc))
    return Status::error(name + ".struct_size is " +
                         std::to_string(desc->struct_size) +
                         ", but this library's gnnc_segment_desc has " +
                         std::to_string(sizeof(gnnc_segment_desc)) +
                         " bytes (fill it with gnnc_segment_desc_init)");
  const int32_t type = rawEnum(desc->dtype), pass = rawEnum(desc->pass);
  if (type < GNNC_F32 || type > GNNC_BF16)
    return Status::error(name + ".dtype is " + std::to_string(type) +
                         ", not GNNC_F32 (0), GNNC_F16 (1) or GNNC_BF16 (2)");
  if (pass < GNNC_SEGMENT_FORWARD || pass > GNNC_SEGMENT_WEIGHT_GRAD)
    return Status::error(name + ".pass is " + std::to_string(pass) +
                         ", not GNNC_SEGMENT_FORWARD (0), "
                         "GNNC_SEGMENT_INPUT_GRAD (1) or "
                         "GNNC_SEGMENT_WEIGHT_GRAD (2)");
  if (desc->k < 1 || desc->m < 1)
    return Status::error(name + " has K " + std::to_string(desc->k) +
                         " and M " + std::to_string(desc->m) +
                         "; both must be at least 1");
  if (desc->allow_tf32 != 0 && desc->allow_tf32 != 1)
    return Status::error(name + ".allow_tf32 is " +
                         std::to_string(desc->allow_tf32) + "; 0 or 1");
  allowTf32 = desc->allow_tf32 == 1;
  const ElementType t = static_cast<ElementType>(type);
  switch (static_cast<gnnc_segment_pass>(pass)) {
  case GNNC_SEGMENT_FORWARD:
    return segmentMatmulOp(t, desc->k, desc->m);
  case GNNC_SEGMENT_INPUT_GRAD:
    return segmentMatmulInputGradOp(t, desc->k, desc->m);
  case GNNC_SEGMENT_WEIGHT_GRAD:
    return segmentMatmulWeightGradOp(t, desc->k, desc->m);
  }
  return Status::error(name + ": unknown pass");
}

/// The segment layout a schedule may be chosen for (null offsets: none,
/// as for gnnc_segment_op_check).
struct LayoutView {
  const int64_t *offsets = nullptr;
  int64_t numTypes = 0;
  int64_t numRows = 0;
  /// The GPU the kernel is for (null: none, no model choice).
  const rt::Device *device = nullptr;
};

/// The schedule of a kernel of `op` whose caller writes none: the one place
/// it is chosen. The arithmetic follows the plan's rules: the op's default
/// schedule (math = auto: chooseSegmentMath, tensor cores for f16 and bf16
/// where they fit, exact SIMT for f32), and for f32 with TF32 allowed
/// tensor cores where the plan accepts them. Within that arithmetic, on a
/// layout with a GPU, the segmented-matmul cost model picks the tile and
/// the pipeline for the layout's segment statistics
/// (tuning::chooseSegmentSchedule); without one, or when the model has no
/// plan, the default schedule runs.
Schedule chooseSegmentKernelSchedule(const OpDesc &op, bool allowTf32,
                                     const LayoutView &layout) {
  Schedule rules = defaultSchedule(op);
  if (op.type == ElementType::F32 && allowTf32) {
    Schedule tensorCore = rules;
    tensorCore.math = MathMode::TensorCore;
    Expected<Schedule> complete = completeSchedule(op, tensorCore);
    if (complete && planKernel(op, *complete))
      rules = tensorCore;
  }
  if (!layout.offsets || !layout.device)
    return rules;
  MathMode math = rules.math;
  if (math == MathMode::Auto) {
    Expected<Schedule> complete = completeSchedule(op, rules);
    if (!complete)
      return rules;
    math = chooseSegmentMath(op, *complete);
  }
  const std::vector<int64_t> seg(layout.offsets,
                                 layout.offsets + layout.numTypes + 1);
  Expected<tuning::SegmentStats> stats = tuning::segmentStats(seg);
  if (!stats)
    return rules;
  Expected<Schedule> modelled = tuning::chooseSegmentSchedule(
      op, *stats, tuning::fromDevice(*layout.device), math);
  return modelled ? *modelled : rules;
}

/// The schedule a kernel of `op` runs: `written` parsed (tensor cores on
/// f32 only with TF32 allowed), or chooseSegmentKernelSchedule's.
Expected<Schedule> segmentScheduleOf(const OpDesc &op, bool allowTf32,
                                     const char *written,
                                     const LayoutView &layout) {
  if (!written)
    return chooseSegmentKernelSchedule(op, allowTf32, layout);
  Expected<Schedule> s = parseSchedule(written);
  if (!s)
    return s.status();
  if (op.type == ElementType::F32 && onTensorCores(s->math) && !allowTf32)
    return Status::error(std::string("the schedule asks for math = ") +
                         mathModeName(s->math) +
                         " on f32, which rounds the inputs to TF32, but "
                         "allow_tf32 is 0: set allow_tf32 = 1 or write math "
                         "= simt");
  return *s;
}

/// The kernels of one .gnn text, compiled once per process (the text says
/// everything the kernel is: op and schedule); each context loads them
/// through its runtime, which keeps one module per cache key.
Expected<rt::KernelSpec> compiledSegmentKernel(const std::string &text) {
  static std::mutex mutex;
  static std::map<std::string, rt::KernelSpec> compiled;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto found = compiled.find(text); found != compiled.end())
      return found->second;
  }
  Expected<CompiledModule> module = compileGnn(text, "gnnc_segment_kernel");
  if (!module)
    return module.status();
  if (module->kernels.size() != 1)
    return Status::error("compiling one segmented matmul gave " +
                         std::to_string(module->kernels.size()) + " kernels");
  std::lock_guard<std::mutex> lock(mutex);
  return compiled.emplace(text, module->kernels.front()).first->second;
}

/// The layout of `segments`, for the schedule choice.
LayoutView viewOf(const gnnc_segments_s &segments) {
  return {segments.offsets.data(), segments.numTypes(), segments.numRows,
          segments.context ? &segments.context->runtime.device() : nullptr};
}

/// The kernel `kernel`, checked to compute `kind`, its layout's context
/// locked.
Status beginSegmentLaunch(gnnc_segment_kernel kernel, OpKind kind,
                          std::optional<ContextLock> &lock) {
  GNNC_RETURN_IF_ERROR(requireNonNull(kernel, "kernel"));
  if (kernel->op.kind != kind)
    return Status::error(std::string("the kernel computes ") +
                         opKindName(kernel->op.kind) + ", not " +
                         opKindName(kind) + "; launch it with " +
                         (kernel->op.kind == OpKind::SegmentMatmul
                              ? "gnnc_segment_matmul"
                              : "gnnc_segment_matmul_weight_grad"));
  lock.emplace(*kernel->segments->context);
  return lock->status;
}

/// Fails when the output `out` (`outBytes` from `outAddress`) shares memory
/// with the input `in`.
Status checkNoOverlap(const char *out, const gnnc_buffer &outBuffer,
                      uint64_t outBytes, const char *in,
                      const gnnc_buffer &inBuffer, uint64_t inBytes) {
  if (overlapping(outBuffer.address, outBytes, inBuffer.address, inBytes))
    return Status::error(
        std::string(out) + " and " + in + " overlap; the kernel writes " + out +
        " while it reads " + in + ": give it memory of its own");
  return Status::ok();
}

/// The bytes of `rows` x `perRow` elements of `type` (sizes checked by
/// operand before).
uint64_t bytesOf(int64_t rows, int64_t perRow, ElementType type) {
  return static_cast<uint64_t>(rows) * static_cast<uint64_t>(perRow) *
         elementSize(type);
}

} // namespace

extern "C" {

void gnnc_segment_desc_init(gnnc_segment_desc *desc) {
  if (!desc)
    return;
  std::memset(desc, 0, sizeof(*desc));
  desc->struct_size = sizeof(gnnc_segment_desc);
  desc->dtype = GNNC_F32;
  desc->pass = GNNC_SEGMENT_FORWARD;
}

gnnc_status gnnc_segment_op_check(const gnnc_segment_desc *desc,
                                  const char *schedule, const char *arch,
                                  char *chosen, size_t chosen_size) {
  return guarded("gnnc_segment_op_check", [&]() -> Status {
    bool allowTf32 = false;
    Expected<OpDesc> op = segmentOpOf(desc, "desc", allowTf32);
    if (!op)
      return op.status();
    Expected<Schedule> s = segmentScheduleOf(*op, allowTf32, schedule, {});
    if (!s)
      return s.status();
    const std::string text = opModuleText("gnnc", opKindKey(op->kind), *op, *s);
    Expected<CompiledModule> module = compileGnn(text, "gnnc_segment_op_check");
    if (!module)
      return module.status();
    if (module->kernels.size() != 1)
      return Status::error("compiling one segmented matmul gave " +
                           std::to_string(module->kernels.size()) + " kernels");
    if (arch) {
      rt::CompileOptions options;
      options.arch = arch;
      Expected<rt::CompiledKernel> binary =
          rt::compileCuda(module->source, "gnnc_segment_op_check.cu", options);
      if (!binary)
        return binary.status().withContext(std::string("NVRTC for ") + arch);
    }
    return copyOut(module->kernels.front().schedule.str(), chosen, chosen_size,
                   "chosen");
  });
}

gnnc_status gnnc_segments_create(gnnc_context ctx, const char *name,
                                 int64_t num_rows, int64_t num_types,
                                 const int64_t *host_offsets,
                                 gnnc_segments *out) {
  return guarded("gnnc_segments_create", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(out, "out"));
    *out = nullptr;
    auto segments = std::make_unique<gnnc_segments_s>();
    segments->name = name && *name ? name : "segments";
    const std::string &where = segments->name;
    if (num_rows < 0)
      return Status::error(where + ": num_rows is negative (" +
                           std::to_string(num_rows) + ")");
    if (num_types < 0)
      return Status::error(where + ": num_types is negative (" +
                           std::to_string(num_types) + ")");
    GNNC_RETURN_IF_ERROR(requireNonNull(host_offsets, "host_offsets"));
    Status valid =
        ops::checkSegmentOffsets(host_offsets, num_types + 1, num_rows);
    if (!valid)
      return Status::error(where + ": " + valid.message());
    segments->numRows = num_rows;
    segments->offsets.assign(host_offsets, host_offsets + num_types + 1);
    if (ctx) {
      segments->context = ctx->state;
      ContextLock lock(*segments->context);
      GNNC_RETURN_IF_ERROR(lock.status);
      const size_t bytes = segments->offsets.size() * sizeof(int64_t);
      Expected<rt::DeviceBuffer> device = rt::DeviceBuffer::allocate(bytes);
      if (!device)
        return device.status().withContext(where + ": uploading the offsets");
      GNNC_RETURN_IF_ERROR(
          device->copyFromHost(segments->offsets.data(), bytes));
      segments->deviceOffsets = device.take();
    }
    *out = segments.release();
    return Status::ok();
  });
}

void gnnc_segments_destroy(gnnc_segments segments) {
  if (!segments)
    return;
  try {
    if (!segments->context) {
      delete segments;
      return;
    }
    // Device arrays are freed in the context's lock, with the context kept
    // alive by the layout.
    std::shared_ptr<ContextState> context = segments->context;
    ContextLock lock(*context);
    delete segments;
  } catch (...) {
  }
}

gnnc_status gnnc_segments_shape(gnnc_segments segments, int64_t *num_rows,
                                int64_t *num_types) {
  return guarded("gnnc_segments_shape", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(segments, "segments"));
    // The layout does not change after creation: no lock needed.
    if (num_rows)
      *num_rows = segments->numRows;
    if (num_types)
      *num_types = segments->numTypes();
    return Status::ok();
  });
}

gnnc_status gnnc_segment_kernel_get(gnnc_segments segments,
                                    const gnnc_segment_desc *desc,
                                    const char *schedule,
                                    gnnc_segment_kernel *out) {
  return guarded("gnnc_segment_kernel_get", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(out, "out"));
    *out = nullptr;
    GNNC_RETURN_IF_ERROR(requireNonNull(segments, "segments"));
    bool allowTf32 = false;
    Expected<OpDesc> op = segmentOpOf(desc, "desc", allowTf32);
    if (!op)
      return op.status();
    if (!segments->context)
      return Status::error(segments->name +
                           " is a host-only layout (created without a "
                           "context): it has no kernels");
    Expected<Schedule> s =
        segmentScheduleOf(*op, allowTf32, schedule, viewOf(*segments));
    if (!s)
      return s.status();
    const std::string text = opModuleText("gnnc", opKindKey(op->kind), *op, *s);
    const std::string key = text + (schedule ? "written" : "default");
    ContextState &context = *segments->context;
    ContextLock lock(context);
    GNNC_RETURN_IF_ERROR(lock.status);
    if (auto found = segments->kernels.find(key);
        found != segments->kernels.end()) {
      *out = found->second.get();
      return Status::ok();
    }
    Expected<rt::KernelSpec> spec = compiledSegmentKernel(text);
    if (!spec)
      return spec.status();
    Expected<rt::LoadedKernel> loaded = context.runtime.load(*spec);
    if (!loaded)
      return loaded.status();
    const std::string tableKey =
        ops::routesInGroups(*spec)
            ? key
            : "tile_rows = " + std::to_string(spec->schedule.tileRows);
    auto table = segments->tables.find(tableKey);
    if (table == segments->tables.end()) {
      Expected<ops::DeviceRouteTable> uploaded = ops::uploadRouteTable(
          context.runtime, *loaded, segments->offsets, segments->numRows);
      if (!uploaded)
        return uploaded.status().withContext(segments->name +
                                             ": the routing table");
      table = segments->tables.emplace(tableKey, uploaded.take()).first;
    }
    auto kernel = std::make_unique<gnnc_segment_kernel_s>();
    kernel->segments = segments;
    kernel->op = spec->op ? *spec->op : *op;
    kernel->loaded = loaded.take();
    kernel->table = &table->second;
    kernel->schedule = spec->schedule.str();
    kernel->source = schedule ? "written" : "default";
    *out = kernel.get();
    segments->kernels.emplace(key, std::move(kernel));
    return Status::ok();
  });
}

gnnc_status gnnc_segment_kernel_schedule(gnnc_segment_kernel kernel,
                                         char *schedule, size_t schedule_size,
                                         char *source, size_t source_size) {
  return guarded("gnnc_segment_kernel_schedule", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(requireNonNull(kernel, "kernel"));
    GNNC_RETURN_IF_ERROR(
        copyOut(kernel->schedule, schedule, schedule_size, "schedule"));
    return copyOut(kernel->source, source, source_size, "source");
  });
}

gnnc_status gnnc_segment_matmul(gnnc_segment_kernel kernel, gnnc_buffer x,
                                gnnc_buffer w, gnnc_buffer y, uint64_t stream) {
  return guarded("gnnc_segment_matmul", [&]() -> Status {
    std::optional<ContextLock> lock;
    GNNC_RETURN_IF_ERROR(
        beginSegmentLaunch(kernel, OpKind::SegmentMatmul, lock));
    const OpDesc &op = kernel->op;
    gnnc_segments_s &segments = *kernel->segments;
    const int64_t rows = segments.numRows, types = segments.numTypes();
    // Rows of inputWidth in, rows of width out; the weights are K x M per
    // type either way.
    // Every operand starts where the kernel's 16-byte copies and stores
    // (tensor cores) may.
    const uint64_t align =
        segmentOperandAlignment(op, kernel->loaded.spec.schedule);
    Expected<rt::DeviceBuffer> dx =
        operand(x, "x", "reads", rows, op.inputWidth, op.type, "rows", align);
    if (!dx)
      return dx.status();
    Expected<rt::DeviceBuffer> dw =
        operand(w, "w", "reads", types, op.inputWidth * op.width, op.type,
                "types", align);
    if (!dw)
      return dw.status();
    Expected<rt::DeviceBuffer> dy =
        operand(y, "y", "writes", rows, op.width, op.type, "rows", align);
    if (!dy)
      return dy.status();
    const uint64_t yBytes = bytesOf(rows, op.width, op.type);
    GNNC_RETURN_IF_ERROR(checkNoOverlap("y", y, yBytes, "x", x,
                                        bytesOf(rows, op.inputWidth, op.type)));
    GNNC_RETURN_IF_ERROR(
        checkNoOverlap("y", y, yBytes, "w", w,
                       bytesOf(types, op.inputWidth * op.width, op.type)));
    if (rows == 0)
      return Status::ok();
    return ops::launchSegmentMatmul(segments.context->runtime, kernel->loaded,
                                    *dx, *dw, segments.deviceOffsets,
                                    *kernel->table, *dy,
                                    /*synchronize=*/false, streamOf(stream));
  });
}

gnnc_status gnnc_segment_matmul_weight_grad(gnnc_segment_kernel kernel,
                                            gnnc_buffer x, gnnc_buffer dy,
                                            gnnc_buffer dw, uint64_t stream) {
  return guarded("gnnc_segment_matmul_weight_grad", [&]() -> Status {
    std::optional<ContextLock> lock;
    GNNC_RETURN_IF_ERROR(
        beginSegmentLaunch(kernel, OpKind::SegmentMatmulWeightGrad, lock));
    const OpDesc &op = kernel->op;
    gnnc_segments_s &segments = *kernel->segments;
    const int64_t rows = segments.numRows, types = segments.numTypes();
    const uint64_t align =
        segmentOperandAlignment(op, kernel->loaded.spec.schedule);
    Expected<rt::DeviceBuffer> dX =
        operand(x, "x", "reads", rows, op.inputWidth, op.type, "rows", align);
    if (!dX)
      return dX.status();
    Expected<rt::DeviceBuffer> dY =
        operand(dy, "dy", "reads", rows, op.width, op.type, "rows", align);
    if (!dY)
      return dY.status();
    Expected<rt::DeviceBuffer> dW =
        operand(dw, "dw", "writes", types, op.inputWidth * op.width, op.type,
                "types", align);
    if (!dW)
      return dW.status();
    const uint64_t dwBytes = bytesOf(types, op.inputWidth * op.width, op.type);
    GNNC_RETURN_IF_ERROR(checkNoOverlap("dw", dw, dwBytes, "x", x,
                                        bytesOf(rows, op.inputWidth, op.type)));
    GNNC_RETURN_IF_ERROR(checkNoOverlap("dw", dw, dwBytes, "dy", dy,
                                        bytesOf(rows, op.width, op.type)));
    if (types == 0)
      return Status::ok();
    return ops::launchSegmentMatmulWeightGrad(
        segments.context->runtime, kernel->loaded, *dX, *dY,
        segments.deviceOffsets, types, *kernel->table, *dW,
        /*synchronize=*/false, streamOf(stream));
  });
}

} // extern "C"
