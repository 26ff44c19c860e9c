/* A program built against an installed libiotuner_core (pkg-config iotuner, or find_package(iotuner)): what a
 * site's own tool does with the core's C API, e.g. a job-submit filter that checks IOTUNER_CONFIG before a job
 * starts. Usage: core_client SETTINGS FILE. Prints the settings that apply to FILE, one "layer.knob=value" a
 * line, then the size "16M" in bytes; on a bad document, the core's message and exit status 1. */
#include <stdio.h>
#include <stdlib.h>

#include <iotuner/core.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s SETTINGS FILE\n", argv[0]);
        return 2;
    }
    char err[4096];
    size_t len = 0;
    char *text = iot_read_regular_file(argv[1], "settings file", 1 << 24, &len, err, sizeof err);
    iot_settings *s = text ? iot_settings_parse(text, len, err, sizeof err) : NULL;
    free(text);
    if (!s) {
        printf("rejected: %s\n", err);
        return 1;
    }
    const iot_setting *applied[64];
    size_t n = iot_settings_resolve(s, argv[2], NULL, -1, applied, 64);
    for (size_t i = 0; i < n; i++)
        printf("%s.%s=%s\n", iot_layer_name(applied[i]->layer), applied[i]->name, applied[i]->text);
    int64_t bytes = 0;
    if (iot_parse_size("16M", &bytes, err, sizeof err) == 0)
        printf("16M=%lld\n", (long long)bytes);
    printf("core %s\n", iot_version());
    iot_settings_free(s);
    return 0;
}
