/* System calls Swift's Glibc module does not expose (they need _GNU_SOURCE). */
#ifndef BERTH_SYSTEM_H
#define BERTH_SYSTEM_H

#include <stdint.h>

/** The peer of a connected Unix socket: its uid and pid (SO_PEERCRED). 0 on success, else errno. */
int berth_peer_credentials(int socket_fd, uint32_t *out_uid, int32_t *out_pid);

/** A non-blocking, close-on-exec eventfd: written to wake a thread that polls it. The descriptor, or -1 with errno set. */
int berth_wake_descriptor(void);

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

#endif
