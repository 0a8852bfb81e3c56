import CMicroHTTPD
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

// The C callbacks libmicrohttpd calls on its polling threads. They must not capture context
// (they are C function pointers): the server reaches them through the `cls` pointer (an unretained
// `ServerCore`) and the per-request pointer (a retained `RequestContext`). They never block: a
// complete request goes to the handler pool while its connection is suspended. They never trap
// on input: every failure becomes an HTTP error response or, when even that fails, `MHD_NO`,
// which makes libmicrohttpd close the connection.

/// MHD calls this once when a request's headers are complete (`*requestPointer == nil`), then once
/// per chunk of body (`*uploadSize > 0`; we must consume it and set it to 0), then once with
/// `*uploadSize == 0` when the body is complete — that is when the request goes to the handler
/// pool and the connection is suspended — and once more after the worker resumes it, to send the
/// handler's response.
func onboardAccessHandler(
    _ serverPointer: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ url: UnsafePointer<CChar>?,
    _ method: UnsafePointer<CChar>?,
    _ version: UnsafePointer<CChar>?,
    _ uploadData: UnsafePointer<CChar>?,
    _ uploadSize: UnsafeMutablePointer<Int>?,
    _ requestPointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>?
) -> MHD_Result {
    guard let serverPointer, let connection, let uploadSize, let requestPointer else { return .NO }
    let core = Unmanaged<ServerCore>.fromOpaque(serverPointer).takeUnretainedValue()

    guard let existing = requestPointer.pointee else {
        let context = RequestContext(
            method: method.map { String(cString: $0) } ?? "",
            rawPath: url.map { String(cString: $0) } ?? "",
            descriptor: onboard_mhd_connection_fd(connection),
            started: ContinuousClock.now)
        requestPointer.pointee = Unmanaged.passRetained(context).toOpaque()
        core.requestStarted()
        return headersArrived(core, connection, context)
    }
    let context = Unmanaged<RequestContext>.fromOpaque(existing).takeUnretainedValue()

    let chunkBytes = uploadSize.pointee
    if chunkBytes > 0 {
        uploadSize.pointee = 0 // consumed, whatever we do with it
        return bodyChunkArrived(core, context, uploadData, chunkBytes)
    }

    switch context.phase {
    case .responded, .queued:
        // `.queued`: the connection is suspended; MHD does not call back until the resume.
        return .YES
    case .discarding(let response):
        return respond(core, connection, context, response)
    case .handled(let response):
        // A new phase for the client: reading the response gets a whole deadline of its own.
        core.connections.restartDeadline(context.descriptor, responding: true)
        return respond(core, connection, context, response)
    case .receiving:
        let request = HTTPRequest(
            method: context.method, path: context.path, rawPath: context.rawPath, query: context.query, headers: context.headers,
            body: context.body, remoteAddress: context.remoteAddress)
        context.body = [] // the request owns the bytes now; do not hold two copies until completion
        let job = HandlerPool.Job(context: context, connection: connection, request: request)
        let submitted = core.pool.submit(job) {
            context.phase = .queued
            // The handler's time is the server's, not the client's.
            core.connections.pauseDeadline(context.descriptor)
            MHD_suspend_connection(connection)
        }
        switch submitted {
        case .queued:
            return .YES
        case .full:
            core.releaseBody(of: context)
            core.warnings.note(.handlerQueue)
            return respond(
                core, connection, context,
                .unavailable(
                    "the server is busy: \(core.limits.maximumQueuedRequests) requests are waiting for a handler; retry in \(HTTPServer.Limits.busyRetryAfterSeconds) s"
                ))
        case .stopping:
            core.releaseBody(of: context)
            return respond(core, connection, context, .unavailable("the server is shutting down; retry shortly"))
        }
    }
}

/// A handler worker's part of a request: run the handler (or, when the pool is refusing because
/// `stop()` ran out of patience, answer 503) with a responder, which gives back the body budget
/// and resumes the connection when the answer is there (at once, or later from another thread),
/// so MHD calls the access handler again and sends it. After the resume neither the worker nor
/// the responder touches the connection or the context again.
func runHandlerJob(_ core: ServerCore, _ job: HandlerPool.Job, refusing: Bool) {
    let responder = core.makeResponder(for: job)
    if refusing {
        responder.respond(.unavailable("the server is shutting down; retry shortly"))
    } else {
        core.handler.handle(job.request, responder: responder)
    }
}

private func headersArrived(
    _ core: ServerCore, _ connection: OpaquePointer, _ context: RequestContext
) -> MHD_Result {
    // Counting first (no iterator) keeps a flood of headers from being copied into Swift strings.
    let headerCount = Int(MHD_get_connection_values(connection, .HEADER_KIND, nil, nil))
    if headerCount > core.limits.maximumHeaderCount {
        return respond(
            core, connection, context,
            .error(
                status: 431, "request has \(headerCount) header fields; at most \(core.limits.maximumHeaderCount) are accepted"))
    }
    let contextPointer = Unmanaged.passUnretained(context).toOpaque()
    _ = MHD_get_connection_values(connection, .HEADER_KIND, collectHeader, contextPointer)
    _ = MHD_get_connection_values(connection, .GET_ARGUMENT_KIND, collectQueryArgument, contextPointer)
    context.remoteAddress = describe(onboard_mhd_client_address(connection))

    // Two framings that disagree are how requests are smuggled past a proxy (RFC 9112 §6.3);
    // libmicrohttpd 0.9.75 takes the first Content-Length and ignores the rest, so refuse here.
    let declaredLengths = context.headers.values(for: "Content-Length").map { $0.trimmingASCIISpaces() }
    if Set(declaredLengths).count > 1 {
        return respond(core, connection, context, .error(status: 400, "the request has Content-Length headers that disagree; send one"))
    }
    if !declaredLengths.isEmpty, context.headers["Transfer-Encoding"] != nil {
        return respond(core, connection, context, .error(status: 400, "the request has both Content-Length and Transfer-Encoding; send one"))
    }
    // A declared length over the limit is refused before reading a byte of it: responding now makes
    // MHD skip the body (and the `100 Continue`) and close the connection afterwards.
    if let declared = declaredLengths.first {
        guard let length = UInt64(declared) else {
            return respond(core, connection, context, .error(status: 400, "Content-Length is not a number"))
        }
        if length > UInt64(core.limits.maximumRequestBodyBytes) {
            return respond(
                core, connection, context,
                .error(
                    status: 413,
                    "request body is \(length) bytes; at most \(core.limits.maximumRequestBodyBytes) are accepted; send smaller batches"))
        }
        // Refused now, before a byte is read, when it plainly cannot fit; nothing is reserved, so
        // a client that declares a large body and then trickles holds none of the budget.
        if !core.bodyBudgetAllows(Int(length)) {
            core.warnings.note(.bodyMemory)
            return respond(core, connection, context, .unavailable(bodyBudgetMessage(core)))
        }
    }
    return .YES
}

private func bodyChunkArrived(
    _ core: ServerCore, _ context: RequestContext, _ data: UnsafePointer<CChar>?, _ byteCount: Int
) -> MHD_Result {
    context.bodyBytesReceived += byteCount
    switch context.phase {
    case .responded, .queued, .handled:
        return .YES
    case .receiving:
        if context.body.count + byteCount > core.limits.maximumRequestBodyBytes {
            // Only a chunked body (no Content-Length) can get here over the limit.
            discard(
                core, context,
                .error(
                    status: 413, "request body is larger than \(core.limits.maximumRequestBodyBytes) bytes; send smaller batches"))
        } else if !core.chargeBody(byteCount, to: context) {
            core.warnings.note(.bodyMemory)
            discard(core, context, .unavailable(bodyBudgetMessage(core)))
        } else {
            guard let data else { return .NO }
            context.body.append(contentsOf: UnsafeRawBufferPointer(start: data, count: byteCount))
            return .YES
        }
        return keepDiscarding(core, context)
    case .discarding:
        return keepDiscarding(core, context)
    }
}

/// Drops what was kept of the body and answers `response` once the rest has been read.
private func discard(_ core: ServerCore, _ context: RequestContext, _ response: HTTPResponse) {
    context.phase = .discarding(response)
    context.body = []
    core.releaseBody(of: context)
}

/// Past the discard bound we stop reading: MHD_NO closes the connection without a response.
private func keepDiscarding(_ core: ServerCore, _ context: RequestContext) -> MHD_Result {
    let discarded = context.bodyBytesReceived - min(context.bodyBytesReceived, core.limits.maximumRequestBodyBytes)
    return discarded > core.limits.maximumDiscardedBodyBytes ? .NO : .YES
}

private func bodyBudgetMessage(_ core: ServerCore) -> String {
    "the server is busy: it already holds \(core.limits.maximumBufferedBodyBytes >> 20) MiB of request bodies; retry in \(HTTPServer.Limits.busyRetryAfterSeconds) s"
}

/// Sends `response`. One libmicrohttpd cannot take becomes a 500 when the handler built it wrong
/// (a status outside 200...599, a header MHD refuses), and a 503 with `Retry-After` when MHD could
/// not allocate it: running out of memory is the server's trouble, and passes.
private func respond(
    _ core: ServerCore, _ connection: OpaquePointer, _ context: RequestContext, _ response: HTTPResponse
) -> MHD_Result {
    var response = response
    if !(200...599).contains(response.status) {
        response = .error(status: 500, "the handler answered with status \(response.status), which is not in 200...599")
    } else if let problem = headerProblem(response.headers) {
        response = .error(status: 500, "the handler's response has \(problem)")
    }
    if core.draining { response.headers.replaceOrAdd(name: "Connection", value: "close") }
    for (name, value) in core.responseHeaders where response.headers[name] == nil { response.headers.add(name: name, value: value) }

    guard
        let built = makeResponse(response)
            ?? makeResponse(.unavailable("the server is out of memory; retry in \(HTTPServer.Limits.busyRetryAfterSeconds) s"))
    else { return .NO }
    defer { MHD_destroy_response(built.pointer) }
    let queued = MHD_queue_response(connection, UInt32(built.status), built.pointer)
    if queued == .YES {
        context.phase = .responded
        context.status = built.status
        context.responseBodyBytes = built.bodyBytes
    }
    return queued
}

/// What libmicrohttpd (0.9.75) would refuse in these headers, or nil: it sets the framing headers
/// itself, and refuses names with spaces or control characters and values with line breaks.
func headerProblem(_ headers: HTTPHeaders) -> String? {
    for (name, value) in headers {
        let lowered = name.lowercased()
        if lowered == "content-length" || lowered == "transfer-encoding" {
            return "a \(name) header, which the server sets itself"
        }
        if name.isEmpty || name.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F || $0 == UInt8(ascii: ":") }) {
            return "a header name that is empty or holds a space, colon or control character"
        }
        if value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) {
            return "a header value with a line break or NUL"
        }
    }
    return nil
}

private func makeResponse(_ response: HTTPResponse) -> (pointer: OpaquePointer, status: Int, bodyBytes: Int)? {
    let created: OpaquePointer?
    var bodyBytes = response.body.count
    if let file = response.bodyFile {
        // MHD owns the descriptor from here and closes it with the response; a body file sent
        // once cannot be sent again.
        guard let descriptor = file.take() else { return nil }
        created = MHD_create_response_from_fd64(UInt64(file.byteCount), descriptor)
        if created == nil { close(descriptor) }
        bodyBytes = file.byteCount
    } else {
        created = response.body.withUnsafeBytes { bytes in
            // MUST_COPY: MHD copies the bytes, so the Swift array may go away when this returns.
            MHD_create_response_from_buffer(bytes.count, UnsafeMutableRawPointer(mutating: bytes.baseAddress), .RESPMEM_MUST_COPY)
        }
    }
    guard let created else { return nil }
    // libmicrohttpd (0.9.75) refuses a header with an empty value; such a header means the same as
    // an absent one, so it is left out rather than failing the whole response.
    for (name, value) in response.headers
    where !value.isEmpty
        && MHD_add_response_header(created, name, value) != .YES
    {
        MHD_destroy_response(created)
        return nil
    }
    return (created, response.status, bodyBytes)
}

/// Runs once per request whose access handler was called, after the response is sent or the
/// request is abandoned; the last moment the request context is reachable, so it is released here.
func onboardRequestCompleted(
    _ serverPointer: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ requestPointer: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ termination: MHD_RequestTerminationCode
) {
    guard let serverPointer, let requestPointer, let raw = requestPointer.pointee else { return }
    requestPointer.pointee = nil
    let core = Unmanaged<ServerCore>.fromOpaque(serverPointer).takeUnretainedValue()
    let context = Unmanaged<RequestContext>.fromOpaque(raw).takeRetainedValue()
    core.releaseBody(of: context)
    // The next request on a kept-alive connection gets a whole deadline of its own.
    core.connections.restartDeadline(context.descriptor, responding: false)
    core.accessLog?(
        HTTPAccessLogEntry(
            method: context.method, path: context.path, status: context.status,
            requestBodyBytes: context.bodyBytesReceived, responseBodyBytes: context.responseBodyBytes,
            duration: ContinuousClock.now - context.started,
            completed: termination == .REQUEST_TERMINATED_COMPLETED_OK, rawPath: context.rawPath))
    core.requestFinished()
}

/// MHD's connection notifications. STARTED attaches the acceptor's table entry (from then on MHD
/// reports CLOSED before it closes the socket, which is what makes the reaper's shutdown safe);
/// CLOSED removes it, under the table's lock, while the socket is still open. The socket's number
/// travels in MHD's per-socket pointer (plus one, so that 0 stays "none").
func onboardConnectionNotified(
    _ serverPointer: UnsafeMutableRawPointer?,
    _ connection: OpaquePointer?,
    _ socketContext: UnsafeMutablePointer<UnsafeMutableRawPointer?>?,
    _ code: MHD_ConnectionNotificationCode
) {
    guard let serverPointer, let connection, let socketContext else { return }
    let core = Unmanaged<ServerCore>.fromOpaque(serverPointer).takeUnretainedValue()
    switch code {
    case .CONNECTION_NOTIFY_STARTED:
        let descriptor = onboard_mhd_connection_fd(connection)
        guard descriptor >= 0 else { return }
        socketContext.pointee = UnsafeMutableRawPointer(bitPattern: Int(descriptor) + 1)
        core.connections.attach(descriptor)
    case .CONNECTION_NOTIFY_CLOSED:
        guard let stored = socketContext.pointee else { return }
        socketContext.pointee = nil
        core.connections.remove(Int32(truncatingIfNeeded: Int(bitPattern: stored) - 1))
    default:
        return
    }
}

private func collectHeader(
    _ contextPointer: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let contextPointer, let key else { return .YES }
    let context = Unmanaged<RequestContext>.fromOpaque(contextPointer).takeUnretainedValue()
    context.headers.add(name: String(cString: key), value: value.map { String(cString: $0) } ?? "")
    return .YES
}

private func collectQueryArgument(
    _ contextPointer: UnsafeMutableRawPointer?, _ kind: MHD_ValueKind,
    _ key: UnsafePointer<CChar>?, _ value: UnsafePointer<CChar>?
) -> MHD_Result {
    guard let contextPointer, let key else { return .YES }
    let context = Unmanaged<RequestContext>.fromOpaque(contextPointer).takeUnretainedValue()
    // Arrive as sent (libmicrohttpd's unescaping is off; it has already turned `+` into a space).
    let rawName = String(cString: key)
    let name = rawName.removingPercentEncoding ?? rawName
    if context.query[name] == nil {
        let rawValue = value.map { String(cString: $0) } ?? ""
        context.query[name] = rawValue.removingPercentEncoding ?? rawValue
    }
    return .YES
}

/// The numeric host of an IPv4 or IPv6 socket address, or "unknown".
private func describe(_ address: UnsafePointer<sockaddr>?) -> String {
    guard let address else { return "unknown" }
    var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
    let written: UnsafePointer<CChar>?
    switch Int32(address.pointee.sa_family) {
    case AF_INET:
        written = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { ipv4 in
            withUnsafePointer(to: ipv4.pointee.sin_addr) { inet_ntop(AF_INET, $0, &text, socklen_t(text.count)) }
        }
    case AF_INET6:
        written = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { ipv6 in
            withUnsafePointer(to: ipv6.pointee.sin6_addr) { inet_ntop(AF_INET6, $0, &text, socklen_t(text.count)) }
        }
    default:
        return "unknown"
    }
    guard written != nil else { return "unknown" }
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

extension String {
    fileprivate func trimmingASCIISpaces() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) })
        else { return "" }
        return String(self[first...last])
    }
}
