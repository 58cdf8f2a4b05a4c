/*
 * A plugin that fails on purpose, for the isolation tests. Each route is "HOW-WHEN":
 * HOW is segv, abort, trap (an illegal instruction, as a Swift trap is), exit, stack
 * (unbounded recursion) or hang; WHEN is create, activate, action, render, event, task,
 * delegate (a delegate action received), context (a route context received) or deactivate.
 * The route "ok" never fails; "loop-activate" pushes itself again from activate, without end.
 * Exports crash the same ways when called.
 *
 * HOW "slow" does not fail: it sleeps 1.5 s there, then goes on (a plugin busy with honest work).
 * HOW "refuse" fails its activate with an error (no crash), after the asks of
 * FOLDER/ask-activate below (the screen's argument is FOLDER); elsewhere it does nothing.
 * HOW "gate" does not fail either: it waits there, provably inside the call, until the test
 * lets it go. The screen's argument (given to create) is a folder: entering, it logs
 * "entered WHEN" through the host and creates FOLDER/entered-WHEN, then returns once
 * FOLDER/leave-WHEN exists (at most 600 s). "gate-render" lets every render through until
 * FOLDER/arm-render exists (the host renders a visible screen as often as it likes), then
 * waits in each.
 * A gate screen also asks the host for work in its activate, before its gate, when
 * FOLDER/ask-activate exists; its words say what: "post" starts a task that posts the action
 * "asked" to the screen itself ("post-twice": then "asked-later" too); "pop-to-root" asks to
 * pop the screen's stack to its root; "persist-deactivate" makes its deactivate persist
 * "n" = "closed".
 * Such a screen logs "ran asked" when that action runs and "event N" for each lifecycle
 * event (BERTH_EVENT_*): the tests of when that work runs during an open on the lane.
 * The entry "berth_crasher_entry_asker" is the same plugin as "org.berth.asker".
 * The entry "berth_crasher_entry_gate" waits the same way while the host loads the plugin,
 * at the gate "load" in the folder of its own image (the host's shadow copy: the plugin's
 * runtime folder, which a worker may read): the entered marker is written where it can be.
 * The action "open" (payload: "ROUTE ARGUMENT") asks to push ROUTE with ARGUMENT ("present":
 * to present it) and observes the new screen's delegate actions (see open_asked).
 * The action "delegate" (payload: an action's name) sends that delegate action to whoever
 * observes the screen. A screen receiving a delegate action logs "received delegate NAME"
 * (after its gate, for "gate-delegate"): the tests of deliveries on the observer's lane.
 * The action "observe" (payload: a context type) observes that route context on the screen;
 * "context" (payload: a type) sends it. A screen receiving a context logs "received context
 * TYPE" (after its gate, for "gate-context").
 * The action "wait-for" (payload: a file's path) returns once that file exists (at most
 * 600 s), logging "waited" through the host first: a busy plugin the tests release by hand.
 *
 * The action "persist" (payload: a count, in decimal) reads the persisted key "n" and
 * writes n+1, n+2, … count times, logging "committed V" after each write the host
 * accepted (durable when persist_write returns): the kill -9 durability tests.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "berth_crasher.h"

static const berth_host_v1 *host_table;
static berth_plugin_handle *plugin_handle;

/* Load-time code: a copy loaded from a path naming "abort-on-load" aborts in its ELF
 * constructor, before any entry runs (the canary tests stage it under such an id). */
__attribute__((constructor)) static void crasher_on_load(void) {
    Dl_info info;
    if (dladdr((void *)crasher_on_load, &info) != 0 && info.dli_fname != NULL && strstr(info.dli_fname, "abort-on-load") != NULL) {
        fprintf(stderr, "Fatal error: crasher aborts in its constructor\n");
        abort();
    }
}

typedef struct crasher_instance {
    berth_screen_handle *screen;
    char how[16];
    char when[16];
    /* HOW "gate": the folder of its marker, arm and release files. */
    char gate[3072];
    /* It found FOLDER/ask-activate: it logs its events and the action "asked". */
    int asks;
    /* Its words said "post-twice": the task posts "asked", then "asked-later". */
    int posts_twice;
    /* Its words said "persist-deactivate": its deactivate persists "n" = "closed". */
    int persists_on_deactivate;
} crasher_instance;

static volatile int sink;

static int recurse(int depth) {
    volatile char frame[64 * 1024];
    frame[0] = (char)depth;
    return recurse(depth + 1) + frame[0];
}

static void fail_now(const char *how) {
    if (strcmp(how, "slow") == 0) {
        usleep(1500 * 1000);
        return;
    }
    fprintf(stderr, "Fatal error: crasher fails by %s\n", how);
    fflush(stderr);
    if (strcmp(how, "segv") == 0) { volatile int *nowhere = NULL; sink = *nowhere; }
    if (strcmp(how, "abort") == 0) abort();
    if (strcmp(how, "trap") == 0) __builtin_trap();
    if (strcmp(how, "exit") == 0) exit(3);
    if (strcmp(how, "stack") == 0) sink = recurse(0);
    if (strcmp(how, "hang") == 0) for (;;) pause();
}

static int file_exists_within(const char *path, long seconds) {
    /* A deadline, not a count of sleeps: a signal cuts a sleep short. */
    struct timespec now, deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += seconds;
    do {
        if (access(path, F_OK) == 0) return 1;
        usleep(10 * 1000);
        clock_gettime(CLOCK_MONOTONIC, &now);
    } while (now.tv_sec < deadline.tv_sec);
    return 0;
}

/* HOW "gate": says it entered (a log line and a marker file in FOLDER), then waits to be let go. */
static void wait_at_gate_in(const char *folder, const char *when) {
    char line[64], path[4096];
    snprintf(line, sizeof line, "entered %s", when);
    host_table->log(plugin_handle, BERTH_LOG_INFO, line);
    snprintf(path, sizeof path, "%s/entered-%s", folder, when);
    FILE *marker = fopen(path, "w");
    if (marker != NULL) fclose(marker);
    snprintf(path, sizeof path, "%s/leave-%s", folder, when);
    file_exists_within(path, 600);
    snprintf(line, sizeof line, "left %s", when);
    host_table->log(plugin_handle, BERTH_LOG_INFO, line);
}

static void wait_at_gate(const crasher_instance *instance, const char *when) {
    wait_at_gate_in(instance->gate, when);
}

static void maybe_fail(const crasher_instance *instance, const char *when) {
    if (strcmp(instance->when, when) != 0 || strcmp(instance->how, "refuse") == 0) return;
    if (strcmp(instance->how, "gate") == 0) {
        wait_at_gate(instance, when);
        return;
    }
    fail_now(instance->how);
}

static void task_run(void *context, berth_task_handle *task) {
    (void)task;
    fail_now(((crasher_instance *)context)->how);
}

static void post_asked(void *context, berth_task_handle *task) {
    berth_bytes none = {NULL, 0};
    host_table->task_post(task, "asked", none);
    if (((crasher_instance *)context)->posts_twice) host_table->task_post(task, "asked-later", none);
}

/* A gate screen's asks, made in its activate before it waits (FOLDER/ask-activate). */
static berth_status ask_in_activate(crasher_instance *instance, berth_error *error) {
    char path[4096], asks[64] = {0};
    snprintf(path, sizeof path, "%s/ask-activate", instance->gate);
    FILE *file = strcmp(instance->how, "gate") == 0 || strcmp(instance->how, "refuse") == 0 ? fopen(path, "r") : NULL;
    if (file == NULL) return BERTH_OK;
    size_t length = fread(asks, 1, sizeof(asks) - 1, file);
    fclose(file);
    asks[length] = '\0';
    instance->asks = 1;
    instance->posts_twice = strstr(asks, "post-twice") != NULL;
    instance->persists_on_deactivate = strstr(asks, "persist-deactivate") != NULL;
    if (strstr(asks, "post") != NULL) {
        berth_task_v1 task = {sizeof(berth_task_v1), instance, post_asked, NULL, NULL};
        berth_status status = host_table->task_start(instance->screen, "ask", &task, error);
        if (status != BERTH_OK) return status;
    }
    if (strstr(asks, "pop-to-root") != NULL) {
        uint64_t id = 0;
        berth_bytes none = {NULL, 0};
        return host_table->navigate(instance->screen, BERTH_NAVIGATE_POP_TO_ROOT, NULL, none, &id, error);
    }
    return BERTH_OK;
}

static berth_status crasher_create(berth_screen_handle *screen, const char *route, berth_bytes argument,
                                   berth_instance **out, berth_error *error) {
    (void)error;
    crasher_instance *instance = calloc(1, sizeof(crasher_instance));
    instance->screen = screen;
    const char *dash = strchr(route, '-');
    if (dash != NULL && (size_t)(dash - route) < sizeof(instance->how)) {
        memcpy(instance->how, route, (size_t)(dash - route));
        strncpy(instance->when, dash + 1, sizeof(instance->when) - 1);
    }
    if (argument.data != NULL) {
        size_t length = argument.length < sizeof(instance->gate) - 1 ? (size_t)argument.length : sizeof(instance->gate) - 1;
        memcpy(instance->gate, argument.data, length);
    }
    maybe_fail(instance, "create");
    *out = instance;
    return BERTH_OK;
}

static void crasher_destroy(berth_instance *instance) { free(instance); }

static berth_status crasher_activate(berth_instance *opaque, berth_error *error) {
    crasher_instance *instance = opaque;
    if (strcmp(instance->how, "loop") == 0) {
        uint64_t id = 0;
        berth_bytes none = {NULL, 0};
        return host_table->navigate(instance->screen, BERTH_NAVIGATE_PUSH, "loop-activate", none, &id, error);
    }
    berth_status asked = ask_in_activate(instance, error);
    if (asked != BERTH_OK) return asked;
    if (strcmp(instance->how, "refuse") == 0 && strcmp(instance->when, "activate") == 0) {
        return berth_error_set(error, BERTH_ERR_FAILED, "crasher: refuse-activate refuses");
    }
    maybe_fail(instance, "activate");
    if (strcmp(instance->when, "task") == 0) {
        berth_task_v1 task = {sizeof(berth_task_v1), instance, task_run, NULL, NULL};
        return host_table->task_start(instance->screen, "crash", &task, error);
    }
    return BERTH_OK;
}

static berth_status crasher_deactivate(berth_instance *opaque, berth_error *error) {
    crasher_instance *instance = opaque;
    maybe_fail(instance, "deactivate");
    if (!instance->persists_on_deactivate) return BERTH_OK;
    berth_bytes closed = {(const uint8_t *)"closed", 6};
    berth_status status = host_table->persist_write(instance->screen, "n", closed, error);
    host_table->log(plugin_handle, BERTH_LOG_INFO, status == BERTH_OK ? "persisted on deactivate" : "persist on deactivate refused");
    return status;
}

static void crasher_event(berth_instance *opaque, int32_t event, int32_t flag) {
    (void)flag;
    crasher_instance *instance = opaque;
    if (instance->asks) {
        char line[32];
        snprintf(line, sizeof line, "event %d", (int)event);
        host_table->log(plugin_handle, BERTH_LOG_INFO, line);
    }
    if (event == BERTH_EVENT_DID_APPEAR) maybe_fail(instance, "event");
}

typedef struct text_buffer {
    char text[32];
    size_t length;
} text_buffer;

static berth_status collect_text(void *context, const uint8_t *data, uint64_t length) {
    text_buffer *buffer = context;
    size_t room = sizeof(buffer->text) - 1 - buffer->length;
    size_t count = length < room ? (size_t)length : room;
    memcpy(buffer->text + buffer->length, data, count);
    buffer->length += count;
    buffer->text[buffer->length] = '\0';
    return BERTH_OK;
}

/* "persist COUNT": n+1 … n+COUNT into the key "n", each one logged once it is committed. */
static berth_status persist_counting(crasher_instance *instance, berth_bytes payload, berth_error *error) {
    char count_text[24] = {0};
    if (payload.data != NULL) memcpy(count_text, payload.data, payload.length < sizeof(count_text) - 1 ? (size_t)payload.length : sizeof(count_text) - 1);
    long long count = atoll(count_text);
    text_buffer stored = {{0}, 0};
    berth_sink sink = {sizeof(berth_sink), &stored, collect_text};
    berth_status status = host_table->persist_read(instance->screen, "n", &sink, error);
    if (status != BERTH_OK && status != BERTH_ERR_NOT_FOUND) return status; /* not found: start at 0 */
    long long value = atoll(stored.text);
    char line[64];
    snprintf(line, sizeof line, "resumed at %lld", value);
    host_table->log(plugin_handle, BERTH_LOG_INFO, line);
    for (long long i = 0; i < count; i++) {
        char text[24];
        int length = snprintf(text, sizeof text, "%lld", value + 1);
        berth_bytes bytes = {(const uint8_t *)text, (uint64_t)length};
        status = host_table->persist_write(instance->screen, "n", bytes, error);
        if (status != BERTH_OK) return status;
        value += 1;
        snprintf(line, sizeof line, "committed %lld", value);
        host_table->log(plugin_handle, BERTH_LOG_INFO, line);
    }
    return BERTH_OK;
}

/* Waits until the file named by `payload` exists, then logs through the host. */
static berth_status wait_for_file(berth_bytes payload) {
    char path[4096];
    size_t length = payload.length < sizeof(path) - 1 ? payload.length : sizeof(path) - 1;
    memcpy(path, payload.data, length);
    path[length] = 0;
    file_exists_within(path, 600);
    host_table->log(plugin_handle, BERTH_LOG_INFO, "waited");
    return BERTH_OK;
}

/* The action "open" (payload: "ROUTE ARGUMENT"): asks the host to push ROUTE with ARGUMENT
 * ("present": to present it), logs "asked to open N" with the id it was promised, and observes that
 * screen's delegate actions. */
static berth_status open_asked(crasher_instance *instance, int32_t kind, berth_bytes payload, berth_error *error) {
    char words[4096] = {0};
    size_t length = payload.length < sizeof(words) - 1 ? payload.length : sizeof(words) - 1;
    if (length > 0) memcpy(words, payload.data, length);
    char *space = strchr(words, ' ');
    const char *argument = space != NULL ? space + 1 : "";
    if (space != NULL) *space = '\0';
    berth_bytes bytes = {(const uint8_t *)argument, strlen(argument)};
    uint64_t id = 0;
    berth_status status = host_table->navigate(instance->screen, kind, words, bytes, &id, error);
    if (status != BERTH_OK) return status;
    char line[64];
    snprintf(line, sizeof line, "asked to open %llu", (unsigned long long)id);
    host_table->log(plugin_handle, BERTH_LOG_INFO, line);
    return host_table->observe_delegate(instance->screen, id, error);
}

/* The payload as a C string (a name or a type), cut at 255 bytes. */
static void payload_text(berth_bytes payload, char name[256]) {
    size_t length = payload.length < 255 ? (size_t)payload.length : 255;
    if (length > 0) memcpy(name, payload.data, length);
    name[length] = '\0';
}

/* The actions "delegate", "observe", "context" and "terminate": the host call their payload
   names; "delegate-pop" sends the delegate action, then pops its screen. */
static berth_status ask_named(crasher_instance *instance, const char *action, berth_bytes payload, berth_error *error) {
    char name[256];
    payload_text(payload, name);
    berth_bytes none = {NULL, 0};
    if (strcmp(action, "delegate") == 0) return host_table->send_delegate(instance->screen, name, none, error);
    if (strcmp(action, "observe") == 0) return host_table->context_observe(instance->screen, name, error);
    if (strcmp(action, "terminate") == 0) return host_table->context_send(instance->screen, name, none, BERTH_CONTEXT_TERMINATE, error);
    if (strcmp(action, "delegate-pop") == 0) {
        berth_status status = host_table->send_delegate(instance->screen, name, none, error);
        if (status != BERTH_OK) return status;
        uint64_t id = 0;
        return host_table->navigate(instance->screen, BERTH_NAVIGATE_POP, "", none, &id, error);
    }
    return host_table->context_send(instance->screen, name, none, BERTH_CONTEXT_DISPATCH, error);
}

/* A delivery (WHEN "delegate" or "context"): its gate, then "received WHEN NAME". */
static berth_status received(crasher_instance *instance, const char *when, const char *name) {
    maybe_fail(instance, when);
    char line[300];
    snprintf(line, sizeof line, "received %s %s", when, name);
    host_table->log(plugin_handle, BERTH_LOG_INFO, line);
    return BERTH_OK;
}

static berth_status crasher_context_received(berth_instance *opaque, const char *type, berth_bytes payload, berth_error *error) {
    (void)payload; (void)error;
    return received(opaque, "context", type);
}

static berth_status crasher_delegate_received(berth_instance *opaque, uint64_t child, const char *action, berth_bytes payload,
                                              berth_error *error) {
    (void)child; (void)payload; (void)error;
    return received(opaque, "delegate", action);
}

static berth_status crasher_action(berth_instance *opaque, const char *name, berth_bytes payload, berth_error *error) {
    crasher_instance *instance = opaque;
    maybe_fail(instance, "action");
    if (strcmp(name, "asked") == 0 && instance->asks) host_table->log(plugin_handle, BERTH_LOG_INFO, "ran asked");
    if (strcmp(name, "asked-later") == 0 && instance->asks) host_table->log(plugin_handle, BERTH_LOG_INFO, "ran asked-later");
    if (strcmp(name, "persist") == 0) return persist_counting(instance, payload, error);
    if (strcmp(name, "wait-for") == 0) return wait_for_file(payload);
    if (strcmp(name, "delegate") == 0 || strcmp(name, "observe") == 0 || strcmp(name, "context") == 0 || strcmp(name, "terminate") == 0 ||
        strcmp(name, "delegate-pop") == 0)
        return ask_named(instance, name, payload, error);
    if (strcmp(name, "open") == 0) return open_asked(instance, BERTH_NAVIGATE_PUSH, payload, error);
    if (strcmp(name, "present") == 0) return open_asked(instance, BERTH_NAVIGATE_PRESENT, payload, error);
    return BERTH_OK;
}

static berth_status crasher_render(berth_instance *opaque, const berth_sink *out, berth_error *error) {
    (void)error;
    crasher_instance *instance = opaque;
    /* A render gate waits only once the test armed it. */
    char armed[4096];
    snprintf(armed, sizeof armed, "%s/arm-render", instance->gate);
    if (strcmp(instance->how, "gate") != 0 || access(armed, F_OK) == 0) maybe_fail(instance, "render");
    static const char tree[] = "{\"type\":\"Text\",\"id\":\"Text\",\"text\":\"still here\"}";
    return out->write(out->context, (const uint8_t *)tree, sizeof(tree) - 1);
}

static const berth_plugin_v1 crasher_table = {
    .struct_size = sizeof(berth_plugin_v1),
    .abi_version = BERTH_ABI_VERSION,
    .plugin_id = "org.berth.crasher",
    .create = crasher_create,
    .destroy = crasher_destroy,
    .activate = crasher_activate,
    .deactivate = crasher_deactivate,
    .screen_event = crasher_event,
    .action = crasher_action,
    .render = crasher_render,
    .delegate_received = crasher_delegate_received,
    .context_received = crasher_context_received,
};

const berth_plugin_v1 *berth_crasher_entry_v1(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    host_table = host;
    plugin_handle = plugin;
    return &crasher_table;
}

/* The same plugin as "org.berth.asker": a second plugin (its own lane) that asks for the
 * crasher's screens with its action "open". */
static berth_plugin_v1 asker_table;

const berth_plugin_v1 *berth_crasher_entry_asker(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    host_table = host;
    plugin_handle = plugin;
    asker_table = crasher_table;
    asker_table.plugin_id = "org.berth.asker";
    return &asker_table;
}

/* An entry that waits at the gate "load" beside its own image before it answers. */
const berth_plugin_v1 *berth_crasher_entry_gate(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    host_table = host;
    plugin_handle = plugin;
    Dl_info info;
    char folder[4096];
    if (dladdr((void *)berth_crasher_entry_gate, &info) != 0 && info.dli_fname != NULL) {
        snprintf(folder, sizeof folder, "%s", info.dli_fname);
        char *slash = strrchr(folder, '/');
        if (slash != NULL) *slash = '\0';
        wait_at_gate_in(folder, "load");
    }
    return &crasher_table;
}

/* An entry that crashes while the host loads the plugin. */
const berth_plugin_v1 *berth_crasher_entry_segv(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    (void)host; (void)plugin;
    fail_now("segv");
    return NULL;
}

int32_t crasher_add(int32_t a, int32_t b) { return a + b; }
int32_t crasher_segv(void) { fail_now("segv"); return 0; }
int32_t crasher_abort(void) { fail_now("abort"); return 0; }
int32_t crasher_exit(void) { fail_now("exit"); return 0; }
int32_t crasher_hang(void) { fail_now("hang"); return 0; }

/* Work queued on the process's main dispatch queue, as `DispatchQueue.main.async` or a
 * `@MainActor` task would queue it: it must run in a worker as it does in the host. The
 * queue functions are looked up at run time (libdispatch is loaded in both processes). */
static int32_t main_queue_runs = 0;
static void count_main_queue_run(void *context) { (void)context; main_queue_runs += 1; }

int32_t crasher_queue_on_main(void) {
    typedef void (*async_function)(void *queue, void *context, void (*work)(void *));
    async_function async_f = (async_function)dlsym(RTLD_DEFAULT, "dispatch_async_f");
    void *main_queue = dlsym(RTLD_DEFAULT, "_dispatch_main_q");
    if (async_f == NULL || main_queue == NULL) return -1;
    async_f(main_queue, NULL, count_main_queue_run);
    return 0;
}

int32_t crasher_main_queue_runs(void) { return main_queue_runs; }
