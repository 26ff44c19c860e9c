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
#define FOREIGN_POINTER_PRUN(ret, name, ...) FOREIGN_POINTER(P##name)
#define FOREIGN_POINTER_PDATA(name, ...) FOREIGN_POINTER(P##name)
IOT_MPI_CALLS(FOREIGN_POINTER_RUN)
IOT_MPI_DATA_CALLS(FOREIGN_POINTER_DATA)
IOT_MPI_CALLS(FOREIGN_POINTER_PRUN)
IOT_MPI_DATA_CALLS(FOREIGN_POINTER_PDATA)
IOT_PNETCDF_MPI_CALLS(FOREIGN_POINTER_RUN)
/* A library loaded after the process was found to use another ABI (PnetCDF imported by Python after mpi4py's
 * MPI_Init) has no foreign address yet: point_at_foreign points its trampolines at iot_lazy_NAME, which looks
 * the real one up on the first call (iot_foreign_lookup) with the arguments saved in their registers. None of
 * these calls takes a floating-point or variadic argument: the six integer registers are all. The stack is
 * 16-byte aligned at the call: 8 (return address) + 7 pushes. */
__asm__(".pushsection .text\n"
        ".type iot_lazy_common, @function\n"
        ".p2align 4\n"
        "iot_lazy_common:\n"
        "\tpushq %rdi\n\tpushq %rsi\n\tpushq %rdx\n\tpushq %rcx\n\tpushq %r8\n\tpushq %r9\n\tpushq %r11\n"
        "\tmovq %r11, %rdi\n"
        "\tmovq %r10, %rsi\n"
        "\tcall iot_foreign_lookup\n"
        "\tpopq %r11\n\tpopq %r9\n\tpopq %r8\n\tpopq %rcx\n\tpopq %rdx\n\tpopq %rsi\n\tpopq %rdi\n"
        "\tjmp *%rax\n"
        ".size iot_lazy_common, .-iot_lazy_common\n"
        ".popsection\n");
#define LAZY(name)                                                                                             \
    __asm__(".pushsection .rodata\n"                                                                          \
            "iot_lazy_name_" #name ": .asciz \"" #name "\"\n"                                                    \
            ".popsection\n"                                                                                   \
            ".pushsection .text\n"                                                                            \
            ".globl iot_lazy_" #name "\n"                                                                     \
            ".hidden iot_lazy_" #name "\n"                                                                    \
            ".type iot_lazy_" #name ", @function\n"                                                           \
            ".p2align 4\n"                                                                                    \
            "iot_lazy_" #name ":\n"                                                                           \
            "\tendbr64\n"                                                                                     \
            "\tleaq iot_foreign_" #name "(%rip), %r11\n"                                                      \
            "\tleaq iot_lazy_name_" #name "(%rip), %r10\n"                                                    \
            "\tjmp iot_lazy_common\n"                                                                         \
            ".size iot_lazy_" #name ", .-iot_lazy_" #name "\n"                                                \
            ".popsection\n");
#define LAZY_RUN(ret, name, ...) LAZY(name)
IOT_PNETCDF_MPI_CALLS(LAZY_RUN)

#define LAZY_ENTRY(ret, name, ...) void iot_lazy_##name(void);
IOT_PNETCDF_MPI_CALLS(LAZY_ENTRY)

/* The ABI family of an MPI library: Open MPI's, or MPICH's (MPICH, Intel MPI, Cray MPICH, MVAPICH). */
#if defined(OPEN_MPI)
#define BUILT_FOR "Open MPI"
#elif defined(MPICH_VERSION) || defined(MPICH_NAME)
#define BUILT_FOR "MPICH"
#else
#error "unknown MPI ABI: iotuner is built against MPICH's or Open MPI's mpi.h"
#endif

/* The ABI family of the MPI in this process, or NULL when no MPI is loaded (yet). Asked by a name the library
 * does not define itself (it exports PMPI_Init). */
static const char *process_abi(void)
{
    if (dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world")) /* Open MPI's MPI_COMM_WORLD is this object's address */
        return "Open MPI";
    return dlsym(RTLD_DEFAULT, "PMPI_Comm_rank") ? "MPICH" : NULL;
}

static void point_at_foreign(void)
{
#define POINT(name) iot_foreign_##name = dlsym(RTLD_NEXT, #name);
#define POINT_RUN(ret, name, ...) POINT(name)
#define POINT_DATA(name, ...) POINT(name)
#define POINT_PRUN(ret, name, ...) POINT(P##name)
#define POINT_PDATA(name, ...) POINT(P##name)
    IOT_MPI_CALLS(POINT_RUN)
    IOT_MPI_DATA_CALLS(POINT_DATA)
    IOT_MPI_CALLS(POINT_PRUN)
    IOT_MPI_DATA_CALLS(POINT_PDATA)
    /* a library that is not loaded yet (PnetCDF) is looked up at its first call */
#define POINT_LATER(ret, name, ...)                                                                          \
    iot_foreign_##name = dlsym(RTLD_NEXT, #name);                                                            \
    if (!iot_foreign_##name)                                                                                 \
        iot_foreign_##name = (void *)iot_lazy_##name;
    IOT_PNETCDF_MPI_CALLS(POINT_LATER)
}

/* The first call of a foreign function whose library was loaded after point_at_foreign (iot_lazy_NAME): the
 * next definition, kept in its trampoline's slot. There is one, or the application could not have called it. */
/* PnetCDF's NC_ENOTBUILT (every such call returns an int error code) */
static int not_built(void)
{
    return -128;
}

void *iot_foreign_lookup(void **slot, const char *name);
void *iot_foreign_lookup(void **slot, const char *name)
{
    void *real = dlsym(RTLD_NEXT, name);
    if (!real) { /* found by dlsym in a process without the library: fails as a missing feature would */
        fprintf(stderr, "iotuner: warning: %s was called, but no library defines it\n", name);
        real = (void *)not_built;
    }
    __atomic_store_n(slot, real, __ATOMIC_RELEASE);
    return real;
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
    if (iot_launch_rank() == 0 && !getenv("IOTUNER_DISABLE")) {
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
