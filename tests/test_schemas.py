"""iotuner's own documents are read against their schemas (docs/*.schema.json): a damaged one gets one line
naming the field, and the small validator agrees with jsonschema on what the schemas accept."""

import contextlib
import copy
import io
import json
import math
import re
from pathlib import Path

import jsonschema
import pytest

from iotuner import cli, native, run_report, schema

DOCS = Path(__file__).parent.parent / "docs"
DATA = Path(__file__).parent / "data"
SCHEMAS = sorted(p.name for p in DOCS.glob("*.schema.json"))


def test_the_installed_schemas_are_the_documented_ones():
    installed = native.native_dir() / "share" / "iotuner" / "schemas"
    assert SCHEMAS == [
        "advice.schema.json",
        "calibration.schema.json",
        "platform.schema.json",
        "report.schema.json",
        "settings.schema.json",
        "summary.schema.json",
    ]
    for name in SCHEMAS:
        assert (installed / name).read_text() == (DOCS / name).read_text(), name


SCHEMA = {
    "type": "object",
    "required": ["a"],
    "additionalProperties": False,
    "properties": {
        "a": {"type": "array", "items": {"type": "integer", "minimum": 0}},
        "b": {"type": "object", "properties": {"c": {"type": ["string", "null"], "enum": ["x", "y", None]}}},
    },
}


@pytest.mark.parametrize(
    "doc, problem",
    [
        ({"a": [1, "x"]}, "a[1]: expected integer, got a string"),
        ({"a": [1], "b": {"c": {}}}, "b.c: expected string or null, got an object"),
        ({"a": [1], "b": {"c": "q"}}, 'b.c: "q" is not one of "x", "y", null'),
        ({"a": [1.5]}, "a[0]: expected integer, got a number"),
        ({"b": {}}, "a: is missing"),
        ({"a": [], "z": 1}, "z: is not a field of this document"),
        ({"a": [-1]}, "a[0]: -1 is below the minimum 0"),
    ],
)
def test_the_message_names_the_field(tmp_path, monkeypatch, doc, problem):
    (tmp_path / "t.schema.json").write_text(json.dumps(SCHEMA))
    monkeypatch.setattr(schema, "schema_dir", lambda: tmp_path)
    schema.load.cache_clear()
    try:
        with pytest.raises(schema.SchemaError, match=f"^{re.escape(problem)}$"):
            schema.check(doc, "t.schema.json")
        with pytest.raises(jsonschema.ValidationError):  # jsonschema, the reference, refuses it too
            jsonschema.Draft202012Validator(SCHEMA).validate(doc)
        schema.check({"a": [0, 7], "b": {"c": None}}, "t.schema.json")  # and both accept a good one
        jsonschema.Draft202012Validator(SCHEMA).validate({"a": [0, 7], "b": {"c": None}})
    finally:
        schema.load.cache_clear()


def test_numbers_must_be_finite():
    """Python's json reads NaN and Infinity, which JSON does not have: no reader downstream expects them."""
    doc = json.loads((DATA / "bad_run_report.json").read_text())
    doc["phases"][0]["wall_time_s"] = math.nan
    with pytest.raises(run_report.ReportError, match=r"phases\[0\].wall_time_s: expected number, got nan"):
        run_report.parse(doc)


def _damage(doc: dict, path: tuple, value) -> dict:
    doc = copy.deepcopy(doc)
    node = doc
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return doc


def _cli(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        status = cli.main(argv)
    return status, out.getvalue()


def test_a_damaged_run_report_is_one_line_naming_the_field(tmp_path):
    doc = json.loads((DATA / "bad_run_report.json").read_text())
    # a list where a string was ("unhashable type: 'list'" in the probe)
    bad = tmp_path / "r.json"
    bad.write_text(json.dumps(_damage(doc, ("phases", 0, "settings", 0, "status"), ["applied"])))
    for argv in (["show", str(bad)], ["advise", str(bad)], ["report", str(bad), "-o", str(tmp_path / "p.html")]):
        status, out = _cli(argv)
        assert status == 2 and out.count("\n") == 1, out
        assert out.startswith(
            f"iotuner {argv[0]}: run report {bad} is damaged: phases[0].settings[0].status: "
            '["applied"] is not one of "applied", "changed"'
        ), out


def test_a_damaged_summary_is_one_line_naming_the_field(tmp_path):
    out = tmp_path / "study"
    status, _ = _cli(["tune", "--synthetic", "ufs", "--trials", "3", "--out", str(out)])
    assert status == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["version"] == 1
    schema.check(summary, "summary.schema.json")
    (out / "summary.json").write_text(json.dumps(_damage(summary, ("roti", "peak"), {"a": 1})))  # a TypeError before
    for argv in (["show", str(out)], ["report", str(out), "-o", str(tmp_path / "p.html")]):
        status, text = _cli(argv)
        assert status == 2 and text.count("\n") == 1, text
        assert f"{out / 'summary.json'} is damaged: roti.peak: expected number or null, got an object" in text
    (out / "summary.json").write_text(json.dumps(dict(summary, version=2)))
    status, text = _cli(["show", str(out)])
    assert status == 2 and "summary version 2; this iotuner reads up to 1" in text


def test_damaged_advice_is_one_line_naming_the_field(tmp_path):
    status, text = _cli(["advise", str(DATA / "bad_run_report.json"), "--json"])
    advice = json.loads(text)
    schema.check(advice, "advice.schema.json")
    bad = tmp_path / "advice.json"
    bad.write_text(json.dumps(_damage(advice, ("summary", "high"), "many")))
    status, text = _cli(["report", str(bad), "-o", str(tmp_path / "p.html")])
    assert status == 2 and text.count("\n") == 1
    assert f"advice {bad} is damaged: summary.high: expected integer, got a string" in text


def test_version_1_reports_still_read():
    rep = run_report.load(DATA / "bad_run_report.json")
    assert rep.data["version"] == 1 and "identity" not in rep.phases[0]  # read as it is, checked as version 2


def test_each_module_section_has_its_own_version(tmp_path):
    """A report lists each module's section with its version ("sections"); one before per-section versions
    lists none, and reads every section as version 1. A section newer than this iotuner reads is refused by
    name, not called damage; a module from outside the library versions its own section freely."""
    data = json.loads((DATA / "bad_run_report.json").read_text())
    assert "sections" not in data
    rep = run_report.parse(data)
    assert all(rep.section_version(m) == 1 for m in run_report.SECTION_VERSIONS)

    newer = run_report.SECTION_VERSIONS["access"] + 1
    path = tmp_path / "r.json"
    path.write_text(json.dumps(dict(data, sections={"posix": 1, "access": newer})))
    with pytest.raises(
        run_report.ReportError, match=f"access section is version {newer}; this iotuner reads up to {newer - 1}"
    ):
        run_report.load(path)
    status, text = _cli(["show", str(path)])
    assert status == 2 and text.count("\n") == 1 and "access section" in text

    rep = run_report.parse(dict(data, sections={"hdf5": 1, "outside": 7}))
    assert rep.section_version("hdf5") == 1 and rep.section_version("outside") == 7
    with pytest.raises(run_report.ReportError, match=r"damaged: sections\.posix: expected integer, got a string"):
        run_report.parse(dict(data, sections={"posix": "1"}))
    with pytest.raises(run_report.ReportError, match="damaged: sections.smart: 0 is below the minimum 1"):
        run_report.parse(dict(data, sections={"smart": 0}))
