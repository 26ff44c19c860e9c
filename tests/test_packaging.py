"""Packaging: a plain CMake install into a prefix, and the Spack recipe checked against pyproject.toml."""

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
RECIPE = ROOT / "packaging" / "spack" / "package.py"


@pytest.mark.slow
def test_plain_cmake_install_uses_standard_directories(tmp_path):
    if not shutil.which("cmake"):
        pytest.skip("cmake is not installed")
    build, prefix = tmp_path / "build", tmp_path / "prefix"
    for cmd in (["cmake", "-S", ROOT, "-B", build, f"-DCMAKE_INSTALL_PREFIX={prefix}", "-DCMAKE_BUILD_TYPE=Release"],
                ["cmake", "--build", build, "-j2"], ["cmake", "--install", build]):
        r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    libdir = next(prefix / d for d in ("lib", "lib64") if (prefix / d).is_dir())
    assert (libdir / "libiotuner.so").is_file() and (libdir / "libiotuner_core.so").is_file()
    assert {"h5ior", "vpicio", "flashio"} <= {p.name for p in (prefix / "bin").iterdir()}
    assert not (prefix / "iotuner").exists()
    # the Python package runs from that prefix
    r = subprocess.run([sys.executable, "-m", "iotuner", "kernels", "--json"], capture_output=True, text=True,
                       env=dict(os.environ, IOTUNER_NATIVE_DIR=str(prefix)))
    assert r.returncode == 0 and str(prefix / "bin" / "h5ior") in r.stdout


def _calls(name: str) -> list[ast.Call]:
    tree = ast.parse(RECIPE.read_text())
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == name]


def _spec(call: ast.Call) -> str:
    return call.args[0].value


def _when(call: ast.Call) -> str | None:
    return next((k.value.value for k in call.keywords if k.arg == "when"), None)


# pip name -> Spack package (None: not packaged in Spack; installed with pip on top)
SPACK_NAME = {"rich": "py-rich", "optuna": "py-optuna", "numpy": "py-numpy", "scipy": "py-scipy",
              "matplotlib": "py-matplotlib", "darshan": "py-darshan", "psycopg2-binary": "py-psycopg2",
              "optuna-dashboard": None, "libclang": "py-libclang", "clang-format": "llvm+clang"}


def spack_name(pip_name: str) -> str | None:
    return SPACK_NAME.get(pip_name, "py-" + pip_name)  # Spack's convention for Python packages


def _pip(req: str) -> tuple[str, str | None]:
    m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(?:>=\s*([0-9.]+))?", req.strip())
    return m.group(1), m.group(2)


def test_spack_recipe_matches_pyproject():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    deps = {_spec(c).split("@")[0]: (_spec(c), _when(c)) for c in _calls("depends_on")}
    variants = {c.args[0].value for c in _calls("variant")}
    # the build and what the runtime is built against
    assert "py-scikit-build-core" in deps and "cmake" in deps and "mpi" in deps
    hdf5 = deps["hdf5+mpi+shared"][0] if "hdf5+mpi+shared" in deps else None
    assert hdf5 and hdf5.startswith("hdf5+mpi+shared"), "HDF5 must be parallel and shared (LD_PRELOAD)"
    # every run dependency, with a lower bound at least pyproject's
    for req in meta["project"]["dependencies"]:
        name, low = _pip(req)
        spec, when = deps[spack_name(name)]
        assert when is None and (low is None or spec.endswith(f"@{low}:")), (req, spec)
    # one variant per optional group (but the tests'), each pulling that group's packages
    extras = {k: v for k, v in meta["project"]["optional-dependencies"].items() if k != "test"}
    assert variants == set(extras)
    for group, reqs in extras.items():
        for req in reqs:
            name, _ = _pip(req)
            if spack_name(name) is None:
                continue
            key = spack_name(name).split("@")[0]
            assert key in deps and deps[key][1] == f"+{group}", (group, req)


def test_spack_recipe_builds_against_spacks_mpi_and_hdf5():
    text = RECIPE.read_text()
    fn = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef) and n.name == "config_settings")
    src = ast.get_source_segment(text, fn)
    assert "MPI_C_COMPILER" in src and "HDF5_ROOT" in src and "build-dir" in src
