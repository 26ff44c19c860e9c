# iotuner's Spack recipe, in a package repository for Spack 1.x (see packaging/spack/README.md).
# tests/test_packaging.py checks it against pyproject.toml; packaging/spack/release.py adds each release.

from spack_repo.builtin.build_systems.python import PythonPackage

from spack.package import *


class PyIotuner(PythonPackage):
    """Make the parallel I/O of unmodified MPI + HDF5 applications fast: an LD_PRELOAD runtime applies,
    verifies and measures HDF5, MPI-IO and Lustre settings; a Python package runs, tunes and analyses."""

    homepage = "https://github.com/iotuner/iotuner"
    # A release publishes the sdist that release.py builds from tag vX.Y.Z under this name; Spack puts each
    # version into the URL.
    url = "https://github.com/iotuner/iotuner/releases/download/v0.1.0/iotuner-0.1.0.tar.gz"
    git = "https://github.com/iotuner/iotuner.git"

    license("BSD-3-Clause")

    version("main", branch="main")
    # released versions (release.py): the sha256 of the tag's sdist
    version("0.1.0", sha256="3da318c60434883cd5484b75022003a0305c6d0162b63618238d37e398447ac5")

    variant("darshan", default=False, description="read Darshan logs (iotuner advise job.darshan)")
    variant("cluster", default=False, description="PostgreSQL study storage for tuning across nodes")
    variant("kernel", default=False, description="iotuner kernel: cut a C application down to its I/O kernel")
    variant("pretrain", default=False, description="pretrain TunIO's stopper again (Gymnasium)")

    # the build: scikit-build-core drives CMake
    depends_on("python@3.9:", type=("build", "run"))
    depends_on("py-scikit-build-core@0.9:", type="build")
    depends_on("cmake@3.18:", type="build")
    depends_on("c", type="build")

    # what libiotuner.so and the kernels are built against. HDF5 must be shared: the runtime
    # interposes on libhdf5's calls with LD_PRELOAD, which a static libhdf5 would bypass.
    depends_on("mpi")
    depends_on("hdf5+mpi+shared@1.10:")

    # pyproject.toml [project] dependencies
    depends_on("py-rich@13:", type=("build", "run"))
    depends_on("py-optuna@4:5", type=("build", "run"))  # optuna_compat.py was checked to 5.0
    depends_on("py-numpy@1.24:", type=("build", "run"))
    depends_on("py-scipy@1.10:", type=("build", "run"))
    depends_on("py-matplotlib@3.7:", type=("build", "run"))
    depends_on("py-scikit-learn@1.3:", type=("build", "run"))

    # pyproject.toml [project.optional-dependencies]
    depends_on("py-darshan@3.4:", type=("build", "run"), when="+darshan")
    depends_on("py-psycopg2@2.9:", type=("build", "run"), when="+cluster")
    depends_on("py-libclang@18:", type=("build", "run"), when="+kernel")
    depends_on("llvm+clang", type="run", when="+kernel")  # clang-format
    depends_on("py-gymnasium@0.29:", type=("build", "run"), when="+pretrain")

    def config_settings(self, spec, prefix):
        # Spack's MPI and HDF5, not whatever CMake would find first; a build directory of its own
        return {
            "cmake.define.MPI_C_COMPILER": spec["mpi"].mpicc,
            "cmake.define.HDF5_ROOT": spec["hdf5"].prefix,
            "cmake.define.HDF5_PREFER_PARALLEL": "ON",
            "build-dir": join_path(self.stage.path, "spack-build-iotuner"),
        }
