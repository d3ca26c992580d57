//===- KernelInfo.cpp - Reading a compiled kernel's description -----------===//
#include "gnnc/ops/KernelInfo.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace gnnc;
using namespace gnnc::ops;

Expected<KernelInfo> KernelInfo::read(const rt::KernelSpec &spec,
                                      const std::string &op) {
  KernelInfo info(spec);
  std::optional<std::string> actual = info.find("op");
  if (!actual)
    return info.error("has no 'op' in its description; is it a gnn." + op +
                      " kernel?");
  if (*actual != op)
    return info.error("is a gnn." + *actual + " kernel, not a gnn." + op +
                      " kernel");
  return info;
}

Status KernelInfo::error(const std::string &what) const {
  return Status::error("kernel '" + spec_->name + "' " + what);
}

std::optional<std::string> KernelInfo::find(const char *key) const {
  auto it = spec_->info.find(key);
  if (it == spec_->info.end())
    return std::nullopt;
  return it->second;
}

Expected<std::string> KernelInfo::text(const char *key) const {
  std::optional<std::string> value = find(key);
  if (!value)
    return error(std::string("has no '") + key + "' in its description");
  return *value;
}

Expected<int64_t> KernelInfo::integer(const char *key, int64_t min) const {
  Expected<std::string> value = text(key);
  if (!value)
    return value.status();
  const char *begin = value->c_str();
  char *end = nullptr;
  errno = 0;
  long long parsed = std::strtoll(begin, &end, 10);
  if (value->empty() || *end != '\0' || errno == ERANGE)
    return error(std::string("has ") + key + " = '" + *value +
                 "', which is not an integer");
  if (parsed < min)
    return error(std::string("has ") + key + " = " + *value +
                 "; it must be at least " + std::to_string(min));
  return static_cast<int64_t>(parsed);
}

Expected<std::optional<double>> KernelInfo::number(const char *key) const {
  std::optional<std::string> value = find(key);
  if (!value)
    return std::optional<double>();
  const char *begin = value->c_str();
  char *end = nullptr;
  double parsed = std::strtod(begin, &end);
  if (value->empty() || *end != '\0' || !std::isfinite(parsed))
    return error(std::string("has ") + key + " = '" + *value +
                 "', which is not a finite number");
  return std::optional<double>(parsed);
}

Expected<ElementType> KernelInfo::elementType() const {
  Expected<std::string> name = text("element_type");
  if (!name)
    return name.status();
  Expected<ElementType> type = parseElementType(*name);
  if (!type)
    return type.status().withContext("kernel '" + spec_->name + "'");
  return *type;
}

bool KernelInfo::offsets64() const { return find("offset_type") == "i64"; }

bool KernelInfo::indices64() const { return find("index_type") == "i64"; }

Status KernelInfo::expectParams(size_t count, const std::string &what) const {
  if (spec_->params.size() == count)
    return Status::ok();
  return error("has " + std::to_string(spec_->params.size()) + " parameters; " +
               what + " has " + std::to_string(count));
}
