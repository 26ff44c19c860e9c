/* Open MPI's MCA parameters through MPI_T (mca.c). */
#ifndef IOTUNER_MCA_H
#define IOTUNER_MCA_H
#include <stddef.h>
#include <mpi.h>

/* An MCA parameter's value as text (MPI_T control variable `name`); 0 when there is none. After MPI_Init. */
int iot_mca_read(const char *name, char *out, size_t outlen);
/* The io component that opens files in this Open MPI process ("ompio", "romio321", "romio341"); NULL elsewhere. */
const char *iot_mca_io_component(void);
#endif
