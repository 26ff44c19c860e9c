/* Lustre layouts in lfs setstripe syntax, including progressive (PFL) ones. */
#include "iotuner/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_end(const char *tok, int64_t *out, char *err, size_t errlen)
{
    if (!strcmp(tok, "-1") || !strcmp(tok, "eof") || !strcmp(tok, "EOF")) {
        *out = -1;
        return 0;
    }
    return iot_parse_size(tok, out, err, errlen);
}

static int parse_count(const char *tok, int64_t *out, char *err, size_t errlen)
{
    char *end;
    long v = strtol(tok, &end, 10);
    if (*end || end == tok || v < -1 || v > 65535) {
        snprintf(err, errlen, "stripe count '%s' must be -1 (all OSTs), 0 (default) or 1..65535", tok);
        return -1;
    }
    *out = v;
    return 0;
}

int iot_layout_parse(const char *text, iot_layout *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    char buf[512];
    if (strlen(text) >= sizeof buf) {
        snprintf(err, errlen, "layout is too long");
        return -1;
    }
    strcpy(buf, text);
    iot_layout_component *cur = NULL;
    char *save = NULL;
    for (char *tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        const char *opt = tok;
        char *arg = strtok_r(NULL, " \t", &save);
        if (!arg) {
            snprintf(err, errlen, "layout option '%s' has no value", opt);
            return -1;
        }
        if (!strcmp(opt, "-E") || !strcmp(opt, "--component-end")) {
            if (out->ncomponents && !out->composite) {
                snprintf(err, errlen, "layout: -E must come before -c/-S of the first component");
                return -1;
            }
            if (out->ncomponents == (int)(sizeof out->c / sizeof out->c[0])) {
                snprintf(err, errlen, "layout has more than 16 components");
                return -1;
            }
            out->composite = 1;
            cur = &out->c[out->ncomponents++];
            if (parse_end(arg, &cur->end, err, errlen) < 0)
                return -1;
            continue;
        }
        if (!cur) { /* plain layout without -E: one component to end of file */
            cur = &out->c[out->ncomponents++];
            cur->end = -1;
        }
        if (!strcmp(opt, "-c") || !strcmp(opt, "--stripe-count")) {
            if (parse_count(arg, &cur->stripe_count, err, errlen) < 0)
                return -1;
        } else if (!strcmp(opt, "-S") || !strcmp(opt, "--stripe-size")) {
            if (iot_parse_size(arg, &cur->stripe_size, err, errlen) < 0)
                return -1;
            if (cur->stripe_size % 65536 != 0) {
                snprintf(err, errlen, "stripe size '%s' is not a multiple of 64 KiB", arg);
                return -1;
            }
        } else {
            snprintf(err, errlen, "layout option '%s' is not supported (use -E, -c, -S)", opt);
            return -1;
        }
    }
    if (out->ncomponents == 0) {
        snprintf(err, errlen, "layout is empty");
        return -1;
    }
    for (int i = 0; i < out->ncomponents; i++) {
        int64_t e = out->c[i].end;
        int last = (i == out->ncomponents - 1);
        if (e == -1 && !last) {
            snprintf(err, errlen, "layout component %d ends at end of file but is not the last", i + 1);
            return -1;
        }
        if (last && e != -1) {
            snprintf(err, errlen, "the last layout component must end at -1 (end of file), or writes past %lld fail",
                     (long long)e);
            return -1;
        }
        if (e != -1 && (e <= 0 || e % 65536 != 0)) {
            snprintf(err, errlen, "layout component %d end must be a positive multiple of 64 KiB", i + 1);
            return -1;
        }
        if (i > 0 && e != -1 && e <= out->c[i - 1].end) {
            snprintf(err, errlen, "layout component ends must increase (component %d)", i + 1);
            return -1;
        }
    }
    return 0;
}

void iot_layout_format(const iot_layout *l, char *out, size_t outlen)
{
    size_t pos = 0;
    out[0] = 0;
    for (int i = 0; i < l->ncomponents && pos < outlen; i++) {
        const iot_layout_component *c = &l->c[i];
        char num[32];
        if (l->composite) {
            if (c->end == -1)
                snprintf(num, sizeof num, "-1");
            else
                iot_format_size(c->end, num, sizeof num);
            pos += (size_t)snprintf(out + pos, outlen - pos, "%s-E %s", pos ? " " : "", num);
        }
        if (pos < outlen)
            pos += (size_t)snprintf(out + pos, outlen - pos, "%s-c %lld", pos ? " " : "", (long long)c->stripe_count);
        if (c->stripe_size && pos < outlen) {
            iot_format_size(c->stripe_size, num, sizeof num);
            pos += (size_t)snprintf(out + pos, outlen - pos, " -S %s", num);
        }
    }
}

int iot_lustre_has_pfl(const char *text)
{
    for (const char *p = text; p && *p; p++) {
        int major, minor, used = 0;
        if (*p >= '0' && *p <= '9' && (p == text || p[-1] == ' ' || p[-1] == ':' || p[-1] == '\t') &&
            sscanf(p, "%d.%d%n", &major, &minor, &used) == 2 && used > 0)
            return major > 2 || (major == 2 && minor >= 10);
    }
    return -1;
}
