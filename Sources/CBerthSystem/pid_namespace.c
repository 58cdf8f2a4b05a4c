/*
 * The worker's PID namespace (Docs/worker-sandbox.md). A process that is PID 1 of its
 * namespace cannot die of a signal it raises itself without a handler (abort's SIGABRT), so
 * the worker does not become PID 1: three processes take part.
 *
 *   waiter  the process the host spawned (the host's pid for the worker). It starts `init`
 *           in a new PID namespace, then the worker as its own child there, then waits for
 *           it alone, holding no descriptor of the worker's and no share of its memory
 *           (`shed_memory`), and ends exactly as the worker ended: the same exit status, or
 *           the same signal raised with its default action. It does not wait for init.
 *   init    PID 1 of the namespace, started with CLONE_VM on a small stack of its own: it
 *           shares the waiter's memory (no copy of a large Swift process to make, and one
 *           process to shed memory instead of two) and runs raw system calls only (it shares
 *           the waiter's errno too). It makes the namespace's mount namespace with a /proc of
 *           the namespace (a probe: where that is refused, it says so and ends, and the
 *           waiter goes on as the worker, unchanged), then only reaps. It dies with the
 *           waiter (PR_SET_PDEATHSIG), after it; the kernel then kills whatever is left in the
 *           namespace, and init's end tears down the mount namespace, off the way from the
 *           worker's end to the host.
 *   worker  the process that goes on serving the channel: a copy of the waiter made with
 *           clone3's set_tid so that, in the namespace, its pid is the waiter's pid (and its
 *           one thread's id the waiter's thread id). Every pid and thread id cached before
 *           the copy (glibc's, libdispatch's thread-bound main queue and its lock owners)
 *           stays true inside, and no fork handler runs. It joins init's mount namespace,
 *           where it builds its root; since init is in it too, the worker's end does not
 *           tear it down.
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
#include "raw_call.h"

#ifndef CLONE_NEWPID
#define CLONE_NEWPID 0x20000000
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef CLONE_PIDFD
#define CLONE_PIDFD 0x00001000
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
 * Unmaps what a process that only waits does not need, so the waiter (and init, which shares
 * its memory) hold no share of the worker's memory: a copy-on-write page the worker changes
 * is not kept twice, and their PSS is a few pages. Kept: the files holding this code and
 * libc's syscall() (the executable, libc; their read-only parts dropped from memory, to
 * fault in as used), the stack, the mapping holding the thread's own block (errno, the
 * stack guard, glibc's rseq area the kernel writes), the kernel's own mappings, and the
 * mapping overlapping [also_start, also_end) (init's stack). Reads /proc/self/maps into the
 * stack first.
 */
static void shed_memory(uintptr_t also_start, uintptr_t also_end) {
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
        int stays = m.kernel || contains(&m, stack) || contains(&m, thread) || (uintptr_t)text >= m.start && (uintptr_t)text < m.end ||
                    (m.start < also_end && m.end > also_start);
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




/* What init is given; it lives on the waiter's stack, which init shares (CLONE_VM). */
struct init_start {
    int report;        /* write end: init's start_report */
    int waiter;        /* a pidfd of the waiter: readable once it ended */
};

static _Noreturn void init_leave(int code) {
    for (;;) raw_call(SYS_exit_group, code, 0, 0, 0);
}

static void init_report(int report, int failure, const char *what) {
    struct start_report start;
    memset(&start, 0, sizeof start);
    start.failure = failure;
    for (size_t index = 0; what[index] != '\0' && index + 1 < sizeof start.what; index++) start.what[index] = what[index];
    const char *cursor = (const char *)&start;
    for (size_t left = sizeof start; left > 0;) {
        long written = raw_call(SYS_write, report, (long)cursor, (long)left, 0);
        if (written == -EINTR) continue;
        if (written <= 0) return;
        cursor += written;
        left -= (size_t)written;
    }
}

/*
 * Init: PID 1 of the namespace, started on its own small stack with the waiter's memory
 * (CLONE_VM: no copy to make, nothing to shed) and a copy of its descriptors. It makes the
 * namespace's mount namespace (private, the namespace's /proc mounted on /proc: the probe),
 * which the worker joins; so init holds it, and its teardown (an RCU grace period) happens
 * when init ends, after the waiter, not on the way from the worker's end to the host. Then
 * it reaps whatever ends in the namespace until it is killed: it dies with the waiter
 * (PR_SET_PDEATHSIG), and the kernel then kills whatever is left in the namespace.
 */
static int run_init(void *argument) {
    struct init_start *given = argument;
    int report = given->report, waiter = given->waiter;
    raw_call(SYS_prctl, PR_SET_NAME, (long)"berth-ns-init", 0, 0);
    raw_call(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0);
    /* The waiter's handlers may be unmapped when it sheds its memory: none here, and every
     * signal blocked (SIGKILL still ends it); SIGCHLD is waited for below. */
    uint64_t all = ~0ULL;
    raw_call(SYS_rt_sigprocmask, SIG_SETMASK, (long)&all, 0, sizeof all);
    for (int number = 1; number < 65; number++) {
        if (number == SIGKILL || number == SIGSTOP) continue;
        struct kernel_action fresh = {(uintptr_t)SIG_DFL, 0, 0, 0};
        raw_call(SYS_rt_sigaction, number, (long)&fresh, 0, sizeof fresh.mask);
    }
    /* The waiter already gone (before the death signal was asked for): end. */
    struct pollfd ended = {waiter, POLLIN, 0};
    if (raw_call(SYS_poll, (long)&ended, 1, 0, 0) == 1) init_leave(1);
    /* Only the report's end stays open: the channel and stderr are the worker's alone. */
    if (report > 0) raw_call(SYS_close_range, 0, report - 1, 0, 0);
    raw_call(SYS_close_range, report + 1, ~0U, 0, 0);
    long failure = raw_call(SYS_unshare, CLONE_NEWNS, 0, 0, 0);
    if (failure < 0) {
        init_report(report, (int)-failure, "unshare(CLONE_NEWNS)");
        init_leave(1);
    }
    failure = raw_call(SYS_mount, 0, (long)"/", 0, MS_REC | MS_PRIVATE);
    if (failure < 0) {
        init_report(report, (int)-failure, "making / private");
        init_leave(1);
    }
    /* Where a user namespace may not mount one (a /proc with parts mounted over), it says so
     * and ends, and the waiter goes on as the worker, unchanged. */
    failure = raw_call(SYS_mount, (long)"proc", (long)"/proc", (long)"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC);
    if (failure < 0) {
        init_report(report, (int)-failure, "cannot mount a /proc of its own");
        init_leave(1);
    }
    init_report(report, 0, "");
    raw_call(SYS_close, report, 0, 0, 0);
    uint64_t child = 1ULL << (SIGCHLD - 1);
    for (;;) {
        raw_call(SYS_rt_sigtimedwait, (long)&child, 0, 0, sizeof child);
        while (raw_call(SYS_wait4, -1, 0, WNOHANG | __WALL, 0) > 0) {}
    }
}

/* Ends init (when the worker could not be started) and reaps it. */
static void end_init(pid_t init) {
    int status;
    kill(init, SIGKILL);
    while (waitpid(init, &status, __WALL) < 0 && errno == EINTR) {}
}

int berth_enter_pid_namespace(char *message, size_t size) {
#define FAIL(code, ...)                          \
    do {                                         \
        snprintf(message, size, __VA_ARGS__);    \
        return (code);                           \
    } while (0)
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) FAIL(errno, "pipe2: %s", strerror(errno));
    int waiter = (int)syscall(SYS_pidfd_open, getpid(), 0);
    if (waiter < 0) {
        int failure = errno;
        close(report[0]);
        close(report[1]);
        FAIL(failure, "pidfd_open of itself: %s", strerror(failure));
    }
    /* Init's stack: a small mapping of its own in the shared memory. */
    size_t stack_size = 64 * 1024;
    char *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED) {
        int failure = errno;
        close(report[0]);
        close(report[1]);
        close(waiter);
        FAIL(failure, "mmap of init's stack: %s", strerror(failure));
    }
    struct init_start given = {report[1], waiter};
    int init_handle = -1;
    pid_t init = clone(run_init, stack + stack_size, CLONE_NEWPID | CLONE_VM | CLONE_PIDFD | SIGCHLD, &given, &init_handle);
    int clone_failure = errno;
    close(report[1]);
    close(waiter);
    if (init < 0) {
        close(report[0]);
        munmap(stack, stack_size);
        FAIL(clone_failure, "clone(CLONE_NEWPID | CLONE_VM): %s", strerror(clone_failure));
    }
    struct start_report start;
    if (read_all(report[0], &start, sizeof start) != 0) {
        start.failure = ECHILD;
        snprintf(start.what, sizeof start.what, "its init ended before it made its /proc");
    }
    close(report[0]);
    if (start.failure != 0) {
        end_init(init);
        close(init_handle);
        munmap(stack, stack_size);
        start.what[sizeof start.what - 1] = '\0';
        FAIL(start.failure, "%s: %s", start.what, strerror(start.failure));
    }
    /*
     * From here there is no way back: this process's next child is in init's namespace, and
     * a process whose children go to another PID namespace can start no thread. A failure
     * is returned negated, and confining fails.
     */
    if (setns(init_handle, CLONE_NEWPID) != 0) {
        int failure = errno;
        end_init(init);
        close(init_handle);
        munmap(stack, stack_size);
        FAIL(failure, "setns to init's PID namespace: %s", strerror(failure));
    }
    int started[2];
    if (pipe2(started, O_CLOEXEC) != 0) {
        int failure = errno;
        end_init(init);
        FAIL(-failure, "pipe2: %s", strerror(failure));
    }
    pid_t own = getpid();
    void *robust_head = NULL;
    size_t robust_length = 0;
    syscall(SYS_get_robust_list, 0, &robust_head, &robust_length);
    char name[16] = "";
    prctl(PR_GET_NAME, name);
    struct berth_clone_args arguments;
    memset(&arguments, 0, sizeof arguments);
    arguments.exit_signal = SIGCHLD;
    uint64_t wanted = (uint64_t)own;
    arguments.set_tid = (uint64_t)(uintptr_t)&wanted;
    arguments.set_tid_size = 1;
    pid_t worker = (pid_t)syscall(SYS_clone3, &arguments, sizeof arguments);
    if (worker == 0) {
        /* The worker: glibc's robust-mutex list again (a new process starts without one;
         * glibc's fork would register it), its own name, the waiter's end as its own, and
         * init's mount namespace (with the namespace's /proc). */
        int failure = 0;
        if (robust_length != 0) syscall(SYS_set_robust_list, robust_head, robust_length);
        prctl(PR_SET_NAME, name);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (setns(init_handle, CLONE_NEWNS) != 0) failure = errno;
        close(init_handle);
        munmap(stack, stack_size);
        write_all(started[1], &failure, sizeof failure);
        close(started[0]);
        close(started[1]);
        if (failure != 0) _exit(1);
        return 0;
    }
    int failure = worker < 0 ? errno : 0;
    close(started[1]);
    if (worker > 0 && read_all(started[0], &failure, sizeof failure) != 0) failure = ECHILD;
    close(started[0]);
    if (failure != 0) {
        if (worker > 0) waited(worker, &(int){0});
        end_init(init);
        FAIL(-failure, "%s: %s", worker < 0 ? "clone3 of the worker with its pid" : "the worker joining init's mount namespace",
             strerror(failure));
    }
    /* The waiter, from here on, named for `ps` (the worker may answer the host before this
     * runs: the host finds the worker as the child with the waiter's pid inside, not by this
     * name; WorkerProcess.pluginPID). It does not wait for init: init dies with it, after it. */
    prctl(PR_SET_NAME, BERTH_PID_NAMESPACE_WAITER_NAME);
    syscall(SYS_close_range, 0U, ~0U, 0U);
    shed_memory((uintptr_t)stack, (uintptr_t)stack + stack_size);
    int status = 0;
    if (waited(worker, &status) < 0) status = SIGKILL;
    end_like(status);
#undef FAIL
}
