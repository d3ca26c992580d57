//===- FuzzTuningDb.cpp - Fuzz target: tuning-database lines --------------===//
//
// tuning::parseEntry on every line of the input (as TuningDb::load reads a
// database); an entry it accepts must format (formatEntry) to a line that
// parses to the same key and schedule.
//
//===----------------------------------------------------------------------===//
#include "gnnc/Tuning/TuningDb.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::istringstream in(
      std::string(reinterpret_cast<const char *>(data), size));
  std::string line;
  while (std::getline(in, line)) {
    gnnc::Expected<gnnc::tuning::TuningEntry> entry =
        gnnc::tuning::parseEntry(line);
    if (!entry)
      continue;
    std::string written = gnnc::tuning::formatEntry(*entry);
    written.pop_back(); // the newline
    gnnc::Expected<gnnc::tuning::TuningEntry> again =
        gnnc::tuning::parseEntry(written);
    if (!again || !(again->key == entry->key) ||
        again->schedule != entry->schedule)
      __builtin_trap();
  }
  return 0;
}
