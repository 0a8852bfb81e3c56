import CLibPQ

extension PGConnection {
    /// `COPY table (columns) FROM STDIN` of `rows` in PostgreSQL's binary COPY format: the fastest
    /// way into a table (the floor the server's own ingest is measured against). Each row has one
    /// value per column; returns the rows copied.
    @discardableResult
    public func copy(into table: String, columns: [String], rows: [[PGValue]]) throws(PostgreSQLError) -> Int {
        precondition(rows.allSatisfy { $0.count == columns.count }, "every row has one value per column")
        try execute("COPY \(table) (\(columns.joined(separator: ", "))) FROM STDIN (FORMAT binary)", expectingCopy: true)
        // Signature, flags, header extension length; then each tuple; then the trailer.
        var buffer: [UInt8] = Array("PGCOPY\n".utf8) + [0xFF, 0x0D, 0x0A, 0x00] + PGValue.bigEndian(Int32(0)) + PGValue.bigEndian(Int32(0))
        buffer.reserveCapacity(1 << 20)
        let handle = try openHandle()
        func flush() throws(PostgreSQLError) {
            guard !buffer.isEmpty else { return }
            let sent = buffer.withUnsafeBufferPointer { bytes in
                bytes.withMemoryRebound(to: CChar.self) { PQputCopyData(handle, $0.baseAddress, Int32($0.count)) }
            }
            guard sent == 1 else {
                throw PostgreSQLError(.unavailable, "the COPY into \(table) failed: \(url.scrubbed(String(cString: PQerrorMessage(handle))))")
            }
            buffer.removeAll(keepingCapacity: true)
        }
        for row in rows {
            buffer += PGValue.bigEndian(Int16(row.count))
            for value in row {
                if let bytes = value.encoded.bytes {
                    buffer += PGValue.bigEndian(Int32(bytes.count))
                    buffer += bytes
                } else {
                    buffer += PGValue.bigEndian(Int32(-1))
                }
            }
            // 1 MiB per message: few round trips, bounded memory.
            if buffer.count >= 1 << 20 { try flush() }
        }
        buffer += PGValue.bigEndian(Int16(-1))
        try flush()
        guard PQputCopyEnd(handle, nil) == 1 else {
            throw PostgreSQLError(.unavailable, "the COPY into \(table) could not end: \(url.scrubbed(String(cString: PQerrorMessage(handle))))")
        }
        var copied = 0
        var failure: PostgreSQLError?
        // The COPY's own result, then the end of the command's results: every one is taken, so
        // the connection is ready for the next statement (a ROLLBACK) even after an error.
        while let result = PQgetResult(handle) {
            switch Result(catching: { () throws(PostgreSQLError) in try finish(result) }) {
            case .success(let rows): copied = rows.affectedRows
            case .failure(let error): failure = failure ?? error
            }
        }
        if let failure { throw failure }
        return copied
    }
}
