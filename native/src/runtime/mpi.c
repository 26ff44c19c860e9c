/* MPI_Init, MPI_Init_thread and MPI_Finalize: they forward the start and
 * end of the run to the lifecycle (lifecycle.c). */
#include "iotuner/calls.h"
#include "abi.h"
#include "lifecycle.h"
#include "pmpi.h"
#include "state.h"

/* After MPI_Init: our own communicator, rank, nodes, clocks. */
static void started(void)
{
    if (iot_g.disabled || !iot_pmpi_resolve())
        return;
    iot_internal++;
    iot_lifecycle_mpi_started();
    iot_internal--;
}

int iot_wrap_MPI_Init(int *argc, char ***argv)
{
    if (iot_mpi_foreign_abi()) /* an MPI loaded after the library (dlopen): from now on, its own calls */
        return ((int (*)(int *, char ***))iot_next_symbol("MPI_Init"))(argc, argv);
    if (!iot_pmpi_resolve() && !iot_pmpi.Init)
        return MPI_ERR_INTERN; /* not an MPI process: cannot happen through the linker */
    int rc = iot_pmpi.Init(argc, argv);
    if (rc == MPI_SUCCESS)
        started();
    return rc;
}

int iot_wrap_MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (iot_mpi_foreign_abi())
        return ((int (*)(int *, char ***, int, int *))iot_next_symbol("MPI_Init_thread"))(argc, argv, required,
                                                                                          provided);
    if (!iot_pmpi_resolve() && !iot_pmpi.Init_thread)
        return MPI_ERR_INTERN;
    int rc = iot_pmpi.Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        started();
    return rc;
}

int iot_wrap_MPI_Finalize(void)
{
    iot_pmpi_resolve();
    if (iot_g.mpi_initialized && !iot_g.mpi_finalized) {
        iot_internal++;
        iot_lifecycle_mpi_finishing(); /* the report: collective on the run's communicator */
        iot_internal--;
    }
    return iot_pmpi.Finalize();
}
