import CLibPQ
import Foundation

/// The rows a statement returned, copied out of libpq's result in PostgreSQL's binary format.
///
/// ```swift
/// let rows = try connection.execute("SELECT seq, hash FROM events WHERE device = $1", [.text(device)])
/// for row in rows { print(try row.int64(0), try row.bytes(1)) }
/// ```
public struct PGRows: Sendable, RandomAccessCollection {
    /// Column names, in order.
    public let columns: [String]
    let types: [UInt32]
    let cells: [[[UInt8]?]]
    /// Rows the statement changed (`INSERT`, `UPDATE`, `DELETE`), from the command tag.
    public let affectedRows: Int

    init(result: OpaquePointer) {
        let columnCount = Int(PQnfields(result))
        columns = (0..<columnCount).map { String(cString: PQfname(result, Int32($0))) }
        types = (0..<columnCount).map { UInt32(PQftype(result, Int32($0))) }
        cells = (0..<Int(PQntuples(result))).map { row in
            (0..<columnCount).map { column -> [UInt8]? in
                if PQgetisnull(result, Int32(row), Int32(column)) == 1 { return nil }
                let length = Int(PQgetlength(result, Int32(row), Int32(column)))
                guard let value = PQgetvalue(result, Int32(row), Int32(column)) else { return [] }
                return value.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
            }
        }
        affectedRows = Int(String(cString: PQcmdTuples(result))) ?? 0
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { cells.count }
    public subscript(position: Int) -> Row { Row(rows: self, index: position) }

    /// One row; each accessor checks the column's type and throws `unexpectedResult` if it differs.
    public struct Row: Sendable {
        let rows: PGRows
        let index: Int

        public func isNull(_ column: Int) -> Bool { rows.cells[index][column] == nil }

        func cell(_ column: Int, _ expected: [UInt32], _ name: String) throws(PostgreSQLError) -> [UInt8]? {
            guard column < rows.columns.count else {
                throw PostgreSQLError(.unexpectedResult, "the statement returned \(rows.columns.count) columns, not \(column + 1)")
            }
            guard expected.contains(rows.types[column]) else {
                throw PostgreSQLError(.unexpectedResult, "column \(rows.columns[column]) has type oid \(rows.types[column]), not \(name)")
            }
            return rows.cells[index][column]
        }

        func required(_ column: Int, _ expected: [UInt32], _ name: String) throws(PostgreSQLError) -> [UInt8] {
            guard let bytes = try cell(column, expected, name) else {
                throw PostgreSQLError(.unexpectedResult, "column \(rows.columns[column]) is NULL")
            }
            return bytes
        }

        /// An `int8`, `int4` or `int2` column.
        public func int64(_ column: Int) throws(PostgreSQLError) -> Int64 {
            let bytes = try required(column, [PGValue.OID.int8, PGValue.OID.int4, PGValue.OID.int2], "an integer")
            guard [2, 4, 8].contains(bytes.count) else {
                throw PostgreSQLError(.unexpectedResult, "column \(rows.columns[column]) holds \(bytes.count) bytes for an integer")
            }
            // Sign-extended from the first byte, then big-endian.
            var value: Int64 = Int64(Int8(bitPattern: bytes[0]))
            for byte in bytes.dropFirst() { value = value << 8 | Int64(byte) }
            return value
        }

        public func optionalInt64(_ column: Int) throws(PostgreSQLError) -> Int64? {
            isNull(column) ? nil : try int64(column)
        }

        public func bool(_ column: Int) throws(PostgreSQLError) -> Bool {
            try required(column, [PGValue.OID.bool], "bool") == [1]
        }

        public func bytes(_ column: Int) throws(PostgreSQLError) -> [UInt8] {
            try required(column, [PGValue.OID.bytea], "bytea")
        }

        public func optionalBytes(_ column: Int) throws(PostgreSQLError) -> [UInt8]? {
            try cell(column, [PGValue.OID.bytea], "bytea")
        }

        public func string(_ column: Int) throws(PostgreSQLError) -> String {
            String(decoding: try required(column, [PGValue.OID.text, PGValue.OID.varchar, PGValue.OID.name], "text"), as: UTF8.self)
        }

        public func optionalString(_ column: Int) throws(PostgreSQLError) -> String? {
            try cell(column, [PGValue.OID.text, PGValue.OID.varchar, PGValue.OID.name], "text").map { String(decoding: $0, as: UTF8.self) }
        }

        public func uuid(_ column: Int) throws(PostgreSQLError) -> UUID {
            let bytes = try required(column, [PGValue.OID.uuid], "uuid")
            guard bytes.count == 16 else { throw PostgreSQLError(.unexpectedResult, "a uuid of \(bytes.count) bytes") }
            return UUID(
                uuid: (
                    bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                    bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
                ))
        }
    }
}
