"""hdf5.chunk_bytes: new datasets get chunks of about the requested size,
as the rule in docs/settings.md computes them, and the data is unchanged."""

import re
import subprocess

import pytest

from conftest import h5diff, kernel, mpi, run_job, write_json

pytestmark = pytest.mark.mpi

CHUNK_64K = {"version": 1, "hdf5": {"chunk_bytes": "64K"}}


def layouts(path) -> list[tuple[str, tuple[int, ...], int, tuple[int, ...] | None]]:
    """Each dataset's (name, dims, element size, chunk dims or None), from h5dump."""
    text = subprocess.run(["h5dump", "-p", "-H", str(path)], capture_output=True, text=True, check=True).stdout
    out = []
    for m in re.finditer(r'DATASET "([^"]+)" \{(.*?)\n\s*\}\n\s*\}', text, re.S):
        body = m.group(2)
        dims = tuple(int(x) for x in re.search(r"SIMPLE \{ \( ([\d, ]+) \)", body).group(1).split(","))
        size = int(re.search(r"H5T_(?:IEEE_F|STD_[IU])(\d+)", body).group(1)) // 8
        chunk = re.search(r"CHUNKED \( ([\d, ]+) \)", body)
        out.append((m.group(1), dims, size, tuple(int(x) for x in chunk.group(1).split(",")) if chunk else None))
    return out


def prod(xs) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def run_pair(tmp_path, args, doc):
    """An untuned and a tuned run of the same kernel (the tuned one reads back and verifies)."""
    plain = subprocess.run(mpi() + args + ["-o", str(tmp_path / "plain")], capture_output=True, text=True)
    assert plain.returncode == 0, plain.stderr
    result = run_job(mpi() + args + ["-o", tmp_path / "tuned", "-r"], config=write_json(tmp_path / "s.json", doc))
    assert result.ok, result.stderr
    return result


def test_gcrmio_chunks_are_whole_rows_under_the_request(tmp_path):
    # 2562 cells, 7680 edges, 26 levels, float64: a 64 KiB chunk holds 8192 elements
    doc = {**CHUNK_64K, "groups": [{"dataset": "precipitation", "hdf5": {"chunk_dims": [100]}}]}
    result = run_pair(tmp_path, [kernel("gcrmio"), "-g", "4", "-l", "26"], doc)
    assert "gcrmio verify: ok" in result.stdout
    checks = {c["dataset"].rsplit("/", 1)[-1]: c for c in result.report.checks(knob="chunk_bytes") if "dataset" in c}
    # the read-back phase creates no dataset: there the knob is not applicable, and says why
    (read_back,) = [c for c in result.report.checks(knob="chunk_bytes") if "dataset" not in c]
    assert (read_back["status"], read_back["reason"]) == ("not_applicable", "the phase created no dataset")

    expected = {  # (chunk dims, status, reason)
        "pressure": ((3, 2562), "changed", "rounded down to whole rows of 20496 bytes"),
        "temperature": ((3, 2562), "changed", "rounded down to whole rows of 20496 bytes"),
        "specific_humidity": ((3, 2562), "changed", "rounded down to whole rows of 20496 bytes"),
        "geopotential": ((3, 2562), "changed", "rounded down to whole rows of 20496 bytes"),
        "normal_velocity": ((1, 7680), "changed", "rounded down to whole rows of 61440 bytes"),
        "surface_pressure": ((2562,), "changed", "the whole dataset (20496 bytes) is smaller"),
    }
    files = {name: rest for name, *rest in layouts(tmp_path / "tuned" / "gcrmio.h5")}
    for name, (chunk, status, reason) in expected.items():
        dims, size, in_file = files[name]
        assert in_file == chunk, name
        nbytes = prod(chunk) * size
        assert nbytes <= 64 << 10
        # as large as the rule allows: one more row of the cut dimension would not fit, or it is the whole dataset
        assert chunk == dims or (prod(chunk[1:]) * (chunk[0] + 1)) * size > 64 << 10, name
        c = checks[name]
        assert (c["requested"], c["effective"], c["status"]) == (
            "65536",
            f"{nbytes} ({','.join(map(str, chunk))})",
            status,
        ), name
        assert reason in c["reason"], name

    # chunk_dims wins where both apply, and says so
    assert checks["precipitation"]["status"] == "not_applicable"
    assert "chunk_dims given" in checks["precipitation"]["reason"]
    assert files["precipitation"][2] == (100,)

    diff = h5diff(tmp_path / "plain" / "gcrmio.h5", tmp_path / "tuned" / "gcrmio.h5")
    assert diff.returncode == 0, diff.stdout + diff.stderr
    # the untuned file is contiguous: the chunking above is iotuner's
    assert all(chunk is None for *_, chunk in layouts(tmp_path / "plain" / "gcrmio.h5"))


def test_vpicio_chunks_are_exactly_the_request(tmp_path):
    # 32768 particles per dataset (2 ranks x 16K), 4-byte elements: 128 KiB each, two 64 KiB chunks
    result = run_pair(tmp_path, [kernel("vpicio"), "-n", "16K", "-t", "2"], CHUNK_64K)
    assert "vpicio verify: ok" in result.stdout
    checks = [c for c in result.report.checks(knob="chunk_bytes") if "dataset" in c]
    assert len(checks) == 16  # 8 variables x 2 steps
    for c in checks:
        assert (c["effective"], c["status"], c["reason"]) == ("65536 (16384)", "applied", None), c
    files = layouts(tmp_path / "tuned" / "vpicio.h5")
    assert len(files) == 16
    assert {chunk for *_, chunk in files} == {(16384,)}
    diff = h5diff(tmp_path / "plain" / "vpicio.h5", tmp_path / "tuned" / "vpicio.h5")
    assert diff.returncode == 0, diff.stdout + diff.stderr


def test_extendible_dataset_grows_to_the_request(tmp_path, programs):
    """An unlimited dataset (the program chunks it by 1024 itself) gets chunks
    of the requested size, beyond its current 8192 elements."""
    plain = tmp_path / "plain.h5"
    r = subprocess.run(mpi() + [str(programs["chunk_fallback"]), str(plain)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    tuned = tmp_path / "tuned.h5"
    cfg = write_json(tmp_path / "s.json", {"version": 1, "hdf5": {"chunk_bytes": "256K"}})
    result = run_job(mpi() + [programs["chunk_fallback"], tuned], config=cfg)
    assert result.ok, result.stderr
    (check,) = result.report.checks(knob="chunk_bytes")
    assert (check["effective"], check["status"]) == ("262144 (32768)", "applied")
    assert layouts(tuned) == [("values", (8192,), 8, (32768,))]
    assert layouts(plain) == [("values", (8192,), 8, (1024,))]
    assert h5diff(plain, tuned).returncode == 0
