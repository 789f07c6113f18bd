import CFFmpeg
import CSndFile
import FoundationEssentials
import Glibc

/// A recording's output: a file descriptor of ours (opened O_EXCL | O_NOFOLLOW, 0600) that
/// libavformat (M4A) and libsndfile (the others) write through, so that every write — the
/// codecs' flushes and trailers at the end included — is checked here, whatever the library
/// does with a short write. The first failure is kept for the encoder to report.
///
/// After a failure nothing more is appended: a write that would reach past the file's end is
/// refused (libsndfile then sees a short write, FFmpeg an error), so a library finishing the
/// file cannot leave a fragment or frame half written behind what fitted. Rewrites within the
/// file (WAV's lengths, FLAC's STREAMINFO) still go through: they need no space.
final class DescriptorSink {
    private(set) var fd: Int32
    /// The errno of the first failed write or seek, 0 while all is well.
    private(set) var failure: Int32 = 0
    /// The file's length: the furthest byte written.
    private(set) var end: Int64 = 0

    init(_ fd: Int32) { self.fd = fd }

    func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    func error(path: String) -> MediaError? {
        failure == 0 ? nil : RecordingFile.writeError(failure, detail: String(cString: strerror(failure)), path: path)
    }

    /// Writes `count` bytes at the descriptor's offset; returns the bytes written (short only on
    /// a failure, which is kept).
    func write(_ bytes: UnsafeRawPointer, count: Int) -> Int {
        let position = Int64(lseek(fd, 0, SEEK_CUR))
        guard position >= 0 else {
            if failure == 0 { failure = errno }
            return 0
        }
        let allowed = failure == 0 || position + Int64(count) <= end ? count : 0
        var done = 0
        while done < allowed {
            let n = Glibc.write(fd, bytes + done, allowed - done)
            if n < 0 {
                if errno == EINTR { continue }
                if failure == 0 { failure = errno }
                break
            }
            if n == 0 {
                if failure == 0 { failure = EIO }
                break
            }
            done += n
        }
        end = max(end, position + Int64(done))
        return done
    }

    /// Cuts the file to `length` bytes (what is complete of it after a failure).
    func truncate(to length: Int64) -> Bool {
        guard ftruncate(fd, off_t(length)) == 0 else { return false }
        end = length
        return true
    }

    // MARK: libavformat's callbacks

    static let write: @convention(c) (UnsafeMutableRawPointer?, UnsafeMutablePointer<UInt8>?, Int32) -> Int32 = { opaque, buffer, size in
        let sink = Unmanaged<DescriptorSink>.fromOpaque(opaque!).takeUnretainedValue()
        guard sink.failure == 0 else { return sfx_averror(sink.failure) }
        let done = sink.write(buffer!, count: Int(size))
        return done == Int(size) ? size : sfx_averror(sink.failure)
    }

    static let seek: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int64 = { opaque, offset, whence in
        let sink = Unmanaged<DescriptorSink>.fromOpaque(opaque!).takeUnretainedValue()
        if whence & Int32(AVSEEK_SIZE) != 0 {
            var st = stat()
            return fstat(sink.fd, &st) == 0 ? Int64(st.st_size) : Int64(sfx_averror(errno))
        }
        let position = lseek(sink.fd, off_t(offset), whence & ~Int32(AVSEEK_FORCE))
        return position < 0 ? Int64(sfx_averror(errno)) : Int64(position)
    }

    // MARK: libsndfile's virtual I/O

    /// libsndfile's callbacks over a sink passed as the user data.
    static var virtualIO: SF_VIRTUAL_IO {
        var io = SF_VIRTUAL_IO()
        io.get_filelen = { user in
            var st = stat()
            return fstat(sink(user).fd, &st) == 0 ? sf_count_t(st.st_size) : -1
        }
        io.seek = { offset, whence, user in
            sf_count_t(lseek(sink(user).fd, off_t(offset), whence))
        }
        io.read = { buffer, count, user in
            let n = Glibc.read(sink(user).fd, buffer, Int(count))
            return sf_count_t(max(n, 0))
        }
        io.write = { buffer, count, user in
            sf_count_t(sink(user).write(buffer!, count: Int(count)))
        }
        io.tell = { user in
            sf_count_t(lseek(sink(user).fd, 0, SEEK_CUR))
        }
        return io
    }
}

/// The sink behind libsndfile's user data.
private func sink(_ user: UnsafeMutableRawPointer?) -> DescriptorSink {
    Unmanaged<DescriptorSink>.fromOpaque(user!).takeUnretainedValue()
}
