/* A serial HDF5 program (default sec2 driver, no MPI): writes one 2-D
 * dataset with a known pattern, reads it back and checks it. */
#include <hdf5.h>
#include <stdio.h>

#define NX 120
#define NY 250

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    static int buf[NX][NY], back[NX][NY];
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NY; j++)
            buf[i][j] = i * 1000 + j;
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t dims[2] = {NX, NY};
    hid_t s = H5Screate_simple(2, dims, NULL);
    hid_t d = H5Dcreate2(f, "grid", H5T_NATIVE_INT, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (f < 0 || d < 0 || H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0)
        return 1;
    H5Dclose(d);
    H5Sclose(s);
    H5Fclose(f);
    f = H5Fopen(argv[1], H5F_ACC_RDONLY, H5P_DEFAULT);
    d = H5Dopen2(f, "grid", H5P_DEFAULT);
    if (f < 0 || d < 0 || H5Dread(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) < 0)
        return 1;
    H5Dclose(d);
    H5Fclose(f);
    for (int i = 0; i < NX; i++)
        for (int j = 0; j < NY; j++)
            if (back[i][j] != buf[i][j]) {
                fprintf(stderr, "mismatch at %d,%d\n", i, j);
                return 1;
            }
    printf("serial_h5: ok\n");
    return 0;
}
