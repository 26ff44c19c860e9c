/* The calls libiotuner.so intercepts: one X-macro table per layer.
 *
 * Each table is the one list of its calls. The runtime declares its wrappers
 * from it (a wrapper whose prototype differs does not compile), the build
 * generates the export map from it (native/src/runtime/exports.map.in; a row
 * without a wrapper fails the link), and the insights classifier reads the
 * MPI-IO data calls' attributes and the HDF5 calls' signatures from it. A
 * new call is one row here plus its wrapper; a new layer is one table here
 * (listed in IOT_CALL_TABLES, at the end) plus its module file.
 *
 * Parameter lists are tokens that stay unexpanded unless a user of a table
 * expands them, so the core includes this without mpi.h or hdf5.h. */
#ifndef IOTUNER_CALLS_H
#define IOTUNER_CALLS_H

/* ---- POSIX: X(ret, name, params) ---- */
#define IOT_POSIX_CALLS(X)                                                                                     \
    X(int, open, (const char *path, int flags, ...))                                                           \
    X(int, open64, (const char *path, int flags, ...))                                                         \
    X(int, __open_2, (const char *path, int flags))                                                            \
    X(int, __open64_2, (const char *path, int flags))                                                          \
    X(int, openat, (int dirfd, const char *path, int flags, ...))                                              \
    X(int, openat64, (int dirfd, const char *path, int flags, ...))                                            \
    X(int, creat, (const char *path, mode_t mode))                                                             \
    X(int, creat64, (const char *path, mode_t mode))                                                           \
    X(int, close, (int fd))                                                                                    \
    X(int, dup, (int fd))                                                                                      \
    X(int, dup2, (int fd, int fd2))                                                                            \
    X(int, dup3, (int fd, int fd2, int flags))                                                                 \
    X(int, fcntl, (int fd, int cmd, ...))                                                                      \
    X(int, fcntl64, (int fd, int cmd, ...))                                                                    \
    X(ssize_t, read, (int fd, void *buf, size_t n))                                                            \
    X(ssize_t, write, (int fd, const void *buf, size_t n))                                                     \
    X(ssize_t, pread, (int fd, void *buf, size_t n, off_t off))                                                \
    X(ssize_t, pwrite, (int fd, const void *buf, size_t n, off_t off))                                         \
    X(ssize_t, pread64, (int fd, void *buf, size_t n, off64_t off))                                            \
    X(ssize_t, pwrite64, (int fd, const void *buf, size_t n, off64_t off))                                     \
    X(ssize_t, readv, (int fd, const struct iovec *iov, int cnt))                                              \
    X(ssize_t, writev, (int fd, const struct iovec *iov, int cnt))                                             \
    X(ssize_t, preadv, (int fd, const struct iovec *iov, int cnt, off_t off))                                  \
    X(ssize_t, pwritev, (int fd, const struct iovec *iov, int cnt, off_t off))                                 \
    X(ssize_t, preadv64, (int fd, const struct iovec *iov, int cnt, off64_t off))                              \
    X(ssize_t, pwritev64, (int fd, const struct iovec *iov, int cnt, off64_t off))                             \
    X(int, fsync, (int fd))                                                                                    \
    X(int, fdatasync, (int fd))                                                                                \
    X(int, chdir, (const char *path))                                                                          \
    X(int, fchdir, (int fd))

/* ---- STDIO: the C library's streams on files, X(ret, name, params) ----
 * The C library's fopen, fwrite, fclose ... reach open, write and close through internal calls that the POSIX
 * wrappers never see: these count them (stdio.c). The _chk rows are what _FORTIFY_SOURCE builds call, the
 * __isoc99_ rows what a strict-ISO build's fscanf is, __getdelim what an optimized build's getline is. fdopen
 * needs no wrapper: its descriptor is tracked, or not, already. Not seen: the character calls a build inlines
 * (getc_unlocked, putc_unlocked: the header's macros on the stream's buffer). */
#define IOT_STDIO_CALLS(X)                                                                                     \
    X(FILE *, fopen, (const char *path, const char *mode))                                                     \
    X(FILE *, fopen64, (const char *path, const char *mode))                                                   \
    X(FILE *, freopen, (const char *path, const char *mode, FILE *f))                                          \
    X(FILE *, freopen64, (const char *path, const char *mode, FILE *f))                                        \
    X(int, fclose, (FILE * f))                                                                                 \
    X(int, fflush, (FILE * f))                                                                                 \
    X(size_t, fwrite, (const void *buf, size_t size, size_t n, FILE *f))                                       \
    X(size_t, fwrite_unlocked, (const void *buf, size_t size, size_t n, FILE *f))                              \
    X(int, fputs, (const char *s, FILE *f))                                                                    \
    X(int, fputs_unlocked, (const char *s, FILE *f))                                                           \
    X(int, puts, (const char *s))                                                                              \
    X(int, fputc, (int ch, FILE *f))                                                                           \
    X(int, putc, (int ch, FILE *f))                                                                            \
    X(int, putchar, (int ch))                                                                                  \
    X(int, fprintf, (FILE * f, const char *fmt, ...))                                                          \
    X(int, vfprintf, (FILE * f, const char *fmt, va_list ap))                                                  \
    X(int, __fprintf_chk, (FILE * f, int flag, const char *fmt, ...))                                          \
    X(int, __vfprintf_chk, (FILE * f, int flag, const char *fmt, va_list ap))                                  \
    X(int, printf, (const char *fmt, ...))                                                                     \
    X(int, vprintf, (const char *fmt, va_list ap))                                                             \
    X(int, __printf_chk, (int flag, const char *fmt, ...))                                                     \
    X(int, __vprintf_chk, (int flag, const char *fmt, va_list ap))                                             \
    X(size_t, fread, (void *buf, size_t size, size_t n, FILE *f))                                              \
    X(size_t, fread_unlocked, (void *buf, size_t size, size_t n, FILE *f))                                     \
    X(size_t, __fread_chk, (void *buf, size_t buflen, size_t size, size_t n, FILE *f))                         \
    X(size_t, __fread_unlocked_chk, (void *buf, size_t buflen, size_t size, size_t n, FILE *f))                \
    X(char *, fgets, (char *s, int n, FILE *f))                                                                \
    X(char *, fgets_unlocked, (char *s, int n, FILE *f))                                                       \
    X(char *, __fgets_chk, (char *s, size_t size, int n, FILE *f))                                             \
    X(char *, __fgets_unlocked_chk, (char *s, size_t size, int n, FILE *f))                                    \
    X(int, fgetc, (FILE * f))                                                                                  \
    X(int, getc, (FILE * f))                                                                                   \
    X(ssize_t, getline, (char **line, size_t *n, FILE *f))                                                     \
    X(ssize_t, getdelim, (char **line, size_t *n, int delim, FILE *f))                                         \
    X(ssize_t, __getdelim, (char **line, size_t *n, int delim, FILE *f))                                       \
    X(int, fscanf, (FILE * f, const char *fmt, ...))                                                           \
    X(int, vfscanf, (FILE * f, const char *fmt, va_list ap))                                                   \
    X(int, __isoc99_fscanf, (FILE * f, const char *fmt, ...))                                                  \
    X(int, __isoc99_vfscanf, (FILE * f, const char *fmt, va_list ap))

/* ---- MPI: the run and MPI-IO files, X(ret, name, params) ----
 * Every row of the two MPI tables is interposed under both its names, MPI_x and its profiling name PMPI_x:
 * Open MPI's Fortran bindings and MPICH's `use mpi_f08` call PMPI_x directly (as Darshan, both are wrapped).
 * When the library's MPI_x reaches its own PMPI_x, only the outermost wrapper measures. */
#define IOT_MPI_CALLS(X)                                                                                       \
    X(int, MPI_Init, (int *argc, char ***argv))                                                                \
    X(int, MPI_Init_thread, (int *argc, char ***argv, int required, int *provided))                            \
    X(int, MPI_Finalize, (void))                                                                               \
    X(int, MPI_File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh))        \
    X(int, MPI_File_close, (MPI_File * fh))                                                                    \
    X(int, MPI_File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,       \
                               const char *datarep, MPI_Info info))                                            \
    X(int, MPI_Comm_spawn, (const char *command, char *argv[], int maxprocs, MPI_Info info, int root,           \
                            MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]))                      \
    X(int, MPI_Comm_spawn_multiple, (int count, char *array_of_commands[], char **array_of_argv[],              \
                                     const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,  \
                                     MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]))

/* ---- MPI-IO data calls: X(name, write, collective, where, timed, params, args) ----
 *  write:      1 writes, 0 reads
 *  collective: the *_all calls and their split _begin. *_ordered is collective in MPI's sense, but ROMIO
 *              does it as a scan plus independent I/O, with no collective buffering: independent here
 *  where:      POINTER (the individual file pointer), OFFSET (an explicit offset, part of the call's
 *              signature), SHARED (the shared file pointer)
 *  timed:      1 the call returns when the data moved; 0 nonblocking (its time says nothing)
 * Every row's params name the file fh, the count and the datatype; OFFSET rows the offset. The split
 * collectives' _end calls move no data and are not data calls. */
/* A data call's offset argument in its smart-mode signature ([bytes, offset] for OFFSET rows). */
#define IOT_OFFSET_INDEX_POINTER -1
#define IOT_OFFSET_INDEX_OFFSET 1
#define IOT_OFFSET_INDEX_SHARED -1

#define IOT_MPI_DATA_PARAMS_W (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
#define IOT_MPI_DATA_PARAMS_R (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
#define IOT_MPI_DATA_PARAMS_WAT                                                                                \
    (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
#define IOT_MPI_DATA_PARAMS_RAT                                                                                \
    (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
#define IOT_MPI_DATA_PARAMS_IW (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
#define IOT_MPI_DATA_PARAMS_IR (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
#define IOT_MPI_DATA_PARAMS_IWAT                                                                               \
    (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
#define IOT_MPI_DATA_PARAMS_IRAT                                                                               \
    (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
#define IOT_MPI_DATA_PARAMS_BW (MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
#define IOT_MPI_DATA_PARAMS_BR (MPI_File fh, void *buf, int count, MPI_Datatype datatype)
#define IOT_MPI_DATA_PARAMS_BWAT (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype)
#define IOT_MPI_DATA_PARAMS_BRAT (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype)

#define IOT_MPI_DATA_CALLS(X)                                                                                  \
    X(MPI_File_write, 1, 0, POINTER, 1, IOT_MPI_DATA_PARAMS_W, (fh, buf, count, datatype, status))             \
    X(MPI_File_write_all, 1, 1, POINTER, 1, IOT_MPI_DATA_PARAMS_W, (fh, buf, count, datatype, status))         \
    X(MPI_File_write_at, 1, 0, OFFSET, 1, IOT_MPI_DATA_PARAMS_WAT, (fh, offset, buf, count, datatype, status)) \
    X(MPI_File_write_at_all, 1, 1, OFFSET, 1, IOT_MPI_DATA_PARAMS_WAT,                                         \
      (fh, offset, buf, count, datatype, status))                                                              \
    X(MPI_File_write_shared, 1, 0, SHARED, 1, IOT_MPI_DATA_PARAMS_W, (fh, buf, count, datatype, status))       \
    X(MPI_File_write_ordered, 1, 0, SHARED, 1, IOT_MPI_DATA_PARAMS_W, (fh, buf, count, datatype, status))      \
    X(MPI_File_iwrite, 1, 0, POINTER, 0, IOT_MPI_DATA_PARAMS_IW, (fh, buf, count, datatype, request))          \
    X(MPI_File_iwrite_all, 1, 1, POINTER, 0, IOT_MPI_DATA_PARAMS_IW, (fh, buf, count, datatype, request))      \
    X(MPI_File_iwrite_at, 1, 0, OFFSET, 0, IOT_MPI_DATA_PARAMS_IWAT, (fh, offset, buf, count, datatype, request)) \
    X(MPI_File_iwrite_at_all, 1, 1, OFFSET, 0, IOT_MPI_DATA_PARAMS_IWAT,                                       \
      (fh, offset, buf, count, datatype, request))                                                             \
    X(MPI_File_iwrite_shared, 1, 0, SHARED, 0, IOT_MPI_DATA_PARAMS_IW, (fh, buf, count, datatype, request))    \
    X(MPI_File_write_all_begin, 1, 1, POINTER, 1, IOT_MPI_DATA_PARAMS_BW, (fh, buf, count, datatype))          \
    X(MPI_File_write_at_all_begin, 1, 1, OFFSET, 1, IOT_MPI_DATA_PARAMS_BWAT, (fh, offset, buf, count, datatype)) \
    X(MPI_File_write_ordered_begin, 1, 0, SHARED, 1, IOT_MPI_DATA_PARAMS_BW, (fh, buf, count, datatype))       \
    X(MPI_File_read, 0, 0, POINTER, 1, IOT_MPI_DATA_PARAMS_R, (fh, buf, count, datatype, status))              \
    X(MPI_File_read_all, 0, 1, POINTER, 1, IOT_MPI_DATA_PARAMS_R, (fh, buf, count, datatype, status))          \
    X(MPI_File_read_at, 0, 0, OFFSET, 1, IOT_MPI_DATA_PARAMS_RAT, (fh, offset, buf, count, datatype, status))  \
    X(MPI_File_read_at_all, 0, 1, OFFSET, 1, IOT_MPI_DATA_PARAMS_RAT, (fh, offset, buf, count, datatype, status)) \
    X(MPI_File_read_shared, 0, 0, SHARED, 1, IOT_MPI_DATA_PARAMS_R, (fh, buf, count, datatype, status))        \
    X(MPI_File_read_ordered, 0, 0, SHARED, 1, IOT_MPI_DATA_PARAMS_R, (fh, buf, count, datatype, status))       \
    X(MPI_File_iread, 0, 0, POINTER, 0, IOT_MPI_DATA_PARAMS_IR, (fh, buf, count, datatype, request))           \
    X(MPI_File_iread_all, 0, 1, POINTER, 0, IOT_MPI_DATA_PARAMS_IR, (fh, buf, count, datatype, request))       \
    X(MPI_File_iread_at, 0, 0, OFFSET, 0, IOT_MPI_DATA_PARAMS_IRAT, (fh, offset, buf, count, datatype, request)) \
    X(MPI_File_iread_at_all, 0, 1, OFFSET, 0, IOT_MPI_DATA_PARAMS_IRAT,                                        \
      (fh, offset, buf, count, datatype, request))                                                             \
    X(MPI_File_iread_shared, 0, 0, SHARED, 0, IOT_MPI_DATA_PARAMS_IR, (fh, buf, count, datatype, request))     \
    X(MPI_File_read_all_begin, 0, 1, POINTER, 1, IOT_MPI_DATA_PARAMS_BR, (fh, buf, count, datatype))           \
    X(MPI_File_read_at_all_begin, 0, 1, OFFSET, 1, IOT_MPI_DATA_PARAMS_BRAT, (fh, offset, buf, count, datatype)) \
    X(MPI_File_read_ordered_begin, 0, 0, SHARED, 1, IOT_MPI_DATA_PARAMS_BR, (fh, buf, count, datatype))

/* ---- HDF5: X(ret, name, params, sig) ----
 * sig: the call's signature in smart mode's grammar (iotuner/signature.h), shared by the versions of a call
 * (H5Dopen1 and H5Dopen2 are both "H5Dopen"), or NONE for calls outside the grammar. */
#define IOT_HDF5_CALLS(X)                                                                                      \
    X(hid_t, H5Fcreate, (const char *name, unsigned flags, hid_t fcpl, hid_t fapl), H5FCREATE)                 \
    X(hid_t, H5Fopen, (const char *name, unsigned flags, hid_t fapl), H5FOPEN)                                 \
    X(hid_t, H5Freopen, (hid_t fid), NONE)                                                                     \
    X(herr_t, H5Fclose, (hid_t fid), H5FCLOSE)                                                                 \
    X(hid_t, H5Dcreate1, (hid_t loc, const char *name, hid_t type, hid_t space, hid_t dcpl), H5DCREATE)        \
    X(hid_t, H5Dcreate2,                                                                                       \
      (hid_t loc, const char *name, hid_t type, hid_t space, hid_t lcpl, hid_t dcpl, hid_t dapl), H5DCREATE)   \
    X(hid_t, H5Dcreate_anon, (hid_t loc, hid_t type, hid_t space, hid_t dcpl, hid_t dapl), H5DCREATE)          \
    X(hid_t, H5Dopen1, (hid_t loc, const char *name), H5DOPEN)                                                 \
    X(hid_t, H5Dopen2, (hid_t loc, const char *name, hid_t dapl), H5DOPEN)                                     \
    X(herr_t, H5Dclose, (hid_t did), H5DCLOSE)                                                                 \
    X(hid_t, H5Oopen, (hid_t loc, const char *name, hid_t lapl), NONE)                                         \
    X(herr_t, H5Oclose, (hid_t oid), NONE)                                                                     \
    X(herr_t, H5Dwrite, (hid_t did, hid_t mt, hid_t ms, hid_t fs, hid_t dxpl, const void *buf), H5DWRITE)      \
    X(herr_t, H5Dread, (hid_t did, hid_t mt, hid_t ms, hid_t fs, hid_t dxpl, void *buf), H5DREAD)              \
    X(herr_t, H5Dwrite_chunk,                                                                                  \
      (hid_t did, hid_t dxpl, uint32_t filters, const hsize_t *offset, size_t size, const void *buf), H5DWRITE) \
    X(herr_t, H5Dread_chunk, (hid_t did, hid_t dxpl, const hsize_t *offset, uint32_t *filters, void *buf),     \
      H5DREAD)                                                                                                 \
    X(herr_t, H5Sselect_hyperslab,                                                                             \
      (hid_t s, H5S_seloper_t op, const hsize_t start[], const hsize_t stride[], const hsize_t count[],        \
       const hsize_t block[]),                                                                                 \
      NONE)                                                                                                    \
    X(herr_t, H5Sselect_elements, (hid_t s, H5S_seloper_t op, size_t n, const hsize_t *coord), NONE)           \
    X(herr_t, H5Sselect_all, (hid_t s), NONE)                                                                  \
    X(herr_t, H5Sselect_none, (hid_t s), NONE)                                                                 \
    X(herr_t, H5Sselect_copy, (hid_t dst, hid_t src), NONE)                                                    \
    X(herr_t, H5Sset_extent_simple, (hid_t s, int rank, const hsize_t dims[], const hsize_t max[]), NONE)      \
    X(herr_t, H5Sset_extent_none, (hid_t s), NONE)                                                             \
    X(herr_t, H5Sextent_copy, (hid_t dst, hid_t src), NONE)                                                    \
    X(herr_t, H5Smodify_select, (hid_t s, H5S_seloper_t op, hid_t other), NONE)                                \
    X(herr_t, H5Sclose, (hid_t s), NONE)

/* HDF5 1.12+ / 1.14 entry points, absent from the 1.10 headers the library may be built with: declared
 * here, resolved with dlsym when first called, wrapped when they exist (the asynchronous calls take the
 * caller's file, function and line first, as 1.14's macros pass them). */
#define IOT_HDF5_LATER_CALLS(X)                                                                                \
    X(hid_t, H5Fcreate_async,                                                                                  \
      (const char *app_file, const char *app_func, unsigned app_line, const char *name, unsigned flags,        \
       hid_t fcpl, hid_t fapl, hid_t es),                                                                      \
      H5FCREATE)                                                                                               \
    X(hid_t, H5Fopen_async,                                                                                    \
      (const char *app_file, const char *app_func, unsigned app_line, const char *name, unsigned flags,        \
       hid_t fapl, hid_t es),                                                                                  \
      H5FOPEN)                                                                                                 \
    X(herr_t, H5Fclose_async, (const char *app_file, const char *app_func, unsigned app_line, hid_t fid, hid_t es), \
      H5FCLOSE)                                                                                                \
    X(hid_t, H5Dcreate_async,                                                                                  \
      (const char *app_file, const char *app_func, unsigned app_line, hid_t loc, const char *name, hid_t type,  \
       hid_t space, hid_t lcpl, hid_t dcpl, hid_t dapl, hid_t es),                                             \
      H5DCREATE)                                                                                               \
    X(hid_t, H5Dopen_async,                                                                                    \
      (const char *app_file, const char *app_func, unsigned app_line, hid_t loc, const char *name, hid_t dapl,  \
       hid_t es),                                                                                              \
      H5DOPEN)                                                                                                 \
    X(herr_t, H5Dclose_async, (const char *app_file, const char *app_func, unsigned app_line, hid_t did, hid_t es), \
      H5DCLOSE)                                                                                                \
    X(herr_t, H5Dwrite_async,                                                                                  \
      (const char *app_file, const char *app_func, unsigned app_line, hid_t did, hid_t mt, hid_t ms, hid_t fs,  \
       hid_t dxpl, const void *buf, hid_t es),                                                                 \
      H5DWRITE)                                                                                                \
    X(herr_t, H5Dread_async,                                                                                   \
      (const char *app_file, const char *app_func, unsigned app_line, hid_t did, hid_t mt, hid_t ms, hid_t fs,  \
       hid_t dxpl, void *buf, hid_t es),                                                                       \
      H5DREAD)                                                                                                 \
    X(herr_t, H5Dwrite_multi,                                                                                  \
      (size_t count, hid_t dids[], hid_t mts[], hid_t mss[], hid_t fss[], hid_t dxpl, const void *bufs[]),     \
      H5DWRITE)                                                                                                \
    X(herr_t, H5Dread_multi,                                                                                   \
      (size_t count, hid_t dids[], hid_t mts[], hid_t mss[], hid_t fss[], hid_t dxpl, void *bufs[]), H5DREAD)  \
    X(herr_t, H5Dwrite_multi_async,                                                                            \
      (const char *app_file, const char *app_func, unsigned app_line, size_t count, hid_t dids[], hid_t mts[], \
       hid_t mss[], hid_t fss[], hid_t dxpl, const void *bufs[], hid_t es),                                    \
      H5DWRITE)                                                                                                \
    X(herr_t, H5Dread_multi_async,                                                                             \
      (const char *app_file, const char *app_func, unsigned app_line, size_t count, hid_t dids[], hid_t mts[], \
       hid_t mss[], hid_t fss[], hid_t dxpl, void *bufs[], hid_t es),                                          \
      H5DREAD)

/* ---- PnetCDF (1.x): its calls are linked against one MPI (Debian's: Open MPI) ----
 * The put / get calls are generated, as PnetCDF's own m4 generates them: an operation (put, get: blocking,
 * each independent and collective "_all"; iput, iget, bput: nonblocking, posted) x a shape (var: the whole
 * variable, var1: one element, vara: a box, vars: a strided box, varm: a mapped box, varn: a list of boxes) x a
 * buffer: one of the 12 element types of the typed API, or the flexible API's (bufcount, MPI datatype).
 * Rows X(ret, name, params, args, op, shape, collective, buffer): buffer TYPED or FLEX. Not covered: vard
 * (an MPI file type), mput / mget (several variables per call), attributes (header, written at enddef). */
#define IOT_PNC_P_var int ncid, int varid
#define IOT_PNC_P_var1 int ncid, int varid, const MPI_Offset *start
#define IOT_PNC_P_vara int ncid, int varid, const MPI_Offset *start, const MPI_Offset *count
#define IOT_PNC_P_vars IOT_PNC_P_vara, const MPI_Offset *stride
#define IOT_PNC_P_varm IOT_PNC_P_vars, const MPI_Offset *imap
#define IOT_PNC_P_varn int ncid, int varid, int num, MPI_Offset *const *starts, MPI_Offset *const *counts
#define IOT_PNC_A_var ncid, varid
#define IOT_PNC_A_var1 ncid, varid, start
#define IOT_PNC_A_vara ncid, varid, start, count
#define IOT_PNC_A_vars ncid, varid, start, count, stride
#define IOT_PNC_A_varm ncid, varid, start, count, stride, imap
#define IOT_PNC_A_varn ncid, varid, num, starts, counts
/* what is written is const; the nonblocking calls end with their request */
#define IOT_PNC_CONST_put const
#define IOT_PNC_CONST_get
#define IOT_PNC_CONST_iput const
#define IOT_PNC_CONST_iget
#define IOT_PNC_CONST_bput const
#define IOT_PNC_REQ_put
#define IOT_PNC_REQ_get
#define IOT_PNC_REQ_iput , int *req
#define IOT_PNC_REQ_iget , int *req
#define IOT_PNC_REQ_bput , int *req
#define IOT_PNC_REQARG_put
#define IOT_PNC_REQARG_get
#define IOT_PNC_REQARG_iput , req
#define IOT_PNC_REQARG_iget , req
#define IOT_PNC_REQARG_bput , req

#define IOT_PNC_TYPED(X, op, shape, coll, sfx, type, ctype)                                                   \
    X(int, ncmpi_##op##_##shape##_##type##sfx,                                                                \
      (IOT_PNC_P_##shape, IOT_PNC_CONST_##op ctype *buf IOT_PNC_REQ_##op),                                    \
      (IOT_PNC_A_##shape, buf IOT_PNC_REQARG_##op), op, shape, coll, TYPED)
#define IOT_PNC_FLEX(X, op, shape, coll, sfx)                                                                 \
    X(int, ncmpi_##op##_##shape##sfx,                                                                         \
      (IOT_PNC_P_##shape, IOT_PNC_CONST_##op void *buf, MPI_Offset bufcount, MPI_Datatype buftype IOT_PNC_REQ_##op), \
      (IOT_PNC_A_##shape, buf, bufcount, buftype IOT_PNC_REQARG_##op), op, shape, coll, FLEX)
#define IOT_PNC_TYPES(T, X, op, shape, coll, sfx)                                                             \
    T(X, op, shape, coll, sfx, text, char)                                                                    \
    T(X, op, shape, coll, sfx, schar, signed char)                                                            \
    T(X, op, shape, coll, sfx, uchar, unsigned char)                                                          \
    T(X, op, shape, coll, sfx, short, short)                                                                  \
    T(X, op, shape, coll, sfx, ushort, unsigned short)                                                        \
    T(X, op, shape, coll, sfx, int, int)                                                                      \
    T(X, op, shape, coll, sfx, uint, unsigned int)                                                            \
    T(X, op, shape, coll, sfx, long, long)                                                                    \
    T(X, op, shape, coll, sfx, float, float)                                                                  \
    T(X, op, shape, coll, sfx, double, double)                                                                \
    T(X, op, shape, coll, sfx, longlong, long long)                                                           \
    T(X, op, shape, coll, sfx, ulonglong, unsigned long long)
/* one operation and shape: the typed rows through X, the flexible one through F */
#define IOT_PNC_ONE(X, F, op, shape, coll, sfx)                                                               \
    IOT_PNC_TYPES(IOT_PNC_TYPED, X, op, shape, coll, sfx) IOT_PNC_FLEX(F, op, shape, coll, sfx)
#define IOT_PNC_BLOCKING(X, F, op, shape) IOT_PNC_ONE(X, F, op, shape, 0, ) IOT_PNC_ONE(X, F, op, shape, 1, _all)
#define IOT_PNC_POSTED(X, F, op, shape) IOT_PNC_ONE(X, F, op, shape, 0, )
#define IOT_PNC_SHAPES(M, X, F, op)                                                                           \
    M(X, F, op, var) M(X, F, op, var1) M(X, F, op, vara) M(X, F, op, vars) M(X, F, op, varm) M(X, F, op, varn)
#define IOT_PNC_SKIP(...)

/* Every put / get row: typed ones through X, flexible ones through F. */
#define IOT_PNETCDF_DATA_CALLS(X, F)                                                                          \
    IOT_PNC_SHAPES(IOT_PNC_BLOCKING, X, F, put)                                                               \
    IOT_PNC_SHAPES(IOT_PNC_BLOCKING, X, F, get)                                                               \
    IOT_PNC_SHAPES(IOT_PNC_POSTED, X, F, iput)                                                                \
    IOT_PNC_SHAPES(IOT_PNC_POSTED, X, F, iget)                                                                \
    IOT_PNC_SHAPES(IOT_PNC_POSTED, X, F, bput)

/* Calls without MPI handles: exported C wrappers (pnetcdf.c). X(ret, name, params, ...) */
#define IOT_PNETCDF_CALLS(X)                                                                                   \
    X(int, ncmpi_close, (int ncid))                                                                            \
    X(int, ncmpi_enddef, (int ncid))                                                                           \
    X(int, ncmpi__enddef, (int ncid, MPI_Offset h_minfree, MPI_Offset v_align, MPI_Offset v_minfree,          \
                           MPI_Offset r_align))                                                                \
    X(int, ncmpi_begin_indep_data, (int ncid))                                                                 \
    X(int, ncmpi_wait, (int ncid, int count, int array_of_requests[], int array_of_statuses[]))               \
    X(int, ncmpi_wait_all, (int ncid, int count, int array_of_requests[], int array_of_statuses[]))           \
    IOT_PNETCDF_DATA_CALLS(X, IOT_PNC_SKIP)

/* Calls with MPI handles (an MPI_Comm, MPI_Info, MPI_Datatype): exported trampolines to iot_wrap_NAME, as the
 * MPI calls (trampolines.c), so that a build meeting another MPI's handles forwards them untouched.
 * X(ret, name, params, ...) */
#define IOT_PNETCDF_MPI_CALLS(X)                                                                               \
    X(int, ncmpi_create, (MPI_Comm comm, const char *path, int cmode, MPI_Info info, int *ncidp))              \
    X(int, ncmpi_open, (MPI_Comm comm, const char *path, int omode, MPI_Info info, int *ncidp))                \
    IOT_PNETCDF_DATA_CALLS(IOT_PNC_SKIP, X)

/* Every table, for what is made from all of them (the export map; tests/test_contracts.py): T(TABLE, FORM),
 * FORM FUNCTION for rows X(ret, name, ...), MPI_DATA for IOT_MPI_DATA_CALLS' rows X(name, ...), PMPI_FUNCTION
 * and PMPI_DATA for the same MPI rows under their profiling names (P##name). */
#define IOT_CALL_TABLES(T)                                                                                     \
    T(IOT_POSIX_CALLS, FUNCTION)                                                                               \
    T(IOT_STDIO_CALLS, FUNCTION)                                                                               \
    T(IOT_MPI_CALLS, FUNCTION)                                                                                 \
    T(IOT_MPI_DATA_CALLS, MPI_DATA)                                                                            \
    T(IOT_MPI_CALLS, PMPI_FUNCTION)                                                                            \
    T(IOT_MPI_DATA_CALLS, PMPI_DATA)                                                                           \
    T(IOT_HDF5_CALLS, FUNCTION)                                                                                \
    T(IOT_HDF5_LATER_CALLS, FUNCTION)                                                                          \
    T(IOT_PNETCDF_CALLS, FUNCTION)                                                                             \
    T(IOT_PNETCDF_MPI_CALLS, FUNCTION)

#endif
