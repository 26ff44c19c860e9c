"""The runtime's files call one another one way, and its modules meet only through events (docs/runtime.md).

Each file of native/src/runtime is compiled on its own; a file calls another when its object uses a symbol
(function or variable) the other's object defines. Only the library's own names count (iot_*, iotuner_*):
the names it interposes (write, MPI_File_open, H5Dwrite, ...) are the application's entry points, and the
library calling write() is calling the C library."""

from __future__ import annotations

import graphlib
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import MPICC, _pkg_config

RUNTIME = Path(__file__).parent.parent / "native" / "src" / "runtime"
INCLUDE = RUNTIME.parent.parent / "include"
OWN = re.compile(r"iot_|iotuner_")


@pytest.fixture(scope="module")
def symbols(tmp_path_factory) -> dict[str, tuple[set[str], set[str]]]:
    """Per file (its stem): (the library's names it defines, those it uses without defining)."""
    out = tmp_path_factory.mktemp("runtime_objects")
    flags = [
        "-c",
        "-O0",
        "-D_GNU_SOURCE",
        "-DH5_USE_110_API",
        "-fvisibility=hidden",
        f"-I{INCLUDE}",
        *_pkg_config("--cflags"),
    ]

    def compile_one(src: Path) -> tuple[str, tuple[set[str], set[str]]]:
        obj = out / f"{src.stem}.o"
        subprocess.run([MPICC, *flags, str(src), "-o", str(obj)], check=True)
        nm = subprocess.run(["nm", str(obj)], check=True, capture_output=True, text=True).stdout.split("\n")
        defined = {f[2] for f in map(str.split, nm) if len(f) == 3 and f[1] in "TDBRC" and OWN.match(f[2])}
        used = {f[1] for f in map(str.split, nm) if len(f) == 2 and f[0] == "U" and OWN.match(f[1])}
        return src.stem, (defined, used)

    with ThreadPoolExecutor(2) as pool:
        return dict(pool.map(compile_one, sorted(RUNTIME.glob("*.c"))))


def calls(symbols) -> dict[str, dict[str, set[str]]]:
    """file -> {file it calls: the names it uses of it}"""
    return {
        a: {b: used & symbols[b][0] for b in symbols if b != a and used & symbols[b][0]}
        for a, (_, used) in symbols.items()
    }


def modules() -> set[str]:
    return {p.stem for p in RUNTIME.glob("*.c") if "IOT_MODULE(" in p.read_text()}


def test_the_files_of_the_runtime_call_one_another_one_way(symbols):
    graph = calls(symbols)
    assert {"lifecycle", "report", "phases", "mpi", "state"} <= set(graph)
    assert graph["state"] == {}  # the leaf everyone shares
    try:
        order = list(graphlib.TopologicalSorter({a: set(b) for a, b in graph.items()}).static_order())
    except graphlib.CycleError as e:
        cycle = e.args[1]
        pytest.fail(
            "a circle of files calling each other: "
            + " -> ".join(f"{a} ({', '.join(sorted(graph[a][b]))})" for a, b in zip(cycle, cycle[1:]))
            + f" -> {cycle[-1]}"
        )
    assert order.index("state") < order.index("phases") < order.index("report") < order.index("lifecycle")


def test_modules_never_call_one_another(symbols):
    mods = modules()
    assert {"posix", "mpiio", "hdf5", "lustre", "smart", "access"} <= mods
    graph = calls(symbols)
    crossing = {(a, b): sorted(names) for a in mods for b, names in graph[a].items() if b in mods}
    assert crossing == {}
    for layer in ("hdf5", "mpiio"):  # smart mode is heard through events only
        assert not any(name.startswith("iot_smart") for name in symbols[layer][1])


def test_the_layers_share_one_handle_table(symbols, tmp_path):
    """The layers find their records by the library's handle (MPI_File, hid_t, ncid) in the one table of
    native/src/core/handles.c, which knows no module nor record: it uses none of the library's names."""
    for layer in ("phases", "mpiio", "hdf5", "pnetcdf"):
        assert {"iot_handles_put", "iot_handles_find"} & symbols[layer][1], f"{layer} keeps its own handle table"
    for name, (defined, _) in symbols.items():
        assert not {d for d in defined if d.startswith("iot_handles")}, f"{name} defines a handle table's call"
    obj = tmp_path / "handles.o"
    subprocess.run(
        [MPICC, "-c", "-D_GNU_SOURCE", f"-I{INCLUDE}", str(RUNTIME.parent / "core" / "handles.c"), "-o", str(obj)],
        check=True,
    )
    nm = subprocess.run(["nm", str(obj)], check=True, capture_output=True, text=True).stdout.split("\n")
    used = {f[1] for f in map(str.split, nm) if len(f) == 2 and f[0] == "U" and OWN.match(f[1])}
    assert used == set()
