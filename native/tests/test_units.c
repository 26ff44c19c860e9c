#include "check.h"
#include "iotuner/core.h"

int main(void)
{
    int64_t v;
    char err[256], out[32];
    CHECK(iot_parse_size("1048576", &v, err, sizeof err) == 0 && v == 1048576);
    CHECK(iot_parse_size("16M", &v, err, sizeof err) == 0 && v == 16777216);
    CHECK(iot_parse_size("16m", &v, err, sizeof err) == 0 && v == 16777216);
    CHECK(iot_parse_size("16MiB", &v, err, sizeof err) == 0 && v == 16777216);
    CHECK(iot_parse_size("4K", &v, err, sizeof err) == 0 && v == 4096);
    CHECK(iot_parse_size("2G", &v, err, sizeof err) == 0 && v == 2147483648LL);
    CHECK(iot_parse_size(" 3 T ", &v, err, sizeof err) == 0 && v == 3LL << 40);
    /* the SmartIO prototype's bug: "16 MB" must not silently mean 1,600,000 or 16,000,000 */
    CHECK(iot_parse_size("16MB", &v, err, sizeof err) < 0);
    CHECK_CONTAINS(err, "ambiguous");
    CHECK(iot_parse_size("16mib", &v, err, sizeof err) < 0);
    CHECK(iot_parse_size("-1", &v, err, sizeof err) < 0);
    CHECK(iot_parse_size("1.5M", &v, err, sizeof err) < 0);
    CHECK(iot_parse_size("99999999999T", &v, err, sizeof err) < 0);
    CHECK_CONTAINS(err, "too large");
    iot_format_size(16777216, out, sizeof out);
    CHECK_STR(out, "16M");
    iot_format_size(1536 * 1024, out, sizeof out);
    CHECK_STR(out, "1536K");
    iot_format_size(1000, out, sizeof out);
    CHECK_STR(out, "1000");
    CHECK_DONE();
}
