/*
 * A C library for the runtime's tests. Each entry point returns a differently broken (or
 * well-formed) plugin table, so one library covers every handshake rule; the fixture
 * manifests written by the tests pick the entry. The fx_echo_* exports return their
 * argument, one per ABI value type, for the libffi tests.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "berth_fixtures.h"

static int64_t bumps; /* image-wide: fresh in every generation */
static const berth_host_v1 *fixture_host;
static volatile int32_t offthread_status = -1;  /* what navigate answered on a worker thread */
static volatile int32_t task_releases;          /* release callbacks received */
static volatile int32_t task_runs_finished;     /* task bodies that returned */
static volatile int32_t deactivations;          /* deactivate calls received */

typedef struct fixture_instance {
    berth_screen_handle *screen;
    char route[32];
    int render_fails; /* set by the action "break-render" (render-tree table) */
} fixture_instance;

/* A task that sleeps until cancelled. */
static void sleeper_run(void *context, berth_task_handle *task) {
    (void)context;
    while (fixture_host->task_sleep(task, 1000) == BERTH_OK) {}
    task_runs_finished++;
}

/* A task that breaks the thread rule: navigate from its worker thread. */
static void offthread_run(void *context, berth_task_handle *task) {
    (void)task;
    fixture_instance *instance = context;
    berth_error error = {sizeof(berth_error), 0, {0}};
    uint64_t id = 0;
    berth_bytes none = {NULL, 0};
    offthread_status = fixture_host->navigate(instance->screen, BERTH_NAVIGATE_PUSH, "probe", none, &id, &error);
    task_runs_finished++;
}

static void counting_release(void *context) {
    (void)context;
    task_releases++;
}

static berth_status fx_activate(berth_instance *opaque, berth_error *error) {
    fixture_instance *instance = opaque;
    if (strcmp(instance->route, "task-then-fail") == 0) {
        berth_task_v1 task = {sizeof(berth_task_v1), instance, sleeper_run, NULL, counting_release};
        berth_status status = fixture_host->task_start(instance->screen, "sleeper", &task, error);
        if (status != BERTH_OK) return status;
        return berth_error_set(error, BERTH_ERR_FAILED, "fixture: activate fails after starting a task");
    }
    if (strcmp(instance->route, "off-thread") == 0) {
        berth_task_v1 task = {sizeof(berth_task_v1), instance, offthread_run, NULL, counting_release};
        return fixture_host->task_start(instance->screen, "off-thread", &task, error);
    }
    return BERTH_OK;
}

/* Counts its calls: a failed activate must still be followed by one (whatever activate
   started before failing is the plugin's to clean up). */
static berth_status fx_deactivate(berth_instance *opaque, berth_error *error) {
    (void)opaque; (void)error;
    deactivations++;
    return BERTH_OK;
}

int32_t fx_deactivations(void) { return deactivations; }
int32_t fx_offthread_status(void) { return offthread_status; }
int32_t fx_task_releases(void) { return task_releases; }
int32_t fx_task_runs_finished(void) { return task_runs_finished; }

static berth_status fx_create(berth_screen_handle *screen, const char *route, berth_bytes argument,
                              berth_instance **out_instance, berth_error *error) {
    (void)argument;
    if (strcmp(route, "fails") == 0) {
        return berth_error_set(error, BERTH_ERR_FAILED, "fixture route 'fails' always fails to create");
    }
    fixture_instance *instance = calloc(1, sizeof *instance);
    if (instance == NULL) return berth_error_set(error, BERTH_ERR_FAILED, "out of memory");
    instance->screen = screen;
    strncpy(instance->route, route, sizeof instance->route - 1);
    *out_instance = instance;
    return BERTH_OK;
}

static void fx_destroy(berth_instance *instance) { free(instance); }

/* Renders a tiny tree; the route "bad-render" writes something that is not JSON. */
static berth_status fx_render(berth_instance *opaque, const berth_sink *out, berth_error *error) {
    fixture_instance *instance = opaque;
    const char *tree = strcmp(instance->route, "bad-render") == 0 ? "{not json" : "{\"type\":\"Text\",\"id\":\"Probe/Text\",\"text\":\"probe\"}";
    (void)error;
    return out->write(out->context, (const uint8_t *)tree, strlen(tree));
}

#define FIXTURE_TABLE(name, size, version, id) \
    static const berth_plugin_v1 name = { \
        .struct_size = (size), .abi_version = (version), .plugin_id = (id), \
        .create = fx_create, .destroy = fx_destroy, .activate = fx_activate, .deactivate = fx_deactivate, \
        .render = fx_render, \
    }

FIXTURE_TABLE(ok_table, sizeof(berth_plugin_v1), BERTH_ABI_VERSION, "org.berth.fixtures");
FIXTURE_TABLE(too_new_table, sizeof(berth_plugin_v1), BERTH_MAKE_ABI_VERSION(2, 0), "org.berth.fixtures");
FIXTURE_TABLE(too_old_table, sizeof(berth_plugin_v1), BERTH_MAKE_ABI_VERSION(0, 9), "org.berth.fixtures");
FIXTURE_TABLE(short_table, offsetof(berth_plugin_v1, create), BERTH_ABI_VERSION, "org.berth.fixtures");
FIXTURE_TABLE(wrong_id_table, sizeof(berth_plugin_v1), BERTH_ABI_VERSION, "org.berth.somebody-else");
FIXTURE_TABLE(newer_minor_table, sizeof(berth_plugin_v1), BERTH_MAKE_ABI_VERSION(1, 7), "org.berth.fixtures");

/*
 * A table that renders through render_tree (an empty tree: "no tree") and counts its
 * passes, for the tests of the action and render in one round trip. Actions: "bump" does
 * nothing, "fail" fails, "break-render" makes every later render fail, "write" writes a
 * state slot (a call back to the host), "wait-for" (payload: a file's path) returns once
 * that file exists (at most 60 s), asking the host for nothing meanwhile.
 */
static int32_t tree_renders;

static berth_status fx_render_tree(berth_instance *opaque, const berth_render_input *input, const berth_sink *out, berth_error *error) {
    fixture_instance *instance = opaque;
    (void)input; (void)out;
    tree_renders++;
    if (instance->render_fails) return berth_error_set(error, BERTH_ERR_FAILED, "fixture: render refused after 'break-render'");
    return BERTH_OK;
}

static void fx_wait_for(berth_bytes payload) {
    char path[4096];
    size_t length = payload.length < sizeof(path) - 1 ? (size_t)payload.length : sizeof(path) - 1;
    memcpy(path, payload.data, length);
    path[length] = 0;
    struct timespec now, deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += 60;
    do {
        if (access(path, F_OK) == 0) return;
        usleep(2 * 1000);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec < deadline.tv_sec);
}

static berth_status fx_action(berth_instance *opaque, const char *name, berth_bytes payload, berth_error *error) {
    fixture_instance *instance = opaque;
    if (strcmp(name, "bump") == 0) return BERTH_OK;
    if (strcmp(name, "wait-for") == 0) {
        fx_wait_for(payload);
        return BERTH_OK;
    }
    if (strcmp(name, "fail") == 0) return berth_error_set(error, BERTH_ERR_FAILED, "fixture: action 'fail' fails");
    if (strcmp(name, "break-render") == 0) {
        instance->render_fails = 1;
        return BERTH_OK;
    }
    if (strcmp(name, "write") == 0) {
        const uint8_t value = 7;
        return fixture_host->state_write(instance->screen, "Fixture", 0, 1, (berth_bytes){&value, 1}, error);
    }
    return berth_error_set(error, BERTH_ERR_NOT_FOUND, "fixture: no such action");
}

int32_t fx_tree_renders(void) { return tree_renders; }

static const berth_plugin_v1 render_tree_table = {
    .struct_size = sizeof(berth_plugin_v1), .abi_version = BERTH_ABI_VERSION, .plugin_id = "org.berth.fixtures",
    .create = fx_create, .destroy = fx_destroy, .activate = fx_activate, .action = fx_action, .render_tree = fx_render_tree,
};

/* A table from a future minor revision: v1.0's fields, then fields this host never reads. */
typedef struct {
    berth_plugin_v1 base;
    void (*future_function)(void);
    uint64_t future_value;
} future_plugin_table;

static const future_plugin_table longer_table = {
    .base = {
        .struct_size = sizeof(future_plugin_table), .abi_version = BERTH_ABI_VERSION,
        .plugin_id = "org.berth.fixtures", .create = fx_create, .destroy = fx_destroy,
    },
    .future_function = NULL,
    .future_value = 0xFEEDu,
};

static const berth_plugin_v1 no_create_table = {
    .struct_size = sizeof(berth_plugin_v1), .abi_version = BERTH_ABI_VERSION, .plugin_id = "org.berth.fixtures",
};

const berth_plugin_v1 *fixture_entry_ok(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    (void)plugin;
    fixture_host = host;
    /* A host table must follow the versioning rule too: refuse one without a log function. */
    if (host == NULL || !BERTH_HAS_FIELD(berth_host_v1, host, log)) return NULL;
    return &ok_table;
}
const berth_plugin_v1 *fixture_entry_render_tree(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    (void)plugin;
    fixture_host = host;
    return &render_tree_table;
}
const berth_plugin_v1 *fixture_entry_too_new(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &too_new_table; }
const berth_plugin_v1 *fixture_entry_too_old(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &too_old_table; }
const berth_plugin_v1 *fixture_entry_short(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &short_table; }
const berth_plugin_v1 *fixture_entry_wrong_id(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &wrong_id_table; }
const berth_plugin_v1 *fixture_entry_newer_minor(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &newer_minor_table; }
const berth_plugin_v1 *fixture_entry_longer(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &longer_table.base; }
const berth_plugin_v1 *fixture_entry_null(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return NULL; }
const berth_plugin_v1 *fixture_entry_no_create(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &no_create_table; }

/* ---- one echo per ABI value type (libffi tests) ----------------------------------- */

uint8_t fx_echo_bool(uint8_t value) { return value != 0; }
int8_t fx_echo_int8(int8_t value) { return value; }
int16_t fx_echo_int16(int16_t value) { return value; }
int32_t fx_echo_int32(int32_t value) { return value; }
int64_t fx_echo_int64(int64_t value) { return value; }
uint8_t fx_echo_uint8(uint8_t value) { return value; }
uint16_t fx_echo_uint16(uint16_t value) { return value; }
uint32_t fx_echo_uint32(uint32_t value) { return value; }
uint64_t fx_echo_uint64(uint64_t value) { return value; }
float fx_echo_float(float value) { return value; }
double fx_echo_double(double value) { return value; }

static char echoed_string[512];
const char *fx_echo_string(const char *value) {
    strncpy(echoed_string, value, sizeof echoed_string - 1);
    return echoed_string;
}

static uint8_t echoed_bytes[512];
berth_bytes fx_echo_bytes(const uint8_t *data, uint64_t length) {
    uint64_t count = length < sizeof echoed_bytes ? length : sizeof echoed_bytes;
    if (count > 0) memcpy(echoed_bytes, data, count);
    berth_bytes result = {echoed_bytes, count};
    return result;
}

/* Mixed arguments, to check argument order and widening: all summed as a double. */
double fx_sum_mixed(int8_t a, uint16_t b, int32_t c, int64_t d, float e, double f) {
    return (double)a + (double)b + (double)c + (double)d + (double)e + f;
}

/* A bytes argument in the middle of other arguments. */
uint64_t fx_bytes_length_between(int32_t before, const uint8_t *data, uint64_t length, int32_t after) {
    (void)data;
    return (uint64_t)(before + after) + length;
}

void fx_bump_void(void) { bumps++; }
int64_t fx_bump(void) { return ++bumps; }
