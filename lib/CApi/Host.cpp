//===- Host.cpp - The C interface's host-side entry points ----------------===//
//
// Errors, op descriptions, graph building and checks that need no GPU.
//
//===----------------------------------------------------------------------===//
#include "Support.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/Plan/OpText.h"
#include "gnnc/Plan/Plan.h"
#include "gnnc/Plan/Schedule.h"
#include "gnnc/graph/Csr.h"
#include "gnnc/ops/Backward.h"
#include "gnnc/runtime/Driver.h"

#include <cstring>
#include <limits>
#include <optional>
#include <vector>

using namespace gnnc;
using namespace gnnc::capi;

// The C enums number their cases as gnnc's C++ enums do.
static_assert(GNNC_OP_SPMM == int(OpKind::Spmm) &&
              GNNC_OP_SDDMM == int(OpKind::Sddmm) &&
              GNNC_OP_EDGE_SOFTMAX == int(OpKind::EdgeSoftmax) &&
              GNNC_OP_EDGE_SOFTMAX_GRAD == int(OpKind::EdgeSoftmaxGrad));
static_assert(GNNC_F32 == int(ElementType::F32) &&
              GNNC_F16 == int(ElementType::F16) &&
              GNNC_BF16 == int(ElementType::BF16));
static_assert(GNNC_REDUCE_SUM == int(Reduce::Sum) &&
              GNNC_REDUCE_MEAN == int(Reduce::Mean) &&
              GNNC_REDUCE_MAX == int(Reduce::Max));
static_assert(GNNC_SCALE_NONE == int(DegreeScale::None) &&
              GNNC_SCALE_LEFT == int(DegreeScale::Left) &&
              GNNC_SCALE_RIGHT == int(DegreeScale::Right) &&
              GNNC_SCALE_BOTH == int(DegreeScale::Both));
static_assert(GNNC_SDDMM_DOT == int(SddmmForm::Dot) &&
              GNNC_SDDMM_ADD == int(SddmmForm::Add));
// Enum fields are read as the 32-bit integers a C caller stores.
// The layouts the Python binding mirrors (python/gnnc/_lib.py).
static_assert(sizeof(gnnc_snapshot_group_size) == 88 &&
              sizeof(gnnc_snapshot_group_choice) == 48 + 8 * 88 &&
              GNNC_SNAPSHOT_GROUP_SIZES == 8);
static_assert(sizeof(gnnc_op_kind) == 4 && sizeof(gnnc_dtype) == 4 &&
              sizeof(gnnc_reduce) == 4 && sizeof(gnnc_scale) == 4 &&
              sizeof(gnnc_sddmm_form) == 4);

//===----------------------------------------------------------------------===//
// Support
//===----------------------------------------------------------------------===//

namespace {
thread_local std::string lastError;
} // namespace

void gnnc::capi::setError(const std::string &message) { lastError = message; }
void gnnc::capi::clearError() { lastError.clear(); }

Status gnnc::capi::requireNonNull(const void *pointer, const char *what) {
  if (pointer)
    return Status::ok();
  return Status::error(std::string(what) + " is NULL");
}

Status gnnc::capi::copyOut(const std::string &text, char *out, size_t size,
                           const char *what) {
  if (!out)
    return Status::ok();
  if (text.size() + 1 > size)
    return Status::error(
        std::string(what) + " needs " + std::to_string(text.size() + 1) +
        " bytes with its NUL, the buffer has " + std::to_string(size));
  std::memcpy(out, text.c_str(), text.size() + 1);
  return Status::ok();
}

namespace {

/// The enum field at `field` as the integer the caller stored.
template <typename Enum> int32_t rawEnum(const Enum &field) {
  int32_t value = 0;
  std::memcpy(&value, &field, sizeof(value));
  return value;
}

/// Checks that `value` names one of `names` (case i is names[i]).
template <size_t N>
Status checkEnum(int32_t value, const char *field,
                 const char *const (&names)[N]) {
  if (value >= 0 && static_cast<size_t>(value) < N)
    return Status::ok();
  std::string known;
  for (size_t i = 0; i < N; ++i)
    known += std::string(i == 0       ? ""
                         : i + 1 == N ? " or "
                                      : ", ") +
             names[i] + " (" + std::to_string(i) + ")";
  return Status::error(std::string(field) + " is " + std::to_string(value) +
                       ", not " + known);
}

const char *const kKindNames[] = {"GNNC_OP_SPMM", "GNNC_OP_SDDMM",
                                  "GNNC_OP_EDGE_SOFTMAX",
                                  "GNNC_OP_EDGE_SOFTMAX_GRAD"};
const char *const kTypeNames[] = {"GNNC_F32", "GNNC_F16", "GNNC_BF16"};
const char *const kReduceNames[] = {"GNNC_REDUCE_SUM", "GNNC_REDUCE_MEAN",
                                    "GNNC_REDUCE_MAX"};
const char *const kScaleNames[] = {"GNNC_SCALE_NONE", "GNNC_SCALE_LEFT",
                                   "GNNC_SCALE_RIGHT", "GNNC_SCALE_BOTH"};
const char *const kFormNames[] = {"GNNC_SDDMM_DOT", "GNNC_SDDMM_ADD"};

} // namespace

Expected<ElementType> gnnc::capi::toElementType(gnnc_dtype dtype,
                                                const char *field) {
  const int32_t type = rawEnum(dtype);
  GNNC_RETURN_IF_ERROR(checkEnum(type, field, kTypeNames));
  return static_cast<ElementType>(type);
}

Expected<OpDesc> gnnc::capi::toOpDesc(const gnnc_op_desc *d, const char *what) {
  const std::string name = what;
  GNNC_RETURN_IF_ERROR(requireNonNull(d, what));
  if (d->struct_size != sizeof(gnnc_op_desc))
    return Status::error(name + ".struct_size is " +
                         std::to_string(d->struct_size) +
                         ", but this library's gnnc_op_desc has " +
                         std::to_string(sizeof(gnnc_op_desc)) +
                         " bytes (fill it with gnnc_op_desc_init)");
  const int32_t kind = rawEnum(d->kind), type = rawEnum(d->dtype),
                reduce = rawEnum(d->reduce), scale = rawEnum(d->scale),
                form = rawEnum(d->form);
  GNNC_RETURN_IF_ERROR(checkEnum(kind, (name + ".kind").c_str(), kKindNames));
  GNNC_RETURN_IF_ERROR(checkEnum(type, (name + ".dtype").c_str(), kTypeNames));
  GNNC_RETURN_IF_ERROR(
      checkEnum(reduce, (name + ".reduce").c_str(), kReduceNames));
  GNNC_RETURN_IF_ERROR(
      checkEnum(scale, (name + ".scale").c_str(), kScaleNames));
  GNNC_RETURN_IF_ERROR(checkEnum(form, (name + ".form").c_str(), kFormNames));

  OpDesc op;
  op.kind = static_cast<OpKind>(kind);
  op.type = static_cast<ElementType>(type);
  op.offsets64 = true;
  op.indices64 = false;
  const std::string opName = opKindName(op.kind);
  // A width below 1 has no text form (tensor<?x0xf32> would not say which
  // rule it breaks); the compiler checks every other size.
  if (d->width < 1)
    return Status::error(name + ".width must be at least 1, got " +
                         std::to_string(d->width));
  op.width = d->width;
  if (d->row_stride < 0)
    return Status::error(name + ".row_stride must be 0 (the width) or " +
                         "positive, got " + std::to_string(d->row_stride));
  // Fields of another op are refused rather than ignored.
  auto foreign = [&](bool set, const char *field, const char *owner) {
    if (!set)
      return Status::ok();
    return Status::error(name + "." + field + " is set, but it applies to " +
                         owner + " only, not " + opName);
  };
  const bool spmm = op.kind == OpKind::Spmm, sddmm = op.kind == OpKind::Sddmm;
  if (!spmm) {
    GNNC_RETURN_IF_ERROR(
        foreign(d->row_stride != 0 && d->row_stride != d->width, "row_stride",
                "gnn.spmm"));
    GNNC_RETURN_IF_ERROR(foreign(d->edge_values, "edge_values", "gnn.spmm"));
    GNNC_RETURN_IF_ERROR(
        foreign(reduce != GNNC_REDUCE_SUM, "reduce", "gnn.spmm"));
    GNNC_RETURN_IF_ERROR(
        foreign(scale != GNNC_SCALE_NONE, "scale", "gnn.spmm"));
    GNNC_RETURN_IF_ERROR(
        foreign(d->has_self_weight, "has_self_weight", "gnn.spmm"));
    GNNC_RETURN_IF_ERROR(
        foreign(d->has_col_norm_exponent, "has_col_norm_exponent", "gnn.spmm"));
    GNNC_RETURN_IF_ERROR(foreign(d->attention, "attention", "gnn.spmm"));
  }
  if (!sddmm) {
    GNNC_RETURN_IF_ERROR(foreign(form != GNNC_SDDMM_DOT, "form", "gnn.sddmm"));
    GNNC_RETURN_IF_ERROR(foreign(d->has_leaky_relu && !(spmm && d->attention),
                                 "has_leaky_relu",
                                 "gnn.sddmm and gnn.spmm's attention"));
  }
  if (spmm) {
    op.rowStride = d->row_stride > 0 ? d->row_stride : d->width;
    op.edgeValues = d->edge_values != 0;
    op.reduce = static_cast<Reduce>(reduce);
    op.scale = static_cast<DegreeScale>(scale);
    if (d->has_self_weight)
      op.selfWeight = d->self_weight;
    if (d->has_col_norm_exponent)
      op.colNormExponent = d->col_norm_exponent;
    op.attention = d->attention != 0;
    if (op.attention && d->has_leaky_relu)
      op.leakyRelu = d->leaky_relu;
  } else {
    op.rowStride = op.width;
  }
  if (sddmm) {
    op.form = static_cast<SddmmForm>(form);
    if (d->has_leaky_relu)
      op.leakyRelu = d->leaky_relu;
  }
  return op;
}

gnnc_op_desc gnnc::capi::fromOpDesc(const OpDesc &op) {
  gnnc_op_desc d;
  gnnc_op_desc_init(&d);
  d.kind = static_cast<gnnc_op_kind>(op.kind);
  d.dtype = static_cast<gnnc_dtype>(op.type);
  d.width = op.width;
  d.row_stride = op.padded() ? op.rowStride : 0;
  d.edge_values = op.edgeValues;
  d.reduce = static_cast<gnnc_reduce>(op.reduce);
  d.scale = static_cast<gnnc_scale>(op.scale);
  d.has_self_weight = op.selfWeight.has_value();
  d.self_weight = op.selfWeight.value_or(0.0);
  d.has_col_norm_exponent = op.colNormExponent.has_value();
  d.col_norm_exponent = op.colNormExponent.value_or(0.0);
  d.form = static_cast<gnnc_sddmm_form>(op.form);
  d.has_leaky_relu = op.leakyRelu.has_value();
  d.leaky_relu = op.leakyRelu.value_or(0.0);
  d.attention = op.attention;
  return d;
}

Expected<OpDesc> gnnc::capi::toSnapshotOpDesc(const gnnc_op_desc *d,
                                              int64_t snapshots,
                                              const char *what) {
  Expected<OpDesc> op = toOpDesc(d, what);
  if (!op)
    return op.status();
  const std::string name = what;
  if (op->kind != OpKind::Spmm)
    return Status::error(name + " is a " + opKindName(op->kind) +
                         "; a snapshot group is aggregated by gnn.spmm only");
  if (snapshots < 1)
    return Status::error("a group of " + std::to_string(snapshots) +
                         " snapshots; a group has at least one");
  // The text form has no row layout for a group: refused, not ignored.
  if (op->padded())
    return Status::error(name + ".row_stride is " +
                         std::to_string(op->rowStride) +
                         ", but a snapshot group's node rows are unpadded "
                         "(snapshots x width elements); leave it 0");
  int64_t width = 0;
  if (__builtin_mul_overflow(op->width, snapshots, &width))
    return Status::error(name + ".width " + std::to_string(op->width) + " x " +
                         std::to_string(snapshots) +
                         " snapshots overflows 64 bits");
  op->snapshots = snapshots;
  op->width = width;
  op->rowStride = width;
  return op;
}

Status gnnc::capi::checkNodeCount(const std::string &prefix, int64_t numNodes) {
  // Column indices are int32: node indices up to INT32_MAX.
  constexpr int64_t kMaxNodes =
      int64_t(std::numeric_limits<int32_t>::max()) + 1;
  if (numNodes < 0 || numNodes > kMaxNodes)
    return Status::error(prefix + "num_nodes is " + std::to_string(numNodes) +
                         ", not in [0, " + std::to_string(kMaxNodes) +
                         "] (node indices are int32 column indices)");
  return Status::ok();
}

Expected<Schedule> gnnc::capi::snapshotSchedule(const char *schedule,
                                                const OpDesc &op) {
  if (!schedule)
    return defaultSchedule(op);
  return parseSchedule(schedule);
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

extern "C" {

int gnnc_abi_version(void) { return GNNC_ABI_VERSION; }

const char *gnnc_last_error(void) { return lastError.c_str(); }

void gnnc_op_desc_init(gnnc_op_desc *desc) {
  if (!desc)
    return;
  std::memset(desc, 0, sizeof(*desc));
  desc->struct_size = sizeof(gnnc_op_desc);
  desc->kind = GNNC_OP_SPMM;
  desc->dtype = GNNC_F32;
  desc->reduce = GNNC_REDUCE_SUM;
  desc->scale = GNNC_SCALE_NONE;
  desc->form = GNNC_SDDMM_DOT;
}

int gnnc_gpu_available(char *why, size_t why_size) {
  try {
    std::string reason;
    bool available = rt::gpuAvailable(&reason);
    if (why && why_size > 0) {
      size_t n = std::min(reason.size(), why_size - 1);
      std::memcpy(why, reason.data(), n);
      why[n] = '\0';
    }
    return available ? 1 : 0;
  } catch (...) {
    if (why && why_size > 0)
      why[0] = '\0';
    return 0;
  }
}

gnnc_status gnnc_coo_to_csr(int64_t num_nodes, int64_t nnz, const int64_t *src,
                            const int64_t *dst, int64_t *row_ptr,
                            int32_t *col_idx, int64_t *perm) {
  return guarded("gnnc_coo_to_csr", [&]() -> Status {
    GNNC_RETURN_IF_ERROR(checkNodeCount("", num_nodes));
    if (nnz < 0)
      return Status::error("nnz is negative (" + std::to_string(nnz) + ")");
    GNNC_RETURN_IF_ERROR(requireNonNull(row_ptr, "row_ptr"));
    if (nnz > 0) {
      GNNC_RETURN_IF_ERROR(requireNonNull(src, "src"));
      GNNC_RETURN_IF_ERROR(requireNonNull(dst, "dst"));
      GNNC_RETURN_IF_ERROR(requireNonNull(col_idx, "col_idx"));
      GNNC_RETURN_IF_ERROR(requireNonNull(perm, "perm"));
    }
    for (const auto &[array, name] : {std::pair{src, "src"}, {dst, "dst"}})
      for (int64_t i = 0; i < nnz; ++i)
        if (array[i] < 0 || array[i] >= num_nodes)
          return Status::error(std::string(name) + "[" + std::to_string(i) +
                               "] = " + std::to_string(array[i]) +
                               " is outside [0, " + std::to_string(num_nodes) +
                               ")");
    // Two stable counting sorts: by source, then by destination, so that
    // each row lists its sources in ascending order, ties in input order.
    const size_t n = static_cast<size_t>(num_nodes);
    const size_t m = static_cast<size_t>(nnz);
    std::vector<int64_t> bySource(m);
    std::vector<int64_t> start(n + 1, 0);
    for (size_t i = 0; i < m; ++i)
      ++start[static_cast<size_t>(src[i]) + 1];
    for (size_t v = 0; v < n; ++v)
      start[v + 1] += start[v];
    for (size_t i = 0; i < m; ++i)
      bySource[static_cast<size_t>(start[static_cast<size_t>(src[i])]++)] =
          static_cast<int64_t>(i);
    std::fill(row_ptr, row_ptr + n + 1, int64_t(0));
    for (size_t i = 0; i < m; ++i)
      ++row_ptr[static_cast<size_t>(dst[i]) + 1];
    for (size_t v = 0; v < n; ++v)
      row_ptr[v + 1] += row_ptr[v];
    std::vector<int64_t> next(row_ptr, row_ptr + n);
    for (int64_t i : bySource) {
      int64_t at = next[static_cast<size_t>(dst[i])]++;
      col_idx[at] = static_cast<int32_t>(src[i]);
      perm[at] = i;
    }
    return Status::ok();
  });
}

gnnc_status gnnc_csr_validate(const char *name, int64_t num_rows,
                              int64_t num_cols, int64_t nnz,
                              const int64_t *row_ptr, const int32_t *col_idx) {
  return guarded("gnnc_csr_validate", [&]() -> Status {
    graph::CsrGraph g;
    g.name = name && *name ? name : "CSR";
    if (num_rows < 0 || num_cols < 0 || nnz < 0)
      return Status::error(g.name + ": negative size (" +
                           std::to_string(num_rows) + " rows, " +
                           std::to_string(num_cols) + " columns, " +
                           std::to_string(nnz) + " non-zeros)");
    GNNC_RETURN_IF_ERROR(requireNonNull(row_ptr, "row_ptr"));
    if (nnz > 0)
      GNNC_RETURN_IF_ERROR(requireNonNull(col_idx, "col_idx"));
    g.numRows = num_rows;
    g.numCols = num_cols;
    g.rowPtr.assign(row_ptr, row_ptr + num_rows + 1);
    if (nnz > 0)
      g.colIdx.assign(col_idx, col_idx + nnz);
    return g.validate();
  });
}

gnnc_status gnnc_op_check(const gnnc_op_desc *desc, const char *schedule) {
  return guarded("gnnc_op_check", [&]() -> Status {
    Expected<OpDesc> op = toOpDesc(desc, "desc");
    if (!op)
      return op.status();
    std::optional<Schedule> parsed;
    if (schedule) {
      Expected<Schedule> s = parseSchedule(schedule);
      if (!s)
        return s.status();
      parsed = *s;
    }
    Expected<CompiledModule> compiled =
        compileGnn(opModuleText("gnnc", opKindKey(op->kind), *op, parsed),
                   "gnnc_op_check");
    return compiled ? Status::ok() : compiled.status();
  });
}

gnnc_status gnnc_snapshot_op_check(const gnnc_op_desc *desc,
                                   int64_t num_snapshots,
                                   const char *schedule) {
  return guarded("gnnc_snapshot_op_check", [&]() -> Status {
    Expected<OpDesc> op = toSnapshotOpDesc(desc, num_snapshots, "desc");
    if (!op)
      return op.status();
    Expected<Schedule> parsed = snapshotSchedule(schedule, *op);
    if (!parsed)
      return parsed.status();
    Expected<CompiledModule> compiled =
        compileGnn(opModuleText("gnnc", opKindKey(op->kind), *op, *parsed),
                   "gnnc_snapshot_op_check");
    return compiled ? Status::ok() : compiled.status();
  });
}

gnnc_status gnnc_spmm_feature_grad_op(const gnnc_op_desc *fwd,
                                      gnnc_op_desc *grad) {
  return guarded("gnnc_spmm_feature_grad_op", [&]() -> Status {
    Expected<OpDesc> op = toOpDesc(fwd, "fwd");
    if (!op)
      return op.status();
    GNNC_RETURN_IF_ERROR(requireNonNull(grad, "grad"));
    if (op->kind != OpKind::Spmm)
      return Status::error(std::string("fwd is a ") + opKindName(op->kind) +
                           ", not a gnn.spmm");
    // The forward's column factors become the gradient's row factors,
    // which are 1/sqrt(deg) only.
    if (op->scalesColumns() && op->columnExponent() != 0.5)
      return Status::error(
          "the feature gradient of a gnn.spmm with col_norm_exponent " +
          std::to_string(op->columnExponent()) +
          " is not a gnn.spmm (its row factors are deg^-1/2 only)");
    Expected<ops::SpmmGradForm> form =
        ops::spmmFeatureGradForm(op->reduce, op->scale);
    if (!form)
      return form.status();
    // The same features, edge values, row stride and self term (whose
    // gradient is (1 + eps) dy[r], as the self term of the gradient adds).
    OpDesc g = *op;
    g.reduce = Reduce::Sum;
    g.scale = form->scale;
    g.colNormExponent.reset();
    if (g.scalesColumns() && form->colNormExponent != 0.5)
      g.colNormExponent = form->colNormExponent;
    *grad = fromOpDesc(g);
    return Status::ok();
  });
}

} // extern "C"
