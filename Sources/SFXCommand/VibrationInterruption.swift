import FoundationEssentials
import Dispatch
import Glibc
import SFX
import SFXSystem
import Synchronization

/// SIGINT and SIGTERM during `alert` and `vibrate`: every vibrator is closed — the actuator off,
/// a vibration command's process group sent SIGTERM and waited for — and the command then exits
/// 128 + the signal's number (130, 143), as a shell reports a program the signal ended.
///
/// The signal only records itself and starts the cleanup, on the signal thread; the main thread,
/// woken because the vibration ended, asks `exitStatus()`, which waits for the cleanup to finish.
/// The exit status does not depend on which thread gets there first.
final class VibrationInterruption: @unchecked Sendable {
    private let received = Atomic<Int32>(0)
    private let cleanedUp = DispatchSemaphore(value: 0)

    /// Handles SIGINT and SIGTERM from now on; `alsoOnInterrupt` runs after the vibrators close.
    init(alsoOnInterrupt: @escaping @Sendable () -> Void = {}) {
        SignalRelay.register { [self] number in
            guard received.compareExchange(expected: 0, desired: number, ordering: .acquiringAndReleasing).exchanged else { return }
            Vibrator.closeAll()
            alsoOnInterrupt()
            cleanedUp.signal()
        }
    }

    /// 128 + the signal's number once one arrived (after its cleanup has finished), else nil.
    func exitStatus() -> Int32? {
        let number = received.load(ordering: .acquiring)
        guard number != 0 else { return nil }
        cleanedUp.wait()
        cleanedUp.signal()
        return 128 + number
    }
}
