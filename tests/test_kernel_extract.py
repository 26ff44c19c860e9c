"""I/O discovery on small C programs: what the marking keeps and drops, the
markers, loop reduction and path switching in the rewritten source, and the
constructs the extractor refuses. No MPI job runs here."""

from __future__ import annotations

import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from conftest import importorskip

importorskip("clang.cindex")

import iotuner.kernel as kernel_api  # noqa: E402
from iotuner.kernel import discover, extract, flags  # noqa: E402
from iotuner.kernel.model import MarkerError  # noqa: E402


def kernel_of(tmp_path: Path, code: str, name: str = "t.c", **kw) -> tuple[extract.Extraction, str]:
    """The kernel of one source; it must compile (with -Werror=implicit-function-declaration etc.)."""
    src = tmp_path / name
    src.write_text(textwrap.dedent(code))
    tc = flags.derived([src.resolve()], None, None, None)
    ex = extract.extract(tc, **kw)
    out = tmp_path / f"kernel_{name}"
    out.write_bytes(ex.emitted.files[0].text)
    unit = tc.units[0]
    r = subprocess.run(
        [
            unit.compiler,
            *unit.flags,
            "-fsyntax-only",
            "-Werror=implicit-function-declaration",
            f"-I{Path(kernel_api.__file__).parent}",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0 or ex.unsupported, r.stderr
    return ex, ex.emitted.files[0].text.decode()


def lines(text: str) -> list[str]:
    return [ln.strip() for ln in text.splitlines()]


# Fig. 5 of the paper, made compilable (HDF5 1.10 names)
FIG5 = """\
#include "hdf5.h"
#include <stdlib.h>

int main() {
    hid_t file_id, dataset_id, dataspace_id;
    hsize_t dims[2] = {10, 10};
    int* data_ptr;
    int data[10][10];

    int temp = 0;
    for (int i = 0; i < 10; i++) {
        for (int j = 0; j < 10; j++) {
            temp = i * j;
        }
    }
    // Allocate memory for data and initialize
    data_ptr = (int*) malloc(10 * 10 * sizeof(int));
    for (int i = 0; i < 10; i++) {
        for (int j = 0; j < 10; j++) {
            *(data_ptr + i * 10 + j) = i * j;
        }
    }
    // Create file
    file_id = H5Fcreate("test.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    // Create data space
    dataspace_id = H5Screate_simple(2, dims, NULL);
    // Create dataset
    dataset_id = H5Dcreate2(file_id, "data", H5T_NATIVE_INT, dataspace_id,
                           H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    // Write data to dataset
    for (int i = 0; i < 10; i++) {
        H5Dwrite(dataset_id, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data_ptr);
    }
    // Clean-up
    H5Dclose(dataset_id);
    H5Sclose(dataspace_id);
    H5Fclose(file_id);
    free(data_ptr);
    return 0;
}
"""


def test_the_papers_figure_5(tmp_path):
    """With the compute kept, as in the paper: lines 8 and 10-15 go (compute and a declaration nothing
    needs); the H5Dwrite keeps its loop, dataset_id its assignment, data_ptr its allocation and the
    element writes through it."""
    ex, text = kernel_of(tmp_path, FIG5, keep_compute=True)
    assert ex.compute_kept and "--keep-compute" in ex.compute_why
    kept = lines(text)
    assert "int data[10][10];" not in kept and "int temp = 0;" not in kept and "temp = i * j;" not in kept
    assert "data_ptr = (int *)malloc(10 * 10 * sizeof(int));" in kept
    assert "*(data_ptr + i * 10 + j) = i * j;" in kept
    assert (
        'dataset_id = H5Dcreate2(file_id, "data", H5T_NATIVE_INT, dataspace_id, H5P_DEFAULT, H5P_DEFAULT, '
        "H5P_DEFAULT);" in kept
    )  # the two lines of the original are one after clang-format
    assert "H5Dwrite(dataset_id, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data_ptr);" in kept
    assert "free(data_ptr);" in kept and "return 0;" in kept
    # the only loops left are the initialisation of data_ptr (two) and the write loop
    assert len([ln for ln in kept if ln.startswith("for (")]) == 3


def test_figure_5_without_the_compute(tmp_path):
    """The default: only the size and place of what H5Dwrite writes matter, so data_ptr keeps its
    allocation and its free, and the loops that compute its values go."""
    ex, text = kernel_of(tmp_path, FIG5)
    assert not ex.compute_kept and "without computing their values" in ex.compute_why
    kept = lines(text)
    # the allocation fills its memory, so that copies out of it read the process's own pages, as the
    # application's do (not the system's zero page)
    assert "data_ptr = (int *)iotk_malloc(10 * 10 * sizeof(int));" in kept and "free(data_ptr);" in kept
    assert "*(data_ptr + i * 10 + j) = i * j;" not in kept
    assert "H5Dwrite(dataset_id, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data_ptr);" in kept
    assert len([ln for ln in kept if ln.startswith("for (")]) == 1  # the write loop


def test_a_compression_filter_keeps_the_compute(tmp_path):
    """With deflate the bytes written depend on the values, so the compute that makes them stays."""
    code = FIG5.replace(
        "    // Create dataset\n",
        "    hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);\n"
        "    H5Pset_chunk(dcpl, 2, dims);\n    H5Pset_deflate(dcpl, 6);\n",
    )
    code = code.replace("H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);", "H5P_DEFAULT, dcpl, H5P_DEFAULT);")
    assert "H5Pset_deflate" in code and "dcpl, H5P_DEFAULT);" in code
    ex, text = kernel_of(tmp_path, code)
    assert ex.compute_kept and "H5Pset_deflate at t.c:" in ex.compute_why
    assert "*(data_ptr + i * 10 + j) = i * j;" in lines(text)


def test_dependences_through_pointers_members_globals_and_calls(tmp_path):
    _, text = kernel_of(
        tmp_path,
        """\
        #include <fcntl.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <unistd.h>
        struct buf { double *v; long n; };
        double g_scale;
        static void set_scale(double s) { g_scale = s; }
        static void fill(double *out, long n) { for (long i = 0; i < n; i++) out[i] = g_scale * i; }
        static double unused_compute(long n) { double a = 0; for (long i = 0; i < n; i++) a += i * 0.5; return a; }
        int main(void) {
            struct buf b;
            b.n = 100;
            b.v = malloc(b.n * sizeof(double));
            double *alias = b.v + 10;
            set_scale(2.0);
            fill(b.v, 10);
            alias[0] = 42.0;
            double junk = unused_compute(1000);
            double other[4];
            fill(other, 4);
            printf("%f %f\\n", junk, other[0]);
            int fd = open("x.bin", O_CREAT | O_WRONLY, 0644);
            write(1, "log\\n", 4);
            write(fd, b.v, b.n * sizeof(double));
            close(fd);
            return 0;
        }
        """,
    )
    kept = lines(text)
    for needed in (
        "b.n = 100;",
        "b.v = iotk_malloc(b.n * sizeof(double));",
        "double *alias = b.v + 10;",
        "alias[0] = 42.0;",  # a write through an alias of the written buffer
        "fill(b.v, 10);",  # writes the buffer through a pointer parameter
        "set_scale(2.0);",  # writes a global that fill reads
        "g_scale = s;",
        "out[i] = g_scale * i;",
        "write(fd, b.v, b.n * sizeof(double));",
        "close(fd);",
    ):
        assert needed in kept, needed
    assert "unused_compute" not in text  # neither the function nor its call
    assert "fill(other, 4);" not in kept  # same function, but it writes nothing the I/O needs
    assert "double other[4];" not in kept
    assert not any(ln.startswith("printf") for ln in kept)
    assert 'write(1, "log\\n", 4);' not in kept  # console output is logging


def test_markers_keep_and_drop(tmp_path):
    """With the compute kept (without it, nothing needs the values of heavy and solo anyway)."""
    ex, text = kernel_of(
        tmp_path,
        """\
        #include <stdio.h>
        int main(void) {
            double e = 0;
            for (int i = 0; i < 1000; i++) e += i;
            /* iotuner:keep begin */
            printf("energy %f\\n", e);
            /* iotuner:keep end */
            FILE *f = fopen("a.bin", "wb");
            double heavy = 1;
            /* iotuner:drop begin */
            for (int i = 0; i < 5; i++) heavy *= 3.0;
            /* iotuner:drop end */
            fwrite(&heavy, sizeof heavy, 1, f);
            double solo = 2;
            solo *= 5; // iotuner:drop
            fwrite(&solo, sizeof solo, 1, f);
            fclose(f);
            return 0;
        }
        """,
        keep_compute=True,
    )
    kept = lines(text)
    assert 'printf("energy %f\\n", e);' in kept and "e += i;" in kept  # kept by hand, with its dependence
    assert "heavy *= 3.0;" not in kept and "fwrite(&heavy, sizeof heavy, 1, f);" in kept
    assert "double solo = 2;" in kept and "solo *= 5; // iotuner:drop" not in kept
    # the kernel is told what a drop marker removed although the I/O needed it
    assert any("heavy" in b for b in ex.blocked) and any("solo" in b for b in ex.blocked)


@pytest.mark.parametrize(
    "code, message",
    [
        ("int main(void) {\n/* iotuner:keep begin */\nreturn 0;\n}\n", "has no 'iotuner:keep end'"),
        ("int main(void) {\n/* iotuner:drop end */\nreturn 0;\n}\n", "'iotuner:drop end' without a begin"),
    ],
)
def test_unbalanced_markers_are_refused_with_their_line(tmp_path, code, message):
    with pytest.raises(MarkerError, match=re.escape(message)):
        kernel_of(tmp_path, code)


def test_loop_reduction_rewrites_counted_loops_only(tmp_path):
    ex, text = kernel_of(
        tmp_path,
        """\
        #include <fcntl.h>
        #include <unistd.h>
        static void put(int fd, const double *b) { write(fd, b, 8); }
        int main(int argc, char **argv) {
            int fd = open("x.bin", O_CREAT | O_WRONLY, 0644);
            double b[8] = {0};
            int n = argc + 9;
            for (int step = 0; step < n; step += 2) { put(fd, b); }
            for (int i = 0; i < n; i++) { write(fd, b, 8); n--; }
            long left = 100;
            while (left > 0) { write(fd, b, 8); left -= 8; }
            for (int k = 0; k < 3; k++) { b[k] = k; }
            close(fd);
            return 0;
        }
        """,
        loop_fraction=0.1,
    )
    loops = {lp.line: lp for lp in ex.emitted.loops}
    assert [lp.reduced for lp in ex.emitted.loops] == [True, False, False]  # the compute loop is not listed
    reasons = [lp.reason for lp in ex.emitted.loops if not lp.reduced]
    assert "the body changes n" in reasons[0] and "while loop" in reasons[1]
    assert "IOTK_LOOP(1, iotk_trip((long long)(0), (long long)(n), (long long)(2), 1, 0));" in text
    assert "(step < n) && iotk_loop_next(&iotk_loop_1)" in text
    assert len(loops) == 3
    # opens are recorded to attribute phases to loops
    assert 'open(iotk_open_path("x.bin", iotk_open_writes(O_CREAT | O_WRONLY))' in text


def test_loop_reduction_never_cuts_cleanup_loops(tmp_path):
    """Cut to 2 of 8 iterations, the H5Tclose loop would leave six types open; a loop that closes through a
    helper is cleanup too. The loop that writes is cut."""
    ex, text = kernel_of(
        tmp_path,
        """\
        #include "hdf5.h"
        static void release(hid_t t) { if (t >= 0) H5Tclose(t); }
        int main(void) {
            hid_t file = H5Fcreate("t.h5", H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
            hid_t types[8], more[8];
            hsize_t one = 1;
            hid_t space = H5Screate_simple(1, &one, NULL);
            for (int i = 0; i < 8; i++) {
                char name[16] = "v";
                name[1] = (char)('0' + i);
                types[i] = H5Tcopy(H5T_NATIVE_DOUBLE);
                more[i] = H5Tcopy(H5T_NATIVE_INT);
                hid_t d = H5Dcreate2(file, name, types[i], space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
                H5Dclose(d);
            }
            for (int i = 0; i < 8; i++) {
                H5Tclose(types[i]);
            }
            for (int i = 0; i < 8; i++) {
                release(more[i]);
            }
            H5Sclose(space);
            H5Fclose(file);
            return 0;
        }
        """,
        loop_fraction=0.25,
    )
    assert [lp.reduced for lp in ex.emitted.loops] == [True, False, False]
    for lp in ex.emitted.loops[1:]:
        assert lp.reason.startswith("a cleanup loop"), lp
    assert text.count("IOTK_LOOP(") == 1 and "iotk_loop_next(&iotk_loop_1)" in text


def test_path_switching_wraps_every_path_argument(tmp_path):
    ex, text = kernel_of(
        tmp_path,
        """\
        #include <fcntl.h>
        #include <stdio.h>
        #include <sys/stat.h>
        #include <unistd.h>
        #include "hdf5.h"
        static int flags_of(int argc) { return argc > 9 ? O_RDWR : O_RDONLY; }
        int main(int argc, char **argv) {
            mkdir(argv[1], 0755);
            FILE *f = fopen(argv[2], "w");
            fwrite(argv, 1, 1, f);
            fclose(f);
            rename(argv[2], argv[3]);
            const char *mode = "r";
            FILE *in = fopen(argv[4], mode);
            fclose(in);
            H5Fclose(H5Fopen(argv[5], H5F_ACC_RDONLY, H5P_DEFAULT));
            MPI_File fh;
            MPI_File_open(MPI_COMM_WORLD, argv[6], MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
            MPI_File_close(&fh);
            close(open(argv[7], flags_of(argc)));
            return 0;
        }
        """,
        path_prefix="/dev/shm/x",
    )
    assert "mkdir(iotk_path(argv[1], 1), 0755);" in text
    assert 'FILE *f = fopen(iotk_open_path(argv[2], iotk_fopen_writes("w")), "w");' in text
    assert "rename(iotk_path(argv[2], 1), iotk_path(argv[3], 1));" in text
    # reads stay where they are unless the kernel wrote the file: the mode decides at run time
    assert "FILE *in = fopen(iotk_open_path(argv[4], iotk_fopen_writes(mode)), mode);" in text
    assert "iotk_open_path(argv[5], ((H5F_ACC_RDONLY) & H5F_ACC_RDWR) != 0)" in text
    assert "iotk_open_path(argv[6], ((MPI_MODE_RDONLY) & MPI_MODE_RDONLY) == 0)" in text
    assert "iotk_open_path(argv[7], 1)" in text and "the mode of open is not read" in " ".join(ex.emitted.notes)


def test_nonlocal_jumps_are_unsupported(tmp_path):
    ex, _ = kernel_of(
        tmp_path,
        """\
        #include <setjmp.h>
        #include <stdio.h>
        static jmp_buf env;
        int main(void) {
            FILE *f = fopen("a", "w");
            if (setjmp(env) == 0) fwrite("x", 1, 1, f);
            fclose(f);
            return 0;
        }
        """,
    )
    assert ex.unsupported and "setjmp" in ex.unsupported[0].what


def test_a_received_value_keeps_every_send(tmp_path):
    """The data of a kept MPI_Recv comes from a send elsewhere: dropping it would deadlock."""
    _, text = kernel_of(
        tmp_path,
        """\
        #include <mpi.h>
        int main(int argc, char **argv) {
            MPI_Init(&argc, &argv);
            int rank, n = 0;
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
            if (rank == 0) { n = 42; MPI_Send(&n, 1, MPI_INT, 1, 0, MPI_COMM_WORLD); }
            else { MPI_Recv(&n, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); }
            MPI_File fh;
            MPI_File_open(MPI_COMM_WORLD, "f", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
            MPI_File_write_at(fh, 0, &rank, n, MPI_INT, MPI_STATUS_IGNORE);
            MPI_File_close(&fh);
            MPI_Finalize();
            return 0;
        }
        """,
    )
    kept = lines(text)
    assert "MPI_Recv(&n, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);" in kept
    assert "MPI_Send(&n, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);" in kept and "n = 42;" in kept


def test_missing_source_and_bad_fraction_are_bad_input(tmp_path):
    with pytest.raises(discover.OptionsError, match="does not exist"):
        discover.discover_io(discover.Options([tmp_path / "nope.c"], tmp_path / "k"))
    (tmp_path / "a.c").write_text("int main(void) { return 0; }\n")
    with pytest.raises(discover.OptionsError, match="loop-fraction"):
        discover.discover_io(discover.Options([tmp_path / "a.c"], tmp_path / "k", loop_fraction=0.0))


def test_values_errno_and_functions_that_never_return(tmp_path):
    """Found on the bundled kernels: a switch of returns whose value kept code uses, errno (a write
    through a call's result) and a usage error that exits."""
    _, text = kernel_of(
        tmp_path,
        """\
        #include <errno.h>
        #include <stdio.h>
        #include <stdlib.h>
        static int size_of(int t) {
            switch (t) { case 1: return 1; case 2: return 4; default: return 8; }
        }
        static void usage_error(const char *what) { fprintf(stderr, "bad %s\\n", what); exit(2); }
        static long parse(const char *arg) {
            char *end;
            errno = 0;
            long v = strtol(arg, &end, 10);
            if (errno || end == arg) usage_error(arg);
            return v;
        }
        int main(int argc, char **argv) {
            long n = parse(argv[1]);
            FILE *f = fopen("out.bin", "wb");
            char buf[64] = {0};
            fwrite(buf, size_of(argc), n, f);
            fclose(f);
            return 0;
        }
        """,
    )
    kept = lines(text)
    assert ["return 1;", "return 4;", "return 8;"] == [
        ln for ln in kept if ln.startswith("return") and ln[7:8].isdigit() and ln != "return 0;"
    ]
    assert "errno = 0;" in kept  # read by the check below it
    assert "usage_error(arg);" in kept and "exit(2);" in kept  # a check that ends the run stays


def test_statements_from_a_macro_stay_whole(tmp_path):
    """A checking macro expands to statements that share its invocation's text: cutting the logging
    out of it would cut the write inside it too."""
    _, text = kernel_of(
        tmp_path,
        """\
        #include <stdio.h>
        #include <stdlib.h>
        #define CHECK(x) do { if ((x) != 1) { fprintf(stderr, "failed\\n"); exit(1); } } while (0)
        int main(void) {
            FILE *f = fopen("a.bin", "wb");
            double v = 3;
            double unused = v * 2;
            CHECK(fwrite(&v, sizeof v, 1, f));
            fclose(f);
            return 0;
        }
        """,
    )
    kept = lines(text)
    assert "CHECK(fwrite(&v, sizeof v, 1, f));" in kept and "double v = 3;" in kept
    assert "double unused = v * 2;" not in kept


def test_local_types_and_cleanup_labels(tmp_path):
    _, text = kernel_of(
        tmp_path,
        """\
        #include <stdio.h>
        int main(void) {
            typedef struct { int magic; double v; } header_t;
            header_t h = {7, 1.5};
            double junk = 0;
            for (int i = 0; i < 100; i++) junk += i;
            FILE *f = fopen("h.bin", "wb");
            if (!f) goto fail;
            if (fwrite(&h, sizeof h, 1, f) != 1) goto fail;
            fclose(f);
            return 0;
        fail:
            fprintf(stderr, "cannot write (%f)\\n", junk);
            return 1;
        }
        """,
    )
    kept = lines(text)
    assert "typedef struct" in text and "header_t h = {7, 1.5};" in kept
    assert kept.count("goto fail;") == 2 and "fail:;" not in kept and "fail:" in kept
    assert "return 1;" in kept and "junk += i;" not in kept
