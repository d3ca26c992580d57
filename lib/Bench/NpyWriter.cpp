//===- NpyWriter.cpp - Writing NumPy .npy files ---------------------------===//
#include "gnnc/Bench/NpyWriter.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

using namespace gnnc;
using namespace gnnc::bench;

std::string gnnc::bench::npyHeader(const std::string &descr,
                                   const std::vector<int64_t> &shape) {
  std::string dict = "{'descr': '" + descr +
                     "', 'fortran_order': False, "
                     "'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    dict += std::to_string(shape[i]) +
            (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
  dict += "), }";
  // magic (6) + version (2) + length (2) + dict + padding + '\n' must be a
  // multiple of 64.
  size_t total = 10 + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string header("\x93NUMPY\x01\x00", 8);
  header += static_cast<char>(dict.size() & 0xff);
  header += static_cast<char>((dict.size() >> 8) & 0xff);
  return header + dict;
}

Status gnnc::bench::writeNpy(const std::string &path, const std::string &descr,
                             const std::vector<int64_t> &shape,
                             const void *data, size_t bytes) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return Status::error(path + ": cannot create: " + std::strerror(errno));
  std::string header = npyHeader(descr, shape);
  bool ok = std::fwrite(header.data(), 1, header.size(), file) == header.size();
  if (ok && bytes)
    ok = std::fwrite(data, 1, bytes, file) == bytes;
  ok = (std::fclose(file) == 0) && ok;
  if (!ok)
    return Status::error(path + ": write failed: " + std::strerror(errno));
  return Status::ok();
}

Status gnnc::bench::writeGraphNpy(const graph::CsrGraph &g,
                                  const std::string &dir,
                                  const std::string &stem) {
  const std::string base = dir + "/" + stem;
  GNNC_RETURN_IF_ERROR(writeNpy(base + ".indptr.npy", "<i8",
                                {static_cast<int64_t>(g.rowPtr.size())},
                                g.rowPtr.data(), g.rowPtr.size() * 8));
  auto indices = g.colIdx32();
  if (!indices)
    return indices.status().withContext(base + ".indices.npy");
  return writeNpy(base + ".indices.npy", "<i4",
                  {static_cast<int64_t>(indices->size())}, indices->data(),
                  indices->size() * 4);
}
