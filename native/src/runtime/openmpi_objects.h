/* Open MPI's predefined handles (MPI_COMM_WORLD, MPI_BYTE, MPI_SUM ...) are the
 * addresses of objects in libmpi, where MPICH's are integer constants. The
 * library links no MPI (it is preloaded into launchers and shells too), so in
 * its Open MPI build those references are weak: the dynamic linker binds them
 * to the application's libmpi when it is loaded with it, and leaves them NULL
 * in a process without one (where no wrapper ever runs). abi.c checks them
 * before the library takes part (an MPI loaded later with dlopen finds them
 * NULL: the library stays out of the way). Forced into every file of the Open
 * MPI build (native/CMakeLists.txt); a new predefined handle used by the
 * runtime is added here, or the link (--no-undefined) fails. */
#ifndef IOT_OPENMPI_OBJECTS_H
#define IOT_OPENMPI_OBJECTS_H
#include <mpi.h>
#if defined(OPEN_MPI)
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_mpi_info_null
#pragma weak ompi_mpi_file_null
#pragma weak ompi_mpi_errhandler_null
#pragma weak ompi_mpi_errors_return
#pragma weak ompi_mpi_op_max
#pragma weak ompi_mpi_op_min
#pragma weak ompi_mpi_op_sum
#pragma weak ompi_mpi_op_bor
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_int
#pragma weak ompi_mpi_char
#pragma weak ompi_mpi_unsigned
#pragma weak ompi_mpi_long
#pragma weak ompi_mpi_unsigned_long
#pragma weak ompi_mpi_long_long_int
#pragma weak ompi_mpi_unsigned_long_long
#pragma weak ompi_mpi_double
#pragma weak ompi_mpi_int64_t
#pragma weak ompi_mpi_uint64_t
#pragma weak ompi_mpi_datatype_null
#endif
#endif
