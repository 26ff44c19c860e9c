#!/usr/bin/env bash
# AddressSanitizer and UndefinedBehaviorSanitizer over the C core's tests and
# the runtime library: the ctest suite of the core, then kernel runs with the
# library preloaded (settings applied and read back; smart mode; a serial
# program past the folding bound). Any report fails the run.
#
# The kernels are the sanitized build's own: with libasan linked into the
# executable, the preloaded library needs no LD_PRELOAD of libasan (which
# hangs MPICH's MPI_Init in glibc's locale lock here).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=build/sanitize
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="$flags" >/dev/null
cmake --build "$dir" -j 2 >/dev/null
ctest --test-dir "$dir" -R '^core\.' --output-on-failure

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lib=$PWD/$dir/native/libiotuner.so
export ASAN_OPTIONS=detect_leaks=1:verify_asan_link_order=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# hwloc's plugins (libhwloc-plugins, which Open MPI's packages bring) leak in MPICH's MPI_Init and are
# unloaded before exit, so LeakSanitizer cannot name them: keep MPICH from loading them here
export HWLOC_PLUGINS_PATH="$tmp/no-hwloc-plugins"

run() { # name, log, command...: the run succeeds and no sanitizer speaks
    local name=$1 log=$2
    shift 2
    if ! "$@" >"$log" 2>&1 || grep -qE "ERROR: (Address|Leak)Sanitizer|runtime error:" "$log"; then
        echo "sanitize: $name: failed" >&2; cat "$log" >&2; exit 1
    fi
    echo "sanitize: $name: clean"
}

cat > "$tmp/settings.json" <<'JSON'
{"version": 1,
 "hdf5": {"alignment": [0, "64K"], "transfer_mode": "collective", "chunk_bytes": "64K", "mdc_initial_size": "4M"},
 "mpiio": {"romio_cb_write": "enable", "cb_config_list": "*:2", "cb_nodes": 2}}
JSON
mkdir -p "$tmp/vpicio" "$tmp/h5ior" "$tmp/files"
run "vpicio with settings" "$tmp/vpicio.log" mpiexec.mpich -n 2 -genv LD_PRELOAD "$lib" \
    -genv IOTUNER_CONFIG "$tmp/settings.json" -genv IOTUNER_REPORT "$tmp/vpicio.json" \
    "$dir/kernels/vpicio" -n 16K -t 2 -r -o "$tmp/vpicio"
grep -q "vpicio verify: ok" "$tmp/vpicio.log" && test -s "$tmp/vpicio.json"

run "h5ior in smart mode" "$tmp/h5ior.log" mpiexec.mpich -n 2 -genv LD_PRELOAD "$lib" -genv IOTUNER_SMART 1 \
    -genv IOTUNER_REPORT "$tmp/h5ior.json" "$dir/kernels/h5ior" -b 2M -i 4 -r -o "$tmp/h5ior"
grep -q "h5ior verify: ok" "$tmp/h5ior.log" && test -s "$tmp/h5ior.json"

run "a serial program writing 600 files" "$tmp/files.log" env LD_PRELOAD="$lib" IOTUNER_REPORT="$tmp/files.json" \
    "$dir/bench/bench_many_files" "$tmp/files" 600 100
test -s "$tmp/files.json"

# file views: a subarray of 8,192 pieces (the flattening grows its list), set again and again (a file keeps
# its last few views, older ones freed), written and read back
mpicc.mpich $flags tests/programs/subarray_view.c -o "$tmp/subarray_view"
run "subarray views set 400 times" "$tmp/views.log" mpiexec.mpich -n 2 -genv LD_PRELOAD "$lib" \
    -genv IOTUNER_REPORT "$tmp/views.json" "$tmp/subarray_view" "$tmp/views.bin" 8192 4 fortran 200
grep -q "subarray_view: ok" "$tmp/views.log" && test -s "$tmp/views.json"

# the C library's streams and duplicated descriptors (stdio.c, fds.c): fopen/fwrite/fprintf/fgets/fscanf,
# fdopen, dup/dup2 of a tracked descriptor, freopen
mpicc.mpich $flags tests/programs/stdio_io.c -o "$tmp/stdio_io"
mkdir -p "$tmp/stdio"
run "stdio streams and duplicated descriptors" "$tmp/stdio.log" mpiexec.mpich -n 2 -genv LD_PRELOAD "$lib" \
    -genv IOTUNER_REPORT "$tmp/stdio.json" "$tmp/stdio_io" "$tmp/stdio"
grep -q '"stdio"' "$tmp/stdio.json"
