"""Packaging: a CMake install into a prefix has an HPC library's layout and other programs build against it;
pip builds out of tree; the licence, the Spack repository and its recipe agree with pyproject.toml."""

import ast
import json
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
SPACK_REPO = ROOT / "packaging" / "spack" / "spack_repo" / "iotuner"
RECIPE = SPACK_REPO / "packages" / "py_iotuner" / "package.py"
RELEASE = ROOT / "packaging" / "spack" / "release.py"


KERNELS = ("vpicio", "vorpalio", "gcrmio", "flashio", "h5ior", "bandio")
# built where PnetCDF / parallel netCDF-4 are found (with the MPI their library needs: Open MPI on Debian)
NETCDF_KERNELS = {"e3smio", "e3smio_nc4"}


def _kernel_scripts(names) -> set[str]:
    """The iotuner-<kernel> names among names: every HDF5 kernel, and the netCDF ones where they were built."""
    scripts = {n for n in names if n.startswith("iotuner-") and n != "iotuner"}
    assert {f"iotuner-{k}" for k in KERNELS} <= scripts <= {f"iotuner-{k}" for k in (*KERNELS, *NETCDF_KERNELS)}
    return scripts


def _check(cmd, **kw) -> subprocess.CompletedProcess:
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    assert r.returncode == 0, f"{cmd}: {r.stdout[-2000:]}{r.stderr[-2000:]}"
    return r


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    """A plain CMake build installed into a prefix (about 25 s here)."""
    if not shutil.which("cmake"):
        pytest.skip("cmake is not installed")
    tmp = tmp_path_factory.mktemp("cmake-install")
    build, prefix = tmp / "build", tmp / "prefix"
    _check(["cmake", "-S", ROOT, "-B", build, f"-DCMAKE_INSTALL_PREFIX={prefix}", "-DCMAKE_BUILD_TYPE=Release"])
    _check(["cmake", "--build", build, "-j2"])
    _check(["cmake", "--install", build])
    return prefix


@pytest.mark.slow
def test_cmake_install_gives_the_layout_of_an_hpc_library(prefix):
    bin_ = prefix / "bin"
    # bin/: the command and the kernels under iotuner- names, nothing generic
    names = {p.name for p in bin_.iterdir()}
    assert names == {"iotuner", *_kernel_scripts(names)}
    assert all(os.access(p, os.X_OK) for p in bin_.iterdir())
    # lib/: the runtime and the core, with pkg-config and CMake package files
    lib = prefix / "lib"
    assert {"libiotuner.so", "libiotuner_core.so", "libiotuner_ops.so"} <= {p.name for p in lib.iterdir()}
    assert (lib / "pkgconfig" / "iotuner.pc").is_file()
    assert (lib / "cmake" / "iotuner" / "iotunerConfig.cmake").is_file()
    assert (lib / "cmake" / "iotuner" / "iotunerConfigVersion.cmake").is_file()
    # libexec/iotuner: the kernels by their short names, and the helper programs
    assert {*KERNELS, "iotuner-microbench"} <= {p.name for p in (prefix / "libexec" / "iotuner").iterdir()}
    # share/iotuner: the schemas (the same files as docs/) and example settings
    share = prefix / "share" / "iotuner"
    for schema in (ROOT / "docs").glob("*.schema.json"):
        assert (share / "schemas" / schema.name).read_bytes() == schema.read_bytes()
    assert {p.name for p in (share / "examples").iterdir()} == {
        p.name for p in (ROOT / "docs" / "examples").glob("*.json")
    }
    assert (prefix / "include" / "iotuner" / "core.h").is_file()
    # bin/iotuner runs the prefix's Python package on this prefix's runtime
    env = dict(os.environ, IOTUNER_PYTHON=sys.executable)
    env.pop("IOTUNER_NATIVE_DIR", None)
    r = _check([bin_ / "iotuner", "kernels", "--path"], env=env)
    assert r.stdout.strip() == str(prefix / "libexec" / "iotuner")
    assert _check([bin_ / "iotuner", "config", "--prefix"], env=env).stdout.strip() == str(prefix)


@pytest.mark.slow
def test_the_launcher_with_a_python_without_the_dependencies_says_what_to_install(prefix, tmp_path):
    """bin/iotuner of a CMake install run by a python3 that lacks iotuner's dependencies (a fresh venv): one line
    naming the missing one, the command that installs them all into that Python, and IOTUNER_PYTHON."""
    bare = tmp_path / "bare"
    _check([sys.executable, "-m", "venv", "--without-pip", bare])
    python = bare / "bin" / "python"
    env = dict(os.environ, IOTUNER_PYTHON=str(python))
    env.pop("IOTUNER_NATIVE_DIR", None)
    r = subprocess.run([str(prefix / "bin" / "iotuner"), "knobs"], capture_output=True, text=True, env=env)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    m = re.fullmatch(
        rf"iotuner: this Python \({re.escape(str(python))}\) lacks iotuner's dependency (\S+) "
        rf"\(No module named '\w+'\): {re.escape(str(python))} -m pip install (.+); "
        rf"or set IOTUNER_PYTHON to a Python that has them\n",
        r.stderr,
    )
    assert m, r.stderr
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert m.group(1) in meta["dependencies"]
    assert m.group(2).split() == [f"'{d}'" for d in meta["dependencies"]]
    # what needs none of them still works there
    assert _check([prefix / "bin" / "iotuner", "config", "--runtime"], env=env).stdout.strip() == str(
        prefix / "lib" / "libiotuner.so"
    )


@pytest.mark.slow
@pytest.mark.mpi
def test_installed_kernels_run_from_the_users_path_and_under_iotuner(prefix, tmp_path):
    env = dict(os.environ, IOTUNER_PYTHON=sys.executable, PATH=f"{prefix / 'bin'}{os.pathsep}{os.environ['PATH']}")
    env.pop("IOTUNER_NATIVE_DIR", None)
    r = _check(["mpiexec.mpich", "-n", "2", "iotuner-vpicio", "-n", "1K", "-o", tmp_path / "a"], env=env)
    assert "vpicio write: ranks=2" in r.stdout
    # a job iotuner runs finds the kernel by its short name; the report comes from the prefix's runtime
    r = _check(
        [
            "iotuner",
            "run",
            "--report",
            tmp_path / "run.json",
            "--",
            "mpiexec.mpich",
            "-n",
            "2",
            "h5ior",
            "-b",
            "64K",
            "-t",
            "16K",
            "-o",
            tmp_path / "b",
        ],
        env=env,
        cwd=tmp_path,
    )
    report = json.loads((tmp_path / "run.json").read_text())
    assert report["totals"]["bytes_written"] == 2 * 64 * 1024


@pytest.mark.slow
def test_a_program_builds_against_libiotuner_through_pkg_config(prefix, tmp_path):
    """The core's C API (settings documents, sizes) from another program, as a site's job filter would use it."""
    if not shutil.which("pkg-config"):
        pytest.skip("pkg-config is not installed")
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = _check(["pkg-config", "--cflags", "--libs", "iotuner"], env=env).stdout.split()
    libdir = _check(["pkg-config", "--variable=libdir", "iotuner"], env=env).stdout.strip()
    exe = tmp_path / "core_client"
    _check(["cc", ROOT / "tests" / "programs" / "core_client.c", *flags, "-o", exe])
    _assert_core_client(exe, tmp_path)  # without LD_LIBRARY_PATH: the rpath is iotuner.pc's
    assert f"-Wl,-rpath,{libdir}" in flags
    runtime = Path(_check(["pkg-config", "--variable=runtime", "iotuner"], env=env).stdout.strip())
    assert runtime.resolve() == (prefix / "lib" / "libiotuner.so").resolve()


@pytest.mark.slow
def test_a_program_builds_against_libiotuner_through_find_package(prefix, tmp_path):
    runtime, kernels = _find_package_client(prefix, tmp_path)
    assert Path(runtime).resolve() == (prefix / "lib" / "libiotuner.so").resolve()
    assert (Path(kernels) / "vpicio").is_file()


def _find_package_client(cmake_prefix: Path, tmp_path: Path) -> list[str]:
    """core_client built with find_package(iotuner) and installed: both its build and its installed copy run
    without LD_LIBRARY_PATH (CMake drops its own build rpath at install; iotuner::core brings one). Gives
    IOTUNER_RUNTIME_LIBRARY and IOTUNER_KERNELS_DIR as the package set them."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.18)\nproject(client C)\nfind_package(iotuner 0.1 REQUIRED)\n"
        f"add_executable(core_client {ROOT / 'tests' / 'programs' / 'core_client.c'})\n"
        "target_link_libraries(core_client PRIVATE iotuner::core)\ninstall(TARGETS core_client)\n"
        'file(WRITE ${CMAKE_BINARY_DIR}/found.txt "${IOTUNER_RUNTIME_LIBRARY}\\n${IOTUNER_KERNELS_DIR}")\n'
    )
    _check(
        [
            "cmake",
            "-S",
            src,
            "-B",
            tmp_path / "build",
            f"-DCMAKE_PREFIX_PATH={cmake_prefix}",
            f"-DCMAKE_INSTALL_PREFIX={tmp_path / 'client'}",
        ]
    )
    _check(["cmake", "--build", tmp_path / "build"])
    _assert_core_client(tmp_path / "build" / "core_client", tmp_path)
    _check(["cmake", "--install", tmp_path / "build"])
    _assert_core_client(tmp_path / "client" / "bin" / "core_client", tmp_path)
    return (tmp_path / "build" / "found.txt").read_text().split("\n")


def _assert_core_client(exe: Path, tmp_path: Path) -> None:
    """exe works, finding libiotuner_core.so by its own rpath (no LD_LIBRARY_PATH)."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    good = tmp_path / "good.json"
    good.write_text(
        '{"version": 1, "mpiio": {"cb_nodes": 2}, "groups": [{"file": "chk_*.h5", "hdf5": {"alignment": [0, "1M"]}}]}'
    )
    r = _check([exe, good, "/run/chk_0001.h5"], env=env)
    assert r.stdout.splitlines()[:3] == ["mpiio.cb_nodes=2", "hdf5.alignment=0,1048576", "16M=16777216"]
    assert _check([exe, good, "/run/other.h5"], env=env).stdout.splitlines()[:2] == ["mpiio.cb_nodes=2", "16M=16777216"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "hdf5": {"alignmnet": [0, 1]}}')
    r = subprocess.run([str(exe), str(bad), "x"], capture_output=True, text=True, env=env)
    assert r.returncode == 1 and "did you mean hdf5.alignment" in r.stdout


def test_native_dir_still_follows_iotuner_native_dir(tmp_path):
    """IOTUNER_NATIVE_DIR picks the prefix; one without the runtime gives the one-line error, not a traceback."""
    r = subprocess.run(
        [sys.executable, "-m", "iotuner", "kernels", "--path"],
        capture_output=True,
        text=True,
        env=dict(os.environ, IOTUNER_NATIVE_DIR=str(tmp_path)),
    )
    assert r.returncode == 2 and str(tmp_path) in r.stderr and "Traceback" not in r.stderr
    from iotuner import native

    real = native.native_dir()
    r = subprocess.run(
        [sys.executable, "-m", "iotuner", "kernels", "--json"],
        capture_output=True,
        text=True,
        env=dict(os.environ, IOTUNER_NATIVE_DIR=str(real)),
    )
    assert r.returncode == 0
    # the kernels of the main MPI, and of the other one's set where the build made it (libexec/iotuner/openmpi)
    kernels = json.loads(r.stdout)
    assert {Path(k["path"]).parent for k in kernels if k["mpi"] == native.runtime_abis()[0]} == {
        real / "libexec" / "iotuner"
    }
    assert {Path(k["path"]).parent for k in kernels} <= {
        real / "libexec" / "iotuner" / abi for abi in native.runtime_abis()[1:]
    } | {real / "libexec" / "iotuner"}


def _calls(name: str) -> list[ast.Call]:
    tree = ast.parse(RECIPE.read_text())
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "id", None) == name]


def _spec(call: ast.Call) -> str:
    return call.args[0].value


def _when(call: ast.Call) -> str | None:
    return next((k.value.value for k in call.keywords if k.arg == "when"), None)


# pip name -> Spack package (None: not packaged in Spack; installed with pip on top)
SPACK_NAME = {
    "rich": "py-rich",
    "optuna": "py-optuna",
    "numpy": "py-numpy",
    "scipy": "py-scipy",
    "matplotlib": "py-matplotlib",
    "darshan": "py-darshan",
    "psycopg2-binary": "py-psycopg2",
    "optuna-dashboard": None,
    "libclang": "py-libclang",
    "clang-format": "llvm+clang",
}


def spack_name(pip_name: str) -> str | None:
    return SPACK_NAME.get(pip_name, "py-" + pip_name)  # Spack's convention for Python packages


def _pip(req: str) -> tuple[str, str | None]:
    """(name, Spack's version range) of a requirement: ">=4" is "4:", ">=4,<6" is "4:5" (Spack's ranges are
    inclusive, so an exclusive major bound is the major before it)."""
    m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*(?:>=\s*([0-9.]+))?\s*(?:,\s*<\s*([0-9]+))?", req.strip())
    assert m, f"a requirement this test cannot read: {req}"
    if m.group(2) is None:
        return m.group(1), None
    return m.group(1), f"{m.group(2)}:" + (str(int(m.group(3)) - 1) if m.group(3) else "")


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
        assert when is None and (low is None or spec.endswith(f"@{low}")), (req, spec)
    # one variant per optional group (but the tests'), each pulling that group's packages; gymnasium only in one
    assert "gymnasium" not in {_pip(r)[0] for r in meta["project"]["dependencies"]}
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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> tuple[Path, bool]:
    """`pip wheel .` (what `pip install .` builds): the wheel, and whether the source tree's build/ was left alone."""

    def newest() -> int:
        return max((p.stat().st_mtime_ns for p in (ROOT / "build").rglob("*")), default=0)

    out = tmp_path_factory.mktemp("wheel")
    before = newest()
    _check([sys.executable, "-m", "pip", "wheel", "-q", "--no-build-isolation", "--no-deps", "-w", out, ROOT])
    return next(out.glob("iotuner-*.whl")), newest() == before


@pytest.fixture(scope="module")
def pip_venv(wheel, tmp_path_factory) -> Path:
    """A fresh virtual environment with the wheel installed (`pip install .` there, without the dependencies:
    `iotuner config` needs none of them)."""
    venv = tmp_path_factory.mktemp("pip") / "venv"
    _check([sys.executable, "-m", "venv", venv])
    _check([venv / "bin" / "python", "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel[0]])
    return venv


@pytest.mark.slow
def test_pip_builds_out_of_tree_with_the_same_layout(wheel):
    """`pip wheel .` leaves the developer's build/ alone and ships the layout: the kernels as iotuner-<kernel>
    scripts, the package's _native prefix with pkg-config and schemas."""
    import zipfile

    path, untouched = wheel
    assert untouched, "the wheel was built in the source tree's build/"
    names = zipfile.ZipFile(path).namelist()
    scripts = {n.rsplit("/", 1)[1] for n in names if "/scripts/" in n}
    assert scripts == _kernel_scripts(scripts)
    native = "iotuner/_native/"
    for path in (
        "lib/libiotuner.so",
        "lib/libiotuner_core.so",
        "lib/pkgconfig/iotuner.pc",
        "lib/cmake/iotuner/iotunerConfig.cmake",
        "include/iotuner/core.h",
        "share/iotuner/schemas/settings.schema.json",
        *(f"libexec/iotuner/{k}" for k in KERNELS),
    ):
        assert native + path in names, path


def _normal(flags: str) -> list[str]:
    """Compiler flags with their paths normalized (pkg-config keeps the .pc file's ../..)."""
    out = []
    for flag in flags.split():
        head = next((h for h in ("-Wl,-rpath,", "-I", "-L") if flag.startswith(h)), "")
        out.append(head + os.path.normpath(flag[len(head) :]) if head else flag)
    return out


@pytest.mark.slow
def test_a_pip_install_is_found_by_pkg_config_and_cmake_through_iotuner_config(pip_venv, tmp_path):
    """After `pip install .` in a fresh venv: PKG_CONFIG_PATH=$(iotuner config --pkgconfig-path) pkg-config and
    cmake -DCMAKE_PREFIX_PATH=$(iotuner config --cmake-prefix) find iotuner, and what they build runs."""

    def config(*args: str) -> str:
        return _check([pip_venv / "bin" / "iotuner", "config", *args]).stdout.strip()

    prefix = Path(config("--prefix"))
    assert prefix.parent == next(pip_venv.glob("lib/python3*/site-packages/iotuner")) and prefix.name == "_native"
    listing = config()  # every item, one a line
    assert re.search(rf"^prefix +{re.escape(str(prefix))}$", listing, re.M), listing
    if shutil.which("pkg-config"):
        env = dict(os.environ, PKG_CONFIG_PATH=config("--pkgconfig-path"))
        libs = _check(["pkg-config", "--libs", "iotuner"], env=env).stdout
        assert _normal(libs) == _normal(config("--libs"))
        cflags = _check(["pkg-config", "--cflags", "iotuner"], env=env).stdout
        assert _normal(cflags) == _normal(config("--cflags"))
        exe = tmp_path / "pc_client"
        _check(["cc", ROOT / "tests" / "programs" / "core_client.c", *cflags.split(), *libs.split(), "-o", exe])
        _assert_core_client(exe, tmp_path)
    runtime, kernels = _find_package_client(Path(config("--cmake-prefix")), tmp_path)
    assert Path(runtime).resolve() == Path(config("--runtime")).resolve() == (prefix / "lib" / "libiotuner.so")
    assert Path(kernels).resolve() == Path(config("--kernels")).resolve()


def test_the_licence_is_one_everywhere():
    """LICENSE is BSD-3-Clause, and pyproject.toml and the Spack recipe say so."""
    text = " ".join((ROOT / "LICENSE").read_text().split())
    assert text.startswith("BSD 3-Clause License")
    for clause in (
        "Redistributions of source code must retain",
        "Redistributions in binary form must reproduce",
        "Neither the name of the copyright holder",
    ):
        assert clause in text
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["license"] == {"text": "BSD-3-Clause"}
    assert [c.args[0].value for c in _calls("license")] == ["BSD-3-Clause"]


def test_the_spack_recipe_lives_in_a_spack_1_package_repository():
    """Spack 1.x: spack_repo/<namespace>/repo.yaml (api v2), packages/<name with underscores>/package.py, the
    build system imported from the builtin repository."""
    repo_yaml = (SPACK_REPO / "repo.yaml").read_text()
    assert re.search(r"^\s+namespace: iotuner$", repo_yaml, re.M) and SPACK_REPO.name == "iotuner"
    assert re.search(r"^\s+api: v2\.\d+$", repo_yaml, re.M)
    assert SPACK_REPO.parent.name == "spack_repo" and RECIPE.parent.name == "py_iotuner"
    tree = ast.parse(RECIPE.read_text())
    imports = {(n.module, a.name) for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    assert ("spack_repo.builtin.build_systems.python", "PythonPackage") in imports
    assert not any(m.startswith("spack.pkg") for m, _ in imports)
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    assert cls.name == "PyIotuner" and [b.id for b in cls.bases] == ["PythonPackage"]


def test_the_recipe_has_released_versions_with_checksums_at_its_url():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    versions = {c.args[0].value: {k.arg: k.value.value for k in c.keywords} for c in _calls("version")}
    released = {v: kw for v, kw in versions.items() if "sha256" in kw}
    assert meta["project"]["version"] in released
    for v, kw in released.items():
        assert re.fullmatch(r"[0-9a-f]{64}", kw["sha256"]) and set(kw["sha256"]) != {"0"}, v
    url = next(
        n.value.value
        for n in ast.walk(ast.parse(RECIPE.read_text()))
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "url"
    )
    assert re.search(r"/v(\d+\.\d+\.\d+)/iotuner-\1\.tar\.gz$", url), url


@pytest.mark.slow
def test_release_builds_a_reproducible_sdist_records_its_checksum_and_the_sdist_configures(tmp_path):
    """release.py from a commit: the same tree gives the same tarball, its sha256 goes into the recipe, and
    the tarball holds everything the build needs (CMake configures from it)."""
    if not (ROOT / ".git").exists() or not shutil.which("cmake"):
        pytest.skip("needs a git checkout and cmake")
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    recipe = tmp_path / "package.py"
    recipe.write_text(RECIPE.read_text().replace(f'version("{version}", sha256=', 'version("0.0.0", sha256='))
    for out in ("a", "b"):
        _check([sys.executable, RELEASE, version, "--ref", "HEAD", "--out", tmp_path / out, "--recipe", recipe])
    a, b = (tmp_path / d / f"iotuner-{version}.tar.gz" for d in ("a", "b"))
    assert a.read_bytes() == b.read_bytes()
    import hashlib

    digest = hashlib.sha256(a.read_bytes()).hexdigest()
    assert (
        f'    # released versions (release.py): the sha256 of the tag\'s sdist\n    version("{version}", '
        f'sha256="{digest}")\n    version("0.0.0", sha256=' in recipe.read_text()
    )
    import tarfile

    with tarfile.open(a) as tar:
        tar.extractall(tmp_path / "src", filter="data")
    src = tmp_path / "src" / f"iotuner-{version}"
    assert (src / "LICENSE").is_file()
    _check(["cmake", "-S", src, "-B", tmp_path / "build"])
