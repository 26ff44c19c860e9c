"""iotuner advise: Darshan logs (every example the darshan wheel ships), run reports, damaged input, the
check table's thresholds, SmartIO's rules through the core, and the fixes document."""

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from iotuner import native, settings
from iotuner.advise import advise, checks
from iotuner.advise.profile import Direction, FileFacts, Job, Profile


def _example_logs() -> Path | None:
    """The darshan wheel's example logs; None where PyDarshan is missing or broken (the tests of run reports and
    of the checks still run)."""
    try:
        import darshan
    except Exception:  # noqa: BLE001 - broken counts as missing (iotuner/optional.py)
        return None
    return Path(darshan.__file__).parent / "examples" / "example_logs"


EXAMPLES = _example_logs()
LOGS = sorted(EXAMPLES.glob("*.darshan")) if EXAMPLES else []
needs_darshan = pytest.mark.skipif(
    EXAMPLES is None, reason="PyDarshan (the darshan extra) reads Darshan logs; missing or broken here"
)
DATA = Path(__file__).parent / "data"


def iotuner(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "iotuner", *map(str, args)], capture_output=True, text=True, **kw)


@pytest.fixture(scope="module")
def advice_of():
    cache = {}

    def get(path):
        if path not in cache:
            cache[path] = advise(path)
        return cache[path]

    return get


@needs_darshan
def test_the_wheel_ships_example_logs():
    assert len(LOGS) >= 5, LOGS


@needs_darshan
@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name[:30])
def test_every_example_log(log, tmp_path):
    """No crash, findings for each, a fixes document the runtime accepts, exit code from the levels."""
    out = iotuner("advise", log, "--json", "-o", tmp_path / "fixes.json")
    assert out.returncode in (0, 1), out.stderr
    assert "Traceback" not in out.stderr
    advice = json.loads(out.stdout)
    assert advice["findings"], "no finding"
    assert out.returncode == (1 if advice["summary"]["high"] else 0)
    for f in advice["findings"]:
        assert f["level"] in checks.LEVELS and f["code"] and f["message"] and f["source"]
    doc = settings.load(tmp_path / "fixes.json")  # the runtime's validator
    flat_fixes = {(k["files"], k["knob"]) for k in advice["fixes"]["knobs"]}
    in_doc = {
        (g.get("file"), f"{layer}.{k}")
        for g in doc.get("groups", [])
        for layer in ("hdf5", "mpiio", "lustre")
        for k in g.get(layer, {})
    }
    assert flat_fixes <= in_doc
    assert (tmp_path / "fixes.html").stat().st_size > 1000


def codes(advice) -> dict:
    out = {}
    for f in advice["findings"]:
        out.setdefault(f["code"], []).append(f)
    return out


@needs_darshan
def test_stdio_only_log(advice_of):
    c = codes(advice_of(EXAMPLES / "noposix.darshan"))
    assert c["stdio-heavy"][0]["level"] == "high"
    assert c["stdio-heavy"][0]["evidence"]["fraction"] == pytest.approx(1.0)


@needs_darshan
def test_slow_ost_is_named(advice_of):
    """sample-badost: 2048 files per process, a few of them on one slow Lustre target."""
    f = codes(advice_of(EXAMPLES / "sample-badost.darshan"))["fpp-stragglers"][0]
    ev = f["evidence"]
    assert ev["files"] == 2048 and 0 < ev["stragglers"] < 200
    assert ev["stragglers_on_it"] == ev["stragglers"] and ev["others_on_it"] == 0
    assert f"OST {ev['common_ost']}" in f["message"]


@needs_darshan
def test_smartio_rules_come_from_the_core(advice_of):
    """Every identity's decisions are the C core's rules on the extracted insights, unchanged."""
    core = native.core()
    n = 0
    for log in LOGS:
        for chain in advice_of(log)["smartio"]:
            if "error" in chain:
                continue
            assert chain["settings"] == core.rules_explain(chain["insights"])["settings"]
            n += 1
    assert n >= 3


@needs_darshan
def test_vpic_log_insights_and_rule_10(advice_of):
    """example.darshan: VPIC-IO, 2048 ranks, one 2 TiB shared file on Lustre, collective writes."""
    a = advice_of(EXAMPLES / "example.darshan")
    chain = next(c for c in a["smartio"] if c["identity"].endswith("vpicio.hdf5"))
    ins = chain["insights"]
    assert ins["files"] == "shared" and ins["file_system"] == "lustre" and ins["write_transfer"] == "mixed"
    assert ins["file_size"] > 4 * 2**40 // 4
    c = codes(a)
    assert any(f["knobs"] == {"lustre.stripe_count": -1} for f in c["smartio-10"])
    assert c["collective-used"][0]["level"] == "ok"


@needs_darshan
def test_dxt_trace_gives_locality_and_nodes(advice_of):
    a = advice_of(EXAMPLES / "ior_hdf5_example.darshan")
    assert a["input"]["dxt"] and a["job"]["nodes"] == 1
    chain = a["smartio"][0]
    assert chain["insights"]["write_locality"] == "sequential"
    assert "DXT" in chain["sources"]["write_locality"]


@needs_darshan
@pytest.mark.parametrize("damage", ["truncated-half", "truncated-header", "corrupt", "empty", "text", "old"])
def test_damaged_log_gives_one_clear_line_and_exit_2(damage, tmp_path):
    good = (EXAMPLES / "ior_hdf5_example.darshan").read_bytes()
    bad = tmp_path / f"{damage}.darshan"
    if damage == "truncated-half":
        bad.write_bytes(good[: len(good) // 2])
    elif damage == "truncated-header":
        bad.write_bytes(good[:100])
    elif damage == "corrupt":
        b = bytearray(good)
        rng = random.Random(7)
        for i in range(600, len(b), 5):  # the compressed records, past the header
            b[i] = rng.randrange(256)
        bad.write_bytes(bytes(b))
    elif damage == "empty":
        bad.write_bytes(b"")
    elif damage == "text":
        bad.write_text("not a log\n" * 50)
    else:
        bad.write_bytes(b"2.06\0\0\0\0" + good[8:])
    out = iotuner("advise", bad)
    assert out.returncode == 2, (out.returncode, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("iotuner advise: ") and "Traceback" not in out.stderr
    expect = {
        "truncated-half": "truncated",
        "truncated-header": "truncated",
        "corrupt": "corrupt",
        "empty": "empty",
        "text": "not a Darshan log",
        "old": "format 2.06",
    }[damage]
    assert expect in lines[0] and str(bad) in lines[0]


def test_missing_and_wrong_inputs(tmp_path):
    for path, expect in ((tmp_path / "nope.darshan", "does not exist"), (tmp_path, "is a directory")):
        out = iotuner("advise", path)
        assert out.returncode == 2 and expect in out.stderr
    other = tmp_path / "other.json"
    other.write_text('{"kind": "something"}')
    out = iotuner("advise", other)
    assert out.returncode == 2 and "not an iotuner run report" in out.stderr


@needs_darshan
def test_threshold_overrides(tmp_path):
    log = next(p for p in LOGS if p.name.startswith("shane_macsio"))
    base = advise(log)
    small = codes(base)["small-writes"][0]["evidence"]["small_requests"]
    assert small > 1000
    loose = advise(log, {"small_count": small})  # the count must exceed the threshold
    assert "small-writes" not in codes(loose)
    assert loose["thresholds"]["small_count"] == small
    th = tmp_path / "th.json"
    th.write_text(json.dumps({"small_count": small}))
    out = iotuner("advise", log, "--thresholds", th, "--json")
    assert "small-writes" not in codes(json.loads(out.stdout))
    for bad, msg in (
        ({"small_cuont": 5}, "unknown threshold 'small_cuont'"),
        ({"small_fraction": 2}, "fraction"),
        ({"small_count": "many"}, "non-negative number"),
    ):
        th.write_text(json.dumps(bad))
        out = iotuner("advise", log, "--thresholds", th)
        assert out.returncode == 3 and msg in out.stderr, out.stderr


def test_calibration_option_prices_the_model_or_names_the_bad_file(tmp_path):
    """--calibration: a good file makes the model's predictions part of the advice; a bad or missing one is
    refused by name (exit 3), never silently left out as this machine's missing calibration is."""
    import gzip

    cal = tmp_path / "cal.json"
    cal.write_bytes(gzip.decompress((DATA / "calibration-2core.json.gz").read_bytes()))
    empty = tmp_path / "cache"  # no calibration of this machine
    env = {**os.environ, "XDG_CACHE_HOME": str(empty), "IOTUNER_CALIBRATION": ""}
    without = json.loads(iotuner("advise", DATA / "bad_run_report.json", "--json", env=env).stdout)
    assert without["model"]["status"] == "not evaluated" and "iotuner calibrate" in without["model"]["reason"]
    out = iotuner("advise", DATA / "bad_run_report.json", "--json", "--calibration", cal, env=env)
    assert out.returncode == 1, out.stderr  # the report's high finding
    assert json.loads(out.stdout)["model"]["status"] == "evaluated"
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "something else"}')
    for f, says in ((bad, "is not an iotuner calibration file"), (tmp_path / "none.json", "no calibration file")):
        out = iotuner("advise", DATA / "bad_run_report.json", "--calibration", f, env=env)
        assert out.returncode == 3 and says in out.stderr and str(f) in out.stderr, out.stderr
        assert out.stdout == ""


def test_an_incomplete_run_report_is_a_finding(tmp_path):
    """A report that holds a part of the job (its `incomplete` field) is said first, not advised on as whole."""
    report = json.loads((DATA / "bad_run_report.json").read_text())
    assert not report.get("incomplete")
    assert "incomplete-report" not in codes(advise(DATA / "bad_run_report.json"))
    report["incomplete"] = "the job started 2 process(es) with MPI_Comm_spawn: their I/O is not in this report"
    (tmp_path / "r.json").write_text(json.dumps(report))
    (hit,) = codes(advise(tmp_path / "r.json"))["incomplete-report"]
    assert hit["level"] == "warn" and "MPI_Comm_spawn" in hit["message"]


def test_bad_run_report_maps_to_the_fix(tmp_path):
    """The demo's one-aggregator baseline: the write amplification names forced collective buffering,
    the fix lets ROMIO decide, on top of the run's own settings document."""
    out = iotuner("advise", DATA / "bad_run_report.json", "--json", "-o", tmp_path / "fixes.json")
    assert out.returncode == 1
    a = json.loads(out.stdout)
    f = codes(a)["write-amplification"][0]
    assert f["level"] == "high"
    assert f["knobs"] == {"mpiio.romio_cb_write": "automatic", "hdf5.transfer_mode": "independent"}
    assert f["evidence"]["aggregators"] == 1 and f["evidence"]["ranks"] == 2
    assert codes(a)["aggregators-nodes"][0]["level"] == "ok"  # one per node: Drishti's rule is satisfied
    doc = settings.load(tmp_path / "fixes.json")
    assert doc["groups"][0] == {"mpiio": {"romio_cb_write": "enable"}}  # the run's settings first
    last = doc["groups"][-1]
    assert last["file"] == "h5ior.h5" and last["mpiio"]["romio_cb_write"] == "automatic"
    assert last["hdf5"]["transfer_mode"] == "independent"
    reasons = {n["code"] for n in a["not_evaluated"]}
    assert {"small-writes", "random-writes", "misaligned-file"} <= reasons  # said, not guessed


def _profile(**file_kw) -> Profile:
    f = FileFacts(
        path="/run/out.h5",
        identity="/run/out.h5",
        ranks=4,
        shared=True,
        interfaces=["hdf5", "mpiio", "posix"],
        **file_kw,
    )
    return Profile(Job(source="darshan", input="x", processes=4), [f])


def _hist(small: int, large: int) -> dict:
    return {1024: small, 4 * 1024**2: large}


@pytest.mark.parametrize(
    "small,large,fires", [(1001, 9000, True), (1000, 9000, False), (1001, 10000, False), (5000, 0, True)]
)
def test_small_writes_thresholds(small, large, fires):
    """Fires when small requests are above 10% of all and above 1000 (Drishti's defaults), not at them."""
    w = Direction(ops=small + large, bytes=1, size_histogram=_hist(small, large))
    p = _profile(posix_write=w, posix_read=Direction(), write=w)
    hits = checks.CHECKS[[c.code for c in checks.CHECKS].index("small-writes")].test(p, checks.thresholds())
    assert bool(hits) == fires


def test_collective_fix_only_when_every_rank_makes_the_same_calls():
    th = checks.thresholds()
    check = checks.CHECKS[[c.code for c in checks.CHECKS].index("no-collective-writes")]
    for per_rank, expect in (
        ({0: 500, 1: 500, 2: 500, 3: 500}, {"hdf5.transfer_mode": "collective"}),
        ({0: 600, 1: 500, 2: 500, 3: 400}, {}),
        (None, {}),
    ):
        w = Direction(ops=2000, bytes=1, per_rank_ops=per_rank)
        p = _profile(write=w, collective_writes=0, independent_writes=2000)
        [hit] = check.test(p, th)
        assert hit.knobs == expect


def test_advise_commands_import_light():
    """`iotuner --help` stays fast: the command modules import nothing heavy."""
    code = (
        "import sys, iotuner.commands.advise, iotuner.commands.report; "
        "print(sorted(m for m in ('rich', 'pandas', 'darshan', 'numpy', 'optuna') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_docs_list_every_check_and_threshold():
    doc = (Path(__file__).parent.parent / "docs" / "advise.md").read_text()
    for c in checks.CHECKS:
        assert f"| `{c.code}` | {c.level} |" in doc, c.code
    for t in checks.THRESHOLDS.values():
        assert f"| `{t.name}` |" in doc, t.name


def _pnetcdf_log_facts(collective: bool) -> dict:
    """The facts darshan_reader gives for an E3SM-style log with Darshan's PnetCDF modules (Darshan 3.4.5's
    PNETCDF_FILE and PNETCDF_VAR counters; none of the darshan wheel's example logs has them): one shared file
    of 2 ranks (Darshan's reduced records, rank -1), 24 variables posted with iput in 200 steps and completed
    by one wait per step (collective or not), below them one large MPI-IO write per step and POSIX's writes."""
    MiB = 1024**2
    var = {
        "PNETCDF_VAR_NB_WRITES": 4800,
        "PNETCDF_VAR_BYTES_WRITTEN": 4800 * MiB // 4,
        "PNETCDF_VAR_SIZE_WRITE_AGG_100K_1M": 4800,
        "PNETCDF_VAR_ACCESS1_ACCESS": MiB // 4,
        "PNETCDF_VAR_ACCESS1_COUNT": 4800,
        "PNETCDF_VAR_NDIMS": 3,
        "PNETCDF_VAR_IS_RECORD_VAR": 1,
    }
    file_counters = {
        "PNETCDF_FILE_CREATES": 2,
        ("PNETCDF_FILE_COLL_WAITS" if collective else "PNETCDF_FILE_INDEP_WAITS"): 400,
    }
    return {
        "job": {"nprocs": 2, "run_time": 10.0, "jobid": 7},
        "exe": "/e3sm/e3sm.exe",
        "mounts": [["/scratch", "lustre"]],
        "names": {"1": "/scratch/run/e3sm.h0.nc", "2": "/scratch/run/e3sm.h0.nc:T"},
        "modules": {
            m: {"ver": 1, "partial": False, "records": 1} for m in ("POSIX", "MPI-IO", "PNETCDF_FILE", "PNETCDF_VAR")
        },
        "records": {
            "POSIX": [
                {
                    "id": "1",
                    "rank": -1,
                    "counters": {"POSIX_WRITES": 400, "POSIX_BYTES_WRITTEN": 1200 * MiB, "POSIX_SIZE_WRITE_1M_4M": 400},
                    "fcounters": {},
                }
            ],
            "MPI-IO": [
                {
                    "id": "1",
                    "rank": -1,
                    "counters": {
                        "MPIIO_COLL_WRITES" if collective else "MPIIO_INDEP_WRITES": 400,
                        "MPIIO_BYTES_WRITTEN": 1200 * MiB,
                    },
                    "fcounters": {},
                }
            ],
            "PNETCDF_FILE": [{"id": "1", "rank": -1, "counters": file_counters, "fcounters": {}}],
            "PNETCDF_VAR": [
                {
                    "id": "2",
                    "rank": -1,
                    "file_rec_id": "1",
                    "counters": var,
                    "fcounters": {"PNETCDF_VAR_F_WRITE_TIME": 3.5},
                }
            ],
        },
        "dxt": {},
    }


@pytest.mark.parametrize("collective", [True, False])
def test_darshan_pnetcdf_counters_are_the_applications_level(collective):
    """A PnetCDF file's puts (PNETCDF_VAR) are what the application asked for: its calls, bytes and sizes, and
    whether the wait that completed them was collective; advice for PnetCDF names PnetCDF's own fix."""
    from iotuner.advise import analysis, from_darshan

    profile = from_darshan.build(_pnetcdf_log_facts(collective), "e3sm.darshan")
    [f] = profile.files  # the variable is folded into its file
    assert f.pnetcdf and f.interfaces[0] == "pnetcdf" and checks.file_format(f) == "netcdf"
    assert (f.write.ops, f.write.bytes, f.write.time_s) == (4800, 1200 * 1024**2, 3.5)
    assert f.write.common_size == 256 * 1024
    assert (f.collective_writes, f.independent_writes, f.nonblocking_writes) == (
        (4800, 0, 4800) if collective else (0, 4800, 4800)
    )
    advice = analysis.advise_profile(profile, checks.thresholds(), "e3sm.darshan")
    codes = {x["code"]: x for x in advice["findings"]}
    if collective:
        assert "no-collective-writes" not in codes and "collective-used" in codes
    else:
        assert "PnetCDF" in codes["no-collective-writes"]["recommendation"]
        assert "ncmpi_wait_all" in codes["no-collective-writes"]["recommendation"]
    assert "blocking-io" not in codes  # they were posted
