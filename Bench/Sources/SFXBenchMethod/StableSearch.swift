/// The rule for a client's smallest stable setting, the same for every client:
///
/// candidates are tried in order (smallest buffer first); a candidate is stable once `needed`
/// consecutive full runs are clean (no xrun, every click heard). A short trial first only rejects:
/// when the trial is not clean the candidate is dropped at once (a trial never makes a setting
/// stable). The first full run that is not clean drops the candidate as well, so a stable
/// setting is one whose every full run in this search was clean.
public enum StableSearch {
    /// What happened to one candidate.
    public struct Attempt<Candidate> {
        public var candidate: Candidate
        /// Clean full runs before the candidate was dropped or accepted.
        public var cleanRuns: Int
        /// Whether the trial rejected it.
        public var trialRejected: Bool
        public var stable: Bool
    }

    /// Searches `candidates`; returns the stable one's full runs (nil when none is stable) and
    /// every attempt, in order.
    public static func first<Candidate, Run>(
        _ candidates: [Candidate], needed: Int,
        trial: (Candidate) throws -> Bool,
        run: (Candidate) throws -> Run,
        clean: (Run) -> Bool
    ) rethrows -> (stable: (candidate: Candidate, runs: [Run])?, attempts: [Attempt<Candidate>]) {
        precondition(needed >= 1, "a stable setting needs at least one clean run")
        var attempts: [Attempt<Candidate>] = []
        for candidate in candidates {
            guard try trial(candidate) else {
                attempts.append(Attempt(candidate: candidate, cleanRuns: 0, trialRejected: true, stable: false))
                continue
            }
            var runs: [Run] = []
            while runs.count < needed {
                let result = try run(candidate)
                guard clean(result) else { break }
                runs.append(result)
            }
            let stable = runs.count == needed
            attempts.append(Attempt(candidate: candidate, cleanRuns: runs.count, trialRejected: false, stable: stable))
            if stable { return ((candidate, runs), attempts) }
        }
        return (nil, attempts)
    }
}
