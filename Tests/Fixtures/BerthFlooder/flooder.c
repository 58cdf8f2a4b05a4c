/*
 * A hostile plugin that attacks the host with what it may send (Docs/security.md, "The host
 * bounded"). Its actions:
 *   "state-flood N"   N state_write calls of 1 MiB each, at new identities (no capability
 *                     needed); the action fails with the first refusal's message;
 *   "log-flood N"     N log lines of 1,000,000 bytes each;
 *   "log-burst N"     N short log lines at once;
 *   "forge-session M" rewrites its own plugin handle to say member M (a sibling in its
 *                     worker group) and calls session_begin with it; the action fails with
 *                     the host's answer, or succeeds when the host acted for the sibling.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth_flooder.h"

static const berth_host_v1 *host_table;
static berth_plugin_handle *own_handle;
static int32_t forged_member;
/* How many slots the last state flood wrote: every render reads them all, as a screen of
 * that many views would, so they stay alive in the host. */
static long flooded_slots;

typedef struct flooder_instance {
    berth_screen_handle *screen;
} flooder_instance;

static berth_status flooder_create(berth_screen_handle *screen, const char *route, berth_bytes argument,
                                   berth_instance **out_instance, berth_error *error) {
    (void)route; (void)argument; (void)error;
    flooder_instance *instance = calloc(1, sizeof *instance);
    instance->screen = screen;
    *out_instance = instance;
    return BERTH_OK;
}

static void flooder_destroy(berth_instance *instance) { free(instance); }
static berth_status flooder_activate(berth_instance *instance, berth_error *error) { (void)instance; (void)error; return BERTH_OK; }
static berth_status flooder_deactivate(berth_instance *instance, berth_error *error) { (void)instance; (void)error; return BERTH_OK; }
static void flooder_event(berth_instance *instance, int32_t event, int32_t flag) { (void)instance; (void)event; (void)flag; }

static long payload_number(berth_bytes payload) {
    char text[32] = {0};
    memcpy(text, payload.data, payload.length < sizeof text - 1 ? payload.length : sizeof text - 1);
    return strtol(text, NULL, 10);
}

static berth_status state_flood(flooder_instance *instance, long count, berth_error *error) {
    size_t size = 1 << 20;
    uint8_t *value = malloc(size);
    memset(value, 'v', size);
    berth_status first = BERTH_OK;
    flooded_slots = count;
    for (long index = 0; index < count; index++) {
        char identity[64];
        snprintf(identity, sizeof identity, "Flood/VStack.%ld", index);
        /* A distinct byte per write: nothing can share the buffers. */
        value[0] = (uint8_t)index;
        berth_error refused = {.struct_size = sizeof refused};
        berth_status status = host_table->state_write(instance->screen, identity, 0, 0x5157, (berth_bytes){value, size}, &refused);
        if (status != BERTH_OK && first == BERTH_OK) {
            first = status;
            berth_error_set(error, status, refused.message);
        }
    }
    free(value);
    return first;
}

static void log_flood(long count, size_t length) {
    char *line = malloc(length + 1);
    memset(line, 'L', length);
    line[length] = 0;
    for (long index = 0; index < count; index++) {
        int prefix = snprintf(line, 32, "line %ld ", index);
        line[prefix] = 'L';
        host_table->log(own_handle, BERTH_LOG_INFO, line);
    }
    free(line);
}

/* In a worker, the handle is the worker's record of this member; its first stored field
 * (after the object header) is the member number the host is told. */
static berth_status forge_session(long member, berth_error *error) {
    uint64_t *field = (uint64_t *)((char *)own_handle + 16);
    uint64_t own = *field;
    *field = (uint64_t)member;
    forged_member = (int32_t)member;
    berth_error refused = {.struct_size = sizeof refused};
    berth_status status = host_table->session_begin(own_handle, "stolen", &refused);
    *field = own;
    if (status != BERTH_OK) return berth_error_set(error, status, refused.message);
    return BERTH_OK;
}

static berth_status flooder_action(berth_instance *opaque, const char *name, berth_bytes payload, berth_error *error) {
    flooder_instance *instance = opaque;
    long number = payload_number(payload);
    if (strcmp(name, "state-flood") == 0) return state_flood(instance, number, error);
    if (strcmp(name, "log-flood") == 0) {
        log_flood(number, 1000000);
        return BERTH_OK;
    }
    if (strcmp(name, "log-burst") == 0) {
        log_flood(number, 40);
        return BERTH_OK;
    }
    if (strcmp(name, "forge-session") == 0) return forge_session(number, error);
    return berth_error_set(error, BERTH_ERR_NOT_FOUND, "the flooder has no such action");
}

static berth_status discard(void *context, const uint8_t *data, uint64_t length) {
    (void)context; (void)data; (void)length;
    return BERTH_OK;
}

static berth_status flooder_render(berth_instance *opaque, const berth_sink *out, berth_error *error) {
    flooder_instance *instance = opaque;
    (void)error;
    berth_sink nowhere = {.struct_size = sizeof nowhere, .context = NULL, .write = discard};
    for (long index = 0; index < flooded_slots; index++) {
        char identity[64];
        snprintf(identity, sizeof identity, "Flood/VStack.%ld", index);
        berth_error missing = {.struct_size = sizeof missing};
        (void)host_table->state_read(instance->screen, identity, 0, 0x5157, &nowhere, &missing);
    }
    const char *tree = "{\"type\":\"Text\",\"id\":\"flood\",\"text\":\"flood\"}";
    return out->write(out->context, (const uint8_t *)tree, strlen(tree));
}

static const berth_plugin_v1 flooder_table = {
    .struct_size = sizeof(berth_plugin_v1),
    .abi_version = BERTH_ABI_VERSION,
    .plugin_id = "org.berth.flooder",
    .create = flooder_create,
    .destroy = flooder_destroy,
    .activate = flooder_activate,
    .deactivate = flooder_deactivate,
    .screen_event = flooder_event,
    .action = flooder_action,
    .render = flooder_render,
};

const berth_plugin_v1 *berth_flooder_entry_v1(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    host_table = host;
    own_handle = plugin;
    return &flooder_table;
}

/* The member number the last forge claimed (0: none yet). */
int32_t flooder_forged_member(void) { return forged_member; }
