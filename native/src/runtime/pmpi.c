/* The PMPI table (pmpi.h): resolved once, at the first call that needs MPI. A leaf. The MPI library's own
 * functions, never the library's PMPI_ wrappers (iot_next_symbol). */
#include <dlfcn.h>
#include <pthread.h>

#include "pmpi.h"
#include "state.h"

iot_pmpi_t iot_pmpi;
static pthread_once_t pmpi_once = PTHREAD_ONCE_INIT;
static int pmpi_ok;

static void resolve(void)
{
#define IOT_PMPI_RESOLVE(ret, name, params) iot_pmpi.name = (ret(*) params)iot_next_symbol("PMPI_" #name);
    IOT_PMPI_FUNCTIONS(IOT_PMPI_RESOLVE)
#undef IOT_PMPI_RESOLVE
    void **p = (void **)&iot_pmpi;
    pmpi_ok = 1;
    for (size_t i = 0; i < sizeof iot_pmpi / sizeof(void *); i++)
        if (!p[i])
            pmpi_ok = 0;
}

int iot_pmpi_resolve(void)
{
    pthread_once(&pmpi_once, resolve);
    return pmpi_ok;
}
