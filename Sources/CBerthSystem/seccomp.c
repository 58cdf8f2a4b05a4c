/*
 * The worker's system-call filter (Docs/worker-sandbox.md), an allowlist built from the
 * policy table (seccomp_policy.c) alone, with libseccomp bound at run time: the image ships
 * libseccomp.so.2 but not its headers, so the few prototypes and constants used are declared
 * here, from libseccomp's documented, stable v2 API. libseccomp writes the BPF program
 * (architecture check, 64-bit argument compares, the x32 ABI), which is where a hand-written
 * filter usually goes wrong.
 *
 * What the table does not allow is refused with EPERM (ENOSYS for clone3); nothing is
 * killed: a plugin can report the refusal. With `trap` the EPERMs come from the SIGSYS
 * handler of seccomp_trap.c, which also reports them.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

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
typedef int (*seccomp_export_pfc_fn)(berth_scmp_filter_ctx, int descriptor);
typedef char *(*seccomp_syscall_resolve_num_arch_fn)(uint32_t arch, int number);

struct seccomp_api {
    seccomp_init_fn init;
    seccomp_rule_add_array_fn rule_add_array;
    seccomp_syscall_resolve_name_fn resolve_name;
    seccomp_load_fn load;
    seccomp_release_fn release;
    seccomp_export_pfc_fn export_pfc;
    seccomp_syscall_resolve_num_arch_fn resolve_number;
};

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
    api->export_pfc = (seccomp_export_pfc_fn)dlsym(library, "seccomp_export_pfc");
    api->resolve_number = (seccomp_syscall_resolve_num_arch_fn)dlsym(library, "seccomp_syscall_resolve_num_arch");
    if (!api->init || !api->rule_add_array || !api->resolve_name || !api->load || !api->release || !api->export_pfc ||
        !api->resolve_number) {
        snprintf(message, size, "libseccomp.so.2 lacks a function of its v2 API");
        return -1;
    }
    return 0;
}

/* Whether a row counts for this worker, and what it answers. */
static int row_counts(const struct berth_policy_rule *rule, int network, int trap) {
    switch (rule->when) {
    case BERTH_POLICY_NETWORK: return network;
    case BERTH_POLICY_TRAPPED: return trap;
    case BERTH_POLICY_UNTRAPPED: return !trap;
    default: return 1;
    }
}

/* The filter of the policy table for a worker whose pid is `own_pid`. NULL, with a
 * one-line reason in `message`, when a row cannot be added. A call this architecture does
 * not have (open and fork on aarch64) needs no row. */
static berth_scmp_filter_ctx build(const struct seccomp_api *api, int network, int trap, int32_t own_pid, char *message, size_t size) {
    berth_scmp_filter_ctx filter = api->init(trap ? BERTH_SCMP_ACT_TRAP : BERTH_SCMP_ACT_ERRNO(EPERM));
    if (filter == NULL) {
        snprintf(message, size, "seccomp_init failed");
        return NULL;
    }
    for (size_t index = 0; index < berth_policy_rule_count(); index++) {
        const struct berth_policy_rule *rule = berth_policy_rule_at(index);
        if (!row_counts(rule, network, trap)) continue;
        int number = api->resolve_name(rule->name);
        if (number < 0) continue;
        struct berth_scmp_arg_cmp compares[3];
        for (uint32_t each = 0; each < rule->count; each++) {
            const struct berth_policy_compare *compare = &rule->compare[each];
            uint64_t value = compare->value == BERTH_POLICY_SELF ? (uint64_t)(uint32_t)own_pid : compare->value;
            compares[each] = (struct berth_scmp_arg_cmp){compare->argument, BERTH_SCMP_CMP_MASKED_EQ, compare->mask, value};
        }
        uint32_t action = rule->when == BERTH_POLICY_ENOSYS ? BERTH_SCMP_ACT_ERRNO(ENOSYS) : BERTH_SCMP_ACT_ALLOW;
        int status = api->rule_add_array(filter, action, number, rule->count, compares);
        if (status != 0) {
            snprintf(message, size, "seccomp rule %zu for %s: %s", index, rule->name, strerror(-status));
            api->release(filter);
            return NULL;
        }
    }
    return filter;
}

int berth_seccomp_confine(int network, int trap, char *message, size_t size) {
    struct seccomp_api api;
    if (bind_library(&api, message, size) != 0) return -1;
    berth_scmp_filter_ctx filter = build(&api, network, trap, (int32_t)getpid(), message, size);
    if (filter == NULL) return -1;
    int loaded = api.load(filter);
    api.release(filter);
    if (loaded != 0) {
        snprintf(message, size, "seccomp_load failed: %s", strerror(-loaded));
        return -1;
    }
    return 0;
}

int berth_seccomp_export(int network, int trap, int32_t own_pid, int descriptor, char *message, size_t size) {
    struct seccomp_api api;
    if (bind_library(&api, message, size) != 0) return -1;
    berth_scmp_filter_ctx filter = build(&api, network, trap, own_pid, message, size);
    if (filter == NULL) return -1;
    int exported = api.export_pfc(filter, descriptor);
    api.release(filter);
    if (exported != 0) {
        snprintf(message, size, "seccomp_export_pfc failed: %s", strerror(-exported));
        return -1;
    }
    return 0;
}

const char *berth_seccomp_call_name(int number) {
    static char name[64];
    struct seccomp_api api;
    char ignored[8];
    if (bind_library(&api, ignored, sizeof ignored) != 0) return NULL;
    char *resolved = api.resolve_number(0 /* SCMP_ARCH_NATIVE */, number);
    if (resolved == NULL) return NULL;
    snprintf(name, sizeof name, "%s", resolved);
    free(resolved);
    return name;
}
