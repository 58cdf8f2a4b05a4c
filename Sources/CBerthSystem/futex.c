#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "berth_system.h"

/* Swift cannot call the variadic syscall(2); Locked.swift and LockedCondition.swift keep the words. */

void berth_futex_wait(uint32_t *word, uint32_t expected) {
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, NULL, NULL, 0);
}

int berth_futex_wait_timeout(uint32_t *word, uint32_t expected, int64_t seconds, int64_t nanoseconds) {
    struct timespec timeout = { .tv_sec = (time_t)seconds, .tv_nsec = (long)nanoseconds };
    long result = syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, expected, &timeout, NULL, 0);
    return result == -1 && errno == ETIMEDOUT;
}

void berth_futex_wake_one(uint32_t *word) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void berth_futex_wake_all(uint32_t *word) {
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
