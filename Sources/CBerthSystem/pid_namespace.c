/*
 * The worker's PID namespace (Docs/worker-sandbox.md). A process that is PID 1 of its
 * namespace cannot die of a signal it raises itself without a handler (abort's SIGABRT), so
 * the worker does not become PID 1: three processes take part.
 *
 *   waiter  the process the host spawned (the host's pid for the worker). It clones
 *           `init` into a new PID namespace, then waits, holding no descriptor of the
 *           worker's and no share of its memory (`shed_memory`), and ends exactly as the
 *           worker ended: the same exit status, or the
 *           same signal raised with its default action.
 *   init    PID 1 of the namespace: starts the worker, reaps whatever ends in the
 *           namespace, and reports the worker's wait status to the waiter. When it ends, the
 *           kernel kills everything left in the namespace; it dies with the waiter
 *           (PR_SET_PDEATHSIG), and the waiter dies with the host.
 *   worker  the process that goes on serving the channel: a copy of the waiter made with
 *           clone3's set_tid so that, in the namespace, its pid is the waiter's pid (and its
 *           one thread's id the waiter's thread id). Every pid and thread id cached before
 *           the copy (glibc's, libdispatch's thread-bound main queue and its lock owners)
 *           stays true inside, and no fork handler runs. It first makes a mount namespace
 *           of its own with a /proc of the namespace (a probe: where that is refused, it
 *           says so and ends, and the waiter goes on as the worker, unchanged). Init keeps
 *           the host's mount namespace, so its end tears down no mount tree of its own.
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
#include <sys/mman.h>
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

/* What the waiter is told first, by the worker (its /proc is mounted: 0) or by init (the
 * worker could not be started): 0, or errno and why nothing was made. */
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

/* The kernel's struct sigaction (rt_sigaction), without a restorer: only SIG_DFL is set. */
struct kernel_action {
    uintptr_t handler;
    unsigned long flags;
    uintptr_t restorer;
    uint64_t mask;
};

/* After `shed_memory` only libc's syscall(), this file's code, the stack and the thread's
 * own block (errno, the stack guard, rseq) are left: everything below calls syscall alone. */
static long waited(pid_t pid, int *status) {
    long result;
    do {
        result = syscall(SYS_wait4, pid, status, 0, NULL);
    } while (result < 0 && errno == EINTR);
    return result;
}

static int transfer(int descriptor, void *bytes, size_t length, int writing) {
    char *cursor = bytes;
    while (length > 0) {
        long done = syscall(writing ? SYS_write : SYS_read, descriptor, cursor, length);
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return -1;
        cursor += done;
        length -= (size_t)done;
    }
    return 0;
}

static _Noreturn void leave(int code) {
    for (;;) syscall(SYS_exit_group, code);
}

/* Every handler back to its default: a handler's code may be unmapped by shed_memory. */
static void default_handlers(void) {
    for (int number = 1; number < 65; number++) {
        if (number == SIGKILL || number == SIGSTOP) continue;
        struct kernel_action current;
        if (syscall(SYS_rt_sigaction, number, NULL, &current, sizeof current.mask) != 0) continue;
        if (current.handler == (uintptr_t)SIG_DFL || current.handler == (uintptr_t)SIG_IGN) continue;
        struct kernel_action fresh = {(uintptr_t)SIG_DFL, 0, 0, 0};
        syscall(SYS_rt_sigaction, number, &fresh, NULL, sizeof fresh.mask);
    }
}

static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

static const char *parse_hex(const char *cursor, uint64_t *value) {
    *value = 0;
    for (int digit; (digit = hex_digit(*cursor)) >= 0; cursor++) *value = *value << 4 | (uint64_t)digit;
    return cursor;
}

static const char *skip_field(const char *cursor, const char *end) {
    while (cursor < end && *cursor != ' ' && *cursor != '\n') cursor++;
    while (cursor < end && *cursor == ' ') cursor++;
    return cursor;
}

/* One line of /proc/self/maps: its range, its device and inode, and whether it is one of the
 * kernel's own ([vdso], [vvar], [vsyscall]). */
struct mapping {
    uint64_t start, end, inode;
    char device[16];
    int kernel, writable;
};

static const char *parse_mapping(const char *cursor, const char *end, struct mapping *out) {
    memset(out, 0, sizeof *out);
    cursor = parse_hex(cursor, &out->start);
    if (*cursor == '-') cursor = parse_hex(cursor + 1, &out->end);
    cursor = skip_field(cursor, end);  /* to the permissions */
    out->writable = cursor + 1 < end && cursor[1] == 'w';
    cursor = skip_field(cursor, end);  /* to the offset */
    cursor = skip_field(cursor, end);  /* to the device */
    size_t length = 0;
    while (cursor < end && *cursor != ' ' && length + 1 < sizeof out->device) out->device[length++] = *cursor++;
    cursor = skip_field(cursor, end);
    while (cursor < end && *cursor >= '0' && *cursor <= '9') out->inode = out->inode * 10 + (uint64_t)(*cursor++ - '0');
    while (cursor < end && *cursor == ' ') cursor++;
    out->kernel = cursor + 2 < end && cursor[0] == '[' && cursor[1] == 'v';
    while (cursor < end && *cursor != '\n') cursor++;
    return cursor < end ? cursor + 1 : end;
}

static int contains(const struct mapping *m, uintptr_t address) { return address >= m->start && address < m->end; }

/*
 * Unmaps what a process that only waits does not need, so the waiter and init hold no share
 * of the worker's memory: a copy-on-write page the worker changes is not kept twice, and
 * their PSS is a few pages. Kept: the files holding this code and libc's syscall() (the
 * executable, libc; their read-only parts dropped from memory, to fault in as used), the stack, the mapping holding the thread's own block (errno, the
 * stack guard, glibc's rseq area the kernel writes), and the kernel's own mappings.
 * Reads /proc/self/maps into the stack first.
 */
static void shed_memory(void) {
    default_handlers();
    char text[192 * 1024];
    size_t length = 0;
    int maps = (int)syscall(SYS_open, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (maps < 0) return;
    for (long got; length < sizeof text && (got = syscall(SYS_read, maps, text + length, sizeof text - length)) > 0;) length += (size_t)got;
    syscall(SYS_close, maps);
    /* Only whole lines. */
    while (length > 0 && text[length - 1] != '\n') length--;
    uintptr_t code = (uintptr_t)&shed_memory, call = (uintptr_t)&syscall, stack = (uintptr_t)__builtin_frame_address(0), thread = 0;
    syscall(SYS_arch_prctl, 0x1003 /* ARCH_GET_FS */, &thread);
    struct mapping keep[2];
    int kept = 0;
    for (const char *cursor = text, *end = text + length; cursor < end && kept < 2;) {
        struct mapping m;
        cursor = parse_mapping(cursor, end, &m);
        if (m.inode != 0 && (contains(&m, code) || contains(&m, call))) keep[kept++] = m;
    }
    if (kept == 0) return;
    /* Neighbouring mappings that go are unmapped in one call (a hole between them is no
     * error): a few calls instead of one per line. */
    uint64_t going_start = 0, going_end = 0;
    for (const char *cursor = text, *end = text + length; cursor < end;) {
        struct mapping m;
        cursor = parse_mapping(cursor, end, &m);
        int stays = m.kernel || contains(&m, stack) || contains(&m, thread) || (uintptr_t)text >= m.start && (uintptr_t)text < m.end;
        int same_file = 0;
        for (int index = 0; !stays && index < kept; index++) {
            if (m.inode == keep[index].inode && strcmp(m.device, keep[index].device) == 0) same_file = 1;
        }
        if (!stays && !same_file) {
            if (going_end == 0) going_start = m.start;
            going_end = m.end;
            continue;
        }
        if (going_end != 0) syscall(SYS_munmap, (void *)(uintptr_t)going_start, (size_t)(going_end - going_start));
        going_start = going_end = 0;
        if (stays) continue;
        if (!m.writable) {
            /* Code and read-only data stay mapped but not resident here: the few pages still
             * run fault in again. (Writable ones hold relocations: they stay as they are.) */
            syscall(SYS_madvise, (void *)(uintptr_t)m.start, (size_t)(m.end - m.start), MADV_DONTNEED);
        }
    }
    if (going_end != 0) syscall(SYS_munmap, (void *)(uintptr_t)going_start, (size_t)(going_end - going_start));
    /* The copy of /proc/self/maps is read: its stack pages go too (about 15 of them). */
    uintptr_t first = ((uintptr_t)text + 4095) & ~(uintptr_t)4095, last = ((uintptr_t)text + sizeof text) & ~(uintptr_t)4095;
    if (last > first) syscall(SYS_madvise, (void *)first, (size_t)(last - first), MADV_DONTNEED);
}

static _Noreturn void end_like(int status) {
    if (WIFEXITED(status)) leave(WEXITSTATUS(status));
    int signal_number = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
    /* The worker's core (if it left one) is the one that matters; this one adds nothing. */
    if (!WCOREDUMP(status)) {
        uint64_t none[2] = {0, 0};
        syscall(SYS_prlimit64, 0, RLIMIT_CORE, none, NULL);
    }
    struct kernel_action fresh = {(uintptr_t)SIG_DFL, 0, 0, 0};
    syscall(SYS_rt_sigaction, signal_number, &fresh, NULL, sizeof fresh.mask);
    uint64_t only = 1ULL << (signal_number - 1);
    syscall(SYS_rt_sigprocmask, SIG_UNBLOCK, &only, NULL, sizeof only);
    syscall(SYS_tgkill, syscall(SYS_getpid), syscall(SYS_gettid), signal_number);
    /* A signal whose default is to be ignored cannot have ended the worker; be safe. */
    leave(128 + signal_number);
}

/* Init's part; returns in the worker only. */
static void run_init(int report, pid_t worker_pid, uint64_t robust_head, uint64_t robust_length) {
    struct start_report start = {0, ""};
    /* Named for `ps` and for the host, which finds the worker beneath it (WorkerProcess.pluginPID). */
    char name[16] = "";
    prctl(PR_GET_NAME, name);
    prctl(PR_SET_NAME, "berth-ns-init");
    /* Dies with the waiter; if the waiter is gone already, the report pipe says so. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    struct pollfd peer = {report, 0, 0};
    if (poll(&peer, 1, 0) == 1 && (peer.revents & (POLLERR | POLLHUP))) _exit(1);
    struct berth_clone_args arguments;
    memset(&arguments, 0, sizeof arguments);
    arguments.exit_signal = SIGCHLD;
    uint64_t wanted = (uint64_t)worker_pid;
    arguments.set_tid = (uint64_t)(uintptr_t)&wanted;
    arguments.set_tid_size = 1;
    pid_t worker = (pid_t)syscall(SYS_clone3, &arguments, sizeof arguments);
    if (worker == 0) {
        /* The worker: glibc's robust-mutex list again (a new process starts without one;
         * glibc's fork would register it), and its own name. */
        if (robust_length != 0) syscall(SYS_set_robust_list, (void *)(uintptr_t)robust_head, (size_t)robust_length);
        prctl(PR_SET_NAME, name);
        /* Its root will hold a /proc of this namespace: a mount namespace of its own with one
         * mounted, now, as a probe. Where a user namespace may not mount one (a /proc with
         * parts mounted over), it says so and ends, and the waiter goes on as the worker. */
        if (unshare(CLONE_NEWNS) != 0) {
            start.failure = errno;
            snprintf(start.what, sizeof start.what, "unshare(CLONE_NEWNS)");
        } else if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
            start.failure = errno;
            snprintf(start.what, sizeof start.what, "making / private");
        } else if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0) {
            start.failure = errno;
            snprintf(start.what, sizeof start.what, "cannot mount a /proc of its own");
        }
        write_all(report, &start, sizeof start);
        close(report);
        if (start.failure != 0) _exit(1);
        return;
    }
    if (worker < 0) {
        start.failure = errno;
        snprintf(start.what, sizeof start.what, "clone3 of the worker with its pid");
        write_all(report, &start, sizeof start);
        _exit(1);
    }
    close_all_but(report);
    shed_memory();
    int status = 0;
    for (;;) {
        int ended = 0;
        long reaped = waited(-1, &ended);
        if (reaped < 0) break;
        if (reaped == worker) {
            status = ended;
            break;
        }
    }
    transfer(report, &status, sizeof status, 1);
    leave(0);
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
    shed_memory();
    int worker_status;
    int reported = transfer(report[0], &worker_status, sizeof worker_status, 0);
    int init_status = 0;
    waited(init, &init_status);
    /* Without a report init was killed (SIGKILL from the host): end as it did. */
    end_like(reported == 0 ? worker_status : init_status);
}
