"""Small traps of `iotuner tune`: the study named after its program, --mpiexec with options of its own."""

import argparse
import os
import subprocess
import sys

import pytest

from conftest import MPIEXEC, kernel
from iotuner.tune import arguments
from iotuner.tune.launch import LaunchError
from iotuner.tune.launch.local import LocalMPI, own_launcher
from iotuner.tune.session import study_name


def tune(cwd, *args, timeout=600):
    return subprocess.run(
        [sys.executable, "-m", "iotuner", "tune", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200"},
    )


def parsed(*argv) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    arguments.add_arguments(p)
    return p.parse_args(list(argv))


def test_a_study_is_named_after_its_program():
    assert study_name(parsed("--", "./bin/h5ior", "-b", "4M")) == "h5ior"
    assert study_name(parsed("--", "/opt/app/vpicio", "-o", "{scratch}")) == "vpicio"
    assert study_name(parsed("--synthetic", "ufs")) == "synthetic-ufs"
    assert study_name(parsed("--study", "mine", "--", "h5ior")) == "mine"


def test_two_studies_of_two_programs_in_one_directory(tmp_path):
    for model in ("ufs", "lustre"):
        r = tune(tmp_path, "--synthetic", model, "--trials", 2, "--quiet")
        assert r.returncode == 0, r.stderr
    assert (tmp_path / "iotuner-synthetic-ufs" / "best.json").is_file()
    assert (tmp_path / "iotuner-synthetic-lustre" / "best.json").is_file()
    # a resume without --study names the studies it could mean
    r = tune(tmp_path, "--resume")
    assert r.returncode == 2 and "synthetic-lustre, synthetic-ufs" in r.stderr, r.stderr


def test_mpiexec_takes_options_of_its_own():
    m = LocalMPI(2, f"{MPIEXEC} -genv IOTUNER_MARK 'a b'")
    assert m.command(["app", "x"]) == [MPIEXEC, "-genv", "IOTUNER_MARK", "a b", "-n", "2", "app", "x"]
    with pytest.raises(LaunchError, match="nosuch not found on the PATH"):
        LocalMPI(2, "nosuch --flag")


def test_a_command_that_brings_its_own_launcher_is_refused_before_the_study(tmp_path):
    # tune's mpiexec -n 2 around `mpiexec -n 4 app` would run two 4-rank jobs at once, on the same files
    assert own_launcher(["/usr/bin/mpiexec.mpich", "-n", "4", "app"]) == "mpiexec.mpich"
    assert own_launcher(["srun", "./app"]) == "srun"
    assert own_launcher(["./mpirun_wrapper_free_app"]) is None and own_launcher([]) is None
    r = tune(tmp_path, "--ranks", 2, "--trials", 1, "--", MPIEXEC, "-n", 4, "true")
    assert r.returncode != 0 and "starts with its own launcher" in r.stderr, r.stdout + r.stderr
    assert "--launcher none" in r.stderr and "Traceback" not in r.stderr
    assert not any(tmp_path.iterdir())  # no study was made


@pytest.mark.mpi
def test_a_tuning_with_a_launcher_and_its_options(tmp_path):
    # the option reaches every rank: without it, the program's check below fails every run
    r = tune(
        tmp_path,
        "--mpiexec",
        f"{MPIEXEC} -genv IOTUNER_MARK yes",
        "--trials",
        1,
        "--confirm-rounds",
        1,
        "--confirm-top",
        1,
        "--",
        "sh",
        "-c",
        f'test "$IOTUNER_MARK" = yes && exec {kernel("h5ior")} -b 1M -o {{scratch}}/x.h5',
    )
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr
    assert "baseline run failed" not in r.stdout and "failed" not in r.stdout.split("study ")[-1][:200]
    assert (tmp_path / "iotuner-sh" / "summary.json").is_file()


def test_a_study_that_measured_nothing_is_started_again_and_one_that_measured_is_not(tmp_path):
    """A first tune whose baseline failed leaves a study with no run: the corrected command starts it again
    (with --resume it would run the stored, failing command); a study with measured runs is still refused."""
    app = tmp_path / "app"
    app.write_text("#!/bin/sh\nexit 3\n")
    app.chmod(0o755)
    first = tune(tmp_path, "--trials", "2", "--mpiexec", MPIEXEC, "--", app)
    assert first.returncode != 0 and "nothing to tune" in first.stderr, first.stdout + first.stderr
    again = tune(tmp_path, "--trials", "2", "--mpiexec", MPIEXEC, "--", app)
    assert "already exists" not in again.stderr, again.stderr
    assert "measured nothing" in again.stdout and "starting it again" in again.stdout, again.stdout
    assert "nothing to tune" in again.stderr  # the new study ran its own baseline

    measured = tune(tmp_path, "--synthetic", "ufs", "--trials", "2")
    assert measured.returncode == 0, measured.stderr
    refused = tune(tmp_path, "--synthetic", "ufs", "--trials", "2")
    assert refused.returncode == 2 and "already exists" in refused.stderr, refused.stdout + refused.stderr
    assert "measured nothing" not in refused.stdout
