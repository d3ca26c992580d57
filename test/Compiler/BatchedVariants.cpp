//===- BatchedVariants.cpp - gnn.spmm batched kernels for tests -----------===//
#include "BatchedVariants.h"

using namespace gnnc;
using namespace gnnc::test;

std::string BatchedVariant::kernelName() const {
  return "b_" + type + "_w" + std::to_string(width) + "_" + tag;
}

std::vector<BatchedVariant> gnnc::test::batchedVariants() {
  std::vector<BatchedVariant> out;
  auto add = [&](std::string type, int64_t width, std::string schedule,
                 std::string tag) {
    BatchedVariant v;
    v.type = std::move(type);
    v.width = width;
    v.schedule = std::move(schedule);
    v.tag = std::move(tag);
    out.push_back(v);
    return &out.back();
  };
  for (const char *type : {"f32", "f16", "bf16"})
    for (int64_t width : {1, 3, 16, 32, 41, 64, 128, 256}) {
      add(type, width, "", "default");
      add(type, width, "graphs_per_block = 4, tile_rows = 128", "groups");
      // A tile of 12 rows: larger graphs take the global path; at width
      // 256 (and 128 in f32) a row is cut into column blocks.
      add(type, width, "graphs_per_block = 3, tile_rows = 12", "small");
      // Fewer neighbours a batch than the registers allow, staged and
      // from global memory.
      add(type, width, "tile_rows = 16, edge_batch = 2", "eb2");
    }
  for (const char *type : {"f32", "f16"})
    for (int64_t width : {3, 64})
      add(type, width, "tile_rows = 32, edge_batch = 1", "eb1")->values = true;
  for (const char *type : {"f32", "f16", "bf16"})
    for (int64_t width : {3, 64, 256}) {
      add(type, width, "graphs_per_block = 2, tile_rows = 12", "mean")->reduce =
          "mean";
      add(type, width, "graphs_per_block = 2, tile_rows = 12", "max")->reduce =
          "max";
      add(type, width, "", "values")->values = true;
      BatchedVariant *gcn =
          add(type, width, "graphs_per_block = 2, tile_rows = 12", "gcn");
      gcn->scale = "both";
      gcn->values = true;
      add(type, width, "", "left")->scale = "left";
      BatchedVariant *gin = add(type, width, "", "gin");
      gin->self = "0.5";
      gin->reduce = "mean";
    }
  for (int64_t width : {64, 256}) {
    add("f16", width, "accumulate = f16", "acc16");
    add("f16", width, "accumulate = f16, disc_batch = 4, tile_rows = 12",
        "disc")
        ->reduce = "mean";
    add("f32", width, "disc_batch = 4", "disc32")->scale = "left";
  }
  // Linear epilogues: a GCN layer (both scaling, bias, ReLU), a GIN layer
  // (self term), mean and max, edge values; K and M odd, narrow and wide;
  // tile_rows 16 sends the larger graphs to the global-memory path.
  struct Linear {
    int64_t k, m;
    const char *schedule, *reduce, *scale, *self;
    bool values, bias, relu;
    const char *tag;
  };
  const Linear linears[] = {
      {64, 64, "", "", "both", "", false, true, true, "lgcn"},
      {3, 16, "", "", "", "0.0", false, true, true, "lgin"},
      {41, 24, "tile_rows = 16, graphs_per_block = 3", "mean", "", "", false,
       false, false, "lmean"},
      {128, 256, "", "", "", "0.25", false, true, true, "lwide"},
      {256, 128, "", "max", "", "", true, false, true, "lmax"},
      {16, 8, "tile_rows = 16", "", "left", "", true, true, false, "lsmall"},
      {32, 512, "tile_rows = 32", "", "right", "", false, true, true, "lcols"},
      // Two staged passes in f16 and bf16 (64 columns each), streamed in
      // f32.
      {96, 128, "", "", "both", "", false, true, true, "ltwo"},
      // Staged weights with more warps than multiply: the warps beyond the
      // four only aggregate.
      {64, 64, "tile_rows = 32, threads_per_block = 256", "", "both", "", false,
       true, true, "lgcn256"},
      {41, 24, "tile_rows = 16, graphs_per_block = 3, threads_per_block = 512",
       "mean", "", "", true, false, false, "lmean512"},
  };
  for (const char *type : {"f32", "f16", "bf16"})
    for (const Linear &l : linears) {
      BatchedVariant *v = add(type, l.k, l.schedule, l.tag);
      v->reduce = l.reduce;
      v->scale = l.scale;
      v->self = l.self;
      v->values = l.values;
      v->linearWidth = l.m;
      v->bias = l.bias;
      v->relu = l.relu;
    }
  add("f16", 64, "accumulate = f16, disc_batch = 4", "ldisc")->linearWidth = 64;
  // Transposed weights (torch.nn.Linear's layout; the backward's W).
  for (const char *type : {"f32", "f16", "bf16"})
    for (auto [k, m] : {std::pair<int64_t, int64_t>{64, 32}, {8, 136}}) {
      BatchedVariant *v = add(type, k, m == 32 ? "" : "tile_rows = 16",
                              m == 32 ? "ltrans" : "ltrans2");
      v->linearWidth = m;
      v->transposed = true;
      v->bias = m == 32;
      v->scale = "right";
    }
  return out;
}

std::string
gnnc::test::batchedModuleText(const std::vector<BatchedVariant> &variants) {
  std::string text = "gnn.module @batched {\n";
  for (const BatchedVariant &v : variants) {
    std::string feat =
        "tensor<?x" + std::to_string(v.width) + "x" + v.type + ">";
    std::string graph = "!gnn.graph<batched_csr, i64, i32>";
    std::string result = feat, linearArgs, linearOperands;
    if (v.linearWidth > 0) {
      const std::string m = std::to_string(v.linearWidth);
      const std::string k = std::to_string(v.width);
      const std::string w = "tensor<" +
                            (v.transposed ? m + "x" + k : k + "x" + m) + "x" +
                            v.type + ">";
      const std::string b = "tensor<" + m + "x" + v.type + ">";
      result = "tensor<?x" + m + "x" + v.type + ">";
      linearArgs = ", %lw: " + w + (v.bias ? ", %lb: " + b : "");
      linearOperands =
          " weight(%lw : " + w + ")" + (v.bias ? " bias(%lb : " + b + ")" : "");
    }
    text += "  gnn.kernel @" + v.kernelName() + "(%g: " + graph +
            ", %x: " + feat +
            (v.values ? ", %w: tensor<?x" + v.type + ">" : "") + linearArgs +
            ") -> " + result + " {\n";
    std::string attrs;
    if (!v.reduce.empty())
      attrs += "reduce = #gnn<reduce " + v.reduce + ">, ";
    if (!v.scale.empty())
      attrs += "scale = #gnn<scale " + v.scale + ">, ";
    if (!v.self.empty())
      attrs += "self_weight = " + v.self + " : f32, ";
    if (v.relu)
      attrs += "activation = #gnn<activation relu>, ";
    if (v.transposed)
      attrs += "transpose_weights, ";
    attrs += "schedule = #gnn.schedule<strategy = batched" +
             (v.schedule.empty() ? "" : ", " + v.schedule) + ">";
    text += "    %y = gnn.spmm %g, %x" +
            (v.values ? " values(%w : tensor<?x" + v.type + ">)" : "") +
            linearOperands + " {" + attrs + "} : " + graph + ", " + feat +
            " -> " + result + "\n";
    text += "    gnn.return %y : " + result + "\n  }\n";
  }
  return text + "}\n";
}

std::string gnnc::test::readoutModuleText(size_t *count) {
  std::string text = "gnn.module @readout {\n";
  size_t n = 0;
  const std::string graph = "!gnn.graph<batched_csr, i64, i32>";
  auto kernel = [&](const std::string &type, int64_t width,
                    const std::string &reduce, bool grad,
                    const std::string &schedule) {
    const std::string t =
        "tensor<?x" + std::to_string(width) + "x" + type + ">";
    const std::string name = std::string(grad ? "rg_" : "r_") + type + "_w" +
                             std::to_string(width) + "_" + reduce +
                             (schedule.empty() ? "" : "_gpb");
    std::string attrs = "reduce = #gnn<reduce " + reduce + ">";
    if (!schedule.empty())
      attrs +=
          ", schedule = #gnn.schedule<strategy = batched, " + schedule + ">";
    text += "  gnn.kernel @" + name + "(%g: " + graph + ", %x: " + t +
            (grad ? ", %y: " + t + ", %dy: " + t : "") + ") -> " + t +
            " {\n    %r = " +
            (grad ? "gnn.readout_grad %g, %x, %y, %dy" : "gnn.readout %g, %x") +
            " {" + attrs + "} : " + graph + ", " + t +
            (grad ? ", " + t + ", " + t : "") + " -> " + t +
            "\n    gnn.return %r : " + t + "\n  }\n";
    ++n;
  };
  for (const char *type : {"f32", "f16", "bf16"})
    for (int64_t width : {1, 3, 16, 64, 256})
      for (const char *reduce : {"sum", "mean", "max"})
        for (bool grad : {false, true})
          kernel(type, width, reduce, grad, "");
  for (const char *reduce : {"sum", "mean", "max"})
    for (bool grad : {false, true})
      kernel("f32", 64, reduce, grad, "graphs_per_block = 3");
  *count = n;
  return text + "}\n";
}
