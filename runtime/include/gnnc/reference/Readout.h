//===- Readout.h - CPU reference for per-graph pooling ----------*- C++ -*-===//
#ifndef GNNC_REFERENCE_READOUT_H
#define GNNC_REFERENCE_READOUT_H

#include "gnnc/Plan/Types.h"
#include "gnnc/graph/Batch.h"

#include <cstdint>
#include <vector>

namespace gnnc::ref {

/// Double-precision gnn.readout: y[g, f] = the sum, mean or maximum of
/// x[n, f] over the nodes n of graph g (0 for an empty graph). `x` holds a
/// row of `width` values per node of the batch; `y` is resized to
/// numGraphs x width; `magnitude` (if non-null) receives the matching sum
/// (mean) of |x| (for max: |y|), the scale of each output's rounding error.
void readout(const graph::BatchedGraph &batch, const float *x, int64_t width,
             Reduce reduce, std::vector<double> &y,
             std::vector<double> *magnitude = nullptr);

/// Double-precision gnn.readout_grad: dx[n, f] = dy[g(n), f] (sum),
/// dy[g(n), f] / |g(n)| (mean), or for max dy[g(n), f] on the first node n
/// of its graph with x[n, f] == y[g(n), f] and 0 elsewhere. `dx` is resized
/// to numNodes x width.
void readoutGrad(const graph::BatchedGraph &batch, const float *x,
                 const float *y, const float *dy, int64_t width, Reduce reduce,
                 std::vector<double> &dx);

} // namespace gnnc::ref

#endif // GNNC_REFERENCE_READOUT_H
