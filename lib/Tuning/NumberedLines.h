//===- NumberedLines.h - Lines of a text being parsed -----------*- C++ -*-===//
//
// Internal to lib/Tuning: the line loop of the calibration files
// (GpuModel.cpp) and the kernel samples (Fit.cpp), whose errors name the
// file and the line.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_LIB_TUNING_NUMBEREDLINES_H
#define GNNC_LIB_TUNING_NUMBEREDLINES_H

#include "gnnc/runtime/Status.h"

#include <sstream>
#include <string>

namespace gnnc::tuning {

/// The lines of `text`, numbered from 1, read one at a time.
class NumberedLines {
public:
  /// `name` (a path, say) begins every error.
  NumberedLines(const std::string &text, std::string name)
      : in(text), name(std::move(name)) {}

  /// Reads the next line into `line`; false after the last.
  bool next(std::string &line) {
    if (!std::getline(in, line))
      return false;
    ++number;
    return true;
  }

  /// An error about the line read last: "name:12: message".
  Status error(const std::string &message) const {
    return Status::error(name + ":" + std::to_string(number) + ": " + message);
  }

private:
  std::istringstream in;
  std::string name;
  int number = 0;
};

} // namespace gnnc::tuning

#endif // GNNC_LIB_TUNING_NUMBEREDLINES_H
