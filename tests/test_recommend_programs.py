"""advise on one default run's report recommends settings that reach at least 0.8 of the best an exhaustive
interleaved sweep found for the program (the sweeps and their best settings: docs/results.md, "One run is
enough to recommend"). Each sample runs the recommendation, the sweep's best and the default in turn (the
order rotating), and the claim is judged on the ratio of I/O times with a margin from their spread
(tests/perf.py); more samples are taken while the noise leaves it undecided.

The model needs a calibration: this machine's when it has one, else the one recorded with the sweeps
(tests/data/calibration-2core.json.gz, `iotuner calibrate` on the 2-core machine the sweeps ran on)."""

import gzip
import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from conftest import kernel, mpi, run_job
from iotuner import native
from iotuner.advise import analysis, checks
from iotuner.perfmodel.calibration import default_path
from perf import Claim, assert_claims

pytestmark = [pytest.mark.mpi, pytest.mark.serial]  # serial: compares speeds

DATA = Path(__file__).parent / "data"

# name: (ranks, the program and its arguments ({scratch}: where it writes), the sweep's best settings[, the MPI
# family it runs under when not MPICH: a kernel built against another MPI, as PnetCDF and netCDF's on Debian])
PROGRAMS = {
    # a strided collective MPI-IO program: 2 ranks interleave 64 KiB blocks through a view, 16 calls each
    "strided collective": (
        2,
        ["two_phase", "{scratch}/d.bin", 65536, 256, "strided", "both", 16],
        {"mpiio": {"romio_cb_write": "disable", "romio_cb_read": "disable", "romio_ds_read": "disable"}},
    ),
    # a collective write at more ranks than cores: 4 ranks, 1 MiB blocks, contiguous per rank, 8 calls each
    "collective write, 4 ranks": (
        4,
        ["two_phase", "{scratch}/d.bin", 1048576, 8, "contiguous", "write", 8],
        {"mpiio": {"romio_cb_write": "disable", "romio_ds_write": "disable"}},
    ),
    # the bundled VPIC-IO kernel: 8 1-D variables of 1M particles per rank, collective H5Dwrite
    "vpicio": (
        2,
        ["kernel:vpicio", "-n", "1M", "-o", "{scratch}"],
        {
            "mpiio": {"romio_cb_write": "disable", "cb_nodes": 2, "cb_config_list": "*:2"},
            "hdf5": {"transfer_mode": "independent"},
        },
    ),
    # the bundled E3SM kernel through PnetCDF under Open MPI's OMPIO: 4,096 columns in blocks of 16 dealt to the 2
    # ranks in turn, 2 records, written and read back
    "e3smio": (
        2,
        ["kernel:e3smio", "-c", "4096", "-d", "16", "-t", "2", "-r", "-o", "{scratch}"],
        {"ompio": {"fcoll": "two_phase", "num_aggregators": 2}},
        "openmpi",
    ),
    # the bundled h5ior kernel (IOR's HDF5 backend): 128 MiB per rank in 1 MiB collective H5Dwrite calls
    "h5ior": (
        2,
        ["kernel:h5ior", "-b", "128M", "-o", "{scratch}"],
        {"mpiio": {"romio_cb_write": "enable"}, "hdf5": {"transfer_mode": "independent"}},
    ),
    # e3smio's fields through parallel netCDF-4 (HDF5 underneath): 8,192 columns in blocks of 64, one collective
    # H5Dwrite of 3 KiB per block and field, 2 steps, read back
    "e3smio_nc4": (
        2,
        ["kernel:e3smio_nc4", "-c", "8192", "-t", "2", "-r", "-o", "{scratch}"],
        {"hdf5": {"transfer_mode": "independent"}},
        "openmpi",
    ),
    # the bundled VORPAL-IO kernel: a 256x128x128 block of 3 float64 components per rank, a 3-D hyperslab
    # (noncontiguous in the file: the ranks split x), collective H5Dwrite
    "vorpalio": (
        2,
        ["kernel:vorpalio", "-b", "256,128,128", "-o", "{scratch}"],
        {"mpiio": {"romio_cb_write": "disable"}},
    ),
    # the bundled FLASH-IO kernel: a checkpoint of 1,024 blocks of 8^3 zones per rank, 24 unknowns (one dataset
    # each, collective H5Dwrite), rank 0's header and the blocks' tree metadata
    "flashio": (
        2,
        ["kernel:flashio", "-b", "1024", "-o", "{scratch}"],
        {
            "mpiio": {"romio_cb_write": "enable", "cb_nodes": 2, "cb_config_list": "*:2"},
            "hdf5": {"transfer_mode": "independent"},
        },
    ),
    # the bundled GCRM-IO kernel: resolution 6 (40,962 cells), 26 levels, [levels, cells] and [levels, edges]
    # fields split by cells (a call of 26 pieces a rank, interleaved with the other rank's), collective H5Dwrite
    "gcrmio": (
        2,
        ["kernel:gcrmio", "-g", "6", "-o", "{scratch}"],
        {"mpiio": {"romio_cb_write": "enable"}, "hdf5": {"transfer_mode": "independent"}},
    ),
    # the bundled BAND-IO kernel: the column bands of a [262144, 32] float64 dataset, 16 columns a rank, 8
    # collective H5Dwrite of 32,768 rows each (a 128-byte piece a row in the contiguous layout), read back
    "bandio": (
        2,
        ["kernel:bandio", "-n", "256K", "-c", "16", "-s", "32K", "-g", "1", "-r", "-o", "{scratch}"],
        {"hdf5": {"chunk_dims": [32768, 16]}, "mpiio": {"romio_cb_read": "disable"}},
    ),
}


# an MPI family's launcher, and the environment it needs here (Open MPI refuses root without leave)
LAUNCHERS = {"openmpi": ("mpirun.openmpi", {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})}


def _arg(a, programs: dict, scratch: str, family: str | None = None) -> str:
    """A test program's path, a bundled kernel's ("kernel:NAME", the build for `family`), or an argument with
    the scratch directory."""
    if a in programs:
        return str(programs[a])
    if str(a).startswith("kernel:"):
        name = str(a)[len("kernel:") :]
        if family is None:
            return kernel(name)
        if name not in native.bundled_kernels(family):
            pytest.skip(f"{name} was not built for {family} (its libraries were not found at build time)")
        return str(native.executable(name, family))
    return str(a).replace("{scratch}", scratch)


def _launcher(ranks: int, family: str | None, monkeypatch) -> list[str]:
    if family is None:
        return mpi(ranks)
    launcher, env = LAUNCHERS[family]
    if not shutil.which(launcher):
        pytest.skip(f"{launcher} is not installed")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    return [launcher, "-n", str(ranks)]


def _calibration(tmp_path: Path) -> Path:
    here = default_path()
    if here.exists():
        return here
    out = tmp_path / "calibration.json"
    out.write_bytes(gzip.decompress((DATA / "calibration-2core.json.gz").read_bytes()))
    return out


def _io_time(command: list, config: Path, report: Path) -> float:
    result = run_job(command, config=config, report=report)
    assert result.ok and result.report is not None, result.stderr
    t = result.report.totals
    return t["write_time_s"] + t["read_time_s"]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_advise_on_one_default_run_reaches_the_sweep_best(name, programs, tmp_path, monkeypatch):
    ranks, args, best, *family = PROGRAMS[name]
    family = family[0] if family else None
    shm = Path("/dev/shm")
    root = shm if shm.is_dir() and os.access(shm, os.W_OK) else tmp_path
    with tempfile.TemporaryDirectory(prefix="iotuner-recommend-", dir=root) as scratch:
        command = _launcher(ranks, family, monkeypatch) + [_arg(a, programs, scratch, family) for a in args]
        default = tmp_path / "default.json"
        default.write_text(json.dumps({"version": 1}))
        run = tmp_path / "run.json"
        assert _io_time(command, default, run) > 0
        advice = analysis.advise_profile(
            analysis.load(run), checks.thresholds(), str(run), calibration=_calibration(tmp_path)
        )
        first = advice["recommendations"][0]
        recommended = tmp_path / "recommended.json"
        recommended.write_text(json.dumps(first["document"]))
        sweep_best = tmp_path / "best.json"
        sweep_best.write_text(json.dumps({"version": 1, **best}))
        configs = [recommended, sweep_best, default]

        def sample(i: int) -> dict[str, float]:
            times = {}
            for k in range(3):  # the order rotates, so a drift hits each side alike
                cfg = configs[(i + k) % 3]
                times[cfg.stem] = _io_time(command, cfg, tmp_path / f"{cfg.stem}-{i}.json")
            print(f"sample {i}: {times}")
            return {"recommended vs best": times["best"] / times["recommended"]}

        print(f"{name}: recommended {first['settings']} ({first['sources']}, {first['predicted']})")
        assert_claims(sample, {"recommended vs best": Claim(above=0.8)}, first=4, most=24)
