#pragma once

#include "hub/edge/httprequestparser.h"
#include "hub/edge/preauthpool.h"

#include <chrono>

namespace cloop::hub::edge {

// What one connection may cost before and between requests. Every wait
// has a deadline, so a peer that stops sending is closed, not kept.
struct EdgeLimits
{
    PreAuthPool::Limits preAuth;
    HttpRequestParser::Limits request;
    std::chrono::milliseconds handshakeTimeout { 10'000 };
    // From the end of the TLS handshake to the first byte of a request, and
    // between requests while the connection has not proved itself.
    std::chrono::milliseconds firstRequestTimeout { 10'000 };
    // From a request's first byte to the end of its head.
    std::chrono::milliseconds headTimeout { 10'000 };
    // From the end of a head to the end of its body.
    std::chrono::milliseconds bodyTimeout { 30'000 };
    // A request the service has not answered by then is answered 504.
    std::chrono::milliseconds serveTimeout { 60'000 };
    // Between requests on a connection that sent a valid token.
    std::chrono::milliseconds idleTimeout { 60'000 };
    // A WebSocket upgrade the WebSocket layer has not completed by then ends.
    std::chrono::milliseconds upgradeTimeout { 5'000 };
    // After a final answer, unread input is discarded (raw, not decrypted)
    // this long and this much at most, so the answer is not lost to a reset.
    std::chrono::milliseconds lingerTimeout { 2'000 };
    qsizetype lingerBytes = 32 * 1024 * 1024;
    // Decrypted bytes a connection buffers before it stops reading.
    qint64 readBufferBytes = 64 * 1024;
};

} // namespace cloop::hub::edge
