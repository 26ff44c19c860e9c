"""The Lustre path, against a stand-in `lfs` that records its arguments.

There is no Lustre on this machine: IOTUNER_TEST_FSTYPE=lustre makes the
runtime treat the directory as Lustre, and IOTUNER_LFS points it at the
stand-in. The real-Lustre behaviour of lfs is assumed, not tested."""

import os
import sys
import textwrap

import pytest

from conftest import kernel, mpi, run_job, write_json

FAKE_LFS = textwrap.dedent("""\
    #!{python}
    # Stand-in for Lustre's lfs: records each call; setstripe creates the file
    # and remembers its layout, getstripe answers from that memory.
    import json, os, sys
    log, state = os.environ["LFS_LOG"], os.environ["LFS_STATE"]
    with open(log, "a") as f:
        f.write(json.dumps(sys.argv[1:]) + "\\n")
    layouts = json.load(open(state)) if os.path.exists(state) else {{}}
    cmd, args, path = sys.argv[1], sys.argv[2:-1], sys.argv[-1]
    if cmd == "setstripe":
        if os.path.exists(path):
            print("lfs setstripe: file exists", file=sys.stderr); sys.exit(17)
        open(path, "w").close()
        layouts[path] = args
        json.dump(layouts, open(state, "w"))
    elif cmd == "getstripe":
        a = layouts[path]
        if args == ["--component-count"]:
            print(a.count("-E"))
        elif args == ["--stripe-count"]:
            print(a[a.index("-c") + 1])
        elif args == ["--stripe-size"]:
            print(a[a.index("-S") + 1])
    """)


@pytest.fixture
def lustre(tmp_path, monkeypatch):
    lfs = tmp_path / "lfs"
    lfs.write_text(FAKE_LFS.format(python=sys.executable))
    lfs.chmod(0o755)
    log = tmp_path / "lfs.log"
    monkeypatch.setenv("IOTUNER_TEST_FSTYPE", "lustre")
    monkeypatch.setenv("IOTUNER_LFS", str(lfs))
    monkeypatch.setenv("LFS_LOG", str(log))
    monkeypatch.setenv("LFS_STATE", str(tmp_path / "lfs.state"))
    return log


def calls(log):
    import json

    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def lustre_checks(result):
    """Lustre checks of the phase that created the file."""
    created = next(p for p in result.report.phases if p["created"])
    return {c["knob"]: c for c in created["settings"] if c["layer"] == "lustre"}


def test_plain_striping(tmp_path, programs, lustre):
    cfg = write_json(tmp_path / "s.json", {"version": 1, "lustre": {"stripe_count": 4, "stripe_size": "1M"}})
    out = tmp_path / "grid.h5"
    result = run_job([programs["serial_h5"], out], config=cfg)
    assert result.ok, result.stderr
    setstripe = [c for c in calls(lustre) if c[0] == "setstripe"]
    assert setstripe == [["setstripe", "-c", "4", "-S", "1048576", str(out)]]
    c = lustre_checks(result)
    assert (c["stripe_count"]["effective"], c["stripe_count"]["status"]) == ("4", "applied")
    assert (c["stripe_size"]["effective"], c["stripe_size"]["status"]) == ("1048576", "applied")


def test_progressive_layout(tmp_path, programs, lustre):
    layout = "-E 256M -c 1 -E 4G -c 4 -E -1 -c -1"
    cfg = write_json(tmp_path / "s.json", {"version": 1, "lustre": {"layout": layout}})
    out = tmp_path / "grid.h5"
    out.write_text("an old file that H5F_ACC_TRUNC replaces")
    result = run_job([programs["serial_h5"], out], config=cfg)
    assert result.ok, result.stderr
    (setstripe,) = [c for c in calls(lustre) if c[0] == "setstripe"]
    assert setstripe == ["setstripe", *layout.split(), str(out)]
    c = lustre_checks(result)["layout"]
    assert (c["status"], c["effective"]) == ("applied", "3 component(s)")


@pytest.mark.mpi
def test_parallel_file_striped_once_by_rank_0(tmp_path, lustre):
    cfg = write_json(tmp_path / "s.json", {"version": 1, "lustre": {"stripe_count": 2}})
    result = run_job(mpi() + [kernel("vpicio"), "-n", "16K", "-t", "2", "-F", "-r", "-o", tmp_path], config=cfg)
    assert result.ok, result.stderr
    assert "vpicio verify: ok" in result.stdout
    setstripes = [c[-1] for c in calls(lustre) if c[0] == "setstripe"]
    assert sorted(os.path.basename(p) for p in setstripes) == ["vpicio_0000.h5", "vpicio_0001.h5"]
    created = [c for c in result.report.checks(layer="lustre")]
    assert {c["status"] for c in created} == {"applied", "not_applicable"}  # read phases: layout only at creation


@pytest.mark.mpi
def test_existing_file_not_truncated_keeps_its_layout(tmp_path, programs, lustre):
    cfg = write_json(tmp_path / "s.json", {"version": 1, "lustre": {"stripe_count": 8}})
    out = tmp_path / "data.bin"
    out.write_bytes(b"x" * 10)
    result = run_job(mpi() + [programs["mpiio_write"], out, 4096, 2, "independent"], config=cfg)
    assert result.ok
    assert calls(lustre) == []
    c = lustre_checks(result)["stripe_count"]
    assert c["status"] == "dropped" and "only at creation" in c["reason"]


def test_not_lustre_means_not_applied(tmp_path, programs, lustre, monkeypatch):
    monkeypatch.delenv("IOTUNER_TEST_FSTYPE")
    cfg = write_json(tmp_path / "s.json", {"version": 1, "lustre": {"stripe_count": 4}})
    result = run_job([programs["serial_h5"], tmp_path / "grid.h5"], config=cfg)
    assert result.ok
    assert calls(lustre) == []
    c = lustre_checks(result)["stripe_count"]
    assert c["status"] == "not_applicable" and "not Lustre" in c["reason"]


def test_failing_lfs_is_reported_and_the_job_goes_on(tmp_path, programs, lustre, monkeypatch):
    bad = tmp_path / "badlfs"
    bad.write_text("#!/bin/sh\necho 'setstripe: Operation not permitted' >&2\nexit 1\n")
    bad.chmod(0o755)
    monkeypatch.setenv("IOTUNER_LFS", str(bad))
    cfg = write_json(tmp_path / "s.json", {"version": 1, "lustre": {"stripe_count": 4}})
    result = run_job([programs["serial_h5"], tmp_path / "grid.h5"], config=cfg)
    assert result.ok and "serial_h5: ok" in result.stdout
    c = lustre_checks(result)["stripe_count"]
    assert c["status"] == "failed" and "Operation not permitted" in c["reason"]
