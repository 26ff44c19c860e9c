"""Which library calls are I/O, which are logging, and what they do to their arguments.

The extractor keeps a statement when it calls one of the I/O functions below
(a *root*). Formatted text output (printf and friends) and anything aimed at
stdout/stderr is logging: dropped, because its arguments are usually the very
results of the computation the kernel exists to skip.
"""

from __future__ import annotations

import re

# POSIX calls that create, open, close or move data to or from files.
POSIX_IO = frozenset(
    """
open open64 openat openat64 creat creat64 close read write pread pwrite pread64 pwrite64 readv writev preadv
pwritev preadv2 pwritev2 lseek lseek64 fsync fdatasync ftruncate ftruncate64 truncate truncate64 unlink unlinkat
mkdir mkdirat rename renameat posix_fadvise fallocate posix_fallocate sync_file_range
""".split()
)

# stdio calls that move data (binary streams); text output is logging (LOGGING).
STDIO_IO = frozenset(
    """
fopen fopen64 freopen freopen64 fdopen fclose fread fwrite fseek fseeko fseeko64 rewind fflush fsetpos fsetpos64
remove
""".split()
)

# Formatted or character output: logging, never a root.
LOGGING = frozenset(
    """
printf fprintf vprintf vfprintf dprintf vdprintf puts fputs putc fputc putchar putc_unlocked fputc_unlocked
putchar_unlocked fputs_unlocked perror psignal syslog vsyslog
""".split()
)

# MPI calls that are roots besides MPI_File_*: the job must start and end.
MPI_LIFECYCLE = frozenset({"MPI_Init", "MPI_Init_thread", "MPI_Finalize"})

# Calls that never return: kept where their parent statement is kept.
TERMINATORS = frozenset({"exit", "_exit", "_Exit", "quick_exit", "abort", "MPI_Abort"})

# Point-to-point receives: their data comes from a send the slicer cannot see,
# so when one is kept, every send is kept too (else the kernel deadlocks).
MPI_RECEIVES = frozenset(
    {"MPI_Recv", "MPI_Irecv", "MPI_Mrecv", "MPI_Imrecv", "MPI_Sendrecv", "MPI_Sendrecv_replace", "MPI_Recv_init"}
)
MPI_SENDS = frozenset(
    {
        "MPI_Send",
        "MPI_Isend",
        "MPI_Ssend",
        "MPI_Issend",
        "MPI_Bsend",
        "MPI_Ibsend",
        "MPI_Rsend",
        "MPI_Irsend",
        "MPI_Send_init",
        "MPI_Ssend_init",
        "MPI_Bsend_init",
        "MPI_Rsend_init",
    }
)

# Control flow the extractor cannot follow: a kernel containing these is refused.
NONLOCAL_JUMPS = frozenset(
    {"setjmp", "_setjmp", "__sigsetjmp", "sigsetjmp", "longjmp", "_longjmp", "siglongjmp", "__longjmp_chk"}
)

# External functions that change an object passed by handle (by value), so a
# call is an assignment of that argument. Pointer arguments are handled by type.
MUTATES_HANDLE = {
    "MPI_Info_set": (0,),
    "MPI_Info_delete": (0,),
    "MPI_Comm_set_info": (0,),
    "MPI_Comm_set_errhandler": (0,),
    "MPI_Comm_set_attr": (0,),
    "MPI_Comm_set_name": (0,),
    "MPI_Type_set_name": (0,),
    "MPI_Type_set_attr": (0,),
    "MPI_Win_set_info": (0,),
}

# Variadic functions whose variable arguments are only read (everything else
# variadic, e.g. scanf, is assumed to write through its pointer arguments).
VARIADIC_READS = LOGGING | frozenset(
    {
        "sprintf",
        "snprintf",
        "vsprintf",
        "vsnprintf",
        "asprintf",
        "open",
        "open64",
        "openat",
        "fcntl",
        "ioctl",
        "H5Eprint2",
        "H5Epush2",
    }
)

# Argument positions holding a path that the kernel opens or changes: wrapped
# by path switching (--path-prefix).
PATH_ARGS = {
    "open": (0,),
    "open64": (0,),
    "creat": (0,),
    "creat64": (0,),
    "truncate": (0,),
    "truncate64": (0,),
    "unlink": (0,),
    "mkdir": (0,),
    "rename": (0, 1),
    "remove": (0,),
    "fopen": (0,),
    "fopen64": (0,),
    "freopen": (0,),
    "freopen64": (0,),
    "access": (0,),
    "stat": (0,),
    "lstat": (0,),
    "stat64": (0,),
    "opendir": (0,),
    "H5Fcreate": (0,),
    "H5Fopen": (0,),
    "H5Fis_hdf5": (0,),
    "H5Fis_accessible": (0,),
    "H5Fdelete": (0,),
    "MPI_File_open": (1,),
    "MPI_File_delete": (0,),
}

# Whether a path call writes (only files written move under --path-prefix; a file read stays where it
# is unless the kernel wrote it there): True, False, or the C test of the call's mode argument (position,
# template with {} for the argument's text).
PATH_WRITES = {
    "creat": True,
    "creat64": True,
    "truncate": True,
    "truncate64": True,
    "unlink": True,
    "mkdir": True,
    "rename": True,
    "remove": True,
    "H5Fcreate": True,
    "H5Fdelete": True,
    "MPI_File_delete": True,
    "access": False,
    "stat": False,
    "lstat": False,
    "stat64": False,
    "opendir": False,
    "H5Fis_hdf5": False,
    "H5Fis_accessible": False,
    "open": (1, "iotk_open_writes({})"),
    "open64": (1, "iotk_open_writes({})"),
    "fopen": (1, "iotk_fopen_writes({})"),
    "fopen64": (1, "iotk_fopen_writes({})"),
    "freopen": (1, "iotk_fopen_writes({})"),
    "freopen64": (1, "iotk_fopen_writes({})"),
    "H5Fopen": (1, "(({}) & H5F_ACC_RDWR) != 0"),
    "MPI_File_open": (2, "(({}) & MPI_MODE_RDONLY) == 0"),
}

# Calls that start a phase (open a file): recorded by the kernel, so that the
# validation knows which phases a reduced loop opened.
OPENS = frozenset(
    {
        "H5Fcreate",
        "H5Fopen",
        "MPI_File_open",
        "open",
        "open64",
        "creat",
        "creat64",
        "fopen",
        "fopen64",
        "freopen",
        "freopen64",
    }
)

_CONSOLE_FD = re.compile(r"^\(?\s*(1|2|STDOUT_FILENO|STDERR_FILENO|fileno\s*\(\s*(stdout|stderr)\s*\))\s*\)?$")
_CONSOLE_STREAM = re.compile(r"^\(?\s*(stdout|stderr)\s*\)?$")
# the stream argument of stdio calls that take one (console streams are logging)
_STREAM_ARG = {
    "fwrite": 3,
    "fread": 3,
    "fflush": 0,
    "fclose": 0,
    "fseek": 0,
    "fseeko": 0,
    "fseeko64": 0,
    "rewind": 0,
    "fsetpos": 0,
    "fsetpos64": 0,
    "freopen": 2,
    "freopen64": 2,
}
_FD_ARG = {"write": 0, "writev": 0, "pwrite": 0, "pwrite64": 0, "close": 0, "fsync": 0}


def io_kind(name: str, arg_texts: list[str]) -> str | None:
    """'hdf5', 'mpiio', 'mpi', 'posix' or 'stdio' when a call to name (with these
    argument texts, as written) is file I/O; None for logging and other calls."""
    if name.startswith("H5") and name != "H5open":  # H5open: only the H5T_NATIVE_* macros call it
        return "hdf5"
    if name.startswith("MPI_File_"):
        return "mpiio"
    if name in MPI_LIFECYCLE:
        return "mpi"
    if name in POSIX_IO:
        pos = _FD_ARG.get(name)
        if pos is not None and pos < len(arg_texts) and _CONSOLE_FD.match(arg_texts[pos]):
            return None
        return "posix"
    if name in STDIO_IO:
        pos = _STREAM_ARG.get(name)
        if pos is not None and pos < len(arg_texts) and _CONSOLE_STREAM.match(arg_texts[pos]):
            return None
        return "stdio"
    return None


def is_logging(name: str) -> bool:
    return name in LOGGING


# The data buffer of calls that move data (argument position): its size and place matter to the I/O, its
# values do not, so by default the kernel keeps what allocates it and drops what computes its contents.
DATA_ARG = {
    "H5Dwrite": 5,
    "H5Dread": 5,
    "H5Awrite": 2,
    "H5Aread": 2,
    "write": 1,
    "read": 1,
    "pwrite": 1,
    "pread": 1,
    "pwrite64": 1,
    "pread64": 1,
    "fwrite": 0,
    "fread": 0,
}
for _op in ("write", "read"):
    for _v in ("", "_all", "_shared", "_ordered", "_all_begin", "_ordered_begin"):
        DATA_ARG[f"MPI_File_{_op}{_v}"] = 1
    for _v in ("", "_all", "_shared"):
        DATA_ARG[f"MPI_File_i{_op}{_v}"] = 1
    for _v in ("_at", "_at_all", "_at_all_begin"):
        DATA_ARG[f"MPI_File_{_op}{_v}"] = 2
    for _v in ("_at", "_at_all"):
        DATA_ARG[f"MPI_File_i{_op}{_v}"] = 2

# HDF5 filters whose output size depends on the values written: with one of these the values matter to
# the bytes, so the kernel keeps the compute that makes them.
VALUE_FILTERS = frozenset({"H5Pset_deflate", "H5Pset_szip", "H5Pset_scaleoffset", "H5Pset_filter"})

# Calls that only release a handle or memory: a loop of nothing else is cleanup, never cut by loop reduction.
_CLOSER = re.compile(r"^(H5[A-Z]*close(_async)?|MPI_\w+_free|MPI_File_close|close|fclose|free)$")


def is_closer(name: str | None) -> bool:
    return bool(name) and bool(_CLOSER.match(name))
