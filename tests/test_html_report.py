"""HTML reports: every kind of page is rendered, self-contained, and loaded in a real headless browser
(Debian's chromium), which must show it without overflow: the page's widths are measured by the page's
own inline script (data attributes on <body>, read back with --dump-dom), and a screenshot must not be
blank."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import importorskip, kernel, mpi, run_job

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
VIEWPORT = (1280, 900)
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def iotuner(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "iotuner", *map(str, args)], capture_output=True, text=True, **kw)


@pytest.fixture(scope="session")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found and os.geteuid() == 0:  # a test-only install step (make test runs it too)
        subprocess.run([str(ROOT / "scripts" / "setup-browser.sh")], capture_output=True, timeout=900)
        found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.skip(
            "chromium is not installed and could not be installed (scripts/setup-browser.sh needs root "
            "and Debian's package archive)"
        )
    return found


def browse(chromium: str, page: Path, tmp: Path, viewport: tuple[int, int] = VIEWPORT) -> tuple[str, Path]:
    """(DOM after the page's scripts ran, screenshot PNG), each with a fresh profile."""
    shot = tmp / (page.stem + ".png")
    for args in (["--dump-dom"], [f"--screenshot={shot}"]):
        with tempfile.TemporaryDirectory(prefix="iotuner-chromium-") as profile:
            out = subprocess.run(
                [
                    chromium,
                    *CHROMIUM_FLAGS,
                    f"--window-size={viewport[0]},{viewport[1]}",
                    f"--user-data-dir={profile}",
                    *args,
                    page.resolve().as_uri(),
                ],
                capture_output=True,
                text=True,
                timeout=120,
            )
        if args == ["--dump-dom"]:
            dom = out.stdout
    assert "<body" in dom, out.stderr[-2000:]
    assert shot.exists(), out.stderr[-2000:]
    return dom, shot


def body_attrs(dom: str) -> dict:
    tag = re.search(r"<body([^>]*)>", dom).group(1)
    return dict(re.findall(r'([\w-]+)="([^"]*)"', tag))


def ink_fraction(png: Path) -> float:
    """Share of pixels that differ from the background (the most common colour)."""
    from PIL import Image

    img = Image.open(png).convert("RGB")
    colors = img.getcolors(maxcolors=img.width * img.height)
    background = max(colors)[0]
    return 1 - background / (img.width * img.height)


def assert_self_contained(html: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html, re.I), "a resource from the network"
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert not re.search(r"<script[^>]+src", html)


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, Path]:
    """One page of each kind: study, run, smart run, advice."""
    tmp = tmp_path_factory.mktemp("pages")
    out = {}
    tune = iotuner(
        "tune",
        "--synthetic",
        "ufs",
        "--strategy",
        "random",
        "--trials",
        "12",
        "--out",
        tmp / "tune",
        "--study",
        "html",
        cwd=tmp,
    )
    assert tune.returncode == 0, tune.stderr
    for kind, src in (("study", tmp / "tune"), ("run", DATA / "bad_run_report.json")):
        r = iotuner("report", src, "-o", tmp / f"{kind}.html")
        assert r.returncode == 0 and f"({kind} page" in r.stdout, r.stderr
        out[kind] = tmp / f"{kind}.html"
    a = iotuner("advise", DATA / "bad_run_report.json", "--json")
    (tmp / "advice.json").write_text(a.stdout)
    r = iotuner("report", tmp / "advice.json", "-o", tmp / "advice.html")
    assert r.returncode == 0 and "(advice page" in r.stdout
    out["advice"] = tmp / "advice.html"
    with tempfile.TemporaryDirectory(prefix="iotuner-html-") as scratch:
        res = run_job(
            mpi() + [kernel("h5ior"), "-b", "4M", "-t", "1M", "-i", "3", "-o", scratch],
            report=tmp / "smart.json",
            env=dict(os.environ, IOTUNER_SMART="1"),
        )
        assert res.ok, res.stderr
    r = iotuner("report", tmp / "smart.json", "-o", tmp / "smart.html")
    assert r.returncode == 0 and "(smart page" in r.stdout, r.stderr
    out["smart"] = tmp / "smart.html"
    darshan = importorskip("darshan")
    logs = Path(darshan.__file__).parent / "examples" / "example_logs"
    long_name = next(logs.glob("shane_macsio_*.darshan"))  # an 80-character title, and high findings
    a = iotuner("advise", long_name, "--html", tmp / "advice-long.html")
    assert a.returncode in (0, 1), a.stderr
    out["advice-long"] = tmp / "advice-long.html"
    return out


# key elements each kind of page must show
EXPECT = {
    "study": ["Tuning curve", "Verdict", "Parameter importance", "Trials", "default (median"],
    "run": ["Phases over time", "Settings: requested, effective, why", "romio_cb_write", "applied"],
    "smart": ["Smart mode", "learned in phase", "settings for the phases that recur", "optimized"],
    "advice": ["Findings", "write-amplification", "Settings that address the findings", "romio_cb_write"],
}


@pytest.mark.mpi  # the smart page comes from a real run
@pytest.mark.parametrize("kind", list(EXPECT))
def test_page_is_self_contained(pages, kind):
    html = pages[kind].read_text()
    assert_self_contained(html)
    for text in EXPECT[kind]:
        assert text in html, text
    assert html.count("<svg") >= (1 if kind != "advice" else 0)


@pytest.mark.mpi
@pytest.mark.parametrize("kind", list(EXPECT))
def test_page_in_a_real_browser(pages, kind, chromium, tmp_path):
    """Expectations: the page renders (its script ran), the main table is there with rows, nothing is wider
    than the viewport (document scrollWidth <= clientWidth, the main table's right edge inside it), and the
    screenshot is not blank (at least 3% of its pixels differ from the background)."""
    dom, shot = browse(chromium, pages[kind], tmp_path)
    attrs = body_attrs(dom)
    assert attrs.get("data-report-kind") == kind
    assert attrs.get("data-measured") == "1", "the page's inline script did not run"
    client, scroll = int(attrs["data-client-width"]), int(attrs["data-scroll-width"])
    assert 0 < client and scroll <= client, (scroll, client)
    assert 'id="main-table"' in dom and int(attrs["data-main-table-right"]) <= client
    rows = re.search(r'id="main-table".*?<tbody>(.*?)</tbody>', dom, re.S).group(1)
    assert rows.count("<tr>") >= 1
    for text in EXPECT[kind]:
        assert text in dom
    assert ink_fraction(shot) >= 0.03


@pytest.mark.mpi
@pytest.mark.parametrize("kind", [*EXPECT, "advice-long"])
def test_page_at_800_pixels(pages, kind, chromium, tmp_path):
    """At 800 px: nothing wider than the window, the title wraps instead of overflowing, and every level
    badge stays one piece ("high", never "hig/h")."""
    dom, _ = browse(chromium, pages[kind], tmp_path, (800, 900))
    attrs = body_attrs(dom)
    assert attrs.get("data-measured") == "1"
    assert int(attrs["data-scroll-width"]) <= int(attrs["data-client-width"])
    assert attrs["data-title-overflow"] == "0"
    assert attrs["data-broken-badges"] == "0"
    if kind.startswith("advice"):
        assert 'class="lvl lvl-' in dom


@pytest.mark.mpi
@pytest.mark.parametrize("kind", ["study", "run", "advice"])
def test_page_at_420_pixels(pages, kind, chromium, tmp_path):
    """A phone's width (headless Chromium's window is at least 500 px, so about 485 px of page; the layout
    switches below 640): no table wider than the window, and no cell a few characters wide that breaks its
    numbers one character a line (a table of many columns shows each row as "header: value" lines)."""
    dom, _ = browse(chromium, pages[kind], tmp_path, (420, 900))
    attrs = body_attrs(dom)
    assert attrs.get("data-measured") == "1" and int(attrs["data-client-width"]) < 640
    assert int(attrs["data-scroll-width"]) <= int(attrs["data-client-width"])
    assert attrs["data-tables-overflowing"] == "0"
    assert attrs["data-narrow-cells"] == "0"


def test_study_page_says_one_trial_count_and_significance_in_words(pages):
    html = pages["study"].read_text()
    tile = int(re.search(r'<div class="card"><b>(\d+)</b><span>trials run', html).group(1))
    chart = int(re.search(r"Tuning curve: (\d+) trials run", html).group(1))
    summary = json.loads((pages["study"].parent / "tune" / "summary.json").read_text())
    assert tile == chart == summary["trials_run"]
    if summary["trials"] != summary["trials_run"]:  # duplicates proposed and not run again: both labels say so
        assert f"trials run ({summary['trials']} proposed)" in html
        assert f"({summary['trials'] - summary['trials_run']} more proposed were duplicates" in html
    significant = re.search(r'<div class="card"><b>([^<]*)</b><span>significant', html).group(1)
    assert re.fullmatch(r"(yes|no) \(p = [0-9.e-]+(, needed)? (&lt;|<) [0-9.e-]+\)", significant), significant
    assert ">True<" not in html and ">False<" not in html


def test_run_page_shows_time_in_io_calls_and_pages_format_bytes(pages):
    from iotuner.render import fmt_seconds

    run = pages["run"].read_text()
    doc = json.loads((DATA / "bad_run_report.json").read_text())
    assert "in I/O calls" in run and "of it in I/O calls" in run
    for p in doc["phases"]:
        if p["bytes_written"] or p["bytes_read"]:
            assert re.search(rf'<td class="num"[^>]*>{re.escape(fmt_seconds(p["io_time_s"]))}</td>', run)
    advice = pages["advice"].read_text()
    assert "1.0 MiB (1,048,576 bytes)" in advice  # the small_bytes threshold, not 1048576
    assert not re.search(r"<td[^>]*>\d{7,}</td>", advice + run)


def _study_dir(tmp: Path, rows: list[list], summary: dict) -> Path:
    import csv

    d = tmp / "study"
    d.mkdir()
    with open(d / "trials.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(
            [
                "kind",
                "trial",
                "state",
                "tuning_time_s",
                "value",
                "runs",
                "duplicate_of",
                "settings",
                "effective",
                "error",
            ]
        )
        w.writerows(rows)
    (d / "summary.json").write_text(json.dumps(summary))
    return d


def test_importance_without_a_study_database(tmp_path):
    """The fallback: the share of the trials' variance each knob explains alone. A knob that decides the
    value explains all of it; one that varies independently of the value, none."""
    from iotuner.htmlreport import study

    rows = []
    for i in range(12):
        cb = ["enable", "disable"][i % 2]
        other = [1, 2, 3][i // 4]  # balanced against cb
        rows.append(
            [
                "trial",
                i,
                "COMPLETE",
                i * 0.5,
                100.0 if cb == "enable" else 400.0,
                "[]",
                "",
                json.dumps({"mpiio.romio_cb_write": cb, "mpiio.cb_nodes": other}),
                "",
                "",
            ]
        )
    d = _study_dir(
        tmp_path, rows, {"study": "x", "objective": {"name": "write-bw", "direction": "maximize"}, "verdict": None}
    )
    imp, how = study.importance(study.read_tune_dir(d))
    assert "eta squared" in how
    assert dict(imp)["mpiio.romio_cb_write"] == pytest.approx(1.0)
    assert dict(imp)["mpiio.cb_nodes"] == pytest.approx(0.0)


def test_importance_from_the_study_database_is_fanovas(tmp_path):
    """With the study's database the page names Optuna's fANOVA, so the numbers must be fANOVA's whatever
    Optuna's default evaluator is (PED-ANOVA since Optuna 5): a knob that decides the value gets nearly all."""
    import optuna

    from iotuner.htmlreport import study

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    db = tmp_path / "study.db"
    st = optuna.create_study(study_name="x", storage=f"sqlite:///{db}", direction="maximize")
    dist = {
        "cb": optuna.distributions.CategoricalDistribution(["enable", "disable"]),
        "nodes": optuna.distributions.IntDistribution(1, 4),
    }
    for i in range(16):
        cb, nodes = ["enable", "disable"][i % 2], 1 + (i // 2) % 4
        st.add_trial(
            optuna.trial.create_trial(
                params={"cb": cb, "nodes": nodes},
                distributions=dist,
                value=(100.0 if cb == "enable" else 400.0) + 0.01 * nodes,
            )
        )
    d = _study_dir(
        tmp_path, [], {"study": "x", "objective": {"name": "write-bw", "direction": "maximize"}, "verdict": None}
    )
    tune = study.read_tune_dir(d)
    tune["db"] = db
    imp, how = study.importance(tune)
    assert "fANOVA" in how and "16 completed trials" in how
    search = optuna.create_study(direction="maximize")
    search.add_trials(st.get_trials())
    expected = optuna.importance.get_param_importances(
        search, evaluator=optuna.importance.FanovaImportanceEvaluator(seed=0)
    )
    assert dict(imp) == pytest.approx(dict(expected))
    assert dict(imp)["cb"] > 0.9


def test_study_page_reads_the_new_tune_fields(tmp_path):
    """The tuner-core rewrite's fields: training / confirmation rows with times, roti.curve, viability, stop."""
    from iotuner.htmlreport import render

    rows = [
        ["baseline", "", "COMPLETE", 0.1, 100, "[100]", "", "{}", "", ""],
        ["training", 0, "COMPLETE", 1.0, 150, "[150]", "", '{"mpiio.cb_nodes": 2}', "", ""],
        ["trial", 1, "COMPLETE", 2.0, 300, "[300]", "", '{"mpiio.cb_nodes": 4}', "", ""],
        ["confirmation", 1, "COMPLETE", 3.0, 290, "[290]", "", '{"mpiio.cb_nodes": 4}', "", ""],
    ]
    summary = {
        "study": "new",
        "objective": {"name": "write-bw", "direction": "maximize", "unit": "MB/s"},
        "default": 100,
        "winner": {"median": 290},
        "verdict": {"gain": 2.9, "significant": True},
        "roti": {
            "unit": "MB/s per minute",
            "curve": [{"t_s": 1, "roti": 10}, {"t_s": 3, "roti": 20}],
            "peak": 20,
            "final": 18,
        },
        "viability": {"production_runtime_s": 3600, "runs": 12, "reason": "pays back after 12 runs", "t_s": 2.5},
        "stop": {"rule": "plateau", "reason": "no gain in 10 trials"},
    }
    d = _study_dir(tmp_path, rows, summary)
    html, kind = render(d)
    assert kind == "study"
    for text in (
        "Return on tuning investment over time",
        "viability point",
        "confirmation run",
        "pays back after 12 runs",
        "no gain in 10 trials",
        "training",
    ):
        assert text in html, text
    assert_self_contained(html)


def test_report_of_something_else(tmp_path):
    (tmp_path / "x.json").write_text('{"kind": "other"}')
    (tmp_path / "bin").write_bytes(b"\x00\xff" * 10)
    for path, msg in (
        (tmp_path / "x.json", "neither a run report"),
        (tmp_path / "bin", "is binary data"),
        (tmp_path, "without summary.json"),
        (tmp_path / "none.json", "cannot read"),
    ):
        r = iotuner("report", path, "-o", tmp_path / "out.html")
        assert r.returncode == 2 and msg in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert not (tmp_path / "out.html").exists()


def test_fired_rules_are_one_table_with_their_settings_escaped():
    from iotuner.htmlreport.page import fired_rules

    html = fired_rules(
        [
            {
                "rule": 7,
                "title": "collective buffering off",
                "reason": "sequential <writes>",
                "set": {"mpiio.romio_cb_write": "disable"},
            },
            {"rule": 8, "title": "keep data sieving", "reason": "strided"},
        ]
    )
    rows = html.split("<tr>")[2:]  # past the header row
    assert len(rows) == 2
    assert "7: collective buffering off" in rows[0] and "mpiio.romio_cb_write=disable" in rows[0]
    assert "&lt;writes&gt;" in rows[0] and "<writes>" not in html
    assert "nothing" in rows[1]  # a rule that sets nothing says so
