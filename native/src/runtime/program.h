/* What the program's executable holds itself (program.c). */
#ifndef IOTUNER_PROGRAM_H
#define IOTUNER_PROGRAM_H

#include <stddef.h>

#include "iotuner/record.h"

/* found[i] = 1 when the executable itself defines names[i] (a library linked statically into it); reads
 * its symbol table once per call. -1 when the executable cannot be read. */
int iot_program_defines(const char *const *names, int *found, size_t n);

/* The program was linked with `iotuner link-flags` for this layer's calls (its __real_ functions are known). */
int iot_program_wrapped(iot_phase_kind kind);

#endif
