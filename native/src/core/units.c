/* Byte sizes with exact, binary units. */
#include "iotuner/core.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct {
    const char *suffix;
    int shift;
} units[] = {
    {"", 0},     {"K", 10},   {"KiB", 10}, {"M", 20},   {"MiB", 20},
    {"G", 30},   {"GiB", 30}, {"T", 40},   {"TiB", 40},
};

int iot_parse_size(const char *text, int64_t *out, char *err, size_t errlen)
{
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    if (!isdigit((unsigned char)*p)) {
        snprintf(err, errlen, "'%s' is not a size: expected a number of bytes like 1048576, \"1M\" or \"1MiB\"", text);
        return -1;
    }
    uint64_t v = 0;
    while (isdigit((unsigned char)*p)) {
        unsigned d = (unsigned)(*p - '0');
        if (v > (UINT64_MAX - d) / 10) {
            snprintf(err, errlen, "size '%s' is too large", text);
            return -1;
        }
        v = v * 10 + d;
        p++;
    }
    while (isspace((unsigned char)*p))
        p++;
    char suffix[8];
    size_t n = strlen(p);
    while (n > 0 && isspace((unsigned char)p[n - 1]))
        n--;
    if (n >= sizeof suffix) {
        snprintf(err, errlen, "'%s' has an unknown unit: use K, M, G, T or KiB, MiB, GiB, TiB", text);
        return -1;
    }
    memcpy(suffix, p, n);
    suffix[n] = 0;
    if (!strcasecmp(suffix, "KB") || !strcasecmp(suffix, "MB") || !strcasecmp(suffix, "GB") ||
        !strcasecmp(suffix, "TB")) {
        snprintf(err, errlen,
                 "'%s': unit '%s' is ambiguous (1000 or 1024?); write %ciB for binary units or give bytes", text,
                 suffix, toupper((unsigned char)suffix[0]));
        return -1;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        /* single letters accept either case (lfs does); the iB forms need their spelling */
        int match = units[i].suffix[0] && !units[i].suffix[1] ? !strcasecmp(suffix, units[i].suffix)
                                                               : !strcmp(suffix, units[i].suffix);
        if (!match)
            continue;
        if (units[i].shift && v > (uint64_t)INT64_MAX >> units[i].shift) {
            snprintf(err, errlen, "size '%s' is too large", text);
            return -1;
        }
        v <<= units[i].shift;
        if (v > (uint64_t)INT64_MAX) {
            snprintf(err, errlen, "size '%s' is too large", text);
            return -1;
        }
        *out = (int64_t)v;
        return 0;
    }
    snprintf(err, errlen, "'%s' has an unknown unit '%s': use K, M, G, T or KiB, MiB, GiB, TiB", text, suffix);
    return -1;
}

void iot_format_size(int64_t bytes, char *out, size_t outlen)
{
    static const char letters[] = "KMGT";
    if (bytes <= 0) {
        snprintf(out, outlen, "%lld", (long long)bytes);
        return;
    }
    int shift = 0;
    while (shift < 4 && (bytes & 1023) == 0) {
        bytes >>= 10;
        shift++;
    }
    if (shift == 0)
        snprintf(out, outlen, "%lld", (long long)bytes);
    else
        snprintf(out, outlen, "%lld%c", (long long)bytes, letters[shift - 1]);
}
