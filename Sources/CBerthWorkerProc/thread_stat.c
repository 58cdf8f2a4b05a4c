/*
 * berth-worker's own definition of open(2), which the dynamic linker binds libdispatch's
 * calls to. libdispatch's thread-pool monitor reads /proc/<tid>/stat for each of its worker
 * threads and aborts the process when that open fails. The worker's Landlock rules grant
 * only its own /proc/<pid> folder, and a thread's entry at the top level of /proc is not
 * beneath it, so this open tries the same thread's /proc/<pid>/task/<tid>/stat first (same
 * contents) and only then the path as given. Every other path opens unchanged.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

#include "berth_worker_proc.h"

/* The tid in "/proc/<tid>/stat", or 0 when `path` is not of that form. */
static long thread_of_stat_path(const char *path) {
    static const char prefix[] = "/proc/";
    for (int i = 0; prefix[i] != '\0'; i++) {
        if (path[i] != prefix[i]) return 0;
    }
    long tid = 0;
    const char *cursor = path + sizeof prefix - 1;
    for (; *cursor >= '0' && *cursor <= '9'; cursor++) {
        if (tid > 1L << 40) return 0;
        tid = tid * 10 + (*cursor - '0');
    }
    static const char suffix[] = "/stat";
    for (int i = 0; suffix[i] != '\0'; i++) {
        if (cursor[i] != suffix[i]) return 0;
    }
    return cursor[sizeof suffix - 1] == '\0' ? tid : 0;
}

int open(const char *path, int flags, ...) {
    mode_t mode = 0;
    if ((flags & O_CREAT) != 0 || (flags & O_TMPFILE) == O_TMPFILE) {
        va_list arguments;
        va_start(arguments, flags);
        mode = (mode_t)va_arg(arguments, int);
        va_end(arguments);
    }
    long tid = thread_of_stat_path(path);
    if (tid > 0 && tid != (long)getpid()) {
        char own[64];
        snprintf(own, sizeof own, "/proc/%ld/task/%ld/stat", (long)getpid(), tid);
        int descriptor = openat(AT_FDCWD, own, flags, mode);
        if (descriptor >= 0 || errno != ENOENT) return descriptor;
    }
    return openat(AT_FDCWD, path, flags, mode);
}

int berth_worker_thread_stat_redirect(void) { return 1; }
