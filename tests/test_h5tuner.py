"""iotuner convert: an H5Tuner XML control file becomes an equivalent
settings document, and running with it applies what H5Tuner would."""

import json
import subprocess
import sys

import pytest

from conftest import kernel, mpi, run_job
from iotuner import h5tuner

XML = """<?xml version="1.0"?>
<Parameters>
  <High_Level_IO_Library>
    <alignment>0,65536</alignment>
    <sieve_buf_size>262144</sieve_buf_size>
    <chunk VariableName="px">16384</chunk>
  </High_Level_IO_Library>
  <Middleware_Layer>
    <cb_buffer_size>1048576</cb_buffer_size>
    <cb_nodes FileName="other.h5">1</cb_nodes>
    <cb_nodes>2</cb_nodes>
  </Middleware_Layer>
  <Parallel_File_System>
    <striping_factor>4</striping_factor>
    <striping_unit>65536</striping_unit>
  </Parallel_File_System>
</Parameters>
"""

EXPECTED = {
    "version": 1,
    "description": "converted from H5Tuner control file h5tuner.xml",
    "groups": [
        {
            "hdf5": {"alignment": [0, 65536], "sieve_buf_size": 262144},
            "mpiio": {"cb_buffer_size": 1048576, "cb_nodes": 2, "striping_factor": 4, "striping_unit": 65536},
        },
        {"dataset": "px", "hdf5": {"chunk_dims": [16384]}},
        {"file": "other.h5", "mpiio": {"cb_nodes": 1}},
    ],
}


def test_conversion_is_equivalent(tmp_path):
    xml = tmp_path / "h5tuner.xml"
    xml.write_text(XML)
    conv = h5tuner.convert_file(xml)
    assert conv.notes == []
    doc = conv.document
    assert doc["groups"][0] == EXPECTED["groups"][0]
    assert sorted(doc["groups"][1:], key=json.dumps) == sorted(EXPECTED["groups"][1:], key=json.dumps)


def test_filename_entry_wins_for_its_file():
    """H5Tuner applies a FileName entry over a general one, whatever the order in the file."""
    from iotuner import settings

    doc = h5tuner.convert_text(XML).document
    assert settings.flatten(doc)["mpiio.cb_nodes"] == 2
    groups = [g for g in doc["groups"] if g.get("file") == "other.h5"]
    assert groups[0]["mpiio"]["cb_nodes"] == 1 and doc["groups"].index(groups[0]) > 0


@pytest.mark.parametrize(
    "bad,message",
    [
        ("<Parameters><alignment>64K</alignment></Parameters>", "not a whole number"),
        ("<Parameters><alignment>1,2,3</alignment></Parameters>", "threshold,alignment"),
        ("<Parameters><chunk>0,4</chunk></Parameters>", "positive"),
        ("<Parameters><cb_nodes>", "not well-formed"),
    ],
)
def test_bad_xml_is_named(bad, message):
    with pytest.raises(h5tuner.ConversionError, match=message):
        h5tuner.convert_text(bad)


def test_unknown_elements_are_noted():
    conv = h5tuner.convert_text(
        "<Parameters><IBM_lockless_io>true</IBM_lockless_io><frobnicate>1</frobnicate>"
        "<cb_nodes>2</cb_nodes></Parameters>"
    )
    assert len(conv.notes) == 2 and "bglockless" in conv.notes[0] and "frobnicate" in conv.notes[1]


@pytest.mark.mpi
def test_cli_convert_then_run(tmp_path):
    xml = tmp_path / "h5tuner.xml"
    xml.write_text(XML)
    out = tmp_path / "converted.json"
    r = subprocess.run(
        [sys.executable, "-m", "iotuner", "convert", str(xml), "-o", str(out)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    result = run_job(mpi() + [kernel("vpicio"), "-n", "64K", "-o", tmp_path / "run"], config=out)
    assert result.ok, result.stderr
    status = {
        (c["layer"], c["knob"], c.get("dataset", "").rsplit("/", 1)[-1]): c["status"] for c in result.report.checks()
    }
    assert status[("hdf5", "alignment", "")] == "applied"
    assert status[("hdf5", "sieve_buf_size", "")] == "applied"
    assert status[("hdf5", "chunk_dims", "px")] == "applied"
    assert ("hdf5", "chunk_dims", "py") not in status  # only the named variable
    assert status[("mpiio", "cb_buffer_size", "")] == "applied"
    assert status[("mpiio", "striping_factor", "")] == "dropped"
    # cb_nodes=2 without cb_config_list is capped on one node, and said so
    assert status[("mpiio", "cb_nodes", "")] == "changed"
