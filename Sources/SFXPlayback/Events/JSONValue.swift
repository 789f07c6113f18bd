import FoundationEssentials

/// A JSON document as values, read with the toolchain's JSONDecoder (FoundationEssentials), in the
/// shapes BankFile looks at: objects as `[String: Any]`, arrays as `[Any]`, numbers as `Double`,
/// `true`/`false` as `Bool`, strings, and `JSONNull`.
enum JSONValue: Decodable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    /// Parses `data`; a syntax error throws a `JSONSyntaxError` that says where.
    static func parse(_ data: Data) throws(JSONSyntaxError) -> Any {
        if let problem = JSONSyntax.firstError(in: Array(data)) { throw problem }
        do { return try JSONDecoder().decode(JSONValue.self, from: data).any } catch {
            // The syntax was checked: what JSONDecoder refuses beyond it (a number out of range).
            throw JSONSyntaxError(offset: 0, message: "\(errorDescription(error))")
        }
    }

    var any: Any {
        switch self {
        case .null: JSONNull()
        case .bool(let value): value
        case .number(let value): value
        case .string(let value): value
        case .array(let values): values.map(\.any)
        case .object(let members): members.mapValues(\.any)
        }
    }

    private static func errorDescription(_ error: any Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error { return context.debugDescription }
        if case DecodingError.typeMismatch(_, let context) = error { return context.debugDescription }
        return "\(error)"
    }
}

/// JSON's null.
struct JSONNull: Hashable {}

/// Where a JSON text first breaks RFC 8259's grammar, and how.
struct JSONSyntaxError: Error, Sendable {
    /// The byte offset of the fault.
    var offset: Int
    var message: String
}

/// A check of RFC 8259's grammar alone (no values are built: JSONDecoder builds them), for the
/// place of a syntax error, which JSONDecoder does not give.
enum JSONSyntax {
    static func firstError(in bytes: [UInt8]) -> JSONSyntaxError? {
        var scanner = Scanner(bytes: bytes)
        do throws(JSONSyntaxError) {
            scanner.skipSpace()
            try scanner.value(depth: 0)
            scanner.skipSpace()
            if scanner.at < bytes.count { throw scanner.fault("unexpected \(scanner.shown) after the document") }
            return nil
        } catch {
            return error
        }
    }

    private struct Scanner {
        let bytes: [UInt8]
        var at = 0

        var shown: String {
            guard at < bytes.count else { return "end of file" }
            let byte = bytes[at]
            return (0x21..<0x7f).contains(byte) ? "character '\(Character(Unicode.Scalar(byte)))'" : "byte \(byte)"
        }

        func fault(_ message: String) -> JSONSyntaxError { JSONSyntaxError(offset: at, message: message) }

        mutating func skipSpace() {
            while at < bytes.count, [0x20, 0x09, 0x0a, 0x0d].contains(bytes[at]) { at += 1 }
        }

        mutating func expect(_ byte: UInt8, _ what: String) throws(JSONSyntaxError) {
            guard at < bytes.count, bytes[at] == byte else { throw fault("expected \(what), found \(shown)") }
            at += 1
        }

        mutating func value(depth: Int) throws(JSONSyntaxError) {
            guard depth < 512 else { throw fault("nested more than 512 deep") }
            guard at < bytes.count else { throw fault("expected a value, found end of file") }
            switch bytes[at] {
            case UInt8(ascii: "{"):
                at += 1
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "}") { at += 1; return }
                while true {
                    skipSpace()
                    guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw fault("expected a quoted key, found \(shown)") }
                    try string()
                    skipSpace()
                    try expect(UInt8(ascii: ":"), "':' after the key")
                    skipSpace()
                    try value(depth: depth + 1)
                    skipSpace()
                    if at < bytes.count, bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                    try expect(UInt8(ascii: "}"), "',' or '}'")
                    return
                }
            case UInt8(ascii: "["):
                at += 1
                skipSpace()
                if at < bytes.count, bytes[at] == UInt8(ascii: "]") { at += 1; return }
                while true {
                    skipSpace()
                    try value(depth: depth + 1)
                    skipSpace()
                    if at < bytes.count, bytes[at] == UInt8(ascii: ",") { at += 1; continue }
                    try expect(UInt8(ascii: "]"), "',' or ']'")
                    return
                }
            case UInt8(ascii: "\""): try string()
            case UInt8(ascii: "t"): try word("true")
            case UInt8(ascii: "f"): try word("false")
            case UInt8(ascii: "n"): try word("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
            default: throw fault("expected a value, found \(shown)")
            }
        }

        mutating func word(_ text: String) throws(JSONSyntaxError) {
            for byte in text.utf8 {
                guard at < bytes.count, bytes[at] == byte else { throw fault("expected \(text), found \(shown)") }
                at += 1
            }
        }

        mutating func string() throws(JSONSyntaxError) {
            at += 1
            while at < bytes.count {
                let byte = bytes[at]
                if byte == UInt8(ascii: "\"") { at += 1; return }
                if byte < 0x20 { throw fault("a control character (\(byte)) inside a string: escape it") }
                if byte == UInt8(ascii: "\\") {
                    at += 1
                    guard at < bytes.count else { break }
                    switch bytes[at] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                         UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"): at += 1
                    case UInt8(ascii: "u"):
                        at += 1
                        for _ in 0..<4 {
                            guard at < bytes.count, (bytes[at] as UInt8).isHexDigit else { throw fault("expected 4 hex digits after \\u") }
                            at += 1
                        }
                    default: throw fault("an unknown escape \\\(Character(Unicode.Scalar(bytes[at]))) in a string")
                    }
                    continue
                }
                at += 1
            }
            throw fault("a string not closed before the end of file")
        }

        mutating func number() throws(JSONSyntaxError) {
            if bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard at < bytes.count, bytes[at].isDigit else { throw fault("expected a digit, found \(shown)") }
            if bytes[at] == UInt8(ascii: "0") { at += 1 } else { while at < bytes.count, bytes[at].isDigit { at += 1 } }
            if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
                at += 1
                guard at < bytes.count, bytes[at].isDigit else { throw fault("expected a digit after '.', found \(shown)") }
                while at < bytes.count, bytes[at].isDigit { at += 1 }
            }
            if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
                at += 1
                if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
                guard at < bytes.count, bytes[at].isDigit else { throw fault("expected an exponent's digit, found \(shown)") }
                while at < bytes.count, bytes[at].isDigit { at += 1 }
            }
        }
    }
}

private extension UInt8 {
    var isDigit: Bool { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) }
    var isHexDigit: Bool { isDigit || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self | 0x20) }
}
