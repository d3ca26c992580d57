//===- Renumber.cpp - Kernels on renumbered graphs, in the user's order ---===//
#include "gnnc/ops/Renumber.h"
#include "CheckSupport.h"

#include "gnnc/reference/Spmm.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

using namespace gnnc;
using namespace gnnc::ops;

namespace {

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Makes `buffer` hold at least `bytes` (keeping it when it already does).
Status ensureSize(rt::DeviceBuffer &buffer, size_t bytes) {
  if (buffer.size() >= bytes && buffer.address() != 0)
    return Status::ok();
  auto grown = rt::DeviceBuffer::allocate(std::max<size_t>(bytes, 1));
  if (!grown)
    return grown.status();
  buffer = grown.take();
  return Status::ok();
}

constexpr size_t kWordSizes[] = {16, 4, 2, 1};

std::string gatherKernelName(size_t wordBytes) {
  return "gnnc_gather_rows_" + std::to_string(wordBytes);
}

} // namespace

//===----------------------------------------------------------------------===//
// Renumbering on the host
//===----------------------------------------------------------------------===//

const char *gnnc::ops::nodeOrderName(NodeOrder order) {
  switch (order) {
  case NodeOrder::Degree:
    return "degree";
  case NodeOrder::Rcm:
    return "rcm";
  case NodeOrder::Community:
    return "community";
  }
  return "unknown";
}

Expected<NodeOrder> gnnc::ops::parseNodeOrder(const std::string &name) {
  for (NodeOrder order :
       {NodeOrder::Degree, NodeOrder::Rcm, NodeOrder::Community})
    if (name == nodeOrderName(order))
      return order;
  return Status::error("unknown node order '" + name +
                       "'; the orders are degree, rcm and community");
}

namespace {

/// Checks what every renumbering needs of the user's graph.
Status checkRenumberable(const graph::CsrGraph &g) {
  if (g.numRows != g.numCols)
    return Status::error("renumbering graph '" + g.name + "': it is " +
                         std::to_string(g.numRows) + " x " +
                         std::to_string(g.numCols) +
                         "; renumbering relabels rows and columns alike and "
                         "needs a square graph");
  return g.validate().withContext("renumbering graph '" + g.name + "'");
}

Expected<RenumberedGraph> applyTimed(const graph::CsrGraph &g,
                                     graph::Permutation perm,
                                     const std::string &orderName,
                                     double orderSeconds) {
  auto start = std::chrono::steady_clock::now();
  auto permuted = graph::applyPermutationWithEdgeMap(g, perm);
  if (!permuted)
    return permuted.status().withContext("renumbering graph '" + g.name +
                                         "' in " + orderName + " order");
  RenumberedGraph rg;
  rg.graph = std::move(permuted->graph);
  rg.edgeOf = std::move(permuted->edgeOf);
  rg.perm = std::move(perm);
  rg.orderName = orderName;
  rg.orderSeconds = orderSeconds;
  rg.applySeconds = secondsSince(start);
  return rg;
}

} // namespace

Expected<RenumberedGraph>
gnnc::ops::renumberGraph(const graph::CsrGraph &g, NodeOrder order,
                         const RenumberOptions &options) {
  GNNC_RETURN_IF_ERROR(checkRenumberable(g));
  auto start = std::chrono::steady_clock::now();
  graph::Permutation perm;
  graph::CommunityInfo info;
  switch (order) {
  case NodeOrder::Degree:
    perm = graph::degreeSortOrder(g, options.degreeDescending);
    break;
  case NodeOrder::Rcm:
    perm = graph::rcmOrder(g);
    break;
  case NodeOrder::Community:
    perm = graph::communityOrder(g, options.community, &info);
    break;
  }
  double orderSeconds = secondsSince(start);
  auto rg = applyTimed(g, std::move(perm), nodeOrderName(order), orderSeconds);
  if (rg && order == NodeOrder::Community)
    rg->community = std::move(info);
  return rg;
}

Expected<RenumberedGraph>
gnnc::ops::renumberGraph(const graph::CsrGraph &g, const std::string &orderName,
                         const RenumberOptions &options) {
  auto order = parseNodeOrder(orderName);
  if (!order)
    return order.status();
  return renumberGraph(g, *order, options);
}

Expected<RenumberedGraph>
gnnc::ops::renumberGraph(const graph::CsrGraph &g, graph::Permutation perm,
                         const std::string &orderName) {
  GNNC_RETURN_IF_ERROR(checkRenumberable(g));
  if (perm.size() != g.numRows)
    return Status::error("renumbering graph '" + g.name + "' in " + orderName +
                         " order: the permutation has " +
                         std::to_string(perm.size()) + " nodes, the graph " +
                         std::to_string(g.numRows));
  return applyTimed(g, std::move(perm), orderName, 0.0);
}

//===----------------------------------------------------------------------===//
// Gather kernels
//===----------------------------------------------------------------------===//

std::string gnnc::ops::gatherKernelSource() {
  // One thread per word; a word is 16, 4, 2 or 1 bytes. Row i of `out`
  // receives row map[i] of `in`.
  std::string source = R"(// Row gathers between node orders (gnnc ops).
struct alignas(16) GnncWord16 { unsigned int v[4]; };
typedef unsigned int GnncWord4;
typedef unsigned short GnncWord2;
typedef unsigned char GnncWord1;

template <typename Word>
__device__ __forceinline__ void gnncGatherRows(
    const Word *__restrict__ in, Word *__restrict__ out,
    const long long *__restrict__ map, long long rowWords,
    long long copyWords, long long numWords) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= numWords)
    return;
  long long row = i / copyWords;
  long long word = i - row * copyWords;
  out[row * rowWords + word] = in[map[row] * rowWords + word];
}
)";
  for (size_t bytes : kWordSizes) {
    std::string word = "GnncWord" + std::to_string(bytes);
    source += "\nextern \"C\" __global__ void " + gatherKernelName(bytes) +
              "(const " + word + " *in, " + word +
              " *out, const long long *map, long long num_rows,\n"
              "    long long row_words, long long copy_words, long long "
              "num_words) {\n"
              "  (void)num_rows;\n"
              "  gnncGatherRows<" +
              word + ">(in, out, map, row_words, copy_words, num_words);\n}\n";
  }
  return source;
}

std::vector<rt::KernelSpec> gnnc::ops::gatherKernelSpecs() {
  std::string source = gatherKernelSource();
  std::vector<rt::KernelSpec> specs;
  for (size_t bytes : kWordSizes) {
    rt::KernelSpec spec;
    spec.name = gatherKernelName(bytes);
    spec.source = source;
    // A runtime helper, no gnn op: only the grid's count has a role.
    spec.params = {{"in", ParamKind::Pointer},
                   {"out", ParamKind::Pointer},
                   {"map", ParamKind::Pointer},
                   {"num_rows", ParamKind::Int64},
                   {"row_words", ParamKind::Int64},
                   {"copy_words", ParamKind::Int64},
                   {"num_words", ParamKind::Int64, ParamRole::NumItems}};
    spec.launch.blockX = 256;
    spec.launch.grid = {ParamRole::NumItems};
    spec.launch.itemsPerBlock = 256;
    specs.push_back(std::move(spec));
  }
  return specs;
}

Expected<GatherKernels> GatherKernels::load(rt::Runtime &runtime) {
  GatherKernels kernels;
  std::vector<rt::KernelSpec> specs = gatherKernelSpecs();
  for (size_t i = 0; i < specs.size(); ++i) {
    auto loaded = runtime.load(specs[i]);
    if (!loaded)
      return loaded.status().withContext("loading the row-gather kernels");
    kernels.byWordBytes.emplace(kWordSizes[i], loaded.take());
  }
  return kernels;
}

size_t gnnc::ops::gatherWordBytes(size_t rowBytes, uint64_t inAddress,
                                  uint64_t outAddress, size_t copyBytes) {
  for (size_t bytes : kWordSizes)
    if (rowBytes % bytes == 0 && copyBytes % bytes == 0 &&
        inAddress % bytes == 0 && outAddress % bytes == 0)
      return bytes;
  return 1;
}

Status GatherKernels::gatherRows(rt::Runtime &runtime,
                                 const rt::DeviceBuffer &in, int64_t inRows,
                                 rt::DeviceBuffer &out,
                                 const rt::DeviceBuffer &map, int64_t numRows,
                                 size_t rowBytes, bool synchronize,
                                 size_t copyBytes) const {
  if (copyBytes == 0)
    copyBytes = rowBytes;
  if (copyBytes > rowBytes)
    return Status::error("gatherRows: " + std::to_string(copyBytes) +
                         " bytes to copy of rows of " +
                         std::to_string(rowBytes));
  if (numRows < 0 || inRows < 0)
    return Status::error("gatherRows: negative row count (" +
                         std::to_string(numRows) + " rows from " +
                         std::to_string(inRows) + ")");
  const uint64_t outBytes = static_cast<uint64_t>(numRows) * rowBytes;
  const uint64_t inBytes = static_cast<uint64_t>(inRows) * rowBytes;
  if (numRows == 0 || rowBytes == 0)
    return Status::ok();
  if (in.address() == out.address())
    return Status::error("gatherRows: the input and the output are the same "
                         "buffer; a gather cannot run in place");
  if (in.size() < inBytes)
    return Status::error(
        "gatherRows: the input needs " + std::to_string(inRows) + " rows of " +
        std::to_string(rowBytes) + " bytes (" + std::to_string(inBytes) +
        " bytes), it has " + std::to_string(in.size()));
  if (out.size() < outBytes)
    return Status::error("gatherRows: the output needs " +
                         std::to_string(numRows) + " rows of " +
                         std::to_string(rowBytes) + " bytes (" +
                         std::to_string(outBytes) + " bytes), it has " +
                         std::to_string(out.size()));
  if (map.size() < static_cast<uint64_t>(numRows) * sizeof(int64_t))
    return Status::error("gatherRows: the map needs " +
                         std::to_string(numRows) + " i64 entries, it has " +
                         std::to_string(map.size() / sizeof(int64_t)));
  size_t word =
      gatherWordBytes(rowBytes, in.address(), out.address(), copyBytes);
  auto kernel = byWordBytes.find(word);
  if (kernel == byWordBytes.end())
    return Status::error("gatherRows: the " + std::to_string(word) +
                         "-byte gather kernel is not loaded "
                         "(GatherKernels::load)");
  const int64_t rowWords = static_cast<int64_t>(rowBytes / word);
  const int64_t copyWords = static_cast<int64_t>(copyBytes / word);
  rt::ArgPack args;
  args.bind("in", in)
      .bind("out", out)
      .bind("map", map)
      .bind("num_rows", numRows)
      .bind("row_words", rowWords)
      .bind("copy_words", copyWords)
      .bind("num_words", numRows * copyWords);
  return runtime.launch(kernel->second, args, synchronize);
}

//===----------------------------------------------------------------------===//
// The renumbered graph on the GPU
//===----------------------------------------------------------------------===//

Status DeviceRenumberedGraph::prepare(const RenumberedGraph &host,
                                      const SpmmSignature &sig) {
  if (host.numNodes() != numNodes || host.nnz() != nnz)
    return Status::error(
        "renumbered graph '" + host.graph.name + "' has " +
        std::to_string(host.numNodes()) + " nodes and " +
        std::to_string(host.nnz()) + " edges, the uploaded one " +
        std::to_string(numNodes) + " and " + std::to_string(nnz));
  if (sig.needsColumnNorm() && !columnNorms.count(sig.colNormExponent)) {
    auto norm = uploadColumnNorm(host.graph, sig.colNormExponent);
    if (!norm)
      return norm.status();
    columnNorms.emplace(sig.colNormExponent, norm.take());
  }
  return Status::ok();
}

Status DeviceRenumberedGraph::rowsToInternal(rt::Runtime &runtime,
                                             const rt::DeviceBuffer &user,
                                             rt::DeviceBuffer &internal,
                                             size_t rowBytes,
                                             bool synchronize) const {
  return gather
      .gatherRows(runtime, user, numNodes, internal, newToOld, numNodes,
                  rowBytes, synchronize)
      .withContext("moving rows into the internal order");
}

Status DeviceRenumberedGraph::rowsToUser(rt::Runtime &runtime,
                                         const rt::DeviceBuffer &internal,
                                         rt::DeviceBuffer &user,
                                         size_t rowBytes, bool synchronize,
                                         size_t copyBytes) const {
  return gather
      .gatherRows(runtime, internal, numNodes, user, oldToNew, numNodes,
                  rowBytes, synchronize, copyBytes)
      .withContext("moving rows back to the user's order");
}

Status DeviceRenumberedGraph::edgeValuesToInternal(rt::Runtime &runtime,
                                                   const rt::DeviceBuffer &user,
                                                   rt::DeviceBuffer &internal,
                                                   size_t edgeBytes,
                                                   bool synchronize) const {
  return gather
      .gatherRows(runtime, user, nnz, internal, edgeOf, nnz, edgeBytes,
                  synchronize)
      .withContext("moving edge values into the internal order");
}

Expected<DeviceRenumberedGraph>
gnnc::ops::uploadRenumberedGraph(rt::Runtime &runtime,
                                 const RenumberedGraph &host,
                                 const SpmmSignature &sig) {
  const int64_t n = host.numNodes();
  if (host.perm.size() != n ||
      static_cast<int64_t>(host.perm.oldToNew.size()) != n)
    return Status::error("renumbered graph '" + host.graph.name + "' has " +
                         std::to_string(n) + " nodes but a permutation of " +
                         std::to_string(host.perm.newToOld.size()) + " (" +
                         std::to_string(host.perm.oldToNew.size()) +
                         " in oldToNew)");
  if (static_cast<int64_t>(host.edgeOf.size()) != host.nnz())
    return Status::error("renumbered graph '" + host.graph.name + "' has " +
                         std::to_string(host.nnz()) +
                         " edges but an edge map of " +
                         std::to_string(host.edgeOf.size()));
  // The kernels trust the maps: check them once here.
  GNNC_RETURN_IF_ERROR(host.perm.validate(n).withContext(
      "renumbered graph '" + host.graph.name + "'"));
  for (size_t e = 0; e < host.edgeOf.size(); ++e)
    if (host.edgeOf[e] < 0 || host.edgeOf[e] >= host.nnz())
      return Status::error(
          "renumbered graph '" + host.graph.name + "': edgeOf[" +
          std::to_string(e) + "] = " + std::to_string(host.edgeOf[e]) +
          " is out of range [0, " + std::to_string(host.nnz()) + ")");

  DeviceRenumberedGraph dg;
  auto graph = uploadGraph(host.graph, sig.offsets64, sig.indices64);
  if (!graph)
    return graph.status();
  dg.graph = graph.take();
  dg.numNodes = n;
  dg.nnz = host.nnz();
  for (auto [target, source] : {std::pair{&dg.newToOld, &host.perm.newToOld},
                                std::pair{&dg.oldToNew, &host.perm.oldToNew},
                                std::pair{&dg.edgeOf, &host.edgeOf}}) {
    auto buffer = checks::uploadVector(*source);
    if (!buffer)
      return buffer.status();
    *target = buffer.take();
  }
  auto gather = GatherKernels::load(runtime);
  if (!gather)
    return gather.status();
  dg.gather = gather.take();
  GNNC_RETURN_IF_ERROR(dg.prepare(host, sig));
  return dg;
}

Status gnnc::ops::launchSpmmInUserOrder(rt::Runtime &runtime,
                                        const rt::LoadedKernel &kernel,
                                        DeviceRenumberedGraph &graph,
                                        const rt::DeviceBuffer &x,
                                        const rt::DeviceBuffer *values,
                                        rt::DeviceBuffer &y, bool synchronize,
                                        RenumberScratch *scratch) {
  auto sig = spmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  const std::string what = "kernel '" + kernel.spec.name + "' in user order";
  if (sig->offsets64 != graph.graph.offsets64 ||
      sig->indices64 != graph.graph.indices64)
    return Status::error(
        what + ": the kernel takes " + (sig->offsets64 ? "i64" : "i32") +
        " row offsets and " + (sig->indices64 ? "i64" : "i32") +
        " column indices, the renumbered graph was uploaded with " +
        (graph.graph.offsets64 ? "i64" : "i32") + " and " +
        (graph.graph.indices64 ? "i64" : "i32"));
  const size_t elem = elementSize(sig->type);
  const size_t rowBytes = static_cast<size_t>(sig->rowStride) * elem;
  const uint64_t featureBytes =
      static_cast<uint64_t>(graph.numNodes) * rowBytes;
  using Named = std::pair<const char *, const rt::DeviceBuffer *>;
  for (auto [name, buffer] : {Named{"x", &x}, Named{"y", &y}})
    if (buffer->size() < featureBytes)
      return Status::error(
          what + ": " + name + " needs " + std::to_string(graph.numNodes) +
          " rows of " + std::to_string(sig->rowStride) + " " +
          elementTypeName(sig->type) + " (" + std::to_string(featureBytes) +
          " bytes), it has " + std::to_string(buffer->size()));
  const uint64_t valueBytes = static_cast<uint64_t>(graph.nnz) * elem;
  if (sig->edgeValues && !values)
    return Status::error(what + ": the kernel takes edge values; none given");
  if (!sig->edgeValues && values)
    return Status::error(what + ": the kernel takes no edge values, but "
                                "values were given");
  if (values && values->size() < valueBytes)
    return Status::error(what + ": values needs " + std::to_string(graph.nnz) +
                         " " + elementTypeName(sig->type) + " (" +
                         std::to_string(valueBytes) + " bytes), it has " +
                         std::to_string(values->size()));
  const rt::DeviceBuffer *colNorm = nullptr;
  if (sig->needsColumnNorm()) {
    auto norm = graph.columnNorms.find(sig->colNormExponent);
    if (norm == graph.columnNorms.end())
      return Status::error(
          what +
          ": the kernel scales columns and the renumbered graph has "
          "no column factors for exponent " +
          std::to_string(sig->colNormExponent) +
          "; prepare the graph for this kernel first "
          "(DeviceRenumberedGraph::prepare)");
    colNorm = &norm->second;
  }

  RenumberScratch &buffers = scratch ? *scratch : graph.scratch;
  GNNC_RETURN_IF_ERROR(ensureSize(buffers.x, featureBytes));
  GNNC_RETURN_IF_ERROR(ensureSize(buffers.y, featureBytes));
  if (values)
    GNNC_RETURN_IF_ERROR(ensureSize(buffers.values, valueBytes));

  // All on the default stream: each step waits for the one before.
  GNNC_RETURN_IF_ERROR(
      graph.rowsToInternal(runtime, x, buffers.x, rowBytes, false));
  if (values)
    GNNC_RETURN_IF_ERROR(graph.edgeValuesToInternal(
        runtime, *values, buffers.values, elem, false));
  GNNC_RETURN_IF_ERROR(launchSpmm(runtime, kernel, graph.graph, buffers.x,
                                  values ? &buffers.values : nullptr, buffers.y,
                                  false, colNorm)
                           .withContext(what));
  // The padding of y's rows is the caller's: only the features go back.
  return graph.rowsToUser(runtime, buffers.y, y, rowBytes, synchronize,
                          static_cast<size_t>(sig->featureWidth) * elem);
}

Expected<KernelCheck> gnnc::ops::checkSpmmInUserOrder(
    rt::Runtime &runtime, const rt::LoadedKernel &kernel,
    const graph::CsrGraph &user, const RenumberedGraph &renumbered,
    uint64_t seed) {
  if (user.numRows != renumbered.numNodes() || user.nnz() != renumbered.nnz())
    return Status::error("checkSpmmInUserOrder: graph '" + user.name +
                         "' has " + std::to_string(user.numRows) +
                         " nodes and " + std::to_string(user.nnz()) +
                         " edges, its renumbering " +
                         std::to_string(renumbered.numNodes()) + " and " +
                         std::to_string(renumbered.nnz()));
  auto sig = spmmSignature(kernel.spec);
  if (!sig)
    return sig.status();
  const int64_t n = user.numRows;
  const int64_t width = sig->featureWidth;
  const int64_t stride = sig->rowStride;
  checks::SpmmInputs in = checks::randomSpmmInputs(*sig, n, user.nnz(), seed);
  // Padded rows: x's padding holds NaN, which would reach any output that
  // used it.
  std::vector<float> xRows = padRows(in.x, n, width, stride);

  auto dg = uploadRenumberedGraph(runtime, renumbered, *sig);
  if (!dg)
    return dg.status();
  auto dx = uploadTensor(xRows, sig->type);
  if (!dx)
    return dx.status();
  Expected<rt::DeviceBuffer> dv = Status::error("unused");
  if (sig->edgeValues) {
    dv = uploadTensor(in.values, sig->type);
    if (!dv)
      return dv.status();
  }
  const size_t outCount = static_cast<size_t>(n * stride);
  auto dy = allocatePoisoned(outCount, sig->type);
  if (!dy)
    return dy.status();
  GNNC_RETURN_IF_ERROR(launchSpmmInUserOrder(
      runtime, kernel, *dg, *dx, sig->edgeValues ? &*dv : nullptr, *dy));
  auto got = downloadTensor(*dy, outCount, sig->type);
  if (!got)
    return got.status();
  // The padding of y (poisoned with NaN) is the caller's: it must be left
  // alone.
  int64_t paddingWritten = 0;
  if (sig->padded()) {
    for (int64_t r = 0; r < n; ++r)
      for (int64_t c = width; c < stride; ++c)
        paddingWritten += !std::isnan((*got)[r * stride + c]);
    *got = checks::unpadRows(*got, n, width, stride);
  }

  KernelCheck check = checks::compareSpmm(kernel.spec, user, *sig, in, *got);
  check.report += " (in the user's order through the " + renumbered.orderName +
                  " renumbering)";
  if (paddingWritten > 0) {
    check.ok = false;
    check.report += "; " + std::to_string(paddingWritten) +
                    " padding elements of y were written";
  }
  return check;
}
