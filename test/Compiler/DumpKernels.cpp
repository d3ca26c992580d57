//===- DumpKernels.cpp - Write the CUDA of every test kernel --------------===//
//
// gnnc-dump-kernels DIR writes the CUDA source and the manifest of the whole
// compile sweep (sweep.cu, sweep.manifest.json) and of the backward suite
// (backward.cu, backward.manifest.json) into DIR, so that two builds of the
// compiler can be compared kernel by kernel (scripts/emission-snapshot.sh).
//
//===----------------------------------------------------------------------===//
#include "BackwardVariants.h"
#include "SpmmVariants.h"

#include "gnnc/Compiler/Compiler.h"
#include "gnnc/runtime/KernelSpec.h"

#include <cstdio>
#include <fstream>
#include <string>

using namespace gnnc;

static bool dump(const std::string &dir, const std::string &stem,
                 const std::string &text) {
  auto compiled = compileGnn(text, stem + ".gnn");
  if (!compiled) {
    std::fprintf(stderr, "%s\n", compiled.message().c_str());
    return false;
  }
  std::ofstream(dir + "/" + stem + ".cu") << compiled->source;
  std::ofstream(dir + "/" + stem + ".manifest.json")
      << rt::writeManifest(compiled->kernels, stem + ".cu");
  return true;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gnnc-dump-kernels DIR\n");
    return 2;
  }
  std::vector<test::SpmmVariant> variants = test::allVariants();
  for (const test::SpmmVariant &v : test::compileOnlyVariants())
    variants.push_back(v);
  bool ok = dump(argv[1], "sweep", test::spmmModuleText(variants));
  ok = dump(argv[1], "backward", test::backwardSuite().text) && ok;
  return ok ? 0 : 1;
}
