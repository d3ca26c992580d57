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
  return 0;
}
