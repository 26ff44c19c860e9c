/* Open MPI's MCA parameters, read through MPI_T control variables: which io
 * component opens files (OMPIO, the default, or ROMIO's port: romio321 in Open MPI 4, romio341 in 5) and the
 * values OMPIO runs with. Open MPI's MPI_File_get_info hands back the info the
 * application gave, whatever the component did with it, so the parameters are
 * the read-back. Only the Open MPI build calls this (mpiio.c). A leaf: the
 * MPI_T functions are looked up here, optional (an MPI without them: no
 * component known). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mca.h"

static struct {
    int (*init_thread)(int, int *);
    int (*get_index)(const char *, int *);
    int (*get_info)(int, char *, int *, int *, MPI_Datatype *, MPI_T_enum *, char *, int *, int *, int *);
    int (*handle_alloc)(int, void *, MPI_T_cvar_handle *, int *);
    int (*read)(MPI_T_cvar_handle, void *);
    int (*handle_free)(MPI_T_cvar_handle *);
    int (*get_num)(int *);
} t;
static pthread_once_t t_once = PTHREAD_ONCE_INIT;
static int t_ok;

static void t_init(void)
{
    t.init_thread = (int (*)(int, int *))dlsym(RTLD_DEFAULT, "PMPI_T_init_thread");
    t.get_index = (int (*)(const char *, int *))dlsym(RTLD_DEFAULT, "PMPI_T_cvar_get_index");
    *(void **)&t.get_info = dlsym(RTLD_DEFAULT, "PMPI_T_cvar_get_info");
    *(void **)&t.handle_alloc = dlsym(RTLD_DEFAULT, "PMPI_T_cvar_handle_alloc");
    *(void **)&t.read = dlsym(RTLD_DEFAULT, "PMPI_T_cvar_read");
    *(void **)&t.handle_free = dlsym(RTLD_DEFAULT, "PMPI_T_cvar_handle_free");
    *(void **)&t.get_num = dlsym(RTLD_DEFAULT, "PMPI_T_cvar_get_num");
    int provided = 0; /* MPI_T is reference counted and stays initialized: a handful of reads per run */
    t_ok = t.init_thread && t.get_index && t.get_info && t.handle_alloc && t.read && t.handle_free &&
           t.init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS;
}

int iot_mca_read(const char *name, char *out, size_t outlen)
{
    pthread_once(&t_once, t_init);
    int index = -1, count = 0, verbosity, bind, scope, namelen = 0, desclen = 0;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    MPI_T_cvar_handle handle;
    if (!t_ok || t.get_index(name, &index) != MPI_SUCCESS ||
        t.get_info(index, NULL, &namelen, &verbosity, &type, &enumtype, NULL, &desclen, &bind, &scope) !=
            MPI_SUCCESS ||
        t.handle_alloc(index, NULL, &handle, &count) != MPI_SUCCESS)
        return 0;
    char value[4096] = ""; /* Open MPI's string parameters are 2,048 bytes */
    int ok = count >= 1 && (type != MPI_CHAR || count < (int)sizeof value) && t.read(handle, value) == MPI_SUCCESS;
    t.handle_free(&handle);
    if (!ok)
        return 0;
    if (type == MPI_CHAR)
        snprintf(out, outlen, "%s", value);
    else if (type == MPI_INT)
        snprintf(out, outlen, "%d", *(int *)value);
    else if (type == MPI_UNSIGNED)
        snprintf(out, outlen, "%u", *(unsigned *)value);
    else if (type == MPI_UNSIGNED_LONG || type == MPI_UNSIGNED_LONG_LONG)
        snprintf(out, outlen, "%llu", type == MPI_UNSIGNED_LONG ? (unsigned long long)*(unsigned long *)value
                                                               : *(unsigned long long *)value);
    else if (type == MPI_LONG || type == MPI_LONG_LONG)
        snprintf(out, outlen, "%lld", type == MPI_LONG ? (long long)*(long *)value : *(long long *)value);
    else
        return 0;
    return 1;
}

/* Whether a comma-separated MCA component list names a component. */
static int lists(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',' || p[-1] == '^') && (p[n] == 0 || p[n] == ','))
            return 1;
    return 0;
}

/* The io framework takes the component of highest priority among those the "io" parameter allows
 * ("romio321", "^ompio", empty: every one). */
static const char *io_component;
static char romio[32]; /* this Open MPI's ROMIO component (romio321, romio341, ...): it has io_<name>_priority */

static void find_romio(void)
{
    int n = 0;
    if (!t.get_num || t.get_num(&n) != MPI_SUCCESS)
        return;
    for (int i = 0; i < n && !romio[0]; i++) {
        char name[256];
        int namelen = sizeof name, verbosity, bind, scope, desclen = 0, digits = 0;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        if (t.get_info(i, name, &namelen, &verbosity, &type, &enumtype, NULL, &desclen, &bind, &scope) ==
                MPI_SUCCESS &&
            sscanf(name, "io_romio%*[0-9]%n_priority", &digits) == 0 && digits > 8 && !strcmp(name + digits, "_priority"))
            snprintf(romio, sizeof romio, "%.*s", digits - 3, name + 3);
    }
}

static int priority(const char *component)
{
    char name[64], value[32];
    snprintf(name, sizeof name, "io_%s_priority", component);
    return iot_mca_read(name, value, sizeof value) ? atoi(value) : -1;
}

static void pick_component(void)
{
    char selection[256];
    if (!iot_mca_read("io", selection, sizeof selection))
        return; /* not Open MPI's MPI_T */
    find_romio();
    const char *const known[] = {"ompio", romio[0] ? romio : "romio321"};
    int best = -2;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        int named = lists(selection, known[i]);
        int allowed = !selection[0] || (selection[0] == '^' ? !named : named);
        int p = allowed ? priority(known[i]) : -2;
        if (allowed && p > best)
            best = p, io_component = known[i];
    }
}

const char *iot_mca_io_component(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, pick_component);
    return io_component;
}
