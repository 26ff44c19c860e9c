/* Stands for an MPI library whose MPI_ functions call its own PMPI_ ones through the dynamic linker (rather
 * than being aliases of them): preloaded after libiotuner.so, each MPI_x here reaches the runtime's PMPI_x
 * wrapper from inside its MPI_x wrapper. The runtime must count every call once. */
#include <mpi.h>

int MPI_Init(int *argc, char ***argv)
{
    return PMPI_Init(argc, argv);
}

int MPI_Finalize(void)
{
    return PMPI_Finalize();
}

int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    return PMPI_File_open(comm, filename, amode, info, fh);
}

int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                      const char *datarep, MPI_Info info)
{
    return PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
}

int MPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    return PMPI_File_write_at_all(fh, offset, buf, count, datatype, status);
}

int MPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status)
{
    return PMPI_File_write_at(fh, offset, buf, count, datatype, status);
}

int MPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return PMPI_File_write(fh, buf, count, datatype, status);
}

int MPI_File_close(MPI_File *fh)
{
    return PMPI_File_close(fh);
}
