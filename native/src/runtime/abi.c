/* Inert under an MPI of another ABI. libiotuner.so is compiled against one
 * MPI's mpi.h (MPICH's: an MPI_Comm is an int); in an Open MPI process an
 * MPI_Comm is a pointer, and a C wrapper with MPICH's prototype would cut it
 * to 32 bits before forwarding it, or crash on it in MPI_Init.
 *
 * So every MPI function the library exports is a trampoline (trampolines.c):
 * a few instructions that jump, arguments untouched in their registers,
 * either to the library's C wrapper (iot_wrap_NAME) or, once this file knows
 * the process uses another ABI, straight to that MPI's own NAME. The check
 * runs at load (before main, so before MPI_Init) and again in MPI_Init for a
 * process that loads its MPI later (dlopen). Then the whole library stays out of the way:
 * no settings, no measuring, no report; one warning from rank 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iotuner/calls.h"
#include "abi.h"
#include "state.h"
#include <mpi.h>

/* The other ABI's function for each exported MPI name; NULL: the trampoline (trampolines.c) goes to our
 * wrapper. */
#define FOREIGN_POINTER(name) void *iot_foreign_##name;
#define FOREIGN_POINTER_RUN(ret, name, ...) FOREIGN_POINTER(name)
#define FOREIGN_POINTER_DATA(name, ...) FOREIGN_POINTER(name)
IOT_MPI_CALLS(FOREIGN_POINTER_RUN)
IOT_MPI_DATA_CALLS(FOREIGN_POINTER_DATA)

/* The ABI family of an MPI library: Open MPI's, or MPICH's (MPICH, Intel MPI, Cray MPICH, MVAPICH). */
#if defined(OPEN_MPI)
#define BUILT_FOR "Open MPI"
#elif defined(MPICH_VERSION) || defined(MPICH_NAME)
#define BUILT_FOR "MPICH"
#else
#error "unknown MPI ABI: iotuner is built against MPICH's or Open MPI's mpi.h"
#endif

/* The ABI family of the MPI in this process, or NULL when no MPI is loaded (yet). */
static const char *process_abi(void)
{
    if (dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world")) /* Open MPI's MPI_COMM_WORLD is this object's address */
        return "Open MPI";
    return dlsym(RTLD_DEFAULT, "PMPI_Init") ? "MPICH" : NULL;
}

/* This process's rank before MPI_Init, from the launcher's environment (0 when launched alone). */
static int launch_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v)
            return atoi(v);
    }
    return 0;
}

static void point_at_foreign(void)
{
#define POINT(name) iot_foreign_##name = dlsym(RTLD_NEXT, #name);
#define POINT_RUN(ret, name, ...) POINT(name)
#define POINT_DATA(name, ...) POINT(name)
    IOT_MPI_CALLS(POINT_RUN)
    IOT_MPI_DATA_CALLS(POINT_DATA)
}

int iot_mpi_foreign_abi(void)
{
    static int foreign = -1; /* -1: no MPI seen yet */
    if (foreign >= 0)
        return foreign;
    const char *abi = process_abi();
    if (!abi)
        return 0;
    foreign = strcmp(abi, BUILT_FOR) != 0;
#if defined(OPEN_MPI)
    /* Open MPI loaded after the library (dlopen): the weak references to its handles (openmpi_objects.h)
     * were bound at our load and stayed NULL, so the wrappers cannot name them: out of the way as well */
    int late = !foreign && MPI_COMM_WORLD == NULL;
    foreign |= late;
#else
    int late = 0;
#endif
    if (!foreign)
        return 0;
    point_at_foreign();
    iot_state_disable();
    if (launch_rank() == 0 && !getenv("IOTUNER_DISABLE")) {
        char version[8192] = "";
        int len = 0, (*get)(char *, int *) = (int (*)(char *, int *))dlsym(RTLD_DEFAULT, "MPI_Get_library_version");
        if (get && get(version, &len) == 0) /* allowed before MPI_Init; Open MPI's string is at most 256 bytes */
            version[strcspn(version, "\n,")] = 0;
        if (late)
            fprintf(stderr,
                    "iotuner: warning: this job loaded %s after iotuner started (dlopen); iotuner stays out of its "
                    "way: no settings applied, nothing measured, no report\n",
                    version[0] ? version : abi);
        else
            fprintf(stderr,
                    "iotuner: warning: this job uses %s, not the MPI libiotuner.so was built for (%s); iotuner "
                    "stays out of its way: no settings applied, nothing measured, no report\n",
                    version[0] ? version : abi, BUILT_FOR);
    }
    return 1;
}
