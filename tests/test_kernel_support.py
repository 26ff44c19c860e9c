"""The pieces around the extractor: the kernel's C support (loop reduction and
path switching at run time) and kernel.json read through iotuner.kernel."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import iotuner.kernel as kernel_api

SUPPORT = Path(kernel_api.__file__).parent

PROGRAM = r"""
#include <stdio.h>
#include "iotk.h"
int main(int argc, char **argv)
{
    long outer = 0, inner = 0, empty = 0, one = 0;
    { IOTK_LOOP(1, iotk_trip(0, 10, 1, 1, 0));
    for (int i = 0; (i < 10) && iotk_loop_next(&iotk_loop_1); i++)
    {
        outer++;
        /* a reduced loop inside a reduced loop runs whole: factors never multiply */
        { IOTK_LOOP(2, iotk_trip(0, 7, 1, 1, 0));
        for (int j = 0; (j < 7) && iotk_loop_next(&iotk_loop_2); j++)
        {
            inner++;
        } }
    } }
    { IOTK_LOOP(3, iotk_trip(5, 5, 1, 1, 0));
    for (int i = 5; (i < 5) && iotk_loop_next(&iotk_loop_3); i++)
    {
        empty++;
    } }
    { IOTK_LOOP(4, iotk_trip(9, 0, 3, 0, 1));
    for (int i = 9; (i >= 0) && iotk_loop_next(&iotk_loop_4); i -= 3)
    {
        one++;
        break;
    } }
    printf("%ld %ld %ld %ld\n", outer, inner, empty, one);
    for (int a = 1; a < argc; a++) /* +PATH: opened to write, -PATH: to read */
        printf("%s\n", iotk_open_path(argv[a] + 1, argv[a][0] == '+'));
    return 0;
}
"""


@pytest.fixture(scope="module")
def support_program(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("iotk")
    (d / "t.c").write_text(PROGRAM)
    exe = d / "t"
    subprocess.run(
        [
            "gcc",
            "-std=gnu99",
            "-Wall",
            "-Werror",
            f"-I{SUPPORT}",
            "-DIOTK_FRACTION=0.25",
            "-DIOTK_NLOOPS=4",
            str(d / "t.c"),
            str(SUPPORT / "iotk.c"),
            "-o",
            str(exe),
        ],
        check=True,
    )
    return exe


def run(exe: Path, *args: str, **env: str) -> tuple[list[str], dict | None]:
    stats = exe.parent / "stats"
    stats.mkdir(exist_ok=True)
    for f in stats.iterdir():
        f.unlink()
    r = subprocess.run(
        [str(exe), *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=exe.parent,
        env={"IOTUNER_KERNEL_STATS": str(stats), "PATH": "/usr/bin:/bin", **env},
    )
    files = list(stats.iterdir())
    return r.stdout.split("\n"), (json.loads(files[0].read_text()) if files else None)


def test_loops_run_a_fraction_of_their_trips_never_below_one(support_program):
    out, stats = run(support_program)
    # ceil(0.25 * 10) = 3 outer iterations, the inner loop whole each time, no iteration of an empty loop,
    # and a loop of ceil(0.25 * 4) = 1 iteration that breaks out
    assert out[0] == "3 21 0 1"
    loops = {lp["id"]: lp for lp in stats["loops"]}
    assert loops[1] == {"id": 1, "entries": 1, "reduced_entries": 1, "trips": 10, "run": 3}
    assert loops[2]["entries"] == 3 and loops[2]["reduced_entries"] == 0  # nested: not reduced
    assert loops[4]["trips"] == 4 and loops[4]["run"] == 1
    assert stats["fraction"] == 0.25


def test_fraction_is_overridden_at_run_time(support_program):
    out, stats = run(support_program, IOTUNER_KERNEL_LOOP_FRACTION="1")
    assert out[0] == "10 70 0 1"  # the whole kernel: the validation's exact comparison runs this
    assert all(lp["reduced_entries"] == 0 for lp in stats["loops"])


def test_paths_move_under_the_prefix(support_program, tmp_path):
    prefix = tmp_path / "shm"
    out, stats = run(
        support_program, "+/abs/dir/f.h5", "+rel/g.h5", "+ufs:/x/y.dat", IOTUNER_KERNEL_PATH_PREFIX=str(prefix) + "/"
    )
    cwd = support_program.parent
    assert out[1:4] == [f"{prefix}/abs/dir/f.h5", f"{prefix}{cwd}/rel/g.h5", f"ufs:{prefix}/x/y.dat"]
    assert (prefix / "abs" / "dir").is_dir() and (prefix / str(cwd).lstrip("/") / "rel").is_dir()
    assert [o[0] for o in stats["opens"]] == out[1:4] and all(o[1] == 0 for o in stats["opens"])
    out, _ = run(support_program, f"+{prefix}/already/here")  # no prefix set at run time: unchanged
    assert out[1] == f"{prefix}/already/here"


def test_only_outputs_move_under_the_prefix(support_program, tmp_path):
    """A file opened to read stays where it is (an input of the application), unless the kernel wrote it
    under the prefix before (a read-back of its own output)."""
    prefix = tmp_path / "shm"
    inp = tmp_path / "input.nml"
    inp.write_text("n = 4\n")
    written = prefix / str(tmp_path).lstrip("/") / "out.h5"
    written.parent.mkdir(parents=True)
    written.write_text("")
    out, stats = run(
        support_program,
        f"-{inp}",
        f"-{tmp_path}/out.h5",
        f"+{inp}",
        "-ufs:/no/such.dat",
        IOTUNER_KERNEL_PATH_PREFIX=str(prefix),
    )
    assert out[1:5] == [str(inp), str(written), f"{prefix}{inp}", "ufs:/no/such.dat"]
    assert not (prefix / "no").exists()  # a read creates no directories
    assert [o[0] for o in stats["opens"]] == out[1:5]


def manifest(tmp_path: Path, **changes) -> Path:
    doc = {
        "kind": kernel_api.KIND,
        "version": 1,
        "status": "validated",
        "reason": None,
        "application": {"command": ["./app", "{scratch}"], "cwd": "/w"},
        "kernel": {"executable": "kernel", "command": ["/k/kernel", "{scratch}"]},
        "scale": 4.0,
        "loop_fraction": 0.25,
        "validation": {"speedup": 20.0},
    }
    doc.update(changes)
    kernel_api.save(tmp_path, doc)
    return tmp_path


def test_api_runs_the_kernel_when_validated(tmp_path):
    k = kernel_api.load(manifest(tmp_path))
    assert k.usable and k.command() == ["/k/kernel", "{scratch}"] and k.app_command() == ["./app", "{scratch}"]
    assert k.scale == 4.0 and k.speedup == 20.0 and k.cwd == Path("/w")


def test_api_falls_back_to_the_application(tmp_path):
    k = kernel_api.load(manifest(tmp_path, status="fallback", reason="the kernel does not build"))
    assert not k.usable and k.command() == ["./app", "{scratch}"] and k.scale == 1.0
    assert k.reason == "the kernel does not build"


@pytest.mark.parametrize(
    "text, message",
    [
        (None, "kernel.json is missing"),
        ("{not json", "is corrupt"),
        ('{"kind": "iotuner-run-report", "version": 1}', "not an iotuner kernel manifest"),
        ('{"kind": "iotuner-kernel", "version": 99, "status": "validated"}', "manifest version 99"),
        ('{"kind": "iotuner-kernel", "version": 1, "status": "maybe"}', "unknown status"),
    ],
)
def test_api_names_what_is_wrong_with_a_manifest(tmp_path, text, message):
    if text is not None:
        (tmp_path / kernel_api.MANIFEST).write_text(text)
    with pytest.raises(kernel_api.KernelError, match=message):
        kernel_api.load(tmp_path)
