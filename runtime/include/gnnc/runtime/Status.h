//===- Status.h - Errors as values for the gnnc runtime ---------*- C++ -*-===//
//
// The runtime does not use exceptions. Every fallible call returns a Status
// (success or a message) or an Expected<T> (a value or a message). Messages
// say what was being done and what went wrong, e.g.
//   "cora.npz: member 'indices': index 9000 at position 17 is out of range
//    [0, 2708)".
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_RUNTIME_STATUS_H
#define GNNC_RUNTIME_STATUS_H

#include <cassert>
#include <optional>
#include <string>
#include <utility>

namespace gnnc {

/// Success, or an error carrying a human-readable message.
class [[nodiscard]] Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.message_ = std::move(message);
    return s;
  }

  bool isOk() const { return !message_.has_value(); }
  explicit operator bool() const { return isOk(); }
  /// The error message; empty for success.
  const std::string &message() const {
    static const std::string empty;
    return message_ ? *message_ : empty;
  }
  /// Returns this error with `context` prepended ("context: message").
  Status withContext(const std::string &context) const {
    if (isOk())
      return *this;
    return error(context + ": " + *message_);
  }

private:
  std::optional<std::string> message_;
};

/// A value of type T, or an error message.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : value_(std::move(value)) {}
  Expected(Status status) : status_(std::move(status)) {
    assert(!status_.isOk() && "Expected constructed from a success Status");
  }

  bool isOk() const { return value_.has_value(); }
  explicit operator bool() const { return isOk(); }
  const Status &status() const { return status_; }
  const std::string &message() const { return status_.message(); }

  T &operator*() {
    assert(value_);
    return *value_;
  }
  const T &operator*() const {
    assert(value_);
    return *value_;
  }
  T *operator->() { return &**this; }
  const T *operator->() const { return &**this; }
  /// Moves the value out; only valid when isOk().
  T take() {
    assert(value_);
    return std::move(*value_);
  }

private:
  std::optional<T> value_;
  Status status_;
};

} // namespace gnnc

/// Propagates an error Status from an expression returning Status.
#define GNNC_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    ::gnnc::Status gnncStatus_ = (expr);                                       \
    if (!gnncStatus_.isOk())                                                   \
      return gnncStatus_;                                                      \
  } while (false)

#endif // GNNC_RUNTIME_STATUS_H
