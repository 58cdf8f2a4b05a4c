/*
 * A plugin table whose every function logs "<NAME>" (NAME as in berth_plugin_v1) when the
 * host calls it. omit_entry_all returns the whole table; each omit_entry_NAME returns the
 * same table with that one optional function NULL, and omit_entry_render leaves render and
 * render_tree NULL (nothing left to draw with). OptionalFunctionTests compare what the
 * host does with and without each function, in process and in a worker.
 *
 * Route "omit". Actions: "child" pushes another "omit" screen and observes its delegate
 * actions; "delegate" sends the delegate action "picked"; "context" dispatches the route
 * context "omit.ctx", which every instance observes from create. render_tree writes no
 * tree; render writes a Text "render". save_state writes "kept"; restore_state logs the
 * bytes it got as "<restore_state kept>".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth_fixtures.h"

static const berth_host_v1 *omit_host;
static berth_plugin_handle *omit_plugin;

static void called(const char *function) {
    char line[96];
    snprintf(line, sizeof line, "<%s>", function);
    omit_host->log(omit_plugin, BERTH_LOG_INFO, line);
}

typedef struct omit_instance {
    berth_screen_handle *screen;
} omit_instance;

static berth_status omit_create(berth_screen_handle *screen, const char *route, berth_bytes argument,
                                berth_instance **out_instance, berth_error *error) {
    (void)route; (void)argument;
    called("create");
    omit_instance *instance = calloc(1, sizeof *instance);
    if (instance == NULL) return berth_error_set(error, BERTH_ERR_FAILED, "out of memory");
    instance->screen = screen;
    berth_status status = omit_host->context_observe(screen, "omit.ctx", error);
    if (status != BERTH_OK) {
        free(instance);
        return status;
    }
    *out_instance = instance;
    return BERTH_OK;
}

static void omit_destroy(berth_instance *instance) {
    called("destroy");
    free(instance);
}

static berth_status omit_activate(berth_instance *instance, berth_error *error) {
    (void)instance; (void)error;
    called("activate");
    return BERTH_OK;
}

static berth_status omit_deactivate(berth_instance *instance, berth_error *error) {
    (void)instance; (void)error;
    called("deactivate");
    return BERTH_OK;
}

static void omit_screen_event(berth_instance *instance, int32_t event, int32_t flag) {
    (void)instance; (void)event; (void)flag;
    called("screen_event");
}

static berth_status omit_action(berth_instance *opaque, const char *name, berth_bytes payload, berth_error *error) {
    omit_instance *instance = opaque;
    (void)payload;
    called("action");
    berth_bytes none = {NULL, 0};
    if (strcmp(name, "child") == 0) {
        uint64_t child = 0;
        berth_status status = omit_host->navigate(instance->screen, BERTH_NAVIGATE_PUSH, "omit", none, &child, error);
        if (status != BERTH_OK) return status;
        return omit_host->observe_delegate(instance->screen, child, error);
    }
    if (strcmp(name, "delegate") == 0) return omit_host->send_delegate(instance->screen, "picked", none, error);
    if (strcmp(name, "context") == 0) return omit_host->context_send(instance->screen, "omit.ctx", none, BERTH_CONTEXT_DISPATCH, error);
    return BERTH_OK;
}

static berth_status omit_render(berth_instance *instance, const berth_sink *out, berth_error *error) {
    (void)instance; (void)error;
    called("render");
    const char *tree = "{\"type\":\"Text\",\"id\":\"Omit/Text\",\"text\":\"render\"}";
    return out->write(out->context, (const uint8_t *)tree, strlen(tree));
}

static berth_status omit_render_tree(berth_instance *instance, const berth_render_input *input, const berth_sink *out, berth_error *error) {
    (void)instance; (void)input; (void)out; (void)error;
    called("render_tree");
    return BERTH_OK;
}

static berth_status omit_save_state(berth_instance *instance, const berth_sink *out, berth_error *error) {
    (void)instance; (void)error;
    called("save_state");
    return out->write(out->context, (const uint8_t *)"kept", 4);
}

static berth_status omit_restore_state(berth_instance *instance, berth_bytes state, berth_error *error) {
    (void)instance; (void)error;
    char line[64];
    snprintf(line, sizeof line, "restore_state %.*s", (int)(state.length < 32 ? state.length : 32), (const char *)state.data);
    called(line);
    return BERTH_OK;
}

static berth_status omit_context_received(berth_instance *instance, const char *type, berth_bytes payload, berth_error *error) {
    (void)instance; (void)type; (void)payload; (void)error;
    called("context_received");
    return BERTH_OK;
}

static berth_status omit_delegate_received(berth_instance *instance, uint64_t child, const char *action, berth_bytes payload,
                                           berth_error *error) {
    (void)instance; (void)child; (void)action; (void)payload; (void)error;
    called("delegate_received");
    return BERTH_OK;
}

/* Unloading, it still asks the host for something (a session) and logs the answer as
 * "<unload-asked STATUS MESSAGE>": a worker ending in the background is refused. */
static void omit_unload(void) {
    called("unload");
    berth_error error = {0};
    berth_status status = omit_host->session_begin(omit_plugin, "unloading", &error);
    char line[BERTH_ERROR_MESSAGE_CAPACITY + 48];
    snprintf(line, sizeof line, "<unload-asked %d %s>", (int)status, status == BERTH_OK ? "" : error.message);
    omit_host->log(omit_plugin, BERTH_LOG_INFO, line);
    if (status == BERTH_OK) omit_host->session_end(omit_plugin, &error);
}

static const berth_plugin_v1 omit_whole_table = {
    .struct_size = sizeof(berth_plugin_v1), .abi_version = BERTH_ABI_VERSION, .plugin_id = "org.berth.omit",
    .create = omit_create, .destroy = omit_destroy, .activate = omit_activate, .deactivate = omit_deactivate,
    .screen_event = omit_screen_event, .action = omit_action, .render = omit_render, .save_state = omit_save_state,
    .restore_state = omit_restore_state, .context_received = omit_context_received,
    .delegate_received = omit_delegate_received, .unload = omit_unload, .render_tree = omit_render_tree,
};

static berth_plugin_v1 omit_table;

/* The whole table, with `field` (a member of it) set to NULL by the caller. */
static const berth_plugin_v1 *omit_begin(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    omit_host = host;
    omit_plugin = plugin;
    omit_table = omit_whole_table;
    return &omit_table;
}

#define OMIT_ENTRY(name) \
    const berth_plugin_v1 *omit_entry_##name(const berth_host_v1 *host, berth_plugin_handle *plugin) { \
        omit_begin(host, plugin); \
        omit_table.name = NULL; \
        return &omit_table; \
    }

const berth_plugin_v1 *omit_entry_all(const berth_host_v1 *host, berth_plugin_handle *plugin) { return omit_begin(host, plugin); }
OMIT_ENTRY(activate)
OMIT_ENTRY(deactivate)
OMIT_ENTRY(screen_event)
OMIT_ENTRY(action)
OMIT_ENTRY(render_tree)
OMIT_ENTRY(save_state)
OMIT_ENTRY(restore_state)
OMIT_ENTRY(context_received)
OMIT_ENTRY(delegate_received)
OMIT_ENTRY(unload)

const berth_plugin_v1 *omit_entry_render(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    omit_begin(host, plugin);
    omit_table.render = NULL;
    omit_table.render_tree = NULL;
    return &omit_table;
}
