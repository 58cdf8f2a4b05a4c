/*
 * Reporting the calls the worker's system-call filter refuses (Docs/security.md). The
 * filter answers a refused call with SECCOMP_RET_TRAP: the kernel does not run it and
 * sends SIGSYS to the calling thread, whose handler (here) makes the call return -EPERM by
 * writing the return register in the saved context, as Chromium's seccomp-bpf sandbox
 * does, and writes a small record of the call to a pipe. A thread of the worker reads the
 * pipe and tells the host, which emits a `denied` event. The handler only uses what is
 * async-signal-safe (write on a non-blocking pipe; a full pipe drops the record).
 *
 * x86_64 only: another architecture's filter returns EPERM directly (no event). Every call
 * the policy table (seccomp_policy.c) does not allow arrives here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "berth_system.h"

/* siginfo's si_code for a SIGSYS raised by seccomp (the kernel's SYS_SECCOMP). */
#define BERTH_SYS_SECCOMP 1

/* One refused call, as the handler writes it to the pipe. */
struct berth_refused_call {
    int32_t number;
    int32_t reserved;
    uint64_t arguments[2];
};

/* The pipe's write end: set once, before the filter loads. */
static volatile int refusal_pipe = -1;

#if defined(__x86_64__)
static void on_refused_call(int signal, siginfo_t *info, void *context) {
    (void)signal;
    /* Only the kernel's seccomp trap: a SIGSYS sent with kill or raise changes nothing. */
    if (info->si_code != BERTH_SYS_SECCOMP || info->si_arch != AUDIT_ARCH_X86_64) return;
    int saved = errno;
    ucontext_t *state = context;
    struct berth_refused_call record = {info->si_syscall, 0,
                                        {(uint64_t)state->uc_mcontext.gregs[REG_RDI], (uint64_t)state->uc_mcontext.gregs[REG_RSI]}};
    state->uc_mcontext.gregs[REG_RAX] = -EPERM;
    if (refusal_pipe >= 0) (void)!write(refusal_pipe, &record, sizeof record);
    errno = saved;
}
#endif

int berth_seccomp_trap_install(void) {
#if defined(__x86_64__)
    int ends[2];
    if (pipe2(ends, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
    /* The reader blocks; the handler never does. */
    if (fcntl(ends[0], F_SETFL, 0) != 0) {
        close(ends[0]);
        close(ends[1]);
        return -1;
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_refused_call;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGSYS, &action, NULL) != 0) {
        close(ends[0]);
        close(ends[1]);
        return -1;
    }
    refusal_pipe = ends[1];
    return ends[0];
#else
    errno = ENOSYS;
    return -1;
#endif
}

static const char *family_name(uint64_t family) {
    switch ((int)family) {
    case AF_UNIX: return "AF_UNIX";
    case AF_INET: return "AF_INET";
    case AF_INET6: return "AF_INET6";
    case AF_NETLINK: return "AF_NETLINK";
    case AF_PACKET: return "AF_PACKET";
    default: return NULL;
    }
}

/* The call as a person reads it: "execve", "socket(AF_UNIX)", "fork (clone without CLONE_THREAD)". */
static void describe(const struct berth_refused_call *call, char *text, size_t size) {
    switch (call->number) {
    case SYS_execve: snprintf(text, size, "execve"); return;
    case SYS_execveat: snprintf(text, size, "execveat"); return;
#ifdef SYS_fork
    case SYS_fork: snprintf(text, size, "fork"); return;
#endif
#ifdef SYS_vfork
    case SYS_vfork: snprintf(text, size, "vfork"); return;
#endif
    case SYS_clone:
        snprintf(text, size, "%s", (call->arguments[0] & CLONE_VFORK) ? "vfork (clone with CLONE_VFORK)" : "fork (clone without CLONE_THREAD)");
        return;
    case SYS_rt_sigaction: snprintf(text, size, "rt_sigaction(SIGSYS)"); return;
    case SYS_socket: {
        const char *family = family_name(call->arguments[0] & 0xffffffffULL);
        unsigned type = (unsigned)(call->arguments[1] & 0xf);
        const char *kind = type == SOCK_RAW ? ", SOCK_RAW" : type == SOCK_DGRAM ? ", SOCK_DGRAM" : "";
        if (family) snprintf(text, size, "socket(%s%s)", family, kind);
        else snprintf(text, size, "socket(family %u%s)", (unsigned)(call->arguments[0] & 0xffffffffULL), kind);
        return;
    }
    case SYS_ioctl: {
        unsigned long request = (unsigned long)(call->arguments[1] & 0xffffffffULL);
        if (request == TIOCSTI) snprintf(text, size, "ioctl(TIOCSTI)");
        else if (request == TIOCLINUX) snprintf(text, size, "ioctl(TIOCLINUX)");
        else snprintf(text, size, "ioctl(0x%lx)", request);
        return;
    }
    case SYS_prlimit64: snprintf(text, size, "prlimit64 of another process"); return;
    case SYS_kill: snprintf(text, size, "kill of another process"); return;
    case SYS_tgkill: snprintf(text, size, "tgkill of another process"); return;
    /* Named by the host (berth_seccomp_call_name), so the worker never opens libseccomp. */
    default: snprintf(text, size, "system call %d", call->number); return;
    }
}

int berth_seccomp_next_refusal(int descriptor, char *text, size_t size) {
    struct berth_refused_call call;
    size_t filled = 0;
    while (filled < sizeof call) {
        ssize_t count = read(descriptor, (char *)&call + filled, sizeof call - filled);
        if (count < 0 && errno == EINTR) continue;
        if (count <= 0) return -1;
        filled += (size_t)count;
    }
    describe(&call, text, size);
    return (int)strlen(text);
}
