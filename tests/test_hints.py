"""Hints interchange: ROMIO_HINTS files, MPICH_MPIIO_HINTS strings and H5Tuner XML, both ways."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iotuner import h5tuner, hints, settings

ROMIO_FILE = """# hints of a site
cb_buffer_size 16777216
romio_cb_write enable
cb_nodes 4
striping_factor 8
site_private_hint yes   # unknown hints pass through
"""


def iotuner(*args):
    return subprocess.run([sys.executable, "-m", "iotuner", *map(str, args)], capture_output=True, text=True)


def test_romio_hints_file_round_trip():
    doc = hints.from_romio_hints(ROMIO_FILE)
    assert doc["groups"] == [
        {
            "mpiio": {
                "cb_buffer_size": 16777216,
                "romio_cb_write": "enable",
                "cb_nodes": 4,
                "striping_factor": 8,
                "site_private_hint": "yes",
            }
        }
    ]
    out = hints.to_romio_hints(doc)
    assert out.left_out == []
    assert hints.parse_romio_hints(out.text) == hints.parse_romio_hints(ROMIO_FILE)
    lines = [ln for ln in out.text.splitlines() if not ln.startswith("#")]
    assert lines == [
        "cb_buffer_size 16777216",
        "romio_cb_write enable",
        "cb_nodes 4",
        "striping_factor 8",
        "site_private_hint yes",
    ]


def test_romio_hints_sizes_are_normalized_and_bad_lines_named():
    assert hints.from_romio_hints("cb_buffer_size 4M\n")["groups"][0]["mpiio"]["cb_buffer_size"] == 4 << 20
    with pytest.raises(hints.HintsError, match="line 2"):
        hints.from_romio_hints("cb_nodes 2\nromio_cb_write\n")
    with pytest.raises(hints.HintsError, match="romio_cb_write"):
        hints.from_romio_hints("romio_cb_write sometimes\n")


def test_settings_to_h5tuner_xml_and_back():
    doc = settings.validate(
        {
            "version": 1,
            "hdf5": {"alignment": [1048576, 4194304], "sieve_buf_size": 262144},
            "mpiio": {"cb_buffer_size": 8388608, "cb_nodes": 2, "striping_factor": 4, "striping_unit": 1048576},
            "groups": [
                {"file": "out.h5", "dataset": "dens", "hdf5": {"chunk_dims": [8, 16]}},
                {"file": "out.h5", "mpiio": {"cb_nodes": 1}},
            ],
        }
    )
    out = hints.to_h5tuner_xml(doc)
    assert out.left_out == []
    back = h5tuner.convert_text(out.text.encode()).document
    assert back["groups"] == doc["groups"]


def test_h5tuner_xml_lists_what_it_cannot_hold():
    doc = {
        "version": 1,
        "mpiio": {"romio_cb_write": "enable", "cb_nodes": 2},
        "lustre": {"stripe_count": 4},
        "groups": [{"file": "chk_*.h5", "hdf5": {"sieve_buf_size": 4096}}],
    }
    out = hints.to_h5tuner_xml(doc)
    assert "<cb_nodes>2</cb_nodes>" in out.text and "romio_cb_write" not in out.text
    assert "stripe_count" not in out.text and "4096" not in out.text
    left = " | ".join(out.left_out)
    assert "mpiio.romio_cb_write" in left and "lustre.stripe_count" in left and "chk_*.h5" in left


def test_mpich_mpiio_hints_both_ways():
    text = "*.h5:romio_cb_write=enable:cb_nodes=4,*:striping_factor=8"
    doc = hints.from_mpich_mpiio_hints(text)
    assert doc["groups"] == [
        {"file": "*.h5", "mpiio": {"romio_cb_write": "enable", "cb_nodes": 4}},
        {"mpiio": {"striping_factor": 8}},
    ]
    out = hints.to_mpich_mpiio_hints(doc)
    assert out.text.strip() == text and out.left_out == []
    with pytest.raises(hints.HintsError, match="key=value"):
        hints.from_mpich_mpiio_hints("*.h5:romio_cb_write")


def test_romio_hints_export_merges_groups_and_lists_per_file_ones():
    doc = {
        "version": 1,
        "mpiio": {"romio_cb_write": "enable"},
        "hdf5": {"sieve_buf_size": 4096},
        "groups": [{"mpiio": {"romio_cb_write": "disable"}}, {"file": "a.h5", "mpiio": {"cb_nodes": 1}}],
    }
    out = hints.to_romio_hints(doc)
    assert hints.parse_romio_hints(out.text) == {"romio_cb_write": "disable"}  # the later group wins
    left = " | ".join(out.left_out)
    assert "hdf5.sieve_buf_size" in left and "mpiio.cb_nodes (file a.h5)" in left


def test_pnetcdf_hints_export_for_every_file_pnetcdf_opens():
    """PNETCDF_HINTS ("key=value;key=value") carries the PnetCDF hints and the MPI-IO ones PnetCDF passes on to
    MPI_File_open for its files; what it cannot hold is listed: per-file groups, other layers, values with
    its separators."""
    doc = {
        "version": 1,
        "pnetcdf": {"nc_var_align_size": "1M", "nc_in_place_swap": "enable"},
        "mpiio": {"cb_nodes": 2, "cb_config_list": "*:2"},
        "hdf5": {"sieve_buf_size": 4096},
        "ompio": {"fcoll": "vulcan"},
        "groups": [{"pnetcdf": {"nc_in_place_swap": "disable"}}, {"file": "a.nc", "pnetcdf": {"nc_ibuf_size": 1}}],
    }
    out = hints.export(doc, "pnetcdf-hints")
    assert out.text == "nc_var_align_size=1048576;nc_in_place_swap=disable;cb_nodes=2;cb_config_list=*:2\n"
    left = " | ".join(out.left_out)
    assert "hdf5.sieve_buf_size" in left and "ompio.fcoll" in left and "pnetcdf.nc_ibuf_size (file a.nc)" in left
    # the other formats name PnetCDF's own way
    assert any("pnetcdf.nc_var_align_size" in x and "pnetcdf-hints" in x for x in hints.to_romio_hints(doc).left_out)


def test_convert_recognises_each_format(tmp_path):
    rh = tmp_path / "romio_hints"
    rh.write_text(ROMIO_FILE)
    r = iotuner("convert", rh)
    assert r.returncode == 0 and json.loads(r.stdout)["groups"][0]["mpiio"]["cb_nodes"] == 4
    cray = tmp_path / "cray.txt"
    cray.write_text("*:cb_nodes=2\n")
    r = iotuner("convert", cray)
    assert r.returncode == 0 and json.loads(r.stdout)["groups"] == [{"mpiio": {"cb_nodes": 2}}]
    r = iotuner("convert", "--mpich-mpiio-hints", "out*.h5:romio_cb_write=disable")
    assert r.returncode == 0 and json.loads(r.stdout)["groups"][0]["file"] == "out*.h5"


def test_an_xml_file_is_read_in_the_encoding_it_declares(tmp_path):
    xml = tmp_path / "latin1.xml"
    xml.write_bytes(
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n<Parameters><cb_nodes FileName="donn\u00e9es.h5">'
        "2</cb_nodes></Parameters>\n".encode("latin-1")
    )
    r = iotuner("convert", xml)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["groups"] == [{"file": "donn\u00e9es.h5", "mpiio": {"cb_nodes": 2}}]


def test_export_command_writes_a_file_others_read(tmp_path):
    best = tmp_path / "best.json"
    settings.save({"version": 1, "mpiio": {"romio_cb_write": "enable", "cb_buffer_size": "8M"}}, best)
    assert oct(os.stat(best).st_mode & 0o777) == oct(0o666 & ~_umask())
    r = iotuner("export", best, "--to", "romio-hints", "-o", tmp_path / "rh")
    assert r.returncode == 0 and r.stderr == ""
    assert hints.parse_romio_hints((tmp_path / "rh").read_text()) == {
        "romio_cb_write": "enable",
        "cb_buffer_size": 8388608,
    }
    # what the format cannot hold is listed on stderr; the rest is written, and that is a success
    r = iotuner("export", best, "--to", "h5tuner-xml")
    assert r.returncode == 0 and "<cb_buffer_size>8388608</cb_buffer_size>" in r.stdout
    assert "not in h5tuner-xml: mpiio.romio_cb_write" in r.stderr
    # so the help's recipe sets ROMIO_HINTS even when a knob is left out
    best.write_text('{"version": 1, "mpiio": {"romio_cb_write": "disable"}, "hdf5": {"transfer_mode": "independent"}}')
    r = subprocess.run(
        f"iotuner export {best} --to romio-hints -o {tmp_path / 'rh2'} && export ROMIO_HINTS=rh2 "
        "&& echo ROMIO_HINTS=$ROMIO_HINTS",
        shell=True,
        capture_output=True,
        text=True,
        env=dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"),
    )
    assert r.stdout.strip() == "ROMIO_HINTS=rh2" and "not in romio-hints: hdf5.transfer_mode" in r.stderr
    assert hints.parse_romio_hints((tmp_path / "rh2").read_text()) == {"romio_cb_write": "disable"}
    # --strict: an error, and no file
    r = iotuner("export", best, "--to", "romio-hints", "--strict", "-o", tmp_path / "rh3")
    assert r.returncode == 1 and "--strict" in r.stderr and not (tmp_path / "rh3").exists()
    assert iotuner("export", best, "--to", "romio-hints", "--strict").stdout == ""


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask
