//===- FuzzManifest.cpp - Fuzz target: kernel manifests (JSON) ------------===//
//
// rt::readManifest on the input as a manifest's text; what it accepts must
// write back (rt::writeManifest) to a manifest it reads again alike.
//
//===----------------------------------------------------------------------===//
#include "gnnc/runtime/KernelSpec.h"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string json(reinterpret_cast<const char *>(data), size);
  gnnc::Expected<std::vector<gnnc::rt::KernelSpec>> specs =
      gnnc::rt::readManifest(json, "fuzz.json", "");
  if (!specs)
    return 0;
  std::string written = gnnc::rt::writeManifest(*specs, "fuzz.cu");
  gnnc::Expected<std::vector<gnnc::rt::KernelSpec>> again =
      gnnc::rt::readManifest(written, "fuzz.json", "");
  if (!again || again->size() != specs->size())
    __builtin_trap();
  for (size_t i = 0; i < specs->size(); ++i)
    if ((*again)[i].name != (*specs)[i].name ||
        (*again)[i].params.size() != (*specs)[i].params.size())
      __builtin_trap();
  return 0;
}
