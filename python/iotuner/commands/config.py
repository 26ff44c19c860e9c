"""iotuner config: where the installation is, for builds and batch scripts (as h5cc -showconfig, python3-config)."""

from __future__ import annotations

import argparse
import sys

ORDER = 95
HELP = "print where this installation is: its prefix, pkg-config and CMake paths, link flags, the runtime"
DESCRIPTION = """\
Where this installation of iotuner is, for other programs' builds and for batch scripts. A pip install keeps
its libraries, headers, pkg-config file and CMake package inside the Python package (a prefix of its own,
PREFIX/lib, PREFIX/include, ...); a CMake install, in its install prefix. Both the pkg-config file and the CMake
package give a program linked against the core's C API (libiotuner_core.so) an rpath, so it runs without
LD_LIBRARY_PATH. Without an option: everything, one item a line; with several, their values, one a line."""
EPILOG = """\
examples:
  PKG_CONFIG_PATH=$(iotuner config --pkgconfig-path) pkg-config --libs iotuner
  cmake -DCMAKE_PREFIX_PATH=$(iotuner config --cmake-prefix) -S . -B build
  cc tool.c $(iotuner config --cflags) $(iotuner config --libs)
  LD_PRELOAD=$(iotuner config --runtime) srun ./app
  LD_PRELOAD=$(iotuner config --runtime openmpi) mpirun ./app"""

ITEMS = {  # option -> help
    "prefix": "the installation's prefix (lib/, include/, libexec/iotuner/, share/iotuner/)",
    "pkgconfig-path": "the directory of iotuner.pc, for PKG_CONFIG_PATH",
    "cmake-prefix": "the prefix for CMAKE_PREFIX_PATH (find_package(iotuner))",
    "cflags": "the compiler flags of the core's C API (<iotuner/core.h>)",
    "libs": "the link flags of the core's C API, with its rpath (as pkg-config --libs iotuner)",
    "runtime": "the LD_PRELOAD library; with MPI (mpich, openmpi), the one built for that MPI",
    "kernels": "the directory of the bundled kernels' short names (as iotuner kernels --path)",
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    for item, text in ITEMS.items():
        if item == "runtime":
            p.add_argument("--runtime", nargs="?", const="", metavar="MPI", help=text)
        else:
            p.add_argument(f"--{item}", action="store_true", help=text)


def values() -> dict[str, str]:
    """Every item, by its option's name; NativeMissing where the compiled part is not installed."""
    from .. import native

    prefix, lib = native.native_dir(), native.lib_dir()
    return {
        "prefix": str(prefix),
        "pkgconfig-path": str(lib / "pkgconfig"),
        "cmake-prefix": str(prefix),
        "cflags": f"-I{prefix / 'include'}",
        "libs": f"-L{lib} -Wl,-rpath,{lib} -liotuner_core",
        "runtime": str(native.runtime_library()),
        "kernels": str(native.programs_dir()),
    }


def main(args: argparse.Namespace) -> int:
    from .. import __version__, native

    have = values()
    chosen = [item for item in ITEMS if getattr(args, item.replace("-", "_")) not in (False, None)]
    if args.runtime:
        have["runtime"] = _runtime(args.runtime)
    if chosen:  # each a line, in the order of --help (`cc $(iotuner config --cflags --libs)` works too)
        print("\n".join(have[item] for item in chosen))
        return 0
    rows = [("version", __version__), *((item, have[item]) for item in ITEMS)]
    for abi in native.runtime_abis()[1:]:
        rows.append((f"runtime {abi}", str(native.runtime_library(abi))))
    rows.append(("python", sys.executable))
    wide = max(len(k) for k, _ in rows)
    for key, value in rows:  # one item a line, never wrapped: a path is copied whole
        print(f"{key:<{wide}}  {value}")
    return 0


def _runtime(abi: str) -> str:
    """The runtime built for an MPI ABI, or InputError naming the ones there are."""
    from .. import inputs, native

    built = native.runtime_abis()
    if abi not in built:
        raise inputs.InputError(f"no runtime built for MPI '{abi}' here (built: {', '.join(built) or 'none'})")
    return str(native.runtime_library(abi))
