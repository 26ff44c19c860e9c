! MPI-IO from Fortran, in the binding chosen at build time: -DF08 (use mpi_f08), -DMPIFH (include 'mpif.h'),
! else use mpi. Every rank writes MIB MiB of its own block collectively through a view (set_view +
! write_all, in 1 MiB calls), the file is closed and opened again, and every rank reads its block back
! (read_at_all) and checks it. Prints the cb_buffer_size the MPI library reports for the file.
! Usage: mpiio_fortran FILE MIB
program mpiio_fortran
#if defined(F08)
    use mpi_f08
    implicit none
    type(MPI_File) :: fh
    type(MPI_Info) :: info
    type(MPI_Status) :: st
#elif defined(MPIFH)
    implicit none
    include 'mpif.h'
    integer :: fh, info, st(MPI_STATUS_SIZE)
#else
    use mpi
    implicit none
    integer :: fh, info, st(MPI_STATUS_SIZE)
#endif
    integer, parameter :: per_call = 262144 ! 1 MiB of default integers
    integer :: ierr, rank, nprocs, mib, i, k, bad, all_bad, vlen
    integer, allocatable :: buf(:)
    integer(kind=MPI_OFFSET_KIND) :: disp, off
    character(len=4096) :: path
    character(len=32) :: arg
    character(len=MPI_MAX_INFO_VAL) :: value
    logical :: flag

    call MPI_Init(ierr)
    call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
    call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
    call get_command_argument(1, path)
    call get_command_argument(2, arg)
    read (arg, *) mib
    allocate (buf(per_call))
    disp = int(rank, MPI_OFFSET_KIND) * mib * per_call * 4

    call MPI_File_open(MPI_COMM_WORLD, trim(path), MPI_MODE_CREATE + MPI_MODE_WRONLY, MPI_INFO_NULL, fh, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPI_File_open')
    call MPI_File_set_view(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
    do k = 0, mib - 1
        do i = 1, per_call
            buf(i) = rank * 1000003 + k * per_call + i
        end do
        call MPI_File_write_all(fh, buf, per_call, MPI_INTEGER, st, ierr)
        if (ierr /= MPI_SUCCESS) call fail('MPI_File_write_all')
    end do
    call MPI_File_get_info(fh, info, ierr)
    call MPI_Info_get_valuelen(info, 'cb_buffer_size', vlen, flag, ierr)
    value = ''
    if (flag) call MPI_Info_get(info, 'cb_buffer_size', MPI_MAX_INFO_VAL, value, flag, ierr)
    call MPI_Info_free(info, ierr)
    call MPI_File_close(fh, ierr)

    bad = 0
    call MPI_File_open(MPI_COMM_WORLD, trim(path), MPI_MODE_RDONLY, MPI_INFO_NULL, fh, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPI_File_open (read)')
    do k = 0, mib - 1
        off = disp + int(k, MPI_OFFSET_KIND) * per_call * 4
        call MPI_File_read_at_all(fh, off, buf, per_call, MPI_INTEGER, st, ierr)
        if (ierr /= MPI_SUCCESS) call fail('MPI_File_read_at_all')
        do i = 1, per_call
            if (buf(i) /= rank * 1000003 + k * per_call + i) bad = bad + 1
        end do
    end do
    call MPI_File_close(fh, ierr)
    call MPI_Allreduce(bad, all_bad, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
    if (rank == 0) then
        if (all_bad == 0) then
            print '(a)', 'mpiio_fortran: ok'
        else
            print '(a,i0,a)', 'mpiio_fortran: ', all_bad, ' integers differ'
        end if
        print '(a,a)', 'cb_buffer_size=', trim(value)
    end if
    call MPI_Finalize(ierr)

contains

    subroutine fail(what)
        character(len=*), intent(in) :: what
        print '(a,a,a,i0)', 'mpiio_fortran: ', what, ' failed: ', ierr
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end subroutine fail
end program mpiio_fortran
