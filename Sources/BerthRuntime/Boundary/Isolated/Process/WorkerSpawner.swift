@_spi(Engine) import BerthCore
import Foundation
private import CBerthSystem

/// The `posix_spawn` call behind `WorkerProcess.spawn`, run on the spawn thread.
enum WorkerSpawner {
    struct Failure: Error {
        let code: WorkerSpawnError.Code
        let errnoText: String
    }

    /// Starts the worker with `channel` as its descriptor 3 and a new pipe as its stdout and
    /// stderr, in a session of its own (no controlling terminal, so nothing it does reaches
    /// the host's terminal), with every other descriptor closed. Returns its pid and the
    /// read end of that pipe (close-on-exec). `namespaces`: the shared network namespace's
    /// two descriptors (`SharedNetworkNamespace`), given to the worker as descriptors 4 and 5.
    static func spawn(executable: String, arguments: [String], environment: [String], channel: Int32,
                      namespaces: (user: Int32, network: Int32)? = nil) -> Result<(pid: Int32, standardError: Int32), Failure> {
        // The stderr pipe is made here, on the spawn thread, and marked close-on-exec at
        // once: no worker spawned meanwhile can inherit it (Swift cannot reach pipe2).
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0 else { return .failure(Failure(code: .descriptorsFailed, errnoText: errnoText())) }
        _ = fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC)
        // Sources at 10 or above, so the dup2 targets (0, 2, 3) never overlap a source.
        let childChannel = fcntl(channel, F_DUPFD_CLOEXEC, 10)
        let childError = fcntl(pipeEnds[1], F_DUPFD_CLOEXEC, 10)
        close(pipeEnds[1])
        defer {
            if childChannel >= 0 { close(childChannel) }
            if childError >= 0 { close(childError) }
        }
        guard childChannel >= 0, childError >= 0 else {
            close(pipeEnds[0])
            return .failure(Failure(code: .descriptorsFailed, errnoText: errnoText()))
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, childError, 1)
        posix_spawn_file_actions_adddup2(&actions, childError, 2)
        posix_spawn_file_actions_adddup2(&actions, childChannel, 3)
        var firstClosed: Int32 = 4
        if let namespaces {
            // Held close-on-exec by the host (never below 4, so no dup2 above overlaps them).
            posix_spawn_file_actions_adddup2(&actions, namespaces.user, SharedNetworkNamespace.firstWorkerDescriptor)
            posix_spawn_file_actions_adddup2(&actions, namespaces.network, SharedNetworkNamespace.firstWorkerDescriptor + 1)
            firstClosed = SharedNetworkNamespace.firstWorkerDescriptor + 2
        }
        // Whatever the host opened without close-on-exec (a library's, a test's) stays here.
        let closing = berth_spawn_close_from(&actions, firstClosed)
        guard closing == 0 else {
            close(pipeEnds[0])
            return .failure(Failure(code: .descriptorsFailed, errnoText: errnoText(closing)))
        }

        // Default signal dispositions, an empty mask and a session of its own.
        var attributes = posix_spawnattr_t()
        let prepared = berth_spawn_attributes_init(&attributes)
        guard prepared == 0 else {
            close(pipeEnds[0])
            return .failure(Failure(code: .spawnFailed, errnoText: errnoText(prepared)))
        }
        defer { posix_spawnattr_destroy(&attributes) }

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else {
            close(pipeEnds[0])
            return .failure(Failure(code: .spawnFailed, errnoText: errnoText(status)))
        }
        return .success((pid, pipeEnds[0]))
    }

    static func errnoText(_ code: Int32 = errno) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }
}
