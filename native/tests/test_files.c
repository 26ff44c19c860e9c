/* The settings reader never blocks and reads only regular files of bounded size. */
#include "check.h"
#include "iotuner/core.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
    char dir[] = "/tmp/iotuner-files-XXXXXX", path[256], err[512];
    CHECK(mkdtemp(dir) != NULL);
    size_t len = 0;

    /* a FIFO with no writer: refused at once (a blocking open would wait forever) */
    snprintf(path, sizeof path, "%s/fifo", dir);
    CHECK(mkfifo(path, 0600) == 0);
    CHECK(iot_read_regular_file(path, "settings file", 1024, &len, err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "settings file");
    CHECK_CONTAINS(err, "is not a regular file (a FIFO)");
    unlink(path);

    CHECK(iot_read_regular_file(dir, "settings file", 1024, &len, err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "(a directory)");
    CHECK(iot_read_regular_file("/dev/null", "settings file", 1024, &len, err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "(a device or socket)");
    snprintf(path, sizeof path, "%s/missing", dir);
    CHECK(iot_read_regular_file(path, "settings file", 1024, &len, err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "cannot read settings file");

    /* a regular file: exactly its bytes; one over the bound: refused */
    snprintf(path, sizeof path, "%s/doc.json", dir);
    FILE *f = fopen(path, "w");
    for (int i = 0; i < 5000; i++)
        fputc('a' + i % 26, f);
    fclose(f);
    char *text = iot_read_regular_file(path, "settings file", 5000, &len, err, sizeof err);
    CHECK(text && len == 5000 && strlen(text) == 5000 && text[4999] == 'a' + 4999 % 26);
    free(text);
    CHECK(iot_read_regular_file(path, "settings file", 4999, &len, err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "larger than 4999 bytes");
    unlink(path);

    /* pseudo-files report a size of 0 or a page: read to their end */
    char *clock = iot_read_regular_file("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                                        "clock source", 64, &len, err, sizeof err);
    CHECK(clock && len > 0 && len < 64);
    free(clock);
    text = iot_read_regular_file("/proc/self/cmdline", "command line", 1 << 16, &len, err, sizeof err);
    CHECK(text && len > 0 && strstr(text, "test_files"));
    free(text);
    rmdir(dir);
    CHECK_DONE();
}
