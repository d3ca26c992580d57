//===- DeviceHeadersTest.cpp - gnnc's device helpers under NVRTC ----------===//
//
// The headers of runtime/include/gnnc/cuda that generated kernels include:
// the runtime's embedded copies match the source tree, NVRTC compiles every
// helper they define from those copies (no GPU needed), and the kernel
// cache's key changes with them.
//
//===----------------------------------------------------------------------===//
#include "TestUtil.h"

#include "gnnc/runtime/Cache.h"
#include "gnnc/runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <set>

using namespace gnnc;
using namespace gnnc::rt;

namespace {

/// A kernel `helpers_<tag>` that calls every helper of `tag` at every width.
std::string elementHelpersKernel(const std::string &tag,
                                 const std::string &cType,
                                 const std::vector<int> &widths) {
  std::string text = "extern \"C\" __global__ void helpers_" + tag + "(const " +
                     cType + " *x, " + cType + " *y) {\n" + "  float f[8];\n";
  for (int vw : widths) {
    std::string suffix = tag + "x" + std::to_string(vw);
    text += "  gnnc_load_" + suffix + "(x, f);\n";
    text += "  gnnc_store_" + suffix + "(y, f);\n";
    text += "  gnnc_atomic_add_" + suffix + "(y + 8, f);\n";
  }
  if (tag != "f32")
    text += "  gnnc_unpack_" + tag +
            "x2(*(const unsigned int *)x, f);\n"
            "  gnnc_unpack_" +
            tag +
            "x4(*(const uint2 *)x, f);\n"
            "  gnnc_unpack_" +
            tag +
            "x8(*(const uint4 *)x, f);\n"
            "  gnnc_store_" +
            tag + "x8(y + 16, f);\n";
  return text + "}\n";
}

const char *const kMergePathKernel =
    "extern \"C\" __global__ void merge_rows(const long long *row_ptr,\n"
    "                                        const int *row_ptr32,\n"
    "                                        long long n, long long *out) {\n"
    "  long long i0, i1;\n"
    "  gnnc_merge_rows<32>(row_ptr, n, 0, 5, 0xffffffffu, threadIdx.x % 32,\n"
    "                      i0, i1);\n"
    "  long long j0, j1;\n"
    "  const unsigned mask = 0xfu << (threadIdx.x % 32 / 4 * 4);\n"
    "  gnnc_merge_rows<4>(row_ptr32, n, 1, 7, mask, threadIdx.x % 4, j0, j1);\n"
    "  out[threadIdx.x] = i0 + i1 + j0 + j1;\n"
    "}\n";

/// A source that includes every header and calls every helper.
std::string everyHelperSource() {
  return "#include \"gnnc/cuda/f32.cuh\"\n"
         "#include \"gnnc/cuda/f16.cuh\"\n"
         "#include \"gnnc/cuda/bf16.cuh\"\n"
         "#include \"gnnc/cuda/merge_path.cuh\"\n" +
         elementHelpersKernel("f32", "float", {1, 2, 4}) +
         elementHelpersKernel("f16", "__half", {1, 2, 4, 8}) +
         elementHelpersKernel("bf16", "__nv_bfloat16", {1, 2, 4, 8}) +
         kMergePathKernel;
}

CompileOptions optionsFor(const std::string &arch) {
  CompileOptions options;
  options.arch = arch;
  return options;
}

TEST(DeviceHeaders, EmbeddedCopiesMatchTheSourceTree) {
  std::set<std::string> names;
  for (const InMemoryHeader &header : deviceHeaders()) {
    names.insert(header.name);
    EXPECT_EQ(header.text,
              test::readFile(GNNC_RUNTIME_INCLUDE_DIR "/" + header.name))
        << header.name << " differs from its embedded copy";
  }
  for (const char *name :
       {"gnnc/cuda/f32.cuh", "gnnc/cuda/f16.cuh", "gnnc/cuda/bf16.cuh",
        "gnnc/cuda/merge_path.cuh", "gnnc/cuda/packed16.cuh"})
    EXPECT_TRUE(names.count(name)) << name << " is not embedded";
}

class DeviceHeadersCompile : public ::testing::TestWithParam<std::string> {};

TEST_P(DeviceHeadersCompile, EveryHelperCompiles) {
  Expected<CompiledKernel> kernel =
      compileCuda(everyHelperSource(), "helpers.cu", optionsFor(GetParam()));
  ASSERT_TRUE(kernel) << kernel.message();
  for (const char *entry :
       {"helpers_f32", "helpers_f16", "helpers_bf16", "merge_rows"})
    EXPECT_NE(kernel->binary.find(entry), std::string::npos)
        << entry << " is missing from the cubin";
}

INSTANTIATE_TEST_SUITE_P(Arch, DeviceHeadersCompile,
                         ::testing::Values("sm_80", "sm_90"));

TEST(DeviceHeaders, EachHeaderStandsAlone) {
  for (const InMemoryHeader &header : deviceHeaders()) {
    std::string source = "#include \"" + header.name +
                         "\"\n"
                         "extern \"C\" __global__ void empty() {}\n";
    Expected<CompiledKernel> kernel =
        compileCuda(source, "alone.cu", optionsFor("sm_90"));
    EXPECT_TRUE(kernel) << header.name << ": " << kernel.message();
  }
}

TEST(DeviceHeaders, NvrtcTakesThemFromMemory) {
  std::string source = "#include \"gnnc/cuda/f32.cuh\"\n"
                       "extern \"C\" __global__ void copy(const float *x,\n"
                       "                                 float *y) {\n"
                       "  float f[4];\n"
                       "  gnnc_load_f32x4(x, f);\n"
                       "  gnnc_store_f32x4(y, f);\n"
                       "}\n";
  CompileOptions options = optionsFor("sm_90");
  Expected<CompiledKernel> kernel = compileCuda(source, "copy.cu", options);
  ASSERT_TRUE(kernel) << kernel.message();
  // Without the in-memory headers nothing on the include path has them.
  options.headers.clear();
  kernel = compileCuda(source, "copy.cu", options);
  ASSERT_FALSE(kernel);
  EXPECT_NE(kernel.message().find("gnnc/cuda/f32.cuh"), std::string::npos)
      << kernel.message();
}

TEST(KernelCache, KeyCoversInMemoryHeaders) {
  KernelCache cache = KernelCache::disabled();
  std::string source = test::saxpySource();
  CompileOptions options = optionsFor("sm_90");
  ASSERT_FALSE(options.headers.empty());
  const std::string key = cache.key(source, "saxpy.cu", options);
  EXPECT_EQ(cache.key(source, "saxpy.cu", optionsFor("sm_90")), key);

  CompileOptions edited = options;
  edited.headers[0].text += "\n// one more line\n";
  EXPECT_NE(cache.key(source, "saxpy.cu", edited), key);

  CompileOptions renamed = options;
  renamed.headers[0].name = "gnnc/cuda/renamed.cuh";
  EXPECT_NE(cache.key(source, "saxpy.cu", renamed), key);

  CompileOptions fewer = options;
  fewer.headers.pop_back();
  EXPECT_NE(cache.key(source, "saxpy.cu", fewer), key);
}

} // namespace
