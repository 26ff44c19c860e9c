"""The application's compile and link flags: from compile_commands.json, or derived.

The kernel is built with the flags the application was built with, so a
difference in the I/O cannot come from a different build. Without a
compilation database the flags are derived the way the project's own test
programs are built: the MPI compiler wrapper plus `pkg-config hdf5-mpich`.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path


class FlagsError(RuntimeError):
    pass


@dataclass
class Unit:
    """One source file and the command that compiles it."""

    source: Path  # absolute, as the application has it
    compiler: str
    flags: list[str]  # compile flags: no -c, -o, dependency flags or the source itself
    directory: Path  # where the compiler ran (relative paths in flags are resolved already)


@dataclass
class Toolchain:
    units: list[Unit]
    linker: str
    link_flags: list[str]
    origin: str  # "compile_commands.json" or "derived"
    notes: list[str] = field(default_factory=list)

    def unit(self, source: Path) -> Unit:
        for u in self.units:
            if u.source == source:
                return u
        raise KeyError(source)


_PATH_OPTS = ("-I", "-iquote", "-isystem", "-idirafter", "-include", "-imacros", "-L")
_DROP_WITH_VALUE = {"-o", "-MF", "-MT", "-MQ"}
_DROP = {"-c", "-MD", "-MMD", "-M", "-MM", "-MP", "-E", "-S"}
WRAPPER = re.compile(r"^(mpi\w*(cc|icc|icx|gcc|clang)|mpicc(\.\w+)?|h5pcc|h5cc|cc)$")


def _absolute(flags: list[str], directory: Path) -> list[str]:
    """flags with the path of every path option made absolute (they are used from OUTDIR)."""
    out: list[str] = []
    i = 0
    while i < len(flags):
        f = flags[i]
        if f in _PATH_OPTS and i + 1 < len(flags):
            out += [f, str((directory / flags[i + 1]).resolve())]
            i += 2
            continue
        if f[:2] in ("-I", "-L") and len(f) > 2:
            out.append(f[:2] + str((directory / f[2:]).resolve()))
        else:
            out.append(f)
        i += 1
    return out


def _strip(args: list[str], source: Path, directory: Path) -> list[str]:
    out: list[str] = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in _DROP_WITH_VALUE:
            skip = True
            continue
        if a in _DROP or (a.startswith("-o") and len(a) > 2) or a.startswith(("-MF", "-MT", "-MQ")):
            continue
        if not a.startswith("-") and (directory / a).resolve() == source:
            continue
        out.append(a)
    return out


def from_database(directory: Path, sources: list[Path]) -> Toolchain:
    """Flags of each source from DIR/compile_commands.json (CMake, Bear, Meson write one)."""
    path = directory / "compile_commands.json" if directory.is_dir() else directory
    try:
        entries = json.loads(path.read_text())
    except OSError as e:
        raise FlagsError(f"cannot read {path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise FlagsError(f"{path} is not valid JSON: {e}") from None
    if not isinstance(entries, list):
        raise FlagsError(f"{path} is not a compilation database (expected a list of entries)")
    by_file: dict[Path, dict] = {}
    for e in entries:
        if not isinstance(e, dict) or "file" not in e or "directory" not in e:
            raise FlagsError(f"{path}: an entry lacks 'file' or 'directory'")
        by_file.setdefault((Path(e["directory"]) / e["file"]).resolve(), e)
    units = []
    for src in sources:
        e = by_file.get(src)
        if e is None:
            raise FlagsError(f"{src} is not in {path}")
        argv = e["arguments"] if "arguments" in e else shlex.split(e.get("command", ""))
        if not argv:
            raise FlagsError(f"{path}: the entry of {src} has no command")
        d = Path(e["directory"])
        units.append(Unit(src, argv[0], _absolute(_strip(argv[1:], src, d), d), d))
    linker = units[0].compiler
    link = link_flags_for(linker)
    return Toolchain(
        units,
        linker,
        link,
        "compile_commands.json",
        [f"link flags derived ({' '.join(link)}): a compilation database has no link commands"],
    )


def default_compiler() -> str:
    for cand in (os.environ.get("MPICC"), "mpicc.mpich", "mpicc"):
        if cand and shutil.which(cand):
            return cand
    raise FlagsError("no MPI C compiler found (tried $MPICC, mpicc.mpich, mpicc); give --cc")


@functools.cache
def pkg_config(package: str, what: str) -> list[str]:
    if not shutil.which("pkg-config"):
        return []
    r = subprocess.run(["pkg-config", what, package], capture_output=True, text=True)
    return r.stdout.split() if r.returncode == 0 else []


@functools.cache
def wrapper_show(compiler: str) -> list[str]:
    """What an MPI compiler wrapper adds (MPICH's -show, Open MPI's --showme); [] for a plain compiler."""
    for opt in ("-show", "--showme"):
        try:
            r = subprocess.run([compiler, opt], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            return []
        if r.returncode == 0 and r.stdout.strip():
            return shlex.split(r.stdout)[1:]
    return []


def is_wrapper(compiler: str) -> bool:
    return bool(WRAPPER.match(Path(compiler).name)) and bool(wrapper_show(compiler))


def _any_wrapper() -> str | None:
    try:
        return default_compiler()
    except FlagsError:
        return None


def link_flags_for(compiler: str) -> list[str]:
    """Libraries the kernel links: the shared parallel HDF5, libm, and MPI when the compiler is no wrapper."""
    flags = [f for f in pkg_config("hdf5-mpich", "--libs") if f.startswith(("-L", "-l", "-Wl"))] or ["-lhdf5"]
    wrapper = None if is_wrapper(compiler) else _any_wrapper()
    if wrapper:
        flags += [f for f in wrapper_show(wrapper) if f.startswith(("-L", "-l", "-Wl"))]
    return flags + ["-lm"]


def derived(sources: list[Path], cc: str | None, cflags: str | None, ldflags: str | None) -> Toolchain:
    compiler = cc or default_compiler()
    flags = shlex.split(cflags) if cflags is not None else ["-O2"]
    flags += pkg_config("hdf5-mpich", "--cflags")
    units = [Unit(s, compiler, _absolute(list(flags), Path.cwd()), s.parent) for s in sources]
    link = shlex.split(ldflags) if ldflags is not None else link_flags_for(compiler)
    return Toolchain(units, compiler, link, "derived")


@functools.lru_cache(maxsize=1)
def builtin_includes() -> list[str]:
    """The compiler's own headers (stddef.h, stdarg.h): the libclang wheel ships none."""
    for cc in ("gcc", "cc", "clang"):
        if shutil.which(cc):
            r = subprocess.run([cc, "-print-file-name=include"], capture_output=True, text=True)
            d = r.stdout.strip()
            if r.returncode == 0 and d and Path(d).is_dir():
                return ["-isystem", d]
    return []


_PARSE_PREFIXES = ("-I", "-D", "-U", "-std=", "-iquote", "-isystem", "-idirafter", "-include", "-imacros")


def parse_flags(unit: Unit) -> list[str]:
    """Arguments for libclang: the preprocessor and language flags of the unit, the
    wrapper's include directories, and the compiler's builtin headers."""
    out: list[str] = ["-x", "c"]
    flags = list(unit.flags)
    wrapper = unit.compiler if is_wrapper(unit.compiler) else _any_wrapper()
    if wrapper:
        flags += [f for f in wrapper_show(wrapper) if f.startswith(("-I", "-D", "-isystem"))]
    flags += [f for f in pkg_config("hdf5-mpich", "--cflags") if f.startswith("-I")]
    i = 0
    while i < len(flags):
        f = flags[i]
        if f in ("-I", "-D", "-U", "-iquote", "-isystem", "-idirafter", "-include", "-imacros") and i + 1 < len(flags):
            out += [f, flags[i + 1]]
            i += 2
            continue
        if f.startswith(_PARSE_PREFIXES):
            out.append(f)
        i += 1
    return out + builtin_includes()
