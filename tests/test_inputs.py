"""Every command that takes a file refuses what it does not read: exit 2, one line naming the file."""

import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from conftest import importorskip


def darshan_example() -> Path:
    darshan = importorskip("darshan")
    log = Path(darshan.__file__).parent / "examples" / "example_logs" / "example.darshan"
    if not log.is_file():
        pytest.skip("the darshan wheel has no example logs")
    return log


def png(path: Path) -> Path:
    def chunk(tag: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))

    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 0, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(b"\0\0"))
        + chunk(b"IEND", b"")
    )
    return path


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad")
    empty = d / "empty.json"
    empty.write_bytes(b"")
    return {"darshan": darshan_example(), "png": png(d / "plot.png"), "empty": empty}


# every command (and option) that reads a file the user names; {f} is the file
COMMANDS = [
    ["show", "{f}"],
    ["check", "{f}"],
    ["convert", "{f}"],
    ["smart", "--explain", "{f}"],
    ["report", "{f}"],
    ["tune", "--baseline", "{f}", "--synthetic", "ufs", "--trials", "1", "--out", "{out}"],
    ["advise", "--thresholds", "{f}", "{log}"],
    ["export", "{f}", "--to", "romio-hints"],
]
KINDS = {"darshan": "Darshan log", "png": "PNG image", "empty": "empty"}


@pytest.mark.parametrize("kind", sorted(KINDS))
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: "-".join(w for w in a if "{" not in w))
def test_a_foreign_file_is_one_line_and_exit_2(argv, kind, bad_files, tmp_path):
    f = bad_files[kind]
    words = [w.format(f=f, out=tmp_path / "out", log=bad_files["darshan"]) for w in argv]
    r = subprocess.run([sys.executable, "-m", "iotuner", *words], capture_output=True, text=True, timeout=120)
    assert "Traceback" not in r.stderr + r.stdout
    assert r.returncode in (2, 3) if argv[0] == "advise" else r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert f.name in lines[0] and lines[0].startswith(f"iotuner {argv[0]}")
    assert KINDS[kind] in lines[0]


def test_advise_names_a_png_and_an_empty_file(bad_files):
    for kind in ("png", "empty"):
        r = subprocess.run(
            [sys.executable, "-m", "iotuner", "advise", str(bad_files[kind])],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert KINDS[kind] in r.stderr and bad_files[kind].name in r.stderr


def test_run_with_a_foreign_settings_file_warns_and_runs_untuned(bad_files):
    """The documented contract of run: a bad settings file never stops the job."""
    r = subprocess.run(
        [sys.executable, "-m", "iotuner", "run", "--config", str(bad_files["png"]), "--", "true"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0 and "Traceback" not in r.stderr + r.stdout
    assert "plot.png" in r.stderr and "PNG image" in r.stderr


def test_the_sniffer_leaves_text_alone():
    from iotuner import inputs

    assert inputs.sniff(b'{"version": 1}') is None
    assert inputs.sniff(b"3.41\0\0\0\0" + bytes(16)) == "a Darshan log"
    assert inputs.sniff(b"3.5") is None  # a JSON number, too short to be a Darshan header


def _in_thread(argv: list[str]) -> tuple[int | None, float, str]:
    """cli.main in a thread: (status or None if still running after 10 s, seconds, output)."""
    import contextlib
    import io
    import threading
    import time

    from iotuner import cli

    out, result = io.StringIO(), {}

    def call():
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            result["status"] = cli.main(argv)

    t0 = time.monotonic()
    t = threading.Thread(target=call, daemon=True)
    t.start()
    t.join(10)
    return result.get("status"), time.monotonic() - t0, out.getvalue()


@pytest.mark.parametrize("special", ["fifo", "/dev/zero", "directory"])
@pytest.mark.parametrize("argv", [["check", "{f}"], ["run", "--config", "{f}", "--", "true"]], ids=["check", "run"])
def test_a_fifo_a_device_or_a_directory_is_refused_at_once(tmp_path, argv, special):
    """Reading a FIFO would wait for a writer forever; /dev/zero never ends: exit 2 within a second, before
    anything is read (and, for run, before the job starts)."""
    import os

    f = {"fifo": tmp_path / "settings.json", "/dev/zero": Path("/dev/zero"), "directory": tmp_path}[special]
    if special == "fifo":
        os.mkfifo(f)
    status, seconds, out = _in_thread([w.format(f=f) for w in argv])
    assert status == 2 and seconds < 1, (status, seconds, out)
    kind = {"fifo": "a FIFO", "/dev/zero": "a character device", "directory": "a directory"}[special]
    assert out.strip() == f"iotuner {argv[0]}: {f} is {kind}, not a settings document"


def test_a_file_over_the_size_cap_is_refused_before_it_is_read(tmp_path):
    from iotuner import inputs, settings

    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(settings.MAX_BYTES + 1)  # sparse: no memory, no disk
    with pytest.raises(inputs.InputError, match="big.json is 16 MiB: more than iotuner reads as a settings document"):
        settings.load(big)


@pytest.mark.parametrize(
    "argv",
    [
        ["show", "{f}"],
        ["report", "{f}"],
        ["convert", "{f}"],
        ["advise", "{f}"],
        ["smart", "--explain", "{f}"],
        ["export", "{f}", "--to", "romio-hints"],
        ["tune", "--space", "{f}", "--synthetic", "ufs", "--trials", "1", "--out", "{out}"],
    ],
    ids=lambda a: "-".join(w for w in a[:2] if "{" not in w),
)
def test_every_reader_refuses_a_fifo_without_waiting(tmp_path, argv):
    import os

    fifo = tmp_path / "input"
    os.mkfifo(fifo)
    status, seconds, out = _in_thread([w.format(f=fifo, out=tmp_path / "out") for w in argv])
    assert status == 2, (status, seconds, out)  # None: it was still waiting on the FIFO
    lines = out.strip().splitlines()
    assert len(lines) == 1 and f"{fifo} is a FIFO" in lines[0], out


def test_tune_names_a_png_given_as_its_space(tmp_path, bad_files):
    status, _, out = _in_thread(
        [
            "tune",
            "--space",
            str(bad_files["png"]),
            "--synthetic",
            "ufs",
            "--trials",
            "1",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert status == 2 and out.strip() == f"iotuner tune: {bad_files['png']} is a PNG image, not a search space (JSON)"
