//===- TestUtil.cpp - Helpers for the runtime tests -----------------------===//

#include "TestUtil.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace gnnc::test {

TempDir::TempDir() {
  std::string pattern = "/tmp/gnnc-runtime-test-XXXXXX";
  if (char *made = ::mkdtemp(pattern.data()))
    path_ = made;
}

TempDir::~TempDir() {
  if (!path_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
}

std::string saxpySource(const std::string &name) {
  return "extern \"C\" __global__ void " + name +
         "(const float *x, float *y, float a, long long n) {\n"
         "  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
         "  if (i < n)\n"
         "    y[i] = a * x[i] + y[i];\n"
         "}\n";
}

rt::KernelSpec saxpySpec(const std::string &name, unsigned blockSize) {
  rt::KernelSpec spec;
  spec.name = name;
  spec.source = saxpySource(name);
  spec.params = {{"x", ParamKind::Pointer},
                 {"y", ParamKind::Pointer},
                 {"a", ParamKind::Float32},
                 {"n", ParamKind::Int64, ParamRole::NumItems}};
  spec.launch.blockX = blockSize;
  spec.launch.grid = {ParamRole::NumItems};
  spec.launch.itemsPerBlock = blockSize;
  return spec;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void writeFile(const std::string &path, const std::string &data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

} // namespace gnnc::test
