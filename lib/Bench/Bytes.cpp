//===- Bytes.cpp - Traffic bounds of a sparse problem ---------------------===//
#include "gnnc/Bench/Bytes.h"

using namespace gnnc;
using namespace gnnc::bench;

namespace {

/// row_ptr + col_idx (+ one value per edge).
double structureBytes(const ProblemShape &s) {
  double bytes = double(s.numRows + 1) * double(s.offsetBytes) +
                 double(s.nnz) * double(s.indexBytes);
  if (s.edgeValues)
    bytes += double(s.nnz) * double(s.elementBytes);
  return bytes;
}

} // namespace

ByteCounts gnnc::bench::spmmBytes(const ProblemShape &s) {
  const double row = double(s.width) * double(s.elementBytes);
  ByteCounts counts;
  counts.compulsory = structureBytes(s) + double(s.numCols) * row + // X once
                      double(s.numRows) * row;                      // Y once
  counts.gather = structureBytes(s) + double(s.nnz) * row + // X per edge
                  double(s.numRows) * row;
  return counts;
}

ByteCounts gnnc::bench::sddmmBytes(const ProblemShape &s) {
  const double row = double(s.width) * double(s.elementBytes);
  // The output values are written once whether or not the shape says the
  // kernel reads edge values.
  ProblemShape withValues = s;
  withValues.edgeValues = true;
  ByteCounts counts;
  counts.compulsory = structureBytes(withValues) + double(s.numRows) * row +
                      double(s.numCols) * row;
  counts.gather = structureBytes(withValues) + double(s.numRows) * row +
                  double(s.nnz) * row;
  return counts;
}

double gnnc::bench::gigabytesPerSecond(double bytes, double ms) {
  return ms > 0 ? bytes / (ms * 1e-3) / 1e9 : 0.0;
}
