/* Why a requested setting is not what the library reports: the reasons
 * behind "requested vs effective" in every run report. */
#include "iotuner/core.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *iot_status_name(iot_status s)
{
    static const char *names[] = {"applied", "changed", "dropped", "not_applicable", "failed", "not_used",
                                  "cannot_apply"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

static int values_equal(const char *a, const char *b)
{
    if (!strcasecmp(a, b))
        return 1;
    char *ea, *eb;
    long long x = strtoll(a, &ea, 10), y = strtoll(b, &eb, 10);
    return *a && *b && !*ea && !*eb && x == y;
}

/* Aggregators per node allowed by a cb_config_list of the form "*:N";
 * -1 when unlimited ("*:*") or when the list names hosts. */
static long per_node_limit(const char *list)
{
    if (!list || strncmp(list, "*:", 2) != 0)
        return list ? -1 : 1; /* ROMIO's default list is "*:1" */
    if (!strcmp(list + 2, "*"))
        return -1;
    char *end;
    long n = strtol(list + 2, &end, 10);
    return *end ? -1 : n;
}

/* The catalogue's entry of a hint, or NULL for a hint it does not describe. */
static const iot_knob *hint_knob(const char *name)
{
    int k = iot_knob_find(IOT_LAYER_MPIIO, name);
    return k >= 0 ? &iot_catalogue[k] : NULL;
}

static int is_striping_hint(const char *name)
{
    const iot_knob *k = hint_knob(name);
    return k ? k->striping_hint : !strcmp(name, "start_iodevice"); /* ROMIO's third, uncatalogued */
}

iot_status iot_explain_hint(const char *name, const char *requested, const char *effective,
                            const char *fs_driver, int nnodes, int nprocs, const char *cb_config_list,
                            char *reason, size_t reasonlen)
{
    const char *fs = fs_driver && *fs_driver ? fs_driver : "unknown";
    reason[0] = 0;
    if (!effective) {
        if (is_striping_hint(name) && !iot_fs_is_lustre(fs) && strcasecmp(fs, "gpfs") != 0) {
            snprintf(reason, reasonlen,
                     "ROMIO's %s driver ignores striping hints (only its Lustre and GPFS drivers set striping); "
                     "use lustre.stripe_count / lustre.stripe_size on Lustre",
                     fs);
            return IOT_STATUS_DROPPED;
        }
        if (hint_knob(name)) {
            snprintf(reason, reasonlen, "this MPI-IO library does not support it (MPI_File_get_info does not return it)");
            return IOT_STATUS_DROPPED;
        }
        char hint[128];
        if (iot_knob_suggest(name, hint, sizeof hint))
            snprintf(reason, reasonlen, "not recognized by this MPI-IO library (did you mean %s?)", hint);
        else
            snprintf(reason, reasonlen, "not recognized by this MPI-IO library (MPI_File_get_info does not return it)");
        return IOT_STATUS_DROPPED;
    }
    if (values_equal(requested, effective)) {
        if (is_striping_hint(name) && !iot_fs_is_lustre(fs) && strcasecmp(fs, "gpfs") != 0)
            snprintf(reason, reasonlen,
                     "kept by ROMIO's %s driver, which uses it only to align collective-buffering file domains; "
                     "nothing is striped",
                     fs);
        return IOT_STATUS_APPLIED;
    }
    if (hint_knob(name) && hint_knob(name)->capped_by_nodes) {
        long req = strtol(requested, NULL, 10), eff = strtol(effective, NULL, 10);
        long per_node = per_node_limit(cb_config_list);
        long cap = per_node > 0 && nnodes > 0 ? per_node * nnodes : -1;
        if (eff < req && cap > 0 && eff == cap && (nprocs <= 0 || cap < nprocs)) {
            long need = nnodes > 0 ? (req + nnodes - 1) / nnodes : req;
            snprintf(reason, reasonlen,
                     "capped at %ld: cb_config_list '%s' allows %ld aggregator(s) per node on %d node(s); "
                     "set cb_config_list to \"*:%ld\" as well",
                     eff, cb_config_list ? cb_config_list : "*:1", per_node, nnodes, need);
            return IOT_STATUS_CHANGED;
        }
        if (eff < req && nprocs > 0 && eff == nprocs) {
            snprintf(reason, reasonlen, "capped at the number of processes (%d)", nprocs);
            return IOT_STATUS_CHANGED;
        }
    }
    if ((!strcmp(name, "romio_cb_read") || !strcmp(name, "romio_cb_write")) && !strcasecmp(effective, "enable")) {
        snprintf(reason, reasonlen,
                 "the MPI-IO library reports '%s' (romio_no_indep_rw=true forces collective buffering on)",
                 effective);
        return IOT_STATUS_CHANGED;
    }
    snprintf(reason, reasonlen, "the MPI-IO library reports '%s'", effective);
    return IOT_STATUS_CHANGED;
}

iot_status iot_explain_absent(iot_layer layer, const iot_job_use *use, char *reason, size_t reasonlen)
{
    const char *program = use->program && *use->program ? use->program : "the program";
    int hdf5 = layer == IOT_LAYER_HDF5, pnetcdf = layer == IOT_LAYER_PNETCDF;
    if (hdf5 && !use->used_hdf5 && use->static_hdf5) {
        snprintf(reason, reasonlen, "HDF5 is linked statically into %s; link with `iotuner link-flags`", program);
        return IOT_STATUS_CANNOT_APPLY;
    }
    if (pnetcdf && !use->used_pnetcdf && use->static_pnetcdf) { /* `iotuner link-flags` wraps HDF5's calls only */
        snprintf(reason, reasonlen, "PnetCDF is linked statically into %s; link it as a shared library (-lpnetcdf)",
                 program);
        return IOT_STATUS_CANNOT_APPLY;
    }
    int mpiio = layer == IOT_LAYER_MPIIO || layer == IOT_LAYER_OMPIO;
    if (hdf5 && !use->used_hdf5)
        snprintf(reason, reasonlen, "the job opened no HDF5 file");
    else if (pnetcdf && !use->used_pnetcdf)
        snprintf(reason, reasonlen, "the job opened no PnetCDF file");
    else if (mpiio && !use->used_mpiio && !use->used_hdf5 && !use->used_pnetcdf)
        snprintf(reason, reasonlen, "the job opened no file with MPI-IO");
    else if (use->patterns)
        snprintf(reason, reasonlen, "no file or dataset of the job matched %s", use->patterns);
    else
        snprintf(reason, reasonlen, "no file the job opened took it");
    return IOT_STATUS_NOT_USED;
}

iot_status iot_explain_ompio_hint(const char *name, const char *fs_driver, char *reason, size_t reasonlen)
{
    static const struct {
        const char *hint, *instead; /* NULL: OMPIO takes the hint */
    } ompio[] = {
        {"cb_nodes", NULL},
        {"cb_buffer_size", NULL},
        {"collective_buffering", NULL},
        {"romio_cb_write", "ompio.fcoll"},
        {"romio_cb_read", "ompio.fcoll"},
        {"romio_no_indep_rw", "ompio.fcoll"},
        {"cb_config_list", "ompio.num_aggregators"},
        {"ind_wr_buffer_size", "ompio.cycle_buffer_size"},
        {"ind_rd_buffer_size", "ompio.cycle_buffer_size"},
    };
    reason[0] = 0;
    if (is_striping_hint(name)) {
        if (fs_driver && iot_fs_is_lustre(fs_driver))
            return IOT_STATUS_APPLIED;
        snprintf(reason, reasonlen,
                 "ignored by OMPIO on %s (only its Lustre fs component stripes); use lustre.stripe_count / "
                 "lustre.stripe_size on Lustre",
                 fs_driver && *fs_driver ? fs_driver : "this file system");
        return IOT_STATUS_DROPPED;
    }
    for (size_t i = 0; i < sizeof ompio / sizeof ompio[0]; i++)
        if (!strcmp(name, ompio[i].hint)) {
            if (!ompio[i].instead)
                return IOT_STATUS_APPLIED;
            snprintf(reason, reasonlen, "ignored by OMPIO, use %s instead", ompio[i].instead);
            return IOT_STATUS_DROPPED;
        }
    snprintf(reason, reasonlen, "ignored by OMPIO (Open MPI's io component; romio321 reads ROMIO's hints)");
    return IOT_STATUS_DROPPED;
}

const char *iot_fs_name(int64_t magic)
{
    static const struct {
        int64_t magic;
        const char *name;
    } known[] = {
        {0xEF53, "ext4"},        {0x58465342, "xfs"},     {0x9123683E, "btrfs"},   {0x01021994, "tmpfs"},
        {0x6969, "nfs"},         {0x0BD00BD0, "lustre"},  {0x47504653, "gpfs"},    {0x19830326, "beegfs"},
        {0x65735546, "fuse"},    {0x794C7630, "overlay"}, {0x2FC12FC1, "zfs"},     {0x73717368, "squashfs"},
        {0x9fa0, "proc"},        {0x62656572, "sysfs"},   {0x00C36400, "cephfs"},  {0xAAD7AAEA, "panfs"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (known[i].magic == magic)
            return known[i].name;
    return "unknown";
}

int iot_fs_is_lustre(const char *fs_name)
{
    return fs_name && !strcasecmp(fs_name, "lustre");
}

const char *iot_version(void)
{
    return "0.1.0";
}

char *iot_settings_check(const char *text, char *err, size_t errlen)
{
    iot_settings *s = iot_settings_parse(text, strlen(text), err, errlen);
    if (!s)
        return NULL;
    char *out = iot_settings_to_json(s);
    iot_settings_free(s);
    if (!out)
        snprintf(err, errlen, "out of memory");
    return out;
}

char *iot_settings_check_warnings(const char *text, char *err, size_t errlen)
{
    iot_settings *s = iot_settings_parse(text, strlen(text), err, errlen);
    if (!s)
        return NULL;
    char *out = malloc(8192);
    if (out)
        iot_settings_warnings(s, out, 8192);
    else
        snprintf(err, errlen, "out of memory");
    iot_settings_free(s);
    return out;
}

void iot_free(void *p)
{
    free(p);
}
