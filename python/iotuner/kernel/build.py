"""Write the kernel's sources and a Makefile that builds them with the
application's own compiler and flags, and run it."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from . import emit, flags

EXECUTABLE = "kernel"
_PROBLEM = re.compile(r"error|cannot find|undefined reference|No such file", re.I)
_LINK_TOO = ("-fopenmp", "-pthread", "-flto", "-fsanitize", "-m")


@dataclass
class Built:
    ok: bool
    command: list[str]
    log: str
    error: str | None


def _make_quote(args: list[str]) -> str:
    return shlex.join(args).replace("$", "$$")


def write(
    outdir: Path,
    toolchain: flags.Toolchain,
    result: emit.Result,
    formatted: dict[str, bytes],
    loop_fraction: float,
    path_prefix: str | None,
) -> None:
    src, fmtd = outdir / "src", outdir / "formatted"
    for d in (src, fmtd):
        if d.exists():
            shutil.rmtree(d)
        d.mkdir(parents=True)
    here = Path(__file__).parent
    shutil.copy(here / "iotk.h", src / "iotk.h")
    shutil.copy(here / "iotk.c", src / "iotk.c")
    for f in result.files:
        (src / f.name).write_bytes(f.text)
        (fmtd / f.name).write_bytes(formatted[f.name])
    (outdir / "Makefile").write_text(makefile(toolchain, result, loop_fraction, path_prefix))


def makefile(toolchain: flags.Toolchain, result: emit.Result, loop_fraction: float, path_prefix: str | None) -> str:
    objs, rules = [], []
    for f, unit in zip(result.files, toolchain.units):
        obj = f"obj/{Path(f.name).stem}.o"
        objs.append(obj)
        cmd = [unit.compiler, *unit.flags, "-iquote", str(unit.source.parent), "-c", f"src/{f.name}", "-o", obj]
        rules.append(f"{obj}: src/{f.name} src/iotk.h | obj\n\t{_make_quote(cmd)}\n")
    first = toolchain.units[0]
    support = [
        first.compiler,
        "-O2",
        "-std=gnu99",
        f"-DIOTK_FRACTION={loop_fraction!r}",
        f"-DIOTK_NLOOPS={len(result.loops)}",
    ]
    if path_prefix:
        support.append(f'-DIOTK_PATH_PREFIX="{path_prefix}"')
    rules.append(
        "obj/iotk.o: src/iotk.c src/iotk.h | obj\n\t"
        f"{_make_quote(support + ['-c', 'src/iotk.c', '-o', 'obj/iotk.o'])}\n"
    )
    objs.append("obj/iotk.o")
    link_extra = [f for f in first.flags if f.startswith(_LINK_TOO)]
    link = [toolchain.linker, *link_extra, "-o", EXECUTABLE, *objs, *toolchain.link_flags]
    return (
        f"# The I/O kernel made by `iotuner kernel`, built with the application's own compiler and flags\n"
        f"# ({toolchain.origin}). Loop fraction {loop_fraction}, path prefix {path_prefix or 'none'}.\n"
        f"{EXECUTABLE}: {' '.join(objs)}\n\t{_make_quote(link)}\n\n"
        + "\n".join(rules)
        + "\nobj:\n\tmkdir -p obj\n\nclean:\n\trm -rf obj "
        + EXECUTABLE
        + "\n\n.PHONY: clean\n"
    )


def run(outdir: Path, timeout: float = 600) -> Built:
    cmd = ["make", "-C", str(outdir), "--no-print-directory"]
    for stale in (outdir / "obj", outdir / EXECUTABLE):
        if stale.is_dir():
            shutil.rmtree(stale)
        elif stale.exists():
            stale.unlink()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, errors="replace")
    except FileNotFoundError:
        return Built(False, cmd, "", "make is not installed")
    except subprocess.TimeoutExpired:
        return Built(False, cmd, "", f"the build took longer than {timeout:.0f} s")
    log = r.stdout + r.stderr
    (outdir / "build.log").write_text(log)
    if r.returncode == 0 and (outdir / EXECUTABLE).exists():
        return Built(True, cmd, log, None)
    errors = [
        ln.strip() for ln in log.splitlines() if _PROBLEM.search(ln) and not ln.startswith(("make:", "collect2:"))
    ]
    return Built(False, cmd, log, "; ".join(errors[:3]) or f"make exited with status {r.returncode}")
