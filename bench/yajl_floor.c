/*
 * The ceiling for any filter built on yajl's parser: yajl_parse over standard input with
 * nothing done per token, UTF-8 checking off (as in cbl-attachments, which checks it itself).
 *
 *   yajl_floor none    no callbacks at all: yajl's lexer and parser alone
 *   yajl_floor empty   every callback set, each asking yajl_get_bytes_consumed and returning:
 *                      what calling back into a program costs before the program does anything
 *
 * bench/run.sh builds and times it beside json_verify, json_reformat and cbl-attachments.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

static yajl_handle handle;
static size_t consumed;

static int on_token(void *context) {
    (void)context;
    consumed += yajl_get_bytes_consumed(handle);
    return 1;
}
static int on_boolean(void *context, int value) { (void)value; return on_token(context); }
static int on_number(void *context, const char *text, size_t length) {
    (void)text; (void)length; return on_token(context);
}
static int on_string(void *context, const unsigned char *text, size_t length) {
    (void)text; (void)length; return on_token(context);
}

int main(int argc, char **argv) {
    static const yajl_callbacks empty = {
        on_token, on_boolean, NULL, NULL, on_number, on_string,
        on_token, on_string, on_token, on_token, on_token,
    };
    if (argc != 2 || (strcmp(argv[1], "none") != 0 && strcmp(argv[1], "empty") != 0)) {
        fprintf(stderr, "usage: yajl_floor none|empty < input\n");
        return 2;
    }
    handle = yajl_alloc(strcmp(argv[1], "empty") == 0 ? &empty : NULL, NULL, NULL);
    yajl_config(handle, yajl_allow_multiple_values, 1);
    yajl_config(handle, yajl_dont_validate_strings, 1);
    static unsigned char buffer[1 << 18];
    ssize_t count;
    while ((count = read(0, buffer, sizeof buffer)) > 0) {
        if (yajl_parse(handle, buffer, (size_t)count) != yajl_status_ok) {
            fprintf(stderr, "yajl_floor: not JSON\n");
            return 1;
        }
    }
    if (count < 0 || yajl_complete_parse(handle) != yajl_status_ok) {
        fprintf(stderr, "yajl_floor: %s\n", count < 0 ? "read error" : "not JSON");
        return 1;
    }
    yajl_free(handle);
    return consumed == (size_t)-1;
}
