/* System calls Swift's Glibc module does not expose (they need _GNU_SOURCE). */
#ifndef BERTH_SYSTEM_H
#define BERTH_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

/** The peer of a connected Unix socket: its uid and pid (SO_PEERCRED). 0 on success, else errno. */
int berth_peer_credentials(int socket_fd, uint32_t *out_uid, int32_t *out_pid);

/** A non-blocking, close-on-exec eventfd: written to wake a thread that polls it. The descriptor, or -1 with errno set. */
int berth_wake_descriptor(void);

/** `path` opened for its place only (O_PATH, close-on-exec; symlinks followed): a descriptor for fstat and /proc/self/fd, or -1 with errno set. */
int berth_open_place(const char *path);

/**
 * `path` below the folder open as `folder`, opened with `flags` (as open(2) takes them), when
 * reaching it crosses no symlink and never leaves the folder (openat2 RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS). A descriptor, or -1 with errno set (ELOOP for a symlink on the way,
 * EXDEV for a way out, ENOSYS before Linux 5.6). The caller owns the descriptor and closes it.
 */
int berth_open_beneath(int folder, const char *path, int flags);

/** Bytes the C heap has handed out and not yet taken back (mallinfo2's uordblks). */
uint64_t berth_heap_bytes_in_use(void);

/**
 * Ask the kernel to send `signal` to this process when its parent thread exits
 * (prctl PR_SET_PDEATHSIG; Swift cannot call the variadic prctl). 0 on success, else errno.
 */
int berth_set_parent_death_signal(int signal);

/**
 * The descriptor libdispatch signals when work is queued on the main queue (the handle
 * CoreFoundation's run loop waits on), or -1. A process whose main thread waits in poll
 * instead of a run loop watches it and then calls berth_drain_main_queue.
 */
int berth_main_queue_descriptor(void);

/** Runs what is queued on the main dispatch queue. Main thread only. */
void berth_drain_main_queue(void);

/* ---- The worker sandbox (landlock.c) ---------------------------------------------- */

/** The kernel's Landlock ABI version (>= 1), or -errno: -ENOSYS / -EOPNOTSUPP when Landlock is missing or off. */
int berth_landlock_abi(void);

/**
 * A ruleset handling every file access `abi` knows (and, from ABI 4, TCP bind and connect
 * when `confine_network` is non-zero; from ABI 6, abstract Unix sockets and signals
 * outside the sandbox). The ruleset's descriptor, or -errno.
 */
int berth_landlock_create(int abi, int confine_network);

/** What a sandbox rule allows beneath its path (never execute, device nodes or device ioctls). */
enum {
    BERTH_SANDBOX_READ = 0,      /* read files and list folders */
    BERTH_SANDBOX_READ_WRITE = 1 /* every file access but execute */
};

/** Allow `kind` (BERTH_SANDBOX_*) beneath `path`. 0 or errno. */
int berth_landlock_allow(int ruleset, int abi, const char *path, int kind);

/** prctl(PR_SET_NO_NEW_PRIVS): no exec can gain privileges again. 0 or errno. */
int berth_set_no_new_privs(void);

/** Confine the calling thread (and every thread it starts later) by `ruleset`, then close it. 0 or errno. */
int berth_landlock_enforce(int ruleset);

/** The path of the loaded image that defines `symbol` (owned by the loader), or NULL. */
const char *berth_image_path_of_symbol(const char *symbol);

/** Threads in this process (from /proc/self/task), or -errno. */
int berth_thread_count(void);

/* ---- What a worker inherits (inheritance.c) ---------------------------------------- */

/**
 * Initializes `attributes`, a posix_spawnattr_t, for a child that starts clean: no signal
 * blocked and every signal at its default (a parent that ignores SIGPIPE or blocks signals
 * on the spawning thread passes neither on), in a session of its own (POSIX_SPAWN_SETSID,
 * a GNU extension Swift's Glibc does not show), so it has no controlling terminal until it
 * opens one. The worker spawner and the tests' pseudo-terminal sessions use it. 0 or errno;
 * on 0 the caller destroys it (posix_spawnattr_destroy).
 */
int berth_spawn_attributes_init(void *attributes);

/** Adds "close every descriptor from `first` up" to `actions`, a posix_spawn_file_actions_t (posix_spawn_file_actions_addclosefrom_np, glibc 2.34). 0 or errno. */
int berth_spawn_close_from(void *actions, int first);

/**
 * Drops every capability of this process: securebits locked (when it may set them), the
 * bounding set cleared (when it may), ambient capabilities cleared, and the permitted,
 * effective and inheritable sets emptied. 0 or errno. Call once, before any other thread runs.
 */
int berth_drop_capabilities(void);

/** This process's effective capabilities and bounding set, as bit masks. 0 or errno. */
int berth_capabilities_held(uint64_t *effective, uint64_t *bounding);

/** RLIMIT_DATA (heap, private mappings, thread stacks), soft and hard, to `bytes`. 0 or errno. */
int berth_set_memory_limit(uint64_t bytes);

/** Writes `value` to /proc/self/oom_score_adj (raising it needs no privilege). 0 or errno. */
int berth_set_oom_score_adjustment(int value);

/* ---- The system-call filter (seccomp.c) ------------------------------------------- */

/**
 * Loads the worker's seccomp filter through libseccomp.so.2 (opened with dlopen): EPERM for
 * execve/execveat, fork/vfork, clone without CLONE_THREAD, Unix/netlink/packet/raw sockets,
 * UDP unless `allow_udp`, ioctl TIOCSTI/TIOCLINUX; ENOSYS for clone3. With `trap` (after
 * berth_seccomp_trap_install) those EPERMs are made by the SIGSYS handler, which reports
 * each call, and rt_sigaction for SIGSYS is refused so the handler stays. 0, or -1 with a
 * one-line reason in `message`. Binds the calling thread and the threads it starts later.
 */
int berth_seccomp_confine(int allow_udp, int trap, char *message, size_t size);

/* ---- Reporting refused calls (seccomp_trap.c) ------------------------------------- */

/**
 * Installs the SIGSYS handler that answers a trapped call with EPERM and records it. The
 * read end of the records' pipe (close-on-exec, blocking), or -1 with errno set (ENOSYS
 * off x86_64). Call once, before berth_seccomp_confine(..., trap = 1, ...).
 */
int berth_seccomp_trap_install(void);

/** Waits for the next refused call and writes it, as "execve" or "socket(AF_UNIX)", to `text`. Its length, or -1 when the pipe ends. */
int berth_seccomp_next_refusal(int descriptor, char *text, size_t size);

/* ---- Sealed memory (sealed_memory.c) ----------------------------------------------- */

/**
 * A new anonymous memory file (memfd_create: close-on-exec, sealing allowed) named `name` in
 * /proc/<pid>/fd. The descriptor, owned by the caller, or -1 with errno set. Any thread.
 */
int berth_sealable_memory_file(const char *name);

/**
 * Seals a memory file from berth_sealable_memory_file for good: no one can write, grow or
 * shrink it, nor change its seals (F_SEAL_WRITE | GROW | SHRINK | SEAL). 0, or -1 with errno set.
 */
int berth_seal_memory_file(int descriptor);

/* ---- Locked's and LockedCondition's sleep (futex.c) ---------------------------------- */

/** Sleeps while `*word` is `expected`, until berth_futex_wake_one/all(word) (or a spurious wake). Process-private. */
void berth_futex_wait(uint32_t *word, uint32_t expected);

/**
 * Like berth_futex_wait, but sleeps at most `seconds` + `nanoseconds` (0 <= nanoseconds <
 * 1e9; a huge timeout is clamped by the kernel). 1 when the timeout passed, else 0.
 */
int berth_futex_wait_timeout(uint32_t *word, uint32_t expected, int64_t seconds, int64_t nanoseconds);

/** Wakes one thread asleep in berth_futex_wait(word). */
void berth_futex_wake_one(uint32_t *word);

/** Wakes every thread asleep in berth_futex_wait(word). */
void berth_futex_wake_all(uint32_t *word);

#endif
