//===- Support.h - What the C interface's entry points share ---*- C++ -*-===//
//
// Internal to lib/CApi: the calling thread's last error, the guard every
// entry point runs its body in (no exception leaves the library), and the
// checked conversion of gnnc_op_desc to gnnc::OpDesc. Not an API.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_LIB_CAPI_SUPPORT_H
#define GNNC_LIB_CAPI_SUPPORT_H

#include "gnnc-c/Gnnc.h"
#include "gnnc/Plan/Schedule.h"
#include "gnnc/Plan/Types.h"
#include "gnnc/runtime/Status.h"

#include <string>

namespace gnnc::capi {

/// Sets the calling thread's last error.
void setError(const std::string &message);
/// Clears it ("" for gnnc_last_error).
void clearError();

/// Runs `body` (returning a Status) as entry point `function`: GNNC_OK on
/// success; otherwise GNNC_ERROR with "function: message" as the last
/// error, also for any exception `body` throws.
template <typename Body>
gnnc_status guarded(const char *function, Body &&body) noexcept {
  try {
    Status status = body();
    if (status.isOk()) {
      clearError();
      return GNNC_OK;
    }
    setError(std::string(function) + ": " + status.message());
  } catch (const std::bad_alloc &) {
    setError(std::string(function) + ": out of host memory");
  } catch (const std::exception &e) {
    setError(std::string(function) + ": internal error: " + e.what());
  } catch (...) {
    setError(std::string(function) + ": internal error (unknown exception)");
  }
  return GNNC_ERROR;
}

/// `desc` as a gnnc::OpDesc (int64 row offsets, int32 column indices),
/// after checking its size, enums and the fields that the op's text form
/// needs; `what` names it in messages ("desc").
Expected<OpDesc> toOpDesc(const gnnc_op_desc *desc, const char *what);
/// The gnnc_op_desc of `op` (the inverse of toOpDesc).
gnnc_op_desc fromOpDesc(const OpDesc &op);

/// `desc` (width: the features of one snapshot) as the spmm over a group of
/// `snapshots` snapshots that it describes (width snapshots x F, rows
/// unpadded), after toOpDesc's checks and those of the group's text form;
/// the compiler checks the rest.
Expected<OpDesc> toSnapshotOpDesc(const gnnc_op_desc *desc, int64_t snapshots,
                                  const char *what);
/// The schedule of `op`, a spmm over a snapshot group: `schedule` parsed,
/// or the op's default (defaultSchedule: sliced) when it is NULL.
Expected<Schedule> snapshotSchedule(const char *schedule, const OpDesc &op);

/// `dtype` as an element type, after checking that it names one; `field`
/// names it in messages ("dtype").
Expected<ElementType> toElementType(gnnc_dtype dtype, const char *field);

/// Fails unless 0 <= `numNodes` <= 2^31 (the C interface's column indices
/// are int32); `prefix` (may be empty) starts the message.
Status checkNodeCount(const std::string &prefix, int64_t numNodes);

/// Fails with "`what` is NULL" when `pointer` is null.
Status requireNonNull(const void *pointer, const char *what);

/// Copies `text` with its terminating NUL into `out` of `size` bytes; NULL
/// `out` skips it; fails, naming `what` and the size needed, when it does
/// not fit.
Status copyOut(const std::string &text, char *out, size_t size,
               const char *what);

} // namespace gnnc::capi

#endif // GNNC_LIB_CAPI_SUPPORT_H
