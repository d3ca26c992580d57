//===- KernelInfo.h - Reading a compiled kernel's description ---*- C++ -*-===//
//
// Every kernel gnnc compiles carries a description (KernelSpec::info: op,
// element type, widths, options), which may come from a manifest file. The
// ops' signature readers read it through KernelInfo, so that a missing key,
// a number that is not one or an op of the wrong kind is an error naming the
// kernel and the key, never an exception.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_OPS_KERNELINFO_H
#define GNNC_OPS_KERNELINFO_H

#include "gnnc/runtime/Float16.h"
#include "gnnc/runtime/KernelSpec.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <optional>
#include <string>

namespace gnnc::ops {

class KernelInfo {
public:
  /// Fails unless `spec` describes a kernel of `op` ("spmm", "sddmm",
  /// "edge_softmax", ...).
  static Expected<KernelInfo> read(const rt::KernelSpec &spec,
                                   const std::string &op);

  const rt::KernelSpec &spec() const { return *spec_; }

  /// An error about this kernel: "kernel 'NAME' " + what.
  Status error(const std::string &what) const;

  /// The value of `key`; an error if the description has none.
  Expected<std::string> text(const char *key) const;
  /// The value of `key`, or nullopt.
  std::optional<std::string> find(const char *key) const;
  /// `key` as an integer of at least `min`.
  Expected<int64_t> integer(const char *key, int64_t min) const;
  /// `key` as a finite number, if present.
  Expected<std::optional<double>> number(const char *key) const;

  /// The element type (`element_type`).
  Expected<ElementType> elementType() const;
  /// 64-bit row offsets and column indices (`offset_type`, `index_type`).
  bool offsets64() const;
  bool indices64() const;

  /// Fails unless the kernel has `count` parameters; `what` names the kind
  /// of kernel in the message ("an edge softmax kernel").
  Status expectParams(size_t count, const std::string &what) const;

private:
  explicit KernelInfo(const rt::KernelSpec &spec) : spec_(&spec) {}
  const rt::KernelSpec *spec_;
};

} // namespace gnnc::ops

#endif // GNNC_OPS_KERNELINFO_H
