/*
 * Greeter: a plugin in plain C, built only against berth.h. It provides one screen
 * ("hello") and C exports of several signatures for `berth call` (libffi).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "berth.h"
#include "greeter_service.h"

static const berth_host_v1 *host_table;
static berth_plugin_handle *plugin_handle;
static uint64_t call_count; /* image-wide: a fresh generation starts at 0 */

static void say(int32_t level, const char *message) {
    if (host_table != NULL && BERTH_HAS_FIELD(berth_host_v1, host_table, log) && host_table->log != NULL) {
        host_table->log(plugin_handle, level, message);
    }
}

/* ---- exports (called through libffi; manifest "exports") ---------------------------- */

/* Results that are strings or bytes stay owned here until the next call (berth.h). */
static char greeting[256];
static uint8_t reversed[256];

const char *greeter_greet(const char *name) {
    call_count++;
    snprintf(greeting, sizeof greeting, "Hello, %s!", name != NULL ? name : "stranger");
    return greeting;
}

int32_t greeter_add(int32_t left, int32_t right) {
    call_count++;
    return left + right;
}

double greeter_average(double left, double right) {
    call_count++;
    return (left + right) / 2.0;
}

float greeter_scale(float value, double factor) {
    call_count++;
    return (float)(value * factor);
}

uint8_t greeter_is_even(int64_t value) {
    call_count++;
    return value % 2 == 0;
}

berth_bytes greeter_reverse(const uint8_t *data, uint64_t length) {
    call_count++;
    uint64_t count = length < sizeof reversed ? length : sizeof reversed;
    for (uint64_t index = 0; index < count; index++) {
        reversed[index] = data[count - 1 - index];
    }
    berth_bytes result = {reversed, count};
    return result;
}

uint64_t greeter_calls(void) {
    return call_count;
}

/* ---- the "hello" screen ----------------------------------------------------------- */

typedef struct hello_screen {
    berth_screen_handle *screen;
    int32_t waves;
} hello_screen;

static berth_status hello_create(berth_screen_handle *screen, const char *route, berth_bytes argument,
                                 berth_instance **out_instance, berth_error *error) {
    (void)argument;
    if (strcmp(route, "hello") != 0) {
        return berth_error_set(error, BERTH_ERR_NOT_FOUND, "greeter has only the route 'hello'");
    }
    hello_screen *hello = calloc(1, sizeof *hello);
    if (hello == NULL) {
        return berth_error_set(error, BERTH_ERR_FAILED, "out of memory");
    }
    hello->screen = screen;
    *out_instance = hello;
    return BERTH_OK;
}

static void hello_destroy(berth_instance *instance) {
    free(instance);
}

static void hello_event(berth_instance *instance, int32_t event, int32_t flag) {
    (void)instance;
    if (event == BERTH_EVENT_DID_DISAPPEAR && flag) {
        say(BERTH_LOG_INFO, "hello screen removed permanently");
    }
}

static berth_status hello_activate(berth_instance *instance, berth_error *error) {
    hello_screen *hello = instance;
    say(BERTH_LOG_INFO, "hello screen active");
    /* A C observer of a route context: any flow above or below that sends a user
       selection reaches this screen too. */
    if (BERTH_HAS_FIELD(berth_host_v1, host_table, context_observe) && host_table->context_observe != NULL) {
        return host_table->context_observe(hello->screen, "com.example.users.UserSelection", error);
    }
    return BERTH_OK;
}

static berth_status hello_context(berth_instance *instance, const char *type, berth_bytes payload,
                                  berth_error *error) {
    (void)instance;
    (void)error;
    char line[256];
    const char *text = payload.data != NULL ? (const char *)payload.data : "";
    snprintf(line, sizeof line, "hello got %s: %.*s", type, (int)(payload.length < 200 ? payload.length : 200), text);
    say(BERTH_LOG_INFO, line);
    return BERTH_OK;
}

static berth_status hello_deactivate(berth_instance *instance, berth_error *error) {
    (void)instance;
    (void)error;
    return BERTH_OK;
}

static berth_status hello_action(berth_instance *instance, const char *name, berth_bytes payload,
                                 berth_error *error) {
    (void)payload;
    hello_screen *hello = instance;
    if (strcmp(name, "wave") != 0) {
        return berth_error_set(error, BERTH_ERR_NOT_FOUND, "hello has only the action 'wave'");
    }
    hello->waves++;
    char line[64];
    snprintf(line, sizeof line, "waved %d time(s)", hello->waves);
    say(BERTH_LOG_INFO, line);
    /* Tell whoever opened this screen, on its delegate channel (an optional channel: with
       no observer the host simply delivers to nobody). */
    if (BERTH_HAS_FIELD(berth_host_v1, host_table, send_delegate) && host_table->send_delegate != NULL) {
        return host_table->send_delegate(hello->screen, "waved", berth_bytes_from_string(line), error);
    }
    return BERTH_OK;
}

static const berth_plugin_v1 greeter_table = {
    .struct_size = sizeof(berth_plugin_v1),
    .abi_version = BERTH_ABI_VERSION,
    .plugin_id = "com.example.greeter",
    .create = hello_create,
    .destroy = hello_destroy,
    .activate = hello_activate,
    .deactivate = hello_deactivate,
    .action = hello_action,
    .screen_event = hello_event,
    .context_received = hello_context,
};

/* ---- the Greeting service (greeter_service.h), for any plugin to resolve ---------- */

typedef struct greeting_instance {
    greeter_greeting_instance base; /* first: what consumers see */
    uint64_t count;
    char buffer[256];
} greeting_instance;

static const char *greeting_greet(void *opaque, const char *name) {
    greeting_instance *instance = opaque;
    instance->count++;
    snprintf(instance->buffer, sizeof instance->buffer, "Greetings, %s (greeting #%llu)", name != NULL ? name : "stranger",
             (unsigned long long)instance->count);
    return instance->buffer;
}

static uint64_t greeting_count(void *opaque) {
    return ((greeting_instance *)opaque)->count;
}

static const greeter_greeting_v1 greeting_functions = {sizeof(greeter_greeting_v1), greeting_greet, greeting_count};

static berth_status greeting_create(void *context, void **out_instance, berth_error *error) {
    (void)context;
    greeting_instance *instance = calloc(1, sizeof *instance);
    if (instance == NULL) return berth_error_set(error, BERTH_ERR_FAILED, "out of memory");
    instance->base.functions = &greeting_functions;
    *out_instance = instance;
    say(BERTH_LOG_INFO, "greeting service created");
    return BERTH_OK;
}

static void greeting_release(void *context, void *instance) {
    (void)context;
    free(instance);
    say(BERTH_LOG_INFO, "greeting service released");
}

const berth_plugin_v1 *berth_greeter_entry_v1(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    host_table = host;
    plugin_handle = plugin;
    if (BERTH_HAS_FIELD(berth_host_v1, host, service_register) && host->service_register != NULL) {
        berth_service_v1 service = {sizeof(berth_service_v1), BERTH_SCOPE_SINGLETON, GREETER_GREETING_SERVICE_KEY, NULL,
                                    greeting_create, greeting_release};
        berth_error error = {sizeof(berth_error), 0, {0}};
        if (host->service_register(plugin, &service, &error) != BERTH_OK) {
            say(BERTH_LOG_ERROR, error.message);
        }
    }
    return &greeter_table;
}
