import PostgreSQL

/// A server database taken back to an earlier schema version, as an older `onboard` left it.
enum PostgresSchemaRollback {
    /// Version 4's column gone (tokens without an expiry), its row in `onboard_schema` too.
    static func undoVersionFour(_ connection: PGConnection) throws {
        try connection.execute("ALTER TABLE tokens DROP COLUMN expires_at_ms")
        try connection.execute("DELETE FROM onboard_schema WHERE version = 4")
    }

    /// Version 3's tables and column gone, its row in `onboard_schema` too (version 4 first).
    static func undoVersionThree(_ connection: PGConnection) throws {
        try undoVersionFour(connection)
        try connection.execute("DROP TABLE server_actions, user_names, server_state")
        try connection.execute("ALTER TABLE devices DROP COLUMN last_upload_at_ms")
        try connection.execute("DELETE FROM onboard_schema WHERE version = 3")
    }
}
