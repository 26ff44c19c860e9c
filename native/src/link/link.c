/* libiotuner_link.a: linked into a program that has HDF5 linked in statically (h5pcc's and h5pfc's default),
 * with the flags `iotuner link-flags` prints: ld --wrap=X for each HDF5 call of iotuner/calls.h makes the
 * program call __wrap_X, defined here, and makes __real_X its own X. A __wrap_X jumps, arguments untouched,
 * to libiotuner.so's wrapper when the runtime is in the process (`iotuner run` preloads it), else straight to
 * the real X: the program needs no iotuner to run, and links no library of it. In the runtime's presence, a
 * constructor hands it the real functions (a shared library's references are not rewritten by --wrap, and a
 * static HDF5 is no library for dlsym to find), with the HDF5 calls the runtime makes itself, which referring
 * to them here also links in from libhdf5.a. */
#include <stddef.h>

#include <hdf5.h>

#include "iotuner/calls.h"
#include "hdf5_apply.h"

/* only in a parallel HDF5: weak, so that a serial one links too */
#pragma weak H5Pset_all_coll_metadata_ops
#pragma weak H5Pget_all_coll_metadata_ops
#pragma weak H5Pset_coll_metadata_write
#pragma weak H5Pget_coll_metadata_write
#pragma weak H5Pset_dxpl_mpio
#pragma weak H5Pget_dxpl_mpio
#pragma weak H5Pget_mpio_actual_io_mode
#pragma weak H5Pget_mpio_no_collective_cause
#pragma weak H5Pget_fapl_mpio
#pragma weak H5FD_mpio_init

#define REAL_DECLARE(ret, name, params, sig) extern ret __real_##name params;
IOT_HDF5_CALLS(REAL_DECLARE)

#include <dlfcn.h>

#if !defined(__x86_64__)
#error "the link trampolines are written for x86-64 (as the runtime's MPI trampolines are)"
#endif

/* where each __wrap_X jumps: the real X until the runtime's wrapper is found */
#define TARGET(ret, name, params, sig) void *iot_link_to_##name = (void *)__real_##name;
IOT_HDF5_CALLS(TARGET)

/* r11 is free at a call (the ABI's scratch register); endbr64 keeps the entry valid under CET */
#define TRAMPOLINE(ret, name, params, sig)                                                                     \
    __asm__(".pushsection .text\n"                                                                             \
            ".globl __wrap_" #name "\n"                                                                        \
            ".type __wrap_" #name ", @function\n"                                                              \
            ".p2align 4\n"                                                                                     \
            "__wrap_" #name ":\n"                                                                              \
            "\tendbr64\n"                                                                                      \
            "\tmovq iot_link_to_" #name "(%rip), %r11\n"                                                       \
            "\tjmp *%r11\n"                                                                                    \
            ".size __wrap_" #name ", .-__wrap_" #name "\n"                                                      \
            ".popsection\n");
IOT_HDF5_CALLS(TRAMPOLINE)

#define REAL_NAME(ret, name, params, sig) #name,
#define CALLED_NAME(ret, field, params, symbol, required) symbol,
static const char *const names[] = {IOT_HDF5_CALLS(REAL_NAME) H5_FUNCTIONS(CALLED_NAME) "H5P_CLS_FILE_ACCESS_ID_g",
                                    "H5P_CLS_DATASET_CREATE_ID_g", "H5P_CLS_DATASET_XFER_ID_g"};

#define REAL_ADDR(ret, name, params, sig) (void *)__real_##name,
#define CALLED_ADDR(ret, field, params, symbol, required) (void *)H5##field, /* every symbol is "H5" field */
static void *const addrs[] = {IOT_HDF5_CALLS(REAL_ADDR) H5_FUNCTIONS(CALLED_ADDR) & H5P_CLS_FILE_ACCESS_ID_g,
                              &H5P_CLS_DATASET_CREATE_ID_g, &H5P_CLS_DATASET_XFER_ID_g};
_Static_assert(sizeof names / sizeof *names == sizeof addrs / sizeof *addrs, "a name for every address");

/* `iotuner link-flags` names this (ld --undefined), so the archive's member is linked wherever the flags stand */
__attribute__((constructor)) void iotuner_link_hdf5(void)
{
    /* RTLD_NEXT: the objects after the program, where a preloaded runtime is (never this program's own) */
    void (*reg)(const char *const *, void *const *, size_t) =
        (void (*)(const char *const *, void *const *, size_t))dlsym(RTLD_NEXT, "iotuner_link_register");
    if (!reg)
        return; /* no iotuner in this process: the calls go straight to HDF5 */
    reg(names, addrs, sizeof names / sizeof *names);
#define POINT(ret, name, params, sig)                                                                          \
    {                                                                                                          \
        void *w = dlsym(RTLD_NEXT, "__wrap_" #name);                                                            \
        if (w)                                                                                                 \
            iot_link_to_##name = w;                                                                            \
    }
    IOT_HDF5_CALLS(POINT)
}
