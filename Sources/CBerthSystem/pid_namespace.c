/*
 * The worker's PID namespace (Docs/worker-sandbox.md). A process that is PID 1 of its
 * namespace cannot die of a signal it raises itself without a handler (abort's SIGABRT), so
 * the worker does not become PID 1: three processes take part.
 *
 *   waiter  the process the host spawned (the host's pid for the worker). It clones
 *           `init` into a new PID namespace, then waits, holding no descriptor of the
 *           worker's, and ends exactly as the worker ended: the same exit status, or the
 *           same signal raised with its default action.
 *   init    PID 1 of the namespace: mounts a /proc of the namespace in a mount namespace of
 *           its own (a probe: where that is refused, nothing is made and the waiter goes on
 *           as the worker, unchanged), starts the worker, reaps whatever ends in the
 *           namespace, and reports the worker's wait status to the waiter. When it ends, the
 *           kernel kills everything left in the namespace; it dies with the waiter
 *           (PR_SET_PDEATHSIG), and the waiter dies with the host.
 *   worker  the process that goes on serving the channel: a copy of the waiter made with
 *           clone3's set_tid so that, in the namespace, its pid is the waiter's pid (and its
 *           one thread's id the waiter's thread id). Every pid and thread id cached before
 *           the copy (glibc's, libdispatch's thread-bound main queue and its lock owners)
 *           stays true inside, and no fork handler runs.
 *
 * No glibc fork is used: its fork handlers (libdispatch's) would poison a process that has
 * used dispatch. All of it runs while the process has one thread, before any plugin code.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "berth_system.h"

#ifndef CLONE_NEWPID
#define CLONE_NEWPID 0x20000000
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

/* The kernel's struct clone_args up to set_tid_size (CLONE_ARGS_SIZE_VER1). */
struct berth_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size;
};

/* What init tells the waiter first: the worker runs (0), or why nothing was made. */
struct start_report {
    int32_t failure;
    char what[96];
};

static void write_all(int descriptor, const void *bytes, size_t length) {
    const char *cursor = bytes;
    while (length > 0) {
        ssize_t written = write(descriptor, cursor, length);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return;
        cursor += written;
        length -= (size_t)written;
    }
}

static int read_all(int descriptor, void *bytes, size_t length) {
    char *cursor = bytes;
    while (length > 0) {
        ssize_t got = read(descriptor, cursor, length);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) return -1;
        cursor += got;
        length -= (size_t)got;
    }
    return 0;
}

/* Every descriptor but `keep` closed: the channel, stderr and libdispatch's stay the worker's alone. */
static void close_all_but(int keep) {
    if (keep > 0) syscall(SYS_close_range, 0U, (unsigned)keep - 1, 0U);
    syscall(SYS_close_range, (unsigned)keep + 1, ~0U, 0U);
}

static _Noreturn void end_like(int status) {
    if (WIFEXITED(status)) _exit(WEXITSTATUS(status));
    int signal_number = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
    /* The worker's core (if it left one) is the one that matters; this one adds nothing. */
    if (!WCOREDUMP(status)) {
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_CORE, &none);
    }
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = SIG_DFL;
    sigaction(signal_number, &action, NULL);
    sigset_t only;
    sigemptyset(&only);
    sigaddset(&only, signal_number);
    sigprocmask(SIG_UNBLOCK, &only, NULL);
    raise(signal_number);
    /* A signal whose default is to be ignored cannot have ended the worker; be safe. */
    _exit(128 + signal_number);
}

/* Init's part; returns in the worker only. */
static void run_init(int report, pid_t worker_pid, uint64_t robust_head, uint64_t robust_length) {
    struct start_report start = {0, ""};
    /* Named for `ps` and for the host, which finds the worker beneath it (WorkerProcess.pluginPID). */
    prctl(PR_SET_NAME, "berth-ns-init");
    /* Dies with the waiter; if the waiter is gone already, the report pipe says so. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    struct pollfd peer = {report, 0, 0};
    if (poll(&peer, 1, 0) == 1 && (peer.revents & (POLLERR | POLLHUP))) _exit(1);
    /* The worker builds its root with a /proc of this namespace; where a user namespace may
     * not mount one (a /proc with parts mounted over), say so before anything is made. */
    if (unshare(CLONE_NEWNS) != 0) {
        start.failure = errno;
        snprintf(start.what, sizeof start.what, "unshare(CLONE_NEWNS) in its init");
    } else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        start.failure = errno;
        snprintf(start.what, sizeof start.what, "making / private in its init");
    } else if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
        start.failure = errno;
        snprintf(start.what, sizeof start.what, "cannot mount a /proc of its own");
    }
    pid_t worker = -1;
    if (start.failure == 0) {
        struct berth_clone_args arguments;
        memset(&arguments, 0, sizeof arguments);
        arguments.exit_signal = SIGCHLD;
        uint64_t wanted = (uint64_t)worker_pid;
        arguments.set_tid = (uint64_t)(uintptr_t)&wanted;
        arguments.set_tid_size = 1;
        worker = (pid_t)syscall(SYS_clone3, &arguments, sizeof arguments);
        if (worker == 0) {
            /* The worker: glibc's robust-mutex list again (a new process starts without
             * one; glibc's fork would register it), then back to its caller. */
            if (robust_length != 0) syscall(SYS_set_robust_list, (void *)(uintptr_t)robust_head, (size_t)robust_length);
            close(report);
            return;
        }
        if (worker < 0) {
            start.failure = errno;
            snprintf(start.what, sizeof start.what, "clone3 of the worker with its pid");
        }
    }
    write_all(report, &start, sizeof start);
    if (start.failure != 0) _exit(1);
    close_all_but(report);
    int status = 0;
    for (;;) {
        int ended = 0;
        pid_t reaped = waitpid(-1, &ended, 0);
        if (reaped < 0 && errno == EINTR) continue;
        if (reaped < 0) break;
        if (reaped == worker) {
            status = ended;
            break;
        }
    }
    write_all(report, &status, sizeof status);
    _exit(0);
}

int berth_enter_pid_namespace(char *message, size_t size) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) {
        snprintf(message, size, "pipe2: %s", strerror(errno));
        return errno;
    }
    pid_t own = getpid();
    void *robust_head = NULL;
    size_t robust_length = 0;
    syscall(SYS_get_robust_list, 0, &robust_head, &robust_length);
    pid_t init = (pid_t)syscall(SYS_clone, CLONE_NEWPID | SIGCHLD, NULL, NULL, NULL, NULL);
    if (init < 0) {
        int failure = errno;
        close(report[0]);
        close(report[1]);
        snprintf(message, size, "clone(CLONE_NEWPID): %s", strerror(failure));
        return failure;
    }
    if (init == 0) {
        close(report[0]);
        run_init(report[1], own, (uint64_t)(uintptr_t)robust_head, (uint64_t)robust_length);
        /* Returns in the worker only. */
        return 0;
    }
    close(report[1]);
    struct start_report start;
    if (read_all(report[0], &start, sizeof start) != 0) {
        start.failure = ECHILD;
        snprintf(start.what, sizeof start.what, "its init ended before it started the worker");
    }
    if (start.failure != 0) {
        int status;
        while (waitpid(init, &status, 0) < 0 && errno == EINTR) {}
        close(report[0]);
        start.what[sizeof start.what - 1] = '\0';
        snprintf(message, size, "%s: %s", start.what, strerror(start.failure));
        return start.failure;
    }
    /* The waiter, from here on; the host knows it by this name (WorkerProcess.pluginPID). */
    prctl(PR_SET_NAME, BERTH_PID_NAMESPACE_WAITER_NAME);
    close_all_but(report[0]);
    int worker_status;
    int reported = read_all(report[0], &worker_status, sizeof worker_status);
    int init_status = 0;
    while (waitpid(init, &init_status, 0) < 0 && errno == EINTR) {}
    /* Without a report init was killed (SIGKILL from the host): end as it did. */
    end_like(reported == 0 ? worker_status : init_status);
}
