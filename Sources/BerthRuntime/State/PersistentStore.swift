@_spi(Engine) import BerthCore
import Foundation
internal import GRDB

/// Values plugins persist outside their module instances: one SQLite database (WAL mode,
/// `synchronous = FULL`, so a write is on disk before the call returns) in the host's state
/// folder, keyed by plugin id and key. They survive reopen, reload and a host restart.
final class PersistentStore: Sendable {
    /// The database file's name inside the state folder.
    static let fileName = "berth-state.sqlite"

    let path: String
    private let database: DatabaseQueue

    /// Opens (creating when absent) the database in `folder`. A file that is not a
    /// database, or cannot be read, throws with SQLite's reason; it is never overwritten.
    init(folder: String) throws {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        path = (folder as NSString).appendingPathComponent(Self.fileName)
        var configuration = Configuration()
        configuration.journalMode = .wal
        // Two hosts may share a state folder (a `berth run` beside a `berth dev`): a write
        // that finds the other's write in progress waits for it instead of failing, and a
        // host opening the file while the other writes does not start with persistence off.
        configuration.busyMode = .timeout(5)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        database = try DatabaseQueue(path: path, configuration: configuration)
        // Reading the schema proves the file is a database before anything is written.
        try database.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS persisted (
                    plugin TEXT NOT NULL,
                    key TEXT NOT NULL,
                    value BLOB NOT NULL,
                    updated REAL NOT NULL,
                    PRIMARY KEY (plugin, key)
                )
                """)
        }
    }

    func read(plugin: String, key: String) throws -> [UInt8]? {
        try database.read { db in
            let data = try Data.fetchOne(db, sql: "SELECT value FROM persisted WHERE plugin = ? AND key = ?", arguments: [plugin, key])
            return data.map { [UInt8]($0) }
        }
    }

    /// Writes and commits; durable when this returns.
    func write(plugin: String, key: String, value: [UInt8]) throws {
        try database.write { db in
            try db.execute(
                sql: "INSERT INTO persisted (plugin, key, value, updated) VALUES (?, ?, ?, ?) ON CONFLICT(plugin, key) DO UPDATE SET value = excluded.value, updated = excluded.updated",
                arguments: [plugin, key, Data(value), Date().timeIntervalSince1970]
            )
        }
    }

    /// SQLite's own consistency check of the whole file: "ok", or what is broken.
    func integrityCheck() throws -> String {
        try database.read { db in try String.fetchAll(db, sql: "PRAGMA integrity_check").joined(separator: "; ") }
    }

    /// Every persisted key with its size, per plugin (the `state` command).
    func keys() throws -> [(plugin: String, key: String, bytes: Int)] {
        try database.read { db in
            try Row.fetchAll(db, sql: "SELECT plugin, key, length(value) AS bytes FROM persisted ORDER BY plugin, key").map {
                (plugin: $0["plugin"], key: $0["key"], bytes: $0["bytes"])
            }
        }
    }
}

/// Whether the host can persist, and if not, why.
public enum PersistenceStatus: Sendable {
    /// No state folder was configured.
    case disabled
    /// Open: values persist in this file.
    case on(path: String)
    /// The database at `path` could not be opened or read (`error`, the database's own
    /// words): persistence is off, nothing is written.
    case failed(path: String, error: String)
}
