! Parallel HDF5 from Fortran, MPI through -DF08 (use mpi_f08) or use mpi. Every rank writes MIB MiB of
! default integers, its own rows of one 2-D dataset, collectively (MPI-IO transfer), the file is closed and
! opened again, and every rank reads its rows back collectively and checks them.
! Usage: hdf5_fortran FILE MIB
program hdf5_fortran
    use hdf5
#if defined(F08)
    use mpi_f08
#define COMM_OF(c) c%MPI_VAL
#define INFO_OF(i) i%MPI_VAL
#else
    use mpi
#define COMM_OF(c) c
#define INFO_OF(i) i
#endif
    implicit none
    integer, parameter :: row = 262144 ! 1 MiB of default integers
    integer :: ierr, rank, nprocs, mib, i, k, bad, all_bad
    integer(hid_t) :: file, fapl, dxpl, space, mem, dset
    integer(hsize_t) :: dims(2), start(2), count(2)
    integer, allocatable :: buf(:, :)
    character(len=4096) :: path
    character(len=32) :: arg

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call get_command_argument(1, path)
    call get_command_argument(2, arg)
    read (arg, *) mib
    allocate (buf(row, mib))
    do k = 1, mib
        do i = 1, row
            buf(i, k) = rank * 1000003 + k * row + i
        end do
    end do
    call h5open_f(ierr)
    dims = [int(row, hsize_t), int(mib * nprocs, hsize_t)]
    start = [0_hsize_t, int(rank * mib, hsize_t)]
    count = [int(row, hsize_t), int(mib, hsize_t)]
    call h5pcreate_f(H5P_DATASET_XFER_F, dxpl, ierr)
    call h5pset_dxpl_mpio_f(dxpl, H5FD_MPIO_COLLECTIVE_F, ierr)
    call h5screate_simple_f(2, count, mem, ierr)

    call h5pcreate_f(H5P_FILE_ACCESS_F, fapl, ierr)
    call h5pset_fapl_mpio_f(fapl, COMM_OF(MPI_COMM_WORLD), INFO_OF(MPI_INFO_NULL), ierr)
    call h5fcreate_f(trim(path), H5F_ACC_TRUNC_F, file, ierr, access_prp=fapl)
    if (ierr /= 0) call fail('h5fcreate_f')
    call h5screate_simple_f(2, dims, space, ierr)
    call h5dcreate_f(file, 'values', H5T_NATIVE_INTEGER, space, dset, ierr)
    call h5sselect_hyperslab_f(space, H5S_SELECT_SET_F, start, count, ierr)
    call h5dwrite_f(dset, H5T_NATIVE_INTEGER, buf, count, ierr, mem_space_id=mem, file_space_id=space, &
                    xfer_prp=dxpl)
    if (ierr /= 0) call fail('h5dwrite_f')
    call h5dclose_f(dset, ierr)
    call h5sclose_f(space, ierr)
    call h5fclose_f(file, ierr)

    buf = 0
    call h5fopen_f(trim(path), H5F_ACC_RDONLY_F, file, ierr, access_prp=fapl)
    if (ierr /= 0) call fail('h5fopen_f')
    call h5dopen_f(file, 'values', dset, ierr)
    call h5dget_space_f(dset, space, ierr)
    call h5sselect_hyperslab_f(space, H5S_SELECT_SET_F, start, count, ierr)
    call h5dread_f(dset, H5T_NATIVE_INTEGER, buf, count, ierr, mem_space_id=mem, file_space_id=space, &
                   xfer_prp=dxpl)
    if (ierr /= 0) call fail('h5dread_f')
    call h5dclose_f(dset, ierr)
    call h5sclose_f(space, ierr)
    call h5fclose_f(file, ierr)
    call h5pclose_f(fapl, ierr)
    call h5pclose_f(dxpl, ierr)
    call h5sclose_f(mem, ierr)
    call h5close_f(ierr)

    bad = 0
    do k = 1, mib
        do i = 1, row
            if (buf(i, k) /= rank * 1000003 + k * row + i) bad = bad + 1
        end do
    end do
    call MPI_Allreduce(bad, all_bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        if (all_bad == 0) then
            print '(a)', 'hdf5_fortran: ok'
        else
            print '(a,i0,a)', 'hdf5_fortran: ', all_bad, ' integers differ'
        end if
    end if
    call MPI_Finalize(ierr)

contains

    subroutine fail(what)
        character(len=*), intent(in) :: what
        print '(a,a,a)', 'hdf5_fortran: ', what, ' failed'
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end subroutine fail
end program hdf5_fortran
