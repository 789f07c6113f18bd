import SFX
import SFXMedia

/// `sfx completion bash|zsh`: the shell completion scripts, generated from the same option
/// specs that parse the command line and print its help, so they cannot drift apart. An
/// installer writes them where the shell looks (bash-completion's `completions/sfx`, zsh's
/// `site-functions/_sfx`).
///
/// What each value completes to is decided once, by `Completion.of`, for both shells: fixed
/// words, sound names (from `sfx list`), files, sound names and files together, devices (from
/// `sfx devices`), recordings (`sfx recordings --json`), groups, or nothing (a number).
enum CompletionCommand: Subcommand {
    static let spec = CommandSpec(
        name: "completion", abstract: "Print the bash or zsh completion script for sfx.",
        discussion: "Every subcommand, option and fixed value is completed; sound names come from `sfx list`, devices from `sfx devices`, recordings from `sfx recordings`, files from the shell.",
        examples: ["sfx completion bash > /usr/share/bash-completion/completions/sfx",
                   "sfx completion zsh > /usr/local/share/zsh/site-functions/_sfx",
                   "source <(sfx completion bash)"],
        positionals: [PositionalSpec(name: "bash|zsh", help: "The shell.", min: 1, max: 1)],
        options: [])

    static func run(_ arguments: ParsedArguments) throws -> Int32 {
        switch arguments.positionals[0] {
        case "bash": print(bash(MainActor.assumeIsolated { commands.map { $0.spec } }), terminator: "")
        case "zsh": print(zsh(MainActor.assumeIsolated { commands.map { $0.spec } }), terminator: "")
        case let other: throw UsageError(message: "unknown shell '\(other)': expected bash or zsh", command: spec)
        }
        return 0
    }

    /// What a value completes to.
    enum Completion: Equatable {
        case words([String])
        case sounds
        case files
        case soundsAndFiles
        case devices
        /// `rm`, then the names of the saved recordings.
        case recordingAction
        case groups
        case nothing

        /// What the value of `option` completes to.
        static func of(_ option: OptionSpec) -> Completion {
            guard let placeholder = option.value else { return .nothing }
            switch (option.name, placeholder) {
            case ("id", _): return .sounds
            case ("then", _), ("prompt", _): return .soundsAndFiles
            case (_, "PCM"): return .devices
            case ("group", _): return .groups
            case ("backend", _): return .words(HapticBackendKind.allCases.map(\.rawValue))
            case ("effect", _): return .words(VibrationPattern.namedEffects.map(\.name))
            case ("reverb", _): return .words(ReverbSettings.presets.map(\.name))
            case ("vibrate", "WHEN"): return .words(["never", "when-muted", "always"])
            case ("format", "FORMAT"): return .words(OutputFormat.allCases.map(\.rawValue))
            case ("format", "SAMPLE"): return .words(RawPCMFormat.Sample.allCases.map(\.rawValue) + ["cd", "dat"])
            case (_, "FILE"), (_, "PATH"), (_, "PROGRAM"): return .files
            case (_, let words) where words.contains("|"): return .words(words.split(separator: "|").map(String.init))
            default: return .nothing
            }
        }

        /// What the positionals of `spec` complete to.
        static func positionals(of spec: CommandSpec) -> Completion {
            guard let first = spec.positionals.first else { return .nothing }
            switch first.name {
            case "NAME|FILE": return .soundsAndFiles
            case "FILE": return .files
            case "rm NAME": return .recordingAction
            case let words where words.contains("|"): return .words(words.split(separator: "|").map(String.init))
            default: return .nothing
            }
        }
    }

    static func names(_ option: OptionSpec) -> [String] {
        ["--\(option.name)"] + (option.short.map { ["-\($0)"] } ?? [])
    }

    /// The bash statements that set COMPREPLY for `completion` (of the word in `$cur`).
    static func bashReply(_ completion: Completion) -> String {
        switch completion {
        case .words(let words): return "COMPREPLY=($(compgen -W \"\(words.joined(separator: " "))\" -- \"$cur\"))"
        case .sounds: return "COMPREPLY=($(compgen -W \"$(_sfx_sounds)\" -- \"$cur\"))"
        case .files: return "_sfx_files"
        case .soundsAndFiles: return "COMPREPLY=($(compgen -W \"$(_sfx_sounds)\" -- \"$cur\")); _sfx_files"
        case .devices: return "COMPREPLY=($(compgen -W \"$(_sfx_devices)\" -- \"$cur\"))"
        case .recordingAction:
            return "if [[ $prev == rm ]]; then COMPREPLY=($(compgen -W \"$(_sfx_recordings)\" -- \"$cur\")); "
                + "elif [[ $COMP_CWORD -eq 2 ]]; then COMPREPLY=($(compgen -W \"rm\" -- \"$cur\")); else COMPREPLY=(); fi"
        case .groups: return "COMPREPLY=($(compgen -g -- \"$cur\"))"
        case .nothing: return "COMPREPLY=()"
        }
    }

    static func bash(_ specs: [CommandSpec]) -> String {
        var script = """
        # bash completion for sfx, generated by `sfx completion bash`.
        # Names come from the sfx being completed (the command line's first word).
        _sfx_sounds() { command "$_sfx_program" list 2>/dev/null | awk 'NR > 1 { print $2 }'; }
        _sfx_devices() {
            command "$_sfx_program" devices 2>/dev/null | awk '$1 == "NAME" && $2 == "DESCRIPTION" { on = 1; next } on && !NF { exit } on { print $1 }'
        }
        _sfx_recordings() { command "$_sfx_program" recordings --json 2>/dev/null | sed -n 's/^ *"name" : "\\(.*\\)",*$/\\1/p'; }
        _sfx_files() {
            local IFS=$'\\n'
            compopt -o filenames 2>/dev/null
            COMPREPLY+=($(compgen -f -- "$cur"))
        }
        _sfx() {
            local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" _sfx_program="${COMP_WORDS[0]}"
            COMPREPLY=()
            if [[ $COMP_CWORD -eq 1 ]]; then
                COMPREPLY=($(compgen -W "\(specs.map(\.name).joined(separator: " ")) help --help --version" -- "$cur"))
                return
            fi
            case "${COMP_WORDS[1]}" in

        """
        for spec in specs {
            let options = spec.options + [.flag("help", short: "h", help: "")]
            script += "        \(spec.name))\n"
            script += "            case \"$prev\" in\n"
            for option in options where option.value != nil {
                script += "                \(names(option).joined(separator: "|"))) \(bashReply(Completion.of(option))); return ;;\n"
            }
            script += "            esac\n"
            script += "            if [[ $cur == -* ]]; then\n"
            script += "                COMPREPLY=($(compgen -W \"\(options.flatMap(names).joined(separator: " "))\" -- \"$cur\"))\n"
            script += "            else\n"
            script += "                \(bashReply(Completion.positionals(of: spec)))\n"
            script += "            fi\n"
            script += "            ;;\n"
        }
        script += """
            help) COMPREPLY=($(compgen -W "\(specs.map(\.name).joined(separator: " "))" -- "$cur")) ;;
            esac
        }
        complete -F _sfx sfx

        """
        return script
    }

    /// The zsh action for `completion` (the part after the message in an `_arguments` spec).
    static func zshAction(_ completion: Completion) -> String {
        switch completion {
        case .words(let words): return "(\(words.joined(separator: " ")))"
        case .sounds: return "_sfx_sounds"
        case .files: return "_files"
        case .soundsAndFiles: return "_sfx_sounds_or_files"
        case .devices: return "_sfx_devices"
        case .groups: return "_groups"
        case .recordingAction, .nothing: return " "
        }
    }

    static func zsh(_ specs: [CommandSpec]) -> String {
        func quoted(_ text: String) -> String { "'" + text.replacing("'", with: "'\\''") + "'" }
        func escaped(_ help: String) -> String {
            help.replacing("\\", with: "\\\\").replacing("[", with: "\\[")
                .replacing("]", with: "\\]").replacing(":", with: "\\:")
        }
        var script = """
        #compdef sfx
        # zsh completion for sfx, generated by `sfx completion zsh`.
        # Names come from the sfx being completed (the command line's first word).
        _sfx_sounds() {
            local -a names; names=(${(f)"$($_sfx_program list 2>/dev/null | awk 'NR > 1 { print $2 }')"})
            _wanted sounds expl 'sound' compadd -a names
        }
        _sfx_devices() {
            local -a names
            names=(${(f)"$($_sfx_program devices 2>/dev/null | awk '$1 == "NAME" && $2 == "DESCRIPTION" { on = 1; next } on && !NF { exit } on { print $1 }')"})
            _wanted devices expl 'device' compadd -a names
        }
        _sfx_recordings() {
            local -a names; names=(${(f)"$($_sfx_program recordings --json 2>/dev/null | sed -n 's/^ *"name" : "\\(.*\\)",*$/\\1/p')"})
            _wanted recordings expl 'recording' compadd -a names
        }
        _sfx_sounds_or_files() { _alternative 'sounds:sound:_sfx_sounds' 'files:file:_files'; }
        _sfx() {
            local _sfx_program=${words[1]}
            local -a subcommands
            subcommands=(

        """
        for spec in specs {
            script += "        " + quoted("\(spec.name):\(escaped(spec.abstract))") + "\n"
        }
        script += """
            )
            if (( CURRENT == 2 )); then
                _describe 'subcommand' subcommands
                return
            fi
            local command=$words[2]
            shift words
            (( CURRENT-- ))
            case $command in

        """
        for spec in specs {
            var lines: [String] = []
            for option in spec.options + [.flag("help", short: "h", help: "Show help information.")] {
                let help = escaped(option.help)
                let repeatMark = option.repeatable ? "*" : ""
                let value = option.value.map { ":\(escaped($0)):\(zshAction(Completion.of(option)))" } ?? ""
                for name in names(option) {
                    lines.append(quoted("\(repeatMark)\(name)[\(help)]\(value)"))
                }
            }
            let positionals = Completion.positionals(of: spec)
            if positionals == .recordingAction {
                lines.append(quoted(":action:(rm)"))
                lines.append(quoted(":recording:_sfx_recordings"))
            } else if let positional = spec.positionals.first {
                let repeatMark = positional.max == 1 ? "" : "*"
                lines.append(quoted("\(repeatMark):\(escaped(positional.name)):\(zshAction(positionals))"))
            }
            script += "        \(spec.name))\n            _arguments -s \\\n"
            script += lines.map { "                \($0)" }.joined(separator: " \\\n") + "\n            ;;\n"
        }
        script += """
            help) _describe 'subcommand' subcommands ;;
            esac
        }
        _sfx "$@"

        """
        return script
    }
}
