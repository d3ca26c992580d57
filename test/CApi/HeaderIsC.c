/*===- HeaderIsC.c - gnnc-c/Gnnc.h compiles as C11 ------------------------===*\
|*                                                                            *|
|* Built as C11 with -pedantic -Werror and run as a test: the header is valid *|
|* C and the library links from C.                                            *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
#include "gnnc-c/Gnnc.h"

#include <stdio.h>

int main(void) {
  gnnc_op_desc desc;
  gnnc_op_desc_init(&desc);
  if (gnnc_abi_version() != GNNC_ABI_VERSION) {
    fprintf(stderr, "gnnc_abi_version() is %d, the header says %d\n",
            gnnc_abi_version(), GNNC_ABI_VERSION);
    return 1;
  }
  if (desc.struct_size != sizeof(gnnc_op_desc)) {
    fprintf(stderr, "gnnc_op_desc_init set struct_size %u, C says %u\n",
            (unsigned)desc.struct_size, (unsigned)sizeof(gnnc_op_desc));
    return 1;
  }
  {
    /* A host-only snapshot group from C: 0 -> 1 in both snapshots, 1 -> 0
     * in the second only. */
    static const int64_t first[3] = {0, 0, 1}, second[3] = {0, 1, 2};
    static const int32_t firstCols[1] = {0}, secondCols[2] = {1, 0};
    const int64_t *rowPtrs[2] = {first, second};
    const int32_t *colIdxs[2] = {firstCols, secondCols};
    const int64_t nnzs[2] = {1, 2};
    gnnc_snapshot_group group = NULL;
    double rate = 0;
    if (gnnc_snapshot_group_create(NULL, "c", 2, 2, rowPtrs, colIdxs, nnzs,
                                   &group) != GNNC_OK ||
        gnnc_snapshot_group_edges(group, NULL, NULL, NULL, &rate) != GNNC_OK) {
      fprintf(stderr, "a snapshot group from C: %s\n", gnnc_last_error());
      return 1;
    }
    gnnc_snapshot_group_destroy(group);
    if (rate < 0.66 || rate > 0.67) {
      fprintf(stderr, "overlap rate %g, expected 2/3\n", rate);
      return 1;
    }
  }
  return 0;
}
