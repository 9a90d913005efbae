#pragma once

#include "hub/edge/httpanswer.h"
#include "hub/edge/httprequestparser.h"
#include "hub/edge/preauthpool.h"

#include <QHostAddress>

#include <functional>
#include <memory>
#include <optional>

namespace cloop::net {
class MessageSocket;
}

namespace cloop::hub::edge {

struct HttpRequest
{
    HttpRequestHead head;
    QByteArray body;
    QHostAddress peer;
};

// Answers one request, now or later, at most once. Harmless after the
// connection is gone.
using HttpResponder = std::function<void(HttpAnswer answer)>;

// What a service decides from a request's head alone, before the front
// reads any of its body.
struct HeadDecision
{
    // Answered at once; the body, if any, is never read.
    std::optional<HttpAnswer> refusal;
    // The caller proved who it is: the connection leaves the
    // pre-authentication pool and gets the idle time of a client.
    bool authenticated = false;
    qsizetype bodyLimit = 0;
    // Called once the whole body is in.
    std::function<void(const HttpRequest &request, HttpResponder respond)> serve;
};

// What the front serves: the front owns sockets, limits and deadlines, the
// service decides what each request means.
class HttpService
{
public:
    virtual ~HttpService() = default;

    virtual HeadDecision examine(const HttpRequestHead &head, const QHostAddress &peer) = 0;
    virtual bool takesWebSocket(const QByteArray &path) const = 0;
    // An upgraded socket for the endpoint at `path` (one takesWebSocket()
    // took), with the place it holds in the pre-authentication pool until
    // it proves who is calling.
    virtual void acceptWebSocket(std::unique_ptr<net::MessageSocket> socket, const QByteArray &path,
        PreAuthPool::Place place)
        = 0;
};

} // namespace cloop::hub::edge
