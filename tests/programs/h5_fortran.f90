! A parallel HDF5 program in Fortran: every rank writes its block of one dataset collectively, then the file
! is opened again and each rank reads its block back and checks it. Usage: h5_fortran FILE N (N doubles a rank).
program h5_fortran
  use mpi
  use hdf5
  implicit none
  integer :: ierr, rank, nprocs, hdferr, n
  integer(hid_t) :: fapl, dxpl, file, space, mspace, dset
  integer(hsize_t) :: dims(1), count(1), offset(1)
  double precision, allocatable :: buf(:), back(:)
  character(len=512) :: path, arg
  integer :: i

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  call get_command_argument(1, path)
  call get_command_argument(2, arg)
  read (arg, *) n
  allocate (buf(n), back(n))
  do i = 1, n
    buf(i) = rank * 1000000 + i
  end do
  dims(1) = int(n, hsize_t) * nprocs
  count(1) = n
  offset(1) = int(n, hsize_t) * rank

  call h5open_f(hdferr)
  call h5pcreate_f(H5P_FILE_ACCESS_F, fapl, hdferr)
  call h5pset_fapl_mpio_f(fapl, MPI_COMM_WORLD, MPI_INFO_NULL, hdferr)
  call h5pcreate_f(H5P_DATASET_XFER_F, dxpl, hdferr)
  call h5pset_dxpl_mpio_f(dxpl, H5FD_MPIO_COLLECTIVE_F, hdferr)

  call h5fcreate_f(trim(path), H5F_ACC_TRUNC_F, file, hdferr, access_prp=fapl)
  call h5screate_simple_f(1, dims, space, hdferr)
  call h5dcreate_f(file, "field", H5T_NATIVE_DOUBLE, space, dset, hdferr)
  call h5sselect_hyperslab_f(space, H5S_SELECT_SET_F, offset, count, hdferr)
  call h5screate_simple_f(1, count, mspace, hdferr)
  call h5dwrite_f(dset, H5T_NATIVE_DOUBLE, buf, count, hdferr, mspace, space, xfer_prp=dxpl)
  if (hdferr /= 0) call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  call h5dclose_f(dset, hdferr)
  call h5sclose_f(space, hdferr)
  call h5fclose_f(file, hdferr)

  call h5fopen_f(trim(path), H5F_ACC_RDONLY_F, file, hdferr, access_prp=fapl)
  call h5dopen_f(file, "field", dset, hdferr)
  call h5dget_space_f(dset, space, hdferr)
  call h5sselect_hyperslab_f(space, H5S_SELECT_SET_F, offset, count, hdferr)
  call h5dread_f(dset, H5T_NATIVE_DOUBLE, back, count, hdferr, mspace, space, xfer_prp=dxpl)
  if (hdferr /= 0 .or. any(back /= buf)) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  call h5dclose_f(dset, hdferr)
  call h5sclose_f(space, hdferr)
  call h5sclose_f(mspace, hdferr)
  call h5fclose_f(file, hdferr)
  call h5pclose_f(dxpl, hdferr)
  call h5pclose_f(fapl, hdferr)
  call h5close_f(hdferr)
  if (rank == 0) print '(a,i0)', 'h5_fortran: ok ', n
  call MPI_Finalize(ierr)
end program h5_fortran
