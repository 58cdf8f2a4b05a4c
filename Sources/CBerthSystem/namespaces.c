/*
 * The worker's namespaces (Docs/worker-sandbox.md), made by the worker itself while it is
 * still one thread, before Landlock and the filter: a user namespace (its own uid and gid
 * mapped to themselves, so it works as root and as an ordinary user), then IPC, network
 * (unless `network`: the host's one empty network namespace, joined) and mount namespaces, and a root of its own built as bubblewrap does:
 * a small tmpfs holding read-only binds of the system libraries and the Swift runtime,
 * read-write binds of its data folder and write grants, a private /tmp, /proc, and
 * /dev/null, /dev/zero, /dev/urandom; then pivot_root into it, the old root detached.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "berth_system.h"
#include "raw_call.h"

_Static_assert(BERTH_NAMESPACE_MOUNT == CLONE_NEWNS && BERTH_NAMESPACE_IPC == CLONE_NEWIPC && BERTH_NAMESPACE_NETWORK == CLONE_NEWNET,
               "the namespace constants are the kernel's");

#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#define MOUNT_ATTR_NOSUID 0x00000002
#define MOUNT_ATTR_NODEV 0x00000004
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef __NR_mount_setattr
#define __NR_mount_setattr 442
#endif

struct berth_mount_attr {
    uint64_t attr_set;
    uint64_t attr_clr;
    uint64_t propagation;
    uint64_t userns_fd;
};

static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    size_t length = strlen(text);
    int failure = write(fd, text, length) == (ssize_t)length ? 0 : errno;
    close(fd);
    return failure;
}

int berth_enter_user_namespace(void) {
    uid_t uid = getuid();
    gid_t gid = getgid();
    if (unshare(CLONE_NEWUSER) != 0) return errno;
    char map[64];
    int failure = write_file("/proc/self/setgroups", "deny");
    if (failure != 0 && failure != ENOENT) return failure;
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
    if ((failure = write_file("/proc/self/uid_map", map)) != 0) return failure;
    snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
    return write_file("/proc/self/gid_map", map);
}

/*
 * One empty network namespace for every worker without `network` (Docs/worker-sandbox.md):
 * making a network namespace, and above all tearing one down, is among the slowest things a
 * worker's start and end asked of the kernel, so the host makes one once and each worker
 * joins it. It holds only a loopback that is down, and no worker in it can make a socket
 * (the filter), so what one worker could reach there another cannot reach either.
 *
 * The host has many threads and cannot unshare; a short-lived child made with a raw clone in
 * a new user and network namespace does: the host maps its own uid and gid there (as
 * unshare's caller does in berth_enter_user_namespace), opens both namespaces through
 * /proc/<child>/ns, and lets the child end. The descriptors keep the namespaces alive.
 */
int berth_make_shared_network_namespace(int *user, int *network, char *message, size_t size) {
    *user = *network = -1;
    int gate[2];
    if (pipe2(gate, O_CLOEXEC) != 0) {
        snprintf(message, size, "pipe2: %s", strerror(errno));
        return errno;
    }
    uid_t uid = getuid();
    gid_t gid = getgid();
    /* The child only waits for the gate to close: raw system calls alone, no glibc fork. */
    pid_t child = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | CLONE_NEWNET | SIGCHLD, NULL, NULL, NULL, NULL);
    if (child == 0) {
        char byte;
        syscall(SYS_close, gate[1]);
        syscall(SYS_read, gate[0], &byte, 1);
        for (;;) syscall(SYS_exit_group, 0);
    }
    int failure = 0;
    if (child < 0) {
        failure = errno;
        snprintf(message, size, "clone(CLONE_NEWUSER | CLONE_NEWNET): %s", strerror(failure));
    } else {
        char path[64], map[64];
        snprintf(path, sizeof path, "/proc/%d/setgroups", (int)child);
        failure = write_file(path, "deny");
        if (failure == ENOENT) failure = 0;
        if (failure == 0) {
            snprintf(path, sizeof path, "/proc/%d/uid_map", (int)child);
            snprintf(map, sizeof map, "%u %u 1\n", (unsigned)uid, (unsigned)uid);
            failure = write_file(path, map);
        }
        if (failure == 0) {
            snprintf(path, sizeof path, "/proc/%d/gid_map", (int)child);
            snprintf(map, sizeof map, "%u %u 1\n", (unsigned)gid, (unsigned)gid);
            failure = write_file(path, map);
        }
        if (failure != 0) snprintf(message, size, "writing %s: %s", path, strerror(failure));
        if (failure == 0) {
            snprintf(path, sizeof path, "/proc/%d/ns/user", (int)child);
            *user = open(path, O_RDONLY | O_CLOEXEC);
            snprintf(path, sizeof path, "/proc/%d/ns/net", (int)child);
            *network = *user < 0 ? -1 : open(path, O_RDONLY | O_CLOEXEC);
            if (*network < 0) {
                failure = errno;
                snprintf(message, size, "opening %s: %s", path, strerror(failure));
            }
        }
    }
    close(gate[0]);
    close(gate[1]);
    if (child > 0) {
        int status;
        while (waitpid(child, &status, 0) < 0 && errno == EINTR) {}
    }
    if (failure != 0) {
        if (*user >= 0) close(*user);
        if (*network >= 0) close(*network);
        *user = *network = -1;
    }
    return failure;
}

int berth_join_network_namespace(int user, int network) {
    if (setns(user, CLONE_NEWUSER) != 0) return errno;
    return setns(network, CLONE_NEWNET) == 0 ? 0 : errno;
}

int berth_enter_namespace(int kind) {
    return unshare(kind) == 0 ? 0 : errno;
}

/* mkdir -p of `path` (absolute), each folder 0755. */
static int make_folders(const char *path) {
    char copy[PATH_MAX];
    if (snprintf(copy, sizeof copy, "%s", path) >= (int)sizeof copy) return ENAMETOOLONG;
    for (char *slash = copy + 1; *slash; slash++) {
        if (*slash != '/') continue;
        *slash = '\0';
        if (mkdir(copy, 0755) != 0 && errno != EEXIST) return errno;
        *slash = '/';
    }
    if (mkdir(copy, 0755) != 0 && errno != EEXIST) return errno;
    return 0;
}

static int make_parent(const char *path) {
    char copy[PATH_MAX];
    if (snprintf(copy, sizeof copy, "%s", path) >= (int)sizeof copy) return ENAMETOOLONG;
    char *last = strrchr(copy, '/');
    if (last == NULL || last == copy) return 0;
    *last = '\0';
    return make_folders(copy);
}

static int restrict_mount(const char *path, int writable) {
    struct berth_mount_attr attributes = {MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | (writable ? 0 : MOUNT_ATTR_RDONLY), 0, 0, 0};
    if (syscall(__NR_mount_setattr, AT_FDCWD, path, AT_RECURSIVE, &attributes, sizeof attributes) == 0) return 0;
    /* Before Linux 5.12: the top mount only. */
    unsigned long flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | (writable ? 0 : MS_RDONLY);
    return mount(NULL, path, NULL, flags, NULL) == 0 ? 0 : errno;
}

/* Binds /oldroot`path` at /newroot`path`; a symlink is copied as a symlink. A path that does
 * not exist is skipped. */
static int bind(const char *path, int writable, char *message, size_t size) {
    char source[PATH_MAX], target[PATH_MAX];
    if (snprintf(source, sizeof source, "/oldroot%s", path) >= (int)sizeof source ||
        snprintf(target, sizeof target, "/newroot%s", path) >= (int)sizeof target) {
        snprintf(message, size, "%s: path too long", path);
        return ENAMETOOLONG;
    }
    struct stat status;
    if (lstat(source, &status) != 0) return 0;
    int failure = make_parent(target);
    if (failure == 0 && S_ISLNK(status.st_mode)) {
        char link[PATH_MAX];
        ssize_t length = readlink(source, link, sizeof link - 1);
        if (length < 0) return 0;
        link[length] = '\0';
        if (symlink(link, target) != 0 && errno != EEXIST) failure = errno;
        if (failure) snprintf(message, size, "cannot copy the symlink %s: %s", path, strerror(failure));
        return failure;
    }
    if (failure == 0) {
        if (S_ISDIR(status.st_mode)) {
            failure = make_folders(target);
        } else {
            /* A mount point, made only where none is (a file inside an earlier bind, such as
             * the worker executable in a granted build folder, is one already: opening it
             * for writing would fail with ETXTBSY). */
            struct stat existing;
            if (lstat(target, &existing) != 0) {
                int fd = open(target, O_RDONLY | O_CREAT | O_CLOEXEC, 0644);
                if (fd < 0 && errno != EEXIST && errno != EROFS) failure = errno;
                if (fd >= 0) close(fd);
            }
        }
    }
    if (failure == 0 && mount(source, target, NULL, MS_BIND | MS_REC, NULL) != 0) failure = errno;
    if (failure == 0) failure = restrict_mount(target, writable);
    if (failure) snprintf(message, size, "cannot bind %s into the worker's root: %s", path, strerror(failure));
    return failure;
}

/*
 * The old root's detach waits for an RCU grace period (namespace_unlock), 0.1 to 1 ms with
 * the machine's load. A thread of the worker's own does it, so the wait overlaps what the
 * worker does next (no_new_privs, capabilities, Landlock, the filter); the worker joins it
 * (`berth_root_settled`) before it opens any plugin. The thread shares the worker's memory and
 * thread block: it makes raw system calls only, with every signal blocked, and ends with
 * SYS_exit; the kernel clears `detacher_tid` then (CLONE_CHILD_CLEARTID).
 */
static volatile int detacher_tid;
static volatile long detacher_result;
static void *detacher_stack;
static const size_t detacher_stack_size = 16 * 1024;

static int detach_old_root(void *unused) {
    (void)unused;
    /* After pivot_root(".", ".") the old root is mounted over the new one: "/" with the
     * mount-point lookup of umount reaches the top one. */
    detacher_result = raw_call(SYS_umount2, (long)"/", MNT_DETACH, 0, 0);
    return 0;
}

static int start_detaching(void) {
    detacher_stack = mmap(NULL, detacher_stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (detacher_stack == MAP_FAILED) {
        detacher_stack = NULL;
        return errno;
    }
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    int flags = CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
    int started = clone(detach_old_root, (char *)detacher_stack + detacher_stack_size, flags, NULL, (pid_t *)&detacher_tid, NULL,
                        (pid_t *)&detacher_tid);
    int failure = started < 0 ? errno : 0;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (failure != 0) {
        munmap(detacher_stack, detacher_stack_size);
        detacher_stack = NULL;
    }
    return failure;
}

int berth_root_settled(char *message, size_t size) {
    if (detacher_stack == NULL) return 0;
    for (int tid; (tid = detacher_tid) != 0;) syscall(SYS_futex, &detacher_tid, FUTEX_WAIT, tid, NULL, NULL, 0);
    munmap(detacher_stack, detacher_stack_size);
    detacher_stack = NULL;
    if (detacher_result == 0) return 0;
    snprintf(message, size, "detaching the old root failed: %s", strerror((int)-detacher_result));
    return (int)-detacher_result;
}

int berth_make_root(const char *const *paths, const int32_t *writable, size_t count, char *message, size_t size) {
#define FAIL(what)                                                                 \
    do {                                                                           \
        int code = errno;                                                          \
        snprintf(message, size, "%s failed: %s", what, strerror(code));           \
        return code;                                                               \
    } while (0)
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) FAIL("making / private");
    /* The staging root: a tmpfs over /tmp; once it is the root, the old /tmp shows again
     * beneath /oldroot. */
    if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=64k") != 0) FAIL("mount tmpfs on /tmp");
    if (chdir("/tmp") != 0) FAIL("chdir /tmp");
    if (mkdir("newroot", 0755) != 0 || mkdir("oldroot", 0755) != 0) FAIL("mkdir newroot");
    if (syscall(SYS_pivot_root, ".", "oldroot") != 0) FAIL("pivot_root to the staging root");
    if (chdir("/") != 0) FAIL("chdir /");
    if (mount("tmpfs", "/newroot", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") != 0) FAIL("mount tmpfs on the new root");
    if (make_folders("/newroot/proc") != 0) FAIL("mkdir /proc");
    /* /proc of its own PID namespace when it has one, else the host's (Landlock still grants
     * only its own /proc/<pid>). */
    if (mount("proc", "/newroot/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) != 0 &&
        mount("/oldroot/proc", "/newroot/proc", NULL, MS_BIND | MS_REC, NULL) != 0)
        FAIL("mount /proc");
    if (make_folders("/newroot/tmp") != 0) FAIL("mkdir /tmp");
    if (mount("tmpfs", "/newroot/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=16m") != 0) FAIL("mount the private /tmp");
    static const char *devices[] = {"/dev/null", "/dev/zero", "/dev/urandom"};
    for (size_t index = 0; index < 3; index++) {
        char source[64], target[64];
        snprintf(source, sizeof source, "/oldroot%s", devices[index]);
        snprintf(target, sizeof target, "/newroot%s", devices[index]);
        if (make_parent(target) != 0) FAIL("mkdir /dev");
        int fd = open(target, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) close(fd);
        if (mount(source, target, NULL, MS_BIND, NULL) != 0) FAIL(devices[index]);
    }
    /* The grants last: a grant beneath /tmp lands in the private /tmp. */
    for (size_t index = 0; index < count; index++) {
        int failure = bind(paths[index], writable[index], message, size);
        if (failure) return failure;
    }
    if (chdir("/newroot") != 0) FAIL("chdir /newroot");
    if (syscall(SYS_pivot_root, ".", ".") != 0) FAIL("pivot_root into the new root");
    if (chdir("/") != 0) FAIL("chdir /");
    /* The old root is detached by a thread (above) while the worker goes on; where none can
     * be started, here. */
    errno = start_detaching();
    if (errno != 0 && umount2("/", MNT_DETACH) != 0) FAIL("detaching the old root");
    if (mount(NULL, "/", NULL, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0 &&
        mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL) != 0)
        FAIL("making / read-only");
    return 0;
#undef FAIL
}
