#pragma once

#include "cloop/buildinfo.h"
#include "common/net/backoff.h"
#include "common/net/hubtls.h"
#include "common/protocol/controlmessage.h"
#include "common/tunnel/tunnelconnection.h"

#include <QObject>
#include <QPointer>
#include <QTimer>
#include <QUrl>

namespace cloop::net {
class WebSocketDial;
}

namespace cloop::tunnel {

struct TunnelClientOptions
{
    // wss://host:port of each member of the hub's cluster (one for a lone
    // hub), tried in this order; every one is trusted the same way.
    QList<QUrl> hubUrls;
    QString endpointPath; // /api/forwarders/connect
    protocol::PeerRole role = protocol::PeerRole::Forwarder;
    QString software = QString::fromLatin1(buildinfo::kVersion);
    net::HubTrust trust;
    bool allowInsecurePlaintext = false;
    // The option that allows it, named when a plaintext URL is refused.
    QString insecureOption;
    // Between rounds over every URL; reset once a hub welcomed the daemon.
    std::chrono::milliseconds initialBackoff { 500 };
    std::chrono::milliseconds maxBackoff { 30'000 };
    // The backoff's jitter; empty: Qt's global generator (tests fix it).
    net::Backoff::RandomSource backoffRandom;
    // Within a round, after a failed attempt, before the next URL: a dead
    // member must not keep the daemon from a live one for a whole backoff.
    std::chrono::milliseconds nextUrlDelay { 1'000 };
    // Bounds a whole attempt, from dialling to the hub's welcome.
    std::chrono::milliseconds authenticationTimeout { 15'000 };
    TunnelTiming timing;
    ChannelMultiplexer::Limits limits;
    // Sent with every hello: an agent's capabilities.
    QJsonObject capabilities;
    // Sent with every hello: the update channel the device's configuration names.
    QString channel;
    // Sent with the hello of a connection that comes for one device's
    // stream (a direct leg), not for the daemon's session.
    QString streamTicket;
};

// A daemon's side of the tunnel: dials the hub, proves who it is, and keeps
// dialling until told to stop or refused for good (revoked, unknown
// credential, used token) by any hub URL.
//
// Dialling goes in rounds over the hub URLs: the one that last welcomed the
// daemon first, then the others in list order. A failed attempt moves on to
// the next URL after nextUrlDelay; a round that ended without a welcome, or a
// session that was lost, waits for the capped, jittered backoff before the
// next round.
class TunnelClient final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(TunnelClient)

public:
    enum class State
    {
        Idle,
        Connecting,
        Authenticating,
        Ready,
        WaitingToRetry,
        Stopped
    };
    Q_ENUM(State)

    explicit TunnelClient(TunnelClientOptions options, QObject *parent = nullptr);
    ~TunnelClient() override;

    // Exactly one of these before start(): a daemon that has a credential
    // says hello with it; one that has only a token redeems it first.
    void setCredential(const QString &credential);
    // What the next connection trusts (pins the hub announced); the one
    // open now was already judged.
    void setTrust(net::HubTrust trust) { m_options.trust = std::move(trust); }
    // The URLs the next round tries (the hub's cluster changed). The daemon
    // learns them while connected, so that round is its next attempt.
    void setHubUrls(const QList<QUrl> &urls);
    void setEnrollmentToken(const QString &token);

    void start();
    void stop();

    State state() const { return m_state; }
    // The hub URL of the attempt or session under way, or of the last one.
    QUrl currentUrl() const { return m_currentUrl; }
    TunnelConnection *connection() const { return m_connection; }
    const TunnelClientOptions &options() const { return m_options; }
    // What the next hello reports (the current connection was told already).
    void setCapabilities(const QJsonObject &capabilities) { m_options.capabilities = capabilities; }

Q_SIGNALS:
    // The token was redeemed: persist this before anything else.
    void enrolled(const cloop::protocol::Enrolled &enrolled);
    void ready(const cloop::protocol::Welcome &welcome);
    void controlReceived(const cloop::protocol::ControlMessage &message);
    // An attempt began on this hub URL.
    void attemptStarted(const QUrl &hubUrl);
    // One attempt or session ended; another follows in retryInMs (the next
    // URL's short pause within a round, the backoff between rounds).
    void disconnected(const QString &reason, qint64 retryInMs);
    // Refused for good: the loop has stopped.
    void refused(const cloop::Error &error);
    void stateChanged(cloop::tunnel::TunnelClient::State state);

private:
    // The order of a round: the URL that last welcomed the daemon, then the rest.
    QList<QUrl> roundOrder() const;
    void connectNow();
    void onOpened();
    void onDialFailed(const Error &error);
    void onControl(const protocol::ControlMessage &message);
    void onConnectionLost(const QString &reason);
    void failAttempt(const Error &error);
    void setState(State state);

    TunnelClientOptions m_options;
    net::Backoff m_backoff;
    QString m_credential;
    QString m_token;
    State m_state = State::Idle;
    // The dial under way, until it opened or failed; then the connection.
    QPointer<net::WebSocketDial> m_dial;
    QPointer<TunnelConnection> m_connection;
    QTimer m_retryTimer;
    QTimer m_authTimer;
    std::optional<Error> m_attemptError;
    QList<QUrl> m_round; // this round's URLs, in the order tried
    qsizetype m_roundIndex = 0; // the attempt under way, or m_round.size() once over
    QUrl m_currentUrl;
    QUrl m_lastReadyUrl;
};

} // namespace cloop::tunnel
