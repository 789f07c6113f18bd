import FoundationEssentials
import SFXSystem
import Glibc

func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

func seconds(_ s: Double) -> String { String(cFormat: "%.3f s", s) }
