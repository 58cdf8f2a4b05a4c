#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

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

uint64_t berth_heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return (uint64_t)info.uordblks;
}

int berth_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL) == 0 ? 0 : errno;
}
