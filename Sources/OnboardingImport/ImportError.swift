import OnboardingStore

/// Why an import stopped. The message is one or more lines for a person (the first names the
/// input and, for a bad line, the line); `kind` says what kind of failure it was, for the exit
/// status.
///
/// ```swift
/// do { try importer.run(input) } catch { print(error.message); exit(error.kind == .invalidInput ? 65 : 74) }
/// ```
public struct ImportError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// A line breaks a rule, or the file disagrees with the store: nothing was appended.
        case invalidInput
        /// The input cannot be opened (missing, a directory, no permission).
        case inputUnavailable
        /// Reading the input or a temporary file failed, or the input changed while it was imported.
        case inputOutput
        /// The store refused or failed; `storeError` has its code.
        case store
    }

    public let kind: Kind
    public let message: String
    /// The store's error, for `kind == .store`.
    public let storeError: StoreError?

    public init(_ kind: Kind, _ message: String, storeError: StoreError? = nil) {
        self.kind = kind
        self.message = message
        self.storeError = storeError
    }

    public var description: String { message }
}
