#pragma once

#include "common/result.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/tunnelconnection.h"
#include "hub/cluster/peerdirectory.h"
#include "hub/cluster/peerwire.h"

#include <QByteArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QTimer>

#include <chrono>
#include <optional>

class QWebSocket;

namespace cloop::net {
class Heartbeat;
class QtMessageSocket;
} // namespace cloop::net

namespace cloop::tunnel {
class Channel;
}

namespace cloop::hub {

// This member's one link to another member, dialled when first needed.
//
// It is not a TunnelConnection because of two things a link made on demand
// needs and a daemon's tunnel does not: channels are handed out at once,
// while the link is still being dialled, so the frames they make are held
// (bounded) until the far end has proved it is the member and only then
// sent, in order (a QWebSocket silently drops what is sent before it is
// connected, and nothing may reach a server whose key is not the
// member's); and every reason a channel hears when the link ends
// names the member, since the caller holds many links. The wire is the
// same: channel frames in binary WebSocket messages, and a heartbeat.
class PeerLink final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PeerLink)

public:
    enum class State
    {
        Dialling,
        Up,
        Closing,
        Closed
    };

    struct Options
    {
        tunnel::ChannelMultiplexer::Limits limits = peerMultiplexerLimits();
        tunnel::TunnelTiming timing;
        // From dialling to a verified WebSocket.
        std::chrono::milliseconds connectTimeout { 10'000 };
        // A link without channels this long is closed.
        std::chrono::milliseconds idleTimeout { 60'000 };
        // Frames of channels opened while dialling (their openings, and the
        // closes of any closed meanwhile; data waits for credit in the
        // channel itself). More than this fails the link.
        qsizetype maxHeldBytes = 4 * 1024 * 1024;
    };

    // `tls` carries this member's certificate and key (peerTlsConfiguration).
    PeerLink(PeerMember member, const QSslConfiguration &tls, Options options,
        QObject *parent = nullptr);
    // Channels still open close with ConnectionLost.
    ~PeerLink() override;

    // Once the caller listens: ended() may come on a later turn even for a
    // URL that cannot be dialled at all.
    void dial();

    const PeerMember &member() const { return m_member; }
    State state() const { return m_state; }
    // Usable for new channels: dialling or up.
    bool isUsable() const { return m_state == State::Dialling || m_state == State::Up; }

    Result<tunnel::Channel *> openChannel(const QJsonObject &metadata);
    const tunnel::ChannelMultiplexer &channels() const { return m_mux; }
    qsizetype heldBytes() const { return m_heldBytes; }

    // Ends the WebSocket with a close handshake (bounded), then ended().
    // The reason every channel hears names the member and `why`.
    void close(const QString &why);
    // Ends it at once: ended() before returning.
    void abort(const QString &why);

Q_SIGNALS:
    void up();
    // Once, however the link ends; right after it every channel closes
    // with ConnectionLost and `reason`. A slot may deleteLater() the link,
    // not delete it.
    void ended(const QString &reason, bool wasUp);

private:
    void onSslErrors(const QList<QSslError> &errors);
    void onConnected();
    void onFrame(const QByteArray &frame);
    void onBinary(const QByteArray &bytes);
    void onText(const QString &text);
    void onSocketGone();
    void onChannelClosed();
    // The link failed on its own (dial, TLS, peer, heartbeat): says so.
    void fail(const QString &cause);
    void finish(const QString &reason);
    QSslCertificate peerLeaf() const;

    PeerMember m_member;
    Options m_options;
    tunnel::ChannelMultiplexer m_mux;
    // The link's socket as the heartbeat hears it, and Qt's own beneath
    // for TLS, the member's key and the messages.
    net::QtMessageSocket *m_messages;
    QWebSocket *m_socket;
    net::Heartbeat *m_heartbeat;
    QTimer m_connectTimer;
    QTimer m_idleTimer;
    State m_state = State::Dialling;
    bool m_wasUp = false;
    bool m_overHeld = false;
    QString m_closeWhy;
    QList<QByteArray> m_held;
    qsizetype m_heldBytes = 0;
    // Why the attempt was refused on this side (a key that is not the
    // member's), kept over the socket's own later error.
    std::optional<QString> m_refusal;
    QString m_peerError;
};

} // namespace cloop::hub
