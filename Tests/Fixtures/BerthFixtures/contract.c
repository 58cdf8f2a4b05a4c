/*
 * A contract in C (ABI 1.2), for the contract-call tests that run in both modes: a provider
 * and a consumer, two plugins, each in its own worker in process mode.
 *
 * Provider (entry "fixture_entry_clock", id org.berth.clock, route "clock"): registers the
 * session-scoped contract "org.berth.Clock". Its instances are numbered ("made clock #N",
 * "released clock #N" in its log). A call's request is JSON; the method decides:
 *   next    replies {"instance":N,"calls":C}: the instance's number and how often it was called
 *   fail    fails with BERTH_ERR_FAILED "the clock refuses"
 *   crash   aborts the provider's process
 *   hang    sleeps 60 s
 *
 * Consumer (entry "fixture_entry_alarm", id org.berth.alarm, route "alarm"): actions, the
 * payload a word:
 *   call METHOD   service_call("org.berth.Clock", {"method":"METHOD","arguments":[]});
 *                 logs "reply: JSON" or "call failed (STATUS): MESSAGE"
 *   calls N       N calls of "next", logging nothing; the first failure is the action's
 *   begin ID      session_begin; end: session_end
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "berth_fixtures.h"

typedef struct contract_text {
    char bytes[512];
    size_t length;
} contract_text;

static berth_status contract_text_write(void *context, const uint8_t *data, uint64_t length) {
    contract_text *text = context;
    size_t room = sizeof text->bytes - 1 - text->length;
    size_t count = length < room ? (size_t)length : room;
    memcpy(text->bytes + text->length, data, count);
    text->length += count;
    text->bytes[text->length] = 0;
    return BERTH_OK;
}

/* -- the provider --------------------------------------------------------------------- */

static const berth_host_v1 *clock_host;
static berth_plugin_handle *clock_plugin;
static int clock_made;

typedef struct clock_instance {
    int number;
    int calls;
} clock_instance;

static void clock_say(const char *text) { clock_host->log(clock_plugin, BERTH_LOG_INFO, text); }

static berth_status clock_create(void *context, void **out_instance, berth_error *error) {
    (void)context;
    clock_instance *instance = calloc(1, sizeof *instance);
    if (instance == NULL) return berth_error_set(error, BERTH_ERR_FAILED, "out of memory");
    instance->number = ++clock_made;
    char line[64];
    snprintf(line, sizeof line, "made clock #%d", instance->number);
    clock_say(line);
    *out_instance = instance;
    return BERTH_OK;
}

static void clock_release(void *context, void *opaque) {
    (void)context;
    clock_instance *instance = opaque;
    char line[64];
    snprintf(line, sizeof line, "released clock #%d", instance->number);
    clock_say(line);
    free(instance);
}

static int clock_method_is(berth_bytes request, const char *method) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"method\":\"%s\"", method);
    size_t length = strlen(pattern);
    for (uint64_t at = 0; at + length <= request.length; at++) {
        if (memcmp(request.data + at, pattern, length) == 0) return 1;
    }
    return 0;
}

static berth_status clock_call(void *context, void *opaque, berth_bytes request, const berth_sink *reply, berth_error *error) {
    (void)context;
    clock_instance *instance = opaque;
    if (clock_method_is(request, "next")) {
        instance->calls += 1;
        char json[64];
        int length = snprintf(json, sizeof json, "{\"instance\":%d,\"calls\":%d}", instance->number, instance->calls);
        return reply->write(reply->context, (const uint8_t *)json, (uint64_t)length);
    }
    if (clock_method_is(request, "fail")) return berth_error_set(error, BERTH_ERR_FAILED, "the clock refuses");
    if (clock_method_is(request, "crash")) abort();
    if (clock_method_is(request, "hang")) {
        sleep(60);
        return berth_error_set(error, BERTH_ERR_FAILED, "woke after 60 s");
    }
    return berth_error_set(error, BERTH_ERR_NOT_FOUND, "org.berth.Clock has no such method");
}

static berth_status clock_screen_create(berth_screen_handle *screen, const char *route, berth_bytes argument,
                                        berth_instance **out_instance, berth_error *error) {
    (void)screen; (void)route; (void)argument; (void)error;
    *out_instance = (berth_instance *)calloc(1, 1);
    return BERTH_OK;
}

static void clock_screen_destroy(berth_instance *instance) { free(instance); }

static const berth_plugin_v1 clock_table = {
    .struct_size = sizeof(berth_plugin_v1), .abi_version = BERTH_ABI_VERSION, .plugin_id = "org.berth.clock",
    .create = clock_screen_create, .destroy = clock_screen_destroy,
};

const berth_plugin_v1 *fixture_entry_clock(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    clock_host = host;
    clock_plugin = plugin;
    berth_service_v1 service = {
        .struct_size = sizeof(berth_service_v1), .scope = BERTH_SCOPE_SESSION, .key = "org.berth.Clock",
        .create = clock_create, .release = clock_release, .call = clock_call,
    };
    berth_error error = {.struct_size = sizeof(berth_error)};
    if (host->service_register(plugin, &service, &error) != BERTH_OK) return NULL;
    return &clock_table;
}

/* -- the consumer --------------------------------------------------------------------- */

static const berth_host_v1 *alarm_host;
static berth_plugin_handle *alarm_plugin;

typedef struct alarm_instance {
    berth_screen_handle *screen;
} alarm_instance;

static berth_status alarm_create(berth_screen_handle *screen, const char *route, berth_bytes argument,
                                 berth_instance **out_instance, berth_error *error) {
    (void)route; (void)argument;
    alarm_instance *instance = calloc(1, sizeof *instance);
    if (instance == NULL) return berth_error_set(error, BERTH_ERR_FAILED, "out of memory");
    instance->screen = screen;
    *out_instance = instance;
    return BERTH_OK;
}

static void alarm_destroy(berth_instance *instance) { free(instance); }

static berth_status alarm_action(berth_instance *opaque, const char *name, berth_bytes payload, berth_error *error) {
    alarm_instance *instance = opaque;
    char word[64] = {0};
    memcpy(word, payload.data, payload.length < sizeof word - 1 ? payload.length : sizeof word - 1);
    if (strcmp(name, "call") == 0) {
        if (!BERTH_HAS_FIELD(berth_host_v1, alarm_host, service_call)) return berth_error_set(error, BERTH_ERR_UNSUPPORTED, "host lacks service_call");
        char request[128];
        int length = snprintf(request, sizeof request, "{\"method\":\"%s\",\"arguments\":[]}", word);
        contract_text text = {{0}, 0};
        berth_sink sink = {.struct_size = sizeof(berth_sink), .context = &text, .write = contract_text_write};
        berth_error failure = {.struct_size = sizeof(berth_error)};
        berth_status status = alarm_host->service_call(instance->screen, "org.berth.Clock", (berth_bytes){(const uint8_t *)request, (uint64_t)length},
                                                       &sink, &failure);
        char line[700];
        if (status == BERTH_OK) snprintf(line, sizeof line, "reply: %s", text.bytes);
        else snprintf(line, sizeof line, "call failed (%d): %s", status, failure.message);
        alarm_host->log(alarm_plugin, BERTH_LOG_INFO, line);
        return BERTH_OK;
    }
    if (strcmp(name, "calls") == 0) {
        static const char request[] = "{\"method\":\"next\",\"arguments\":[]}";
        for (long count = strtol(word, NULL, 10); count > 0; count--) {
            contract_text text = {{0}, 0};
            berth_sink sink = {.struct_size = sizeof(berth_sink), .context = &text, .write = contract_text_write};
            berth_status status = alarm_host->service_call(instance->screen, "org.berth.Clock",
                                                           (berth_bytes){(const uint8_t *)request, sizeof request - 1}, &sink, error);
            if (status != BERTH_OK) return status;
        }
        return BERTH_OK;
    }
    if (strcmp(name, "begin") == 0) return alarm_host->session_begin(alarm_plugin, word, error);
    if (strcmp(name, "end") == 0) return alarm_host->session_end(alarm_plugin, error);
    return berth_error_set(error, BERTH_ERR_NOT_FOUND, "alarm: no such action");
}

static const berth_plugin_v1 alarm_table = {
    .struct_size = sizeof(berth_plugin_v1), .abi_version = BERTH_ABI_VERSION, .plugin_id = "org.berth.alarm",
    .create = alarm_create, .destroy = alarm_destroy, .action = alarm_action,
};

const berth_plugin_v1 *fixture_entry_alarm(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    alarm_host = host;
    alarm_plugin = plugin;
    return &alarm_table;
}
