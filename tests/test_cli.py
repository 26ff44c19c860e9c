"""The iotuner command line: help, exit codes, tables."""

import json
import os
import subprocess
import sys

import pytest

from conftest import kernel, mpi


def iotuner(*args, **kw):
    return subprocess.run([sys.executable, "-m", "iotuner", *map(str, args)], capture_output=True, text=True, **kw)


def test_help_lists_commands():
    r = iotuner("--help")
    assert r.returncode == 0
    for cmd in ("run", "tune", "show", "check", "convert", "knobs", "kernels", "demo"):
        assert f"    {cmd}" in r.stdout


def test_run_help_explains_usage():
    r = iotuner("run", "--help")
    assert r.returncode == 0
    assert "--config FILE" in r.stdout and "-- LAUNCHER APP ARGS" in r.stdout and "untuned" in r.stdout


def test_tune_options_load_without_the_tuner_stack():
    # a mistyped option of tune or worker answers at once: parsing them must not pull in Optuna, SciPy or SQLAlchemy
    code = (
        "import sys; from iotuner import cli\n"
        "for argv in (['tune', '--trials', '3', '--', 'app'], ['worker', '--study', 's', '--storage', 'x']):\n"
        "    cli.build_parser(argv).parse_args(argv)\n"
        "print(sorted(m for m in ('optuna', 'scipy', 'sqlalchemy', 'sklearn') if m in sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
    r = iotuner("tune", "--help")
    assert r.returncode == 0 and "bayes" in r.stdout and "tunio-fanova" in r.stdout  # the list, looked up late


def test_tune_help_lists_the_strategies_without_their_libraries():
    # `tune --help` imports every strategy (to list them) but none of what they compute with: Optuna and NumPy
    # alone cost more than the rest of the command (issue 22: under 0.25 s)
    code = (
        "import sys, contextlib, io; from iotuner import cli\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    try:\n        cli.main(['tune', '--help'])\n    except SystemExit:\n        pass\n"
        "assert 'tunio-fanova' in out.getvalue()\n"
        "print(sorted(m for m in ('optuna', 'numpy', 'scipy', 'sqlalchemy', 'sklearn') if m in sys.modules))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"


def test_run_without_a_command_is_a_usage_error():
    r = iotuner("run")
    assert r.returncode == 2 and "give the command to run" in r.stderr


def test_run_of_a_missing_program():
    r = iotuner("run", "--", "/nonexistent/app")
    assert r.returncode == 127 and "cannot start" in r.stderr


def test_check(tmp_path):
    good = tmp_path / "good.json"
    good.write_text('{"version": 1, "mpiio": {"cb_buffer_size": "4M"}}')
    r = iotuner("check", good)
    assert r.returncode == 0 and json.loads(r.stdout)["groups"][0]["mpiio"]["cb_buffer_size"] == 4194304
    bad = tmp_path / "bad.json"
    bad.write_text('{"version": 1, "mpiio": {"cb_buffer_size": "4MB"}}')
    r = iotuner("check", bad)
    assert r.returncode == 1 and "ambiguous" in r.stderr
    r = iotuner("check", tmp_path / "missing.json")
    assert r.returncode == 2 and "cannot read" in r.stderr  # not read at all: 2; read and rejected: 1


def test_check_lists_every_error_with_its_line(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"version": 1,\n "mpiio": {"cb_nodes": "two", "romio_cb_write": "on"},\n'
        ' "groups": [{"hdf5": {"alignmnet": 1, "sieve_buf_size": "16MB"}}]}'
    )
    r = iotuner("check", bad)
    assert r.returncode == 1
    lines = r.stderr.splitlines()
    assert "rejected, 4 errors:" in lines[0]
    assert [x.split(":")[0].strip() for x in lines[1:]] == ["line 2", "line 2", "line 3", "line 3"]
    assert "did you mean hdf5.alignment" in r.stderr and "ambiguous" in r.stderr and "enable|disable" in r.stderr


def test_knobs_and_kernels():
    r = iotuner("knobs", "--layer", "lustre")
    assert r.returncode == 0 and "lustre.layout" in r.stdout and "hdf5.alignment" not in r.stdout
    r = iotuner("kernels")
    assert r.returncode == 0
    assert {line.split()[0] for line in r.stdout.splitlines()} >= {"vpicio", "vorpalio", "gcrmio", "flashio", "h5ior"}


@pytest.mark.mpi
def test_run_prints_phases_and_settings_and_keeps_exit_status(tmp_path):
    cfg = tmp_path / "s.json"
    cfg.write_text('{"version": 1, "mpiio": {"romio_cb_write": "enable", "striping_factor": 4}}')
    r = iotuner(
        "run",
        "--config",
        cfg,
        "--report",
        "r.json",
        "--",
        *mpi(),
        kernel("vpicio"),
        "-n",
        "32K",
        "-o",
        ".",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    text = " ".join(r.stdout.split())  # the tables wrap their long cells
    assert "vpicio.h5" in text and "hdf5/mpio" in text
    assert "mpiio.romio_cb_write" in text and "applied" in text
    assert "mpiio.striping_factor" in text and "ufs driver ignores striping hints" in text
    shown = iotuner("show", tmp_path / "r.json")
    assert shown.returncode == 0 and "vpicio.h5" in shown.stdout
    failing = iotuner("run", "--", *mpi(1), kernel("vpicio"), "-n", "bogus")
    assert failing.returncode != 0 and "exited with status" in failing.stdout


def test_show_corrupt_report(tmp_path):
    bad = tmp_path / "r.json"
    bad.write_text("{")
    r = iotuner("show", bad)
    assert r.returncode == 2 and "not JSON" in r.stderr


def test_every_command_describes_itself_in_help_that_fits_the_terminal():
    """Each command has a description beyond its one-line summary, refilled to the width (COLUMNS=80 here):
    no line of --help is wider, and the description is there word for word."""
    from iotuner import commands

    for name in commands.names():
        mod = commands.get(name)
        assert len(getattr(mod, "DESCRIPTION", "")) > len(mod.HELP), f"{name} has no description"
        r = subprocess.run(
            [sys.executable, "-m", "iotuner", name, "--help"],
            capture_output=True,
            text=True,
            env=dict(os.environ, COLUMNS="80"),
        )
        assert r.returncode == 0, r.stderr
        assert max(map(len, r.stdout.splitlines())) <= 80, name
        assert " ".join(mod.DESCRIPTION.split()) in " ".join(r.stdout.split()), name


def test_knobs_json_gives_integer_limits_the_validator_accepts():
    """Limits as integers (a double printed 2147483647 as 2147483650.0, which the validator then refused): every
    int and size knob set to its own max from `knobs --json` is a valid document."""
    from iotuner import native

    out = subprocess.run([sys.executable, "-m", "iotuner", "knobs", "--json"], capture_output=True, text=True)
    knobs = json.loads(out.stdout)["knobs"]
    bounded = [k for k in knobs if k["type"] in ("int", "size") and k["max"] is not None]
    assert bounded
    for k in knobs:
        if k["type"] in ("int", "size", "size_pair"):
            assert type(k["min"]) is int and (k["max"] is None or type(k["max"]) is int), k
    for k in bounded:
        value = k["max"] - k["max"] % k["multiple_of"] if k.get("multiple_of") else k["max"]
        native.core().check_settings(json.dumps({"version": 1, k["layer"]: {k["name"]: value}}))


@pytest.mark.parametrize("doc", [{"version": 1, "foo": {}}, {"version": 1, "groups": [{"file": "*", "foo": {}}]}])
def test_the_unknown_key_message_lists_every_layer(doc):
    """Every layer of the catalogue (ompio and pnetcdf were left out) is named where a key is unknown."""
    from iotuner import native

    layers = {k["layer"] for k in native.core().catalogue()["knobs"]}
    with pytest.raises(ValueError) as e:
        native.core().check_settings(json.dumps(doc))
    listed = str(e.value).rsplit("(", 1)[1]
    assert "unknown key 'foo'" in str(e.value) and layers and all(f" {layer}" in listed for layer in layers), e.value
