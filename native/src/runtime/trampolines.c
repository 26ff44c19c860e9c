/* The exported MPI functions: each a trampoline that jumps, arguments
 * untouched in their registers, to the library's C wrapper (iot_wrap_NAME,
 * in mpi.c, mpiio.c or pnetcdf.c), or to another ABI's MPI once abi.c pointed
 * it there.
 * Apart from abi.c so that the calls between files go one way: the wrappers
 * ask abi.c, and only the trampolines reach the wrappers. */
#include "iotuner/calls.h"
#include "abi.h"

#if !defined(__x86_64__)
#error "the MPI trampolines are written for x86-64 (as the TSC clock is)"
#endif

/* r11 is free at a call (the ABI's scratch register); endbr64 keeps the entry valid under CET */
#define TRAMPOLINE(name)                                                                                       \
    __asm__(".pushsection .text\n"                                                                             \
            ".globl " #name "\n"                                                                               \
            ".type " #name ", @function\n"                                                                     \
            ".p2align 4\n" #name ":\n"                                                                         \
            "\tendbr64\n"                                                                                      \
            "\tmovq iot_foreign_" #name "(%rip), %r11\n"                                                       \
            "\ttestq %r11, %r11\n"                                                                             \
            "\tjnz 1f\n"                                                                                       \
            "\tjmp iot_wrap_" #name "\n"                                                                       \
            "1:\tjmp *%r11\n"                                                                                  \
            ".size " #name ", .-" #name "\n"                                                                   \
            ".popsection\n");
#define TRAMPOLINE_RUN(ret, name, ...) TRAMPOLINE(name)
#define TRAMPOLINE_DATA(name, ...) TRAMPOLINE(name)
#define TRAMPOLINE_PRUN(ret, name, ...) TRAMPOLINE(P##name)
#define TRAMPOLINE_PDATA(name, ...) TRAMPOLINE(P##name)
IOT_MPI_CALLS(TRAMPOLINE_RUN)
IOT_MPI_DATA_CALLS(TRAMPOLINE_DATA)
IOT_MPI_CALLS(TRAMPOLINE_PRUN)
IOT_MPI_DATA_CALLS(TRAMPOLINE_PDATA)
IOT_PNETCDF_MPI_CALLS(TRAMPOLINE_RUN)
