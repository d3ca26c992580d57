//===- Harness.h - Timing and checking sparse kernels -----------*- C++ -*-===//
//
// The reusable part of gnn-bench, one concern a header: the byte counts
// behind the bandwidth bounds (Bytes.h), the host arrays and their
// transfers (Host.h), the device with CUDA-event timing and L2 flushes
// (Bench.h), SpMM, SDDMM and GAT-chain problems whose CPU reference is
// computed once and shared by every kernel that solves them (Problems.h),
// the schedule variants (Schedules.h), the generation of gnn.spmm and
// gnn.sddmm kernels (Kernels.h), the correctness gate (a kernel whose output
// is wrong gets no timing; KernelRuns.h), and the JSON records of the
// results (Json.h). See bench/NOTES.md for what is measured and why.
//
//===----------------------------------------------------------------------===//
#ifndef GNNC_BENCH_HARNESS_H
#define GNNC_BENCH_HARNESS_H

#include "gnnc/Bench/Bench.h"
#include "gnnc/Bench/Bytes.h"
#include "gnnc/Bench/Host.h"
#include "gnnc/Bench/Json.h"
#include "gnnc/Bench/KernelRuns.h"
#include "gnnc/Bench/Kernels.h"
#include "gnnc/Bench/Problems.h"
#include "gnnc/Bench/Schedules.h"

#endif // GNNC_BENCH_HARNESS_H
