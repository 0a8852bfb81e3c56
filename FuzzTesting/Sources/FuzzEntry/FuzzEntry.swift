import CLibFuzzer

/// Starts libFuzzer on `callback` from a target's own entry point.
///
/// Why a target needs one: SwiftPM links an executable with `--defsym main=<module>_main` (so
/// tests can link executables), which on Linux replaces libFuzzer's `main` with a symbol that
/// `-parse-as-library` never emits. Each target therefore defines `<module>_main` itself and
/// hands over to libFuzzer's driver here. Were SwiftPM to stop renaming, libFuzzer's own `main`
/// would run the same `LLVMFuzzerTestOneInput` and the extra symbol would go unused.
///
/// ```swift
/// @_cdecl("FuzzRouter_main")
/// public func entry(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
///     FuzzEntry.run(argc, argv, fuzzRouter)
/// }
/// ```
public enum FuzzEntry {
    public typealias Callback = @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32

    public static func run(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ callback: Callback) -> Int32 {
        var count = argc
        var arguments = argv
        return LLVMFuzzerRunDriver(&count, &arguments, callback)
    }
}
