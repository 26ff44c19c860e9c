"""Where the compiled parts live, and the C core loaded through ctypes.

The settings parser, the knob catalogue and the explanations of dropped
settings exist once, in C (native/src/core); Python calls them here instead of
keeping a second copy.
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
from pathlib import Path

import iotuner


class NativeMissing(RuntimeError):
    """The compiled part of iotuner (libiotuner.so, the kernels) is not installed."""


LIBDIRS = ("lib", "lib64")  # a plain CMake install uses GNUInstallDirs' libdir: lib64 on some systems


def native_dir() -> Path:
    """The prefix of the compiled part: lib/ (libiotuner*.so) and libexec/iotuner/ (kernels, helper programs):
    the installed package's _native, or IOTUNER_NATIVE_DIR (e.g. the prefix of a plain CMake install)."""
    env = os.environ.get("IOTUNER_NATIVE_DIR")
    candidates = [Path(env)] if env else [Path(p) / "_native" for p in iotuner.__path__]
    for d in candidates:
        if any((d / lib / "libiotuner.so").exists() for lib in LIBDIRS):
            return d
    raise NativeMissing(
        "the compiled part of iotuner is missing (looked in "
        + ", ".join(str(c) for c in candidates)
        + "); install with 'pip install .' or 'make build'"
    )


def lib_dir() -> Path:
    d = native_dir()
    return next(d / lib for lib in LIBDIRS if (d / lib / "libiotuner.so").exists())


def runtime_library(abi: str | None = None) -> Path:
    """The LD_PRELOAD library; for an MPI ABI ("mpich", "openmpi"), the one built for it: libiotuner.so when
    its libiotuner.abi names that ABI, else <abi>/libiotuner.so beside it. Without a build for that ABI, the
    main one (which stays out of the way of another ABI's job: docs/runtime.md, Fail-open)."""
    main = lib_dir() / "libiotuner.so"
    if abi is None or library_abi(main) in (abi, None):
        return main
    other = lib_dir() / abi / "libiotuner.so"
    return other if other.exists() else main


def library_abi(lib: Path) -> str | None:
    """The MPI ABI a runtime library was built for (its libiotuner.abi, written by the build)."""
    try:
        return (lib.parent / "libiotuner.abi").read_text().strip() or None
    except OSError:
        return None


def runtime_abis() -> list[str]:
    """The MPI ABIs this installation has a runtime library for."""
    main = library_abi(lib_dir() / "libiotuner.so")
    others = sorted(d.name for d in lib_dir().iterdir() if (d / "libiotuner.so").exists() and d.name != main)
    return ([main] if main else []) + others


def ops_library() -> Path:
    """Counting mode's library (IOTUNER_COUNT_OPS=1): preloaded after libiotuner.so, it sees the MPI calls
    ROMIO makes inside collective I/O (docs/runtime.md, Counting mode)."""
    path = lib_dir() / "libiotuner_ops.so"
    if not path.exists():
        raise NativeMissing(f"counting mode's library not found at {path}; rebuild with 'make build'")
    return path


def programs_dir(abi: str | None = None) -> Path:
    """The kernels by their short names, and the helper programs (libexec/iotuner): on the PATH of every job
    iotuner runs; the user's PATH has the kernels as iotuner-<kernel>. For an MPI ABI ("openmpi") other than the
    main build's, its own kernels (libexec/iotuner/<abi>) where the build made them."""
    main = native_dir() / "libexec" / "iotuner"
    if abi and abi != library_abi(lib_dir() / "libiotuner.so") and (main / abi).is_dir():
        return main / abi
    return main


def executable(name: str, abi: str | None = None) -> Path:
    """A bundled kernel or helper program, by its short name (of an MPI ABI's set: programs_dir)."""
    path = programs_dir(abi) / name
    if not path.exists():
        raise NativeMissing(f"bundled program '{name}' not found in {path.parent}")
    return path


# The bundled I/O kernels (kernels/README.md); libexec/iotuner also holds helper programs (bench_*, the
# micro-benchmarks), which are not kernels.
KERNELS = {
    "vpicio": "VPIC particle dump through H5Part: 8 1-D variables, one H5Dwrite each per rank (weak scaling)",
    "vorpalio": "VORPAL field dump through H5Block: a 3-D block per rank, noncontiguous in the file (weak)",
    "gcrmio": "GCRM history output on the geodesic grid: [levels, cells] and [levels, edges] fields (strong)",
    "flashio": "FLASH checkpoint: rank-0 header, block metadata, one 4-D dataset per unknown, a file each (weak)",
    "h5ior": "IOR's HDF5 backend with its letters (-b -t -s -F -c): 1-D data in fixed-size transfers (weak)",
    "bandio": "A 2-D field split by columns, written in slabs of rows from a local array with ghosts (weak)",
    "e3smio": "E3SM's history output through PnetCDF: many fields of a grid dealt in blocks, nonblocking puts, "
    "one wait per step (strong)",
    "e3smio_nc4": "e3smio's fields through parallel netCDF-4 (nc_create_par; HDF5 underneath) (strong)",
}


def bundled_programs(abi: str | None = None) -> list[str]:
    d = programs_dir(abi)
    return sorted(p.name for p in d.iterdir() if p.is_file() and os.access(p, os.X_OK)) if d.exists() else []


def bundled_kernels(abi: str | None = None) -> list[str]:
    """The kernels this installation has (for an MPI ABI: that set), in KERNELS' order."""
    have = set(bundled_programs(abi))
    return [k for k in KERNELS if k in have]


def kernel_sets() -> dict[str, list[str]]:
    """The kernels of each MPI ABI this installation has kernels for, the main build's first."""
    main = library_abi(lib_dir() / "libiotuner.so")
    sets = {main or "": bundled_kernels()}
    root = programs_dir()
    for d in sorted(p for p in root.iterdir() if p.is_dir()) if root.exists() else []:
        if d.name != main and bundled_kernels(d.name):
            sets[d.name] = bundled_kernels(d.name)
    return sets


class Core:
    """The C core (libiotuner_core.so)."""

    def __init__(self, path: Path):
        lib = ctypes.CDLL(str(path))
        lib.iot_version.restype = ctypes.c_char_p
        lib.iot_catalogue_json.restype = ctypes.c_void_p
        lib.iot_settings_check.restype = ctypes.c_void_p
        lib.iot_settings_check.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.iot_settings_check_warnings.restype = ctypes.c_void_p
        lib.iot_settings_check_warnings.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.iot_free.argtypes = [ctypes.c_void_p]
        lib.iot_parse_size.argtypes = [
            ctypes.c_char_p,
            ctypes.POINTER(ctypes.c_int64),
            ctypes.c_char_p,
            ctypes.c_size_t,
        ]
        lib.iot_explain_hint.restype = ctypes.c_int
        lib.iot_explain_hint.argtypes = [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_int,
            ctypes.c_int,
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_size_t,
        ]
        lib.iot_status_name.restype = ctypes.c_char_p
        lib.iot_status_name.argtypes = [ctypes.c_int]
        lib.iot_rules_explain.restype = ctypes.c_void_p
        lib.iot_rules_explain.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.iot_rules_builtin_json.restype = ctypes.c_char_p
        lib.iot_identity.restype = ctypes.c_uint64
        lib.iot_identity.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.iot_locality_of_accesses.restype = ctypes.c_int
        lib.iot_locality_of_accesses.argtypes = [
            ctypes.POINTER(ctypes.c_int64),
            ctypes.POINTER(ctypes.c_int64),
            ctypes.c_size_t,
            ctypes.POINTER(ctypes.c_int64),
        ]
        lib.iot_locality_name.restype = ctypes.c_char_p
        lib.iot_locality_name.argtypes = [ctypes.c_int]
        self._lib = lib

    def _take(self, ptr: int | None) -> str:
        try:
            return ctypes.string_at(ptr).decode()
        finally:
            self._lib.iot_free(ptr)

    def version(self) -> str:
        return self._lib.iot_version().decode()

    def catalogue(self) -> dict:
        return json.loads(self._take(self._lib.iot_catalogue_json()))

    def check_settings(self, text: str) -> dict:
        """Normalized settings document; raises ValueError with the core's message."""
        err = ctypes.create_string_buffer(16384)  # every error of the document, one per line
        ptr = self._lib.iot_settings_check(text.encode(), err, len(err))
        if not ptr:
            raise ValueError(err.value.decode())
        return json.loads(self._take(ptr))

    def settings_warnings(self, text: str) -> list[str]:
        """The core's warnings about a valid document: legal values that would cost dearly (a 1-byte chunk),
        one line each; ValueError with the core's message when the document is not valid."""
        err = ctypes.create_string_buffer(16384)
        ptr = self._lib.iot_settings_check_warnings(text.encode(), err, len(err))
        if not ptr:
            raise ValueError(err.value.decode())
        return [line for line in self._take(ptr).splitlines() if line]

    def parse_size(self, text: str) -> int:
        out = ctypes.c_int64()
        err = ctypes.create_string_buffer(256)
        if self._lib.iot_parse_size(text.encode(), ctypes.byref(out), err, len(err)) != 0:
            raise ValueError(err.value.decode())
        return out.value

    def explain_hint(
        self,
        name: str,
        requested: str,
        effective: str | None,
        fs_driver: str,
        nnodes: int = 1,
        nprocs: int = 1,
        cb_config_list: str | None = None,
    ) -> tuple[str, str]:
        """(status, reason) for a requested MPI-IO hint, as the runtime reports it."""
        why = ctypes.create_string_buffer(512)
        enc = lambda s: s.encode() if s is not None else None  # noqa: E731
        st = self._lib.iot_explain_hint(
            enc(name),
            enc(requested),
            enc(effective),
            enc(fs_driver),
            nnodes,
            nprocs,
            enc(cb_config_list),
            why,
            len(why),
        )
        return self._lib.iot_status_name(st).decode(), why.value.decode()

    def rules_explain(self, insights: dict, rules_table: str | None = None) -> dict:
        """SmartIO's rules on these insights: {"fired": [...], "settings": {...}, "document": {...}}."""
        err = ctypes.create_string_buffer(1024)
        ptr = self._lib.iot_rules_explain(
            json.dumps(insights).encode(), rules_table.encode() if rules_table else None, err, len(err)
        )
        if not ptr:
            raise ValueError(err.value.decode())
        return json.loads(self._take(ptr))

    def rules_table(self) -> dict:
        return json.loads(self._lib.iot_rules_builtin_json().decode())

    def identity(self, path: str) -> str:
        """A file's phase identity: its numbers normalized ("/run/chk_0001.h5" -> "/run/chk_#.h5")."""
        out = ctypes.create_string_buffer(4096)
        self._lib.iot_identity(path.encode(errors="surrogateescape"), out, len(out))
        return out.value.decode(errors="replace")

    def locality(self, offsets, sizes) -> tuple[str, int]:
        """(spatial locality, highest end) of accesses in the order they were made, as smart mode classifies them."""
        n = min(len(offsets), len(sizes))
        arr = ctypes.c_int64 * n
        extent = ctypes.c_int64()
        cls = self._lib.iot_locality_of_accesses(
            arr(*map(int, offsets[:n])), arr(*map(int, sizes[:n])), n, ctypes.byref(extent)
        )
        return self._lib.iot_locality_name(cls).decode(), extent.value


@functools.lru_cache(maxsize=1)
def core() -> Core:
    return Core(lib_dir() / "libiotuner_core.so")
