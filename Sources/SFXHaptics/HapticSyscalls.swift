import CGPIOD
import CSFXHaptics
import Glibc

/// Every system call the evdev and GPIO backends make, behind one protocol tests can replace.
///
/// In the manner of swift-system's syscall mocking: production code uses `LiveHapticSyscalls`,
/// which calls the kernel (and libgpiod) directly; a test passes its own conformance to **trace**
/// each call — the exact bytes of every ioctl argument and every write — and to **fail** any call
/// with a chosen errno. Results follow the kernel's convention: a non-negative value on success,
/// `-errno` on failure, so no thread-local `errno` has to cross the protocol.
public protocol HapticSyscalls: Sendable {
    /// `open(2)`: a file descriptor, or `-errno`.
    func open(_ path: String, _ flags: Int32) -> Int32
    /// `close(2)`: 0, or `-errno`.
    func close(_ fd: Int32) -> Int32
    /// `write(2)`: the bytes written, or `-errno`.
    func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int
    /// `ioctl(2)`: the result, or `-errno`. The kernel may read and write `argument`.
    func ioctl(_ fd: Int32, _ request: UInt, _ argument: IoctlArgument) -> Int32

    /// libgpiod: open `chip` (name, number, path or label), request `offset` as an output driven
    /// to `value` (logical: with `activeLow`, 1 drives the line low), or `-errno`.
    func gpioRequestOutput(chip: String, offset: UInt32, activeLow: Bool, consumer: String, value: Int32) -> Result<GPIOLineHandle, GPIOFailure>
    /// libgpiod: set a requested line's logical value; 0, or `-errno`.
    func gpioSetValue(_ line: GPIOLineHandle, _ value: Int32) -> Int32
    /// libgpiod: release the line and close its chip.
    func gpioRelease(_ line: GPIOLineHandle)
}

/// The third argument of an ioctl: a buffer the kernel reads or fills, or a plain integer.
public enum IoctlArgument {
    case buffer(UnsafeMutableRawBufferPointer)
    case integer(Int)
}

/// A requested GPIO line; `chip` and `line` are libgpiod's handles as opaque numbers.
public struct GPIOLineHandle: Sendable, Equatable {
    public let chip: UInt
    public let line: UInt

    public init(chip: UInt, line: UInt) {
        self.chip = chip
        self.line = line
    }
}

/// Which GPIO step failed, with its errno: the chip lookup, the line lookup or the request.
public struct GPIOFailure: Error, Equatable {
    public enum Step: Sendable { case openChip, getLine, request }
    public let step: Step
    public let errno: Int32

    public init(_ step: Step, errno: Int32) {
        self.step = step
        self.errno = errno
    }
}

/// The real system calls and libgpiod.
public struct LiveHapticSyscalls: HapticSyscalls {
    public init() {}

    public func open(_ path: String, _ flags: Int32) -> Int32 {
        result(Glibc.open(path, flags | O_CLOEXEC))
    }

    public func close(_ fd: Int32) -> Int32 {
        result(Glibc.close(fd))
    }

    public func write(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        let written = Glibc.write(fd, bytes.baseAddress, bytes.count)
        return written < 0 ? -Int(errno) : written
    }

    public func ioctl(_ fd: Int32, _ request: UInt, _ argument: IoctlArgument) -> Int32 {
        switch argument {
        case .buffer(let buffer): result(sfxh_ioctl_pointer(fd, request, buffer.baseAddress))
        case .integer(let value): result(sfxh_ioctl_integer(fd, request, value))
        }
    }

    public func gpioRequestOutput(chip: String, offset: UInt32, activeLow: Bool, consumer: String, value: Int32) -> Result<GPIOLineHandle, GPIOFailure> {
        guard let chipHandle = gpiod_chip_open_lookup(chip) else { return .failure(GPIOFailure(.openChip, errno: errno)) }
        guard let line = gpiod_chip_get_line(chipHandle, offset) else {
            let failure = GPIOFailure(.getLine, errno: errno)
            gpiod_chip_close(chipHandle)
            return .failure(failure)
        }
        let flags = activeLow ? Int32(GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW) : 0
        guard gpiod_line_request_output_flags(line, consumer, flags, value) == 0 else {
            let failure = GPIOFailure(.request, errno: errno)
            gpiod_chip_close(chipHandle)
            return .failure(failure)
        }
        return .success(GPIOLineHandle(chip: UInt(bitPattern: chipHandle), line: UInt(bitPattern: line)))
    }

    public func gpioSetValue(_ line: GPIOLineHandle, _ value: Int32) -> Int32 {
        guard let pointer = OpaquePointer(bitPattern: line.line) else { return -EBADF }
        return result(gpiod_line_set_value(pointer, value))
    }

    public func gpioRelease(_ line: GPIOLineHandle) {
        if let pointer = OpaquePointer(bitPattern: line.line) { gpiod_line_release(pointer) }
        if let pointer = OpaquePointer(bitPattern: line.chip) { gpiod_chip_close(pointer) }
    }

    private func result(_ value: Int32) -> Int32 {
        value < 0 ? -errno : value
    }
}
