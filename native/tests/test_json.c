#include "check.h"
#include "iotuner/json.h"
#include <math.h>
#include <stdlib.h>

static iot_json *parse(const char *s, char *err)
{
    return iot_json_parse(s, strlen(s), err, 256);
}

int main(void)
{
    char err[256];
    iot_json *v = parse("{\"a\": [1, -2.5, true, null, \"x\\n\\u00e9\\ud83d\\ude00\"], \"b\": {\"c\": 9007199254740993}}", err);
    CHECK(v && v->type == IOT_JSON_OBJECT && v->count == 2);
    const iot_json *a = iot_json_get(v, "a");
    CHECK(a && a->type == IOT_JSON_ARRAY && a->count == 5);
    CHECK(a->items[0]->is_integer && a->items[0]->integer == 1);
    CHECK(!a->items[1]->is_integer && a->items[1]->number == -2.5);
    CHECK(a->items[2]->type == IOT_JSON_BOOL && a->items[2]->boolean);
    CHECK(a->items[3]->type == IOT_JSON_NULL);
    CHECK_STR(a->items[4]->string, "x\n\xc3\xa9\xf0\x9f\x98\x80");
    /* integers beyond 2^53 stay exact */
    CHECK(iot_json_get(iot_json_get(v, "b"), "c")->integer == 9007199254740993LL);
    CHECK(iot_json_get(v, "missing") == NULL);

    /* round trip through the writer */
    iot_buf b;
    iot_buf_init(&b);
    iot_jw_value(&b, NULL, v);
    char *text = iot_buf_take(&b);
    iot_json *w = parse(text, err);
    CHECK(w && iot_json_get(iot_json_get(w, "b"), "c")->integer == 9007199254740993LL);
    CHECK_STR(iot_json_get(w, "a")->items[4]->string, a->items[4]->string);
    free(text);
    iot_json_free(w);
    iot_json_free(v);

    /* empty strings and empty buffers are terminated */
    v = parse("{\"unit\": \"\", \"x\": [\"\"]}", err);
    CHECK(v && iot_json_get(v, "unit")->string && iot_json_get(v, "unit")->string[0] == 0);
    iot_buf_init(&b);
    iot_jw_value(&b, NULL, v);
    text = iot_buf_take(&b);
    CHECK_STR(text, "{\"unit\":\"\",\"x\":[\"\"]}");
    free(text);
    iot_json_free(v);
    iot_buf_init(&b);
    text = iot_buf_take(&b);
    CHECK_STR(text, "");
    free(text);

    /* errors name the line and column */
    CHECK(parse("{\n  \"a\": 1,\n  \"b\" 2\n}", err) == NULL);
    CHECK_CONTAINS(err, "line 3");
    CHECK_CONTAINS(err, "expected ':'");
    CHECK(parse("[1, 2", err) == NULL);
    CHECK(parse("{\"a\": 01}", err) == NULL);
    CHECK(parse("{} x", err) == NULL);
    CHECK_CONTAINS(err, "after the end");
    CHECK(parse("\"\\u0000\"", err) == NULL);
    CHECK(parse("", err) == NULL);
    /* deep nesting is refused, not a stack overflow */
    char deep[400];
    memset(deep, '[', 200);
    memset(deep + 200, ']', 200);
    CHECK(iot_json_parse(deep, 400, err, sizeof err) == NULL);
    CHECK_CONTAINS(err, "too deep");

    /* a repeated key is an error that names it (the first value would be lost silently) */
    CHECK(parse("{\"hdf5\": {\"alignmnet\": 1},\n \"hdf5\": {\"alignment\": 2}}", err) == NULL);
    CHECK_CONTAINS(err, "key 'hdf5' appears twice");
    CHECK_CONTAINS(err, "line 2");
    CHECK(parse("{\"a\": {\"x\": 1, \"x\": 1}}", err) == NULL);
    v = parse("{\"a\": {\"x\": 1}, \"b\": {\"x\": 1}}", err); /* the same key in two objects is fine */
    CHECK(v != NULL);
    iot_json_free(v);

    /* strings are UTF-8: a stray byte, an overlong form, a surrogate encoded raw or escaped alone */
    static const char *bad_utf8[] = {"\"\xff\"", "\"ab\xc3\"", "\"\xc0\xaf\"", "\"\xed\xa0\x80\"",
                                     "\"\xf4\x90\x80\x80\"", "\"\\ud800\"", "\"\\ud800\\u0041\"", "\"\\udc00\""};
    for (size_t i = 0; i < sizeof bad_utf8 / sizeof *bad_utf8; i++) {
        CHECK(parse(bad_utf8[i], err) == NULL);
        CHECK(strstr(err, "UTF-8") || strstr(err, "surrogate"));
    }
    v = parse("\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", err);
    CHECK(v && !strcmp(v->string, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
    iot_json_free(v);
    CHECK(iot_utf8_valid("plain") && iot_utf8_valid("\xc3\xa9") && !iot_utf8_valid("\xc3") &&
          !iot_utf8_valid("a\x80" "b"));

    /* the writer always writes valid UTF-8: a file name of any bytes becomes U+FFFD where it is not text */
    iot_buf_init(&b);
    iot_jw_string(&b, NULL, "f\xff\xc3\xa9\xc3.h5");
    text = iot_buf_take(&b);
    CHECK_STR(text, "\"f\xef\xbf\xbd\xc3\xa9\xef\xbf\xbd.h5\"");
    CHECK(iot_utf8_valid(text));
    v = parse(text, err);
    CHECK(v != NULL);
    iot_json_free(v);
    free(text);

    /* numbers: as printf's %.9g writes them, without printf */
    static const double exact[] = {0.5, 1, -2.25, 123.456, 0.0001, 12345678.9, 0.000123456789, 1e-5, 3e9, 999999999.5,
                                   65536, 0.75, 1.0 / 3, 2.0 / 3, 0.1, 419.810001, -0.03125, 2.5e-7, 1.23456789e12,
                                   -4.2e-100, 9.99999999e-5, 6.02214076e23};
    for (size_t i = 0; i < sizeof exact / sizeof *exact; i++) {
        char want[64];
        snprintf(want, sizeof want, "%.9g", exact[i]);
        iot_buf_init(&b);
        iot_jw_double(&b, NULL, exact[i]);
        text = iot_buf_take(&b);
        CHECK_STR(text, want);
        free(text);
    }
    srand(7);
    for (int i = 0; i < 20000; i++) { /* any value reads back within the 9 digits */
        double x = (rand() / (double)RAND_MAX) * pow(10, rand() % 40 - 20);
        iot_buf_init(&b);
        iot_jw_double(&b, NULL, x);
        text = iot_buf_take(&b);
        double back = strtod(text, NULL);
        CHECK(fabs(back - x) <= 1.1e-8 * fabs(x)); /* one unit in the ninth digit */
        free(text);
    }

    /* writer escapes and commas */
    iot_buf_init(&b);
    iot_jw_begin_object(&b, NULL);
    iot_jw_string(&b, "s", "q\"\\\t\x01");
    iot_jw_begin_array(&b, "l");
    iot_jw_int(&b, NULL, 1);
    iot_jw_double(&b, NULL, 0.5);
    iot_jw_double(&b, NULL, 1.0 / 0.0);
    iot_jw_end_array(&b);
    iot_jw_end_object(&b);
    text = iot_buf_take(&b);
    CHECK_STR(text, "{\"s\":\"q\\\"\\\\\\t\\u0001\",\"l\":[1,0.5,null]}");
    free(text);
    CHECK_DONE();
}
