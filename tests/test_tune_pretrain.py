"""Pretraining TunIO's agents: the picker regenerated from a small recorded sweep and the stopper from
synthetic curves, deterministically for a seed; PCA impacts; the shipped policy files."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from iotuner.tune import space as spaces
from iotuner.tune.strategies.tunio import impact, pretrain
from iotuner.tune.strategies.tunio import stopper as stoppers

ROOT = Path(__file__).resolve().parents[1]
SWEEPS = ROOT / "bench" / "data" / "tunio-sweeps"
SCRIPT = ROOT / "bench" / "tunio_pretrain.py"


def small_sweep(tmp_path, points=60) -> Path:
    """The first points of a recorded sweep of a real kernel (bench/tunio_sweep.py)."""
    source = sorted(SWEEPS.glob("*.json"))[0]
    doc = json.loads(source.read_text())
    doc["points"] = doc["points"][:points]
    path = tmp_path / f"small-{source.name}"
    path.write_text(json.dumps(doc))
    return path


def pretrain_cli(*args):
    r = subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    return r


def test_the_picker_is_regenerated_from_a_recorded_sweep_deterministically(tmp_path):
    sweep = small_sweep(tmp_path)
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    pretrain_cli("picker", sweep, "--seed", 3, "--episodes", 25, "--out", a)
    pretrain_cli("picker", sweep, "--seed", 3, "--episodes", 25, "--out", b)
    pretrain_cli("picker", sweep, "--seed", 4, "--episodes", 25, "--out", c)
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()
    policy = impact.load_policy(a)
    recorded = pretrain.load_sweep(sweep)
    knobs = {k for d in recorded.space.dimensions for k in d.knobs()}
    assert set(policy.priors) == knobs and max(policy.priors.values()) == pytest.approx(1.0)
    # the knob PCA ranks first is among the three the sweep's variance decomposition ranks highest
    top = max(policy.priors, key=policy.priors.get)
    ranked = sorted(pretrain.variance_impacts(recorded).items(), key=lambda kv: -kv[1])[:3]
    assert any(top in recorded.space.dimension(name).knobs() for name, _ in ranked)
    assert policy.meta["episodes"] == 25 and policy.q.any()


def test_the_stopper_is_regenerated_deterministically(tmp_path):
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    pretrain_cli("stopper", "--seed", 1, "--episodes", 300, "--out", a)
    pretrain_cli("stopper", "--seed", 1, "--episodes", 300, "--out", b)
    pretrain_cli("stopper", "--seed", 2, "--episodes", 300, "--out", c)
    assert a.read_bytes() == b.read_bytes() != c.read_bytes()
    assert stoppers.load_policy(a).meta["episodes"] == 300


def test_pca_finds_the_one_dimension_that_matters():
    sp = spaces.load(str(ROOT / "bench" / "data" / "tunio-pretrain-space.json"))
    rng = np.random.default_rng(0)
    rows = np.array([[rng.integers(len(d.values)) for d in sp.dimensions] for _ in range(150)])
    j = [d.name for d in sp.dimensions].index("mpiio.cb_nodes")
    values = [[float(np.exp(6 + 1.0 * r[j] + 0.05 * rng.standard_normal()))] for r in rows]
    sweep = pretrain.Sweep("made", sp, rows, values, [400.0] * 5, [None] * len(rows))
    impacts = pretrain.pca_impacts(sweep)
    assert impacts["mpiio.cb_nodes"] == 1.0
    assert max(v for k, v in impacts.items() if k != "mpiio.cb_nodes") < 0.3


def test_synthetic_curves_climb_and_dip_as_section_3d_describes():
    rng = np.random.default_rng(7)
    curves = [pretrain.log_curve(rng) for _ in range(200)]
    for c in curves:
        assert c.true[0] == 1.0 and np.all(np.diff(c.true) >= 0)  # the incumbent never gets worse
    # some curves are observed dipping below their true value (the randomized downward shifts)
    assert sum(np.any(c.observed[1:] < 0.93 * c.true[1:]) for c in curves) >= 10
    # some stall for a stretch and then climb again
    assert (
        sum(
            any(
                np.diff(c.true)[i : i + 5].sum() == 0 and np.diff(c.true)[i + 5 :].sum() > 0.05 * c.true[-1]
                for i in range(1, 40)
            )
            for c in curves
        )
        >= 10
    )


def test_the_shipped_policies_load_are_small_and_say_what_they_were_trained_on():
    picker = impact.load_policy()
    stopper = stoppers.load_policy()
    for path in (impact.POLICY_FILE, stoppers.POLICY_FILE):
        assert path.stat().st_size < 300_000
    recorded = {pretrain.load_sweep(p).name for p in SWEEPS.glob("*.json")}
    assert set(picker.meta["sweeps"]) == recorded  # regenerable from what the repository holds
    assert stopper.meta["episodes"] >= 10_000


WITHOUT_GYMNASIUM = "import sys; sys.modules['gymnasium'] = None\n"  # as if the extra were not installed


def test_without_the_pretrain_extra_tunio_tunes_and_pretraining_says_what_to_install(tmp_path):
    """Gymnasium is an optional extra: the tunio strategy runs on the shipped policies without it, and
    pretraining names the extra to install in one line."""
    tune = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT_GYMNASIUM + "from iotuner.cli import main; sys.exit(main())",
            "tune",
            "--synthetic",
            "ufs",
            "--strategy",
            "tunio",
            "--trials",
            "8",
            "--out",
            str(tmp_path / "t"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert tune.returncode == 0, tune.stderr
    assert (tmp_path / "t" / "summary.json").exists()
    train = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT_GYMNASIUM + f"sys.argv = ['x', 'stopper', '--episodes', "
            f"'5', '--out', {str(tmp_path / 's.json')!r}]; import runpy; "
            f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert train.returncode == 1 and "Traceback" not in train.stderr
    assert "pretraining TunIO's stopper needs Gymnasium (not installed: " in train.stderr
    assert train.stderr.rstrip().endswith("install 'gymnasium>=0.29'") and not (tmp_path / "s.json").exists()
