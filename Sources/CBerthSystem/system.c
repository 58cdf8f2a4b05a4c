#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <malloc.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "berth_system.h"

int berth_peer_credentials(int socket_fd, uint32_t *out_uid, int32_t *out_pid) {
    struct ucred credentials;
    socklen_t length = sizeof credentials;
    if (getsockopt(socket_fd, SOL_SOCKET, SO_PEERCRED, &credentials, &length) != 0) {
        return errno;
    }
    *out_uid = credentials.uid;
    *out_pid = credentials.pid;
    return 0;
}

int berth_wake_descriptor(void) {
    return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
}

int berth_watch_create(void) {
    return epoll_create1(EPOLL_CLOEXEC);
}

int berth_watch_set(int watch_fd, int fd, int add, int armed, uint64_t token) {
    /* One-shot: a report disarms the descriptor until it is armed again. Disarmed, it
     * reports nothing but a hang-up or error, and those once. */
    struct epoll_event event = { .events = (armed ? EPOLLIN : 0) | EPOLLONESHOT, .data.u64 = token };
    return epoll_ctl(watch_fd, add ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event);
}

int berth_watch_remove(int watch_fd, int fd) {
    return epoll_ctl(watch_fd, EPOLL_CTL_DEL, fd, NULL);
}

int berth_watch_wait(int watch_fd, uint64_t *tokens, int capacity) {
    struct epoll_event events[64];
    if (capacity > 64) capacity = 64;
    int count = epoll_wait(watch_fd, events, capacity, -1);
    for (int index = 0; index < count; index++) tokens[index] = events[index].data.u64;
    return count;
}

int berth_socket_unsent(int fd) {
    int unsent = 0;
    return ioctl(fd, SIOCOUTQ, &unsent) == 0 ? unsent : -1;
}

int berth_open_place(const char *path) {
    return open(path, O_PATH | O_CLOEXEC);
}

/* openat2 (Linux 5.6), spelled out: the build machine's kernel headers may predate it. */
#ifndef __NR_openat2
#define __NR_openat2 437
#endif

struct berth_open_how {
    uint64_t flags;
    uint64_t mode;
    uint64_t resolve;
};

enum {
    BERTH_RESOLVE_NO_MAGICLINKS = 0x02,
    BERTH_RESOLVE_NO_SYMLINKS = 0x04,
    BERTH_RESOLVE_BENEATH = 0x08,
};

int berth_open_beneath(int folder, const char *path, int flags) {
    struct berth_open_how how = {
        .flags = (uint64_t)flags,
        .mode = 0,
        .resolve = BERTH_RESOLVE_BENEATH | BERTH_RESOLVE_NO_SYMLINKS | BERTH_RESOLVE_NO_MAGICLINKS,
    };
    return (int)syscall(__NR_openat2, folder, path, &how, sizeof how);
}

uint64_t berth_heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return (uint64_t)info.uordblks;
}

int berth_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL) == 0 ? 0 : errno;
}

int berth_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL) == 0 ? 0 : errno;
}

/* libdispatch's run-loop hooks (what CoreFoundation's run loop uses on Linux). */
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *message);

int berth_main_queue_descriptor(void) {
    return _dispatch_get_main_queue_handle_4CF();
}

void berth_drain_main_queue(void) {
    uint64_t pending;
    /* The handle is a non-blocking eventfd: take the wake-up, then run the queue. */
    ssize_t ignored = read(_dispatch_get_main_queue_handle_4CF(), &pending, sizeof pending);
    (void)ignored;
    _dispatch_main_queue_callback_4CF(NULL);
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif

int berth_wait_for_process_end(int pid, int milliseconds) {
    int descriptor = (int)syscall(SYS_pidfd_open, pid, 0);
    if (descriptor < 0) return -errno;
    struct pollfd ended = {descriptor, POLLIN, 0};
    int ready;
    do {
        ready = poll(&ended, 1, milliseconds);
    } while (ready < 0 && errno == EINTR);
    int failure = ready < 0 ? -errno : 0;
    close(descriptor);
    return failure != 0 ? failure : ready > 0;
}
