/* The knob catalogue: every knob described once. Search spaces (Python) are
 * views of it; the runtime has one applier per entry (checked by a test). */
#include "iotuner/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KiB 1024.0
#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * MiB)

#define ROMIO "ROMIO (MPICH, Cray MPICH, Intel MPI, Open MPI's romio component)"
#define H5PAR "HDF5 with the MPI-IO driver (parallel builds)"

const iot_knob iot_catalogue[] = {
    /* ---- HDF5 ---- */
    {"alignment", IOT_LAYER_HDF5, IOT_TYPE_SIZE_PAIR, IOT_APPLY_FILE_ACCESS, NULL, 0, 0, 0, "1,1", 0, NULL, "HDF5",
     "[threshold, alignment]: objects of at least threshold bytes start at a multiple of alignment (H5Pset_alignment)"},
    {"meta_block_size", IOT_LAYER_HDF5, IOT_TYPE_SIZE, IOT_APPLY_FILE_ACCESS, NULL, 0, 0, 0, "2048", 0, NULL, "HDF5",
     "minimum size of metadata block allocations (H5Pset_meta_block_size)"},
    {"sieve_buf_size", IOT_LAYER_HDF5, IOT_TYPE_SIZE, IOT_APPLY_FILE_ACCESS, NULL, 0, 0, 0, "65536", 0, NULL, "HDF5",
     "data sieve buffer for partial I/O on contiguous datasets (H5Pset_sieve_buf_size)"},
    {"small_data_block_size", IOT_LAYER_HDF5, IOT_TYPE_SIZE, IOT_APPLY_FILE_ACCESS, NULL, 0, 0, 0, "2048", 0, NULL,
     "HDF5", "block size for aggregating small raw data allocations (H5Pset_small_data_block_size)"},
    {"mdc_initial_size", IOT_LAYER_HDF5, IOT_TYPE_SIZE, IOT_APPLY_FILE_ACCESS, NULL, 1024, 128 * MiB, 0, "2097152", 0,
     NULL, "HDF5",
     "initial size of the metadata cache; its min/max are widened when needed (H5Pset_mdc_config)"},
    {"chunk_cache_nslots", IOT_LAYER_HDF5, IOT_TYPE_INT, IOT_APPLY_FILE_ACCESS, NULL, 1, 2147483647.0, 0, "521", 0,
     NULL, "HDF5", "hash slots of the raw-data chunk cache; a prime about 100x the chunks that fit (H5Pset_cache)"},
    {"chunk_cache_nbytes", IOT_LAYER_HDF5, IOT_TYPE_SIZE, IOT_APPLY_FILE_ACCESS, NULL, 0, 0, 0, "1048576", 0, NULL,
     "HDF5", "size of the raw-data chunk cache per dataset (H5Pset_cache)"},
    {"chunk_cache_w0", IOT_LAYER_HDF5, IOT_TYPE_FLOAT, IOT_APPLY_FILE_ACCESS, NULL, 0, 1, 0, "0.75", 0, NULL, "HDF5",
     "chunk cache preemption policy, 0..1: 1 evicts fully read/written chunks first (H5Pset_cache)"},
    {"coll_metadata_reads", IOT_LAYER_HDF5, IOT_TYPE_BOOL, IOT_APPLY_FILE_ACCESS, NULL, 0, 0, 0, "false", 1, NULL,
     H5PAR, "all metadata reads collective: one rank reads and broadcasts (H5Pset_all_coll_metadata_ops)"},
    {"coll_metadata_writes", IOT_LAYER_HDF5, IOT_TYPE_BOOL, IOT_APPLY_FILE_ACCESS, NULL, 0, 0, 0, "false", 1, NULL,
     H5PAR, "metadata cache flushes as collective writes (H5Pset_coll_metadata_write)"},
    {"transfer_mode", IOT_LAYER_HDF5, IOT_TYPE_ENUM, IOT_APPLY_TRANSFER, "independent|collective", 0, 0, 0,
     "independent", 1, NULL, H5PAR, "raw-data transfer of H5Dwrite / H5Dread (H5Pset_dxpl_mpio)"},
    {"chunk_dims", IOT_LAYER_HDF5, IOT_TYPE_DIMS, IOT_APPLY_DATASET_CREATE, NULL, 1, 0, 0, NULL, 0, NULL, "HDF5",
     "chunk dimensions of new datasets, clamped to fixed dataset extents (H5Pset_chunk); rank must match"},
    {"chunk_bytes", IOT_LAYER_HDF5, IOT_TYPE_SIZE, IOT_APPLY_DATASET_CREATE, NULL, 1, 4 * GiB, 0, NULL, 0, NULL,
     "HDF5",
     "chunk new datasets with chunks of about this many bytes: whole rows, up to the maximum extents, under "
     "4 GiB (H5Pset_chunk); chunk_dims wins where both apply"},

    /* ---- MPI-IO hints (any other hint name is passed through as is) ---- */
    {"cb_nodes", IOT_LAYER_MPIIO, IOT_TYPE_INT, IOT_APPLY_MPI_HINT, NULL, 1, 1048576, 0, NULL, 0,
     "mpiio.cb_config_list=*:{per_node}",
     ROMIO,
     "number of collective-buffering aggregators; capped by cb_config_list (default *:1, one per node)"},
    {"cb_buffer_size", IOT_LAYER_MPIIO, IOT_TYPE_SIZE, IOT_APPLY_MPI_HINT, NULL, 1, 0, 0, "16777216", 0, NULL, ROMIO,
     "collective-buffering buffer per aggregator"},
    {"cb_config_list", IOT_LAYER_MPIIO, IOT_TYPE_STRING, IOT_APPLY_MPI_HINT, NULL, 0, 0, 0, "*:1", 0, NULL, ROMIO,
     "where aggregators may run: \"*:N\" allows N per node"},
    {"romio_cb_write", IOT_LAYER_MPIIO, IOT_TYPE_ENUM, IOT_APPLY_MPI_HINT, "enable|disable|automatic", 0, 0, 0,
     "automatic", 0, NULL, ROMIO, "collective buffering for collective writes"},
    {"romio_cb_read", IOT_LAYER_MPIIO, IOT_TYPE_ENUM, IOT_APPLY_MPI_HINT, "enable|disable|automatic", 0, 0, 0,
     "automatic", 0, NULL, ROMIO, "collective buffering for collective reads"},
    {"romio_ds_write", IOT_LAYER_MPIIO, IOT_TYPE_ENUM, IOT_APPLY_MPI_HINT, "enable|disable|automatic", 0, 0, 0,
     "automatic", 0, NULL, ROMIO, "data sieving for independent noncontiguous writes"},
    {"romio_ds_read", IOT_LAYER_MPIIO, IOT_TYPE_ENUM, IOT_APPLY_MPI_HINT, "enable|disable|automatic", 0, 0, 0,
     "automatic", 0, NULL, ROMIO, "data sieving for independent noncontiguous reads"},
    {"ind_wr_buffer_size", IOT_LAYER_MPIIO, IOT_TYPE_SIZE, IOT_APPLY_MPI_HINT, NULL, 1, 0, 0, "524288", 0, NULL,
     ROMIO, "data-sieving buffer for independent writes"},
    {"ind_rd_buffer_size", IOT_LAYER_MPIIO, IOT_TYPE_SIZE, IOT_APPLY_MPI_HINT, NULL, 1, 0, 0, "4194304", 0, NULL,
     ROMIO, "data-sieving buffer for independent reads"},
    {"romio_no_indep_rw", IOT_LAYER_MPIIO, IOT_TYPE_ENUM, IOT_APPLY_MPI_HINT, "true|false", 0, 0, 0, "false", 0,
     NULL, ROMIO, "promise of collective-only access: only aggregators open the file (deferred open)"},
    {"striping_factor", IOT_LAYER_MPIIO, IOT_TYPE_INT, IOT_APPLY_MPI_HINT, NULL, 1, 65535, 0, NULL, 0, NULL,
     "ROMIO's Lustre and GPFS drivers, at file creation; ignored by ufs/nfs", "stripe count of a new file"},
    {"striping_unit", IOT_LAYER_MPIIO, IOT_TYPE_SIZE, IOT_APPLY_MPI_HINT, NULL, 1, 0, 0, NULL, 0, NULL,
     "ROMIO's Lustre and GPFS drivers, at file creation; ignored by ufs/nfs", "stripe size of a new file"},

    /* ---- Lustre ---- */
    {"stripe_count", IOT_LAYER_LUSTRE, IOT_TYPE_INT, IOT_APPLY_FILE_LAYOUT, NULL, -1, 65535, 0, NULL, 0, NULL,
     "Lustre (lfs setstripe or liblustreapi)", "OSTs a new file is striped over; -1 = all, 0 = file-system default"},
    {"stripe_size", IOT_LAYER_LUSTRE, IOT_TYPE_SIZE, IOT_APPLY_FILE_LAYOUT, NULL, 65536, 4 * GiB, 65536, NULL, 0,
     NULL, "Lustre (lfs setstripe or liblustreapi)", "bytes per stripe of a new file, a multiple of 64 KiB"},
    {"layout", IOT_LAYER_LUSTRE, IOT_TYPE_LAYOUT, IOT_APPLY_FILE_LAYOUT, NULL, 0, 0, 0, NULL, 0, NULL,
     "Lustre 2.10+ (progressive file layouts)",
     "full layout in lfs setstripe syntax, e.g. \"-E 256M -c 1 -E 4G -c 4 -E -1 -c -1\"; replaces stripe_count / "
     "stripe_size"},
};

const size_t iot_catalogue_size = sizeof iot_catalogue / sizeof iot_catalogue[0];

static const char *layer_names[] = {"hdf5", "mpiio", "lustre"};

const char *iot_layer_name(iot_layer layer)
{
    return (unsigned)layer < IOT_LAYER_COUNT ? layer_names[layer] : "?";
}

int iot_layer_from_name(const char *name)
{
    for (int i = 0; i < IOT_LAYER_COUNT; i++)
        if (!strcmp(name, layer_names[i]))
            return i;
    return -1;
}

const char *iot_type_name(iot_type type)
{
    static const char *names[] = {"size", "int", "bool", "enum", "string", "float", "size_pair", "dims", "layout"};
    return (unsigned)type < sizeof names / sizeof names[0] ? names[type] : "?";
}

const char *iot_apply_point_name(iot_apply_point p)
{
    static const char *names[] = {"file_access", "dataset_create", "transfer", "mpi_hint", "file_layout"};
    return (unsigned)p < sizeof names / sizeof names[0] ? names[p] : "?";
}

int iot_knob_find(iot_layer layer, const char *name)
{
    for (size_t i = 0; i < iot_catalogue_size; i++)
        if (iot_catalogue[i].layer == layer && !strcmp(iot_catalogue[i].name, name))
            return (int)i;
    return -1;
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return 64;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

int iot_knob_suggest(const char *name, char *out, size_t outlen)
{
    size_t best = (size_t)-1;
    const iot_knob *hit = NULL;
    for (size_t i = 0; i < iot_catalogue_size; i++) {
        size_t d = edit_distance(name, iot_catalogue[i].name);
        if (d < best) {
            best = d;
            hit = &iot_catalogue[i];
        }
    }
    size_t len = strlen(name);
    if (!hit || best == 0 || best > (len < 8 ? 2u : 3u))
        return 0;
    snprintf(out, outlen, "%s.%s", iot_layer_name(hit->layer), hit->name);
    return 1;
}

char *iot_catalogue_json(void)
{
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_object(&b, NULL);
    iot_jw_int(&b, "version", IOT_SETTINGS_VERSION);
    iot_jw_begin_array(&b, "knobs");
    for (size_t i = 0; i < iot_catalogue_size; i++) {
        const iot_knob *k = &iot_catalogue[i];
        iot_jw_begin_object(&b, NULL);
        iot_jw_string(&b, "name", k->name);
        iot_jw_string(&b, "layer", iot_layer_name(k->layer));
        iot_jw_string(&b, "type", iot_type_name(k->type));
        iot_jw_string(&b, "applied_at", iot_apply_point_name(k->apply));
        if (k->choices) {
            iot_jw_begin_array(&b, "choices");
            const char *p = k->choices;
            while (*p) {
                const char *bar = strchr(p, '|');
                size_t n = bar ? (size_t)(bar - p) : strlen(p);
                char tmp[64];
                snprintf(tmp, sizeof tmp, "%.*s", (int)n, p);
                iot_jw_string(&b, NULL, tmp);
                p += n + (bar ? 1 : 0);
            }
            iot_jw_end_array(&b);
        }
        if (k->type == IOT_TYPE_INT || k->type == IOT_TYPE_SIZE || k->type == IOT_TYPE_FLOAT) {
            iot_jw_double(&b, "min", k->min);
            if (k->max > 0)
                iot_jw_double(&b, "max", k->max);
            else
                iot_jw_null(&b, "max");
        }
        if (k->multiple_of)
            iot_jw_int(&b, "multiple_of", k->multiple_of);
        iot_jw_string(&b, "default", k->default_value);
        iot_jw_bool(&b, "parallel_only", k->parallel_only);
        iot_jw_string(&b, "requires", k->requires);
        iot_jw_string(&b, "honoured_by", k->honoured_by);
        iot_jw_string(&b, "description", k->description);
        iot_jw_end_object(&b);
    }
    iot_jw_end_array(&b);
    iot_jw_end_object(&b);
    return iot_buf_take(&b);
}
