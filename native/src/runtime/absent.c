/* The requested knobs that no phase of the job has a row for: each gets a row of its own in the report
 * (settings.without_phase), not_used or cannot_apply with why (iot_explain_absent), so that a requested knob
 * is never left out silently (docs/report.md). */
#include "absent.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "iotuner/core.h"
#include "phase.h"
#include "phases.h"
#include "pmpi.h"
#include "program.h"
#include "state.h"

#define MAX_KNOBS 256

typedef struct {
    iot_layer layer;
    const char *name, *text; /* the last group's value: the one a file matching every group gets */
} knob;

/* The document's distinct knobs, in document order (the same on every rank). */
static size_t distinct_knobs(const iot_settings *s, knob *out)
{
    size_t n = 0;
    for (size_t g = 0; s && g < s->ngroups; g++)
        for (size_t i = 0; i < s->groups[g].count; i++) {
            const iot_setting *it = &s->groups[g].items[i];
            size_t k = 0;
            while (k < n && !(out[k].layer == it->layer && !strcmp(out[k].name, it->name)))
                k++;
            if (k == n && n == MAX_KNOBS)
                continue;
            out[k] = (knob){it->layer, it->name, it->text};
            n += k == n;
        }
    return n;
}

/* The patterns of the groups naming a knob, as the reason quotes them; NULL when one group names it for
 * every file and dataset. */
static const char *patterns(const iot_settings *s, const knob *k, char *out, size_t len)
{
    size_t pos = 0;
    out[0] = '\0';
    for (size_t g = 0; g < s->ngroups; g++) {
        const iot_group *grp = &s->groups[g];
        int names = 0;
        for (size_t i = 0; i < grp->count && !names; i++)
            names = grp->items[i].layer == k->layer && !strcmp(grp->items[i].name, k->name);
        if (!names)
            continue;
        if (!grp->file_glob && !grp->dataset_glob)
            return NULL;
        if (pos < len)
            pos += (size_t)snprintf(out + pos, len - pos, "%s%s%s%s%s%s", pos ? ", " : "",
                                    grp->file_glob ? "'" : "", grp->file_glob ? grp->file_glob : "",
                                    grp->file_glob ? "'" : "", !grp->dataset_glob ? "" : grp->file_glob ? " datasets '" : "datasets '",
                                    grp->dataset_glob ? grp->dataset_glob : "");
        if (grp->dataset_glob && pos < len)
            pos += (size_t)snprintf(out + pos, len - pos, "'");
    }
    return out;
}

static const char *program_name(char *buf, size_t len)
{
    ssize_t n = readlink("/proc/self/exe", buf, len - 1);
    buf[n > 0 ? n : 0] = '\0';
    const char *slash = strrchr(buf, '/');
    return slash ? slash + 1 : buf;
}

char *iot_absent_rows_json(MPI_Comm comm, iot_phase *const *phases, size_t nphases)
{
    const iot_settings *s = iot_g.settings;
    knob knobs[MAX_KNOBS];
    size_t n = distinct_knobs(s, knobs);
    /* which knobs have a row on some rank, and which layers the job used: one reduction */
    enum { USED_HDF5 = MAX_KNOBS, USED_PNETCDF, USED_MPIIO, FLAGS };
    int seen[FLAGS] = {0};
    for (size_t p = 0; p < nphases; p++)
        for (size_t k = 0; k < n; k++)
            if (!seen[k] && iot_phase_has_check(phases[p], iot_layer_name(knobs[k].layer), knobs[k].name))
                seen[k] = 1;
    seen[USED_HDF5] = iot_g.used[IOT_KIND_HDF5];
    seen[USED_PNETCDF] = iot_g.used[IOT_KIND_PNETCDF];
    seen[USED_MPIIO] = iot_g.used[IOT_KIND_MPIIO];
    if (comm != MPI_COMM_NULL)
        iot_pmpi.Allreduce(MPI_IN_PLACE, seen, FLAGS, MPI_INT, MPI_MAX, comm);
    if (iot_g.rank != 0)
        return NULL;
    iot_job_use use = {seen[USED_HDF5], seen[USED_PNETCDF], seen[USED_MPIIO], 0, 0, NULL, NULL};
    int looked = 0;
    char exe[4096], pats[400], reason[512];
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_begin_array(&b, NULL);
    for (size_t k = 0; k < n; k++) {
        if (seen[k])
            continue;
        if (!looked) { /* once, and only when a knob has no row */
            static const char *const libs[] = {"H5Fcreate", "ncmpi_create"};
            int found[2];
            if (iot_program_defines(libs, found, 2) == 0) {
                use.static_hdf5 = found[0] && !iot_program_wrapped(IOT_KIND_HDF5);
                use.static_pnetcdf = found[1] && !iot_program_wrapped(IOT_KIND_PNETCDF);
            }
            use.program = program_name(exe, sizeof exe);
            looked = 1;
        }
        use.patterns = patterns(s, &knobs[k], pats, sizeof pats);
        iot_status st = iot_explain_absent(knobs[k].layer, &use, reason, sizeof reason);
        iot_jw_begin_object(&b, NULL);
        iot_jw_string(&b, "layer", iot_layer_name(knobs[k].layer));
        iot_jw_string(&b, "knob", knobs[k].name);
        iot_jw_string(&b, "requested", knobs[k].text);
        iot_jw_string(&b, "effective", NULL);
        iot_jw_string(&b, "status", iot_status_name(st));
        iot_jw_string(&b, "reason", reason);
        iot_jw_end_object(&b);
    }
    iot_jw_end_array(&b);
    return iot_buf_take(&b);
}
