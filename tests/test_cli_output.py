"""Machine-readable output: show --json/--csv, kernels --json, show of a tune directory, kernels by name."""

import csv
import io
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import kernel, mpi

DATA = Path(__file__).parent / "data"


def iotuner(*args, **kw):
    return subprocess.run([sys.executable, "-m", "iotuner", *map(str, args)], capture_output=True, text=True, **kw)


def test_show_csv_is_one_line_per_phase():
    doc = json.loads((DATA / "bad_run_report.json").read_text())
    r = iotuner("show", DATA / "bad_run_report.json", "--csv")
    assert r.returncode == 0
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert len(rows) == len(doc["phases"])
    assert rows[0]["file"] == doc["phases"][0]["file"]
    assert float(rows[0]["bandwidth_mib_s"]) == pytest.approx(doc["phases"][0]["bandwidth_mib_s"])
    assert json.loads(iotuner("show", DATA / "bad_run_report.json", "--json").stdout) == doc


def test_kernels_json_lists_kernels_only_with_descriptions():
    r = iotuner("kernels", "--json")
    rows = json.loads(r.stdout)
    names = {k["name"] for k in rows}
    # every kernel the build makes (kernels/CMakeLists.txt), none forgotten
    cmake = (Path(__file__).parents[1] / "kernels" / "CMakeLists.txt").read_text()
    built = re.search(r"set\(IOTUNER_KERNELS ([^)]*)\)", cmake).group(1).split()
    netcdf = {"e3smio", "e3smio_nc4"}  # built where PnetCDF / parallel netCDF-4 are found, with their MPI
    assert set(built) <= names <= set(built) | netcdf and len(built) >= 6, (names, built)
    assert not any(n.startswith("bench_") for n in names)
    assert all(k["description"] and "\n" not in k["description"] and Path(k["path"]).is_file() for k in rows)
    assert all(k["mpi"] in ("mpich", "openmpi") for k in rows)


@pytest.mark.slow
def test_show_reprints_a_finished_tuning(tmp_path):
    out = tmp_path / "t"
    tuned = iotuner("tune", "--synthetic", "ufs", "--trials", "3", "--out", out)
    assert tuned.returncode == 0, tuned.stderr
    r = iotuner("show", out)
    assert r.returncode == 0, r.stderr
    start = tuned.stdout.index("study synthetic-ufs:")
    end = tuned.stdout.index("results:")  # the path may go on a line of its own (a long tmp_path under xdist)
    assert tuned.stdout[start:end] in r.stdout  # the same lines tune printed at its end
    assert iotuner("show", tmp_path).returncode == 2  # a directory that is no tune output


@pytest.mark.mpi
def test_a_kernel_runs_by_name(tmp_path):
    r = iotuner("run", "--", *mpi(), "h5ior", "-b", "1M", "-t", "256K", "-o", tmp_path, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "h5ior.h5" in r.stdout


@pytest.mark.mpi
def test_run_json_out_keeps_the_application_stdout_clean(programs, tmp_path):
    app = [*mpi(), programs["chunk_fallback"], tmp_path / "c.h5"]
    alone = subprocess.run(list(map(str, app)), capture_output=True, text=True, cwd=tmp_path)
    assert alone.returncode == 0 and alone.stdout.strip()
    r = iotuner("run", "--json-out", tmp_path / "r.json", "--", *app, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout == alone.stdout  # the application's stdout, byte for byte; iotuner's tables on stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["kind"] == "iotuner-run-report" and any(p["file"].endswith("c.h5") for p in report["phases"])
    assert "c.h5" in r.stderr


def test_check_warns_on_near_misses_in_every_layer(tmp_path):
    doc = tmp_path / "s.json"
    doc.write_text(
        '{"version": 1, "mpiio": {"cb_nodez": 4, "romio_lustre_co_ratio": 2, "site_hint": 1},'
        ' "groups": [{"file": "a.h5", "mpiio": {"romio_cb_writ": "enable"}}]}'
    )
    r = iotuner("check", doc)
    assert r.returncode == 0  # unknown hints pass through
    warnings = [ln for ln in r.stderr.splitlines() if "warning" in ln]
    assert len(warnings) == 2, r.stderr  # not the real ROMIO hint, not the unrelated one
    assert "mpiio.cb_nodez" in warnings[0] and "Did you mean mpiio.cb_nodes?" in warnings[0]
    assert "romio_cb_writ (file a.h5)" in warnings[1] and "mpiio.romio_cb_write?" in warnings[1]
    for layer, typo, right in (("hdf5", "sieve_buf_sise", "sieve_buf_size"), ("lustre", "stripe_cont", "stripe_count")):
        doc.write_text(f'{{"version": 1, "{layer}": {{"{typo}": 4}}}}')
        r = iotuner("check", doc)
        assert r.returncode == 1 and f"did you mean {layer}.{right}" in r.stderr  # other layers: rejected


@pytest.mark.mpi
def test_h5ior_takes_iors_letters_with_iors_meanings(tmp_path):
    def h5ior(*args, out):
        return subprocess.run(
            [*mpi(), kernel("h5ior"), *args, "-r", "-o", str(out)], capture_output=True, text=True, timeout=120
        )

    # -t is the transfer size, -s segments in one shared file
    r = h5ior("-b", "64K", "-t", "16K", "-s", "3", "-c", out=tmp_path / "seg")
    assert r.returncode == 0, r.stderr
    assert "steps=3 files=single mode=collective" in r.stdout and "transfers_per_rank=4" in r.stdout
    assert "h5ior verify: ok" in r.stdout and [f.name for f in (tmp_path / "seg").iterdir()] == ["h5ior.h5"]

    # -F: a file per process; -i: iterations, each its own files. Under the runtime, each iteration's files are one
    # phase of both ranks, and every byte is counted once.
    out = tmp_path / "fpp"
    rep = tmp_path / "fpp.json"
    r = iotuner(
        "run", "--report", rep, "--", *mpi(), "h5ior", "-b", "256K", "-t", "64K", "-F", "-i", "2", "-r", "-o", out
    )
    assert r.returncode == 0, r.stderr
    assert "files=per-process-and-step" in r.stdout and "h5ior verify: ok" in r.stdout
    names = [f"h5ior_000{i}.0000000{rank}.h5" for i in (0, 1) for rank in (0, 1)]
    assert sorted(f.name for f in out.iterdir()) == names
    doc = json.loads(rep.read_text())
    writes = [p for p in doc["phases"] if p["bytes_written"]]
    assert [(p["ranks"], p["files"], p["bytes_written"]) for p in writes] == [(2, 2, 2 * 256 * 1024)] * 2
    assert doc["totals"]["bytes_written"] == doc["totals"]["bytes_read"] == 2 * 2 * 256 * 1024

    refused = ((["-s", "2", "-i", "2"], "-s and -i cannot be combined"), (["-F", "-p", "strided"], "not with -F"))
    for bad, why in refused:
        r = h5ior(*bad, out=tmp_path / "bad")
        assert r.returncode == 2 and why in r.stderr, r.stderr
