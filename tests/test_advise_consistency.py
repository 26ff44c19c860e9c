"""Advice that never contradicts itself: a fix never undoes what a higher-ranked finding recommends; each
recommendation names what applies to the file's format (netCDF is not told to align HDF5 objects); a high
finding needs enough requests to matter (the count floor)."""

import json
import subprocess
import sys
from fnmatch import fnmatch
from pathlib import Path

import pytest

from conftest import importorskip
from iotuner.advise import advise, checks
from iotuner.advise.analysis import advise_profile
from iotuner.advise.profile import Direction, FileFacts, Job, Profile

DATA = Path(__file__).parent / "data"


def shared_sequential_hdf5(small: int, path: str = "/run/chk_0001.h5") -> Profile:
    """4 ranks write one shared HDF5 file on MPI-IO, collectively, in file order, each the same number of
    calls: SmartIO's rules 1 (independent transfers) and 7 (no collective buffering) fire on it; with small
    writes, the small-writes check recommends collective aggregation instead."""
    w = Direction(ops=5000, bytes=5000 * 4096, per_rank_ops={r: 1250 for r in range(4)}, median_size=4096)
    pw = Direction(
        ops=5000,
        bytes=5000 * 4096,
        size_histogram={10 * 1024: small, 4 * 1024**2: 5000 - small},
        consecutive_ops=4990,
        sequential_ops=4996,
        max_offset=5000 * 4096,
    )
    f = FileFacts(
        path=path,
        identity=path.replace("0001", "#"),
        ranks=4,
        shared=True,
        interfaces=["hdf5", "mpiio", "posix"],
        write=w,
        posix_write=pw,
        posix_read=Direction(),
        collective_writes=5000,
        independent_writes=0,
        file_system="ext4",
    )
    return Profile(Job(source="darshan", input="x", processes=4), [f])


def fixes(advice) -> dict:
    return {(k["knob"], json.dumps(k["value"])): k["from"] for k in advice["fixes"]["knobs"]}


def test_a_rule_that_would_undo_a_higher_finding_is_left_out_and_says_why():
    a = advise_profile(shared_sequential_hdf5(small=5000), checks.thresholds(), "x")
    small = next(f for f in a["findings"] if f["code"] == "small-writes")
    assert small["level"] == "high" and "collective" in small["recommendation"]
    got = fixes(a)
    assert got[("hdf5.transfer_mode", '"collective"')] == "small-writes"
    assert ("mpiio.romio_cb_write", '"disable"') not in got and ("hdf5.transfer_mode", '"independent"') not in got
    left = {(c["knob"], c["dropped_from"]): c for c in a["fixes"]["conflicts"]}
    assert "small-writes" in left[("mpiio.romio_cb_write", "smartio-7")]["why"]
    assert "small-writes" in left[("hdf5.transfer_mode", "smartio-1")]["why"]
    rule7 = next(f for f in a["findings"] if f["code"] == "smartio-7")
    assert "would undo small-writes" in rule7["left_out"]["mpiio.romio_cb_write"]
    # the settings document holds the winner only
    doc = a["fixes"]["document"]
    group = next(g for g in doc["groups"] if g.get("file") == "chk_*.h5")
    assert group["hdf5"]["transfer_mode"] == "collective" and "romio_cb_write" not in group.get("mpiio", {})


def test_without_the_contradicting_finding_the_rules_fixes_stand():
    a = advise_profile(shared_sequential_hdf5(small=0), checks.thresholds(), "x")
    assert "small-writes" not in {f["code"] for f in a["findings"]}
    got = fixes(a)
    assert got[("mpiio.romio_cb_write", '"disable"')] == "smartio-7"
    assert got[("hdf5.transfer_mode", '"independent"')] == "smartio-1"
    assert a["fixes"]["conflicts"] == []


def test_the_rule_for_other_files_is_not_left_out():
    """A recommendation rules settings out for its own files only."""
    p = shared_sequential_hdf5(small=5000)
    other = shared_sequential_hdf5(small=0, path="/run/plot_0001.h5").files[0]
    p.files.append(other)
    a = advise_profile(p, checks.thresholds(), "x")
    kept = [k for k in a["fixes"]["knobs"] if k["knob"] == "mpiio.romio_cb_write"]
    assert [(k["files"], k["value"], k["from"]) for k in kept] == [("plot_*.h5", "disable", "smartio-7")]


def consistent(advice) -> list[str]:
    """Fixes of the advice that a non-ok finding's recommendation rules out for the same files."""
    bad = []
    for f in advice["findings"]:
        if f["level"] == "ok":
            continue
        for knob, value in f.get("keeps") or []:
            for k in advice["fixes"]["knobs"]:
                scope = f.get("scope")
                same_files = (
                    scope is None
                    or k["files"] is None
                    or any(fnmatch(k["files"], s) or fnmatch(s, k["files"]) for s in scope)
                )
                if k["knob"] == knob and k["value"] == value and same_files:
                    bad.append(f"{knob}={value} from {k['from']} undoes {f['code']}")
    return bad


@pytest.mark.slow
def test_no_example_input_gets_a_fix_that_undoes_a_finding():
    darshan = importorskip("darshan")
    logs = sorted((Path(darshan.__file__).parent / "examples" / "example_logs").glob("*.darshan"))
    for path in [*logs, DATA / "bad_run_report.json"]:
        assert consistent(advise(path)) == [], path.name
    assert consistent(advise_profile(shared_sequential_hdf5(5000), checks.thresholds(), "x")) == []


def misaligned(path: str, interfaces: list[str], requests: int = 5000, pnetcdf: bool = False) -> Profile:
    pw = Direction(ops=requests, bytes=requests * 1000)
    f = FileFacts(
        path=path,
        identity=path,
        ranks=4,
        shared=True,
        interfaces=interfaces,
        posix_write=pw,
        posix_read=Direction(),
        write=pw,
        file_not_aligned=requests,
        file_alignment=1 << 20,
        pnetcdf=pnetcdf,
    )
    return Profile(Job(source="darshan", input="x", processes=4), [f])


def finding(profile: Profile, code: str, **th) -> dict:
    return next(f for f in advise_profile(profile, checks.thresholds(th), "x")["findings"] if f["code"] == code)


@pytest.mark.parametrize(
    "path,interfaces,pnetcdf,says,knob",
    [
        ("/run/ocean.nc", ["mpiio", "posix"], False, "PnetCDF's hints", False),  # classic netCDF / PnetCDF
        ("/run/ocean.dat", ["mpiio", "posix"], True, "PnetCDF's hints", False),  # Darshan's PnetCDF module
        ("/run/ocean.nc", ["hdf5", "mpiio", "posix"], False, "under netCDF-4", True),  # netCDF-4 is HDF5 inside
        ("/run/out.h5", ["hdf5", "mpiio", "posix"], False, "align HDF5 objects", True),
        ("/run/out.bin", ["mpiio", "posix"], False, "multiples of the block", False),
    ],
)
def test_alignment_advice_names_what_the_file_format_has(path, interfaces, pnetcdf, says, knob):
    f = finding(misaligned(path, interfaces, pnetcdf=pnetcdf), "misaligned-file")
    assert says in f["recommendation"]
    assert ("HDF5" in f["recommendation"]) == knob
    assert ("hdf5.alignment" in f["knobs"]) == knob


def test_a_handful_of_requests_is_info_not_high():
    few = finding(misaligned("/run/out.h5", ["hdf5", "posix"], requests=4), "misaligned-file")
    assert few["level"] == "info" and "only 4 requests, below the count floor high_min_requests = 100" in few["message"]
    assert finding(misaligned("/run/out.h5", ["hdf5", "posix"], requests=100), "misaligned-file")["level"] == "high"
    assert (
        finding(misaligned("/run/out.h5", ["hdf5", "posix"], requests=4), "misaligned-file", high_min_requests=0)[
            "level"
        ]
        == "high"
    )


def test_the_ior_example_with_59_requests_has_no_high_finding():
    """ior_hdf5_example.darshan: 23 writes and 36 reads. Misaligned and unequal, but too few to matter:
    info (Drishti calls both high); exit status 0."""
    darshan = importorskip("darshan")
    log = Path(darshan.__file__).parent / "examples" / "example_logs" / "ior_hdf5_example.darshan"
    r = subprocess.run([sys.executable, "-m", "iotuner", "advise", str(log), "--json"], capture_output=True, text=True)
    a = json.loads(r.stdout)
    levels = {f["code"]: f["level"] for f in a["findings"]}
    assert levels["misaligned-file"] == "info" and levels["shared-imbalance-time"] == "info"
    assert r.returncode == 0 and a["summary"]["high"] == 0
