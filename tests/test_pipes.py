"""Printing commands piped into `head -1` (or into a reader that is gone): exit 0, no traceback; piped
output is one record per line."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("pipes")
    (d / "s.json").write_text('{"version": 1, "mpiio": {"romio_cb_write": "enable", "cb_nodes": 2}}')
    (d / "h.xml").write_text("<Parameters><cb_nodes>2</cb_nodes><sieve_buf_size>4096</sieve_buf_size></Parameters>")
    done = subprocess.run([sys.executable, "-m", "iotuner", "tune", "--synthetic", "ufs", "--trials", "3", "--out",
                           str(d / "done")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return d


def commands(d: Path) -> list[list[str]]:
    report = str(DATA / "bad_run_report.json")
    return [["--help"], ["run", "--help"], ["knobs"], ["knobs", "--json"], ["kernels"], ["kernels", "--json"],
            ["check", str(d / "s.json")], ["convert", str(d / "h.xml")],
            ["export", str(d / "s.json"), "--to", "romio-hints"], ["show", report], ["show", report, "--json"],
            ["show", report, "--csv"], ["advise", report], ["advise", report, "--json"],
            ["tune", "--synthetic", "ufs", "--trials", "3", "--out", "{out}"], ["show", str(d / "done")],
            ["show", str(d / "done"), "--json"]]


def _ids():
    return [" ".join(c).replace(str(DATA) + "/", "") for c in commands(Path("D"))]


@pytest.mark.parametrize("i", range(len(_ids())), ids=_ids())
def test_piped_into_head(i, files, tmp_path):
    argv = commands(files)[i]
    cmd = [sys.executable, "-m", "iotuner", *[w.replace("{out}", str(tmp_path / "head")) for w in argv]]
    head = subprocess.Popen(["head", "-1"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    p = subprocess.run(cmd, stdout=head.stdin, stderr=subprocess.PIPE, text=True, timeout=300)
    head.stdin.close()
    first = head.stdout.read()
    head.wait()
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
    assert p.returncode in (0, 1) if argv[0] == "advise" else p.returncode == 0, p.stderr
    assert first.strip(), "nothing was printed"

    # the worst case: the reader is gone before the first write
    cmd = [w.replace(str(tmp_path / "head"), str(tmp_path / "gone")) for w in cmd]
    r, w = os.pipe()
    os.close(r)
    p = subprocess.run(cmd, stdout=w, stderr=subprocess.PIPE, text=True, timeout=300)
    os.close(w)
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
    assert p.returncode in (0, 1) if argv[0] == "advise" else p.returncode == 0, p.stderr


def test_piped_tables_are_not_wrapped(files, tmp_path):
    """A long file name stays whole on its line, however narrow COLUMNS says the terminal is."""
    doc = json.loads((DATA / "bad_run_report.json").read_text())
    long_name = "/scratch/" + "very_long_directory_name_" * 12 + "h5ior.h5"
    doc["phases"][0]["file"] = long_name
    (tmp_path / "r.json").write_text(json.dumps(doc))
    for cmd in (["show", str(tmp_path / "r.json")], ["knobs"]):
        out = subprocess.run([sys.executable, "-m", "iotuner", *cmd], capture_output=True, text=True,
                             env=dict(os.environ, COLUMNS="80")).stdout
        if cmd[0] == "show":
            assert any(long_name in line for line in out.splitlines())
        else:  # each knob is one row: its description on the knob's line
            line = next(ln for ln in out.splitlines() if "hdf5.alignment" in ln)
            assert "[threshold, alignment]" in line and "H5Pset_alignment" in line
