//===- EnumNames.h - Spelling the plans' enums ------------------*- C++ -*-===//
//
// Internal to lib/Plan: each enum's spellings are an array indexed by its
// values; these look names up in it.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_LIB_PLAN_ENUMNAMES_H
#define GNNC_LIB_PLAN_ENUMNAMES_H

#include <cstddef>
#include <optional>
#include <string>

namespace gnnc::plan {

/// The enum value whose spelling in `names` is `name`.
template <typename Enum, size_t N>
std::optional<Enum> lookupName(const char *const (&names)[N],
                               const std::string &name) {
  for (size_t i = 0; i < N; ++i)
    if (name == names[i])
      return static_cast<Enum>(i);
  return std::nullopt;
}

/// The spelling of `value` in `names`.
template <typename Enum, size_t N>
const char *nameOf(const char *const (&names)[N], Enum value) {
  size_t i = static_cast<size_t>(value);
  return i < N ? names[i] : "?";
}

} // namespace gnnc::plan

#endif // GNNC_LIB_PLAN_ENUMNAMES_H
