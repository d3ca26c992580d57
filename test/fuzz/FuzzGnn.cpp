//===- FuzzGnn.cpp - Fuzz target: the .gnn front end ----------------------===//
//
// The path of every .gnn file through gnnc: parse (with the nesting scan),
// verify, print, lower and print CUDA (GnnModule::parse and compile, as
// gnnc and the tuner run them; NVRTC is not run). Any input must end in a
// module or an error: a crash, a hang, a leak or a sanitizer report is a
// bug.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Compiler/Compiler.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstddef>
#include <cstdint>
#include <string>

// LLVM's headers poison the free space of BumpPtrAllocator slabs in code
// built with AddressSanitizer; the MLIR libraries (Debian's, not
// instrumented) share those inline functions but never unpoison: the
// poisoning is left to ASan's own allocator checks.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  gnnc::Expected<gnnc::GnnModule> module =
      gnnc::GnnModule::parse(text, "fuzz.gnn");
  if (!module)
    return 0;
  (void)module->print(module->module());
  (void)module->compile(module->module());
  return 0;
}
