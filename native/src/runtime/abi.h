/* The exported MPI functions are trampolines (abi.c) to the library's C
 * wrappers, or to another ABI's MPI. */
#ifndef IOTUNER_ABI_H
#define IOTUNER_ABI_H

#include <mpi.h>

#include "iotuner/calls.h"

/* The MPI wrappers take the handles of the MPI the library was built for: each is iot_wrap_NAME, with the
 * prototype of mpi.h's NAME, and the exported NAME is a trampoline to it. */
#define IOT_DECLARE_MPI(ret, name, ...) __typeof__(name) iot_wrap_##name;
#define IOT_DECLARE_MPI_DATA(name, ...) __typeof__(name) iot_wrap_##name;
IOT_MPI_CALLS(IOT_DECLARE_MPI)
IOT_MPI_DATA_CALLS(IOT_DECLARE_MPI_DATA)
/* and iot_wrap_PMPI_NAME behind the exported PMPI_NAME: the same wrapper, calling the real PMPI_NAME */
#define IOT_DECLARE_PMPI(ret, name, ...) __typeof__(name) iot_wrap_P##name;
#define IOT_DECLARE_PMPI_DATA(name, ...) __typeof__(name) iot_wrap_P##name;
IOT_MPI_CALLS(IOT_DECLARE_PMPI)
IOT_MPI_DATA_CALLS(IOT_DECLARE_PMPI_DATA)
/* PnetCDF's calls with MPI handles: their prototypes are the table's (the library does not include pnetcdf.h) */
#define IOT_DECLARE_WRAP(ret, name, params, ...) ret iot_wrap_##name params;
IOT_PNETCDF_MPI_CALLS(IOT_DECLARE_WRAP)
/* 1 when this process uses an MPI of another ABI than the library's: then the library is disabled, and the
 * exported MPI functions jump straight to that MPI's own. */
int iot_mpi_foreign_abi(void);

#endif
