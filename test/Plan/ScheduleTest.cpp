//===- ScheduleTest.cpp - The schedule type and its one text form ---------===//
#include "gnnc/Plan/Schedule.h"

#include <gtest/gtest.h>

using namespace gnnc;

namespace {

TEST(Schedule, TextFormListsWhatDiffersFromTheDefaults) {
  Schedule s;
  EXPECT_EQ(s.str(), "#gnn.schedule<>");
  s.strategy = Strategy::EdgeParallel;
  s.vectorWidth = 4;
  s.edgesPerWarp = 64;
  s.write = WriteMode::Staged;
  EXPECT_EQ(s.str(), "#gnn.schedule<strategy = edge_parallel, vector_width = "
                     "4, edges_per_warp = 64, write = staged>");
}

TEST(Schedule, EveryFieldRoundTrips) {
  Schedule s;
  s.strategy = Strategy::TileRouted;
  s.vectorWidth = 8;
  s.discBatch = 32;
  s.groupSize = 16;
  s.dimWorkers = 4;
  s.threadsPerBlock = 128;
  s.edgesPerWarp = 256;
  s.sliceSize = 1024;
  s.tileRouting = true;
  s.accumulate = Accumulate::F16;
  s.write = WriteMode::Shared;
  s.blocksPerSm = 3;
  s.edgeBatch = 4;
  Expected<Schedule> back = parseSchedule(s.str());
  ASSERT_TRUE(back) << back.message();
  EXPECT_EQ(*back, s);
  EXPECT_EQ(back->str(), s.str());
  // The body alone parses too, in any field order.
  Expected<Schedule> body =
      parseSchedule("write = shared, vector_width = 8, blocks_per_sm = 3");
  ASSERT_TRUE(body) << body.message();
  EXPECT_EQ(body->write, WriteMode::Shared);
  EXPECT_EQ(body->vectorWidth, 8);
  EXPECT_EQ(body->blocksPerSm, 3);
  // Every field has a name that parses back to it.
  for (size_t i = 0; i < kNumScheduleFields; ++i) {
    auto field = static_cast<ScheduleField>(i);
    EXPECT_EQ(parseScheduleFieldName(scheduleFieldName(field)), field);
  }
}

TEST(Schedule, BadTextSaysWhy) {
  auto error = [](const std::string &text) {
    Expected<Schedule> s = parseSchedule(text);
    return s ? std::string() : s.message();
  };
  EXPECT_NE(error("#gnn.schedule<vector_sizes = 4>")
                .find("unknown field "
                      "'vector_sizes'"),
            std::string::npos);
  EXPECT_NE(error("vector_width = 4, vector_width = 8")
                .find("field 'vector_width' is given twice"),
            std::string::npos);
  EXPECT_NE(error("strategy = diagonal")
                .find("strategy takes vertex_parallel, neighbor_group, "
                      "edge_parallel, sliced, batched or tile_routed, got "
                      "'diagonal'"),
            std::string::npos);
  EXPECT_NE(error("vector_width = 99999999999")
                .find("vector_width takes a 32-bit integer"),
            std::string::npos);
  EXPECT_NE(
      error("tile_routing = yes").find("tile_routing takes true or false"),
      std::string::npos);
  EXPECT_NE(error("vector_width").find("expected 'key = value'"),
            std::string::npos);
  EXPECT_NE(error("#gnn.schedule<vector_width = 4").find("does not end with"),
            std::string::npos);
}

TEST(Schedule, FieldRules) {
  auto rule = [](auto set) {
    Schedule s;
    set(s);
    return checkScheduleFields(s).message();
  };
  EXPECT_EQ(rule([](Schedule &s) { s.vectorWidth = 3; }),
            "vector_width must be 1, 2, 4 or 8 (0 = choose), got 3");
  EXPECT_EQ(rule([](Schedule &s) { s.dimWorkers = 64; }),
            "dim_workers must be a power of two from 1 to 32 (0 = choose), got "
            "64");
  EXPECT_EQ(rule([](Schedule &s) { s.threadsPerBlock = 100; }),
            "threads_per_block must be a multiple of 32 from 32 to 1024 (0 = "
            "choose), got 100");
  EXPECT_EQ(rule([](Schedule &s) {
              s.dimWorkers = 32;
              s.threadsPerBlock = 32;
              s.blocksPerSm = 33;
            }),
            "blocks_per_sm must be from 0 to 32 (0 = no register cap), got 33");
  EXPECT_EQ(rule([](Schedule &s) {
              s.threadsPerBlock = 512;
              s.blocksPerSm = 8;
            }),
            "blocks_per_sm (8) blocks of threads_per_block (512) exceed the "
            "2048 threads an SM holds");
  EXPECT_EQ(rule([](Schedule &s) { s.groupSize = 8; }),
            "group_size applies to the neighbor_group strategy, not "
            "vertex_parallel");
  EXPECT_EQ(rule([](Schedule &s) { s.discBatch = 2048; }),
            "disc_batch must be from 1 to 1024 (0 = no discretized "
            "reduction), got 2048");
  EXPECT_EQ(rule([](Schedule &s) { s.edgeBatch = 3; }),
            "edge_batch must be a power of two from 1 to 8 (0 = choose), got "
            "3");
  EXPECT_EQ(rule([](Schedule &s) {
              s.strategy = Strategy::TileRouted;
              s.edgeBatch = 2;
            }),
            "edge_batch applies to the strategies that gather rows of "
            "neighbours, not tile_routed");
  EXPECT_EQ(rule([](Schedule &s) { s.edgeBatch = 8; }), "");
  EXPECT_EQ(rule([](Schedule &) {}), "");
}

} // namespace
