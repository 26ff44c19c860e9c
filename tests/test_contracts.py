"""The two documents between the halves: each side reads what the other
writes, both match the schemas in docs/, and the docs name every knob."""

import ctypes
import json
from pathlib import Path

import jsonschema
import pytest
from referencing import Registry, Resource

from conftest import kernel, mpi, run_job
from iotuner import catalogue, native, run_report, settings

DOCS = Path(__file__).parent.parent / "docs"
SETTINGS_SCHEMA = json.loads((DOCS / "settings.schema.json").read_text())
REPORT_SCHEMA = json.loads((DOCS / "report.schema.json").read_text())
REGISTRY = (
    Registry()
    .with_resource(SETTINGS_SCHEMA["$id"], Resource.from_contents(SETTINGS_SCHEMA))
    .with_resource("settings-1.json", Resource.from_contents(SETTINGS_SCHEMA))
)


def validate_report(data):
    jsonschema.Draft202012Validator(REPORT_SCHEMA, registry=REGISTRY).validate(data)


def validate_settings(data):
    jsonschema.Draft202012Validator(SETTINGS_SCHEMA).validate(data)


def test_settings_schema_lists_the_catalogue():
    defs = SETTINGS_SCHEMA["$defs"]
    for layer in catalogue.LAYERS:
        in_schema = set(defs[layer]["properties"])
        in_catalogue = {k.name for k in catalogue.knobs().values() if k.layer == layer}
        assert in_schema == in_catalogue, layer


def test_docs_name_every_knob():
    text = (DOCS / "settings.md").read_text()
    missing = [key for key in catalogue.knobs() if f"`{key}`" not in text]
    assert missing == []


def test_runtime_has_one_applier_per_knob():
    """libiotuner.so lists what it can apply; it must be the catalogue, no more, no less."""
    lib = ctypes.CDLL(str(native.runtime_library()))
    lib.iotuner_runtime_knobs.restype = ctypes.c_char_p
    appliers = lib.iotuner_runtime_knobs().decode().split(",")
    assert len(appliers) == len(set(appliers))
    catalogued = set(catalogue.knobs())
    explicit = {a for a in appliers if not a.endswith(".*")}
    wildcard_layers = {a[:-2] for a in appliers if a.endswith(".*")}
    assert wildcard_layers == {"mpiio"}  # every MPI-IO hint goes through MPI_Info_set
    assert explicit == {k for k in catalogued if not k.startswith("mpiio.")}


def test_the_library_exports_its_call_tables_and_nothing_else():
    """The export map is generated from the tables of intercepted calls (native/include/iotuner/calls.h):
    every row has its wrapper, and the library interposes nothing the tables do not list."""
    import re
    import subprocess

    include = Path(__file__).parent.parent / "native" / "include"
    tables = subprocess.run(
        ["cc", "-E", "-P", "-x", "c", "-I", str(include), "-"],
        input=(
            '#include "iotuner/calls.h"\n#define FUNCTION(ret, name, ...) name\n#define MPI_DATA(name, ...) name\n'
            "#define PMPI_FUNCTION(ret, name, ...) P##name\n#define PMPI_DATA(name, ...) P##name\n"
            "#define T(table, form) table(form)\nIOT_CALL_TABLES(T)\n"
        ),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    nm = subprocess.run(
        ["nm", "-D", "--defined-only", str(native.runtime_library())], capture_output=True, text=True, check=True
    ).stdout
    exported = {line.split()[-1].split("@")[0] for line in nm.splitlines() if re.match(r"\S+ [TW] ", line)}
    assert len(tables) == len(set(tables))
    # iotuner_* entry points: the knob query, counting mode's hooks for libiotuner_ops.so, and the module
    # interface (native/include/iotuner/module.h)
    entry_points = {
        "iotuner_runtime_knobs",
        "iotuner_op_active",
        "iotuner_op_note",
        "iotuner_module_register",
        "iotuner_report_version",
        "iotuner_phase_path",
        "iotuner_phase_kind",
        "iotuner_phase_key",
        "iotuner_phase_state",
        "iotuner_phase_swap_state",
        "iotuner_link_register",
    }
    assert entry_points <= exported
    # `iotuner link-flags`: the HDF5 wrappers under ld --wrap's names, for a program with HDF5 linked in
    hdf5 = subprocess.run(
        ["cc", "-E", "-P", "-x", "c", "-I", str(include), "-"],
        input=('#include "iotuner/calls.h"\n#define F(ret, name, ...) __wrap_##name\nIOT_HDF5_CALLS(F)\n'),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert {n for n in exported if n.startswith("__wrap_")} == set(hdf5)
    assert exported - entry_points - set(hdf5) == set(tables)
    assert {"H5Dopen1", "H5Dcreate1", "H5Dwrite_multi", "MPI_File_write_all_begin", "chdir"} <= exported
    # the profiling names, which Fortran bindings call directly; not the ones the runtime calls itself
    assert {"PMPI_Init", "PMPI_File_open", "PMPI_File_write_all", "PMPI_File_iread_at_all"} <= exported
    assert "PMPI_Comm_rank" not in exported and "PMPI_File_get_info" not in exported


@pytest.mark.parametrize("example", sorted(p.name for p in (DOCS / "examples").glob("*.json")))
def test_examples_are_valid(example):
    doc = json.loads((DOCS / "examples" / example).read_text())
    validate_settings(doc)
    validate_settings(settings.validate(doc))


@pytest.mark.mpi
def test_python_writes_runtime_reads_runtime_writes_python_reads(tmp_path):
    doc = settings.from_flat(
        {
            "hdf5.alignment": [0, "64K"],
            "hdf5.sieve_buf_size": "512K",
            "mpiio.romio_cb_write": "disable",
            "mpiio.vendor_hint": "x",
        },
        description="written by Python",
        meta={"trial": 7},
    )
    path = settings.save(doc, tmp_path / "settings.json")
    validate_settings(json.loads(path.read_text()))
    result = run_job(
        mpi() + [kernel("vpicio"), "-n", "32K", "-r", "-o", tmp_path], config=path, report=tmp_path / "report.json"
    )
    assert result.ok, result.stderr
    raw = json.loads((tmp_path / "report.json").read_text())
    validate_report(raw)
    # each level's module versions its section of the phases, as this iotuner reads them
    levels = {m: v for m, v in run_report.SECTION_VERSIONS.items() if m in ("posix", "mpiio", "hdf5", "pnetcdf")}
    assert {m: raw["sections"].get(m) for m in levels} == levels
    assert set(raw["sections"]) <= set(run_report.SECTION_VERSIONS)
    # a report before per-section versions reads the same
    old = tmp_path / "old.json"
    old.write_text(json.dumps({k: v for k, v in raw.items() if k != "sections"}))
    assert run_report.load(old).phases == run_report.load(tmp_path / "report.json").phases
    assert run_report.load(old).section_version("hdf5") == 1
    rep = run_report.load(tmp_path / "report.json")
    assert rep.settings["status"] == "loaded"
    assert rep.settings["document"] == settings.validate(doc)  # the runtime read exactly what Python wrote
    assert rep.settings["document"]["meta"] == {"trial": 7}
    assert {c["knob"]: c["effective"] for c in rep.checks() if c["phase"] == 0} == {
        "alignment": "0,65536",
        "sieve_buf_size": "524288",
        "romio_cb_write": "disable",
        "vendor_hint": None,
    }


def test_serial_report_matches_schema(tmp_path, programs):
    result = run_job([programs["serial_h5"], tmp_path / "g.h5"], report=tmp_path / "r.json")
    assert result.ok
    validate_report(json.loads((tmp_path / "r.json").read_text()))


@pytest.mark.parametrize(
    "text,message",
    [
        ("", "is empty, not a run report"),
        ("{", "is not JSON"),
        ('{"kind": "something-else"}', "not an iotuner run report"),
        ('{"kind": "iotuner-run-report", "version": 99}', "version 99"),
        ('{"kind": "iotuner-run-report", "version": 1, "run": {}}', "lacks"),
    ],
)
def test_bad_reports_are_named(tmp_path, text, message):
    path = tmp_path / "r.json"
    path.write_text(text)
    with pytest.raises(run_report.ReportError, match=message):
        run_report.load(path)


def test_core_through_ctypes():
    core = native.core()
    assert core.parse_size("4M") == 4 << 20
    with pytest.raises(ValueError, match="ambiguous"):
        core.parse_size("4MB")
    assert core.explain_hint("striping_factor", "4", None, "ufs")[0] == "dropped"
    status, reason = core.explain_hint("cb_nodes", "4", "1", "ufs", nnodes=1, nprocs=8, cb_config_list="*:1")
    assert status == "changed" and '"*:4"' in reason


def test_flat_settings_round_trip():
    flat = {"hdf5.alignment": [0, 65536], "mpiio.cb_nodes": 2, "lustre.stripe_count": 4}
    assert settings.flatten(settings.from_flat(flat)) == flat
    with pytest.raises(settings.SettingsError, match="layer.knob"):
        settings.from_flat({"alignment": 1})
    with pytest.raises(settings.SettingsError, match="unknown hdf5 knob"):
        settings.validate(settings.from_flat({"hdf5.nope": 1}))


@pytest.mark.mpi
def test_smart_report_matches_schema(tmp_path):
    import os

    result = run_job(
        mpi() + [kernel("h5ior"), "-b", "2M", "-i", "3", "-o", tmp_path],
        report=tmp_path / "r.json",
        env=dict(os.environ, IOTUNER_SMART="1"),
    )
    assert result.ok
    data = json.loads((tmp_path / "r.json").read_text())
    assert [p["role"] for p in data["smart"]["phases"]] == ["learn", "optimized", "optimized"]
    assert data["sections"]["smart"] == run_report.SECTION_VERSIONS["smart"]
    validate_report(data)


def test_a_version_1_report_is_still_read_and_printed():
    """Reports written before phases were keyed by who opened them (version 1) lack the new fields."""
    import io

    from rich.console import Console

    from iotuner import render
    from iotuner import smart_mode as smart_cli

    level = {"bytes_written": 0, "bytes_read": 0, "write_time_s": 0, "read_time_s": 0}
    phase = {
        "id": 0,
        "kind": "hdf5",
        "file": "/run/a.h5",
        "occurrence": 0,
        "created": True,
        "open_at_exit": False,
        "driver": "mpio",
        "file_system": "ext4",
        "mpiio_driver": "ufs",
        "ranks": 2,
        "data_level": "hdf5",
        "bytes_written": 1 << 20,
        "bytes_read": 0,
        "wall_time_s": 0.5,
        "bandwidth_mib_s": 2.0,
        "write_bandwidth_mib_s": 2.0,
        "read_bandwidth_mib_s": 0,
        "write_amplification": 1.0,
        "io_time_s": 0.1,
        "io_time_sum_s": 0.2,
        "time_sampled": False,
        "posix": {**level, "write_calls": 1, "read_calls": 0, "sync_time_s": 0, "meta_time_s": 0},
        "mpiio": {**level, "write_calls": 1, "read_calls": 0},
        "hdf5": {**level, "dataset_writes": 1, "dataset_reads": 0},
        "settings": [],
    }
    old = {
        "version": 1,
        "kind": "iotuner-run-report",
        "iotuner": "0.1.0",
        "created": "2026-01-01T00:00:00Z",
        "run": {
            "mpi": True,
            "ranks": 2,
            "nodes": 1,
            "host": "h",
            "cwd": "/run",
            "command": [],
            "mpi_library": None,
            "hdf5_library": None,
            "timer": "tsc",
            "wall_time_s": 1.0,
        },
        "settings": {"path": None, "status": "none", "message": None},
        "phases": [phase, {**phase, "id": 1, "bytes_written": 0}],
        "totals": {
            "phases": 2,
            "bytes_written": 1 << 20,
            "bytes_read": 0,
            "write_time_s": 0.5,
            "read_time_s": 0,
            "io_time_s": 0.1,
            "write_bandwidth_mib_s": 2.0,
            "read_bandwidth_mib_s": 0,
            "posix_bytes_written": 1 << 20,
            "posix_bytes_read": 0,
        },
        "smart": {
            "rules_table": "built-in",
            "margin": 0.25,
            "prediction": {
                "predictions": 0,
                "hits": 0,
                "misses": 0,
                "superseded": 0,
                "unpredicted": 0,
                "hit_fraction": None,
                "rule": {"predictions": 0},
                "repeat": {"predictions": 0},
            },
            "overhead": {"prediction_s": 0, "extraction_s": 0, "optimization_s": 0, "total_s": 0},
            "grammar": {},
            "phases": [
                {
                    "identity": "/run/a.h5",
                    "file": "/run/a.h5",
                    "occurrence": 0,
                    "role": "learn",
                    "rules_applied": None,
                    "prediction": {"method": "none", "calls": 0, "hits": 0, "misses": 0},
                    "bandwidth_mib_s": 2.0,
                    "reference_mib_s": 2.0,
                    "settings": [],
                    "feedback": None,
                }
            ],
        },
        "warnings": [],
    }
    rep = run_report.parse(old)
    assert rep.application_value("hdf5.transfer_mode") is None and len(rep.empty_phases()) == 1
    out = io.StringIO()
    console = Console(file=out, width=160)
    render.print_report(rep, console)
    smart_cli.print_summary(console, rep)
    assert "a.h5" in out.getvalue() and "1 phase(s) that moved no data (a.h5)" in out.getvalue()


@pytest.mark.mpi
def test_the_tuner_reads_the_applications_own_transfer_mode(tmp_path):
    """A default run of an application that chose collective transfers itself: the tuner's reference says so,
    so a best setting of "independent" is not called "the library's default" for it."""
    from iotuner.tune.evaluate import Measurement, read_back, reference_of

    result = run_job(mpi() + [kernel("h5ior"), "-b", "2M", "-m", "collective", "-o", tmp_path])
    assert result.ok, result.stderr
    assert result.report.application_value("hdf5.transfer_mode") == "collective"
    effective, observed = read_back(result.report)
    assert observed["hdf5.transfer_mode"] == "collective"
    assert (
        reference_of(Measurement(True, 1.0, 1.0, effective=effective, observed=observed))["hdf5.transfer_mode"]
        == "collective"
    )
    independent = run_job(mpi() + [kernel("h5ior"), "-b", "2M", "-m", "independent", "-o", tmp_path])
    assert "hdf5.transfer_mode" not in read_back(independent.report)[1]  # the library's default: not reported
