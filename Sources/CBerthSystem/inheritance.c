/*
 * What a worker inherits (Docs/security.md): its session, its descriptors, its
 * capabilities, its memory and the OOM killer's view of it. Swift's Glibc module cannot
 * reach these (variadic prctl, _GNU_SOURCE, the capability system calls).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "berth_system.h"

int berth_spawn_attributes_init(void *attributes) {
    posix_spawnattr_t *spawn = (posix_spawnattr_t *)attributes;
    int failure = posix_spawnattr_init(spawn);
    if (failure != 0) return failure;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if ((failure = posix_spawnattr_setsigmask(spawn, &none)) != 0 || (failure = posix_spawnattr_setsigdefault(spawn, &all)) != 0 ||
        (failure = posix_spawnattr_setflags(spawn, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID)) != 0) {
        posix_spawnattr_destroy(spawn);
        return failure;
    }
    return 0;
}

int berth_spawn_close_from(void *actions, int first) {
    return posix_spawn_file_actions_addclosefrom_np((posix_spawn_file_actions_t *)actions, first);
}

int berth_drop_capabilities(void) {
    /* Root keeps no special standing: uid 0 gains nothing at exec, setuid keeps nothing,
     * and the bits are locked. Needs CAP_SETPCAP, so only a process that has it does this. */
    if (prctl(PR_CAPBSET_READ, CAP_SETPCAP, 0UL, 0UL, 0UL) == 1) {
        unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP | SECBIT_NO_SETUID_FIXUP_LOCKED |
                             SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
        if (prctl(PR_SET_SECUREBITS, bits, 0UL, 0UL, 0UL) != 0 && errno != EPERM) return errno;
    }
    /* The bounding set, cleared up to the last capability this kernel knows (EINVAL past
     * it); EPERM is a process without CAP_SETPCAP, whose bounding set cannot grow its
     * capabilities anyway under no_new_privs. */
    for (unsigned long capability = 0; capability < 64; capability++) {
        if (prctl(PR_CAPBSET_DROP, capability, 0UL, 0UL, 0UL) == 0) continue;
        if (errno == EINVAL) break;
        if (errno != EPERM) return errno;
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0UL, 0UL, 0UL) != 0 && errno != EINVAL) return errno;
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    memset(data, 0, sizeof data);
    if (syscall(SYS_capset, &header, data) != 0) return errno;
    return 0;
}

int berth_capabilities_held(uint64_t *effective, uint64_t *bounding) {
    struct __user_cap_header_struct header = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    if (syscall(SYS_capget, &header, data) != 0) return errno;
    *effective = (uint64_t)data[0].effective | (uint64_t)data[1].effective << 32;
    *bounding = 0;
    for (unsigned long capability = 0; capability < 64; capability++) {
        int held = prctl(PR_CAPBSET_READ, capability, 0UL, 0UL, 0UL);
        if (held < 0) break;
        if (held == 1) *bounding |= 1ULL << capability;
    }
    return 0;
}

int berth_set_memory_limit(uint64_t bytes) {
    struct rlimit limit = {bytes, bytes};
    return setrlimit(RLIMIT_DATA, &limit) == 0 ? 0 : errno;
}

int berth_set_file_size_limit(uint64_t bytes) {
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {bytes, bytes};
    return setrlimit(RLIMIT_FSIZE, &limit) == 0 ? 0 : errno;
}

int berth_set_thread_limit(uint64_t count) {
    struct rlimit limit = {count, count};
    return setrlimit(RLIMIT_NPROC, &limit) == 0 ? 0 : errno;
}

int berth_set_oom_score_adjustment(int value) {
    int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    char text[16];
    int length = snprintf(text, sizeof text, "%d", value);
    int failure = write(fd, text, (size_t)length) == length ? 0 : errno;
    close(fd);
    return failure;
}
