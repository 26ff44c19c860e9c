"""The ompio and pnetcdf spaces offer only the OMPIO components this machine's Open MPI has (ompi_info):
Open MPI 5 has no fcoll=two_phase, and a space offering it makes failing trials."""

import os
import shutil

import pytest

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
