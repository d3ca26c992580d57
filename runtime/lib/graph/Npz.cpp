//===- Npz.cpp - NumPy .npz archives and CSR graphs in them ---------------===//
//
// NpzFile (members of the ZIP container parsed as .npy arrays on demand) and
// readNpzCsr, which checks every member of a CSR graph it reads.
//
//===----------------------------------------------------------------------===//

#include "gnnc/graph/Readers.h"

#include "ReaderSupport.h"
#include "Zip.h"

#include <algorithm>
#include <limits>

using namespace gnnc;
using namespace gnnc::graph;
using namespace gnnc::graph::detail;

//===----------------------------------------------------------------------===//
// NpzFile
//===----------------------------------------------------------------------===//

std::vector<std::string> NpzFile::names() const {
  std::vector<std::string> out;
  for (const Entry &e : entries_)
    out.push_back(e.name);
  return out;
}

const NpzFile::Entry *NpzFile::find(const std::string &name) const {
  std::string key = withoutSuffix(name, ".npy");
  for (const Entry &e : entries_)
    if (e.name == key)
      return &e;
  return nullptr;
}

bool NpzFile::has(const std::string &name) const {
  return find(name) != nullptr;
}

Expected<NpyArray> NpzFile::get(const std::string &name) const {
  const Entry *entry = find(name);
  if (!entry) {
    std::string list;
    for (const Entry &e : entries_)
      list += (list.empty() ? "" : ", ") + e.name;
    return Status::error(path_ + ": missing member '" + name +
                         "' (members: " + (list.empty() ? "none" : list) + ")");
  }
  std::string what = path_ + ": member '" + entry->name + "'";
  return guardAllocation<NpyArray>(path_, [&]() -> Expected<NpyArray> {
    // A member's declared size is checked against what its compressed
    // bytes can hold (zip::extract) and against the budget before it is
    // allocated.
    Expected<GraphBudget> budget = GraphBudget::current(path_);
    if (!budget)
      return budget.status();
    std::string over =
        budget->checkBytes(entry->uncompressedSize, "its uncompressed data");
    if (!over.empty())
      return Status::error(what + ": " + over);
    Expected<std::vector<uint8_t>> data = zip::extract(bytes_, *entry, what);
    if (!data)
      return data.status();
    return parseNpy(data->data(), data->size(), what);
  });
}

Expected<NpzFile> gnnc::graph::parseNpz(const std::string &path,
                                        std::vector<uint8_t> bytes) {
  return guardAllocation<NpzFile>(path, [&]() -> Expected<NpzFile> {
    NpzFile npz;
    npz.path_ = path;
    npz.bytes_ = std::move(bytes);
    Expected<std::vector<NpzFile::Entry>> entries =
        zip::readDirectory(npz.bytes_, path, ".npy");
    if (!entries)
      return entries.status();
    npz.entries_ = entries.take();
    return npz;
  });
}

Expected<NpzFile> gnnc::graph::readNpz(const std::string &path) {
  return guardAllocation<NpzFile>(path, [&]() -> Expected<NpzFile> {
    Expected<std::vector<uint8_t>> read = readBinaryFile(path);
    if (!read)
      return read.status();
    return parseNpz(path, read.take());
  });
}

//===----------------------------------------------------------------------===//
// CSR from .npz
//===----------------------------------------------------------------------===//

namespace {

Expected<CsrGraph> csrOf(const std::string &path, const Expected<NpzFile> &npz,
                         const std::string &prefix, int64_t numCols) {
  if (!npz)
    return npz.status();
  Expected<GraphBudget> budget = GraphBudget::current(path);
  if (!budget)
    return budget.status();
  auto memberErr = [&](const std::string &member, const std::string &msg) {
    return Status::error(path + ": member '" + prefix + member + "': " + msg);
  };
  auto getIntArray = [&](const std::string &member, NpyArray &out) -> Status {
    Expected<NpyArray> a = npz->get(prefix + member);
    if (!a)
      return a.status();
    if (!a->isInteger())
      return memberErr(member,
                       "dtype '" + a->dtype + "' is not an integer type");
    if (a->shape.size() != 1)
      return memberErr(member, "expected a 1-d array, got shape with " +
                                   std::to_string(a->shape.size()) +
                                   " dimensions");
    out = a.take();
    return Status::ok();
  };
  auto toInt64 = [&](const std::string &member, const NpyArray &a,
                     std::vector<int64_t> &out) -> Status {
    Expected<std::vector<int64_t>> v = a.asInt64();
    if (!v)
      return v.status().withContext(path + ": member '" + prefix + member +
                                    "'");
    out = v.take();
    return Status::ok();
  };

  CsrGraph g;
  g.name = prefix.empty() ? path : path + ":" + prefix;
  NpyArray indptr, indices;
  GNNC_RETURN_IF_ERROR(getIntArray("indptr", indptr));
  GNNC_RETURN_IF_ERROR(getIntArray("indices", indices));
  if (indptr.numElements() == 0)
    return memberErr("indptr", "is empty (expected num_nodes + 1 offsets)");
  // The sizes, against the limits, before the arrays are widened to 64 bits.
  int64_t rows = indptr.numElements() - 1;
  if (rows > kMaxReaderDimension)
    return memberErr("indptr", "has " + std::to_string(rows + 1) +
                                   " offsets: more rows than the supported "
                                   "maximum " +
                                   std::to_string(kMaxReaderDimension));
  std::string over = budget->check(rows, rows, indices.numElements());
  if (!over.empty())
    return Status::error(path + ": " + over);
  GNNC_RETURN_IF_ERROR(toInt64("indptr", indptr, g.rowPtr));
  GNNC_RETURN_IF_ERROR(toInt64("indices", indices, g.colIdx));
  indptr = NpyArray();
  indices = NpyArray();
  g.numRows = rows;

  int64_t numNodes = -1;
  if (npz->has(prefix + "num_nodes")) {
    Expected<NpyArray> a = npz->get(prefix + "num_nodes");
    if (!a)
      return a.status();
    Expected<int64_t> n = a->scalarInt64();
    if (!n)
      return n.status().withContext(path + ": member '" + prefix +
                                    "num_nodes'");
    numNodes = *n;
    if (numNodes < 0)
      return memberErr("num_nodes",
                       "is negative (" + std::to_string(numNodes) + ")");
    if (numNodes != g.numRows)
      return memberErr("indptr",
                       "has " + std::to_string(g.rowPtr.size()) +
                           " entries, expected num_nodes + 1 = " +
                           (numNodes < std::numeric_limits<int64_t>::max()
                                ? std::to_string(numNodes + 1)
                                : std::to_string(numNodes) + " + 1"));
  }

  if (g.rowPtr[0] != 0)
    return memberErr("indptr", "first offset is " +
                                   std::to_string(g.rowPtr[0]) +
                                   ", expected 0");
  for (int64_t r = 0; r < g.numRows; ++r)
    if (g.rowPtr[r + 1] < g.rowPtr[r])
      return memberErr("indptr", "not monotone: offset " +
                                     std::to_string(g.rowPtr[r]) +
                                     " at position " + std::to_string(r) +
                                     " > " + std::to_string(g.rowPtr[r + 1]) +
                                     " at position " + std::to_string(r + 1));
  if (g.rowPtr.back() != g.nnz())
    return memberErr("indptr",
                     "last offset " + std::to_string(g.rowPtr.back()) +
                         " does not match the " + std::to_string(g.nnz()) +
                         " entries of 'indices'");

  int64_t maxIndex = -1;
  for (int64_t c : g.colIdx)
    maxIndex = std::max(maxIndex, c);
  if (numNodes >= 0)
    g.numCols = numNodes;
  else if (numCols >= 0)
    g.numCols = numCols;
  else
    g.numCols = std::max(g.numRows, maxIndex + 1);
  // (Without num_nodes, the largest index sets the column count.)
  if (g.numCols > kMaxReaderDimension)
    return memberErr(numNodes >= 0 || numCols >= 0 ? "num_nodes" : "indices",
                     "makes the graph " + std::to_string(g.numCols) +
                         " columns wide, more than the supported maximum " +
                         std::to_string(kMaxReaderDimension));
  over = budget->check(g.numRows, g.numCols, g.nnz());
  if (!over.empty())
    return Status::error(path + ": " + over);
  for (size_t i = 0; i < g.colIdx.size(); ++i)
    if (g.colIdx[i] < 0 || g.colIdx[i] >= g.numCols)
      return memberErr("indices", "index " + std::to_string(g.colIdx[i]) +
                                      " at position " + std::to_string(i) +
                                      " is out of range [0, " +
                                      std::to_string(g.numCols) + ")");

  for (const char *valueName : {"data", "weight", "weights"}) {
    if (!npz->has(prefix + valueName))
      continue;
    Expected<NpyArray> a = npz->get(prefix + valueName);
    if (!a)
      return a.status();
    if (a->numElements() != g.nnz() || a->shape.size() != 1)
      return memberErr(valueName, "has shape " + shapeString(a->shape) +
                                      ", expected (" + std::to_string(g.nnz()) +
                                      ",) to match 'indices'");
    Expected<std::vector<float>> v = a->asFloat32();
    if (!v)
      return v.status().withContext(path + ": member '" + prefix + valueName +
                                    "'");
    g.values = v.take();
    break;
  }
  Status valid = g.validate();
  if (!valid)
    return valid;
  return g;
}

} // namespace

Expected<CsrGraph> gnnc::graph::parseNpzCsr(const std::string &path,
                                            std::vector<uint8_t> bytes,
                                            const std::string &prefix,
                                            int64_t numCols) {
  return guardAllocation<CsrGraph>(path, [&]() -> Expected<CsrGraph> {
    return csrOf(path, parseNpz(path, std::move(bytes)), prefix, numCols);
  });
}

Expected<CsrGraph> gnnc::graph::readNpzCsr(const std::string &path,
                                           const std::string &prefix,
                                           int64_t numCols) {
  return guardAllocation<CsrGraph>(path, [&]() -> Expected<CsrGraph> {
    return csrOf(path, readNpz(path), prefix, numCols);
  });
}
