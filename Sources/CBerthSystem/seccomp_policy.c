/*
 * The worker's system-call policy: the one table the filter is built from (seccomp.c), and
 * the one Docs/worker-sandbox.md shows. Everything not here is refused with EPERM (trapped
 * and reported on x86-64, see seccomp_trap.c). A call may have several rows: it is allowed
 * when every comparison of one of its rows holds. Rows marked NETWORK count only for a
 * plugin with the `network` capability. Found by running the worker suites: what the
 * Swift runtime, Foundation, libdispatch, the worker and ordinary C plugins call.
 *
 * Comparisons read an argument's low 32 bits for ints (the kernel ignores the rest); a
 * value of BERTH_POLICY_SELF is the worker's own pid, filled in when the filter loads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "berth_system.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#endif

#define ANY {0}
#define ARG(index, mask, value) {index, mask, value}
#define LOW 0xffffffffULL
#define SELF(index) ARG(index, LOW, BERTH_POLICY_SELF)
#define ALWAYS BERTH_POLICY_ALWAYS
#define NETWORK BERTH_POLICY_NETWORK
/* Namespace flags: a thread may not ask for any (it holds no capability for them anyway). */
#define NAMESPACE_FLAGS (CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | 0x80ULL)

static const struct berth_policy_rule rules[] = {
    /* Memory. Shared anonymous memory is refused: RLIMIT_DATA does not count it. */
    {"brk", ALWAYS, 0, {ANY}},
    {"mmap", ALWAYS, 1, {ARG(3, MAP_ANONYMOUS, 0)}},                       /* a file's pages */
    {"mmap", ALWAYS, 1, {ARG(3, MAP_ANONYMOUS | 0x3, MAP_ANONYMOUS | MAP_PRIVATE)}}, /* private anonymous */
    {"munmap", ALWAYS, 0, {ANY}},
    {"mremap", ALWAYS, 0, {ANY}},
    {"mprotect", ALWAYS, 0, {ANY}},
    {"madvise", ALWAYS, 0, {ANY}},
    {"mincore", ALWAYS, 0, {ANY}},
    {"msync", ALWAYS, 0, {ANY}},
    {"membarrier", ALWAYS, 0, {ANY}},
    /* Files (Landlock and the mount namespace decide which). */
    {"read", ALWAYS, 0, {ANY}},
    {"write", ALWAYS, 0, {ANY}},
    {"readv", ALWAYS, 0, {ANY}},
    {"writev", ALWAYS, 0, {ANY}},
    {"pread64", ALWAYS, 0, {ANY}},
    {"pwrite64", ALWAYS, 0, {ANY}},
    {"preadv", ALWAYS, 0, {ANY}},
    {"pwritev", ALWAYS, 0, {ANY}},
    {"preadv2", ALWAYS, 0, {ANY}},
    {"pwritev2", ALWAYS, 0, {ANY}},
    {"open", ALWAYS, 0, {ANY}},
    {"openat", ALWAYS, 0, {ANY}},
    {"openat2", ALWAYS, 0, {ANY}},
    {"close", ALWAYS, 0, {ANY}},
    {"close_range", ALWAYS, 0, {ANY}},
    {"lseek", ALWAYS, 0, {ANY}},
    {"stat", ALWAYS, 0, {ANY}},
    {"fstat", ALWAYS, 0, {ANY}},
    {"lstat", ALWAYS, 0, {ANY}},
    {"newfstatat", ALWAYS, 0, {ANY}},
    {"statx", ALWAYS, 0, {ANY}},
    {"statfs", ALWAYS, 0, {ANY}},
    {"fstatfs", ALWAYS, 0, {ANY}},
    {"access", ALWAYS, 0, {ANY}},
    {"faccessat", ALWAYS, 0, {ANY}},
    {"faccessat2", ALWAYS, 0, {ANY}},
    {"readlink", ALWAYS, 0, {ANY}},
    {"readlinkat", ALWAYS, 0, {ANY}},
    {"getdents64", ALWAYS, 0, {ANY}},
    {"getcwd", ALWAYS, 0, {ANY}},
    {"chdir", ALWAYS, 0, {ANY}},
    {"fchdir", ALWAYS, 0, {ANY}},
    {"umask", ALWAYS, 0, {ANY}},
    {"mkdir", ALWAYS, 0, {ANY}},
    {"mkdirat", ALWAYS, 0, {ANY}},
    {"rmdir", ALWAYS, 0, {ANY}},
    {"unlink", ALWAYS, 0, {ANY}},
    {"unlinkat", ALWAYS, 0, {ANY}},
    {"rename", ALWAYS, 0, {ANY}},
    {"renameat", ALWAYS, 0, {ANY}},
    {"renameat2", ALWAYS, 0, {ANY}},
    {"link", ALWAYS, 0, {ANY}},
    {"linkat", ALWAYS, 0, {ANY}},
    {"symlink", ALWAYS, 0, {ANY}},
    {"symlinkat", ALWAYS, 0, {ANY}},
    {"truncate", ALWAYS, 0, {ANY}},
    {"ftruncate", ALWAYS, 0, {ANY}},
    {"fallocate", ALWAYS, 0, {ANY}},                                        /* RLIMIT_FSIZE bounds it */
    {"fsync", ALWAYS, 0, {ANY}},
    {"fdatasync", ALWAYS, 0, {ANY}},
    {"sync_file_range", ALWAYS, 0, {ANY}},
    {"fadvise64", ALWAYS, 0, {ANY}},
    {"readahead", ALWAYS, 0, {ANY}},
    {"flock", ALWAYS, 0, {ANY}},
    {"sendfile", ALWAYS, 0, {ANY}},
    {"copy_file_range", ALWAYS, 0, {ANY}},
    {"getxattr", ALWAYS, 0, {ANY}},
    {"lgetxattr", ALWAYS, 0, {ANY}},
    {"fgetxattr", ALWAYS, 0, {ANY}},
    {"listxattr", ALWAYS, 0, {ANY}},
    {"llistxattr", ALWAYS, 0, {ANY}},
    {"flistxattr", ALWAYS, 0, {ANY}},
    {"dup", ALWAYS, 0, {ANY}},
    {"dup2", ALWAYS, 0, {ANY}},
    {"dup3", ALWAYS, 0, {ANY}},
    {"pipe", ALWAYS, 0, {ANY}},
    {"pipe2", ALWAYS, 0, {ANY}},
    /* fcntl: no owner or lease (they send signals to another process), no dnotify. */
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_DUPFD)}},
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_DUPFD_CLOEXEC)}},
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_GETFD)}},
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_SETFD)}},
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_GETFL)}},
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_SETFL)}},
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_GETLK)}},
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_SETLK)}},
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_SETLKW)}},
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_OFD_GETLK)}},
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_OFD_SETLK)}},
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_OFD_SETLKW)}},
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_GETPIPE_SZ)}},
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_ADD_SEALS)}},
    {"fcntl", ALWAYS, 1, {ARG(1, LOW, F_GET_SEALS)}},
    /* ioctl: what isatty, non-blocking mode and a byte count need; nothing for terminals. */
    {"ioctl", ALWAYS, 1, {ARG(1, LOW, TCGETS)}},
    {"ioctl", ALWAYS, 1, {ARG(1, LOW, TIOCGWINSZ)}},
    {"ioctl", ALWAYS, 1, {ARG(1, LOW, FIONREAD)}},
    {"ioctl", ALWAYS, 1, {ARG(1, LOW, FIONBIO)}},
    {"ioctl", ALWAYS, 1, {ARG(1, LOW, FIOCLEX)}},
    {"ioctl", ALWAYS, 1, {ARG(1, LOW, FIONCLEX)}},
    /* Waiting. */
    {"poll", ALWAYS, 0, {ANY}},
    {"ppoll", ALWAYS, 0, {ANY}},
    {"select", ALWAYS, 0, {ANY}},
    {"pselect6", ALWAYS, 0, {ANY}},
    {"epoll_create", ALWAYS, 0, {ANY}},
    {"epoll_create1", ALWAYS, 0, {ANY}},
    {"epoll_ctl", ALWAYS, 0, {ANY}},
    {"epoll_wait", ALWAYS, 0, {ANY}},
    {"epoll_pwait", ALWAYS, 0, {ANY}},
    {"epoll_pwait2", ALWAYS, 0, {ANY}},
    {"eventfd", ALWAYS, 0, {ANY}},
    {"eventfd2", ALWAYS, 0, {ANY}},
    {"timerfd_create", ALWAYS, 0, {ANY}},
    {"timerfd_settime", ALWAYS, 0, {ANY}},
    {"timerfd_gettime", ALWAYS, 0, {ANY}},
    {"signalfd", ALWAYS, 0, {ANY}},
    {"signalfd4", ALWAYS, 0, {ANY}},
    {"futex", ALWAYS, 0, {ANY}},
    {"futex_waitv", ALWAYS, 0, {ANY}},
    {"nanosleep", ALWAYS, 0, {ANY}},
    {"clock_nanosleep", ALWAYS, 0, {ANY}},
    {"pause", ALWAYS, 0, {ANY}},
    /* Time. */
    {"clock_gettime", ALWAYS, 0, {ANY}},
    {"clock_getres", ALWAYS, 0, {ANY}},
    {"gettimeofday", ALWAYS, 0, {ANY}},
    {"time", ALWAYS, 0, {ANY}},
    {"times", ALWAYS, 0, {ANY}},
    {"getitimer", ALWAYS, 0, {ANY}},
    {"setitimer", ALWAYS, 0, {ANY}},
    {"alarm", ALWAYS, 0, {ANY}},
    {"timer_create", ALWAYS, 0, {ANY}},
    {"timer_settime", ALWAYS, 0, {ANY}},
    {"timer_gettime", ALWAYS, 0, {ANY}},
    {"timer_getoverrun", ALWAYS, 0, {ANY}},
    {"timer_delete", ALWAYS, 0, {ANY}},
    /* Threads: clone only for a thread of this process, in no new namespace. */
    {"clone", ALWAYS, 1, {ARG(0, CLONE_THREAD | NAMESPACE_FLAGS, CLONE_THREAD)}},
    {"set_robust_list", ALWAYS, 0, {ANY}},
    {"set_tid_address", ALWAYS, 0, {ANY}},
    {"rseq", ALWAYS, 0, {ANY}},
    {"exit", ALWAYS, 0, {ANY}},
    {"exit_group", ALWAYS, 0, {ANY}},
    {"gettid", ALWAYS, 0, {ANY}},
    {"getpid", ALWAYS, 0, {ANY}},
    {"getppid", ALWAYS, 0, {ANY}},
    {"sched_yield", ALWAYS, 0, {ANY}},
    {"sched_get_priority_max", ALWAYS, 0, {ANY}},
    {"sched_get_priority_min", ALWAYS, 0, {ANY}},
    /* Calls about a process: only about this one (0 or its own pid). */
    {"sched_getaffinity", ALWAYS, 1, {ARG(0, LOW, 0)}},
    {"sched_getaffinity", ALWAYS, 1, {SELF(0)}},
    {"sched_setaffinity", ALWAYS, 1, {ARG(0, LOW, 0)}},
    {"sched_setaffinity", ALWAYS, 1, {SELF(0)}},
    {"sched_getparam", ALWAYS, 1, {ARG(0, LOW, 0)}},
    {"sched_getparam", ALWAYS, 1, {SELF(0)}},
    {"sched_getscheduler", ALWAYS, 1, {ARG(0, LOW, 0)}},
    {"sched_getscheduler", ALWAYS, 1, {SELF(0)}},
    {"sched_getattr", ALWAYS, 1, {ARG(0, LOW, 0)}},
    {"sched_getattr", ALWAYS, 1, {SELF(0)}},
    {"getpriority", ALWAYS, 2, {ARG(0, LOW, PRIO_PROCESS), ARG(1, LOW, 0)}},
    {"getpriority", ALWAYS, 2, {ARG(0, LOW, PRIO_PROCESS), SELF(1)}},
    {"setpriority", ALWAYS, 2, {ARG(0, LOW, PRIO_PROCESS), ARG(1, LOW, 0)}},
    {"setpriority", ALWAYS, 2, {ARG(0, LOW, PRIO_PROCESS), SELF(1)}},
    {"prlimit64", ALWAYS, 1, {ARG(0, LOW, 0)}},
    {"prlimit64", ALWAYS, 1, {SELF(0)}},
    {"getrlimit", ALWAYS, 0, {ANY}},
    {"getrusage", ALWAYS, 0, {ANY}},
    /* Signals: to itself only. */
    /* rt_sigaction for any signal but SIGSYS (31) while the trap reports: the handler stays. */
    {"rt_sigaction", BERTH_POLICY_UNTRAPPED, 0, {ANY}},
    {"rt_sigaction", BERTH_POLICY_TRAPPED, 1, {ARG(0, 0xfffffff0, 0)}},  /* 0-15 */
    {"rt_sigaction", BERTH_POLICY_TRAPPED, 1, {ARG(0, 0xfffffff8, 16)}}, /* 16-23 */
    {"rt_sigaction", BERTH_POLICY_TRAPPED, 1, {ARG(0, 0xfffffffc, 24)}}, /* 24-27 */
    {"rt_sigaction", BERTH_POLICY_TRAPPED, 1, {ARG(0, 0xfffffffe, 28)}}, /* 28-29 */
    {"rt_sigaction", BERTH_POLICY_TRAPPED, 1, {ARG(0, LOW, 30)}},
    {"rt_sigaction", BERTH_POLICY_TRAPPED, 1, {ARG(0, 0xffffffe0, 32)}}, /* 32-63 */
    {"rt_sigaction", BERTH_POLICY_TRAPPED, 1, {ARG(0, LOW, 64)}},
    {"rt_sigprocmask", ALWAYS, 0, {ANY}},
    {"rt_sigreturn", ALWAYS, 0, {ANY}},
    {"rt_sigpending", ALWAYS, 0, {ANY}},
    {"rt_sigtimedwait", ALWAYS, 0, {ANY}},
    {"rt_sigsuspend", ALWAYS, 0, {ANY}},
    {"sigaltstack", ALWAYS, 0, {ANY}},
    {"restart_syscall", ALWAYS, 0, {ANY}},
    {"kill", ALWAYS, 1, {SELF(0)}},
    {"tgkill", ALWAYS, 1, {SELF(0)}},
    {"rt_sigqueueinfo", ALWAYS, 1, {SELF(0)}},
    {"rt_tgsigqueueinfo", ALWAYS, 1, {SELF(0)}},
    /* prctl: names, and reading what it holds. */
    {"prctl", ALWAYS, 1, {ARG(0, LOW, PR_SET_NAME)}},
    {"prctl", ALWAYS, 1, {ARG(0, LOW, PR_GET_NAME)}},
    {"prctl", ALWAYS, 1, {ARG(0, LOW, PR_SET_VMA)}},
    {"prctl", ALWAYS, 1, {ARG(0, LOW, PR_GET_DUMPABLE)}},
    {"prctl", ALWAYS, 1, {ARG(0, LOW, PR_CAPBSET_READ)}},
    {"prctl", ALWAYS, 1, {ARG(0, LOW, PR_GET_NO_NEW_PRIVS)}},
    {"prctl", ALWAYS, 1, {ARG(0, LOW, PR_GET_SECUREBITS)}},
    {"prctl", ALWAYS, 1, {ARG(0, LOW, PR_GET_PDEATHSIG)}},
    {"prctl", ALWAYS, 1, {ARG(0, LOW, PR_GET_TIMERSLACK)}},
    {"arch_prctl", ALWAYS, 1, {ARG(0, LOW, 0x1003)}},                    /* ARCH_GET_FS */
    /* Who and where it is. */
    {"getuid", ALWAYS, 0, {ANY}},
    {"geteuid", ALWAYS, 0, {ANY}},
    {"getgid", ALWAYS, 0, {ANY}},
    {"getegid", ALWAYS, 0, {ANY}},
    {"getresuid", ALWAYS, 0, {ANY}},
    {"getresgid", ALWAYS, 0, {ANY}},
    {"getgroups", ALWAYS, 0, {ANY}},
    {"getpgrp", ALWAYS, 0, {ANY}},
    {"getpgid", ALWAYS, 1, {ARG(0, LOW, 0)}},
    {"getsid", ALWAYS, 1, {ARG(0, LOW, 0)}},
    {"capget", ALWAYS, 0, {ANY}},
    {"uname", ALWAYS, 0, {ANY}},
    {"sysinfo", ALWAYS, 0, {ANY}},
    {"getcpu", ALWAYS, 0, {ANY}},
    {"getrandom", ALWAYS, 0, {ANY}},
    /* Sockets it holds (its channel) and, with `network`, TCP over IPv4 and IPv6 only:
     * no MPTCP, no UDP, no Unix, netlink, packet or raw socket, no socketpair. */
    {"socket", NETWORK, 3, {ARG(0, LOW, AF_INET), ARG(1, 0xf, SOCK_STREAM), ARG(2, LOW, 0)}},
    {"socket", NETWORK, 3, {ARG(0, LOW, AF_INET), ARG(1, 0xf, SOCK_STREAM), ARG(2, LOW, IPPROTO_TCP)}},
    {"socket", NETWORK, 3, {ARG(0, LOW, AF_INET6), ARG(1, 0xf, SOCK_STREAM), ARG(2, LOW, 0)}},
    {"socket", NETWORK, 3, {ARG(0, LOW, AF_INET6), ARG(1, 0xf, SOCK_STREAM), ARG(2, LOW, IPPROTO_TCP)}},
    {"connect", NETWORK, 0, {ANY}},
    {"bind", NETWORK, 0, {ANY}},
    {"listen", NETWORK, 0, {ANY}},
    {"accept", NETWORK, 0, {ANY}},
    {"accept4", NETWORK, 0, {ANY}},
    {"getsockname", ALWAYS, 0, {ANY}},
    {"getpeername", ALWAYS, 0, {ANY}},
    {"getsockopt", ALWAYS, 0, {ANY}},
    {"setsockopt", ALWAYS, 0, {ANY}},
    {"shutdown", ALWAYS, 0, {ANY}},
    {"sendto", ALWAYS, 0, {ANY}},
    {"recvfrom", ALWAYS, 0, {ANY}},
    {"sendmsg", ALWAYS, 0, {ANY}},
    {"recvmsg", ALWAYS, 0, {ANY}},
    {"sendmmsg", ALWAYS, 0, {ANY}},
    {"recvmmsg", ALWAYS, 0, {ANY}},
    /* clone3 keeps its flags in memory a filter cannot read: "not implemented", so glibc
     * falls back to clone, whose flags the rule above reads. */
    {"clone3", BERTH_POLICY_ENOSYS, 0, {ANY}},
};

size_t berth_policy_rule_count(void) { return sizeof rules / sizeof rules[0]; }

const struct berth_policy_rule *berth_policy_rule_at(size_t index) {
    return index < sizeof rules / sizeof rules[0] ? &rules[index] : NULL;
}
