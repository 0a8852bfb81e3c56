import Foundation

/// What a crash leaves on disk: a copy of a store's (or the server's) directory taken while it is
/// open and idle, as a process killed at that moment would leave it. LMDB writes every committed
/// page before its commit returns (with `MDB_NOSYNC` too: the pages are in the file, only the
/// fsync is skipped), so the copy holds exactly what was committed; what a clean close adds (the
/// projection snapshot, the signed head) is missing from it, as after a real crash. LMDB's
/// `lock.mdb` is left out: it describes the readers of the dead process.
///
/// ```swift
/// try CrashImage.replace(path) { store.close() }   // the store at `path` is now what a crash left
/// ```
enum CrashImage {
    /// Copies `path`, runs `close` (the instance that crashed goes away), then puts the copy in
    /// place of `path`.
    static func replace(_ path: String, closing close: () -> Void) throws {
        let image = path + ".crash-image"
        let manager = FileManager.default
        try? manager.removeItem(atPath: image)
        try copy(path, to: image)
        close()
        try manager.removeItem(atPath: path)
        try manager.moveItem(atPath: image, toPath: path)
    }

    private static func copy(_ source: String, to destination: String) throws {
        let manager = FileManager.default
        try manager.createDirectory(
            atPath: destination, withIntermediateDirectories: false,
            attributes: [.posixPermissions: 0o700])
        for name in try manager.contentsOfDirectory(atPath: source).sorted() where name != "lock.mdb" {
            let from = (source as NSString).appendingPathComponent(name)
            let to = (destination as NSString).appendingPathComponent(name)
            var isDirectory: ObjCBool = false
            _ = manager.fileExists(atPath: from, isDirectory: &isDirectory)
            if isDirectory.boolValue {
                try copy(from, to: to)
            } else {
                try manager.copyItem(atPath: from, toPath: to)
            }
        }
    }
}
