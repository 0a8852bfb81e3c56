/// The name ``TransportError`` had when ``URLSessionTransport`` was the only transport.
public typealias URLSessionTransportError = TransportError
