"""Smart mode: SmartIO's runtime workflow on the bundled kernels."""

import json
import statistics
import subprocess
import sys

import pytest

from conftest import h5diff, kernel, mpi, run_job

pytestmark = pytest.mark.mpi

HARMFUL = {"version": 1, "name": "harmful", "description": "test only",
           "rules": [{"id": 1, "title": "Force collective buffering through one aggregator", "source": "test",
                      "evaluated": False,
                      "cases": [{"when": {"files": "shared", "sequential": True},
                                 "set": {"hdf5.transfer_mode": "collective", "mpiio.romio_cb_write": "enable"}}]}]}


def smart_run(tmp_path, args, rules=None, **env):
    env = {"IOTUNER_SMART": "1", **env}
    if rules is not None:
        path = tmp_path / "rules.json"
        path.write_text(json.dumps(rules))
        env["IOTUNER_SMART_RULES"] = str(path)
    import os
    result = run_job(mpi() + args, env=dict(os.environ, **env))
    assert result.ok, result.stderr
    return result.report


def fired(phase):
    return {f["rule"] for f in phase["rules"]["fired"]}


def test_ior_like_insights_match_the_kernel_and_settings_apply_from_phase_1(tmp_path):
    # 7 timesteps, each a new H5Fcreate of a shared file, collective 1 MiB sequential transfers
    rep = smart_run(tmp_path, [kernel("h5ior"), "-b", "8M", "-x", "1M", "-m", "collective", "-p", "contiguous",
                               "-t", "7", "-F", "-o", tmp_path])
    phases = rep.data["smart"]["phases"]
    assert [p["occurrence"] for p in phases] == list(range(7))
    roles = [p["role"] for p in phases]
    # a probe (a drifting machine) can come only after two optimized phases
    assert roles[:3] == ["learn", "optimized", "optimized"]
    assert phases[0]["identity"].endswith("/h5ior_#.h5")
    ins = phases[0]["insights"]
    assert ins["write_transfer"] == "collective"
    assert ins["transfer_size"] == 1048576
    assert ins["write_locality"] == "sequential"
    assert ins["files"] == "shared"
    assert ins["processes"] == 2
    data = rep.data_phases()
    assert ins["file_system"] == data[0]["file_system"]
    assert ins["bytes_written"] == 2 * 8 * 1048576
    assert {1, 4, 5, 7} <= fired(phases[0]) and not fired(phases[0]) & {2, 3, 6, 9}
    # nothing before phase 1; from phase 1 on, the rules' settings, read back as applied
    assert data[0]["settings"] == []
    expected = {"transfer_mode": "independent", "alignment": "0,1048576", "mdc_initial_size": "8388608",
                "romio_cb_write": "disable"}
    for p, role in zip(data[1:], roles[1:]):
        got = {c["knob"]: (c["effective"], c["status"]) for c in p["settings"]}
        if role == "optimized":
            assert got == {k: (v, "applied") for k, v in expected.items()}, p["file"]
        else:  # a probe, or after a roll-back: the application's own settings
            assert got == {}, p["file"]


def test_flash_checkpoints_are_non_sequential_small_and_fire_other_rules(tmp_path):
    rep = smart_run(tmp_path, [kernel("flashio"), "-t", "3", "-o", tmp_path])
    learned = rep.data["smart"]["phases"][0]
    ins = learned["insights"]
    assert ins["write_locality"] in ("random", "strided")
    assert 0 < ins["transfer_size"] < 1048576
    assert ins["files"] == "shared"
    rules = fired(learned)
    assert {2, 4, 5, 6} <= rules and not rules & {1, 7}
    ior = {1, 4, 5, 7, 8}
    assert rules != ior


@pytest.mark.parametrize("name,args", [
    ("vpicio", ["-n", "64K"]), ("vorpalio", ["-b", "16,16,16"]), ("gcrmio", ["-g", "4"]),
    ("flashio", ["-b", "8"]), ("h5ior", ["-b", "4M", "-x", "256K"])])
def test_prediction_hit_fraction_on_bundled_kernels(tmp_path, name, args):
    rep = smart_run(tmp_path, [kernel(name), *args, "-t", "4", "-F", "-o", tmp_path])
    pred = rep.data["smart"]["prediction"]
    assert pred["hits"] + pred["misses"] > 20
    assert pred["hit_fraction"] >= 0.9, pred


def test_feedback_loop_rolls_back_a_harmful_rule(tmp_path):
    rep = smart_run(tmp_path, [kernel("h5ior"), "-b", "16M", "-x", "1M", "-t", "6", "-F", "-o", tmp_path],
                    rules=HARMFUL)
    smart = rep.data["smart"]
    assert smart["rules_table"].endswith("rules.json")
    roles = [p["role"] for p in smart["phases"]]
    # two slow phases, then a probe with the default settings confirms the rule did the harm
    assert roles == ["learn", "optimized", "optimized", "probe", "default", "default"]
    assert "below the reference" in smart["phases"][1]["feedback"]
    assert "the next phase is a probe" in smart["phases"][2]["feedback"]
    assert "rolled back rules 1" in smart["phases"][3]["feedback"]
    learned = smart["phases"][0]["bandwidth_mib_s"]
    assert all(p["bandwidth_mib_s"] < 0.75 * learned for p in smart["phases"][1:3])
    assert smart["phases"][3]["bandwidth_mib_s"] > 1.25 * max(p["bandwidth_mib_s"] for p in smart["phases"][1:3])
    data = rep.data_phases()
    assert all(c["effective"] == "enable" for c in data[1]["settings"] if c["knob"] == "romio_cb_write")
    assert all(p["settings"] == [] for p in data[3:])  # back to the application's own settings


def test_smart_output_equals_plain_output(tmp_path):
    args = [kernel("vpicio"), "-n", "64K", "-t", "3", "-F"]
    plain = subprocess.run(mpi() + args + ["-o", str(tmp_path / "plain")], capture_output=True, text=True)
    assert plain.returncode == 0
    smart_run(tmp_path, args + ["-o", tmp_path / "smart"])
    for step in range(3):
        name = f"vpicio_{step:04d}.h5"
        assert h5diff(tmp_path / "plain" / name, tmp_path / "smart" / name).returncode == 0


def test_smart_is_off_unless_asked(tmp_path):
    result = run_job(mpi() + [kernel("vpicio"), "-n", "16K", "-t", "2", "-F", "-o", tmp_path])
    assert result.ok and "smart" not in result.report.data


def iotuner(*args, **kw):
    return subprocess.run([sys.executable, "-m", "iotuner", *map(str, args)], capture_output=True, text=True, **kw)


def test_cli_smart_and_explain(tmp_path):
    rep = tmp_path / "run.json"
    r = iotuner("smart", "--report", rep, "--", *mpi(), kernel("h5ior"), "-b", "4M", "-t", "3", "-F", "-o", ".",
                cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Smart mode, per phase" in r.stdout and "optimized" in r.stdout and "predicted calls occurred" in r.stdout
    ex = iotuner("smart", "--explain", rep)
    assert ex.returncode == 0, ex.stderr
    assert "rule  1 Use independent I/O" in ex.stdout and "settings for the recurring phases" in ex.stdout
    # a run made with another rules table: explain says the decisions differ
    harmful = tmp_path / "harmful.json"
    harmful.write_text(json.dumps(HARMFUL))
    rep2 = tmp_path / "run2.json"
    r = iotuner("smart", "--rules", harmful, "--report", rep2, "--", *mpi(), kernel("h5ior"), "-b", "4M", "-t", "2",
                "-F", "-o", ".", cwd=tmp_path)
    assert r.returncode == 0
    ex = iotuner("smart", "--explain", rep2)
    assert ex.returncode == 1 and "another rules table" in ex.stdout
    bad = iotuner("smart", "--explain", tmp_path / "missing.json")
    assert bad.returncode == 1 and "cannot read" in bad.stderr


def test_poor_site_defaults_are_fixed_from_phase_1(tmp_path):
    """A site default that forces collective buffering through one aggregator (ROMIO_HINTS): the rules for a
    sequential shared file (independent transfer, romio_cb_write disable) make every phase after the first faster."""
    import tempfile
    hints = tmp_path / "romio_hints"
    hints.write_text("romio_cb_write enable\n")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as scratch:  # 1-10% noise there, 15-35% and drift on disk
        rep = smart_run(tmp_path, [kernel("h5ior"), "-b", "32M", "-x", "1M", "-t", "5", "-F", "-o", scratch],
                        ROMIO_HINTS=str(hints))
    phases = [p for p in rep.data_phases() if p["kind"] == "hdf5"]
    assert phases[0]["mpi_hints"]["romio_cb_write"] == "enable"  # the site's default, in phase 0
    assert all(p["mpi_hints"]["romio_cb_write"] == "disable" for p in phases[1:])
    learned = phases[0]["bandwidth_mib_s"]
    later = [p["bandwidth_mib_s"] for p in phases[1:]]
    # every recurring phase faster; typically 5-8x, but the machine drifts within a run
    assert min(later) > 1.3 * learned and statistics.median(later) > 2 * learned, [learned] + later
