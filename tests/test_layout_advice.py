"""The chunk-shape advice (iotuner.recommend.layout) and the run report's datasets section it reads: a
contiguous dataset each rank writes in boxes of many file pieces gets chunks shaped like the box."""

import copy
import json
import os

import pytest

from conftest import kernel, mpi, run_job
from iotuner.advise import analysis, checks
from iotuner.recommend import layout


def _bandio_report(tmp_path, rows="64K", per_write="8K"):
    """A default run of bandio: 2 ranks write column bands of 16 of [rows, 32] float64, per_write rows a call."""
    where = tmp_path / "bandio"
    where.mkdir()
    result = run_job(
        mpi() + [kernel("bandio"), "-n", rows, "-c", "16", "-s", per_write, "-g", "1", "-r", "-o", str(where)],
        report=where / "r.json",
    )
    assert result.ok and result.report is not None, result.stderr
    return where / "r.json"


def _advise(path):
    return analysis.advise_profile(analysis.load(path), checks.thresholds(), str(path))


@pytest.mark.mpi
def test_the_report_names_each_written_dataset_its_shape_and_first_box(tmp_path):
    data = json.loads(_bandio_report(tmp_path).read_text())
    written = [p for p in data["phases"] if p["kind"] == "hdf5" and p["bytes_written"]]
    assert len(written) == 1
    (ds,) = written[0]["datasets"]
    # rank 0 describes the file: its band is the first 16 columns, 8,192 rows a write
    assert (ds["dims"], ds["element_size"], ds["layout"], ds["chunk"]) == ([65536, 32], 8, "contiguous", None)
    assert (ds["first_write_start"], ds["first_write_block"]) == ([0, 0], [8192, 16])
    assert ds["name"].endswith("field0")


@pytest.mark.mpi
def test_advise_on_column_bands_recommends_chunks_like_the_band(tmp_path):
    path = _bandio_report(tmp_path)
    advice = _advise(path)
    (f,) = [f for f in advice["findings"] if f["code"] == "chunk-like-writes"]
    assert f["evidence"]["pieces_per_write"] == 8192 and "8,192 pieces of 128 bytes" in f["message"]
    groups = advice["fixes"]["document"]["groups"]
    chunk_groups = [g for g in groups if "dataset" in g]
    assert chunk_groups == [
        {"file": "bandio.h5", "dataset": f["evidence"]["dataset"], "hdf5": {"chunk_dims": [8192, 16]}}
    ]
    # every recommendation that carries the finding applies the chunks to that dataset alone
    carried = [r for r in advice["recommendations"] if "chunk-like-writes" in r["sources"] or "advice" in r["sources"]]
    assert carried and all(chunk_groups[0] in r["document"]["groups"] for r in carried)

    # the same dataset already chunked, written whole rows at a time, in boxes under 64 KiB, in 2 KiB pieces:
    # left alone, said why
    base = json.loads(path.read_text())
    cases = {
        "chunked": ({"layout": "chunked", "chunk": [8192, 16]}, "its layout is chunked"),
        "rows": ({"first_write_block": [8192, 32]}, "already one contiguous piece"),
        "small": ({"first_write_block": [4, 16]}, "under 64 KiB"),
        "points": ({"first_write_block": None}, "not one box"),
        # vorpalio's 2 KiB pieces: chunked like the box, 3x slower here
        "wide pieces": ({"dims": [65536, 512], "first_write_block": [8192, 256]}, "2,048 bytes each"),
    }
    for name, (change, why) in cases.items():
        doc = copy.deepcopy(base)
        ds = next(p for p in doc["phases"] if p.get("datasets"))["datasets"][0]
        ds.update(change)
        (tmp_path / f"{name}.json").write_text(json.dumps(doc))
        advice = _advise(tmp_path / f"{name}.json")
        assert not [f for f in advice["findings"] if f["code"] == "chunk-like-writes"], name
        reasons = [n["reason"] for n in advice["not_applied"] if n["source"] == "chunk-like-writes"]
        assert len(reasons) == 1 and why in reasons[0], (name, reasons)
        assert not [g for g in advice["fixes"]["document"]["groups"] if "dataset" in g], name


def test_pieces_counts_the_contiguous_runs_of_a_box():
    assert layout.pieces([65536, 32], [8192, 16]) == 8192  # a band of columns: a piece a row
    assert layout.pieces([65536, 32], [8192, 32]) == 1  # whole rows
    assert layout.pieces([10, 20, 30], [2, 20, 30]) == 1  # whole planes
    assert layout.pieces([10, 20, 30], [2, 5, 30]) == 2  # 5 whole rows of each of 2 planes
    assert layout.pieces([10, 20, 30], [2, 5, 7]) == 10
    assert layout.pieces([100], [10]) == 1


def test_damaged_dataset_entries_are_left_out():
    good = {"name": "/x", "dims": [256, 64], "element_size": 8, "layout": "contiguous", "first_write_block": [256, 32]}
    odd = [None, "x", -1, True, [], [1, "2"], {}, 2**70, 1.5, [[1]]]
    for key in good:
        for value in odd:
            entry = dict(good, **{key: value})
            for ds in layout.datasets({"datasets": [entry]}):  # what is kept is well formed
                assert isinstance(ds["dims"], list) and all(isinstance(x, int) for x in ds["dims"])
                assert ds["block"] is None or len(ds["block"]) == len(ds["dims"])
                layout.chunk_advice(ds)
    assert layout.datasets({"datasets": "x"}) == [] and layout.datasets({}) == []
    (ds,) = layout.datasets({"datasets": [good]})
    assert layout.chunk_advice(ds) == ([256, 32], "each write is 256 pieces of 256 bytes; chunked like it, one piece")


@pytest.mark.mpi
def test_a_file_of_several_datasets_describes_each(tmp_path):
    """vpicio writes 8 1-D variables: each described, none advised (a 1-D block is one piece)."""
    where = tmp_path / "v"
    where.mkdir()
    result = run_job(
        mpi() + [kernel("vpicio"), "-n", "16K", "-o", str(where)], report=where / "r.json", env=dict(os.environ)
    )
    assert result.ok, result.stderr
    data = json.loads((where / "r.json").read_text())
    (ph,) = [p for p in data["phases"] if p["kind"] == "hdf5" and p["bytes_written"]]
    assert len(ph["datasets"]) == 8 and len({d["name"] for d in ph["datasets"]}) == 8
    assert all(d["dims"] == [2 * 16384] and d["first_write_block"] == [16384] for d in ph["datasets"])
    advice = _advise(where / "r.json")
    assert not [f for f in advice["findings"] if f["code"] == "chunk-like-writes"]
