/* berth-worker's open(2) that serves libdispatch's /proc/<tid>/stat reads from the
 * worker's own /proc/<pid>/task folder (thread_stat.c). */
#ifndef BERTH_WORKER_PROC_H
#define BERTH_WORKER_PROC_H

/* Returns 1; calling it keeps thread_stat.c's object in the executable. */
int berth_worker_thread_stat_redirect(void);

#endif
