#pragma once

#include "common/net/websocketupgrade.h"
#include "common/result.h"

#include <QObject>
#include <QPointer>
#include <QUrl>

#include <functional>
#include <memory>

namespace cloop::net {

class StreamWebSocket;
class TcpDial;
class TlsContext;
class TlsStream;

// A daemon's dial of one WebSocket: TCP, then TLS over one shared client
// context, then the upgrade, then a StreamWebSocket in the client's role.
// The peer check decides, once TLS is up and before a byte of ours is
// sent, whether this server may be spoken to (the pins). Deleting the dial
// abandons it.
class WebSocketDial final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(WebSocketDial)

public:
    using PeerCheck = std::function<Status(const TlsStream &)>;

    // wss:// with a client context, or ws:// with none.
    WebSocketDial(QUrl url, std::shared_ptr<const TlsContext> context, QObject *parent = nullptr);
    ~WebSocketDial() override;

    void setPeerCheck(PeerCheck check) { m_peerCheck = std::move(check); }
    // opened() or failed() follows, never within this call.
    void start();
    // After opened(): the WebSocket, now the caller's.
    StreamWebSocket *takeSocket() { return std::exchange(m_socket, nullptr); }

Q_SIGNALS:
    void opened();
    // Why the dial failed; `refused` when the peer check turned the server down.
    void failed(const cloop::Error &error);

private:
    void onConnected();
    void onEncrypted();
    void onReadable();
    void onStreamEnded();
    void answer(const websocket::UpgradeResponseReader::Progress &progress, QByteArray rest);
    void fail(Error error);

    QUrl m_url;
    std::shared_ptr<const TlsContext> m_context;
    PeerCheck m_peerCheck;
    TcpDial *m_tcp = nullptr;
    TlsStream *m_stream = nullptr;
    StreamWebSocket *m_socket = nullptr;
    QByteArray m_clientKey;
    std::unique_ptr<websocket::UpgradeResponseReader> m_answer;
    bool m_done = false;
};

} // namespace cloop::net
