//===- NvrtcTest.cpp - NVRTC compilation (no GPU needed) ------------------===//

#include "TestUtil.h"

#include "gnnc/runtime/Nvrtc.h"

#include <gtest/gtest.h>

#include <sys/stat.h>

using namespace gnnc;
using namespace gnnc::rt;

namespace {

bool startsWithElf(const std::string &binary) {
  return binary.size() > 4 && binary.compare(0, 4,
                                             "\x7f"
                                             "ELF") == 0;
}

TEST(Nvrtc, FindsIncludeDirs) {
  Expected<std::vector<std::string>> dirs = findCudaIncludeDirs();
  ASSERT_TRUE(dirs) << dirs.message();
  ASSERT_FALSE(dirs->empty());
  struct stat info;
  EXPECT_EQ(::stat(((*dirs)[0] + "/cuda_fp16.h").c_str(), &info), 0);
}

TEST(Nvrtc, VersionString) {
  std::string version = nvrtcVersionString();
  EXPECT_NE(version, "unknown");
  EXPECT_NE(version.find('.'), std::string::npos);
}

class NvrtcArch : public ::testing::TestWithParam<std::string> {};

TEST_P(NvrtcArch, CompilesCubin) {
  CompileOptions options;
  options.arch = GetParam();
  Expected<CompiledKernel> kernel =
      compileCuda(test::saxpySource(), "saxpy.cu", options);
  ASSERT_TRUE(kernel) << kernel.message();
  EXPECT_FALSE(kernel->isPtx);
  EXPECT_TRUE(startsWithElf(kernel->binary));
}

INSTANTIATE_TEST_SUITE_P(Archs, NvrtcArch, ::testing::Values("sm_80", "sm_90"));

TEST(Nvrtc, CompilesPtx) {
  CompileOptions options;
  options.arch = "sm_90";
  options.ptx = true;
  Expected<CompiledKernel> kernel =
      compileCuda(test::saxpySource(), "saxpy.cu", options);
  ASSERT_TRUE(kernel) << kernel.message();
  EXPECT_TRUE(kernel->isPtx);
  EXPECT_FALSE(startsWithElf(kernel->binary));
  EXPECT_NE(kernel->binary.find(".entry saxpy"), std::string::npos);
  EXPECT_NE(kernel->binary.find(".target sm_90"), std::string::npos);
  EXPECT_EQ(kernel->binary.find('\0'), std::string::npos);
}

TEST(Nvrtc, SyntaxErrorCarriesLog) {
  CompileOptions options;
  options.arch = "sm_90";
  std::string source = "extern \"C\" __global__ void broken(int *p) {\n"
                       "  int x = ;\n"
                       "  p[0] = x;\n"
                       "}\n";
  Expected<CompiledKernel> kernel = compileCuda(source, "broken.cu", options);
  ASSERT_FALSE(kernel);
  EXPECT_NE(kernel.message().find("broken.cu(2): error"), std::string::npos)
      << kernel.message();
  EXPECT_NE(kernel.message().find("NVRTC log"), std::string::npos);
}

TEST(Nvrtc, HalfAndBfloat16Headers) {
  CompileOptions options;
  options.arch = "sm_90";
  std::string source =
      "#include <cuda_fp16.h>\n"
      "#include <cuda_bf16.h>\n"
      "extern \"C\" __global__ void mix(const __half *a,\n"
      "                                 const __nv_bfloat16 *b, float *out,\n"
      "                                 int n) {\n"
      "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  if (i < n)\n"
      "    out[i] = __half2float(a[i]) + __bfloat162float(b[i]);\n"
      "}\n";
  Expected<CompiledKernel> kernel = compileCuda(source, "mix.cu", options);
  ASSERT_TRUE(kernel) << kernel.message();
  EXPECT_TRUE(startsWithElf(kernel->binary));
}

TEST(Nvrtc, RejectsBadArch) {
  CompileOptions options;
  options.arch = "ampere";
  Expected<CompiledKernel> kernel =
      compileCuda(test::saxpySource(), "saxpy.cu", options);
  ASSERT_FALSE(kernel);
  EXPECT_NE(kernel.message().find("invalid target architecture 'ampere'"),
            std::string::npos)
      << kernel.message();
}

TEST(Nvrtc, FlagsFollowOptions) {
  CompileOptions options;
  options.arch = "sm_90";
  options.ptx = true;
  options.extraFlags = {"--use_fast_math"};
  Expected<std::vector<std::string>> flags = nvrtcFlags(options);
  ASSERT_TRUE(flags) << flags.message();
  std::vector<std::string> expected{"--gpu-architecture=compute_90",
                                    "-std=c++17", "-default-device",
                                    "--use_fast_math"};
  EXPECT_EQ(*flags, expected);
}

} // namespace
