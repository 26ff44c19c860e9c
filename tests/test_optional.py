"""Optional parts (libclang, PyDarshan, optuna-dashboard) missing or broken: the feature that needs one says so in
one line, with the exact command that installs it, and exits with its status; nothing else needs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import importorskip
from iotuner import optional

try:
    import tomllib
except ImportError:  # Python < 3.11
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent

# as if the part were not installed: a None in sys.modules makes its import raise ModuleNotFoundError
WITHOUT = (
    "import sys\nfor m in {modules!r}: sys.modules[m] = None\n{prelude}\nfrom iotuner.cli import main\nsys.exit(main())"
)


def _broken(tmp_path: Path, module: str, error: str) -> Path:
    """A directory for PYTHONPATH where `module` is a package that raises at import (Python 3.13's PyDarshan:
    RuntimeError, as it cannot find libdarshan-util.so)."""
    root = tmp_path / "broken"
    parts = module.split(".")
    root.joinpath(*parts).mkdir(parents=True)
    for i in range(1, len(parts)):
        (root.joinpath(*parts[:i]) / "__init__.py").touch()
    (root.joinpath(*parts) / "__init__.py").write_text(f"raise {error}\n")
    return root


def iotuner(
    args, *, without=(), pythonpath: Path | None = None, prelude: str = "", env=None, cwd=None
) -> subprocess.CompletedProcess:
    env = dict(env or os.environ)
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join([str(pythonpath), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.run(
        [sys.executable, "-c", WITHOUT.format(modules=list(without), prelude=prelude), *map(str, args)],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=120,
    )


def darshan_log(tmp_path: Path) -> Path:
    """A file with a Darshan header (format 3.41, no regions): what advise checks before it needs PyDarshan."""
    log = tmp_path / "job.darshan"
    log.write_bytes(b"3.41".ljust(8, b"\0") + bytes(16 + 16 * 17))
    return log


# (the feature's command, the module it needs, the line's start, advise's exit status 3 for a missing reader)
FEATURES = {
    "kernel": (
        lambda t: ["kernel", t / "app.c", "-o", t / "k", "--", "./app"],
        "clang.cindex",
        "iotuner kernel: cutting a kernel needs libclang's Python bindings",
        2,
    ),
    "advise": (
        lambda t: ["advise", darshan_log(t)],
        "darshan",
        "iotuner advise: reading Darshan logs needs PyDarshan",
        3,
    ),
    "dashboard": (
        lambda t: ["dashboard", "--out", t],
        "optuna_dashboard",
        "iotuner dashboard: the live dashboard needs optuna-dashboard",
        2,
    ),
}


def _assert_one_line(r: subprocess.CompletedProcess, start: str, state: str, why: str, module: str, status: int):
    assert r.returncode == status, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
    line = r.stderr.rstrip("\n")
    assert line.startswith(f"{start} ({state}: "), line
    assert why in line, line
    assert line.endswith(": " + optional.pip_command(optional.PARTS[module].requirements)), line


@pytest.mark.parametrize("feature", FEATURES)
def test_a_missing_optional_part_is_one_line_with_its_install_command(feature, tmp_path):
    args, module, start, status = FEATURES[feature]
    r = iotuner(args(tmp_path), without=[module.split(".")[0], module])
    _assert_one_line(r, start, "not installed", f"import of {module} halted", module, status)


@pytest.mark.parametrize("feature", FEATURES)
def test_a_broken_optional_part_is_one_line_with_the_reason(feature, tmp_path):
    """Any exception at import counts (PyDarshan on Python 3.13 raises RuntimeError), with its reason."""
    args, module, start, status = FEATURES[feature]
    stub = _broken(tmp_path, module, "RuntimeError('cannot find libdarshan-util.so\\nsecond line')")
    r = iotuner(args(tmp_path), pythonpath=stub)
    _assert_one_line(r, start, "broken", "RuntimeError: cannot find libdarshan-util.so", module, status)
    assert "second line" not in r.stderr


def test_the_kernel_command_without_clang_format_names_its_wheel(tmp_path):
    """libclang there, clang-format neither beside this Python (where its wheel puts it) nor on the PATH."""
    importorskip("clang.cindex")
    r = iotuner(
        ["kernel", "app.c", "-o", "k", "--", "./app"],
        prelude=f"sys.executable = {str(tmp_path / 'python')!r}",
        env=dict(os.environ, PATH=str(tmp_path)),
        cwd=tmp_path,
    )
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert r.stderr.startswith("iotuner kernel: cutting a kernel needs clang-format (") and r.stderr.rstrip().endswith(
        " -m pip install 'clang-format>=15')"
    ), r.stderr


def test_without_any_optional_part_the_core_commands_work(tmp_path):
    """check and knobs (the catalogue through the C core, rich's tables) need none of the optional parts."""
    doc = tmp_path / "s.json"
    doc.write_text('{"version": 1, "mpiio": {"cb_nodes": 2}}')
    without = [m for name in optional.PARTS for m in (name.split(".")[0], name)]
    assert iotuner(["check", doc], without=without).returncode == 0
    r = iotuner(["knobs", "--json"], without=without)
    assert r.returncode == 0 and "cb_nodes" in r.stdout


def test_a_missing_dependency_of_iotuner_itself_is_one_line(tmp_path):
    """rich missing (a python3 without iotuner's dependencies): one line naming it and every dependency to install."""
    r = iotuner(["knobs"], without=["rich"])
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"this Python ({sys.executable}) lacks iotuner's dependency rich>=13" in r.stderr
    assert r.stderr.rstrip().endswith(optional.pip_command(optional.DEPENDENCIES.values()))


def test_another_missing_module_is_not_hidden():
    """Only iotuner's own dependencies get the one line: any other import error is a bug and keeps its traceback."""
    e = ModuleNotFoundError("No module named 'iotuner.nowhere'", name="iotuner.nowhere")
    assert optional.dependency_message(e) is None


def test_the_install_commands_are_pyprojects():
    """The requirements the messages install are pyproject.toml's: each optional part's within its extra, the
    dependencies exactly."""
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for module, part in optional.PARTS.items():
        assert set(part.requirements) <= set(meta["optional-dependencies"][part.extra]), module
    assert sorted(optional.DEPENDENCIES.values()) == sorted(meta["dependencies"])
    # scripts/setup.sh installs PyDarshan apart (it may fail to), with the same requirement
    assert f'install -q "{optional.PARTS["darshan"].requirements[0]}"' in (ROOT / "scripts" / "setup.sh").read_text()


def test_the_install_command_is_for_this_python(tmp_path, monkeypatch):
    """`pip install` when the PATH's pip is this Python's, else this Python's `-m pip` (never another Python's pip)."""
    here = Path(sys.executable).parent
    monkeypatch.setenv("PATH", str(tmp_path))
    assert optional.pip_command(["a>=1"]).endswith(" -m pip install 'a>=1'")
    assert sys.executable in optional.pip_command(["a>=1"])
    if (here / "pip").exists():
        monkeypatch.setenv("PATH", str(here))
        assert optional.pip_command(["a>=1", "b"]) == "pip install 'a>=1' b"


def test_the_tests_skip_a_broken_optional_part(tmp_path):
    """conftest.importorskip skips on any exception at import (pytest.importorskip lets RuntimeError through)."""
    stub = _broken(tmp_path, "darshan", "RuntimeError('cannot find libdarshan-util.so')")
    test = tmp_path / "test_uses_darshan.py"
    test.write_text(
        "from conftest import importorskip\ndarshan = importorskip('darshan')\n\ndef test_x():\n    assert False\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(stub), str(ROOT / "tests")]))
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            tmp_path,
            "-c",
            os.devnull,
            str(test),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    # the whole module skipped: 5 is pytest's "no tests collected" (its one test skipped at collection)
    assert r.returncode == 5 and r.stdout.split()[-4:-2] == ["1", "skipped"], r.stdout + r.stderr
