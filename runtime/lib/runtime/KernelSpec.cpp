//===- KernelSpec.cpp - Kernel manifests ----------------------------------===//

#include "gnnc/runtime/KernelSpec.h"
#include "gnnc/Plan/Limits.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

using Json = nlohmann::json;

namespace gnnc::rt {

const KernelParam *KernelSpec::findParam(const std::string &paramName) const {
  for (const KernelParam &param : params)
    if (param.name == paramName)
      return &param;
  return nullptr;
}

const KernelParam *KernelSpec::findRole(ParamRole role, int32_t operand) const {
  for (const KernelParam &param : params)
    if (param.role == role &&
        (role != ParamRole::Input || param.operand == operand))
      return &param;
  return nullptr;
}

static bool isIdentifier(const std::string &text) {
  if (text.empty())
    return false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    bool digit = c >= '0' && c <= '9';
    if (!alpha && !(digit && i > 0))
      return false;
  }
  return true;
}

/// Checks that a parameter of `spec` holds each of `roles`, passed as an
/// i32 or i64; `use` names their use in errors.
static Status checkIntegerRoles(const KernelSpec &spec,
                                const std::string &entry,
                                const std::vector<ParamRole> &roles,
                                const char *use) {
  for (ParamRole role : roles) {
    const KernelParam *param = spec.findRole(role);
    if (!param)
      return Status::error("kernel '" + entry + "': " + use + " '" +
                           paramRoleName(role) +
                           "' is the role of no parameter");
    if (param->kind != ParamKind::Int32 && param->kind != ParamKind::Int64)
      return Status::error("kernel '" + entry + "': " + use + " '" +
                           paramRoleName(role) + "' (parameter '" +
                           param->name + "') must be i32 or i64, not " +
                           paramKindName(param->kind));
  }
  return Status::ok();
}

/// Checks one launch rule of `spec` (the main one or a follow-up's).
static Status validateLaunch(const KernelSpec &spec, const std::string &entry,
                             const LaunchRule &rule) {
  if (rule.blockX == 0 || rule.blockY == 0 || rule.blockZ == 0)
    return Status::error("kernel '" + entry +
                         "': every block dimension must be positive");
  if (rule.itemsPerBlock == 0)
    return Status::error("kernel '" + entry +
                         "': items per block must be at least 1");
  return checkIntegerRoles(spec, entry, rule.grid, "grid role");
}

Status validateKernelSpec(const KernelSpec &spec) {
  if (!isIdentifier(spec.name))
    return Status::error("kernel name '" + spec.name +
                         "' is not a valid C identifier");
  std::set<std::string> entries = {spec.name};
  for (const auto *list : {&spec.preludes, &spec.followUps})
    for (const FollowUpKernel &next : *list) {
      if (!isIdentifier(next.name))
        return Status::error(
            "kernel '" + spec.name +
            "': " + (list == &spec.preludes ? "prelude" : "follow-up") +
            " name '" + next.name + "' is not a valid C identifier");
      if (!entries.insert(next.name).second)
        return Status::error("kernel '" + spec.name + "': entry point '" +
                             next.name + "' appears twice");
    }
  std::set<std::string> seen;
  for (const KernelParam &param : spec.params) {
    if (!isIdentifier(param.name))
      return Status::error("kernel '" + spec.name + "': parameter name '" +
                           param.name + "' is not a valid C identifier");
    if (!seen.insert(param.name).second)
      return Status::error("kernel '" + spec.name + "': parameter '" +
                           param.name + "' appears twice");
    if (param.role != ParamRole::Unused &&
        param.kind != paramKindOf(param.role))
      return Status::error("kernel '" + spec.name + "': parameter '" +
                           param.name + "' has the role " +
                           paramRoleName(param.role) + ", passed as " +
                           paramKindName(paramKindOf(param.role)) + ", not " +
                           paramKindName(param.kind));
    if (param.role != ParamRole::Unused && param.role != ParamRole::Input &&
        spec.findRole(param.role) != &param)
      return Status::error("kernel '" + spec.name +
                           "': two parameters have "
                           "the role " +
                           paramRoleName(param.role));
  }
  GNNC_RETURN_IF_ERROR(validateLaunch(spec, spec.name, spec.launch));
  for (const auto *list : {&spec.preludes, &spec.followUps})
    for (const FollowUpKernel &next : *list)
      GNNC_RETURN_IF_ERROR(validateLaunch(spec, next.name, next.launch));
  if (const std::optional<WorkspaceRule> &ws = spec.workspace) {
    if (!spec.findRole(ParamRole::Workspace))
      return Status::error("kernel '" + spec.name +
                           "' has a workspace but no parameter with the role "
                           "workspace");
    GNNC_RETURN_IF_ERROR(
        checkIntegerRoles(spec, spec.name, ws->count, "workspace count"));
    if (ws->itemsPerUnit == 0)
      return Status::error("kernel '" + spec.name +
                           "': workspace items per unit must be at least 1");
  }
  return Status::ok();
}

static Json rolesJson(const std::vector<ParamRole> &roles) {
  Json list = Json::array();
  for (ParamRole role : roles)
    list.push_back(paramRoleName(role));
  return list;
}

static Json opJson(const OpDesc &op) {
  Json json{{"kind", opKindKey(op.kind)},
            {"element_type", elementTypeName(op.type)},
            {"width", op.width},
            {"row_stride", op.stride()},
            {"offset_type", op.offsets64 ? "i64" : "i32"},
            {"index_type", op.indices64 ? "i64" : "i32"}};
  if (op.batchedGraph)
    json["batched_graph"] = true;
  if (op.snapshots > 0)
    json["snapshots"] = op.snapshots;
  switch (op.kind) {
  case OpKind::Readout:
  case OpKind::ReadoutGrad:
    json["reduce"] = reduceName(op.reduce);
    break;
  case OpKind::Spmm:
    json["edge_values"] = op.edgeValues;
    if (op.attention) {
      json["attention"] = true;
      if (op.leakyRelu)
        json["leaky_relu"] = *op.leakyRelu;
    }
    json["reduce"] = reduceName(op.reduce);
    json["scale"] = degreeScaleName(op.scale);
    if (op.selfWeight)
      json["self_weight"] = *op.selfWeight;
    if (op.colNormExponent)
      json["col_norm_exponent"] = *op.colNormExponent;
    if (op.linear()) {
      json["linear_width"] = op.linearWidth;
      json["linear_bias"] = op.linearBias;
      json["activation"] = activationName(op.activation);
      if (op.transposeWeights)
        json["transpose_weights"] = true;
    }
    break;
  case OpKind::SegmentMatmul:
  case OpKind::SegmentMatmulWeightGrad:
    json["input_width"] = op.inputWidth;
    if (op.transposeWeights)
      json["transpose_weights"] = true;
    break;
  case OpKind::Sddmm:
    json["form"] = sddmmFormName(op.form);
    if (op.leakyRelu)
      json["leaky_relu"] = *op.leakyRelu;
    break;
  default:
    break;
  }
  return json;
}

static Json launchJson(const LaunchRule &rule) {
  Json launch =
      Json{{"block", Json::array({rule.blockX, rule.blockY, rule.blockZ})},
           {"grid", rolesJson(rule.grid)},
           {"items_per_block", rule.itemsPerBlock},
           {"shared_bytes", rule.sharedBytes}};
  if (rule.minBlocks)
    launch["min_blocks"] = rule.minBlocks;
  return launch;
}

std::string writeManifest(const std::vector<KernelSpec> &kernels,
                          const std::string &sourceFileName) {
  Json root = Json::object();
  root["version"] = kManifestVersion;
  root["source"] = sourceFileName;
  Json list = Json::array();
  for (const KernelSpec &spec : kernels) {
    Json kernel = Json::object();
    kernel["name"] = spec.name;
    Json params = Json::array();
    for (const KernelParam &param : spec.params) {
      Json p{{"name", param.name},
             {"kind", paramKindName(param.kind)},
             {"role", paramRoleName(param.role)}};
      if (param.role == ParamRole::Input)
        p["operand"] = param.operand;
      params.push_back(std::move(p));
    }
    kernel["params"] = std::move(params);
    kernel["launch"] = launchJson(spec.launch);
    for (const auto &[key, list] : {std::pair{"preludes", &spec.preludes},
                                    std::pair{"follow_ups", &spec.followUps}}) {
      if (list->empty())
        continue;
      Json next = Json::array();
      for (const FollowUpKernel &f : *list)
        next.push_back(
            Json{{"name", f.name}, {"launch", launchJson(f.launch)}});
      kernel[key] = std::move(next);
    }
    if (const std::optional<WorkspaceRule> &ws = spec.workspace)
      kernel["workspace"] = Json{{"count", rolesJson(ws->count)},
                                 {"items_per_unit", ws->itemsPerUnit},
                                 {"bytes_per_unit", ws->bytesPerUnit},
                                 {"min_units", ws->minUnits}};
    kernel["schedule"] = spec.schedule.str();
    if (spec.op)
      kernel["op"] = opJson(*spec.op);
    if (spec.atomicPieceEdges)
      kernel["atomic_piece_edges"] = spec.atomicPieceEdges;
    list.push_back(std::move(kernel));
  }
  root["kernels"] = std::move(list);
  return root.dump(2) + "\n";
}

namespace {

/// A SAX consumer that accepts everything and keeps the first syntax error,
/// so that malformed JSON is reported with its position without exceptions.
struct SyntaxChecker : nlohmann::json_sax<Json> {
  std::string error;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t &) override { return true; }
  bool string(string_t &) override { return true; }
  bool binary(binary_t &) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t &) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string &,
                   const nlohmann::detail::exception &ex) override {
    error = ex.what();
    return false;
  }
};

/// Reads one manifest, remembering the first error with its field path.
class ManifestReader {
public:
  explicit ManifestReader(std::string manifestPath)
      : manifestPath(std::move(manifestPath)) {}

  Status fail(const std::string &field, const std::string &what) const {
    return Status::error(manifestPath + ": " + field + ": " + what);
  }

  /// Checks that `object` is an object holding only `allowed` keys.
  Status checkObject(const Json &object, const std::string &field,
                     std::initializer_list<const char *> allowed) const {
    if (!object.is_object())
      return fail(field, "expected an object");
    for (auto it = object.begin(); it != object.end(); ++it) {
      bool known = false;
      for (const char *name : allowed)
        known = known || it.key() == name;
      if (!known)
        return fail(field, "unknown field '" + it.key() + "'");
    }
    return Status::ok();
  }

  static std::optional<uint64_t> asUnsigned(const Json &value) {
    if (value.is_number_unsigned())
      return value.get<uint64_t>();
    if (value.is_number_integer() && value.get<int64_t>() >= 0)
      return static_cast<uint64_t>(value.get<int64_t>());
    return std::nullopt;
  }

  Status readString(const Json &object, const char *key,
                    const std::string &field, bool required,
                    std::string &out) const {
    auto it = object.find(key);
    if (it == object.end())
      return required ? fail(field + "." + key, "missing") : Status::ok();
    if (!it->is_string())
      return fail(field + "." + key, "expected a string");
    out = it->get<std::string>();
    return Status::ok();
  }

  Status readUnsigned(const Json &object, const char *key,
                      const std::string &field, uint64_t maxValue,
                      uint64_t minValue, uint64_t &out) const {
    auto it = object.find(key);
    if (it == object.end())
      return Status::ok();
    std::optional<uint64_t> value = asUnsigned(*it);
    if (!value || *value > maxValue || *value < minValue)
      return fail(field + "." + key, "expected an integer in [" +
                                         std::to_string(minValue) + ", " +
                                         std::to_string(maxValue) + "]");
    out = *value;
    return Status::ok();
  }

  /// A list of parameter roles.
  Status readRoles(const Json &list, const std::string &field,
                   std::vector<ParamRole> &out) const {
    if (!list.is_array())
      return fail(field, "expected an array of parameter roles");
    for (size_t i = 0; i < list.size(); ++i) {
      std::string itemField = field + "[" + std::to_string(i) + "]";
      if (!list[i].is_string())
        return fail(itemField, "expected a parameter role");
      std::optional<ParamRole> role =
          parseParamRole(list[i].get<std::string>());
      if (!role)
        return fail(itemField, "unknown parameter role '" +
                                   list[i].get<std::string>() + "'");
      out.push_back(*role);
    }
    return Status::ok();
  }

  /// A number, when `key` is present.
  Status readNumber(const Json &object, const char *key,
                    const std::string &field,
                    std::optional<double> &out) const {
    auto it = object.find(key);
    if (it == object.end())
      return Status::ok();
    if (!it->is_number() || !std::isfinite(it->get<double>()))
      return fail(field + "." + key, "expected a finite number");
    out = it->get<double>();
    return Status::ok();
  }

  /// A string naming one value of an enum: `parse` returns it, `expected`
  /// lists the names in the error.
  template <typename Parse, typename T>
  Status readName(const Json &object, const char *key, const std::string &field,
                  bool required, Parse parse, const char *expected,
                  T &out) const {
    std::string text;
    bool present = object.contains(key);
    GNNC_RETURN_IF_ERROR(readString(object, key, field, required, text));
    if (!present)
      return Status::ok();
    auto value = parse(text);
    if (!value)
      return fail(field + "." + key,
                  "unknown value '" + text + "' (expected " + expected + ")");
    out = *value;
    return Status::ok();
  }

  Status readOp(const Json &object, const std::string &field,
                OpDesc &op) const {
    GNNC_RETURN_IF_ERROR(checkObject(
        object, field, {"kind",         "element_type", "width",
                        "row_stride",   "offset_type",  "index_type",
                        "edge_values",  "attention",    "reduce",
                        "scale",        "self_weight",  "col_norm_exponent",
                        "form",         "leaky_relu",   "batched_graph",
                        "snapshots",    "input_width",  "transpose_weights",
                        "linear_width", "linear_bias",  "activation"}));
    GNNC_RETURN_IF_ERROR(readName(
        object, "kind", field, true,
        [](const std::string &t) { return parseOpKind(t); },
        "spmm, sddmm, edge_softmax, edge_softmax_grad, readout, "
        "readout_grad, segment_matmul or segment_matmul_weight_grad",
        op.kind));
    GNNC_RETURN_IF_ERROR(readName(
        object, "element_type", field, true,
        [](const std::string &t) -> std::optional<ElementType> {
          Expected<ElementType> type = parseElementType(t);
          return type ? std::optional<ElementType>(*type) : std::nullopt;
        },
        "f32, f16 or bf16", op.type));
    auto indexWidth = [](const std::string &t) -> std::optional<bool> {
      if (t == "i32" || t == "i64")
        return t == "i64";
      return std::nullopt;
    };
    GNNC_RETURN_IF_ERROR(readName(object, "offset_type", field, true,
                                  indexWidth, "i32 or i64", op.offsets64));
    GNNC_RETURN_IF_ERROR(readName(object, "index_type", field, true, indexWidth,
                                  "i32 or i64", op.indices64));
    // The plans' limits (gnnc/Plan/Limits.h, checkOpSizes).
    uint64_t width = 0, stride = 0;
    if (!object.contains("width"))
      return fail(field + ".width", "missing");
    GNNC_RETURN_IF_ERROR(readUnsigned(object, "width", field,
                                      limits::kMaxFeatureWidth, 1, width));
    stride = width;
    GNNC_RETURN_IF_ERROR(readUnsigned(object, "row_stride", field,
                                      limits::kMaxRowStride, width, stride));
    op.width = static_cast<int64_t>(width);
    op.rowStride = static_cast<int64_t>(stride);
    if (isSegmentMatmulKind(op.kind)) {
      uint64_t inputWidth = 0;
      if (!object.contains("input_width"))
        return fail(field + ".input_width", "missing (segment_matmul's K)");
      GNNC_RETURN_IF_ERROR(readUnsigned(object, "input_width", field,
                                        limits::kMaxFeatureWidth, 1,
                                        inputWidth));
      op.inputWidth = static_cast<int64_t>(inputWidth);
    } else if (object.contains("input_width")) {
      return fail(field + ".input_width", "applies to segment_matmul only");
    }
    if (object.contains("linear_width")) {
      if (op.kind != OpKind::Spmm)
        return fail(field + ".linear_width", "applies to spmm only");
      uint64_t linearWidth = 0;
      GNNC_RETURN_IF_ERROR(readUnsigned(object, "linear_width", field,
                                        limits::kMaxFeatureWidth, 1,
                                        linearWidth));
      op.linearWidth = static_cast<int64_t>(linearWidth);
    }
    if (auto bias = object.find("linear_bias"); bias != object.end()) {
      if (!bias->is_boolean() || (bias->get<bool>() && !op.linear()))
        return fail(field + ".linear_bias",
                    "expected true or false, true only with linear_width");
      op.linearBias = bias->get<bool>();
    }
    if (auto transposed = object.find("transpose_weights");
        transposed != object.end()) {
      if (op.kind != OpKind::SegmentMatmul && !op.linear())
        return fail(field + ".transpose_weights",
                    "applies to segment_matmul and spmm with linear_width "
                    "only");
      if (!transposed->is_boolean())
        return fail(field + ".transpose_weights", "expected true or false");
      op.transposeWeights = transposed->get<bool>();
    }
    GNNC_RETURN_IF_ERROR(readName(
        object, "activation", field, false,
        [](const std::string &t) { return parseActivation(t); }, "none or relu",
        op.activation));
    if (op.activation != Activation::None && !op.linear())
      return fail(field + ".activation", "applies with linear_width only");
    if (auto batched = object.find("batched_graph"); batched != object.end()) {
      if (!batched->is_boolean())
        return fail(field + ".batched_graph", "expected true or false");
      op.batchedGraph = batched->get<bool>();
    }
    if (object.contains("snapshots")) {
      uint64_t snapshots = 0;
      GNNC_RETURN_IF_ERROR(readUnsigned(object, "snapshots", field,
                                        limits::kMaxSnapshots, 1, snapshots));
      if (op.width % static_cast<int64_t>(snapshots) != 0)
        return fail(field + ".snapshots",
                    "must divide the width (" + std::to_string(op.width) +
                        ": the snapshots' features side by side)");
      op.snapshots = static_cast<int64_t>(snapshots);
    }
    if (auto values = object.find("edge_values"); values != object.end()) {
      if (!values->is_boolean())
        return fail(field + ".edge_values", "expected true or false");
      op.edgeValues = values->get<bool>();
    }
    if (auto attention = object.find("attention"); attention != object.end()) {
      if (!attention->is_boolean())
        return fail(field + ".attention", "expected true or false");
      op.attention = attention->get<bool>();
    }
    GNNC_RETURN_IF_ERROR(readName(
        object, "reduce", field, false,
        [](const std::string &t) { return parseReduce(t); }, "sum, mean or max",
        op.reduce));
    GNNC_RETURN_IF_ERROR(readName(
        object, "scale", field, false,
        [](const std::string &t) { return parseDegreeScale(t); },
        "none, left, right or both", op.scale));
    GNNC_RETURN_IF_ERROR(readName(
        object, "form", field, false,
        [](const std::string &t) { return parseSddmmForm(t); }, "dot or add",
        op.form));
    GNNC_RETURN_IF_ERROR(
        readNumber(object, "self_weight", field, op.selfWeight));
    GNNC_RETURN_IF_ERROR(
        readNumber(object, "col_norm_exponent", field, op.colNormExponent));
    if (op.colNormExponent && !(*op.colNormExponent > 0))
      return fail(field + ".col_norm_exponent", "must be positive");
    GNNC_RETURN_IF_ERROR(readNumber(object, "leaky_relu", field, op.leakyRelu));
    return Status::ok();
  }

  Status readLaunch(const Json &object, const std::string &field,
                    LaunchRule &rule) const {
    GNNC_RETURN_IF_ERROR(checkObject(
        object, field,
        {"block", "grid", "items_per_block", "shared_bytes", "min_blocks"}));
    auto block = object.find("block");
    if (block == object.end())
      return fail(field + ".block", "missing");
    bool good = block->is_array() && block->size() == 3;
    unsigned dims[3] = {0, 0, 0};
    for (size_t i = 0; good && i < 3; ++i) {
      std::optional<uint64_t> value = asUnsigned((*block)[i]);
      good =
          value && *value > 0 && *value <= std::numeric_limits<unsigned>::max();
      if (good)
        dims[i] = static_cast<unsigned>(*value);
    }
    if (!good)
      return fail(field + ".block", "expected 3 positive integers");
    rule.blockX = dims[0];
    rule.blockY = dims[1];
    rule.blockZ = dims[2];
    if (auto grid = object.find("grid"); grid != object.end())
      GNNC_RETURN_IF_ERROR(readRoles(*grid, field + ".grid", rule.grid));
    GNNC_RETURN_IF_ERROR(readUnsigned(object, "items_per_block", field,
                                      std::numeric_limits<uint64_t>::max(), 1,
                                      rule.itemsPerBlock));
    uint64_t shared = rule.sharedBytes;
    GNNC_RETURN_IF_ERROR(readUnsigned(object, "shared_bytes", field,
                                      std::numeric_limits<unsigned>::max(), 0,
                                      shared));
    rule.sharedBytes = static_cast<unsigned>(shared);
    GNNC_RETURN_IF_ERROR(readUnsigned(object, "min_blocks", field,
                                      std::numeric_limits<int32_t>::max(), 0,
                                      rule.minBlocks));
    return Status::ok();
  }

  Status readFollowUps(const Json &list, const std::string &field,
                       std::vector<FollowUpKernel> &out) const {
    if (!list.is_array())
      return fail(field, "expected an array");
    for (size_t i = 0; i < list.size(); ++i) {
      std::string itemField = field + "[" + std::to_string(i) + "]";
      GNNC_RETURN_IF_ERROR(checkObject(list[i], itemField, {"name", "launch"}));
      FollowUpKernel next;
      GNNC_RETURN_IF_ERROR(
          readString(list[i], "name", itemField, true, next.name));
      auto launch = list[i].find("launch");
      if (launch == list[i].end())
        return fail(itemField + ".launch", "missing");
      GNNC_RETURN_IF_ERROR(
          readLaunch(*launch, itemField + ".launch", next.launch));
      out.push_back(std::move(next));
    }
    return Status::ok();
  }

  Status readWorkspace(const Json &object, const std::string &field,
                       WorkspaceRule &ws) const {
    GNNC_RETURN_IF_ERROR(checkObject(
        object, field,
        {"count", "items_per_unit", "bytes_per_unit", "min_units"}));
    auto count = object.find("count");
    if (count == object.end())
      return fail(field + ".count", "missing");
    GNNC_RETURN_IF_ERROR(readRoles(*count, field + ".count", ws.count));
    const uint64_t most = uint64_t(1) << 48;
    GNNC_RETURN_IF_ERROR(readUnsigned(object, "items_per_unit", field, most, 1,
                                      ws.itemsPerUnit));
    GNNC_RETURN_IF_ERROR(readUnsigned(object, "bytes_per_unit", field, most, 0,
                                      ws.bytesPerUnit));
    GNNC_RETURN_IF_ERROR(
        readUnsigned(object, "min_units", field, most, 0, ws.minUnits));
    return Status::ok();
  }

  Status readKernel(const Json &object, const std::string &field,
                    KernelSpec &spec) const {
    GNNC_RETURN_IF_ERROR(
        checkObject(object, field,
                    {"name", "params", "launch", "preludes", "follow_ups",
                     "workspace", "schedule", "op", "atomic_piece_edges"}));
    GNNC_RETURN_IF_ERROR(readString(object, "name", field, true, spec.name));
    auto params = object.find("params");
    if (params == object.end())
      return fail(field + ".params", "missing");
    if (!params->is_array())
      return fail(field + ".params", "expected an array");
    for (size_t i = 0; i < params->size(); ++i) {
      std::string paramField = field + ".params[" + std::to_string(i) + "]";
      const Json &paramJson = (*params)[i];
      GNNC_RETURN_IF_ERROR(checkObject(paramJson, paramField,
                                       {"name", "kind", "role", "operand"}));
      KernelParam param;
      GNNC_RETURN_IF_ERROR(
          readString(paramJson, "name", paramField, true, param.name));
      std::string kind;
      GNNC_RETURN_IF_ERROR(
          readString(paramJson, "kind", paramField, true, kind));
      std::optional<ParamKind> parsed = parseParamKind(kind);
      if (!parsed)
        return fail(paramField + ".kind", "unknown kind '" + kind +
                                              "' (expected ptr, i32, i64 "
                                              "or f32)");
      param.kind = *parsed;
      GNNC_RETURN_IF_ERROR(readName(
          paramJson, "role", paramField, true,
          [](const std::string &t) { return parseParamRole(t); },
          "a parameter role such as row_offsets, input or result", param.role));
      uint64_t operand = 0;
      GNNC_RETURN_IF_ERROR(
          readUnsigned(paramJson, "operand", paramField, 64, 0, operand));
      param.operand = static_cast<int32_t>(operand);
      spec.params.push_back(std::move(param));
    }
    auto launch = object.find("launch");
    if (launch == object.end())
      return fail(field + ".launch", "missing");
    GNNC_RETURN_IF_ERROR(readLaunch(*launch, field + ".launch", spec.launch));
    if (auto before = object.find("preludes"); before != object.end())
      GNNC_RETURN_IF_ERROR(
          readFollowUps(*before, field + ".preludes", spec.preludes));
    if (auto next = object.find("follow_ups"); next != object.end())
      GNNC_RETURN_IF_ERROR(
          readFollowUps(*next, field + ".follow_ups", spec.followUps));
    if (auto ws = object.find("workspace"); ws != object.end()) {
      WorkspaceRule rule;
      GNNC_RETURN_IF_ERROR(readWorkspace(*ws, field + ".workspace", rule));
      spec.workspace = std::move(rule);
    }
    std::string schedule;
    GNNC_RETURN_IF_ERROR(
        readString(object, "schedule", field, false, schedule));
    if (!schedule.empty()) {
      Expected<Schedule> parsed = parseSchedule(schedule);
      if (!parsed)
        return fail(field + ".schedule", parsed.message());
      spec.schedule = *parsed;
    }
    if (auto op = object.find("op"); op != object.end()) {
      OpDesc desc;
      GNNC_RETURN_IF_ERROR(readOp(*op, field + ".op", desc));
      spec.op = desc;
    }
    uint64_t pieces = 0;
    GNNC_RETURN_IF_ERROR(readUnsigned(object, "atomic_piece_edges", field,
                                      uint64_t(1) << 40, 0, pieces));
    spec.atomicPieceEdges = static_cast<int64_t>(pieces);
    Status valid = validateKernelSpec(spec);
    if (!valid)
      return fail(field, valid.message());
    return Status::ok();
  }

private:
  std::string manifestPath;
};

} // namespace

Expected<std::vector<KernelSpec>> readManifest(const std::string &json,
                                               const std::string &manifestPath,
                                               const std::string &source) {
  SyntaxChecker checker;
  if (!Json::sax_parse(json, &checker, Json::input_format_t::json, true) ||
      !checker.error.empty())
    return Status::error(
        manifestPath + ": invalid JSON: " +
        (checker.error.empty() ? std::string("parse failed") : checker.error));
  Json root = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    return Status::error(manifestPath + ": invalid JSON");

  ManifestReader reader(manifestPath);
  if (!root.is_object())
    return Status::error(manifestPath + ": expected a JSON object at the top");
  GNNC_RETURN_IF_ERROR(
      reader.checkObject(root, "manifest", {"version", "source", "kernels"}));
  auto version = root.find("version");
  if (version == root.end())
    return reader.fail("version", "missing");
  if (!version->is_number_integer() ||
      version->get<int64_t>() != kManifestVersion)
    return reader.fail("version",
                       "unsupported manifest version " + version->dump() +
                           " (this gnnc reads version " +
                           std::to_string(kManifestVersion) +
                           "; recompile the .gnn file with this gnnc to write "
                           "it again)");
  std::string sourceName;
  GNNC_RETURN_IF_ERROR(
      reader.readString(root, "source", "manifest", true, sourceName));
  auto kernels = root.find("kernels");
  if (kernels == root.end())
    return reader.fail("kernels", "missing");
  if (!kernels->is_array())
    return reader.fail("kernels", "expected an array");

  std::vector<KernelSpec> specs;
  std::set<std::string> names;
  for (size_t i = 0; i < kernels->size(); ++i) {
    std::string field = "kernels[" + std::to_string(i) + "]";
    KernelSpec spec;
    GNNC_RETURN_IF_ERROR(reader.readKernel((*kernels)[i], field, spec));
    if (!names.insert(spec.name).second)
      return reader.fail(field + ".name",
                         "kernel '" + spec.name + "' appears twice");
    for (const auto &[key, list] : {std::pair{".preludes", &spec.preludes},
                                    std::pair{".follow_ups", &spec.followUps}})
      for (const FollowUpKernel &next : *list)
        if (!names.insert(next.name).second)
          return reader.fail(field + key,
                             "entry point '" + next.name + "' appears twice");
    spec.source = source;
    specs.push_back(std::move(spec));
  }
  return specs;
}

static Expected<std::string> readWholeFile(const std::string &path,
                                           const std::string &what) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return Status::error("cannot open " + what + " '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad())
    return Status::error("cannot read " + what + " '" + path + "'");
  return text.str();
}

Expected<std::vector<KernelSpec>>
readManifestFile(const std::string &manifestPath) {
  Expected<std::string> json = readWholeFile(manifestPath, "manifest");
  if (!json)
    return json.status();
  // Find the source file name first so that it can be read; readManifest
  // validates everything afterwards.
  Json root = Json::parse(*json, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object() || !root.contains("source") ||
      !root["source"].is_string())
    return readManifest(*json, manifestPath, "");
  std::string sourceName = root["source"].get<std::string>();
  std::string sourcePath = sourceName;
  if (sourceName.empty() || sourceName[0] != '/') {
    size_t slash = manifestPath.rfind('/');
    if (slash != std::string::npos)
      sourcePath = manifestPath.substr(0, slash + 1) + sourceName;
  }
  Expected<std::string> source = readWholeFile(sourcePath, "kernel source");
  if (!source)
    return source.status().withContext(manifestPath);
  return readManifest(*json, manifestPath, *source);
}

} // namespace gnnc::rt
