/*
 * The worker's system-call filter (Docs/security.md), built with libseccomp bound at run
 * time: the image ships libseccomp.so.2 but not its headers, so the few prototypes and
 * constants used are declared here, from libseccomp's documented, stable v2 API. libseccomp
 * writes the BPF program (architecture check, 64-bit argument compares, the x32 ABI),
 * which is where a hand-written filter usually goes wrong.
 *
 * Every rule returns an errno (EPERM, or ENOSYS for clone3 so glibc falls back to clone,
 * whose flags a filter can read); nothing is killed: a plugin can report the refusal. With
 * `trap` the EPERMs come from the SIGSYS handler of seccomp_trap.c, which also reports them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/socket.h>

#include "berth_system.h"

/* From libseccomp's seccomp.h (v2 API, unchanged since 2.2). */
typedef void *berth_scmp_filter_ctx;
enum berth_scmp_compare {
    BERTH_SCMP_CMP_NE = 1,
    BERTH_SCMP_CMP_EQ = 4,
    BERTH_SCMP_CMP_MASKED_EQ = 7, /* (argument & datum_a) == datum_b */
};
struct berth_scmp_arg_cmp {
    unsigned int arg;
    enum berth_scmp_compare op;
    uint64_t datum_a;
    uint64_t datum_b;
};
#define BERTH_SCMP_ACT_ALLOW 0x7fff0000U
#define BERTH_SCMP_ACT_ERRNO(code) (0x00050000U | ((code) & 0x0000ffffU))
#define BERTH_SCMP_ACT_TRAP 0x00030000U

typedef berth_scmp_filter_ctx (*seccomp_init_fn)(uint32_t default_action);
typedef int (*seccomp_rule_add_array_fn)(berth_scmp_filter_ctx, uint32_t action, int syscall, unsigned int count,
                                         const struct berth_scmp_arg_cmp *arguments);
typedef int (*seccomp_syscall_resolve_name_fn)(const char *name);
typedef int (*seccomp_load_fn)(berth_scmp_filter_ctx);
typedef void (*seccomp_release_fn)(berth_scmp_filter_ctx);

struct seccomp_api {
    seccomp_init_fn init;
    seccomp_rule_add_array_fn rule_add_array;
    seccomp_syscall_resolve_name_fn resolve_name;
    seccomp_load_fn load;
    seccomp_release_fn release;
};

/* Only the low 32 bits of an int argument count: the kernel ignores the rest, so a rule
 * comparing all 64 would let `value | 1 << 32` through. */
#define LOW32 0xffffffffULL

static int bind_library(struct seccomp_api *api, char *message, size_t size) {
    void *library = dlopen("libseccomp.so.2", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(message, size, "libseccomp.so.2 cannot be opened (%s)", dlerror());
        return -1;
    }
    api->init = (seccomp_init_fn)dlsym(library, "seccomp_init");
    api->rule_add_array = (seccomp_rule_add_array_fn)dlsym(library, "seccomp_rule_add_array");
    api->resolve_name = (seccomp_syscall_resolve_name_fn)dlsym(library, "seccomp_syscall_resolve_name");
    api->load = (seccomp_load_fn)dlsym(library, "seccomp_load");
    api->release = (seccomp_release_fn)dlsym(library, "seccomp_release");
    if (!api->init || !api->rule_add_array || !api->resolve_name || !api->load || !api->release) {
        snprintf(message, size, "libseccomp.so.2 lacks a function of its v2 API");
        return -1;
    }
    return 0;
}

/* What a refused call gets: EPERM from the SIGSYS handler (reported), or from the kernel. */
static uint32_t refusal = BERTH_SCMP_ACT_ERRNO(EPERM);

/* One rule: `name` answers `code` (EPERM: `refusal`) when every comparison holds. A call
 * this architecture does not have (fork and vfork on aarch64) needs no rule. */
static int deny(const struct seccomp_api *api, berth_scmp_filter_ctx filter, const char *name, int code, unsigned int count,
                const struct berth_scmp_arg_cmp *arguments, char *message, size_t size) {
    int number = api->resolve_name(name);
    if (number < 0) return 0;
    uint32_t action = code == EPERM ? refusal : BERTH_SCMP_ACT_ERRNO(code);
    int status = api->rule_add_array(filter, action, number, count, arguments);
    if (status != 0) {
        snprintf(message, size, "seccomp rule for %s: %s", name, strerror(-status));
        return -1;
    }
    return 0;
}

int berth_seccomp_confine(int allow_udp, int trap, char *message, size_t size) {
    struct seccomp_api api;
    if (bind_library(&api, message, size) != 0) return -1;
    berth_scmp_filter_ctx filter = api.init(BERTH_SCMP_ACT_ALLOW);
    if (filter == NULL) {
        snprintf(message, size, "seccomp_init failed");
        return -1;
    }
    int failed = 0;
    if (trap) {
        refusal = BERTH_SCMP_ACT_TRAP;
        /* The handler stays: no other SIGSYS action may replace it (refused and reported;
         * a plugin that blocks SIGSYS instead is killed by its next refused call, which
         * still does not run). */
        struct berth_scmp_arg_cmp sigsys = {0, BERTH_SCMP_CMP_MASKED_EQ, LOW32, SIGSYS};
        failed |= deny(&api, filter, "rt_sigaction", EPERM, 1, &sigsys, message, size);
    }
    /* No program runs: execve and execveat (fexecve and a memfd's ELF included). */
    failed |= deny(&api, filter, "execve", EPERM, 0, NULL, message, size);
    failed |= deny(&api, filter, "execveat", EPERM, 0, NULL, message, size);
    /* No process but threads: fork, vfork, clone without CLONE_THREAD. clone3 keeps its
     * flags in memory a filter cannot read, so it is "not implemented": glibc then uses clone. */
    failed |= deny(&api, filter, "fork", EPERM, 0, NULL, message, size);
    failed |= deny(&api, filter, "vfork", EPERM, 0, NULL, message, size);
    struct berth_scmp_arg_cmp no_thread = {0, BERTH_SCMP_CMP_MASKED_EQ, CLONE_THREAD, 0};
    failed |= deny(&api, filter, "clone", EPERM, 1, &no_thread, message, size);
    failed |= deny(&api, filter, "clone3", ENOSYS, 0, NULL, message, size);
    /* No new Unix (the control socket, ssh-agent, D-Bus), netlink or packet socket. */
    static const int families[] = {AF_UNIX, AF_NETLINK, AF_PACKET};
    for (size_t index = 0; index < sizeof families / sizeof families[0]; index++) {
        struct berth_scmp_arg_cmp family = {0, BERTH_SCMP_CMP_MASKED_EQ, LOW32, (uint64_t)families[index]};
        failed |= deny(&api, filter, "socket", EPERM, 1, &family, message, size);
    }
    /* No raw socket of any family (the type's low bits; SOCK_CLOEXEC and SOCK_NONBLOCK
     * are flags above them). */
    struct berth_scmp_arg_cmp raw = {1, BERTH_SCMP_CMP_MASKED_EQ, 0xf, SOCK_RAW};
    failed |= deny(&api, filter, "socket", EPERM, 1, &raw, message, size);
    if (!allow_udp) {
        static const int internet[] = {AF_INET, AF_INET6};
        for (size_t index = 0; index < 2; index++) {
            struct berth_scmp_arg_cmp pair[2] = {
                {0, BERTH_SCMP_CMP_MASKED_EQ, LOW32, (uint64_t)internet[index]},
                {1, BERTH_SCMP_CMP_MASKED_EQ, 0xf, SOCK_DGRAM},
            };
            failed |= deny(&api, filter, "socket", EPERM, 2, pair, message, size);
        }
    }
    /* Nothing typed into a terminal, nothing sent to the Linux console. */
    static const unsigned long requests[] = {TIOCSTI, TIOCLINUX};
    for (size_t index = 0; index < 2; index++) {
        struct berth_scmp_arg_cmp request = {1, BERTH_SCMP_CMP_MASKED_EQ, LOW32, requests[index]};
        failed |= deny(&api, filter, "ioctl", EPERM, 1, &request, message, size);
    }
    if (failed) {
        api.release(filter);
        return -1;
    }
    int loaded = api.load(filter);
    api.release(filter);
    if (loaded != 0) {
        snprintf(message, size, "seccomp_load failed: %s", strerror(-loaded));
        return -1;
    }
    return 0;
}
