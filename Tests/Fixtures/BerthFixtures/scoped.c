/*
 * A plugin with a service of each scope kind, for the scope tests that run in both modes
 * (entry "fixture_entry_scoped"). Every instance has a number; creating and releasing one
 * is logged ("made screen #3", "released screen #3"). The screen's initializer resolves
 * its screen service. Actions, their payload a word:
 *   resolve KIND   resolves org.berth.scoped/KIND twice; logs "resolved KIND #N same=1"
 *   key KEY        resolves any key once; fails with the host's message
 *   begin ID       session_begin; end: session_end
 *   renew ID       resolves the session service, begins session ID, resolves it again;
 *                  logs "renewed #A -> #B" (or "renewed #A -> error: MESSAGE")
 *   put            writes 7 to the state slot ("Scoped/Text", 0); peek logs "peek: N" or
 *                  "peek: none" for what a state_read of it answers now
 * Its v1.0 render reads that slot (so it survives the render-pass GC) and draws a Text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth_fixtures.h"

static const berth_host_v1 *scoped_host;
static berth_plugin_handle *scoped_plugin;
static int scoped_made;

typedef struct scoped_service {
    int number;
    const char *kind;
} scoped_service;

typedef struct scoped_instance {
    berth_screen_handle *screen;
} scoped_instance;

static void scoped_say(const char *text) { scoped_host->log(scoped_plugin, BERTH_LOG_INFO, text); }

static berth_status scoped_service_create(void *context, void **out_instance, berth_error *error) {
    const char *kind = context;
    if (strcmp(kind, "failing") == 0) return berth_error_set(error, BERTH_ERR_FAILED, "the failing service never makes one");
    scoped_service *service = malloc(sizeof *service);
    if (service == NULL) return berth_error_set(error, BERTH_ERR_FAILED, "out of memory");
    service->number = ++scoped_made;
    service->kind = kind;
    char line[96];
    snprintf(line, sizeof line, "made %s #%d", kind, service->number);
    scoped_say(line);
    *out_instance = service;
    return BERTH_OK;
}

static void scoped_service_release(void *context, void *instance) {
    (void)context;
    scoped_service *service = instance;
    char line[96];
    snprintf(line, sizeof line, "released %s #%d", service->kind, service->number);
    scoped_say(line);
    free(service);
}

static berth_status scoped_resolve(berth_screen_handle *screen, const char *kind, scoped_service **out, berth_error *error) {
    char key[64];
    snprintf(key, sizeof key, "org.berth.scoped/%s", kind);
    void *instance = NULL;
    berth_status status = scoped_host->service_resolve(screen, key, &instance, error);
    *out = instance;
    return status;
}

static berth_status scoped_create(berth_screen_handle *screen, const char *route, berth_bytes argument,
                                  berth_instance **out_instance, berth_error *error) {
    (void)route; (void)argument;
    scoped_service *service = NULL;
    berth_status status = scoped_resolve(screen, "screen", &service, error);
    if (status != BERTH_OK) return status;
    char line[96];
    snprintf(line, sizeof line, "created with screen #%d", service->number);
    scoped_say(line);
    scoped_instance *instance = calloc(1, sizeof *instance);
    if (instance == NULL) return berth_error_set(error, BERTH_ERR_FAILED, "out of memory");
    instance->screen = screen;
    *out_instance = instance;
    return BERTH_OK;
}

static void scoped_destroy(berth_instance *instance) { free(instance); }

/* A sink that keeps the first byte written. */
typedef struct scoped_byte { uint8_t value; int written; } scoped_byte;

static berth_status scoped_byte_write(void *context, const uint8_t *data, uint64_t length) {
    scoped_byte *byte = context;
    if (length > 0) { byte->value = data[0]; byte->written = 1; }
    return BERTH_OK;
}

static int scoped_read_slot(berth_screen_handle *screen, uint8_t *value) {
    scoped_byte byte = {0, 0};
    berth_sink sink = {.struct_size = sizeof(berth_sink), .context = &byte, .write = scoped_byte_write};
    berth_error error = {.struct_size = sizeof(berth_error)};
    if (scoped_host->state_read(screen, "Scoped/Text", 0, 1, &sink, &error) != BERTH_OK || !byte.written) return 0;
    *value = byte.value;
    return 1;
}

static berth_status scoped_render(berth_instance *opaque, const berth_sink *out, berth_error *error) {
    scoped_instance *instance = opaque;
    uint8_t value = 0;
    (void)error;
    scoped_read_slot(instance->screen, &value);
    const char *tree = "{\"type\":\"Text\",\"id\":\"Scoped/Text\",\"text\":\"scoped\"}";
    return out->write(out->context, (const uint8_t *)tree, strlen(tree));
}

static berth_status scoped_action(berth_instance *opaque, const char *name, berth_bytes payload, berth_error *error) {
    scoped_instance *instance = opaque;
    char word[64] = {0};
    memcpy(word, payload.data, payload.length < sizeof word - 1 ? payload.length : sizeof word - 1);
    if (strcmp(name, "resolve") == 0) {
        scoped_service *first = NULL, *again = NULL;
        berth_status status = scoped_resolve(instance->screen, word, &first, error);
        if (status != BERTH_OK) return status;
        status = scoped_resolve(instance->screen, word, &again, error);
        if (status != BERTH_OK) return status;
        char line[96];
        snprintf(line, sizeof line, "resolved %s #%d same=%d", word, first->number, first == again);
        scoped_say(line);
        return BERTH_OK;
    }
    if (strcmp(name, "key") == 0) {
        void *found = NULL;
        return scoped_host->service_resolve(instance->screen, word, &found, error);
    }
    if (strcmp(name, "put") == 0) {
        const uint8_t value = 7;
        return scoped_host->state_write(instance->screen, "Scoped/Text", 0, 1, (berth_bytes){&value, 1}, error);
    }
    if (strcmp(name, "peek") == 0) {
        uint8_t value = 0;
        int found = scoped_read_slot(instance->screen, &value);
        char line[32];
        if (found) snprintf(line, sizeof line, "peek: %d", value); else snprintf(line, sizeof line, "peek: none");
        scoped_say(line);
        return BERTH_OK;
    }
    if (strcmp(name, "renew") == 0) {
        scoped_service *before = NULL, *after = NULL;
        berth_status status = scoped_resolve(instance->screen, "session", &before, error);
        if (status != BERTH_OK) return status;
        int number = before->number; /* released by the session_begin below */
        status = scoped_host->session_begin(scoped_plugin, word, error);
        if (status != BERTH_OK) return status;
        berth_error again = {.struct_size = sizeof(berth_error)};
        char line[160];
        if (scoped_resolve(instance->screen, "session", &after, &again) == BERTH_OK) {
            snprintf(line, sizeof line, "renewed #%d -> #%d", number, after->number);
        } else {
            snprintf(line, sizeof line, "renewed #%d -> error: %s", number, again.message);
        }
        scoped_say(line);
        return BERTH_OK;
    }
    if (strcmp(name, "begin") == 0) return scoped_host->session_begin(scoped_plugin, word, error);
    if (strcmp(name, "end") == 0) return scoped_host->session_end(scoped_plugin, error);
    return berth_error_set(error, BERTH_ERR_NOT_FOUND, "scoped: no such action");
}

static const berth_plugin_v1 scoped_table = {
    .struct_size = sizeof(berth_plugin_v1), .abi_version = BERTH_ABI_VERSION, .plugin_id = "org.berth.scoped",
    .create = scoped_create, .destroy = scoped_destroy, .action = scoped_action, .render = scoped_render,
};

static const char *scoped_kinds[] = {"singleton", "screen", "session", "request", "failing"};
static const int32_t scoped_scopes[] = {BERTH_SCOPE_SINGLETON, BERTH_SCOPE_SCREEN, BERTH_SCOPE_SESSION, BERTH_SCOPE_REQUEST, BERTH_SCOPE_SCREEN};

const berth_plugin_v1 *fixture_entry_scoped(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    scoped_host = host;
    scoped_plugin = plugin;
    for (size_t index = 0; index < sizeof scoped_kinds / sizeof scoped_kinds[0]; index++) {
        char key[64];
        snprintf(key, sizeof key, "org.berth.scoped/%s", scoped_kinds[index]);
        berth_service_v1 service = {
            .struct_size = sizeof(berth_service_v1), .scope = scoped_scopes[index], .key = key,
            .context = (void *)scoped_kinds[index], .create = scoped_service_create, .release = scoped_service_release,
        };
        berth_error error = {.struct_size = sizeof(berth_error)};
        if (host->service_register(plugin, &service, &error) != BERTH_OK) return NULL;
    }
    return &scoped_table;
}
