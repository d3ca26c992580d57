//===- Schedule.cpp - How a gnnc op runs on a GPU -------------------------===//
#include "gnnc/Plan/Schedule.h"
#include "gnnc/Plan/Limits.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <sstream>
#include <vector>

#include "EnumNames.h"

using namespace gnnc;
using namespace gnnc::plan;
using namespace gnnc::limits;

namespace {

const char *const kStrategyNames[] = {"vertex_parallel", "neighbor_group",
                                      "edge_parallel",   "sliced",
                                      "batched",         "tile_routed"};
const char *const kAccumulateNames[] = {"f32", "f16"};
const char *const kWriteNames[] = {"direct", "atomic", "staged", "shared"};
const char *const kMathNames[] = {"auto", "simt", "tensor_core", "wgmma"};

template <size_t N> std::string listOf(const char *const (&names)[N]) {
  std::string text;
  for (size_t i = 0; i < N; ++i)
    text += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(names[i]);
  return text;
}

/// One field of a Schedule: its name and where it lives.
struct FieldInfo {
  const char *name;
  int32_t Schedule::*integer = nullptr;
};

const FieldInfo kFields[kNumScheduleFields] = {
    {"strategy"},
    {"vector_width", &Schedule::vectorWidth},
    {"disc_batch", &Schedule::discBatch},
    {"group_size", &Schedule::groupSize},
    {"dim_workers", &Schedule::dimWorkers},
    {"threads_per_block", &Schedule::threadsPerBlock},
    {"edges_per_warp", &Schedule::edgesPerWarp},
    {"slice_size", &Schedule::sliceSize},
    {"tile_routing"},
    {"accumulate"},
    {"write"},
    {"blocks_per_sm", &Schedule::blocksPerSm},
    {"tile_rows", &Schedule::tileRows},
    {"graphs_per_block", &Schedule::graphsPerBlock},
    {"math"},
    {"stages", &Schedule::stages},
    {"edge_batch", &Schedule::edgeBatch},
};

const FieldInfo &info(ScheduleField field) {
  return kFields[static_cast<size_t>(field)];
}

bool isPowerOfTwoUpTo(int32_t v, int32_t max) {
  return v >= 1 && v <= max && (v & (v - 1)) == 0;
}

} // namespace

const char *gnnc::strategyName(Strategy strategy) {
  return nameOf(kStrategyNames, strategy);
}
const char *gnnc::accumulateName(Accumulate accumulate) {
  return nameOf(kAccumulateNames, accumulate);
}
const char *gnnc::writeModeName(WriteMode write) {
  return nameOf(kWriteNames, write);
}
const char *gnnc::mathModeName(MathMode math) {
  return nameOf(kMathNames, math);
}
std::optional<MathMode> gnnc::parseMathMode(const std::string &name) {
  return lookupName<MathMode>(kMathNames, name);
}
std::optional<Strategy> gnnc::parseStrategy(const std::string &name) {
  return lookupName<Strategy>(kStrategyNames, name);
}
std::optional<Accumulate> gnnc::parseAccumulate(const std::string &name) {
  return lookupName<Accumulate>(kAccumulateNames, name);
}
std::optional<WriteMode> gnnc::parseWriteMode(const std::string &name) {
  return lookupName<WriteMode>(kWriteNames, name);
}

bool Schedule::operator==(const Schedule &o) const {
  for (size_t i = 0; i < kNumScheduleFields; ++i) {
    auto field = static_cast<ScheduleField>(i);
    if (scheduleFieldValue(*this, field) != scheduleFieldValue(o, field))
      return false;
  }
  return true;
}

std::string Schedule::str() const {
  return "#gnn.schedule<" + scheduleBody(*this) + ">";
}

const char *gnnc::scheduleFieldName(ScheduleField field) {
  return info(field).name;
}

std::optional<ScheduleField>
gnnc::parseScheduleFieldName(const std::string &name) {
  for (size_t i = 0; i < kNumScheduleFields; ++i)
    if (name == kFields[i].name)
      return static_cast<ScheduleField>(i);
  return std::nullopt;
}

std::string gnnc::scheduleFieldValue(const Schedule &s, ScheduleField field) {
  switch (field) {
  case ScheduleField::Strategy:
    return strategyName(s.strategy);
  case ScheduleField::TileRouting:
    return s.tileRouting ? "true" : "false";
  case ScheduleField::Accumulate:
    return accumulateName(s.accumulate);
  case ScheduleField::Write:
    return writeModeName(s.write);
  case ScheduleField::Math:
    return mathModeName(s.math);
  default:
    return std::to_string(s.*info(field).integer);
  }
}

bool gnnc::isDefaultField(const Schedule &s, ScheduleField field) {
  static const Schedule defaults;
  return scheduleFieldValue(s, field) == scheduleFieldValue(defaults, field);
}

Status gnnc::setScheduleField(Schedule &s, ScheduleField field,
                              const std::string &value) {
  auto bad = [&](const std::string &takes) {
    return Status::error(std::string(info(field).name) + " takes " + takes +
                         ", got '" + value + "'");
  };
  switch (field) {
  case ScheduleField::Strategy:
    if (auto v = parseStrategy(value)) {
      s.strategy = *v;
      return Status::ok();
    }
    return bad(listOf(kStrategyNames));
  case ScheduleField::TileRouting:
    if (value != "true" && value != "false")
      return bad("true or false");
    s.tileRouting = value == "true";
    return Status::ok();
  case ScheduleField::Accumulate:
    if (auto v = parseAccumulate(value)) {
      s.accumulate = *v;
      return Status::ok();
    }
    return bad(listOf(kAccumulateNames));
  case ScheduleField::Write:
    if (auto v = parseWriteMode(value)) {
      s.write = *v;
      return Status::ok();
    }
    return bad(listOf(kWriteNames));
  case ScheduleField::Math:
    if (auto v = parseMathMode(value)) {
      s.math = *v;
      return Status::ok();
    }
    return bad(listOf(kMathNames));
  default: {
    const char *begin = value.c_str();
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(begin, &end, 10);
    if (value.empty() || *end != '\0' || errno == ERANGE || v < INT32_MIN ||
        v > INT32_MAX || std::isspace(static_cast<unsigned char>(value[0])))
      return bad("a 32-bit integer");
    s.*info(field).integer = static_cast<int32_t>(v);
    return Status::ok();
  }
  }
}

std::string gnnc::scheduleBody(const Schedule &s) {
  std::string body;
  for (size_t i = 0; i < kNumScheduleFields; ++i) {
    auto field = static_cast<ScheduleField>(i);
    if (isDefaultField(s, field))
      continue;
    if (!body.empty())
      body += ", ";
    body += std::string(kFields[i].name) + " = " + scheduleFieldValue(s, field);
  }
  return body;
}

Expected<Schedule> gnnc::parseSchedule(const std::string &text) {
  std::string body = text;
  auto trim = [](std::string t) {
    size_t b = t.find_first_not_of(" \t\n");
    size_t e = t.find_last_not_of(" \t\n");
    return b == std::string::npos ? std::string() : t.substr(b, e - b + 1);
  };
  body = trim(body);
  const std::string open = "#gnn.schedule<";
  if (body.compare(0, open.size(), open) == 0) {
    if (body.back() != '>')
      return Status::error("schedule '" + text + "' does not end with '>'");
    body = body.substr(open.size(), body.size() - open.size() - 1);
  }
  Schedule s;
  std::vector<bool> seen(kNumScheduleFields, false);
  std::stringstream items(body);
  std::string item;
  while (std::getline(items, item, ',')) {
    size_t eq = item.find('=');
    std::string key = trim(item.substr(0, eq));
    if (eq == std::string::npos)
      return Status::error("schedule '" + text + "': expected 'key = value', " +
                           "got '" + trim(item) + "'");
    std::optional<ScheduleField> field = parseScheduleFieldName(key);
    if (!field)
      return Status::error("schedule '" + text + "': unknown field '" + key +
                           "'");
    if (seen[static_cast<size_t>(*field)])
      return Status::error("schedule '" + text + "': field '" + key +
                           "' is given twice");
    seen[static_cast<size_t>(*field)] = true;
    GNNC_RETURN_IF_ERROR(setScheduleField(s, *field, trim(item.substr(eq + 1)))
                             .withContext("schedule '" + text + "'"));
  }
  return s;
}

Status gnnc::checkScheduleFields(const Schedule &s) {
  auto fail = [](const std::string &message) { return Status::error(message); };
  if (s.vectorWidth != 0 && !isPowerOfTwoUpTo(s.vectorWidth, 8))
    return fail("vector_width must be 1, 2, 4 or 8 (0 = choose), got " +
                std::to_string(s.vectorWidth));
  if (s.dimWorkers != 0 && !isPowerOfTwoUpTo(s.dimWorkers, kWarpSize))
    return fail("dim_workers must be a power of two from 1 to 32 (0 = "
                "choose), got " +
                std::to_string(s.dimWorkers));
  int32_t t = s.threadsPerBlock;
  if (t != 0 && (t < kWarpSize || t > kMaxThreadsPerBlock || t % kWarpSize))
    return fail("threads_per_block must be a multiple of 32 from 32 to 1024 "
                "(0 = choose), got " +
                std::to_string(t));
  if (s.dimWorkers != 0 && t != 0 && s.dimWorkers > t)
    return fail("dim_workers (" + std::to_string(s.dimWorkers) +
                ") exceeds threads_per_block (" + std::to_string(t) + ")");
  if (s.discBatch < 0 || s.discBatch > kMaxDiscBatch)
    return fail(
        "disc_batch must be from 1 to " + std::to_string(kMaxDiscBatch) +
        " (0 = no discretized reduction), got " + std::to_string(s.discBatch));
  if (s.groupSize < 0)
    return fail("group_size must be >= 0, got " + std::to_string(s.groupSize));
  if (s.edgesPerWarp < 0)
    return fail("edges_per_warp must be >= 0, got " +
                std::to_string(s.edgesPerWarp));
  if (s.sliceSize < 0 || s.sliceSize > kMaxSliceSize)
    return fail("slice_size must be from 1 to " +
                std::to_string(kMaxSliceSize) + " (0 = choose), got " +
                std::to_string(s.sliceSize));
  const char *strategy = strategyName(s.strategy);
  if (s.groupSize != 0 && s.strategy != Strategy::NeighborGroup)
    return fail(std::string("group_size applies to the neighbor_group "
                            "strategy, not ") +
                strategy);
  if (s.edgesPerWarp != 0 && s.strategy != Strategy::EdgeParallel)
    return fail(std::string("edges_per_warp applies to the edge_parallel "
                            "strategy, not ") +
                strategy);
  if (s.sliceSize != 0 && s.strategy != Strategy::Sliced)
    return fail(std::string("slice_size applies to the sliced strategy, not ") +
                strategy);
  if (s.tileRows < 0 || s.tileRows > kMaxTileRows)
    return fail("tile_rows must be from 1 to " + std::to_string(kMaxTileRows) +
                " (0 = choose), got " + std::to_string(s.tileRows));
  if (s.graphsPerBlock < 0 || s.graphsPerBlock > kMaxGraphsPerBlock)
    return fail("graphs_per_block must be from 1 to " +
                std::to_string(kMaxGraphsPerBlock) + " (0 = choose), got " +
                std::to_string(s.graphsPerBlock));
  if (s.tileRows != 0 && s.strategy != Strategy::Batched &&
      s.strategy != Strategy::TileRouted)
    return fail(std::string("tile_rows applies to the batched and "
                            "tile_routed strategies, not ") +
                strategy);
  if (s.graphsPerBlock != 0 && s.strategy != Strategy::Batched)
    return fail(
        std::string("graphs_per_block applies to the batched strategy, not ") +
        strategy);
  if (s.tileRouting && s.strategy != Strategy::TileRouted)
    return fail(std::string("tile_routing applies to the tile_routed "
                            "strategy, not ") +
                strategy);
  if (s.math != MathMode::Auto && s.strategy != Strategy::TileRouted)
    return fail(std::string("math applies to the tile_routed strategy, not ") +
                strategy);
  if (s.stages != 0 &&
      (s.stages < kMinPipelineStages || s.stages > kMaxPipelineStages))
    return fail("stages must be from " + std::to_string(kMinPipelineStages) +
                " to " + std::to_string(kMaxPipelineStages) +
                " (0 = choose), got " + std::to_string(s.stages));
  if (s.stages != 0 && s.math == MathMode::Simt)
    return fail(
        "stages applies to math = tensor_core or wgmma; the SIMT kernel "
        "stages the whole weight matrix once");
  if (s.stages != 0 && s.strategy != Strategy::TileRouted)
    return fail(std::string("stages applies to the tile_routed strategy, "
                            "not ") +
                strategy);
  if (s.edgeBatch != 0 && !isPowerOfTwoUpTo(s.edgeBatch, kMaxEdgeBatch))
    return fail("edge_batch must be a power of two from 1 to " +
                std::to_string(kMaxEdgeBatch) + " (0 = choose), got " +
                std::to_string(s.edgeBatch));
  if (s.edgeBatch != 0 && s.strategy == Strategy::TileRouted)
    return fail(std::string("edge_batch applies to the strategies that "
                            "gather rows of neighbours, not ") +
                strategy);
  if (s.blocksPerSm < 0 || s.blocksPerSm > kMaxBlocksPerSm)
    return fail("blocks_per_sm must be from 0 to " +
                std::to_string(kMaxBlocksPerSm) +
                " (0 = no register cap), got " + std::to_string(s.blocksPerSm));
  if (s.blocksPerSm != 0 && t != 0 &&
      static_cast<int64_t>(s.blocksPerSm) * t > kMaxThreadsPerSm)
    return fail("blocks_per_sm (" + std::to_string(s.blocksPerSm) +
                ") blocks of threads_per_block (" + std::to_string(t) +
                ") exceed the 2048 threads an SM holds");
  return Status::ok();
}
