#!/usr/bin/env bash
# The Debian 13 (trixie) leg of CI: the newer stack users run (HDF5 1.14, MPICH 4.2, Open MPI 5, PnetCDF 1.14,
# netCDF 4.9.3, SimGrid 4.0, GCC 14, Python 3.13). Makes a trixie root with debootstrap from the mirror this
# machine's apt uses, installs Debian 13's packages of the same components, and runs the steps below inside it.
#   scripts/debian13.sh          the whole leg (makes the root first when needed): build with warnings as errors,
#                                ctest, `iotuner demo` (a confirmed gain), `simulate` at 64 ranks on 4 nodes of
#                                hopper, then the version-dependent tests, a `tune --space ompio` under Open MPI 5
#                                among them (tests/test_ompio_components.py)
#   scripts/debian13.sh root     only make (or check) the root
# The root is kept in $IOTUNER_DEBIAN13_CACHE (default /var/cache/iotuner-debian13) and reused while its stamp
# (this script's package list) matches. Needs root (chroot, mounts). Exits non-zero when any step fails.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(pwd)
cache=${IOTUNER_DEBIAN13_CACHE:-/var/cache/iotuner-debian13}
root=$cache/root
packages=(mpich libhdf5-mpich-dev hdf5-tools openmpi-bin libopenmpi-dev libhdf5-openmpi-dev libpnetcdf-dev
          libnetcdf-mpi-dev libsimgrid-dev gcc g++ gfortran cmake make pkg-config python3-venv python3-dev
          ca-certificates procps)
# the tests whose outcome depends on the versions: the runtime, settings, Open MPI, PnetCDF and netCDF, HDF5
# 1.14's calls, the simulator, calibration (IOTUNER_DEBIAN13_TESTS: others)
tests=(tests/test_runtime_structure.py tests/test_contracts.py tests/test_hints.py tests/test_run_hints.py
       tests/test_report_env.py tests/test_openmpi.py tests/test_ompio_components.py tests/test_pnetcdf.py
       tests/test_hdf5_later_calls.py tests/test_simulate.py tests/test_calibrate.py)
read -r -a tests <<<"${IOTUNER_DEBIAN13_TESTS:-${tests[*]}}"
stamp=$(printf '%s\n' trixie "${packages[@]}" | sha256sum | cut -c1-16)

say() { echo "debian13: $*"; }
die() { echo "debian13: FAILED: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap, chroot, bind mounts)"

# The Debian mirror of this machine's apt configuration (deb822 or one-line sources), not a hard-coded host.
mirror() {
  local files=() f url
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] && files+=("$f")
  done
  [ ${#files[@]} -gt 0 ] || die "no /etc/apt/sources.list*"
  url=$(awk '/^Types:/ {deb = ($0 ~ /deb( |$)/)} deb && /^URIs:/ && $2 ~ /debian/ && $2 !~ /security/ {print $2; exit}' \
        "${files[@]}" 2>/dev/null || true)
  [ -n "$url" ] || url=$(awk '$1 == "deb" && $0 ~ /debian/ && $0 !~ /security/ {for (i = 2; i <= NF; i++)
                          if ($i ~ /^https?:/) {print $i; exit}}' "${files[@]}" 2>/dev/null || true)
  [ -n "$url" ] || die "no Debian mirror found in /etc/apt/sources.list*"
  echo "$url"
}

make_root() {
  if [ -f "$root/.iotuner-stamp" ] && [ "$(cat "$root/.iotuner-stamp")" = "$stamp" ]; then
    say "reusing the root in $root"
    return
  fi
  command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
  local url new=$cache/root.new
  url=$(mirror)
  say "making a trixie root from $url in $root"
  mkdir -p "$cache"
  rm -rf "$new"
  debootstrap --variant=minbase --include=ca-certificates trixie "$new" "$url" >"$cache/debootstrap.log" 2>&1 ||
    { tail -20 "$cache/debootstrap.log" >&2; die "debootstrap (log: $cache/debootstrap.log)"; }
  echo "deb $url trixie main" >"$new/etc/apt/sources.list"
  # the host's trust store: the package registries may be reached through the host's own certificate authority
  cp /etc/ssl/certs/ca-certificates.crt "$new/etc/ssl/certs/iotuner-host.crt"
  cp -r /etc/apt/apt.conf.d/. "$new/etc/apt/apt.conf.d/" 2>/dev/null || true
  chroot "$new" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive bash -ec "
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends ${packages[*]} >/dev/null
    # MPICH's wrappers and launcher are the default, as on the host (scripts/setup.sh)
    for pair in mpi=/usr/bin/mpicc.mpich mpirun=/usr/bin/mpirun.mpich h5pcc=/usr/bin/h5pcc.mpich; do
      [ -e \${pair#*=} ] && update-alternatives --set \${pair%%=*} \${pair#*=} >/dev/null || true
    done
    apt-get clean" || die "installing Debian 13's packages"
  echo "$stamp" >"$new/.iotuner-stamp"
  rm -rf "$root"
  mv "$new" "$root"
}

mounted=()
unmount_all() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[i]}" 2>/dev/null || true; done
}
bind() {  # bind SOURCE TARGET-in-root [ro]
  mkdir -p "$root$2"
  mount --bind "$1" "$root$2"
  mounted+=("$root$2")
  if [ "${3:-}" = ro ]; then mount -o remount,bind,ro "$root$2"; fi
}

make_root
[ "${1:-}" = root ] && exit 0

trap unmount_all EXIT
trap 'exit 130' INT TERM  # so that the EXIT trap unmounts on a signal too
bind /proc /proc
bind /sys /sys
bind /dev /dev
bind /dev/shm /dev/shm
bind "$src" /src ro

# Inside: a copy of the tree (the host's build/ and .venv stay the host's), kept in the root between runs so the
# build and the virtual environment are incremental; no darshan extra (no Python 3.13 wheel). Each step is timed;
# the first that fails fails the leg.
chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
    PIP_CERT=/etc/ssl/certs/iotuner-host.crt PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_DEFAULT_TIMEOUT=180 \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    bash -ec '
  started=$SECONDS
  step() { echo "debian13: [$((SECONDS - started))s] $*"; }
  mkdir -p /root/iotuner && cd /root/iotuner
  find . -mindepth 1 -maxdepth 1 ! -name .venv ! -name build -exec rm -rf {} +
  (cd /src && tar -c --exclude=./.venv --exclude=./build --exclude=./.git --exclude=__pycache__ .) | tar -x
  step "versions: $(gcc --version | head -1); $(python3 --version); MPICH $(mpichversion | sed -n "s/MPICH Version: *//p")"
  [ -x .venv/bin/python ] || python3 -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q "scikit-build-core>=0.9" pytest "jsonschema>=4.18"
  step "build (warnings are errors)"
  .venv/bin/python -m pip install -q --no-build-isolation -C cmake.define.IOTUNER_WERROR=ON -e .
  tag=$(.venv/bin/python -c "import sys; print(sys.implementation.cache_tag)")
  step "ctest"
  ctest --test-dir build/$tag --output-on-failure
  step "iotuner demo (what make demo runs): it must confirm a gain"
  rm -rf /tmp/iotuner-demo
  .venv/bin/iotuner demo --out /tmp/iotuner-demo
  .venv/bin/python - <<"PY"
import json, sys
verdict = json.load(open("/tmp/iotuner-demo/summary.json"))["verdict"] or {}
if not (verdict.get("significant") and verdict.get("gain", 0) > 1):
    sys.exit("debian13: the demo confirmed no gain: %s" % verdict)
print("debian13: the demo confirmed a gain of %.2fx (p = %.3g)" % (verdict["gain"], verdict["p_value"]))
PY
  step "simulate at 64 ranks on 4 nodes of hopper (SimGrid $(pkg-config --modversion simgrid))"
  rm -rf /tmp/iotuner-sim && mkdir /tmp/iotuner-sim
  .venv/bin/iotuner run --report /tmp/iotuner-sim/r.json -- \
      mpirun.mpich -n 4 "$(.venv/bin/python -c "from iotuner import native; print(native.executable(\"h5ior\"))")" \
      -b 4M -t 1M -o /tmp/iotuner-sim >/dev/null
  .venv/bin/iotuner simulate /tmp/iotuner-sim/r.json --ranks 64 --nodes 4 --platform hopper
  step "the tests that depend on versions (the tune of the ompio space under Open MPI 5 among them)"
  .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
  step "done"
' debian13 "${tests[@]}" || die "a step inside the Debian 13 root failed (above)"
say "ok"
