/*
 * Preloaded (LD_PRELOAD) into the benchmark process that scripts/bench --instructions runs
 * under valgrind, and nowhere else. A Swift executable with an async main parks its main
 * thread in libdispatch's sigsuspend with a signal mask that lives in read-only memory;
 * valgrind 3.19 writes to that mask and dies ("the 'impossible' happened"). This
 * sigsuspend hands the kernel a writable copy of the mask instead.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, _NSIG / 8);
}
