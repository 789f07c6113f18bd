import FoundationEssentials
import SFXSystem
import Glibc

/// An XDG base directory (`XDG_STATE_HOME`, `XDG_CONFIG_HOME`, …): the variable when it holds an
/// absolute path, else `$HOME/<fallback>`.
package func xdgDirectory(_ variable: String, default fallback: String, environment: [String: String]) -> URL {
    if let value = environment[variable], value.hasPrefix("/") { return URL(filePath: value) }
    return URL(filePath: environment["HOME"] ?? homeDirectory()).appending(path: fallback)
}
