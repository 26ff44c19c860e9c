/* Writes through one memory space whose selection or extent changes between
 * writes in every way HDF5 offers, each change the only one since the last
 * write: the bytes iotuner counts must follow every change. Prints the bytes
 * written and the number of writes. */
#include <hdf5.h>
#include <stdio.h>

static hid_t dset, fspace, mspace;
static hsize_t pos;
static long bytes, writes;
static int buf[512];

/* Writes the memory selection's points to the next free file positions. */
static int write_next(void)
{
    hsize_t count = (hsize_t)H5Sget_select_npoints(mspace);
    H5Sselect_hyperslab(fspace, H5S_SELECT_SET, &pos, NULL, &count, NULL);
    if (H5Dwrite(dset, H5T_NATIVE_INT, mspace, fspace, H5P_DEFAULT, buf) < 0)
        return -1;
    pos += count;
    bytes += (long)count * (long)sizeof(int);
    writes++;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    hid_t f = H5Fcreate(argv[1], H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t n = 16384, m = 512, zero = 0;
    fspace = H5Screate_simple(1, &n, NULL);
    mspace = H5Screate_simple(1, &m, NULL);
    dset = H5Dcreate2(f, "v", H5T_NATIVE_INT, fspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = write_next(); /* all 512 */
    for (hsize_t k = 1; k <= 5 && rc == 0; k++) {
        hsize_t count = k * 7 + 1;
        hsize_t coords[64];
        for (hsize_t i = 0; i <= count; i++)
            coords[i] = i;
        H5Sselect_hyperslab(mspace, H5S_SELECT_SET, &zero, NULL, &count, NULL);
        rc |= write_next();
        H5Sselect_elements(mspace, H5S_SELECT_SET, count + 1, coords);
        rc |= write_next();
        H5Sselect_all(mspace);
        rc |= write_next();
        H5Sselect_none(mspace);
        rc |= write_next(); /* nothing selected: no bytes */

        hid_t other = H5Screate_simple(1, &m, NULL);
        H5Sselect_hyperslab(other, H5S_SELECT_SET, &zero, NULL, &count, NULL);
        H5Sselect_all(mspace);
        rc |= write_next();
        H5Sselect_copy(mspace, other);
        rc |= write_next();
        H5Sclose(other);

        /* extents: with "all" selected, the extent is the selection */
        H5Sselect_all(mspace);
        rc |= write_next();
        hsize_t small = count + 2;
        H5Sset_extent_simple(mspace, 1, &small, NULL);
        rc |= write_next();
        hid_t tiny = H5Screate_simple(1, &count, NULL);
        H5Sextent_copy(mspace, tiny);
        rc |= write_next();
        H5Sclose(tiny);
        H5Sset_extent_simple(mspace, 1, &m, NULL);
        H5Sselect_all(mspace);
        rc |= write_next();

        /* H5Smodify_select: OR in a block further on */
        hid_t extra = H5Screate_simple(1, &m, NULL);
        hsize_t at = 100, len = k + 3;
        H5Sselect_hyperslab(mspace, H5S_SELECT_SET, &zero, NULL, &count, NULL);
        rc |= write_next();
        H5Sselect_hyperslab(extra, H5S_SELECT_SET, &at, NULL, &len, NULL);
        H5Smodify_select(mspace, H5S_SELECT_OR, extra);
        rc |= write_next();
        H5Sclose(extra);
        H5Sselect_all(mspace);
    }
    H5Dclose(dset);
    H5Sclose(mspace);
    H5Sclose(fspace);
    H5Fclose(f);
    printf("bytes=%ld writes=%ld\n", bytes, writes);
    return rc ? 1 : 0;
}
