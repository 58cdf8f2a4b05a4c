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
 *
 * The host builds the program (berth_seccomp_template), once per variant, and sends it with
 * the hello; the worker writes its own pid into it and hands it to the kernel itself
 * (berth_seccomp_install), so no worker opens libseccomp to confine itself.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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
typedef int (*seccomp_export_bpf_fn)(berth_scmp_filter_ctx, int descriptor);
typedef void (*seccomp_release_fn)(berth_scmp_filter_ctx);
typedef int (*seccomp_export_pfc_fn)(berth_scmp_filter_ctx, int descriptor);
typedef char *(*seccomp_syscall_resolve_num_arch_fn)(uint32_t arch, int number);

struct seccomp_api {
    seccomp_init_fn init;
    seccomp_rule_add_array_fn rule_add_array;
    seccomp_syscall_resolve_name_fn resolve_name;
    seccomp_export_bpf_fn export_bpf;
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
    api->export_bpf = (seccomp_export_bpf_fn)dlsym(library, "seccomp_export_bpf");
    api->release = (seccomp_release_fn)dlsym(library, "seccomp_release");
    api->export_pfc = (seccomp_export_pfc_fn)dlsym(library, "seccomp_export_pfc");
    api->resolve_number = (seccomp_syscall_resolve_num_arch_fn)dlsym(library, "seccomp_syscall_resolve_num_arch");
    if (!api->init || !api->rule_add_array || !api->resolve_name || !api->export_bpf || !api->release || !api->export_pfc ||
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

/* The program libseccomp writes for `own_pid` (seccomp_export_bpf, through a memory file):
 * malloc'd instructions in *program, their number in *count. 0, or -1 with the reason. */
static int export_program(const struct seccomp_api *api, int network, int trap, int32_t own_pid, struct sock_filter **program,
                          size_t *count, char *message, size_t size) {
    berth_scmp_filter_ctx filter = build(api, network, trap, own_pid, message, size);
    if (filter == NULL) return -1;
    int descriptor = memfd_create("berth-seccomp", MFD_CLOEXEC);
    if (descriptor < 0) {
        snprintf(message, size, "memfd_create for the filter: %s", strerror(errno));
        api->release(filter);
        return -1;
    }
    int exported = api->export_bpf(filter, descriptor);
    api->release(filter);
    off_t length = exported == 0 ? lseek(descriptor, 0, SEEK_END) : -1;
    if (exported != 0 || length <= 0 || length % (off_t)sizeof(struct sock_filter) != 0 || length > BPF_MAXINSNS * (off_t)sizeof(struct sock_filter)) {
        snprintf(message, size, "seccomp_export_bpf failed: %s", exported != 0 ? strerror(-exported) : "no whole program");
        close(descriptor);
        return -1;
    }
    *program = malloc((size_t)length);
    ssize_t read_back = *program ? pread(descriptor, *program, (size_t)length, 0) : -1;
    close(descriptor);
    if (read_back != length) {
        snprintf(message, size, "reading the exported filter back failed");
        free(*program);
        return -1;
    }
    *count = (size_t)length / sizeof(struct sock_filter);
    return 0;
}

/* One instruction as the wire carries it: code, jt, jf and k in one 64-bit word. */
static uint64_t packed(struct sock_filter instruction) {
    return (uint64_t)instruction.code | (uint64_t)instruction.jt << 16 | (uint64_t)instruction.jf << 24 | (uint64_t)instruction.k << 32;
}

/* Two pids no process has (above PID_MAX_LIMIT), standing in for the worker's own. */
#define BERTH_PID_STAND_IN_A 0x7ffffff1
#define BERTH_PID_STAND_IN_B 0x7ffffff2

int berth_seccomp_template(int network, int trap, struct berth_filter_template *template, char *message, size_t size) {
    memset(template, 0, sizeof *template);
    struct seccomp_api api;
    if (bind_library(&api, message, size) != 0) return -1;
    struct sock_filter *first = NULL, *second = NULL;
    size_t first_count = 0, second_count = 0;
    if (export_program(&api, network, trap, BERTH_PID_STAND_IN_A, &first, &first_count, message, size) != 0) return -1;
    if (export_program(&api, network, trap, BERTH_PID_STAND_IN_B, &second, &second_count, message, size) != 0) {
        free(first);
        return -1;
    }
    /* Built for two pids, the programs differ only where a comparison reads the pid: those
     * are the slots the worker fills in. Anything else differing is refused. */
    int failure = first_count != second_count;
    template->instructions = calloc(first_count, sizeof(uint64_t));
    template->self_slots = calloc(first_count, sizeof(uint32_t));
    if (template->instructions == NULL || template->self_slots == NULL) failure = 1;
    for (size_t index = 0; !failure && index < first_count; index++) {
        struct sock_filter a = first[index], b = second[index];
        template->instructions[index] = packed(a);
        if (a.code == b.code && a.jt == b.jt && a.jf == b.jf && a.k == b.k) continue;
        if (a.code == b.code && a.jt == b.jt && a.jf == b.jf && a.k == BERTH_PID_STAND_IN_A && b.k == BERTH_PID_STAND_IN_B &&
            BPF_CLASS(a.code) == BPF_JMP && BPF_SRC(a.code) == BPF_K) {
            template->self_slots[template->slot_count++] = (uint32_t)index;
        } else {
            failure = 1;
        }
    }
    free(first);
    free(second);
    if (failure || template->slot_count == 0) {
        snprintf(message, size, "libseccomp's program does not hold the worker's pid in comparisons alone");
        berth_seccomp_template_free(template);
        return -1;
    }
    template->count = first_count;
    return 0;
}

void berth_seccomp_template_free(struct berth_filter_template *template) {
    free(template->instructions);
    free(template->self_slots);
    memset(template, 0, sizeof *template);
}

int berth_seccomp_program(int network, int trap, int32_t own_pid, uint64_t *instructions, size_t *count, char *message, size_t size) {
    struct seccomp_api api;
    if (bind_library(&api, message, size) != 0) return -1;
    struct sock_filter *program = NULL;
    size_t length = 0;
    if (export_program(&api, network, trap, own_pid, &program, &length, message, size) != 0) return -1;
    if (length > *count) {
        snprintf(message, size, "the filter has %zu instructions, more than %zu", length, *count);
        free(program);
        return -1;
    }
    for (size_t index = 0; index < length; index++) instructions[index] = packed(program[index]);
    *count = length;
    free(program);
    return 0;
}

int berth_seccomp_install(const uint64_t *instructions, size_t count, const uint32_t *self_slots, size_t slot_count, char *message,
                          size_t size) {
    if (count == 0 || count > BPF_MAXINSNS) {
        snprintf(message, size, "a filter of %zu instructions", count);
        return -1;
    }
    struct sock_filter *program = calloc(count, sizeof *program);
    if (program == NULL) {
        snprintf(message, size, "no memory for the filter");
        return -1;
    }
    for (size_t index = 0; index < count; index++) {
        uint64_t word = instructions[index];
        program[index] = (struct sock_filter){(uint16_t)word, (uint8_t)(word >> 16), (uint8_t)(word >> 24), (uint32_t)(word >> 32)};
    }
    uint32_t own_pid = (uint32_t)getpid();
    for (size_t index = 0; index < slot_count; index++) {
        uint32_t slot = self_slots[index];
        if (slot >= count || BPF_CLASS(program[slot].code) != BPF_JMP || BPF_SRC(program[slot].code) != BPF_K) {
            snprintf(message, size, "pid slot %u is not a comparison of the filter", slot);
            free(program);
            return -1;
        }
        program[slot].k = own_pid;
    }
    struct sock_fprog whole = {(unsigned short)count, program};
    int status = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &whole);
    if (status != 0 && errno == ENOSYS) status = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &whole, 0, 0);
    int failure = status == 0 ? 0 : errno;
    free(program);
    if (failure != 0) {
        snprintf(message, size, "seccomp(SECCOMP_SET_MODE_FILTER) failed: %s", strerror(failure));
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
