"""The recommendation engine (iotuner.recommend): one extraction of insights for advise, smart and auto, the
rules' decisions on it, and what did not apply said with why."""

import gzip
import json
import os
from pathlib import Path

import pytest

from conftest import kernel, mpi, run_job
from iotuner import mpiabi
from iotuner import run_report as report
from iotuner.advise import advise
from iotuner.perfmodel.calibration import Calibration
from iotuner.recommend import insights, ompio, predictions, rules
from iotuner.recommend.insights import Unit


def _runs(command, tmp_path: Path, name: str) -> tuple[dict, dict]:
    """(plain run report, smart mode's run report) of the same command, each in a fresh directory."""
    out = []
    for mode in ("run", "smart"):
        where = tmp_path / f"{name}-{mode}"
        where.mkdir()
        cmd = [str(c).replace("{dir}", str(where)) for c in command]
        env = dict(os.environ, IOTUNER_SMART="1") if mode == "smart" else None
        rep = where / "report.json"
        result = run_job(cmd, report=rep, env=env, cwd=where)
        assert result.ok, result.stderr
        out.append(report.load(rep))
    return out[0], out[1]


CASES = {
    # a strided collective MPI-IO program (a view; the file pointer moves on): sequential to smart mode
    "two_phase strided": lambda p: [p["two_phase"], "{dir}/d.bin", 65536, 16, "strided", "both", 4],
    "two_phase contiguous": lambda p: [p["two_phase"], "{dir}/d.bin", 65536, 16, "contiguous", "write", 4],
    # HDF5 sets a view per call: smart mode sees each call where its selection starts
    "vpicio": lambda p: [kernel("vpicio"), "-n", "16K", "-r", "-o", "{dir}"],
    "bandio": lambda p: [kernel("bandio"), "-n", "1024", "-c", "16", "-s", "256", "-g", "1", "-r", "-o", "{dir}"],
    "h5ior strided": lambda p: [kernel("h5ior"), "-b", "256K", "-t", "64K", "-p", "strided", "-r", "-o", "{dir}"],
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_advise_and_smart_give_the_same_insights_and_rule_decisions(case, programs, tmp_path):
    """advise on a plain run's report extracts the insights smart mode extracts at run time from the same
    program's calls (as far as the rules read them), so the rules decide the same; and advise on smart
    mode's report uses smart mode's own."""
    plain, smart = _runs(mpi() + CASES[case](programs), tmp_path, case.replace(" ", "_"))
    learned = {p["phase"]: p for p in smart.data["smart"]["phases"] if p["role"] == "learn"}
    assert learned, "smart mode learned no phase"
    units = {u.phases[0]: u for u in insights.of_report(plain)}
    advice = advise(_write(tmp_path / "plain.json", plain))
    by_phase = {u["phases"][0]: u for u in advice["smartio"]}
    for phase, p in learned.items():
        u = units[phase]
        assert insights.rule_inputs(u.insights) == insights.rule_inputs(p["insights"]), (phase, u.sources)
        for key in ("write_transfer", "read_transfer", "files", "same_calls", "library", "processes"):
            assert u.insights.get(key) == p["insights"].get(key), (phase, key)
        decided = rules.decide(u)
        assert [f["rule"] for f in decided.fired] == [f["rule"] for f in p["rules"]["fired"]]
        assert decided.settings == p["rules"]["settings"]
        assert by_phase[phase]["settings"] == p["rules"]["settings"]  # what advise reports
    recorded = advise(_write(tmp_path / "smart.json", smart))
    for u in recorded["smartio"]:
        assert u["sources"] == {"*": "recorded by smart mode during the run"}
        assert u["settings"] == learned[u["phases"][0]]["rules"]["settings"]


def _write(path: Path, rep: report.Report) -> Path:
    path.write_text(json.dumps(rep.data))
    return path


def test_rule_7_fires_on_a_strided_collective_run_report():
    """The issue's case: a strided collective MPI-IO benchmark's plain report had no transfer or locality, so
    SmartIO's rule 7 (collective buffering off for sequential writes to a shared file) was never evaluated."""
    acc = {
        "calls": 8,
        "bytes": 4 << 20,
        "requests": 64,
        "offset": 0,
        "end": 8323072,
        "request_min": 65536,
        "request_max": 65536,
        "call_bytes": 524288,
        "call_requests": 8,
        "call_step": 1048576,
        "request_stride": 131072,
        "contiguous": False,
    }
    assert insights._rank_locality(acc, view_space=True) == "sequential"  # one view: the pointer moves on
    assert insights._rank_locality(acc, view_space=False) == "strided"  # a view per call: gaps in the file
    assert insights._rank_locality({**acc, "call_step": None}, view_space=False) == "random"
    assert insights._rank_locality({**acc, "calls": 1, "call_step": None}, view_space=False) == "sequential"
    u = Unit(
        "/x/d.bin",
        "create",
        "collective",
        {
            "write_transfer": "collective",
            "read_transfer": "none",
            "write_locality": "sequential",
            "files": "shared",
            "transfer_size": 524288,
            "same_calls": True,
            "library": "mpiio",
            "processes": 2,
        },
        {},
    )
    d = rules.decide(u)
    assert d.settings.get("mpiio.romio_cb_write") == "disable"
    one = next(f for f in d.fired if f["rule"] == 1)  # an HDF5 knob on a plain MPI-IO file: said, not set
    assert one["usable"] == {} and "plain MPI-IO" in one["not_applicable"]["hdf5.transfer_mode"]


def test_a_rule_whose_insight_is_unknown_is_not_evaluated_and_says_why():
    """Independent transfers: a run report has no offsets, so the rules that read the locality are listed as
    not evaluated (naming the insight and why it is unknown), those whose known conditions fail as not
    applicable; none is silently left out."""
    u = Unit(
        "/x/f.h5",
        "create",
        "collective",
        {
            "write_transfer": "independent",
            "read_transfer": "none",
            "write_locality": "unknown",
            "read_locality": "unknown",
            "files": "shared",
            "transfer_size": 65536,
            "library": "hdf5",
            "processes": 2,
        },
        {"write_locality": "unknown: independent calls, whose offsets a run report does not hold"},
    )
    d = rules.decide(u)
    status = {n["rule"]: n for n in d.not_fired}
    assert {f["rule"] for f in d.fired} | set(status) == set(range(1, 11))
    for rule in (2, 7):
        assert status[rule]["status"] == "not evaluated", status[rule]
        assert "sequential is unknown" in status[rule]["reason"] and "offsets" in status[rule]["reason"]
    assert status[3]["status"] == "not applicable" and "per_process" in status[3]["reason"]


def test_under_ompio_romio_hints_become_ompio_knobs_or_are_left_out():
    """Open MPI's OMPIO drops ROMIO's hints: collective buffering off is fcoll=individual, aggregators are
    num_aggregators (at most the processes), data sieving has no counterpart and is left out with why."""
    flat = {
        "mpiio.romio_cb_write": "disable",
        "mpiio.cb_config_list": "*:8",
        "mpiio.romio_ds_write": "disable",
        "hdf5.alignment": [0, 1048576],
    }
    new, dropped = ompio.translate(flat, nodes=1, nprocs=2)
    assert new == {"ompio.fcoll": "individual", "ompio.num_aggregators": 2, "hdf5.alignment": [0, 1048576]}
    assert list(dropped) == ["mpiio.romio_ds_write"] and "OMPIO" in dropped["mpiio.romio_ds_write"]


def test_advise_on_an_ompio_run_recommends_ompio_knobs(tmp_path):
    """e3smio's PnetCDF records under OMPIO (collective writes of interleaved column blocks, strided): the
    first recommendation sets OMPIO's knobs, none of ROMIO's hints that Open MPI would drop, and takes the
    two_phase component where this Open MPI has it (the recorded report of a 2-rank run, -c 4096 -t 2 -r)."""
    rep = tmp_path / "r.json"
    rep.write_bytes(gzip.decompress((Path(__file__).parent / "data" / "e3smio-ompio-report.json.gz").read_bytes()))
    first = advise(rep)["recommendations"][0]
    assert first["settings"] and not any(k.startswith("mpiio.") for k in first["settings"]), first["settings"]
    assert first["settings"]["ompio.num_aggregators"] == 2  # rule 6's aggregators, at most the 2 processes
    if "two_phase" in mpiabi.ompio_offered("fcoll", ("two_phase", "vulcan")):
        assert first["settings"]["ompio.fcoll"] == "two_phase"
        assert "ompio" in first["document"]["groups"][-1] or first["document"].get("ompio")


def test_the_model_prices_hdf5_independent_transfers_of_a_noncontiguous_selection_piece_by_piece():
    """bandio's column bands (2 ranks, 128-byte pieces a row, collective transfers as run): HDF5 writes an
    independent transfer's selection as one MPI-IO call per piece, which no sieve joins, so the model must not
    predict independent transfers faster (measured 0.7x of the default, docs/results.md); before, it priced them
    as ROMIO's sieved strided path and predicted 5.9x. The recorded report of -n 256K -c 16 -s 32K -g 1 -r."""
    rep = json.loads(
        gzip.decompress((Path(__file__).parent / "data" / "bandio-collective-report.json.gz").read_bytes())
    )
    cal = Calibration.from_doc(
        json.loads(gzip.decompress((Path(__file__).parent / "data" / "calibration-2core.json.gz").read_bytes()))
    )
    model = predictions.build(rep, cal)
    assert model.predictor is not None, model.reason
    assert model.effect({"hdf5.transfer_mode": "independent"}) < 1
    # collective transfers with collective buffering off keep ROMIO's sieve: the path the model predicts fastest
    assert model.effect({"mpiio.romio_cb_write": "disable", "mpiio.romio_cb_read": "disable"}) > 1


def test_advise_on_small_hdf5_collective_calls_under_ompio_recommends_independent_transfers(tmp_path):
    """e3smio_nc4 under OMPIO (netCDF-4: one collective H5Dwrite of a 64-column block, 3 KiB, per field and
    block): each call's synchronization dominates, so the first recommendation takes independent transfers (the
    recorded report of a 2-rank run, -c 8192 -t 2 -r)."""
    rep = tmp_path / "r.json"
    rep.write_bytes(gzip.decompress((Path(__file__).parent / "data" / "e3smio_nc4-ompio-report.json.gz").read_bytes()))
    advice = advise(rep)
    first = advice["recommendations"][0]
    assert first["settings"]["hdf5.transfer_mode"] == "independent", first["settings"]
    assert not any(k.startswith("mpiio.") for k in first["settings"])
    small = [f for f in advice["findings"] if f["code"] == "ompio-small-collective"]
    assert len(small) == 1 and "writes of 3074 bytes a call" in small[0]["message"], small
