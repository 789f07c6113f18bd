import Foundation

/// What the link tests read from an ELF file (a program or a shared library), through binutils'
/// `readelf` and `nm`: the libraries it needs, its SONAME, the symbols it exports.
public struct ELFFile {
    public let url: URL

    public init(_ url: URL) { self.url = url }

    /// readelf or nm failed on the file.
    public struct Unreadable: Error, CustomStringConvertible {
        public let description: String
    }

    /// Its DT_NEEDED entries, in order, as `readelf -d` prints them
    /// ("0x0000000000000001 (NEEDED)   Shared library: [libc.so.6]").
    public func neededLibraries() throws -> [String] {
        try dynamicEntries(tagged: "(NEEDED)")
    }

    /// Its DT_SONAME ("0x000000000000000e (SONAME)   Library soname: [libsfx.so.0]"), nil without one.
    public func soname() throws -> String? {
        try dynamicEntries(tagged: "(SONAME)").first
    }

    /// The names of the symbols it defines in its dynamic symbol table (`nm -D --defined-only`):
    /// functions and data (an upper-case type letter), not absolute symbols such as version
    /// nodes (A), without their version ("sfx_play@@LIBSFX_0" is "sfx_play").
    public func exportedSymbols() throws -> Set<String> {
        let text = try tool("/usr/bin/nm", ["-D", "--defined-only"])
        return Set(text.split(separator: "\n").compactMap { line -> String? in
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[1].first?.isUppercase == true, fields[1] != "A" else { return nil }
            return String(fields[2].split(separator: "@").first!)
        })
    }

    /// The Swift modules whose code it holds: the module names of the mangled symbols its full
    /// symbol table defines (`nm --defined-only`: `$s20FoundationEssentials…` is FoundationEssentials),
    /// and `ICU` when it holds ICU's C functions (`ucal_open`, `ubrk_open`, … with their version
    /// suffix, as Foundation's `_FoundationICU` links them).
    public func swiftModules() throws -> Set<String> {
        let text = try tool("/usr/bin/nm", ["--defined-only"])
        var modules: Set<String> = []
        for line in text.split(separator: "\n") {
            guard let name = line.split(separator: " ").last else { continue }
            if name.hasPrefix("ucal_open") || name.hasPrefix("ubrk_open") || name.hasPrefix("uloc_getDefault") { modules.insert("ICU") }
            guard name.hasPrefix("$s"), let first = name.dropFirst(2).first, first.isNumber else { continue }
            let digits = name.dropFirst(2).prefix(while: \.isNumber)
            guard let length = Int(digits) else { continue }
            let module = name.dropFirst(2 + digits.count).prefix(length)
            if module.count == length { modules.insert(String(module)) }
        }
        return modules
    }

    /// The bracketed values of `readelf -d`'s lines that carry `tag`.
    private func dynamicEntries(tagged tag: String) throws -> [String] {
        let text = try tool("/usr/bin/readelf", ["-d"])
        return text.split(separator: "\n").filter { $0.contains(tag) }.compactMap { line in
            guard let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]"), open < close else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }

    private func tool(_ path: String, _ arguments: [String]) throws -> String {
        let run = try runToEnd(URL(filePath: path), arguments + [url.path], errors: .captured)
        guard run.status == 0 else {
            throw Unreadable(description: "\(URL(filePath: path).lastPathComponent) \(arguments.joined(separator: " ")) \(url.path) failed (\(run.status)): \(run.errors)")
        }
        return run.output
    }
}
