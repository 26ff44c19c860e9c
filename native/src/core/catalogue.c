/* The knob catalogue: every knob described once. Search spaces (Python) are
 * views of it; the runtime has one applier per entry (checked by a test). */
#include "iotuner/core.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KiB 1024.0
#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * MiB)

#define ROMIO "ROMIO (MPICH, Cray MPICH, Intel MPI, Open MPI's romio component)"
#define OMPIO "Open MPI's OMPIO io component (its default)"
#define MCA_INT "Open MPI keeps it in a C int"
#define H5PAR "HDF5 with the MPI-IO driver (parallel builds)"
#define PNETCDF "PnetCDF (ncmpi_create / ncmpi_open)"
/* every fixed-size variable (or record) starts at a multiple: many variables times a huge alignment make a file
 * larger than the file system allows (its holes count towards its size) */
#define PNETCDF_ALIGN_MAX (1 * GiB)
#define PNETCDF_ALIGN_WHY "each variable is padded to a multiple: a file of many variables outgrows the file system"

/* ROMIO keeps its buffer sizes in a C int: 2 GiB overflows it (a division by zero, an abort) */
#define ROMIO_INT_MAX 2147483647.0
#define ROMIO_INT "ROMIO keeps it in a C int"
/* below a file-system block, collective buffering and data sieving go in so many rounds that a job stalls */
#define ROMIO_BUFFER_MIN 4096
#define ROMIO_BUFFER_FLOOR "smaller buffers split I/O into rounds of less than a file-system block"

/* ROMIO syntax: entries "host[:count]" separated by ','; host may be '*', count may be '*' */
static int valid_cb_config_list(const char *s)
{
    if (!*s)
        return 0;
    const char *p = s;
    while (*p) {
        const char *start = p;
        while (*p && *p != ',' && *p != ':') {
            if (isspace((unsigned char)*p))
                return 0;
            p++;
        }
        if (p == start)
            return 0;
        if (*p == ':') {
            p++;
            if (*p == '*')
                p++;
            else {
                if (!isdigit((unsigned char)*p))
                    return 0;
                while (isdigit((unsigned char)*p))
                    p++;
            }
        }
        if (*p == ',') {
            p++;
            if (!*p)
                return 0;
        } else if (*p) {
            return 0;
        }
    }
    return 1;
}

/* Indexed by iot_knob_id: the runtime refers to a knob by its id, never by its name. */
const iot_knob iot_catalogue[IOT_KNOBS] = {
    /* ---- HDF5 ---- */
    [IOT_KNOB_ALIGNMENT] = {.name = "alignment", .layer = IOT_LAYER_HDF5, .type = IOT_TYPE_SIZE_PAIR,
        .apply = IOT_APPLY_FILE_ACCESS, .min = 1, .max = 4 * GiB, .default_value = "1,1", .honoured_by = "HDF5",
        .why_max = "Lustre's largest stripe; each aligned object moves the end of the file up to this far, and 1T "
                   "made writes fail with 'File too large'",
        .description = "[threshold, alignment]: objects of at least threshold bytes start at a multiple of alignment (H5Pset_alignment)"},
    [IOT_KNOB_META_BLOCK_SIZE] = {.name = "meta_block_size", .layer = IOT_LAYER_HDF5, .type = IOT_TYPE_SIZE,
        .apply = IOT_APPLY_FILE_ACCESS, .default_value = "2048", .honoured_by = "HDF5",
        .description = "minimum size of metadata block allocations (H5Pset_meta_block_size)"},
    [IOT_KNOB_SIEVE_BUF_SIZE] = {.name = "sieve_buf_size", .layer = IOT_LAYER_HDF5, .type = IOT_TYPE_SIZE,
        .apply = IOT_APPLY_FILE_ACCESS, .default_value = "65536", .honoured_by = "HDF5",
        .description = "data sieve buffer for partial I/O on contiguous datasets (H5Pset_sieve_buf_size)"},
    [IOT_KNOB_SMALL_DATA_BLOCK_SIZE] = {.name = "small_data_block_size", .layer = IOT_LAYER_HDF5, .type = IOT_TYPE_SIZE,
        .apply = IOT_APPLY_FILE_ACCESS, .default_value = "2048", .honoured_by = "HDF5",
        .description = "block size for aggregating small raw data allocations (H5Pset_small_data_block_size)"},
    [IOT_KNOB_MDC_INITIAL_SIZE] = {.name = "mdc_initial_size", .layer = IOT_LAYER_HDF5, .type = IOT_TYPE_SIZE,
        .apply = IOT_APPLY_FILE_ACCESS, .min = 1024, .max = 128 * MiB, .default_value = "2097152",
        .honoured_by = "HDF5",
        .description = "initial size of the metadata cache; its min/max are widened when needed (H5Pset_mdc_config)"},
    [IOT_KNOB_CHUNK_CACHE_NSLOTS] = {.name = "chunk_cache_nslots", .layer = IOT_LAYER_HDF5, .type = IOT_TYPE_INT,
        .apply = IOT_APPLY_FILE_ACCESS, .min = 1, .max = 2147483647.0, .default_value = "521", .honoured_by = "HDF5",
        .description = "hash slots of the raw-data chunk cache; a prime about 100x the chunks that fit (H5Pset_cache)"},
    [IOT_KNOB_CHUNK_CACHE_NBYTES] = {.name = "chunk_cache_nbytes", .layer = IOT_LAYER_HDF5, .type = IOT_TYPE_SIZE,
        .apply = IOT_APPLY_FILE_ACCESS, .default_value = "1048576", .honoured_by = "HDF5",
        .description = "size of the raw-data chunk cache per dataset (H5Pset_cache)"},
    [IOT_KNOB_CHUNK_CACHE_W0] = {.name = "chunk_cache_w0", .layer = IOT_LAYER_HDF5, .type = IOT_TYPE_FLOAT,
        .apply = IOT_APPLY_FILE_ACCESS, .max = 1, .default_value = "0.75", .honoured_by = "HDF5",
        .description = "chunk cache preemption policy, 0..1: 1 evicts fully read/written chunks first (H5Pset_cache)"},
    [IOT_KNOB_COLL_METADATA_READS] = {.name = "coll_metadata_reads", .layer = IOT_LAYER_HDF5, .type = IOT_TYPE_BOOL,
        .apply = IOT_APPLY_FILE_ACCESS, .default_value = "false", .parallel_only = 1, .honoured_by = H5PAR,
        .description = "all metadata reads collective: one rank reads and broadcasts (H5Pset_all_coll_metadata_ops)"},
    [IOT_KNOB_COLL_METADATA_WRITES] = {.name = "coll_metadata_writes", .layer = IOT_LAYER_HDF5, .type = IOT_TYPE_BOOL,
        .apply = IOT_APPLY_FILE_ACCESS, .default_value = "false", .parallel_only = 1, .honoured_by = H5PAR,
        .description = "metadata cache flushes as collective writes (H5Pset_coll_metadata_write)"},
    [IOT_KNOB_TRANSFER_MODE] = {.name = "transfer_mode", .layer = IOT_LAYER_HDF5, .type = IOT_TYPE_ENUM,
        .apply = IOT_APPLY_TRANSFER, .choices = "independent|collective", .default_value = "independent",
        .parallel_only = 1, .honoured_by = H5PAR,
        .description = "raw-data transfer of H5Dwrite / H5Dread (H5Pset_dxpl_mpio)"},
    [IOT_KNOB_CHUNK_DIMS] = {.name = "chunk_dims", .layer = IOT_LAYER_HDF5, .type = IOT_TYPE_DIMS,
        .apply = IOT_APPLY_DATASET_CREATE, .min = 1, .honoured_by = "HDF5",
        .description = "chunk dimensions of new datasets, clamped to fixed dataset extents (H5Pset_chunk); rank must match"},
    [IOT_KNOB_CHUNK_BYTES] = {.name = "chunk_bytes", .layer = IOT_LAYER_HDF5, .type = IOT_TYPE_SIZE,
        .apply = IOT_APPLY_DATASET_CREATE, .min = 1, .max = 4 * GiB, .honoured_by = "HDF5",
        .why_max = "HDF5's largest chunk is 4 GiB - 1",
        .description = "chunk new datasets with chunks of about this many bytes: whole rows, up to the maximum extents, under "
     "4 GiB (H5Pset_chunk); chunk_dims wins where both apply"},

    /* ---- MPI-IO hints (any other hint name is passed through as is) ---- */
    [IOT_KNOB_CB_NODES] = {.name = "cb_nodes", .layer = IOT_LAYER_MPIIO, .type = IOT_TYPE_INT,
        .apply = IOT_APPLY_MPI_HINT, .min = 1, .max = 1048576, .requires = "mpiio.cb_config_list=*:{per_node}",
        .honoured_by = ROMIO, .capped_by_nodes = 1,
        .description = "number of collective-buffering aggregators; capped by cb_config_list (default *:1, one per node)"},
    [IOT_KNOB_CB_BUFFER_SIZE] = {.name = "cb_buffer_size", .layer = IOT_LAYER_MPIIO, .type = IOT_TYPE_SIZE,
        .apply = IOT_APPLY_MPI_HINT, .min = ROMIO_BUFFER_MIN, .max = ROMIO_INT_MAX, .why_min = ROMIO_BUFFER_FLOOR,
        .why_max = ROMIO_INT, .default_value = "16777216", .honoured_by = ROMIO,
        .description = "collective-buffering buffer per aggregator"},
    [IOT_KNOB_CB_CONFIG_LIST] = {.name = "cb_config_list", .layer = IOT_LAYER_MPIIO, .type = IOT_TYPE_STRING,
        .apply = IOT_APPLY_MPI_HINT, .default_value = "*:1", .honoured_by = ROMIO, .validate = valid_cb_config_list,
        .syntax = "a ROMIO cb_config_list (e.g. \"*:2\" or \"node1:1,node2:1\")",
        .description = "where aggregators may run: \"*:N\" allows N per node"},
    [IOT_KNOB_ROMIO_CB_WRITE] = {.name = "romio_cb_write", .layer = IOT_LAYER_MPIIO, .type = IOT_TYPE_ENUM,
        .apply = IOT_APPLY_MPI_HINT, .choices = "enable|disable|automatic", .default_value = "automatic",
        .honoured_by = ROMIO,
        .description = "collective buffering for collective writes"},
    [IOT_KNOB_ROMIO_CB_READ] = {.name = "romio_cb_read", .layer = IOT_LAYER_MPIIO, .type = IOT_TYPE_ENUM,
        .apply = IOT_APPLY_MPI_HINT, .choices = "enable|disable|automatic", .default_value = "automatic",
        .honoured_by = ROMIO,
        .description = "collective buffering for collective reads"},
    [IOT_KNOB_ROMIO_DS_WRITE] = {.name = "romio_ds_write", .layer = IOT_LAYER_MPIIO, .type = IOT_TYPE_ENUM,
        .apply = IOT_APPLY_MPI_HINT, .choices = "enable|disable|automatic", .default_value = "automatic",
        .honoured_by = ROMIO,
        .description = "data sieving for independent noncontiguous writes"},
    [IOT_KNOB_ROMIO_DS_READ] = {.name = "romio_ds_read", .layer = IOT_LAYER_MPIIO, .type = IOT_TYPE_ENUM,
        .apply = IOT_APPLY_MPI_HINT, .choices = "enable|disable|automatic", .default_value = "automatic",
        .honoured_by = ROMIO,
        .description = "data sieving for independent noncontiguous reads"},
    [IOT_KNOB_IND_WR_BUFFER_SIZE] = {.name = "ind_wr_buffer_size", .layer = IOT_LAYER_MPIIO, .type = IOT_TYPE_SIZE,
        .apply = IOT_APPLY_MPI_HINT, .min = ROMIO_BUFFER_MIN, .max = ROMIO_INT_MAX, .why_min = ROMIO_BUFFER_FLOOR,
        .why_max = ROMIO_INT, .default_value = "524288", .honoured_by = ROMIO,
        .description = "data-sieving buffer for independent writes"},
    [IOT_KNOB_IND_RD_BUFFER_SIZE] = {.name = "ind_rd_buffer_size", .layer = IOT_LAYER_MPIIO, .type = IOT_TYPE_SIZE,
        .apply = IOT_APPLY_MPI_HINT, .min = ROMIO_BUFFER_MIN, .max = ROMIO_INT_MAX, .why_min = ROMIO_BUFFER_FLOOR,
        .why_max = ROMIO_INT, .default_value = "4194304", .honoured_by = ROMIO,
        .description = "data-sieving buffer for independent reads"},
    [IOT_KNOB_ROMIO_NO_INDEP_RW] = {.name = "romio_no_indep_rw", .layer = IOT_LAYER_MPIIO, .type = IOT_TYPE_ENUM,
        .apply = IOT_APPLY_MPI_HINT, .choices = "true|false", .default_value = "false", .honoured_by = ROMIO,
        .description = "promise of collective-only access: only aggregators open the file (deferred open)"},
    [IOT_KNOB_STRIPING_FACTOR] = {.name = "striping_factor", .layer = IOT_LAYER_MPIIO, .type = IOT_TYPE_INT,
        .apply = IOT_APPLY_MPI_HINT, .min = 1, .max = 65535,
        .honoured_by = "ROMIO's Lustre and GPFS drivers, at file creation; ignored by ufs/nfs", .striping_hint = 1,
        .description = "stripe count of a new file"},
    [IOT_KNOB_STRIPING_UNIT] = {.name = "striping_unit", .layer = IOT_LAYER_MPIIO, .type = IOT_TYPE_SIZE,
        .apply = IOT_APPLY_MPI_HINT, .min = 1, .max = ROMIO_INT_MAX, .why_max = ROMIO_INT,
        .honoured_by = "ROMIO's Lustre and GPFS drivers, at file creation; ignored by ufs/nfs", .striping_hint = 1,
        .description = "stripe size of a new file"},

    /* ---- Lustre ---- */
    [IOT_KNOB_STRIPE_COUNT] = {.name = "stripe_count", .layer = IOT_LAYER_LUSTRE, .type = IOT_TYPE_INT,
        .apply = IOT_APPLY_FILE_LAYOUT, .min = -1, .max = 65535,
        .honoured_by = "Lustre (lfs setstripe or liblustreapi)", .lustre_part = IOT_LUSTRE_STRIPING,
        .description = "OSTs a new file is striped over; -1 = all, 0 = file-system default"},
    [IOT_KNOB_STRIPE_SIZE] = {.name = "stripe_size", .layer = IOT_LAYER_LUSTRE, .type = IOT_TYPE_SIZE,
        .apply = IOT_APPLY_FILE_LAYOUT, .min = 65536, .max = 4 * GiB, .multiple_of = 65536,
        .honoured_by = "Lustre (lfs setstripe or liblustreapi)", .lustre_part = IOT_LUSTRE_STRIPING,
        .description = "bytes per stripe of a new file, a multiple of 64 KiB"},
    [IOT_KNOB_LAYOUT] = {.name = "layout", .layer = IOT_LAYER_LUSTRE, .type = IOT_TYPE_LAYOUT,
        .apply = IOT_APPLY_FILE_LAYOUT, .honoured_by = "Lustre 2.10+ (progressive file layouts)",
        .lustre_part = IOT_LUSTRE_LAYOUT,
        .description = "full layout in lfs setstripe syntax, e.g. \"-E 256M -c 1 -E 4G -c 4 -E -1 -c -1\"; replaces stripe_count / "
     "stripe_size"},

    /* ---- Open MPI's OMPIO: MCA parameters, read at MPI_Init (process-wide: `iotuner run` sets them) ---- */
    [IOT_KNOB_OMPIO_FCOLL] = {.name = "fcoll", .layer = IOT_LAYER_OMPIO, .type = IOT_TYPE_ENUM,
        .apply = IOT_APPLY_MCA, .choices = "vulcan|dynamic|dynamic_gen2|two_phase|individual", .mca = "fcoll",
        .honoured_by = OMPIO, .description = "OMPIO's collective I/O component (individual: no aggregation)"},
    [IOT_KNOB_OMPIO_NUM_AGGREGATORS] = {.name = "num_aggregators", .layer = IOT_LAYER_OMPIO, .type = IOT_TYPE_INT,
        .apply = IOT_APPLY_MCA, .min = 1, .max = 1048576, .mca = "io_ompio_num_aggregators", .honoured_by = OMPIO,
        .description = "aggregators of collective I/O (default: OMPIO chooses from the access pattern)"},
    [IOT_KNOB_OMPIO_BYTES_PER_AGG] = {.name = "bytes_per_agg", .layer = IOT_LAYER_OMPIO, .type = IOT_TYPE_SIZE,
        .apply = IOT_APPLY_MCA, .min = ROMIO_BUFFER_MIN, .max = ROMIO_INT_MAX, .why_min = ROMIO_BUFFER_FLOOR,
        .why_max = MCA_INT, .default_value = "33554432", .mca = "io_ompio_bytes_per_agg", .honoured_by = OMPIO,
        .description = "collective I/O buffer per aggregator"},
    [IOT_KNOB_OMPIO_CYCLE_BUFFER_SIZE] = {.name = "cycle_buffer_size", .layer = IOT_LAYER_OMPIO,
        .type = IOT_TYPE_SIZE, .apply = IOT_APPLY_MCA, .min = ROMIO_BUFFER_MIN, .max = ROMIO_INT_MAX,
        .why_min = ROMIO_BUFFER_FLOOR, .why_max = MCA_INT, .default_value = "536870912",
        .mca = "io_ompio_cycle_buffer_size", .honoured_by = OMPIO,
        .description = "bytes OMPIO reads or writes per cycle of an individual call"},

    /* ---- PnetCDF hints (the MPI_Info of ncmpi_create / ncmpi_open; PNETCDF_HINTS overrides them) ---- */
    [IOT_KNOB_NC_VAR_ALIGN_SIZE] = {.name = "nc_var_align_size", .layer = IOT_LAYER_PNETCDF, .type = IOT_TYPE_SIZE,
        .apply = IOT_APPLY_PNETCDF_HINT, .min = 1, .max = PNETCDF_ALIGN_MAX, .why_max = PNETCDF_ALIGN_WHY,
        .honoured_by = PNETCDF, .file_layout = 1,
        .description = "the data section and every fixed-size variable start at a multiple of this (e.g. the file "
                       "system's block or stripe)"},
    [IOT_KNOB_NC_HEADER_ALIGN_SIZE] = {.name = "nc_header_align_size", .layer = IOT_LAYER_PNETCDF,
        .type = IOT_TYPE_SIZE, .apply = IOT_APPLY_PNETCDF_HINT, .min = 1, .max = PNETCDF_ALIGN_MAX,
        .why_max = PNETCDF_ALIGN_WHY, .honoured_by = PNETCDF, .file_layout = 1,
        .description = "space reserved for the header: the data section starts at a multiple of this, so the header "
                       "can grow without moving the data"},
    [IOT_KNOB_NC_RECORD_ALIGN_SIZE] = {.name = "nc_record_align_size", .layer = IOT_LAYER_PNETCDF,
        .type = IOT_TYPE_SIZE, .apply = IOT_APPLY_PNETCDF_HINT, .min = 1, .max = PNETCDF_ALIGN_MAX,
        .why_max = PNETCDF_ALIGN_WHY, .honoured_by = PNETCDF, .file_layout = 1,
        .description = "the record section starts at a multiple of this"},
    [IOT_KNOB_NC_IN_PLACE_SWAP] = {.name = "nc_in_place_swap", .layer = IOT_LAYER_PNETCDF, .type = IOT_TYPE_ENUM,
        .apply = IOT_APPLY_PNETCDF_HINT, .choices = "enable|disable|auto", .default_value = "auto",
        .honoured_by = PNETCDF,
        .description = "byte-swap the user's buffer in place (then back) instead of a copy, on little-endian "
                       "machines: less memory; auto swaps in place for large requests"},
    [IOT_KNOB_NC_IBUF_SIZE] = {.name = "nc_ibuf_size", .layer = IOT_LAYER_PNETCDF, .type = IOT_TYPE_SIZE,
        .apply = IOT_APPLY_PNETCDF_HINT, .min = 0, .max = 2 * GiB, .default_value = "16777216",
        .why_max = "a buffer for one process's pending requests", .honoured_by = PNETCDF,
        .description = "buffer for packing the nonblocking requests of noncontiguous or type-converted user "
                       "buffers (ncmpi_iput / iget)"},
};

const size_t iot_catalogue_size = IOT_KNOBS;

static const char *layer_names[] = {"hdf5", "mpiio", "lustre", "ompio", "pnetcdf"};

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
    static const char *names[] = {"file_access", "dataset_create", "transfer",     "mpi_hint",
                                  "file_layout", "mca_parameter",  "pnetcdf_hint"};
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
        if (k->type == IOT_TYPE_INT || k->type == IOT_TYPE_SIZE || k->type == IOT_TYPE_FLOAT ||
            k->type == IOT_TYPE_SIZE_PAIR) {
            /* integer knobs' bounds as integers: a double prints 2147483647 as 2147483650.0, past the limit */
            int whole = k->type != IOT_TYPE_FLOAT;
            if (whole)
                iot_jw_int(&b, "min", (int64_t)k->min);
            else
                iot_jw_double(&b, "min", k->min);
            if (k->max > 0 && whole)
                iot_jw_int(&b, "max", (int64_t)k->max);
            else if (k->max > 0)
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
        if (k->mca)
            iot_jw_string(&b, "mca", k->mca);
        iot_jw_string(&b, "description", k->description);
        iot_jw_end_object(&b);
    }
    iot_jw_end_array(&b);
    iot_jw_end_object(&b);
    return iot_buf_take(&b);
}
