import PostgreSQL

/// Takes a test database back to an older schema version, as an older `onboard` left it.
enum PostgresSchemaRollback {
    /// Version 3's tables and column gone, its row in `onboard_schema` too.
    static func undoVersionThree(_ connection: PGConnection) throws {
        try connection.execute("DROP TABLE server_actions, user_names, server_state")
        try connection.execute("ALTER TABLE devices DROP COLUMN last_upload_at_ms")
        try connection.execute("DELETE FROM onboard_schema WHERE version = 3")
    }
}
