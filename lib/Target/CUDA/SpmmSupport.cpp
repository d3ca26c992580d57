//===- SpmmSupport.cpp - What the gnn.spmm patterns share -----------------===//

#include "SpmmSupport.h"

#include <string>

using namespace llvm;
using namespace gnnc;
using namespace gnnc::ExportCUDA;

raw_ostream &gnnc::ExportCUDA::operator<<(raw_ostream &os,
                                          const BatchScale &scale) {
  switch (scale.kind) {
  case BatchScale::Kind::None:
    return os;
  case BatchScale::Kind::OfThisRow:
    return os << "batch_scale";
  case BatchScale::Kind::OfRow:
    return os << "batch_scale_of(" << scale.row << ")";
  }
  llvm_unreachable("a batch scale of no kind");
}

raw_ostream &gnnc::ExportCUDA::operator<<(raw_ostream &os,
                                          const RowFactor &factor) {
  bool mean = factor.desc.reduce == Reduce::Mean;
  bool left = factor.desc.scale == DegreeScale::Left ||
              factor.desc.scale == DegreeScale::Both;
  StringRef d = factor.deg;
  os << d << " > 0 ? 1.0f / ";
  if (mean && left)
    os << "((float)" << d << " * sqrtf((float)" << d << "))";
  else if (mean)
    os << "(float)" << d;
  else
    os << "sqrtf((float)" << d << ")";
  return os << " : 0.0f";
}

SpmmParts::SpmmParts(const OpContext &c) {
  const KernelParams &params = c.params;
  x = c.input(0);
  y = c.result();
  colNorm = params.name(ParamRole::ColumnFactors);
  values = params.name(ParamRole::EdgeValues);
  attDst = params.name(ParamRole::AttentionRows);
  attSrc = params.name(ParamRole::AttentionColumns);
  workspace = params.name(ParamRole::Workspace);
  groupPtr = params.name(ParamRole::GroupOffsets);
  groupRows = params.name(ParamRole::GroupRows);
  groupBegins = params.name(ParamRole::GroupBegins);
  numGroups = params.name(ParamRole::NumGroups);
  width = c.desc.width;
  stride = c.desc.stride();
  vw = c.plan.vectorWidth;
  accs = c.plan.chunksPerLane * vw;
  max = c.desc.reduce == Reduce::Max;
  packed = c.plan.packed;
  half = c.schedule.accumulate == Accumulate::F16;
  disc = c.schedule.discBatch;
  rowFactor = c.desc.hasRowFactor();
  atomic = c.schedule.write == WriteMode::Atomic;
  sharedMerge = c.schedule.write == WriteMode::Shared;
}

void SpmmPrinter::resetAccumulators() {
  os << "#pragma unroll\n";
  os << "for (int i = 0; i < " << p.accs << "; ++i)\n";
  if (p.max)
    os << "  acc[i] = __int_as_float(0xff800000); // -infinity\n";
  else
    os << "  acc[i] = 0.0f;\n";
}

void SpmmPrinter::declarePart() {
  if (!p.usesPart())
    return;
  if (p.disc > 0)
    os << "// Discretized reduction: each batch of at most " << p.disc
       << " neighbours is summed in `part` (" << (p.half ? "f16" : "f32")
       << "),\n// " << (p.rowFactor ? "multiplied by the row factor and " : "")
       << "added to the f32 running total `acc`.\n";
  else
    os << "// accumulate = f16: `part` is one f16 running sum per row (or "
          "piece of a row).\n";
  if (p.half) {
    os << "__half2 part[" << p.pairs() << "];\n";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << p.pairs() << "; ++i)\n";
    os << "  part[i] = __float2half2_rn(0.0f);\n";
  } else {
    os << "float part[" << p.accs << "];\n";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << p.accs << "; ++i)\n";
    os << "  part[i] = 0.0f;\n";
  }
  if (p.disc > 0)
    os << "int in_batch = 0;\n";
}

void SpmmPrinter::fold(BatchScale scale) {
  StringRef times;
  if (scale) {
    os << "const float fold_scale = " << scale << ";\n";
    times = "fold_scale * ";
  }
  if (p.half) {
    if (p.accs / 2 > 0) {
      os << "#pragma unroll\n";
      os << "for (int i = 0; i < " << p.accs / 2 << "; ++i) {\n";
      os.indent();
      os << "const float2 t = __half22float2(part[i]);\n";
      os << "acc[2 * i] += " << times << "t.x;\n";
      os << "acc[2 * i + 1] += " << times << "t.y;\n";
      os << "part[i] = __float2half2_rn(0.0f);\n";
      closeBlock();
    }
    if (p.accs % 2) {
      // The last pair holds one accumulator; its high half is padding.
      int64_t last = p.pairs() - 1;
      os << "acc[" << p.accs - 1 << "] += " << times << "__low2float(part["
         << last << "]);\n";
      os << "part[" << last << "] = __float2half2_rn(0.0f);\n";
    }
  } else {
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << p.accs << "; ++i) {\n";
    os.indent();
    os << "acc[i] += " << times << "part[i];\n";
    os << "part[i] = 0.0f;\n";
    closeBlock();
  }
  if (p.disc > 0)
    os << "in_batch = 0;\n";
}

void SpmmPrinter::addToPart(BatchScale scale) {
  // The term's factor: the edge value, the column factor, or both.
  std::string factor = std::string(!p.weighted() ? "" : "wb[u]") +
                       (p.weighted() && !p.colNorm.empty() ? " * " : "") +
                       (p.colNorm.empty() ? "" : "nb[u]");
  if (p.half) {
    if (!factor.empty())
      os << "const __half2 w2 = __float2half2_rn(" << factor << ");\n";
    auto add = [&](const std::string &index, const std::string &pair) {
      os << "part[" << index << "] = ";
      if (factor.empty())
        os << "__hadd2(part[" << index << "], " << pair << ");\n";
      else
        os << "__hfma2(w2, " << pair << ", part[" << index << "]);\n";
    };
    if (p.accs / 2 > 0) {
      os << "#pragma unroll\n";
      os << "for (int i = 0; i < " << p.accs / 2 << "; ++i)\n";
      os.indent();
      add("i", p.packed ? "reinterpret_cast<const __half2 *>(f[u])[i]"
                        : "__floats2half2_rn(f[u][2 * i], f[u][2 * i + 1])");
      os.unindent();
    }
    if (p.accs % 2)
      add(std::to_string(p.pairs() - 1),
          "__floats2half2_rn(f[u][" + std::to_string(p.accs - 1) + "], 0.0f)");
  } else {
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << p.accs << "; ++i)\n";
    os << "  part[i] += " << (factor.empty() ? "" : factor + " * ")
       << (p.packed ? "h[i]" : "f[u][i]") << ";\n";
  }
  if (p.disc > 0) {
    os << "if (++in_batch == " << p.disc << ") {\n";
    os.indent();
    fold(scale);
    closeBlock();
  }
}

std::string SpmmPrinter::score(StringRef scores, StringRef index) const {
  if (e.toFloat.empty())
    return ("__ldg(" + scores + " + " + index + ")").str();
  return (e.toFloat + "(" + scores + "[" + index + "])").str();
}

void SpmmPrinter::attentionStatistics() {
  const double slope = desc.attentionSlope();
  os << "// Attention: the row's largest logit leaky_relu(dst[row] + "
        "src[col])\n// and its sum of exp(logit - largest), one pass of the "
        "row's threads.\n";
  os << "const float att_row = " << score(p.attDst, "row") << ";\n";
  os << "float att_max = __int_as_float(0xff800000); // -infinity\n";
  os << "float att_scale = 0.0f;\n";
  os << "{\n";
  os.indent();
  groupMask();
  openLaneEdgeLoop();
  os << "gnnc_softmax_add(att_max, att_scale, gnnc_attention_logit(att_row, "
     << score(p.attSrc, (graph.colIdx + "[edge]").c_str()) << ", "
     << FloatLiteral{slope} << "));\n";
  closeBlock();
  if (plan.lanes > 1)
    os << "gnnc_softmax_combine<" << plan.lanes
       << ">(att_max, att_scale, group_mask);\n";
  closeBlock();
  os << "att_scale = att_scale > 0.0f ? 1.0f / att_scale : 0.0f;\n";
}

/// The workspace floats of one row's softmax statistics.
static constexpr int64_t kAttentionFloats = kAttentionWorkspaceBytesPerRow / 4;

void SpmmPrinter::loadAttentionStatistics() {
  os << "// Attention: the row's largest logit and sum of exp(logit - "
        "largest), left\n// in the workspace by the first kernels.\n";
  os << "const float att_row = " << score(p.attDst, "row") << ";\n";
  os << "const float att_max = " << p.workspace << "[" << kAttentionFloats
     << " * row];\n";
  os << "const float att_sum = " << p.workspace << "[" << kAttentionFloats
     << " * row + 1];\n";
  os << "const float att_scale = att_sum > 0.0f ? 1.0f / att_sum : 0.0f;\n";
}

void SpmmPrinter::printAttentionGroupPass(bool sums) {
  const int64_t lanes = kAttentionStatisticsLanes;
  // The row's two floats of the workspace.
  const std::string slot =
      ("(" + p.workspace + " + " + std::to_string(kAttentionFloats) + " * row)")
          .str();
  if (sums)
    os << "// gnn.spmm with attention, neighbor_group, kernel 3: each group of "
          "a row\n// with several adds its edges' exp(logit - the row's "
          "largest) to the row's\n// slot of the workspace atomically.\n";
  else
    os << "// gnn.spmm with attention, neighbor_group, kernel 2: each group "
          "raises its\n// row's largest logit in the workspace atomically; a "
          "row of one group\n// stores its largest logit and its sum at "
          "once (kernel 3 skips it).\n";
  os << "const long long group = (long long)blockIdx.x * "
     << kAttentionStatisticsThreads / lanes << " + threadIdx.x / " << lanes
     << ";\n";
  os << "const int lane = threadIdx.x % " << lanes << ";\n";
  os << "if (group >= " << p.numGroups << ")\n  return;\n";
  os << "const long long row = " << p.groupRows << "[group];\n";
  os << "const long long first_group = " << p.groupPtr << "[row];\n";
  os << "const bool whole_row = " << p.groupPtr
     << "[row + 1] - first_group == 1;\n";
  if (sums)
    os << "if (whole_row)\n  return;\n";
  os << "const long long begin = " << p.groupBegins << "[group];\n";
  os << "const long long end = " << p.groupBegins << "[group + 1];\n";
  os << "const float att_row = " << score(p.attDst, "row") << ";\n";
  const double slope = desc.attentionSlope();
  if (sums) {
    os << "const float att_max = " << slot << "[0];\n";
    os << "float v = 0.0f;\n";
  } else {
    os << "float m = __int_as_float(0xff800000), v = 0.0f;\n";
  }
  os << "const unsigned group_mask = " << ((1u << lanes) - 1)
     << "u << (threadIdx.x % 32 / " << lanes << " * " << lanes << ");\n";
  os << "#pragma unroll 4\n";
  os << "for (long long edge = begin + lane; edge < end; edge += " << lanes
     << ") {\n";
  os.indent();
  os << "const float logit = gnnc_attention_logit(att_row, "
     << score(p.attSrc, (graph.colIdx + "[edge]").c_str()) << ", "
     << FloatLiteral{slope} << ");\n";
  os << (sums ? "v += expf(logit - att_max);\n"
              : "gnnc_softmax_add(m, v, logit);\n");
  closeBlock();
  if (sums) {
    os << "v = gnnc_lanes_sum<" << lanes << ">(v, group_mask);\n";
    os << "if (lane == 0)\n";
    os << "  atomicAdd(" << slot << " + 1, v);\n";
    return;
  }
  os << "gnnc_softmax_combine<" << lanes << ">(m, v, group_mask);\n";
  os << "if (lane == 0) {\n";
  os.indent();
  os << "if (whole_row) {\n";
  os << "  " << slot << "[0] = m;\n";
  os << "  " << slot << "[1] = v;\n";
  os << "} else {\n";
  os << "  gnnc_atomic_max_float(" << slot << ", m);\n";
  os << "}\n";
  closeBlock();
}

void SpmmPrinter::accumulate() {
  os << "float acc[" << p.accs << "];\n";
  reduceNeighbours();
}

void SpmmPrinter::reduceNeighbours(StringRef tile, StringRef tileColumns) {
  resetAccumulators();
  declarePart();
  groupMask();
  GatherOptions options;
  options.batchScale = p.thisRowBatchScale();
  options.tile = tile;
  options.tileColumns = tileColumns;
  gather(options);
  if (p.usesPart())
    fold(p.thisRowBatchScale());
}

void SpmmPrinter::gather(const GatherOptions &options) {
  int64_t vw = p.vw, accs = p.accs;
  // The threads of a row load `lanes * batch` column indices at once, each
  // `batch` consecutive ones, and pass them round with shuffles. Neighbours
  // are then taken `batch` at a time: every feature load of a batch is
  // issued before the first is used, so a long row keeps `batch` loads per
  // thread in flight instead of one.
  int64_t batch = plan.edgeUnroll;
  int64_t lanes = plan.lanes;
  int64_t window = lanes * batch;
  bool ragged = plan.raggedChunks();
  bool tile = !options.tile.empty();
  StringRef indexType = c.indexType();
  os << "for (long long base = begin; base < end; base += " << window
     << ") {\n";
  os.indent();
  os << "const int n = (int)min((long long)" << window << ", end - base);\n";
  os << indexType << " my_col[" << batch << "];\n";
  if (p.weighted())
    os << "float my_w[" << batch << "];\n";
  os << "#pragma unroll\n";
  os << "for (int m = 0; m < " << batch << "; ++m) {\n";
  os.indent();
  os << "const int t = lane * " << batch << " + m;\n";
  if (options.tileColumns.empty())
    os << "my_col[m] = t < n ? " << graph.colIdx << "[base + t] : ";
  else
    os << "my_col[m] = t < n ? " << options.tileColumns
       << "[base - seg_e0 + t] : ";
  os << (tile ? "(" + indexType + ")seg_begin" : std::string("0")) << ";\n";
  if (!p.attSrc.empty()) {
    // Each lane computes the weights of its own edges of the window.
    os << "my_w[m] = t < n ? gnnc_attention_weight(gnnc_attention_logit("
          "att_row, "
       << score(p.attSrc, "my_col[m]") << ", "
       << FloatLiteral{desc.attentionSlope()}
       << "), att_max, att_scale) : 0.0f;\n";
  } else if (!p.values.empty()) {
    if (e.toFloat.empty())
      os << "my_w[m] = t < n ? __ldg(" << p.values << " + base + t) : 0.0f;\n";
    else
      os << "my_w[m] = t < n ? " << e.toFloat << "(" << p.values
         << "[base + t]) : 0.0f;\n";
  }
  closeBlock();
  // 16-bit vectors stay packed until they are added: a batch of raw words
  // takes half the registers of the same elements as floats, which keeps
  // the occupancy of f16 and bf16 kernels at that of f32.
  bool packed = p.packed;
  StringRef raw = rawVectorType(vw * 2);
  os << "for (int j = 0; j * " << batch << " < n; ++j) {\n";
  os.indent();
  if (packed)
    os << raw << " f[" << batch << "][" << plan.chunksPerLane << "];\n";
  else
    os << "float f[" << batch << "][" << accs << "];\n";
  if (p.weighted())
    os << "float wb[" << batch << "];\n";
  if (!p.colNorm.empty())
    os << "float nb[" << batch << "];\n";
  // Every slot of a batch loads, without tests: a dead slot (past the end
  // of the window) has column 0, a row that exists whenever there is an
  // edge, and is never added. One form of the loads for every batch keeps
  // the compiler from copying the loaded registers where two forms join.
  if (tile)
    os << "// Dead slots load the segment's first row and are not added.\n";
  else
    os << "// Dead slots load row 0 (they hold column 0) and are not added.\n";
  os << "#pragma unroll\n";
  os << "for (int u = 0; u < " << batch << "; ++u) {\n";
  os.indent();
  os << "const " << indexType << " col = __shfl_sync(group_mask, my_col[u], j, "
     << lanes << ");\n";
  if (p.weighted())
    os << "wb[u] = __shfl_sync(group_mask, my_w[u], j, " << lanes << ");\n";
  // A column's factor is loaded beside its features, by every thread of
  // the row (one address: a broadcast), not ahead of the batch through
  // the window: the feature loads then wait for the column index alone,
  // not for a second dependent load after it.
  if (!p.colNorm.empty())
    os << "nb[u] = __ldg(" << p.colNorm << " + col);\n";
  // The staged tile holds the segment's rows from node seg_begin, of the
  // column block's chunks from chunk0.
  if (tile)
    os << "const " << e.cType << " *src = " << options.tile
       << " + (long long)(col - seg_begin) * " << plan.laneChunks() * vw
       << ";\n";
  else
    os << "const " << e.cType << " *src = " << p.x << " + (long long)col * "
       << p.stride << ";\n";
  os << "#pragma unroll\n";
  os << "for (int k = 0; k < " << plan.chunksPerLane << "; ++k) {\n";
  os.indent();
  printChunk();
  StringRef indent = ragged ? "  " : "";
  if (ragged)
    os << "if (chunk < " << chunkBound() << ")\n";
  StringRef offset = tile && plan.columnChunks ? "(chunk - chunk0)" : "chunk";
  if (packed)
    os << indent << "f[u][k] = " << (tile ? "*" : "__ldg(")
       << "reinterpret_cast<const " << raw << " *>(src + " << offset << " * "
       << vw << ")" << (tile ? "" : ")") << ";\n";
  else
    os << indent << VectorHelper{tile ? "load_shared" : "load", e.tag, vw}
       << "(src + " << offset << " * " << vw << ", f[u] + k * " << vw << ");\n";
  // A chunk past the row's width is never stored; packed 16-bit slots
  // are zeroed all the same.
  if (packed && ragged)
    os << "else\n  f[u][k] = {};\n";
  closeBlock(); // chunks
  closeBlock(); // loads of the batch
  // f16 accumulation adds the packed words as they are; everything else
  // widens them to floats first.
  bool halfPairs = packed && p.half;
  auto add = [&] {
    if (packed && !halfPairs) {
      os << "float h[" << accs << "];\n";
      os << "#pragma unroll\n";
      os << "for (int k = 0; k < " << plan.chunksPerLane << "; ++k)\n";
      os << "  " << unpack(vw) << "(f[u][k], h + k * " << vw << ");\n";
    }
    if (p.usesPart()) {
      addToPart(options.batchScale);
      return;
    }
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << accs << "; ++i)\n";
    std::string term = std::string(!p.weighted() ? "" : "wb[u] * ") +
                       (p.colNorm.empty() ? "" : "nb[u] * ") +
                       (packed ? "h[i]" : "f[u][i]");
    if (p.max)
      os << "  acc[i] = fmaxf(acc[i], " << term << ");\n";
    else
      os << "  acc[i] += " << term << ";\n";
  };
  if (options.skipInsideRow) {
    os << "const unsigned int e0 = (unsigned int)(base - begin) + j * " << batch
       << ";\n";
    os << "if (j * " << batch << " + " << batch << " <= n && e0 + " << batch
       << " < row_end) {\n";
    os.indent();
    os << "// The whole batch is live and inside the current row, which goes\n"
          "// on after it.\n";
    os << "#pragma unroll\n";
    os << "for (int u = 0; u < " << batch << "; ++u) {\n";
    os.indent();
    add();
    closeBlock();
    os.unindent();
    os << "} else {\n";
    os.indent();
  }
  os << "#pragma unroll\n";
  os << "for (int u = 0; u < " << batch << "; ++u) {\n";
  os.indent();
  // Only live neighbours count: a skipped slot holds no load (and must not
  // be multiplied by zero either: an infinite feature would turn into NaN).
  os << "if (j * " << batch << " + u < n) {\n";
  os.indent();
  add();
  if (options.afterAdd) {
    os << "const unsigned int e = (unsigned int)(base - begin) + j * " << batch
       << " + u;\n";
    options.afterAdd();
  }
  closeBlock();
  closeBlock(); // accumulation
  if (options.skipInsideRow)
    closeBlock(); // the batch that crosses a row end
  closeBlock();   // batches
  closeBlock();   // index windows
}

void SpmmPrinter::printDegree(RowDegree degree) {
  switch (degree) {
  case RowDegree::Range:
    os << "end - begin";
    return;
  case RowDegree::SharedRowEnds:
    os << "(long long)ends[r] - (r > 0 ? (long long)ends[r - 1] : 0)";
    return;
  case RowDegree::RowOffsets:
    os << "(long long)" << graph.rowPtr << "[row + 1] - (long long)"
       << graph.rowPtr << "[row]";
    return;
  case RowDegree::LoadedRowEnd:
    os << "row_end - (long long)" << graph.rowPtr << "[row]";
    return;
  case RowDegree::Empty:
    os << "0";
    return;
  }
}

void SpmmPrinter::finish(RowDegree degree, StringRef dst) {
  int64_t accs = p.accs, vw = p.vw;
  bool mean = desc.reduce == Reduce::Mean;
  bool left =
      desc.scale == DegreeScale::Left || desc.scale == DegreeScale::Both;
  // With discretized reduction every batch already carries the row factor.
  bool scaleRow = (mean || left) && !p.scalesBatches();
  if (p.max || scaleRow) {
    os << "const long long deg = ";
    printDegree(degree);
    os << ";\n";
  }
  // Mean and left degree scaling multiply the row by one factor of its
  // degree; an empty row (all-zero accumulators) gets the factor 0.
  if (p.max) {
    os << "// max: an empty row gives 0\n";
    os << "if (deg == 0)\n";
    os << "  for (int i = 0; i < " << accs << "; ++i)\n";
    os << "    acc[i] = 0.0f;\n";
  }
  if (scaleRow) {
    os << "// " << (mean ? "mean" : "") << (mean && left ? ", " : "")
       << (left ? "left degree scaling" : "") << "\n";
    os << "const float row_scale = " << RowFactor{desc, "deg"} << ";\n";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << accs << "; ++i)\n";
    os << "  acc[i] *= row_scale;\n";
  }
  if (desc.selfWeight) {
    // The self term is not scaled: it is added after the row factor.
    os << "// GIN self term: (1 + eps) * x[row], after the row factor\n";
    os << "const " << e.cType << " *self_src = " << p.x << " + row * "
       << p.stride << ";\n";
    openChunkLoop();
    os << "float self_f[" << vw << "];\n";
    os << load(vw) << "(self_src + chunk * " << vw << ", self_f);\n";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << vw << "; ++i)\n";
    os << "  acc[k * " << vw
       << " + i] += " << FloatLiteral{1.0 + *desc.selfWeight}
       << " * self_f[i];\n";
    closeBlock();
  }
  os << e.cType << " *dst = ";
  if (dst.empty())
    os << p.y << " + row * " << p.stride;
  else
    os << dst;
  os << ";\n";
  writeAcc("dst", "store");
}

void SpmmPrinter::writeAcc(StringRef dst, StringRef verb) {
  openChunkLoop();
  if (int64_t tail = p.tail()) {
    // The last chunk ends in the padding, which belongs to the caller:
    // only its first `tail` elements are written.
    os << "if (chunk == " << plan.chunks - 1 << ") {\n";
    os.indent();
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << tail << "; ++i)\n";
    os << "  " << VectorHelper{verb, e.tag, 1} << "(" << dst << " + chunk * "
       << p.vw << " + i, acc + k * " << p.vw << " + i);\n";
    os << "continue;\n";
    closeBlock();
  }
  os << VectorHelper{verb, e.tag, p.vw} << "(" << dst << " + chunk * " << p.vw
     << ", acc + k * " << p.vw << ");\n";
  closeBlock();
}

void SpmmPrinter::atomicPiece(StringRef row) {
  os << "{\n";
  os.indent();
  os << "const long long piece_row = " << row << ";\n";
  if (p.rowFactor && !p.scalesBatches()) {
    os << "// The row factor is linear: each piece carries it.\n";
    os << "const long long piece_deg = " << graph.rowPtr << "[piece_row + 1] - "
       << graph.rowPtr << "[piece_row];\n";
    os << "const float piece_scale = " << RowFactor{desc, "piece_deg"} << ";\n";
    os << "#pragma unroll\n";
    os << "for (int i = 0; i < " << p.accs << "; ++i)\n";
    os << "  acc[i] *= piece_scale;\n";
  }
  os << e.cType << " *piece_dst = " << p.y << " + piece_row * " << p.stride
     << ";\n";
  writeAcc("piece_dst", "atomic_add");
  closeBlock();
}

void SpmmPrinter::slotLoop(SlotCopy copy) {
  int64_t vw = p.vw;
  openChunkLoop();
  os << "#pragma unroll\n";
  os << "for (int i = 0; i < " << vw << "; ++i)\n";
  if (copy == SlotCopy::Store)
    os << "  slot[chunk * " << vw << " + i] = acc[k * " << vw << " + i];\n";
  else if (p.max)
    os << "  acc[k * " << vw << " + i] = fmaxf(acc[k * " << vw
       << " + i], slot[chunk * " << vw << " + i]);\n";
  else
    os << "  acc[k * " << vw << " + i] += slot[chunk * " << vw << " + i];\n";
  closeBlock();
}

void SpmmPrinter::printCheckedInit(StringRef storedByMain) {
  const int64_t lanes = plan.lanes, workers = 32 / lanes;
  os << "// gnn.spmm, write = atomic, first kernel: a thread per row asks "
        "whether the main\n// kernel stores it whole; each row it does not "
        "store starts as its self term\n// or 0, set by one of the warp's "
     << workers << " worker" << (workers == 1 ? "" : "s") << " of " << lanes
     << " thread" << (lanes == 1 ? "" : "s") << " in turn.\n";
  os << "const long long warp_row = (long long)blockIdx.x * blockDim.x + "
        "(threadIdx.x & ~31u);\n";
  os << "const long long my_row = warp_row + threadIdx.x % 32;\n";
  os << "const bool pending = my_row < " << graph.numRows << " && !"
     << storedByMain << ";\n";
  if (desc.attention && !p.workspace.empty()) {
    os << "// Attention: every row's softmax statistics start at -infinity "
          "and 0.\n";
    os << "if (my_row < " << graph.numRows << ") {\n";
    os.indent();
    os << p.workspace << "[" << kAttentionFloats
       << " * my_row] = __int_as_float(0xff800000);\n";
    os << p.workspace << "[" << kAttentionFloats << " * my_row + 1] = 0.0f;\n";
    closeBlock();
  }
  os << "unsigned todo = __ballot_sync(0xffffffffu, pending);\n";
  os << "const int lane = threadIdx.x % " << lanes << ";\n";
  os << "// This worker sets the pending rows " << workers
     << " apart in the warp's order, from its own index.\n";
  os << "int skip = threadIdx.x % 32 / " << lanes << ";\n";
  os << "while (todo) {\n";
  os.indent();
  os << "const int bit = __ffs(todo) - 1;\n";
  os << "todo &= todo - 1;\n";
  os << "if (skip-- > 0)\n";
  os << "  continue;\n";
  os << "skip = " << workers - 1 << ";\n";
  os << "const long long row = warp_row + bit;\n";
  os << "float acc[" << p.accs << "];\n";
  resetAccumulators();
  finish(RowDegree::Empty);
  closeBlock();
}

void SpmmPrinter::printInit() {
  vertexPrologue("gnn.spmm, write = atomic, first kernel (each row of the "
                 "result starts as its self term or 0; the main kernel adds "
                 "split rows to it)");
  os << "float acc[" << p.accs << "];\n";
  resetAccumulators();
  // An empty sum: the row factor of degree 0 is 0, so only the self term
  // (if any) is left.
  finish(RowDegree::Empty);
}
