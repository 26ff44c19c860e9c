"""iotuner tune --kernel: the trials on the application's I/O kernel, the confirmation round on the
application; the gain holds on the application."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile

import pytest

pytest.importorskip("clang.cindex")

from conftest import mpi  # noqa: E402
from iotuner import report  # noqa: E402
from iotuner.kernel import discover  # noqa: E402
from iotuner.tune.store import CONFIRMATION, Store  # noqa: E402

pytestmark = [pytest.mark.mpi, pytest.mark.slow]
ONE_AGGREGATOR = {"version": 1, "mpiio": {"romio_cb_write": "enable"}}
# 3 steps of 4 MiB per rank in collective writes (where one aggregator hurts), and compute the kernel drops
ARGS = ["{scratch}", "3", "524288", "300"]


def iotuner(*args, **kw):
    return subprocess.run([sys.executable, "-m", "iotuner", *map(str, args)], capture_output=True, text=True, **kw)


def test_tuning_on_the_kernel_holds_on_the_application(kernel_apps, tmp_path):
    app = kernel_apps["kernel_app"]
    kern = tmp_path / "kern"
    k = discover.discover_io(discover.Options(app.sources, kern, app_command=[str(app.exe), *ARGS], cwd=tmp_path))
    assert k.usable, k.reason
    baseline = tmp_path / "one-aggregator.json"
    baseline.write_text(json.dumps(ONE_AGGREGATOR))
    out = tmp_path / "out"
    with tempfile.TemporaryDirectory(dir="/dev/shm") as scratch:
        r = iotuner("tune", "--kernel", kern, "--baseline", baseline, "--space", "romio", "--strategy", "bayes",
                    "--trials", 12, "--objective", "write-bw", "--confirm-top", 1, "--study", "k", "--out", out,
                    "--scratch", scratch, timeout=1500)
        assert r.returncode == 0, r.stderr + r.stdout[-3000:]
        summary = json.loads((out / "summary.json").read_text())
        # one aggregator costs this application 1.2-2x on these machines (its writes are 4 MiB per rank): the
        # gain found on the kernel must hold on the application, well beyond the noise measured there
        verdict = summary["verdict"]
        beyond_noise = max(1.1, 1 + 3 * verdict["noise"])
        assert verdict["significant"] is True and verdict["gain"] >= beyond_noise, verdict
        # the search ran the kernel, the confirmation the application
        store = Store.open(f"sqlite:///{out / 'study.db'}", "k", heartbeat_s=None)
        assert store.config.app[0].endswith("kernel") and store.config.confirm_app[0] == str(app.exe)
        kc = summary["kernel"]
        assert kc["speedup"] >= 3.0, kc
        assert kc["roti"]["peak"] > kc["roti_without_kernel"]["peak"] > 0  # a cheaper search pays back sooner
        assert kc["roti"]["final"] > kc["roti_without_kernel"]["final"]
        assert len(store.records(CONFIRMATION)) >= 8
        assert "kernel: one evaluation" in " ".join(r.stdout.split())

        # best.json on the application, interleaved with the baseline. The margin beyond noise is the verdict's
        # (8+ confirmation runs); a single run here varies by up to 1.5x (CI once gave 973 vs 952 MiB/s in 3 pairs
        # after a confirmed 1.2x), so 5 pairs only have to show that best.json, as written, beats the baseline.
        ratios = []
        for i in range(5):
            pair = {}
            for cfg in (baseline, out / "best.json"):
                rep = tmp_path / f"app-{i}-{cfg.stem}.json"
                command = [a.replace("{scratch}", scratch) for a in [str(app.exe), *ARGS]]
                run = iotuner("run", "--config", cfg, "--report", rep, "--", *mpi(), *command, timeout=600)
                assert run.returncode == 0, run.stderr
                pair[cfg] = report.load(rep).totals["write_bandwidth_mib_s"]
            ratios.append(pair[out / "best.json"] / pair[baseline])
        assert statistics.median(ratios) > 1.0, ratios
