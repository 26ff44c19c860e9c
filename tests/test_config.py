"""iotuner config: where this installation is (tests/test_packaging.py checks it on a fresh pip install and on a
CMake install; here, the developer's install)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from iotuner import native

ROOT = Path(__file__).resolve().parent.parent


def config(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "iotuner", "config", *args], capture_output=True, text=True)


def one(*args: str) -> str:
    r = config(*args)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def test_each_item_is_where_the_installation_is():
    prefix = native.native_dir()
    assert one("--prefix") == one("--cmake-prefix") == str(prefix)
    assert (Path(one("--pkgconfig-path")) / "iotuner.pc").is_file()
    assert (Path(one("--cmake-prefix")) / "lib" / "cmake" / "iotuner" / "iotunerConfig.cmake").is_file()
    assert (Path(one("--cflags").removeprefix("-I")) / "iotuner" / "core.h").is_file()
    assert Path(one("--runtime")) == native.runtime_library() and Path(one("--runtime")).is_file()
    assert one("--kernels") == str(native.programs_dir())
    for abi in native.runtime_abis():
        assert native.library_abi(Path(one("--runtime", abi))) == abi


def test_without_an_option_every_item_one_a_line():
    lines = one().splitlines()
    items = dict(re.fullmatch(r"(\S+(?: \S+)?) {2,}(\S.*)", line).groups() for line in lines)
    for item in ("prefix", "pkgconfig-path", "cmake-prefix", "cflags", "libs", "runtime", "kernels"):
        assert items[item] == one(f"--{item}"), item
    assert items["python"] == sys.executable


def test_several_options_give_their_values_one_a_line_in_helps_order():
    assert one("--libs", "--cflags").splitlines() == [one("--cflags"), one("--libs")]


def test_an_mpi_without_a_runtime_is_one_line():
    r = config("--runtime", "nompi")
    assert r.returncode == 2 and r.stdout == ""
    assert (
        r.stderr == f"iotuner config: no runtime built for MPI 'nompi' here (built: "
        f"{', '.join(native.runtime_abis())})\n"
    )


def test_libs_are_pkg_configs_with_the_rpath(tmp_path):
    """--libs says what pkg-config says, rpath included, and a program built with --cflags --libs runs without
    LD_LIBRARY_PATH."""
    if not shutil.which("pkg-config") or not shutil.which("cc"):
        pytest.skip("pkg-config or cc is not installed")
    env = dict(os.environ, PKG_CONFIG_PATH=one("--pkgconfig-path"))
    libs = subprocess.run(
        ["pkg-config", "--libs", "iotuner"], capture_output=True, text=True, env=env, check=True
    ).stdout.split()
    normal = [re.sub(r"^(-Wl,-rpath,|-L)(.*)", lambda m: m.group(1) + os.path.normpath(m.group(2)), f) for f in libs]
    assert normal == one("--libs").split()
    assert f"-Wl,-rpath,{native.lib_dir()}" in normal
    exe = tmp_path / "core_client"
    subprocess.run(
        ["cc", str(ROOT / "tests" / "programs" / "core_client.c"), *one("--cflags", "--libs").split(), "-o", str(exe)],
        check=True,
    )
    doc = tmp_path / "s.json"
    doc.write_text('{"version": 1, "mpiio": {"cb_nodes": 2}}')
    r = subprocess.run(
        [str(exe), str(doc), "x"],
        capture_output=True,
        text=True,
        env={k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"},
    )
    assert r.returncode == 0 and r.stdout.splitlines()[0] == "mpiio.cb_nodes=2", r.stderr
