/*
 * render_tree_harness.c: the plugin side of a render pass alone, as a bare C host would
 * drive it: dlopen the Stress plugin, open its grid screen with N rows, and time N passes of
 * render_tree (CPU time of this process, so a loaded machine does not inflate it). It is the
 * floor under the benchmark "render pass, 10,000 stateful views (GC included)" and the
 * program the profile in Docs/benchmarks.md was recorded on:
 *
 *   swift build -c release --product BerthStress
 *   cc -O2 -I Sources/CBerth/include Benchmarks/Harness/render_tree_harness.c -o /tmp/render-harness -ldl
 *   /tmp/render-harness .build/release/libBerthStress.so 10000 200
 *   perf record -g /tmp/render-harness .build/release/libBerthStress.so 10000 30
 */
#include "berth.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct { uint8_t *data; size_t length, capacity; } buffer;
static berth_status append(void *context, const uint8_t *data, uint64_t length) {
    buffer *b = context;
    if (b->length + length > b->capacity) { b->capacity = (b->length + length) * 2; b->data = realloc(b->data, b->capacity); }
    memcpy(b->data + b->length, data, length); b->length += length; return BERTH_OK;
}
static void host_log(berth_plugin_handle *p, int32_t level, const char *m) { (void)p; fprintf(stderr, "log %d: %s\n", level, m); }
static berth_status not_found_read(berth_screen_handle *s, const char *i, uint32_t x, uint64_t f, const berth_sink *o, berth_error *e) { (void)s;(void)i;(void)x;(void)f;(void)o;(void)e; return BERTH_ERR_NOT_FOUND; }
static double now(void) { struct timespec t; clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t); return t.tv_sec * 1e3 + t.tv_nsec / 1e6; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }

int main(int argc, char **argv) {
    void *image = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!image) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    berth_entry_v1 entry = (berth_entry_v1)dlsym(image, "berth_stress_entry_v1");
    static berth_host_v1 host; host.struct_size = sizeof host; host.abi_version = BERTH_ABI_VERSION; host.log = host_log; host.state_read = not_found_read;
    const berth_plugin_v1 *table = entry(&host, NULL);
    berth_instance *instance = NULL; berth_error error = {sizeof error, 0, {0}};
    const char *rows = argc > 2 ? argv[2] : "10000";
    if (table->create((berth_screen_handle *)0x1, "grid", berth_bytes_from_string(rows), &instance, &error) != BERTH_OK) { fprintf(stderr, "create: %s\n", error.message); return 1; }
    int passes = argc > 3 ? atoi(argv[3]) : 200;
    double *times = malloc(sizeof(double) * passes);
    buffer b = {0};
    berth_render_input input = {sizeof input, BERTH_VIEW_TREE_VERSION, NULL, 0};
    for (int i = -5; i < passes; i++) {
        b.length = 0;
        berth_sink sink = {sizeof sink, &b, append};
        double start = now();
        if (table->render_tree(instance, &input, &sink, &error) != BERTH_OK) { fprintf(stderr, "render: %s\n", error.message); return 1; }
        if (i >= 0) times[i] = now() - start;
    }
    qsort(times, passes, sizeof(double), cmp);
    printf("plugin render_tree, %s rows: p0 %.2f ms, p50 %.2f ms, p90 %.2f ms; tree %zu bytes\n", rows, times[0], times[passes / 2], times[passes * 9 / 10], b.length);
    return 0;
}
