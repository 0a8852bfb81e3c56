import Foundation

/// A statement parameter, sent in PostgreSQL's binary format (no text round trip, no quoting:
/// a value can never change the statement).
///
/// ```swift
/// try connection.execute("INSERT INTO t (id, body) VALUES ($1, $2)", [.int64(7), .bytes(body)])
/// try connection.execute("SELECT * FROM unnest($1::int8[], $2::bytea[])", [.int64Array(seqs), .bytesArray(bodies)])
/// ```
public enum PGValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int16(Int16)
    case int32(Int32)
    case int64(Int64)
    case text(String)
    case bytes([UInt8])
    case uuid(UUID)
    case int64Array([Int64])
    case textArray([String])
    /// `nil` elements are SQL NULLs.
    case optionalTextArray([String?])
    case bytesArray([[UInt8]])
    /// `nil` elements are SQL NULLs.
    case optionalBytesArray([[UInt8]?])
    case uuidArray([UUID])

    /// PostgreSQL's type OIDs (pg_type.oid), fixed since forever.
    enum OID {
        static let bool: UInt32 = 16
        static let bytea: UInt32 = 17
        static let int8: UInt32 = 20
        static let int2: UInt32 = 21
        static let int4: UInt32 = 23
        static let text: UInt32 = 25
        static let name: UInt32 = 19
        static let varchar: UInt32 = 1043
        static let timestamptz: UInt32 = 1184
        static let uuid: UInt32 = 2950
        static let int8Array: UInt32 = 1016
        static let textArray: UInt32 = 1009
        static let byteaArray: UInt32 = 1001
        static let uuidArray: UInt32 = 2951
    }

    /// The type OID the server is told, and the binary bytes (`nil` for NULL).
    var encoded: (oid: UInt32, bytes: [UInt8]?) {
        switch self {
        case .null: (0, nil)
        case .bool(let value): (OID.bool, [value ? 1 : 0])
        case .int16(let value): (OID.int2, Self.bigEndian(value))
        case .int32(let value): (OID.int4, Self.bigEndian(value))
        case .int64(let value): (OID.int8, Self.bigEndian(value))
        case .text(let value): (OID.text, Array(value.utf8))
        case .bytes(let value): (OID.bytea, value)
        case .uuid(let value): (OID.uuid, Self.bytes(of: value))
        case .int64Array(let values): (OID.int8Array, Self.array(of: OID.int8, values.map { Self.bigEndian($0) }))
        case .textArray(let values): (OID.textArray, Self.array(of: OID.text, values.map { Array($0.utf8) }))
        case .optionalTextArray(let values): (OID.textArray, Self.array(of: OID.text, values.map { $0.map { Array($0.utf8) } }))
        case .bytesArray(let values): (OID.byteaArray, Self.array(of: OID.bytea, values))
        case .optionalBytesArray(let values): (OID.byteaArray, Self.array(of: OID.bytea, values))
        case .uuidArray(let values): (OID.uuidArray, Self.array(of: OID.uuid, values.map { Self.bytes(of: $0) }))
        }
    }

    static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    static func bytes(of uuid: UUID) -> [UInt8] {
        withUnsafeBytes(of: uuid.uuid) { Array($0) }
    }

    /// A one-dimensional array in the binary format (array_send): dimensions, whether any
    /// element is NULL, the element type, the length and lower bound, then each element as a
    /// length (−1 for NULL) and its bytes.
    static func array(of element: UInt32, _ items: [[UInt8]?]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(20 + items.reduce(0) { $0 + 4 + ($1?.count ?? 0) })
        out += bigEndian(Int32(items.isEmpty ? 0 : 1))
        out += bigEndian(Int32(items.contains { $0 == nil } ? 1 : 0))
        out += bigEndian(element)
        if !items.isEmpty {
            out += bigEndian(Int32(items.count))
            out += bigEndian(Int32(1))
        }
        for item in items {
            if let item {
                out += bigEndian(Int32(item.count))
                out += item
            } else {
                out += bigEndian(Int32(-1))
            }
        }
        return out
    }
}
