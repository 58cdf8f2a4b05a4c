// berth-worker: the process an isolated plugin runs in. The host spawns it with one end
// of a socketpair as descriptor 3 (WorkerProcess.spawn); everything else is in
// the BerthWorker target (IsolationWorker).
import BerthWorker
import CBerthSystem
import CBerthWorkerProc
import Glibc

// Die with the host: SIGKILL when the thread that spawned us exits (WorkerProcess spawns
// from a thread that lives as long as the host). Asked before anything else, so the
// parent check in IsolationWorker.run closes the window where the host died first.
if berth_set_parent_death_signal(SIGKILL) != 0 {
    perror("berth-worker: prctl(PR_SET_PDEATHSIG)")
}
// Ctrl-C at the host's terminal reaches the whole foreground process group; it is the
// host's to handle (the REPL cancels a line or a command), so a worker ignores it.
signal(SIGINT, SIG_IGN)
// This executable defines open(2) so that libdispatch's reads of /proc/<tid>/stat stay
// inside the worker's own /proc/<pid> folder, the only part of /proc its sandbox grants.
_ = berth_worker_thread_stat_redirect()
let status = IsolationWorker.run(arguments: Array(CommandLine.arguments.dropFirst()))
// _exit, not exit: plugin threads may still run, and atexit handlers of plugin images
// must not run under them.
fflush(nil)
_exit(status.rawValue)
