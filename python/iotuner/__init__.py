"""iotuner: make the parallel I/O of unmodified MPI + HDF5 applications fast."""

__version__ = "0.1.0"
