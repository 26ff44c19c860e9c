"""A stand-in application for tuner tests. It reads the settings iotuner gives
it (IOTUNER_CONFIG) and, by romio_cb_write: "disable" crashes, "enable" hangs,
anything else prints a bandwidth that depends on romio_ds_write."""

import json
import os
import signal
import sys
import time

knobs = {}
for group in json.load(open(os.environ["IOTUNER_CONFIG"])).get("groups", []):
    knobs.update(group.get("mpiio", {}))
mode = knobs.get("romio_cb_write")
if mode == "disable":
    # with a NUL and control bytes, as Open MPI 5's error messages have them
    print("fake_app: segmentation fault ahead\0\x1b[0m\x07", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)
if mode == "enable":
    time.sleep(600)
print(f"bandwidth={200 if knobs.get('romio_ds_write') == 'enable' else 100}")
