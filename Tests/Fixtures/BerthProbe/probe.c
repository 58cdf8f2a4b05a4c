/*
 * A plugin that tries things, for the capability and sandbox tests (Docs/security.md).
 * Routes "probe" and "other". Each action makes one host call and fails with the host's
 * own status and message: "push-own" pushes "other", "push" pushes the route in the
 * payload, "persist" writes the key "note", "recall" reads the key in the payload ("note"
 * when empty) through its own screen and "recall-first" through the first open probe
 * screen's handle, "task" starts a task, "context" sends a context. The exports return 0
 * or the errno of one file or socket operation, or what the last call left.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "berth_probe.h"

static const berth_host_v1 *host_table;
static int32_t last_status = -1; /* what the last host call an action made returned */
static int32_t recalled_length = -1; /* the length of the value the last recall read */
static berth_screen_handle *first_screen; /* the first probe screen still open */

typedef struct probe_instance {
    berth_screen_handle *screen;
} probe_instance;

static berth_status probe_create(berth_screen_handle *screen, const char *route, berth_bytes argument,
                                 berth_instance **out_instance, berth_error *error) {
    (void)route; (void)argument; (void)error;
    probe_instance *instance = calloc(1, sizeof *instance);
    instance->screen = screen;
    if (first_screen == NULL) first_screen = screen;
    *out_instance = instance;
    return BERTH_OK;
}

static void probe_destroy(berth_instance *opaque) {
    probe_instance *instance = (probe_instance *)opaque;
    if (instance->screen == first_screen) first_screen = NULL;
    free(instance);
}

static berth_status count_bytes(void *context, const uint8_t *bytes, uint64_t length) {
    (void)bytes;
    *(int32_t *)context += (int32_t)length;
    return BERTH_OK;
}

/* persist_read of the payload's key ("note" when empty) through `screen`. */
static berth_status recall(berth_screen_handle *screen, berth_bytes payload, berth_error *error) {
    char key[64] = "note";
    if (payload.length > 0) {
        memset(key, 0, sizeof key);
        memcpy(key, payload.data, payload.length < sizeof key - 1 ? payload.length : sizeof key - 1);
    }
    int32_t length = 0;
    berth_sink sink = {sizeof(berth_sink), &length, count_bytes};
    berth_status status = host_table->persist_read(screen, key, &sink, error);
    recalled_length = status == BERTH_OK ? length : -1;
    return status;
}
static berth_status probe_activate(berth_instance *instance, berth_error *error) { (void)instance; (void)error; return BERTH_OK; }
static berth_status probe_deactivate(berth_instance *instance, berth_error *error) { (void)instance; (void)error; return BERTH_OK; }
static void probe_event(berth_instance *instance, int32_t event, int32_t flag) { (void)instance; (void)event; (void)flag; }

static void task_run(void *context, berth_task_handle *task) { (void)context; (void)task; }
static void task_release(void *context) { (void)context; }

static berth_status call_host(berth_instance *opaque, const char *name, berth_bytes payload, berth_error *error) {
    probe_instance *instance = opaque;
    berth_bytes none = {NULL, 0};
    uint64_t id = 0;
    if (strcmp(name, "push-own") == 0) {
        return host_table->navigate(instance->screen, BERTH_NAVIGATE_PUSH, "other", none, &id, error);
    }
    if (strcmp(name, "push") == 0) {
        char route[256] = {0};
        memcpy(route, payload.data, payload.length < sizeof route - 1 ? payload.length : sizeof route - 1);
        return host_table->navigate(instance->screen, BERTH_NAVIGATE_PUSH, route, none, &id, error);
    }
    if (strcmp(name, "persist") == 0) {
        return host_table->persist_write(instance->screen, "note", berth_bytes_from_string("hello"), error);
    }
    if (strcmp(name, "recall") == 0) return recall(instance->screen, payload, error);
    if (strcmp(name, "recall-first") == 0) return recall(first_screen, payload, error);
    if (strcmp(name, "task") == 0) {
        berth_task_v1 task = {sizeof task, NULL, task_run, NULL, task_release};
        return host_table->task_start(instance->screen, "probe", &task, error);
    }
    if (strcmp(name, "context") == 0) {
        return host_table->context_send(instance->screen, "Probe", none, BERTH_CONTEXT_DISPATCH, error);
    }
    return berth_error_set(error, BERTH_ERR_NOT_FOUND, "probe has no such action");
}

static berth_status probe_action(berth_instance *opaque, const char *name, berth_bytes payload, berth_error *error) {
    last_status = call_host(opaque, name, payload, error);
    return last_status;
}

int32_t probe_last_status(void) { return last_status; }
int32_t probe_recalled_length(void) { return recalled_length; }

static const berth_plugin_v1 probe_table = {
    .struct_size = sizeof(berth_plugin_v1),
    .abi_version = BERTH_ABI_VERSION,
    .plugin_id = NULL,
    .create = probe_create,
    .destroy = probe_destroy,
    .activate = probe_activate,
    .deactivate = probe_deactivate,
    .screen_event = probe_event,
    .action = probe_action,
};

static berth_plugin_v1 table_copy;

static const berth_plugin_v1 *probe_entry(const berth_host_v1 *host, const char *id) {
    host_table = host;
    table_copy = probe_table;
    table_copy.plugin_id = id;
    return &table_copy;
}

const berth_plugin_v1 *berth_probe_entry_v1(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    (void)plugin;
    return probe_entry(host, "org.berth.probe");
}

/* The same plugin under a second id, so a test has "another plugin's route" to push. */
const berth_plugin_v1 *berth_probe_other_entry_v1(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    (void)plugin;
    return probe_entry(host, "org.berth.probe-other");
}

int32_t probe_read(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    char byte;
    int32_t result = read(fd, &byte, 1) < 0 ? errno : 0;
    close(fd);
    return result;
}

int32_t probe_write(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return errno;
    int32_t result = write(fd, "x", 1) == 1 ? 0 : errno;
    close(fd);
    return result;
}

int32_t probe_write_data(const char *name) {
    const char *folder = getenv("BERTH_PLUGIN_DATA");
    if (folder == NULL) return ENOENT;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", folder, name);
    return probe_write(path);
}

/* Runs `path` with no arguments: its exit status, or the errno execve failed with. */
int32_t probe_exec(const char *path) {
    pid_t child = fork();
    if (child < 0) return errno;
    if (child == 0) {
        char *const arguments[] = {(char *)path, NULL};
        execv(path, arguments);
        _exit(errno);
    }
    int status = 0;
    if (waitpid(child, &status, 0) < 0) return errno;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Whether this process may signal `pid` (signal 0 only checks). */
int32_t probe_signal(int32_t pid) {
    return kill((pid_t)pid, 0) == 0 ? 0 : errno;
}

int32_t probe_connect(int32_t port) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int32_t result = connect(fd, (struct sockaddr *)&address, sizeof address) == 0 ? 0 : errno;
    close(fd);
    return result;
}
