#!/usr/bin/env bash
# The test suite on a busy machine: `make test` (or pytest with the arguments given) while
# STRESS_BURNERS processes (default 2, one per core here) burn CPU beside it. Every performance
# test compares interleaved pairs with a margin from the noise it measures (tests/perf.py), so
# the suite must pass like this. The burners end with the script, however it ends: on exit or
# interrupt they are killed, and each also stops by itself once the script is gone.
set -euo pipefail
cd "$(dirname "$0")/.."
burners=${STRESS_BURNERS:-2}

pids=() suite=
stop() {
    if [[ -n $suite ]]; then kill -TERM -- "-$suite" 2>/dev/null || true; fi
    if ((${#pids[@]})); then
        kill "${pids[@]}" 2>/dev/null || true
        wait "${pids[@]}" 2>/dev/null || true
    fi
    pids=()
    return 0
}
trap stop EXIT
trap 'echo "stress-test: interrupted" >&2; exit 130' INT
trap 'echo "stress-test: terminated" >&2; exit 143' TERM

script=$$
for _ in $(seq "$burners"); do
    (while kill -0 "$script" 2>/dev/null; do :; done) &
    pids+=($!)
done
echo "stress-test: $burners CPU burners (pids ${pids[*]}); load average $(cut -d' ' -f1-3 /proc/loadavg)"

if (($#)); then
    make build >/dev/null
    command=(.venv/bin/python -m pytest "$@")
else
    command=(make test)
fi
start=$SECONDS
# the suite in its own process group, waited for in the background so that a signal reaches the traps at once
setsid "${command[@]}" &
suite=$!
status=0
wait "$suite" || status=$?
suite=
echo "stress-test: $( ((status)) && echo FAILED || echo passed) in $((SECONDS - start)) s with $burners" \
     "burners; load average $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
