/*
 * A hostile plugin (Docs/security.md, "What was tried"): each export tries one way out of
 * the worker's sandbox and returns 0 when it worked, else the errno that stopped it
 * (`attack_own_session`, the capability counts and `attack_open_descriptors` return what
 * they found). Its actions attack the host through the channel instead: "big-render N"
 * makes the next render a JSON tree of N text nodes, "long-text N" one text of N bytes,
 * "junk-render N" one view with N numbers in a member no view has, "storm N" makes N host
 * calls inside one action.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "berth_attacker.h"

static const berth_host_v1 *host_table;

typedef struct attacker_instance {
    berth_screen_handle *screen;
} attacker_instance;

/* What the next render writes: a tree of `render_nodes` texts, one text of `render_text`
 * bytes, or one view carrying `render_junk` numbers. */
static long render_nodes;
static long render_text;
static long render_junk;

static berth_status attacker_create(berth_screen_handle *screen, const char *route, berth_bytes argument,
                                    berth_instance **out_instance, berth_error *error) {
    (void)route; (void)argument; (void)error;
    attacker_instance *instance = calloc(1, sizeof *instance);
    instance->screen = screen;
    *out_instance = instance;
    return BERTH_OK;
}

static void attacker_destroy(berth_instance *instance) { free(instance); }
static berth_status attacker_activate(berth_instance *instance, berth_error *error) { (void)instance; (void)error; return BERTH_OK; }
static berth_status attacker_deactivate(berth_instance *instance, berth_error *error) { (void)instance; (void)error; return BERTH_OK; }
static void attacker_event(berth_instance *instance, int32_t event, int32_t flag) { (void)instance; (void)event; (void)flag; }

static long payload_number(berth_bytes payload) {
    char text[32] = {0};
    memcpy(text, payload.data, payload.length < sizeof text - 1 ? payload.length : sizeof text - 1);
    return strtol(text, NULL, 10);
}

static berth_status attacker_action(berth_instance *opaque, const char *name, berth_bytes payload, berth_error *error) {
    attacker_instance *instance = opaque;
    if (strcmp(name, "big-render") == 0) {
        render_nodes = payload_number(payload);
        render_text = render_junk = 0;
        return BERTH_OK;
    }
    if (strcmp(name, "long-text") == 0) {
        render_text = payload_number(payload);
        render_nodes = render_junk = 0;
        return BERTH_OK;
    }
    if (strcmp(name, "junk-render") == 0) {
        render_junk = payload_number(payload);
        render_nodes = render_text = 0;
        return BERTH_OK;
    }
    if (strcmp(name, "storm") == 0) {
        long calls = payload_number(payload);
        for (long index = 0; index < calls; index++) {
            (void)host_table->context_can_terminate(instance->screen, "Storm");
        }
        return BERTH_OK;
    }
    return berth_error_set(error, BERTH_ERR_NOT_FOUND, "the attacker has no such action");
}

static berth_status write_text(const berth_sink *out, const char *text) {
    return out->write(out->context, (const uint8_t *)text, strlen(text));
}

/* `text` between `before` and `after`, then freed. */
static berth_status write_between(const berth_sink *out, const char *before, char *text, const char *after) {
    berth_status status = write_text(out, before);
    if (status == BERTH_OK) status = write_text(out, text);
    if (status == BERTH_OK) status = write_text(out, after);
    free(text);
    return status;
}

static berth_status attacker_render(berth_instance *instance, const berth_sink *out, berth_error *error) {
    (void)instance; (void)error;
    if (render_text > 0) {
        char *text = malloc((size_t)render_text + 1);
        memset(text, 'x', (size_t)render_text);
        text[render_text] = 0;
        return write_between(out, "{\"type\":\"Text\",\"id\":\"long\",\"text\":\"", text, "\"}");
    }
    if (render_junk > 0) {
        /* "1,1,...,1": two bytes a number, written in one piece. */
        size_t length = (size_t)render_junk * 2 - 1;
        char *numbers = malloc(length + 1);
        for (size_t index = 0; index < length; index++) numbers[index] = index % 2 ? ',' : '1';
        numbers[length] = 0;
        return write_between(out, "{\"type\":\"VStack\",\"id\":\"root\",\"junk\":[", numbers, "]}");
    }
    berth_status status = write_text(out, "{\"type\":\"VStack\",\"id\":\"root\",\"children\":[");
    char node[64];
    for (long index = 0; index < render_nodes && status == BERTH_OK; index++) {
        snprintf(node, sizeof node, "%s{\"type\":\"Text\",\"id\":\"t%ld\",\"text\":\"x\"}", index == 0 ? "" : ",", index);
        status = write_text(out, node);
    }
    return status == BERTH_OK ? write_text(out, "]}") : status;
}

static const berth_plugin_v1 attacker_table = {
    .struct_size = sizeof(berth_plugin_v1),
    .abi_version = BERTH_ABI_VERSION,
    .plugin_id = "org.berth.attacker",
    .create = attacker_create,
    .destroy = attacker_destroy,
    .activate = attacker_activate,
    .deactivate = attacker_deactivate,
    .screen_event = attacker_event,
    .action = attacker_action,
    .render = attacker_render,
};

const berth_plugin_v1 *berth_attacker_entry_v1(const berth_host_v1 *host, berth_plugin_handle *plugin) {
    (void)plugin;
    host_table = host;
    return &attacker_table;
}

/* A Unix socket by path: the host's control socket, an ssh-agent, D-Bus. */
int32_t attack_unix_connect(const char *path) {
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, path, sizeof address.sun_path - 1);
    int32_t result = connect(fd, (struct sockaddr *)&address, sizeof address) == 0 ? 0 : errno;
    close(fd);
    return result;
}

/* Typing into the terminal on stdout (the host's, if the worker shared it). */
int32_t attack_tiocsti(void) {
    char byte = '\n';
    return ioctl(STDOUT_FILENO, TIOCSTI, &byte) == 0 ? 0 : errno;
}

/* 1 when the worker leads a session of its own (so it has no controlling terminal of the
 * host's), or its session's leader is outside its PID namespace (getsid answers 0): the
 * process the host spawned, which leads a session of its own (the test checks that from
 * the host's side). */
int32_t attack_own_session(void) {
    pid_t session = getsid(0);
    return session == getpid() || session == 0 ? 1 : 0;
}

int32_t attack_getenv(const char *name) {
    return getenv(name) != NULL ? 0 : ENOENT;
}

static int32_t count_bits(uint64_t bits) {
    return (int32_t)__builtin_popcountll(bits);
}

int32_t attack_effective_capabilities(void) {
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    if (syscall(SYS_capget, &header, data) != 0) return -errno;
    return count_bits((uint64_t)data[0].effective | (uint64_t)data[1].effective << 32);
}

int32_t attack_bounding_capabilities(void) {
    int32_t count = 0;
    for (int capability = 0; capability < 64; capability++) {
        if (prctl(PR_CAPBSET_READ, capability, 0, 0, 0) == 1) count++;
    }
    return count;
}

/* A node for /dev/zero in the plugin's own (writable) data folder, read through. */
int32_t attack_mknod(void) {
    const char *folder = getenv("BERTH_PLUGIN_DATA");
    if (folder == NULL) return ENOENT;
    char path[4096];
    snprintf(path, sizeof path, "%s/zero", folder);
    unlink(path);
    if (mknod(path, S_IFCHR | 0600, makedev(1, 5)) != 0) return errno;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    int32_t result = 0;
    if (fd < 0) {
        result = errno;
    } else {
        char byte;
        if (read(fd, &byte, 1) != 1) result = errno;
        close(fd);
    }
    unlink(path);
    return result;
}

int32_t attack_fork(void) {
    pid_t child = fork();
    if (child < 0) return errno;
    if (child == 0) _exit(0);
    waitpid(child, NULL, 0);
    return 0;
}

/* clone3 with no arguments: a filter that cannot read its flags must answer ENOSYS. */
int32_t attack_clone3(void) {
    return syscall(SYS_clone3, NULL, 0) == 0 ? 0 : errno;
}

static void *thread_body(void *argument) { return argument; }

/* Threads keep working under the filter. */
int32_t attack_thread(void) {
    pthread_t thread;
    int status = pthread_create(&thread, NULL, thread_body, NULL);
    if (status != 0) return status;
    return pthread_join(thread, NULL);
}

int32_t attack_socket(int32_t domain, int32_t type) {
    int fd = socket(domain, type | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    close(fd);
    return 0;
}

int32_t attack_udp(int32_t port) {
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int32_t result = sendto(fd, "x", 1, 0, (struct sockaddr *)&address, sizeof address) == 1 ? 0 : errno;
    close(fd);
    return result;
}

/* Replaces the worker with `path` if it can (the host then sees its worker gone). */
int32_t attack_execve(const char *path) {
    char *const arguments[] = {(char *)path, NULL};
    char *const environment[] = {NULL};
    execve(path, arguments, environment);
    return errno;
}

/*
 * An ELF from memory: the worker's own executable copied into a memfd and run as
 * `berth-worker --fd x` (which exits 2 at once). In a child when fork works, else in
 * this process. 0 when it ran.
 */
int32_t attack_memfd_exec(void) {
    int source = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (source < 0) return errno;
    int memory = memfd_create("payload", MFD_CLOEXEC);
    if (memory < 0) {
        int32_t failure = errno;
        close(source);
        return failure;
    }
    char buffer[65536];
    ssize_t count;
    while ((count = read(source, buffer, sizeof buffer)) > 0) {
        if (write(memory, buffer, (size_t)count) != count) break;
    }
    close(source);
    char *const arguments[] = {"berth-worker", "--fd", "x", NULL};
    char *const environment[] = {NULL};
    pid_t child = fork();
    if (child == 0) {
        fexecve(memory, arguments, environment);
        _exit(100);
    }
    if (child > 0) {
        int status = 0;
        waitpid(child, &status, 0);
        close(memory);
        return WIFEXITED(status) && WEXITSTATUS(status) == 2 ? 0 : EPERM;
    }
    fexecve(memory, arguments, environment);
    int32_t failure = errno;
    close(memory);
    return failure;
}

/* Takes `mebibytes` MiB in one block and touches every page: 0, or ENOMEM when refused. */
int32_t attack_allocate(int32_t mebibytes) {
    size_t size = (size_t)mebibytes << 20;
    char *block = malloc(size);
    if (block == NULL) return ENOMEM;
    for (size_t offset = 0; offset < size; offset += 4096) block[offset] = 1;
    free(block);
    return 0;
}

/* 0 when one of the worker's descriptors is the file whose path contains `marker`, else ENOENT. */
int32_t attack_descriptor_open(const char *marker) {
    DIR *folder = opendir("/proc/self/fd");
    if (folder == NULL) return errno;
    int32_t result = ENOENT;
    struct dirent *entry;
    char link[512], target[4096];
    while ((entry = readdir(folder)) != NULL) {
        if (entry->d_name[0] == '.') continue;
        snprintf(link, sizeof link, "/proc/self/fd/%s", entry->d_name);
        ssize_t length = readlink(link, target, sizeof target - 1);
        if (length <= 0) continue;
        target[length] = 0;
        if (strstr(target, marker) != NULL) result = 0;
    }
    closedir(folder);
    return result;
}

/* The worker's oom_score_adj (how much the OOM killer prefers it), or -errno. */
int32_t attack_oom_score_adj(void) {
    int fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -errno;
    char text[16] = {0};
    ssize_t count = read(fd, text, sizeof text - 1);
    close(fd);
    return count > 0 ? (int32_t)strtol(text, NULL, 10) : -EIO;
}

/* Takes the SIGSYS action back from the worker (so refused calls would go unreported): 0 when it could, else the errno. */
int32_t attack_sigsys_handler(void) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_IGN;
    return sigaction(SIGSYS, &action, NULL) == 0 ? 0 : errno;
}

/* Burns `milliseconds` of this thread's processor time; 0. */
int32_t attack_spin(int32_t milliseconds) {
    struct timespec start, now;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &start);
    volatile uint64_t work = 0;
    do {
        for (int index = 0; index < 100000; index++) work += (uint64_t)index;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
    } while ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 < milliseconds);
    return 0;
}

/* ---- The wall (issue 40): each returns 0 when the attempt worked, else its errno. ---- */

/* Sets `resource` (RLIMIT_CPU 0, RLIMIT_NOFILE 7) of process `pid` to 1 (CPU) or 4 (files). */
int32_t attack_prlimit(int32_t pid, int32_t resource) {
    struct rlimit limit = {resource == RLIMIT_CPU ? 1 : 4, resource == RLIMIT_CPU ? 1 : 4};
    return syscall(SYS_prlimit64, pid, resource, &limit, NULL) == 0 ? 0 : errno;
}

/* Sends `signal` to process `pid`. */
int32_t attack_kill(int32_t pid, int32_t signal) {
    return kill(pid, signal) == 0 ? 0 : errno;
}

/* An io_uring instance (its IORING_OP_SOCKET makes sockets no socket() rule sees). */
int32_t attack_io_uring(void) {
    char parameters[120] = {0};
    long fd = syscall(SYS_io_uring_setup, 4, parameters);
    if (fd < 0) return errno;
    close((int)fd);
    return 0;
}

/* A datagram from an unnamed socketpair to the named socket at `path`. */
int32_t attack_socketpair_sendto(const char *path) {
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) != 0) return errno;
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    strncpy(address.sun_path, path, sizeof address.sun_path - 1);
    int32_t result = sendto(pair[0], "x", 1, 0, (struct sockaddr *)&address, sizeof address) == 1 ? 0 : errno;
    close(pair[0]);
    close(pair[1]);
    return result;
}

/* socket(domain, type, protocol): MPTCP is (AF_INET, SOCK_STREAM, 262), netlink (16, SOCK_RAW, 0). */
int32_t attack_socket_protocol(int32_t domain, int32_t type, int32_t protocol) {
    int fd = socket(domain, type | SOCK_CLOEXEC, protocol);
    if (fd < 0) return errno;
    close(fd);
    return 0;
}

/* 0 when /proc/self/net/unix lists a socket whose path contains `marker`, else ENOENT (or why it could not be read). */
int32_t attack_list_unix_sockets(const char *marker) {
    FILE *list = fopen("/proc/self/net/unix", "re");
    if (list == NULL) return errno;
    char line[1024];
    int32_t result = ENOENT;
    while (fgets(line, sizeof line, list) != NULL) {
        if (strstr(line, marker) != NULL) result = 0;
    }
    fclose(list);
    return result;
}

/* Mode 0 for `path` (the host's own berth-worker, in the attack the issue reports). */
int32_t attack_chmod(const char *path) {
    return chmod(path, 0) == 0 ? 0 : errno;
}

/* Mode 0 through a descriptor opened for reading (Landlock does not cover fchmod). */
int32_t attack_fchmod(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    int32_t result = fchmod(fd, 0) == 0 ? 0 : errno;
    close(fd);
    return result;
}

/* Times of `path` set to the epoch. */
int32_t attack_utimensat(const char *path) {
    struct timespec times[2] = {{0, 0}, {0, 0}};
    return utimensat(AT_FDCWD, path, times, 0) == 0 ? 0 : errno;
}

/* An extended attribute planted on `path`. */
int32_t attack_setxattr(const char *path) {
    return syscall(SYS_setxattr, path, "user.berth-attack", "x", 1, 0) == 0 ? 0 : errno;
}

/* The user keyring: a key planted in it (add_key), and a read of it (keyctl KEYCTL_READ). */
int32_t attack_keyring(void) {
    long key = syscall(SYS_add_key, "user", "berth-attack", "x", 1, -4 /* KEY_SPEC_USER_KEYRING */);
    if (key < 0) {
        int32_t planted = errno;
        char buffer[64];
        long read = syscall(SYS_keyctl, 11 /* KEYCTL_READ */, -4, buffer, sizeof buffer);
        return read < 0 ? planted : 0;
    }
    return 0;
}

static int thread_gate[2];

static void *waiting_thread(void *argument) {
    char byte;
    (void)!read(thread_gate[0], &byte, 1);
    return argument;
}

/* Starts `count` threads with 64 KiB stacks that wait; the number started (then all end). */
int32_t attack_threads(int32_t count) {
    if (pipe2(thread_gate, O_CLOEXEC) != 0) return -errno;
    pthread_t *threads = calloc((size_t)count, sizeof *threads);
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 64 << 10);
    int32_t started = 0;
    while (started < count && pthread_create(&threads[started], &attributes, waiting_thread, NULL) == 0) started++;
    pthread_attr_destroy(&attributes);
    close(thread_gate[1]);
    for (int32_t index = 0; index < started; index++) pthread_join(threads[index], NULL);
    close(thread_gate[0]);
    free(threads);
    return started;
}

/* `mebibytes` MiB of MAP_SHARED | MAP_ANONYMOUS memory, every page touched (RLIMIT_DATA does not count it). */
int32_t attack_shared_memory(int32_t mebibytes) {
    size_t size = (size_t)mebibytes << 20;
    char *block = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (block == MAP_FAILED) return errno;
    for (size_t offset = 0; offset < size; offset += 4096) block[offset] = 1;
    munmap(block, size);
    return 0;
}

/* A file of `mebibytes` MiB in the plugin's data folder (fallocate), removed again. */
int32_t attack_fallocate(int32_t mebibytes) {
    const char *folder = getenv("BERTH_PLUGIN_DATA");
    if (folder == NULL) return ENOENT;
    char path[4096];
    snprintf(path, sizeof path, "%s/filler", folder);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return errno;
    int32_t result = fallocate(fd, 0, 0, (off_t)mebibytes << 20) == 0 ? 0 : errno;
    close(fd);
    unlink(path);
    return result;
}

/* 0 when `path` (outside every grant) can be opened for reading. */
int32_t attack_read(const char *path) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    close(fd);
    return 0;
}

/* ---- Its own PID namespace ---------------------------------------------------------- */

/* This process's pid, as it sees it. */
int32_t attack_own_pid(void) { return (int32_t)getpid(); }

/* Its parent's pid, as it sees it (1: the init of a PID namespace of its own). */
int32_t attack_parent_pid(void) { return (int32_t)getppid(); }

/* Whether /proc has an entry for process `pid` (stat, which Landlock does not refuse):
 * 0 when it has, else errno (ENOENT: no such process in its PID namespace). */
int32_t attack_process_exists(int32_t pid) {
    char path[32];
    snprintf(path, sizeof path, "/proc/%d", (int)pid);
    struct stat status;
    return stat(path, &status) == 0 ? 0 : errno;
}
