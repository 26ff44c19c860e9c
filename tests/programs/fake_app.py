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
    print("fake_app: segmentation fault ahead", file=sys.stderr, flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)
if mode == "enable":
    time.sleep(600)
print(f"bandwidth={200 if knobs.get('romio_ds_write') == 'enable' else 100}")
