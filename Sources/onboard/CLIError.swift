import OnboardingStore

/// A failure to report as one line on stderr with an exit status.
struct CLIError: Error {
    let exitCode: Int32
    let message: String

    init(_ exitCode: Int32, _ message: String) {
        self.exitCode = exitCode
        self.message = message
    }

    static func usage(_ message: String) -> CLIError { CLIError(ExitCode.usage, message) }

    /// The exit status for a store failure.
    init(_ error: StoreError) {
        let code: Int32 =
            switch error.code {
            case .storeMissing: ExitCode.noInput
            case .notWritable: ExitCode.cannotCreate
            case .newerFormat, .needsMigration: ExitCode.unavailable
            case .invalidEvent, .conflict, .seqMismatch, .headMoved, .transactionTooLarge, .pruned: ExitCode.dataError
            case .closed: ExitCode.software
            case .invalidQuery: ExitCode.usage
            default: ExitCode.ioError
            }
        self.init(code, error.message)
    }
}
