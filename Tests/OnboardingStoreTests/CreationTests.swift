import Foundation
import LMDB
import OnboardingModel
@testable import OnboardingStore
import Testing

/// A store is built aside and renamed into place, so a crash during creation never leaves a
/// half-made store at the path.
@Suite struct CreationTests {
    @Test func creationLeavesNoStagingDirectoryAndTheStoreOpensReadOnly() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let store = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.deviceID = "kiosk-7" })
        store.close()
        let entries = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        #expect(entries == ["store"], "no .creating-… directory is left behind: \(entries)")
        let reader = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        #expect(reader.deviceID == "kiosk-7")
        #expect(try reader.head().seq == 0)
        #expect(try reader.verify().isValid)
        reader.close()
    }

    @Test func anEmptyEnvironmentFromAnOlderInterruptedCreationIsMissingToReadersAndInitialisedByWriters() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.store, withIntermediateDirectories: false)
        // What a process killed between mdb_env_open and the first commit leaves behind.
        Environment.open(emptyAt: directory.store)

        do {
            _ = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
            Issue.record("a reader opened an uninitialised store")
        } catch {
            #expect(error.code == .storeMissing)
            #expect(error.message == "\(directory.store) holds an empty, never initialised store; record or import events to initialise it")
        }
        let writer = try OnboardingStore.open(at: directory.store)
        #expect(try writer.head().seq == 0)
        writer.close()
        let reader = try OnboardingStore.open(at: directory.store, options: storeOptions { $0.readOnly = true })
        #expect(try reader.verify().isValid)
        reader.close()
    }

    @Test func aStrayStagingDirectoryDoesNotDisturbANewStore() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        try FileManager.default.createDirectory(atPath: directory.store + ".creating-deadbeef", withIntermediateDirectories: false)
        let store = try OnboardingStore.open(at: directory.store)
        #expect(try store.head().seq == 0)
        store.close()
    }
}

extension Environment {
    /// Creates an LMDB environment with nothing in it at `path` and closes it.
    static func open(emptyAt path: String) {
        if let environment = try? Environment.open(path: path) { environment.close() }
    }
}
