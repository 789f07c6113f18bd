import CSFXHaptics
import Glibc

/// A program the command backend runs: started in a process group of its own with every signal
/// at its default and none blocked, and ended — with its whole group — on a stop, or by a
/// watchdog if this process dies first.
///
/// Why each part:
/// - **Signals.** `posix_spawn` passes on the *calling thread's* signal mask and any signal this
///   process ignores. A Dispatch worker blocks SIGINT and SIGTERM once the process handles them
///   through Dispatch (`Vibrator.installSignalCleanup()`, the `sfx` command), and
///   `installSignalCleanup()` ignores them process-wide; a program started like that never hears
///   SIGTERM, so its "turn it off" handler never runs. The child gets an empty mask and every
///   signal at its default.
/// - **Process group.** A stop sends SIGTERM to the group, so a script's own children (a `sleep`
///   it waits on) end too and the script's trap runs at once; SIGKILL follows after the grace.
/// - **Watchdog.** If this process dies (even by SIGKILL), a forked watchdog (`sfxh_start_watchdog`)
///   reads end-of-file on a pipe only this process held and ends the group the same way. It
///   watches the process, not a thread: PR_SET_PDEATHSIG would fire when the *thread* that
///   forked exits, which a Dispatch worker may do.
///
/// `start`, `waitForExit` and `end` are called from one thread at a time.
struct ChildProgram {
    let pid: pid_t
    private let watchdog: pid_t
    private let guardDescriptor: Int32

    /// Starts `path` with `arguments` (the first is the program's name) and `environment`
    /// (`NAME=value` strings).
    static func start(_ path: String, arguments: [String], environment: [String], graceMilliseconds: Int) throws(HapticError) -> ChildProgram {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let result = posix_spawn(&pid, path, nil, &attributes, argv, envp)
        guard result == 0 else { throw HapticError.system(result, device: path, operation: "start", kind: .command) }

        var guardDescriptor: Int32 = -1
        let watchdog = sfxh_start_watchdog(pid, Int32(graceMilliseconds), &guardDescriptor)
        guard watchdog > 0 else {
            // Without a watchdog the program could outlive us: do not let it run.
            kill(-pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            throw HapticError.system(-watchdog, device: path, operation: "start a watchdog for", kind: .command)
        }
        return ChildProgram(pid: pid, watchdog: watchdog, guardDescriptor: guardDescriptor)
    }

    /// Waits for the program to exit, polling every 10 ms; returns its wait status, or nil when
    /// `stop` was signalled first (the program is still running then: call `end`).
    func waitForExit(until stop: HapticStopSignal) -> Int32? {
        while sfxh_child_has_ended(pid) == 0 {
            guard stop.wait(milliseconds: 10) else { return nil }
        }
        return reap()
    }

    /// SIGTERM to the program's group, SIGKILL to it if the program is still running after
    /// `graceMilliseconds`; returns once the program has ended and been reaped.
    func end(graceMilliseconds: Int) {
        kill(-pid, SIGTERM)
        var waited = 0
        while sfxh_child_has_ended(pid) == 0 {
            if waited >= graceMilliseconds {
                kill(-pid, SIGKILL)
                break
            }
            usleep(1000)
            waited += 1
        }
        _ = reap()
    }

    /// Ends the watchdog (the program's group needs no guarding once the program has ended),
    /// then reaps the program; in that order, so that the watchdog can never signal a group
    /// whose number has been reused.
    private func reap() -> Int32 {
        var status: Int32 = 0
        kill(watchdog, SIGKILL)
        while waitpid(watchdog, &status, 0) < 0 && errno == EINTR {}
        close(guardDescriptor)
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return status
    }
}
