"""The ompio and pnetcdf spaces offer only the OMPIO components this machine's Open MPI has (ompi_info):
Open MPI 5 has no fcoll=two_phase, and a space offering it makes failing trials."""

import csv
import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from iotuner import native
from iotuner.tune import space

OMPI5_INFO = """\
                MCA fbtl: posix (MCA v2.1.0, API v2.0.0, Component v5.0.7)
               MCA fcoll: dynamic_gen2 (MCA v2.1.0, API v2.0.0, Component v5.0.7)
               MCA fcoll: individual (MCA v2.1.0, API v2.0.0, Component v5.0.7)
               MCA fcoll: vulcan (MCA v2.1.0, API v2.0.0, Component v5.0.7)
                  MCA fs: ufs (MCA v2.1.0, API v2.0.0, Component v5.0.7)
                  MCA io: ompio (MCA v2.1.0, API v2.0.0, Component v5.0.7)
                  MCA io: romio341 (MCA v2.1.0, API v2.0.0, Component v5.0.7)
"""


def fcoll(s):
    (dim,) = [d for d in s.dimensions if d.knob == "ompio.fcoll"]
    return set(dim.values)


def test_an_open_mpi_without_two_phase_is_not_offered_it(tmp_path, monkeypatch):
    fake = tmp_path / "ompi_info"
    fake.write_text("#!/bin/sh\ncat <<'EOF'\n" + OMPI5_INFO + "EOF\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    assert fcoll(space.ompio()) == fcoll(space.pnetcdf()) == {"vulcan", "individual"}
    assert space.ompio_offered("fs", ("ufs", "lustre")) == ("ufs",)


def test_without_ompi_info_every_component_is_offered(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert fcoll(space.ompio()) == {"vulcan", "dynamic", "two_phase", "individual"}


@pytest.mark.skipif(not shutil.which("ompi_info"), reason="no Open MPI here")
def test_this_open_mpis_components_are_what_is_offered():
    have = space._ompi_components(shutil.which("ompi_info"))["fcoll"]
    assert fcoll(space.ompio()) == have & {"vulcan", "dynamic", "two_phase", "individual"}


@pytest.mark.mpi
def test_a_tune_of_the_ompio_space_has_no_failing_trial(tmp_path):
    """A short `iotuner tune --space ompio` study under this machine's Open MPI (5.0 in the Debian 13 leg) on
    the e3smio kernel: every trial runs to completion, whichever offered fcoll component it draws (12 random
    draws meet at least two of them)."""
    if "e3smio" not in native.bundled_kernels("openmpi") or not shutil.which("mpirun.openmpi"):
        pytest.skip("e3smio was not built for Open MPI (needs PnetCDF and Open MPI at build time)")
    offered = fcoll(space.ompio())
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as scratch:
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "iotuner",
                "tune",
                "--space",
                "ompio",
                "--mpiexec",
                "mpirun.openmpi",
                "--strategy",
                "random",
                "--trials",
                "12",
                "--confirm-top",
                "1",
                "--confirm-rounds",
                "1",
                "--out",
                str(tmp_path / "out"),
                "--scratch",
                scratch,
                "--",
                "e3smio",
                *["-c", "1024", "-l", "4", "-d", "16", "-t", "1"],
                "-o",
                "{scratch}",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
    assert r.returncode == 0, r.stderr + r.stdout[-3000:]
    rows = [row for row in csv.DictReader(open(tmp_path / "out" / "trials.csv")) if row["kind"] == "trial"]
    assert rows and [row for row in rows if row["state"] != "COMPLETE"] == []
    tried = {json.loads(row["settings"]).get("ompio.fcoll") for row in rows} - {None}
    assert len(tried) >= 2 and tried <= offered, tried
