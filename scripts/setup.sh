#!/usr/bin/env bash
# Installs what iotuner needs on Debian/Ubuntu (MPICH, parallel HDF5, build
# tools), then a Python virtual environment (.venv) with iotuner in it.
# Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

# MPICH only: an Open MPI package would flip the mpicc/mpiexec alternatives,
# and Open MPI refuses to run as root. Debian's python3-h5py-mpi pulls it in.
# slurm-wlm, munge and postgresql: the distributed-tuning tests start a throw-away
# single-node cluster and database (scripts/slurm.sh, scripts/postgres.sh)
packages=(mpich libhdf5-mpich-dev hdf5-tools cmake make gcc pkg-config python3-venv slurm-wlm munge postgresql)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -eq 0 ]; then sudo=""; elif command -v sudo >/dev/null; then sudo="sudo"; else
    echo "setup: need root to install: ${missing[*]}" >&2; exit 1
  fi
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# build requirements first, so the editable install can reuse its build directory (build/<interpreter>) incrementally
.venv/bin/python -m pip install -q "scikit-build-core>=0.9"
.venv/bin/python -m pip install -q --no-build-isolation -e ".[test,cluster,kernel,darshan,pretrain]"
echo "setup: ready ($(.venv/bin/iotuner --version); MPI: $(mpiexec.mpich --version | sed -n 's/^ *Version: *//p' | head -1))"
