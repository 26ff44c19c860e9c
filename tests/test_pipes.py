"""Printing commands piped into `head -1` (or into a reader that is gone): exit 0, no traceback; piped
text fits COLUMNS (100 without it), the whole data is in --json."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import importorskip

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("pipes")
    (d / "s.json").write_text('{"version": 1, "mpiio": {"romio_cb_write": "enable", "cb_nodes": 2}}')
    (d / "h.xml").write_text("<Parameters><cb_nodes>2</cb_nodes><sieve_buf_size>4096</sieve_buf_size></Parameters>")
    done = subprocess.run(
        [sys.executable, "-m", "iotuner", "tune", "--synthetic", "ufs", "--trials", "3", "--out", str(d / "done")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return d


def commands(d: Path) -> list[list[str]]:
    report = str(DATA / "bad_run_report.json")
    return [
        ["--help"],
        ["run", "--help"],
        ["knobs"],
        ["knobs", "--json"],
        ["kernels"],
        ["kernels", "--json"],
        ["check", str(d / "s.json")],
        ["convert", str(d / "h.xml")],
        ["export", str(d / "s.json"), "--to", "romio-hints"],
        ["show", report],
        ["show", report, "--json"],
        ["show", report, "--csv"],
        ["advise", report],
        ["advise", report, "--json"],
        ["tune", "--synthetic", "ufs", "--trials", "3", "--out", "{out}"],
        ["show", str(d / "done")],
        ["show", str(d / "done"), "--json"],
    ]


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


TEXT = [
    i
    for i, c in enumerate(commands(Path("D")))
    if "--json" not in c and "--csv" not in c and c[0] not in ("check", "convert")
]  # those two print JSON


@pytest.mark.parametrize("columns", ["", "80"])
@pytest.mark.parametrize("i", TEXT, ids=[_ids()[i] for i in TEXT])
def test_piped_text_fits_columns_without_trailing_blanks(i, columns, files, tmp_path):
    """Piped text fits COLUMNS, or 100 columns without it, and no line ends in padding."""
    argv = [w.replace("{out}", str(tmp_path / "o")) for w in commands(files)[i]]
    env = dict(os.environ, COLUMNS=columns) if columns else {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    out = subprocess.run(
        [sys.executable, "-m", "iotuner", *argv], capture_output=True, text=True, env=env, timeout=300
    ).stdout
    lines = out.splitlines()
    assert lines
    # a line may be wider only when it is one word that must not break (a path to copy)
    wide = [ln for ln in lines if len(ln) > int(columns or 100) and len(ln.split()) > 1]
    assert not wide, wide
    assert not [ln for ln in lines if ln != ln.rstrip()]


def test_a_long_file_name_is_shown_by_its_end_and_whole_in_json(files, tmp_path):
    doc = json.loads((DATA / "bad_run_report.json").read_text())
    long_name = "/scratch/" + "very_long_directory_name_" * 12 + "h5ior.h5"
    doc["phases"][0]["file"] = long_name
    (tmp_path / "r.json").write_text(json.dumps(doc))
    env = dict(os.environ, COLUMNS="80")
    text = subprocess.run(
        [sys.executable, "-m", "iotuner", "show", str(tmp_path / "r.json")], capture_output=True, text=True, env=env
    ).stdout
    assert max(map(len, text.splitlines())) <= 80
    # too narrow for the table: a paragraph a phase, the file on a line of its own, shown by its end
    shown = next(ln.split()[0] for ln in text.splitlines() if ln.strip().startswith("…"))
    assert long_name.endswith(shown[1:]) and shown.endswith("h5ior.h5") and len(shown) > 40
    js = subprocess.run(
        [sys.executable, "-m", "iotuner", "show", str(tmp_path / "r.json"), "--json"],
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    assert json.loads(js)["phases"][0]["file"] == long_name


def test_piped_advice_on_a_2048_process_darshan_log_fits_120_columns():
    darshan = importorskip("darshan")
    log = Path(darshan.__file__).parent / "examples" / "example_logs" / "example.darshan"  # VPIC-IO, 2048 ranks
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    r = subprocess.run(
        [sys.executable, "-m", "iotuner", "advise", str(log)], capture_output=True, text=True, env=env, timeout=300
    )
    assert r.returncode in (0, 1), r.stderr
    assert "2048 process(es)" in r.stdout
    assert max(map(len, r.stdout.splitlines())) <= 120
