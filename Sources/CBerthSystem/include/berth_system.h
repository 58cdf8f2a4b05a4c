/* System calls Swift's Glibc module does not expose (they need _GNU_SOURCE). */
#ifndef BERTH_SYSTEM_H
#define BERTH_SYSTEM_H

#include <stddef.h>
#include <stdint.h>

/** The peer of a connected Unix socket: its uid and pid (SO_PEERCRED). 0 on success, else errno. */
int berth_peer_credentials(int socket_fd, uint32_t *out_uid, int32_t *out_pid);

/**
 * Waits up to `milliseconds` for process `pid` (a child) to end, woken by its pidfd rather
 * than by polling: 1 when it has ended (not reaped), 0 on timeout, -errno when no pidfd
 * can be opened (before Linux 5.3: ENOSYS).
 */
int berth_wait_for_process_end(int pid, int milliseconds);

/** A non-blocking, close-on-exec eventfd: written to wake a thread that polls it. The descriptor, or -1 with errno set. */
int berth_wake_descriptor(void);

/**
 * One-shot readiness watches (epoll): `berth_watch_set` arms `fd` (when `armed`) for one
 * report of readability, carrying `token`, or disarms it; either takes effect at once in a
 * thread already waiting in `berth_watch_wait`, without waking it. `add` is 1 for a new
 * descriptor. `berth_watch_wait` waits for reports and writes up to `capacity` tokens: their
 * count, or -1 with errno set.
 */
int berth_watch_create(void);
int berth_watch_set(int watch_fd, int fd, int add, int armed, uint64_t token);
int berth_watch_remove(int watch_fd, int fd);
int berth_watch_wait(int watch_fd, uint64_t *tokens, int capacity);

/** Bytes this end of a socket sent that its peer has not read yet (SIOCOUTQ), or -1. */
int berth_socket_unsent(int fd);

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

/** Names the calling thread (prctl PR_SET_NAME: at most 15 bytes kept). 0 or errno. */
int berth_set_thread_name(const char *name);

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

/* ---- The worker's namespaces (namespaces.c) ---------------------------------------- */

/**
 * Moves this process into a new user namespace with its uid and gid mapped to themselves
 * (setgroups denied first, as an unprivileged process must). The calling process must be
 * single-threaded. 0 or errno.
 */
int berth_enter_user_namespace(void);

/**
 * Moves the worker into a PID namespace of its own (pid_namespace.c): the calling process
 * (the one the host spawned) starts the namespace's init, then a copy of itself there whose
 * pid inside the namespace is the caller's pid; this call returns 0 in that copy, which goes
 * on as the worker, already in a mount namespace of the namespace's own (private, with the
 * new namespace's /proc mounted on /proc). The caller never returns then: it waits, and ends
 * as the worker ends (its exit status, or its signal). When no namespace can be made (or its
 * /proc cannot be mounted) it returns errno in the caller, unchanged, with a one-line reason
 * in `message`; a negative errno when it failed after the caller's next child was bound to
 * the new namespace (the caller can then start no thread: confining must fail).
 * Call inside the worker's own user namespace, with one thread.
 */
int berth_enter_pid_namespace(char *message, size_t size);

/** The name (/proc/<pid>/comm) the process the host spawned takes while it waits outside the worker's PID namespace. */
#define BERTH_PID_NAMESPACE_WAITER_NAME "berth-ns-wait"

/** The namespaces berth_enter_namespace makes (the CLONE_NEW* values, which Swift's Glibc does not show). */
enum {
    BERTH_NAMESPACE_MOUNT = 0x00020000,   /* CLONE_NEWNS */
    BERTH_NAMESPACE_IPC = 0x08000000,     /* CLONE_NEWIPC */
    BERTH_NAMESPACE_NETWORK = 0x40000000, /* CLONE_NEWNET */
};

/** unshare(`kind`), a BERTH_NAMESPACE_*. 0 or errno. */
int berth_enter_namespace(int kind);

/**
 * The host's side: makes one empty network namespace (only a loopback, down) in a user
 * namespace of its own that maps the host's uid and gid to themselves, for every worker
 * without `network` to join instead of making one each. Sets `user` and `network` to
 * descriptors of both (close-on-exec). 0, or errno with a one-line reason in `message`.
 */
int berth_make_shared_network_namespace(int *user, int *network, char *message, size_t size);

/**
 * The worker's side, while it has one thread and before berth_enter_user_namespace: joins
 * the user namespace `user` (whose child its own becomes) and the network namespace
 * `network`. 0 or errno (after a failure it may have joined the user namespace only).
 */
int berth_join_network_namespace(int user, int network);

/**
 * In a new mount namespace: makes a root of its own holding `paths` (absolute; read-only
 * unless `writable[i]`, nosuid and nodev; a symlink copied as one; one that does not exist
 * skipped; a folder nested in another must come after it), a private /tmp, /proc and
 * /dev/null, /dev/zero, /dev/urandom, pivots into it and starts a thread that detaches the
 * old root. Single thread only. 0, or errno with a one-line reason in `message`.
 */
int berth_make_root(const char *const *paths, const int32_t *writable, size_t count, char *message, size_t size);

/**
 * Waits until the thread berth_make_root started has detached the old root (call before
 * any plugin code runs). 0 (also when no root was made), or errno with a one-line reason
 * in `message`.
 */
int berth_root_settled(char *message, size_t size);

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

/** RLIMIT_FSIZE (no file grows past it; SIGXFSZ ignored, so the write fails with EFBIG), soft and hard, to `bytes`. 0 or errno. */
int berth_set_file_size_limit(uint64_t bytes);

/** RLIMIT_NPROC (this user's processes and threads, counted in its user namespace), soft and hard, to `count`. 0 or errno. */
int berth_set_thread_limit(uint64_t count);

/** Writes `value` to /proc/self/oom_score_adj (raising it needs no privilege). 0 or errno. */
int berth_set_oom_score_adjustment(int value);

/* ---- The system-call policy (seccomp_policy.c) and filter (seccomp.c) ---------------- */

/** When a policy row counts. */
enum {
    BERTH_POLICY_ALWAYS = 0,    /* allowed for every plugin */
    BERTH_POLICY_NETWORK = 1,   /* allowed with the `network` capability only */
    BERTH_POLICY_ENOSYS = 2,    /* answered ENOSYS ("not implemented") */
    BERTH_POLICY_TRAPPED = 3,   /* allowed while refusals trap and are reported */
    BERTH_POLICY_UNTRAPPED = 4, /* allowed when refusals do not trap */
};

/** A comparison value meaning "the worker's own pid" (filled in when the filter loads). */
#define BERTH_POLICY_SELF 0xfffffffffffffffeULL

/** One argument comparison: (argument & mask) == value. A mask of 0 ends the list. */
struct berth_policy_compare {
    uint32_t argument;
    uint64_t mask;
    uint64_t value;
};

/** One row of the policy: `name` is allowed (or answered, see `when`) when every comparison holds. */
struct berth_policy_rule {
    const char *name;
    uint32_t when;
    uint32_t count;
    struct berth_policy_compare compare[3];
};

/** How many rows the policy has. */
size_t berth_policy_rule_count(void);

/** Row `index` of the policy (static storage), or NULL past the end. */
const struct berth_policy_rule *berth_policy_rule_at(size_t index);

/** The worker's filter as libseccomp writes it, its pid left out: what the host sends. */
struct berth_filter_template {
    uint64_t *instructions; /* code | jt << 16 | jf << 24 | k << 32, one per BPF instruction */
    size_t count;
    uint32_t *self_slots;   /* the instructions whose k is the worker's own pid */
    size_t slot_count;
};

/**
 * Builds the worker's filter through libseccomp.so.2 (opened with dlopen) from the policy
 * table alone: every row that counts for `network` and `trap` is allowed (or answers
 * ENOSYS), everything else is refused with EPERM (with `trap`, after
 * berth_seccomp_trap_install, by the SIGSYS handler, which reports each call). Built for two
 * stand-in pids and compared, so the slots of the pid are known. 0 (free it with
 * berth_seccomp_template_free), or -1 with a one-line reason in `message`. Any thread.
 */
int berth_seccomp_template(int network, int trap, struct berth_filter_template *template_out, char *message, size_t size);

void berth_seccomp_template_free(struct berth_filter_template *template_out);

/**
 * The program libseccomp writes for `own_pid`, packed as in a template, into `instructions`
 * (room for *count; *count becomes the length). 0, or -1 with the reason. For the tests.
 */
int berth_seccomp_program(int network, int trap, int32_t own_pid, uint64_t *instructions, size_t *count, char *message, size_t size);

/**
 * Loads a template's program with this process's pid in its slots (seccomp(2),
 * SECCOMP_SET_MODE_FILTER; no_new_privs must be set). Binds the calling thread and the
 * threads it starts later. 0, or -1 with a one-line reason in `message`.
 */
int berth_seccomp_install(const uint64_t *instructions, size_t count, const uint32_t *self_slots, size_t slot_count, char *message,
                          size_t size);

/**
 * Builds the same filter without loading it, for `own_pid`, and writes libseccomp's pseudo
 * filter code (seccomp_export_pfc) to `descriptor`: what the kernel would be given. 0, or -1
 * with a one-line reason in `message`. Any thread.
 */
int berth_seccomp_export(int network, int trap, int32_t own_pid, int descriptor, char *message, size_t size);

/** The name of system call `number` on this architecture (static storage), or NULL. */
const char *berth_seccomp_call_name(int number);

/* ---- Reporting refused calls (seccomp_trap.c) ------------------------------------- */

/**
 * Installs the SIGSYS handler that answers a trapped call with EPERM and records it. The
 * read end of the records' pipe (close-on-exec, blocking), or -1 with errno set (ENOSYS
 * off x86_64). Call once, before berth_seccomp_install of a program built with `trap`.
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
