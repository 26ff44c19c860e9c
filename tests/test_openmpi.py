"""Open MPI jobs: tuned and measured by the runtime built for Open MPI's ABI, left alone by another build.

libiotuner.so is compiled against one mpi.h: MPICH's here (an MPI_Comm is an int), and a second build against
Open MPI's (a pointer) sits in lib/openmpi/. `iotuner run` picks the build of the job's MPI (its launcher, or
the libmpi its program links). A build that meets the other ABI (a site preloading one library for every job)
must not crash the job: it sees the other ABI before MPI_Init, forwards every call untouched, applies no
settings, and says so once.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import h5diff, kernel, mpi, write_json
from iotuner import mpiabi, native, runner
from iotuner.run_report import load
from iotuner.tune.launch import local

KERNELS = Path(__file__).parent.parent / "kernels"
PROGRAMS = Path(__file__).parent / "programs"
# Open MPI refuses to run as root without both the flag and these
OMPI_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def _this_open_mpi() -> tuple[str, str, frozenset]:
    """This Open MPI's major version, its ROMIO io component and its fcoll components (ompi_info): 4, romio321
    and two_phase among them in Open MPI 4.1; 5, romio341 and no two_phase in 5.0."""
    info = shutil.which("ompi_info")
    out = subprocess.run([info], capture_output=True, text=True).stdout if info else ""
    major = next(iter(re.findall(r"Open MPI: (\d+)\.", out)), "4")
    romio = next(iter(re.findall(r"MCA io: (romio\d+) ", out)), "romio321")
    return major, romio, frozenset(re.findall(r"MCA fcoll: (\w+) ", out))


OMPI_MAJOR, ROMIO, FCOLLS = _this_open_mpi()
# an fcoll component other than the default (vulcan) that this Open MPI has
FCOLL = next((c for c in ("two_phase", "dynamic_gen2", "individual") if c in FCOLLS), "two_phase")


def _openmpi_hdf5() -> list[str]:
    if not (shutil.which("mpicc.openmpi") and shutil.which("mpirun.openmpi")):
        pytest.skip("needs Open MPI (openmpi-bin, libopenmpi-dev; scripts/setup.sh installs them)")
    r = subprocess.run(["pkg-config", "--cflags", "--libs", "hdf5-openmpi"], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip("needs Open MPI's parallel HDF5 (libhdf5-openmpi-dev)")
    return r.stdout.split()


@pytest.fixture(scope="module")
def vpicio_openmpi(tmp_path_factory) -> Path:
    """The vpicio kernel, built with Open MPI and Open MPI's HDF5 (1.10.8 too: the same HDF5 API, other MPI)."""
    flags = _openmpi_hdf5()
    exe = tmp_path_factory.mktemp("openmpi") / "vpicio"
    subprocess.run(
        [
            "mpicc.openmpi",
            "-O1",
            f"-I{KERNELS}",
            str(KERNELS / "vpicio.c"),
            str(KERNELS / "common.c"),
            str(KERNELS / "k_hdf5.c"),
            "-o",
            str(exe),
            *flags,
            "-lm",
        ],
        check=True,
    )
    return exe


def _openmpi_job(exe: Path, out: Path, *mca: str) -> list[str]:
    out.mkdir()
    return [
        "mpirun.openmpi",
        "--allow-run-as-root",
        "--oversubscribe",
        *mca,
        "-n",
        "2",
        str(exe),
        "-n",
        "16K",
        "-t",
        "2",
        "-r",
        "-o",
        str(out),
    ]


BYTES = 2 * 16384 * 8 * 4 * 2  # ranks x particles x variables x 4 bytes x steps


def _openmpi_runtime() -> Path:
    lib = native.runtime_library("openmpi")
    if native.library_abi(lib) != "openmpi":
        pytest.skip("no runtime built for Open MPI (needs mpicc.openmpi and h5pcc.openmpi at build time)")
    return lib


@pytest.mark.mpi
def test_iotuner_run_tunes_and_measures_an_open_mpi_job(tmp_path, vpicio_openmpi):
    """A 2-rank Open MPI job writing and reading one shared file over two steps: the Open MPI build is
    preloaded, the settings apply, and the report has the write and the read phase of both ranks, every byte
    once (Open MPI's own files in its session directory are not phases)."""
    _openmpi_runtime()
    env = dict(os.environ, **OMPI_ROOT)
    plain = subprocess.run(
        _openmpi_job(vpicio_openmpi, tmp_path / "plain"), env=env, capture_output=True, text=True, timeout=120
    )
    assert plain.returncode == 0 and "vpicio verify: ok" in plain.stdout, plain.stderr
    cfg = write_json(tmp_path / "s.json", {"version": 1, "hdf5": {"chunk_dims": [1024], "alignment": [0, "64K"]}})
    result = runner.run(
        _openmpi_job(vpicio_openmpi, tmp_path / "tuned"),
        config=cfg,
        report=tmp_path / "r.json",
        env=env,
        capture=True,
        timeout=120,
    )
    assert result.ok and "vpicio verify: ok" in result.stdout, result.stdout + result.stderr
    assert "warning" not in result.stderr, result.stderr
    report = result.report
    assert report.data["run"]["mpi_library"].startswith(f"Open MPI v{OMPI_MAJOR}")
    assert report.data["run"]["mpi_io_component"] == "ompio"  # Open MPI 4.1's and 5.0's default
    phases = report.phases
    assert [(p["kind"], p["ranks"], p["bytes_written"], p["bytes_read"]) for p in phases] == [
        ("hdf5", 2, BYTES, 0),
        ("hdf5", 2, 0, BYTES),
    ]
    assert report.data["totals"]["bytes_written"] == BYTES and report.data["totals"]["bytes_read"] == BYTES
    chunks = [c for c in report.checks(knob="chunk_dims") if c.get("dataset")]
    assert len(chunks) == 16 and {c["status"] for c in chunks} == {"applied"}  # 8 variables x 2 steps
    layout = subprocess.run(
        ["h5dump", "-p", "-H", str(tmp_path / "tuned" / "vpicio.h5")], capture_output=True, text=True
    ).stdout
    assert "CHUNKED" in layout and "CONTIGUOUS" not in layout
    assert h5diff(tmp_path / "plain" / "vpicio.h5", tmp_path / "tuned" / "vpicio.h5").returncode == 0


@pytest.mark.mpi
@pytest.mark.parametrize("component", ["ompio", ROMIO])
def test_hints_are_explained_by_the_io_component_that_opened_the_file(tmp_path, vpicio_openmpi, component):
    """Open MPI's MPI_File_get_info hands back every key it was given, so the read-back asks which io
    component opened the file (its MCA parameters, through MPI_T): OMPIO takes cb_nodes and cb_buffer_size
    and ignores ROMIO's other hints, naming its own parameter instead; romio321 (Open MPI 4.1) is ROMIO with
    every hint; romio341 (5.0) opens the file with an empty info, so ROMIO reads back its own defaults and every
    hint is dropped, with that cause named."""
    _openmpi_runtime()
    hints = {"romio_cb_write": "enable", "cb_config_list": "*:2", "cb_nodes": 2, "cb_buffer_size": "4M"}
    cfg = write_json(tmp_path / "s.json", {"version": 1, "mpiio": hints})
    mca = ["--mca", "io", component] if component != "ompio" else []
    result = runner.run(
        _openmpi_job(vpicio_openmpi, tmp_path / "out", *mca),
        config=cfg,
        report=tmp_path / "r.json",
        env=dict(os.environ, **OMPI_ROOT),
        capture=True,
        timeout=120,
    )
    assert result.ok, result.stdout + result.stderr
    assert result.report.data["run"]["mpi_io_component"] == component
    status = {c["knob"]: (c["status"], c.get("reason") or "") for c in result.report.checks() if c["knob"] in hints}
    if component == "ompio":
        assert status["cb_nodes"][0] == status["cb_buffer_size"][0] == "applied"
        assert status["romio_cb_write"] == ("dropped", "ignored by OMPIO, use ompio.fcoll instead")
        assert status["cb_config_list"] == ("dropped", "ignored by OMPIO, use ompio.num_aggregators instead")
    elif component == "romio341":
        assert {st for st, _ in status.values()} == {"dropped"} and len(status) == len(hints), status
        assert all(
            "Open MPI 5's romio341, which opens the file with an empty info" in why for _, why in status.values()
        )
        effective = {c["knob"]: c["effective"] for c in result.report.checks() if c["knob"] in hints}
        assert effective["cb_buffer_size"] == "16777216" and effective["romio_cb_write"] == "automatic"  # ROMIO's
    else:
        assert {st for st, _ in status.values()} == {"applied"}, status


@pytest.mark.mpi
def test_the_mpich_build_leaves_an_open_mpi_job_untouched(tmp_path, vpicio_openmpi):
    """A site that preloads the MPICH build for every job (no `iotuner run` to pick): the Open MPI job runs
    as without it (it was a segmentation fault in MPI_Init, exit 139), with one warning."""
    env = dict(os.environ, **OMPI_ROOT)
    plain = subprocess.run(
        _openmpi_job(vpicio_openmpi, tmp_path / "plain"), env=env, capture_output=True, text=True, timeout=120
    )
    assert plain.returncode == 0 and "vpicio verify: ok" in plain.stdout, plain.stderr
    # settings that would change the file's layout if they were applied
    cfg = write_json(tmp_path / "s.json", {"version": 1, "hdf5": {"chunk_dims": [1024], "alignment": [0, "64K"]}})
    env = dict(runner.environment(cfg, tmp_path / "r.json"), **OMPI_ROOT)  # no command: the main (MPICH) build
    assert native.library_abi(Path(env["LD_PRELOAD"].split(":")[0])) == "mpich"
    r = subprocess.run(
        _openmpi_job(vpicio_openmpi, tmp_path / "tuned"), env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "vpicio verify: ok" in r.stdout
    warnings = [line for line in (r.stdout + r.stderr).splitlines() if "warning" in line]
    assert len(warnings) == 1, r.stdout + r.stderr  # rank 0 only
    assert f"this job uses Open MPI v{OMPI_MAJOR}" in warnings[0] and "built for (MPICH)" in warnings[0]
    assert h5diff(tmp_path / "plain" / "vpicio.h5", tmp_path / "tuned" / "vpicio.h5").returncode == 0
    layout = subprocess.run(
        ["h5dump", "-p", "-H", str(tmp_path / "tuned" / "vpicio.h5")], capture_output=True, text=True
    ).stdout
    assert "CONTIGUOUS" in layout and "CHUNKED" not in layout  # no settings applied
    assert not (tmp_path / "r.json").exists()


@pytest.mark.mpi
def test_the_open_mpi_build_leaves_an_mpich_job_untouched(tmp_path):
    """The other way round: the Open MPI build preloaded into an MPICH job forwards everything."""
    env = runner.environment(None, tmp_path / "r.json")
    env["LD_PRELOAD"] = str(_openmpi_runtime())
    r = subprocess.run(
        [*mpi(), kernel("vpicio"), "-n", "16K", "-r", "-o", str(tmp_path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and "vpicio verify: ok" in r.stdout, r.stdout + r.stderr
    warnings = [line for line in (r.stdout + r.stderr).splitlines() if "warning" in line]
    assert len(warnings) == 1 and "built for (Open MPI)" in warnings[0], r.stdout + r.stderr
    assert not (tmp_path / "r.json").exists()


def test_iotuner_run_picks_the_build_of_the_jobs_mpi(tmp_path, vpicio_openmpi):
    """By the launcher's real name (Debian's alternatives and a module's mpirun are links to it), else by the
    libmpi the program loads; a program of no known MPI gets the main build."""
    lib = _openmpi_runtime()
    assert mpiabi.command_abi(["mpirun.openmpi", "-n", "2", "anything"]) == "openmpi"
    assert mpiabi.command_abi(["mpiexec.mpich", "-n", "2", "anything"]) == "mpich"
    assert mpiabi.command_abi(["srun", "-n", "2", str(vpicio_openmpi)]) == "openmpi"  # srun names no MPI
    assert mpiabi.command_abi([kernel("vpicio")]) == "mpich"
    assert mpiabi.command_abi(["sh", "-c", "true"]) is None
    env = runner.environment(None, tmp_path / "r.json", command=["srun", str(vpicio_openmpi)])
    assert env["LD_PRELOAD"] == str(lib)
    main = native.runtime_library()
    assert runner.environment(None, tmp_path / "r.json", command=["sh"])["LD_PRELOAD"] == str(main) != str(lib)
    assert native.runtime_abis() == ["mpich", "openmpi"]


@pytest.mark.mpi
@pytest.mark.parametrize("build", ["mpich", "openmpi"])
def test_an_open_mpi_loaded_after_start_is_seen_at_mpi_init(tmp_path, build):
    """A process that loads its MPI with dlopen (Python's mpi4py does) after the library started: MPI_Init
    finds the other ABI (or, for the Open MPI build, Open MPI's handles unbound: they are weak references
    bound at load), and every later MPI call goes straight to Open MPI."""
    _openmpi_hdf5()
    exe = tmp_path / "late_mpi"
    subprocess.run(["gcc", "-O1", str(PROGRAMS / "late_mpi.c"), "-o", str(exe), "-ldl"], check=True)
    env = dict(runner.environment(None, tmp_path / "r.json"), **OMPI_ROOT)
    if build == "openmpi":
        env["LD_PRELOAD"] = str(_openmpi_runtime())
    r = subprocess.run(
        [str(exe), "libmpi.so.40", str(tmp_path / "data.bin")], env=env, capture_output=True, text=True, timeout=60
    )
    assert r.returncode == 0 and "late_mpi: ok" in r.stdout, r.stdout + r.stderr
    assert r.stderr.count("iotuner: warning") == 1 and "Open MPI" in r.stderr
    assert (tmp_path / "data.bin").read_bytes() == b"".join(i.to_bytes(4, "little") for i in range(256))
    assert not (tmp_path / "r.json").exists()  # nothing measured, no report


@pytest.mark.mpi
def test_the_mpich_build_still_tunes_an_mpich_job(tmp_path):
    """The trampolines reach the wrappers in the ABI the library was built for: settings apply."""
    cfg = write_json(tmp_path / "s.json", {"version": 1, "hdf5": {"chunk_dims": [1024]}})
    result = runner.run(
        [*mpi(), kernel("vpicio"), "-n", "16K", "-o", str(tmp_path)],
        config=cfg,
        report=tmp_path / "r.json",
        capture=True,
        timeout=120,
    )
    assert result.ok and "warning" not in result.stderr, result.stderr
    checks = [c for c in result.report.checks(knob="chunk_dims") if c.get("dataset")]
    assert len(checks) == 8 and {c["status"] for c in checks} == {"applied"}


def test_the_tune_launcher_skips_an_mpiexec_that_debian_alternatives_pick(tmp_path, monkeypatch):
    """Installing Open MPI flips a bare mpiexec to Open MPI's; the launcher then takes MPICH's own. A real
    mpiexec (a cluster's module) is taken as it is."""
    if not (shutil.which("mpiexec.mpich") and local._alternative("/usr/bin/mpiexec")):
        pytest.skip("needs Debian's mpiexec alternative and mpiexec.mpich")
    (tmp_path / "alt").mkdir()
    (tmp_path / "alt" / "mpiexec").symlink_to("/usr/bin/mpiexec")
    monkeypatch.setenv("PATH", f"{tmp_path / 'alt'}{os.pathsep}{os.environ['PATH']}")
    assert local.default_mpiexec() == "mpiexec.mpich"
    module = tmp_path / "module"
    module.mkdir()
    (module / "mpiexec").write_text("#!/bin/sh\n")
    (module / "mpiexec").chmod(0o755)
    monkeypatch.setenv("PATH", f"{module}{os.pathsep}{os.environ['PATH']}")
    assert local.default_mpiexec() == "mpiexec"


OMPIO_KNOBS = {"fcoll": FCOLL, "num_aggregators": 1, "bytes_per_agg": "8M", "cycle_buffer_size": "64M"}
OMPIO_READ_BACK = {"fcoll": FCOLL, "num_aggregators": "1", "bytes_per_agg": "8388608", "cycle_buffer_size": "67108864"}


def _ompio_checks(report) -> dict[str, tuple[str, str | None, str]]:
    """knob -> (status, effective, reason), the same in every phase"""
    seen = {}
    for phase in report.phases:
        for c in phase["settings"]:
            if c["layer"] == "ompio":
                entry = (c["status"], c.get("effective"), c.get("reason") or "")
                assert seen.setdefault(c["knob"], entry) == entry
    return seen


@pytest.mark.mpi
@pytest.mark.parametrize("component", ["ompio", ROMIO])
def test_ompio_knobs_are_set_before_mpi_init_and_read_back(tmp_path, vpicio_openmpi, component):
    """`iotuner run` puts the document's OMPIO knobs in the job's environment (OMPI_MCA_*); the runtime reads
    Open MPI's values back through MPI_T at every open. Under ROMIO (romio321, romio341) they do not apply,
    and say so."""
    _openmpi_runtime()
    cfg = write_json(tmp_path / "s.json", {"version": 1, "ompio": OMPIO_KNOBS})
    env = runner.environment(cfg, tmp_path / "r.json")
    assert env["OMPI_MCA_fcoll"] == FCOLL and env["OMPI_MCA_io_ompio_bytes_per_agg"] == "8388608"
    mca = ["--mca", "io", component] if component != "ompio" else []
    result = runner.run(
        _openmpi_job(vpicio_openmpi, tmp_path / "out", *mca),
        config=cfg,
        report=tmp_path / "r.json",
        env=dict(os.environ, **OMPI_ROOT),
        capture=True,
        timeout=120,
    )
    assert result.ok and "vpicio verify: ok" in result.stdout, result.stdout + result.stderr
    checks = _ompio_checks(result.report)
    assert set(checks) == set(OMPIO_KNOBS) and len(result.report.phases) == 2
    if component == "ompio":
        assert {k: (st, eff) for k, (st, eff, _) in checks.items()} == {
            k: ("applied", v) for k, v in OMPIO_READ_BACK.items()
        }
    else:
        assert {st for st, _, _ in checks.values()} == {"not_applicable"}
        assert all(ROMIO in why for _, _, why in checks.values())


@pytest.mark.mpi
def test_ompio_knobs_preloaded_without_iotuner_run_are_reported_changed(tmp_path, vpicio_openmpi):
    """The library preloaded by hand cannot set Open MPI's parameters before MPI_Init in every process:
    Open MPI's defaults are read back, and the reason says how to set them."""
    lib = _openmpi_runtime()
    cfg = write_json(tmp_path / "s.json", {"version": 1, "ompio": {"bytes_per_agg": "8M"}})
    env = {k: v for k, v in runner.environment(cfg, tmp_path / "r.json").items() if not k.startswith("OMPI_MCA_")}
    env.update(OMPI_ROOT, LD_PRELOAD=str(lib))
    r = subprocess.run(
        _openmpi_job(vpicio_openmpi, tmp_path / "out"), env=env, capture_output=True, text=True, timeout=120
    )
    assert r.returncode == 0, r.stdout + r.stderr
    checks = _ompio_checks(load(tmp_path / "r.json"))
    status, effective, why = checks["bytes_per_agg"]
    assert (status, effective) == ("changed", "33554432")  # Open MPI 4.1's default
    assert "OMPI_MCA_io_ompio_bytes_per_agg" in why


@pytest.mark.mpi
def test_ompio_knobs_do_not_apply_to_an_mpich_job(tmp_path):
    cfg = write_json(tmp_path / "s.json", {"version": 1, "ompio": {"fcoll": "individual"}})
    result = runner.run(
        [*mpi(), kernel("vpicio"), "-n", "16K", "-o", str(tmp_path)],
        config=cfg,
        report=tmp_path / "r.json",
        capture=True,
        timeout=120,
    )
    assert result.ok, result.stderr
    assert _ompio_checks(result.report)["fcoll"][0] == "not_applicable"


def test_ompio_knobs_are_checked_like_any_other():
    core = native.core()
    assert core.check_settings('{"version": 1, "ompio": {"bytes_per_agg": "1G"}}')["groups"][0]["ompio"] == {
        "bytes_per_agg": 1 << 30
    }
    with pytest.raises(ValueError, match="bytes_per_agg"):
        core.check_settings('{"version": 1, "ompio": {"bytes_per_agg": "2G"}}')  # Open MPI keeps it in an int
    with pytest.raises(ValueError, match="fcoll"):
        core.check_settings('{"version": 1, "ompio": {"fcoll": "romio"}}')


def test_a_slurm_job_script_preloads_the_build_of_the_applications_mpi(tmp_path, vpicio_openmpi):
    """`iotuner tune --launcher slurm` writes a batch script per trial: srun names no MPI, so the program's
    libmpi decides; the OMPIO knobs travel as OMPI_MCA_* (srun passes its environment to the tasks)."""
    from iotuner.tune import study_config as cfg
    from iotuner.tune.launch import slurm

    lib = _openmpi_runtime()
    doc = write_json(tmp_path / "s.json", {"version": 1, "ompio": {"num_aggregators": 2}})
    launcher = slurm.Slurm(2, cfg.SlurmSpec(time_limit="5"), "iotuner-test")
    script = launcher.batch_script([str(vpicio_openmpi)], config=doc, report=tmp_path / "r.json", cwd=tmp_path)
    assert f"LD_PRELOAD={lib}" in script and "OMPI_MCA_io_ompio_num_aggregators=2" in script
    script = launcher.batch_script([kernel("vpicio")], config=None, report=tmp_path / "r.json", cwd=tmp_path)
    assert f"LD_PRELOAD={native.runtime_library()} " in script and "OMPI_MCA" not in script


def test_counting_mode_is_refused_for_an_open_mpi_job(tmp_path):
    """libiotuner_ops.so wraps ROMIO's PMPI calls with MPICH's types: never preloaded into Open MPI ranks."""
    _openmpi_runtime()
    with pytest.raises(native.NativeMissing, match="counting mode needs the MPI the library was built for"):
        runner.environment(None, tmp_path / "r.json", count_ops=True, command=["mpirun.openmpi", "-n", "2", "x"])
    env = runner.environment(None, tmp_path / "r.json", count_ops=True, command=["mpiexec.mpich", "-n", "2", "x"])
    assert env["LD_PRELOAD"].endswith("libiotuner_ops.so")


# OMPIO's two_phase collective component is 15-32x slower than its default (vulcan) for h5ior's 1 MiB
# collective writes here (2 ranks, 32 MiB each, /dev/shm, interleaved under the timing lock; 2.3-3.5x with
# 16 MiB transfers): a harmful baseline that the ompio space can recover from (docs/settings.md)
TWO_PHASE = {"version": 1, "ompio": {"fcoll": "two_phase"}}


@pytest.mark.mpi
@pytest.mark.slow
@pytest.mark.serial  # a tuning judged on measured gains
def test_tune_recovers_an_open_mpi_kernel_from_ompios_two_phase(tmp_path, monkeypatch):
    """`iotuner tune --space ompio` on the Open MPI build of h5ior (found by name: mpirun.openmpi jobs have
    libexec/iotuner/openmpi first on their PATH) from fcoll=two_phase: a significant gain, confirmed
    interleaved with the baseline, which holds for the best settings file under iotuner run."""
    from perf import Claim, assert_ratio, settings_ratio

    _openmpi_runtime()
    if "h5ior" not in native.bundled_kernels("openmpi"):
        pytest.skip("no kernels built for Open MPI")
    if "two_phase" not in FCOLLS:
        pytest.skip(f"Open MPI {OMPI_MAJOR} has no fcoll=two_phase (Open MPI 5 dropped it)")
    for k, v in OMPI_ROOT.items():
        monkeypatch.setenv(k, v)
    baseline = write_json(tmp_path / "two_phase.json", TWO_PHASE)
    app = ["h5ior", "-b", "32M", "-t", "1M"]
    with tempfile.TemporaryDirectory(dir="/dev/shm") as scratch:  # 1-10% noise there, 15-35% on disk
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "iotuner",
                "tune",
                "--space",
                "ompio",
                "--baseline",
                baseline,
                "--mpiexec",
                "mpirun.openmpi",
                "--trials",
                "10",
                "--strategy",
                "random",
                "--objective",
                "write-bw",
                "--study",
                "ompio",
                "--out",
                tmp_path / "out",
                "--scratch",
                scratch,
                "--",
                *app,
                "-o",
                "{scratch}",
            ],
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert r.returncode == 0, r.stderr + r.stdout[-3000:]
        summary = json.loads((tmp_path / "out" / "summary.json").read_text())
        verdict = summary["verdict"]
        assert verdict["significant"] is True and verdict["gain"] >= 3.0, (verdict, summary["notes"])
        best = tmp_path / "out" / "best.json"
        assert (
            json.loads(best.read_text())["groups"][0]["ompio"]["fcoll"] != "two_phase"
            or json.loads(best.read_text())["groups"][0]["hdf5"]["transfer_mode"] == "independent"
        )

        # the kernel of Open MPI's set ran, and Open MPI read the knobs back
        command = ["mpirun.openmpi", "-n", "2", *app, "-o", scratch]
        result = runner.run(command, config=best, report=tmp_path / "best-report.json", capture=True, timeout=120)
        assert result.ok, result.stdout + result.stderr
        assert result.report.data["run"]["mpi_library"].startswith("Open MPI")
        assert {st for st, _, _ in _ompio_checks(result.report).values()} == {"applied"}
        # the best settings file, as is, against the baseline, in interleaved pairs
        assert_ratio(settings_ratio(best, baseline, command, tmp_path), Claim(above=3.0), most=12)


@pytest.mark.mpi
def test_every_trial_of_the_ompio_space_runs_on_this_open_mpi(tmp_path, monkeypatch):
    """The ompio space offers only the fcoll components this Open MPI has (Open MPI 5 has no two_phase): a
    grid over its fcoll values has no failing trial."""
    from iotuner.tune import space
    from iotuner.tune.store import Store

    _openmpi_runtime()
    if "h5ior" not in native.bundled_kernels("openmpi"):
        pytest.skip("no kernels built for Open MPI")
    for k, v in OMPI_ROOT.items():
        monkeypatch.setenv(k, v)
    (fcoll,) = [d for d in space.ompio().dimensions if d.knob == "ompio.fcoll"]
    assert set(fcoll.values) <= FCOLLS
    # h5ior's transfers are collective: every fcoll component writes
    grid = write_json(
        tmp_path / "space.json",
        {"name": "fcoll", "dimensions": [{"knob": "ompio.fcoll", "values": list(fcoll.values)}]},
    )
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "iotuner",
            "tune",
            "--space",
            grid,
            "--mpiexec",
            "mpirun.openmpi",
            "--strategy",
            "grid",
            "--trials",
            str(len(fcoll.values)),
            "--confirm-top",
            "1",
            "--confirm-rounds",
            "1",
            "--objective",
            "write-bw",
            "--study",
            "fcoll",
            "--out",
            tmp_path / "out",
            "--",
            "h5ior",
            "-b",
            "2M",
            "-t",
            "1M",
            "-o",
            "{scratch}",
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert r.returncode == 0, r.stderr + r.stdout[-3000:]
    trials = [
        t
        for t in Store.open(f"sqlite:///{tmp_path / 'out' / 'study.db'}", "fcoll", heartbeat_s=None).trials.records()
        if t.kind == "trial"
    ]
    assert {t.settings["ompio.fcoll"] for t in trials} == set(fcoll.values)
    assert {t.state for t in trials} == {"COMPLETE"}, [t.error for t in trials if t.state != "COMPLETE"]


def test_a_spawned_group_reports_beside_the_job_never_over_it(tmp_path):
    """MPI_Comm_spawn's processes form a world of their own: their rank 0 used to write its report over the
    job's (1 rank and the child's file, where the job had 2 ranks). Now the job's report keeps its ranks and
    says that spawned processes' I/O is not in it; the group's report lies beside it, and says it is a part.
    (Open MPI: MPICH 4.0.2's spawn fails here without iotuner too.)"""
    _openmpi_hdf5()
    exe = tmp_path / "spawn_io"
    subprocess.run(["mpicc.openmpi", "-O1", str(PROGRAMS / "spawn_io.c"), "-o", str(exe)], check=True)
    # Open MPI 5 connects a spawned group over TCP only, and leaves loopback out by default (no other
    # interface in a container: "unable to reach each other" without iotuner as with it)
    env = dict(os.environ, **OMPI_ROOT, OMPI_MCA_btl_tcp_if_include="lo")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as scratch:
        argv = ["mpirun.openmpi", "--allow-run-as-root", "--oversubscribe", "-n", "2", str(exe), f"{scratch}/s.bin"]
        result = runner.run(argv, report=tmp_path / "r.json", env=env, capture=True, timeout=120)
        if not result.ok:
            try:
                plain = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120, check=False)
                failed, why = plain.returncode != 0, plain.stderr[-500:]
            except subprocess.TimeoutExpired as e:
                failed, why = True, f"hung for {e.timeout} s"
            if failed:
                pytest.skip(f"this Open MPI cannot spawn here without iotuner either: {why}")
    assert result.ok and result.report is not None, result.stderr
    job = result.report
    assert job.run["ranks"] == 2
    assert [(p["file"].rsplit("/", 1)[-1], p["ranks"], p["bytes_written"]) for p in job.data_phases()] == [
        ("s.bin", 2, 2 << 20)
    ]
    assert "started 1 process(es) with MPI_Comm_spawn" in (job.incomplete or ""), job.incomplete
    (beside,) = tmp_path.glob("r.spawned-*.json")
    group = load(beside)
    assert group.run["ranks"] == 1 and "MPI_Comm_spawn started" in (group.incomplete or "")
    assert [(p["file"].rsplit("/", 1)[-1], p["bytes_written"]) for p in group.data_phases()] == [
        ("s.bin.child", 3 << 20)
    ]
