//===- KernelSpecTest.cpp - Manifests and argument binding ----------------===//

#include "TestUtil.h"

#include "gnnc/runtime/KernelSpec.h"
#include "gnnc/runtime/Runtime.h"

#include <gtest/gtest.h>

using namespace gnnc;
using namespace gnnc::rt;
using gnnc::ParamKind;

namespace {

KernelSpec makeSpmm() {
  KernelSpec spec;
  spec.name = "spmm_csr_f32";
  spec.source = "// unused";
  spec.params = {{"rowPtr", ParamKind::Pointer, ParamRole::RowOffsets},
                 {"cols", ParamKind::Pointer, ParamRole::ColumnIndices},
                 {"alpha", ParamKind::Float32},
                 {"rows", ParamKind::Int64, ParamRole::NumRows},
                 {"feat", ParamKind::Pointer, ParamRole::Input, 0},
                 {"other", ParamKind::Pointer, ParamRole::Input, 1},
                 {"nnz", ParamKind::Int64, ParamRole::NumEdges}};
  spec.launch.blockX = 32;
  spec.launch.blockY = 8;
  spec.launch.grid = {ParamRole::NumRows};
  spec.launch.itemsPerBlock = 8;
  spec.launch.sharedBytes = 4096;
  spec.schedule = *parseSchedule("#gnn.schedule<strategy = edge_parallel, "
                                 "vector_width = 4, edges_per_warp = 64>");
  OpDesc op;
  op.kind = OpKind::Spmm;
  op.type = ElementType::F16;
  op.width = 41;
  op.rowStride = 48;
  op.edgeValues = true;
  op.reduce = Reduce::Mean;
  op.scale = DegreeScale::Both;
  op.selfWeight = 0.25;
  op.colNormExponent = 1.5;
  spec.op = op;
  spec.atomicPieceEdges = 64;
  return spec;
}

std::string validManifest() {
  return writeManifest({makeSpmm()}, "kernels.cu");
}

TEST(Manifest, RoundTrip) {
  KernelSpec other = makeSpmm();
  other.name = "sddmm";
  other.launch = LaunchRule();
  // Only a gnn.sddmm's own options travel with it.
  OpDesc sddmm;
  sddmm.kind = OpKind::Sddmm;
  sddmm.width = sddmm.rowStride = 8;
  sddmm.form = SddmmForm::Add;
  sddmm.leakyRelu = 0.2;
  other.op = sddmm;
  other.atomicPieceEdges = 0;
  std::string json = writeManifest({makeSpmm(), other}, "kernels.cu");
  EXPECT_NE(json.find("\"kind\": \"ptr\""), std::string::npos);
  EXPECT_NE(json.find("\"role\": \"row_offsets\""), std::string::npos);
  EXPECT_NE(json.find("\"source\": \"kernels.cu\""), std::string::npos);
  EXPECT_NE(json.find("\"version\": 2"), std::string::npos);

  Expected<std::vector<KernelSpec>> specs =
      readManifest(json, "m.json", "SOURCE");
  ASSERT_TRUE(specs) << specs.message();
  ASSERT_EQ(specs->size(), 2u);
  const KernelSpec &back = (*specs)[0];
  KernelSpec want = makeSpmm();
  EXPECT_EQ(back.name, want.name);
  EXPECT_EQ(back.source, "SOURCE");
  ASSERT_EQ(back.params.size(), want.params.size());
  for (size_t i = 0; i < want.params.size(); ++i) {
    EXPECT_EQ(back.params[i].name, want.params[i].name);
    EXPECT_EQ(back.params[i].kind, want.params[i].kind);
    EXPECT_EQ(back.params[i].role, want.params[i].role);
    EXPECT_EQ(back.params[i].operand, want.params[i].operand);
  }
  EXPECT_EQ(back.launch.blockX, 32u);
  EXPECT_EQ(back.launch.blockY, 8u);
  EXPECT_EQ(back.launch.blockZ, 1u);
  EXPECT_EQ(back.launch.grid, std::vector<ParamRole>{ParamRole::NumRows});
  EXPECT_EQ(back.launch.itemsPerBlock, 8u);
  EXPECT_EQ(back.launch.sharedBytes, 4096u);
  EXPECT_EQ(back.schedule, want.schedule);
  ASSERT_TRUE(back.op);
  EXPECT_EQ(*back.op, *want.op);
  EXPECT_EQ(back.atomicPieceEdges, 64);
  EXPECT_EQ((*specs)[1].name, "sddmm");
  EXPECT_TRUE((*specs)[1].launch.grid.empty());
  EXPECT_EQ(*(*specs)[1].op, *other.op);
  EXPECT_EQ(writeManifest(*specs, "kernels.cu"), json);
}

/// Replaces the first `from` in the manifest `json` (by default the valid
/// one) with `to`, parses it and returns the error message ("" on success).
std::string errorAfter(const std::string &from, const std::string &to,
                       std::string json = validManifest()) {
  size_t at = json.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at == std::string::npos)
    return "";
  json.replace(at, from.size(), to);
  Expected<std::vector<KernelSpec>> specs = readManifest(json, "m.json", "");
  return specs ? "" : specs.message();
}

TEST(Manifest, ErrorsNameTheField) {
  EXPECT_EQ(errorAfter("\"block\": [\n          32", "\"block\": [\n 0"),
            "m.json: kernels[0].launch.block: expected 3 positive integers");
  EXPECT_EQ(errorAfter("\"kind\": \"f32\"", "\"kind\": \"f64\""),
            "m.json: kernels[0].params[2].kind: unknown kind 'f64' (expected "
            "ptr, i32, i64 or f32)");
  EXPECT_EQ(errorAfter("\"name\": \"spmm_csr_f32\"", "\"nom\": \"x\""),
            "m.json: kernels[0]: unknown field 'nom'");
  // The grid names a role no integer parameter has.
  EXPECT_EQ(errorAfter("\"grid\": [\n          \"num_rows\"",
                       "\"grid\": [\n          \"column_indices\""),
            "m.json: kernels[0]: kernel 'spmm_csr_f32': grid role "
            "'column_indices' (parameter 'cols') must be i32 or i64, not ptr");
  EXPECT_EQ(errorAfter("\"grid\": [\n          \"num_rows\"",
                       "\"grid\": [\n          \"num_groups\""),
            "m.json: kernels[0]: kernel 'spmm_csr_f32': grid role "
            "'num_groups' is the role of no parameter");
  EXPECT_EQ(errorAfter("\"grid\": [\n          \"num_rows\"",
                       "\"grid\": [\n          \"rows\""),
            "m.json: kernels[0].launch.grid[0]: unknown parameter role 'rows'");
  EXPECT_EQ(errorAfter("\"role\": \"num_edges\"", "\"role\": \"num_rows\""),
            "m.json: kernels[0]: kernel 'spmm_csr_f32': two parameters have "
            "the role num_rows");
  EXPECT_EQ(
      errorAfter("\"role\": \"num_edges\"", "\"role\": \"input\""),
      "m.json: kernels[0]: kernel 'spmm_csr_f32': parameter 'nnz' has the "
      "role input, passed as ptr, not i64");
  EXPECT_EQ(errorAfter("\"items_per_block\": 8", "\"items_per_block\": 0"),
            "m.json: kernels[0].launch.items_per_block: expected an integer "
            "in [1, 18446744073709551615]");
  EXPECT_EQ(
      errorAfter("\"version\": 2", "\"version\": 1"),
      "m.json: version: unsupported manifest version 1 (this gnnc reads "
      "version 2; recompile the .gnn file with this gnnc to write it again)");
  EXPECT_EQ(errorAfter("\"reduce\": \"mean\"", "\"reduce\": \"median\""),
            "m.json: kernels[0].op.reduce: unknown value 'median' (expected "
            "sum, mean or max)");
  EXPECT_EQ(errorAfter("\"row_stride\": 48", "\"row_stride\": 40"),
            "m.json: kernels[0].op.row_stride: expected an integer in [41, "
            "1048576]");
  // The plans' limits on sizes (gnnc/Plan/Limits.h) bound what a manifest
  // may declare.
  EXPECT_EQ(errorAfter("\"width\": 41", "\"width\": 9223372036854775807"),
            "m.json: kernels[0].op.width: expected an integer in [1, "
            "1048576]");
  EXPECT_EQ(errorAfter("\"self_weight\": 0.25", "\"self_weight\": \"x\""),
            "m.json: kernels[0].op.self_weight: expected a finite number");
  EXPECT_EQ(errorAfter("vector_width = 4", "vector_width = 3"), "");
  EXPECT_NE(errorAfter("vector_width = 4", "vector_sizes = 3")
                .find("m.json: kernels[0].schedule: schedule '#gnn.schedule<"),
            std::string::npos);
  EXPECT_EQ(errorAfter("\"shared_bytes\": 4096", "\"shared_bytes\": -1"),
            "m.json: kernels[0].launch.shared_bytes: expected an integer in "
            "[0, 4294967295]");
  EXPECT_EQ(errorAfter("\"name\": \"rows\"", "\"name\": \"rowPtr\""),
            "m.json: kernels[0]: kernel 'spmm_csr_f32': parameter 'rowPtr' "
            "appears twice");
  std::string syntax = errorAfter("\"kind\": \"spmm\"", "\"kind\": \"spmm\",,");
  EXPECT_EQ(syntax.rfind("m.json: invalid JSON: ", 0), 0u) << syntax;
  EXPECT_NE(syntax.find("line"), std::string::npos) << syntax;
}

TEST(Manifest, LinearEpilogue) {
  // A fused layer's epilogue travels with its gnn.spmm and reads back.
  KernelSpec spec = makeSpmm();
  spec.op->rowStride = spec.op->width;
  spec.op->linearWidth = 24;
  spec.op->linearBias = true;
  spec.op->activation = Activation::Relu;
  spec.op->transposeWeights = true;
  std::string json = writeManifest({spec}, "k.cu");
  Expected<std::vector<KernelSpec>> specs = readManifest(json, "m.json", "");
  ASSERT_TRUE(specs) << specs.message();
  EXPECT_EQ((*specs)[0].op, spec.op);
  // Its fields belong to it: each is refused without linear_width.
  auto errorIn = [&](const std::string &from, const std::string &to) {
    return errorAfter(from, to, json);
  };
  EXPECT_EQ(errorIn("\"linear_width\": 24", "\"linear_widths\": 24"),
            "m.json: kernels[0].op: unknown field 'linear_widths'");
  EXPECT_EQ(errorIn("\"linear_width\": 24,", ""),
            "m.json: kernels[0].op.linear_bias: expected true or false, true "
            "only with linear_width");
  EXPECT_EQ(errorIn("\"activation\": \"relu\"", "\"activation\": \"gelu\""),
            "m.json: kernels[0].op.activation: unknown value 'gelu' (expected "
            "none or relu)");
}

TEST(Manifest, ReadsFileAndSource) {
  test::TempDir dir;
  ASSERT_FALSE(dir.path().empty());
  test::writeFile(dir.path() + "/kernels.cu", "// the kernels\n");
  test::writeFile(dir.path() + "/kernels.json", validManifest());
  Expected<std::vector<KernelSpec>> specs =
      readManifestFile(dir.path() + "/kernels.json");
  ASSERT_TRUE(specs) << specs.message();
  EXPECT_EQ((*specs)[0].source, "// the kernels\n");

  Expected<std::vector<KernelSpec>> missing =
      readManifestFile(dir.path() + "/nope.json");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.message().find("cannot open manifest"), std::string::npos);
}

TEST(Manifest, Preludes) {
  KernelSpec spec = makeSpmm();
  LaunchRule init = spec.launch;
  init.blockX = 128;
  init.itemsPerBlock = 16;
  spec.preludes.push_back({"spmm_init", init});
  std::string json = writeManifest({spec}, "k.cu");
  EXPECT_NE(json.find("\"preludes\""), std::string::npos) << json;
  EXPECT_EQ(json.find("\"follow_ups\""), std::string::npos) << json;
  auto specs = readManifest(json, "m.json", "");
  ASSERT_TRUE(specs) << specs.message();
  const KernelSpec &back = (*specs)[0];
  ASSERT_EQ(back.preludes.size(), 1u);
  EXPECT_TRUE(back.followUps.empty());
  EXPECT_EQ(back.preludes[0].name, "spmm_init");
  EXPECT_EQ(back.preludes[0].launch.blockX, 128u);
  EXPECT_EQ(back.preludes[0].launch.itemsPerBlock, 16u);

  // A prelude named like the kernel or like a follow-up, or not a C name.
  KernelSpec twice = spec;
  twice.preludes[0].name = spec.name;
  Status st = validateKernelSpec(twice);
  EXPECT_NE(st.message().find("'" + spec.name + "' appears twice"),
            std::string::npos)
      << st.message();
  twice = spec;
  twice.followUps.push_back({"spmm_init", spec.launch});
  st = validateKernelSpec(twice);
  EXPECT_NE(st.message().find("'spmm_init' appears twice"), std::string::npos)
      << st.message();
  KernelSpec badName = spec;
  badName.preludes[0].name = "spmm-init";
  st = validateKernelSpec(badName);
  EXPECT_NE(st.message().find("prelude name 'spmm-init' is not a valid C "
                              "identifier"),
            std::string::npos)
      << st.message();
}

TEST(Manifest, FollowUpsAndWorkspace) {
  KernelSpec spec = makeSpmm();
  spec.launch.grid = {ParamRole::NumEdges};
  spec.launch.minBlocks = 1;
  LaunchRule fixup = spec.launch;
  fixup.blockX = 64;
  spec.followUps.push_back({"spmm_fixup", fixup});
  spec.params.push_back({"scratch", ParamKind::Pointer, ParamRole::Workspace});
  spec.workspace = WorkspaceRule{{ParamRole::NumEdges}, 256, 512, 1};
  auto specs = readManifest(writeManifest({spec}, "k.cu"), "m.json", "");
  ASSERT_TRUE(specs) << specs.message();
  const KernelSpec &back = (*specs)[0];
  EXPECT_EQ(back.launch.minBlocks, 1u);
  ASSERT_EQ(back.followUps.size(), 1u);
  EXPECT_EQ(back.followUps[0].name, "spmm_fixup");
  EXPECT_EQ(back.followUps[0].launch.blockX, 64u);
  ASSERT_TRUE(back.workspace.has_value());
  EXPECT_EQ(back.workspace->count, std::vector<ParamRole>{ParamRole::NumEdges});
  EXPECT_EQ(back.workspace->itemsPerUnit, 256u);
  EXPECT_EQ(back.workspace->bytesPerUnit, 512u);

  // Workspace size and grid with the minimum: 1000 edges -> 4 units and
  // 125 blocks, and a graph without edges still gets one block and one unit.
  ArgPack args;
  args.bind(ParamRole::NumEdges, int64_t(1000));
  EXPECT_EQ(*workspaceBytes(back, args), 4u * 512u);
  EXPECT_EQ(*gridBlocks(back, args), 125u);
  args.bind(ParamRole::NumEdges, int64_t(0));
  EXPECT_EQ(*workspaceBytes(back, args), 512u);
  EXPECT_EQ(*gridBlocks(back, args), 1u);

  // A follow-up named like the kernel, a workspace in an integer parameter.
  KernelSpec twice = spec;
  twice.followUps[0].name = spec.name;
  Status st = validateKernelSpec(twice);
  EXPECT_NE(st.message().find("appears twice"), std::string::npos)
      << st.message();
  KernelSpec noWorkspace = spec;
  noWorkspace.params.pop_back();
  st = validateKernelSpec(noWorkspace);
  EXPECT_NE(st.message().find("has a workspace but no parameter with the role "
                              "workspace"),
            std::string::npos)
      << st.message();
  std::string json = writeManifest({spec}, "k.cu");
  const std::string from = "\"count\": [\n          \"num_edges\"";
  json.replace(json.find(from), from.size(),
               "\"count\": [\n          \"column_indices\"");
  auto bad = readManifest(json, "m.json", "");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find(
                "workspace count 'column_indices' (parameter 'cols') must be "
                "i32 or i64"),
            std::string::npos)
      << bad.message();

  // Sums of integer parameters: 1000 + 17 rows -> 4 units of 256 items.
  KernelSpec summed = spec;
  summed.launch.grid = {ParamRole::NumRows, ParamRole::NumEdges};
  summed.workspace->count = summed.launch.grid;
  ASSERT_TRUE(validateKernelSpec(summed))
      << validateKernelSpec(summed).message();
  args.bind(ParamRole::NumEdges, int64_t(1000))
      .bind(ParamRole::NumRows, int64_t(17));
  EXPECT_EQ(*workspaceBytes(summed, args), 4u * 512u);
  EXPECT_EQ(*gridBlocks(summed, args), 128u);
  summed.launch.grid = {ParamRole::NumRows, ParamRole::Input};
  EXPECT_FALSE(validateKernelSpec(summed));
}

TEST(ArgPack, GridFromLaunchRule) {
  KernelSpec spec = makeSpmm();
  ArgPack args;
  args.bind(ParamRole::NumRows, int64_t(17));
  Expected<uint64_t> blocks = gridBlocks(spec, args);
  ASSERT_TRUE(blocks) << blocks.message();
  EXPECT_EQ(*blocks, 3u);
  args.bind(ParamRole::NumRows, int64_t(0));
  EXPECT_EQ(*gridBlocks(spec, args), 0u);
  args.bind(ParamRole::NumRows, int64_t(-4));
  Expected<uint64_t> negative = gridBlocks(spec, args);
  ASSERT_FALSE(negative);
  EXPECT_NE(negative.message().find("negative"), std::string::npos);
  spec.launch.grid.clear();
  EXPECT_EQ(*gridBlocks(spec, args), 1u);
}

TEST(ArgPack, BindsByRoleWhateverTheNames) {
  KernelSpec spec = makeSpmm();
  ArgPack args;
  // By role: the parameter's name does not matter.
  args.bind(ParamRole::NumRows, int64_t(17));
  Expected<ArgPack> named = args.byName(spec);
  ASSERT_TRUE(named) << named.message();
  ASSERT_EQ(named->values().count("rows"), 1u);
  EXPECT_EQ(named->values().at("rows").i64, 17);
  spec.params[3].name = "my_rows";
  named = args.byName(spec);
  ASSERT_TRUE(named) << named.message();
  EXPECT_EQ(named->values().count("my_rows"), 1u);
  // Inputs are told apart by their operand number.
  DeviceBuffer none;
  args.bind(ParamRole::Input, none, 1);
  named = args.byName(spec);
  ASSERT_TRUE(named) << named.message();
  EXPECT_EQ(named->values().count("other"), 1u);
  EXPECT_EQ(named->values().count("feat"), 0u);
  // A role the kernel lacks, and a parameter bound both ways, are errors.
  ArgPack missing;
  missing.bind(ParamRole::ColumnFactors, none);
  Expected<ArgPack> bad = missing.byName(spec);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("bound to the role column_factors, which no "
                               "parameter has"),
            std::string::npos)
      << bad.message();
  ArgPack both;
  both.bind(ParamRole::NumRows, int64_t(1)).bind("my_rows", int64_t(2));
  bad = both.byName(spec);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("'my_rows' (role num_rows) is bound both by "
                               "name and by role"),
            std::string::npos)
      << bad.message();
}

TEST(NoGpu, ReportedAsErrors) {
  std::string why;
  if (gpuAvailable(&why))
    GTEST_SKIP() << "a GPU is present";
  EXPECT_FALSE(why.empty());
  Expected<Runtime> runtime = Runtime::create();
  ASSERT_FALSE(runtime);
  EXPECT_NE(runtime.message().find(why), std::string::npos)
      << runtime.message();
  Expected<DeviceBuffer> buffer = DeviceBuffer::allocate(64);
  ASSERT_FALSE(buffer);
  EXPECT_NE(buffer.message().find("no CUDA"), std::string::npos);
}

} // namespace

TEST(CompileAhead, FillsTheCacheUnderTheKeyALoadLooksUp) {
  // No GPU needed: the cubin lands under the key Runtime::load computes on
  // an sm_90 device (program "gnnc.cu", default options for sm_90).
  test::TempDir dir;
  KernelCache cache(dir.path());
  KernelSpec spec = test::saxpySpec("saxpy", /*blockSize=*/128);
  bool hit = true;
  ASSERT_TRUE(compileAhead(cache, spec, "sm_90", &hit));
  EXPECT_FALSE(hit);
  CompileOptions options;
  options.arch = "sm_90";
  CompiledKernel entry;
  EXPECT_TRUE(cache.lookup(cache.key(spec.source, "gnnc.cu", options),
                           /*isPtx=*/false, entry));
  ASSERT_TRUE(compileAhead(cache, spec, "sm_90", &hit));
  EXPECT_TRUE(hit);
  // A source NVRTC rejects fails with its log; an invalid description is
  // refused before compiling.
  KernelSpec broken = spec;
  broken.source = "extern \"C\" __global__ void saxpy( {";
  Status bad = compileAhead(cache, broken, "sm_90");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.message().find("compiling kernel 'saxpy' for sm_90"),
            std::string::npos)
      << bad.message();
  KernelSpec nameless = spec;
  nameless.name.clear();
  EXPECT_FALSE(compileAhead(cache, nameless, "sm_90"));
}
