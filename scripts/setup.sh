#!/usr/bin/env bash
# Installs what iotuner needs on Debian/Ubuntu (MPICH, parallel HDF5, build
# tools), then a Python virtual environment (.venv) with iotuner in it.
# Idempotent: a second run only rebuilds what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

# MPICH and its parallel HDF5 are what iotuner is built and tested with.
# slurm-wlm, munge and postgresql: the distributed-tuning tests start a throw-away
# single-node cluster and database (scripts/slurm.sh, scripts/postgres.sh).
# Open MPI and its HDF5: the runtime's second build, for Open MPI jobs (lib/openmpi/libiotuner.so,
# tests/test_openmpi.py). Installing them flips Debian's mpicc /
# mpiexec / h5pcc alternatives to Open MPI; the build (CMakeLists.txt), the tune
# launcher and the tests name MPICH's own wrappers, and the alternatives are put
# back to MPICH right after this script installs Open MPI, as they were.
# libsimgrid-dev and g++: `iotuner simulate`'s engine (native/src/simulate), a C++ program on SimGrid.
# libpnetcdf-dev and libnetcdf-mpi-dev: PnetCDF and parallel netCDF-4, built against Open MPI by Debian (the
# runtime's PnetCDF module and the e3smio kernels; tests/test_pnetcdf.py); they pull in Open MPI pieces too.
# gfortran: the Fortran test programs (every MPI Fortran binding, HDF5 Fortran; tests/test_bindings.py).
packages=(mpich libhdf5-mpich-dev hdf5-tools cmake make gcc g++ gfortran pkg-config python3-venv slurm-wlm munge
          postgresql openmpi-bin libopenmpi-dev libhdf5-openmpi-dev libsimgrid-dev libpnetcdf-dev libnetcdf-mpi-dev)
# the packages whose install may flip the alternatives to Open MPI
pulls_openmpi=(openmpi-bin libopenmpi-dev libhdf5-openmpi-dev libpnetcdf-dev libnetcdf-mpi-dev)
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
  flips=0
  for p in "${pulls_openmpi[@]}"; do
    if [[ " ${missing[*]} " == *" $p "* ]]; then flips=1; fi
  done
  if [ "$flips" -eq 1 ]; then
    # name=MPICH's choice for each alternative Open MPI's install may have flipped (absent ones are skipped)
    for pair in mpi=/usr/bin/mpicc.mpich mpirun=/usr/bin/mpirun.mpich h5pcc=/usr/bin/h5pcc.mpich \
                "mpi-$(gcc -dumpmachine)=/usr/include/$(gcc -dumpmachine)/mpich"; do
      name=${pair%%=*} choice=${pair#*=}
      if [ -e "$choice" ] && update-alternatives --query "$name" >/dev/null 2>&1; then
        $sudo update-alternatives --set "$name" "$choice" >/dev/null || true
      fi
    done
  fi
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
# build requirements first, so the editable install can reuse its build directory (build/<interpreter>) incrementally
.venv/bin/python -m pip install -q "scikit-build-core>=0.9"
# IOTUNER_WERROR=1 (CI: .ci/run): compiler warnings are errors; a user's build only warns
werror=()
if [ "${IOTUNER_WERROR:-0}" = 1 ]; then werror=(-C cmake.define.IOTUNER_WERROR=ON); fi
.venv/bin/python -m pip install -q --no-build-isolation "${werror[@]}" -e ".[test,cluster,kernel,pretrain]"
# The newest Optuna release, even one past pyproject's bound (an existing venv keeps an older one otherwise): the
# tests run against it, and tests/test_optuna_compat.py says when iotuner/tune/optuna_compat.py was not checked on it
.venv/bin/python -m pip install -q --upgrade optuna || echo "setup: could not upgrade Optuna (offline?); testing the installed one" >&2
# The darshan extra apart: PyDarshan has no wheel for every Python (none for 3.13), and without it (or with a
# build that fails at import) only reading Darshan logs is missing, which says so, and its tests skip.
.venv/bin/python -m pip install -q "darshan>=3.4" ||
  echo "setup: PyDarshan did not install; iotuner advise cannot read Darshan logs here (its tests skip)" >&2
echo "setup: ready ($(.venv/bin/iotuner --version); MPI: $(mpiexec.mpich --version | sed -n 's/^ *Version: *//p' | head -1))"
