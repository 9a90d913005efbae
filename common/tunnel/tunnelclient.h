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

namespace cloop::tunnel {

struct TunnelClientOptions
{
    QUrl hubUrl; // wss://host:port
    QString endpointPath; // /api/forwarders/connect
    protocol::PeerRole role = protocol::PeerRole::Forwarder;
    QString software = QString::fromLatin1(buildinfo::kVersion);
    net::HubTrust trust;
    bool allowInsecurePlaintext = false;
    // The option that allows it, named when a plaintext URL is refused.
    QString insecureOption;
    std::chrono::milliseconds initialBackoff { 500 };
    std::chrono::milliseconds maxBackoff { 30'000 };
    // Bounds a whole attempt, from dialling to the hub's welcome.
    std::chrono::milliseconds authenticationTimeout { 15'000 };
    TunnelTiming timing;
    ChannelMultiplexer::Limits limits;
    // Sent with every hello: an agent's capabilities.
    QJsonObject capabilities;
    // Sent with every hello: the update channel the device's configuration names.
    QString channel;
};

// A daemon's side of the tunnel: dials the hub, proves who it is, and keeps
// dialling with capped, jittered backoff until told to stop or refused for
// good (revoked, unknown credential, used token).
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
    void setEnrollmentToken(const QString &token);

    void start();
    void stop();

    State state() const { return m_state; }
    TunnelConnection *connection() const { return m_connection; }
    const TunnelClientOptions &options() const { return m_options; }
    // What the next hello reports (the current connection was told already).
    void setCapabilities(const QJsonObject &capabilities) { m_options.capabilities = capabilities; }

Q_SIGNALS:
    // The token was redeemed: persist this before anything else.
    void enrolled(const cloop::protocol::Enrolled &enrolled);
    void ready(const cloop::protocol::Welcome &welcome);
    void controlReceived(const cloop::protocol::ControlMessage &message);
    // One attempt or session ended; another follows in retryInMs.
    void disconnected(const QString &reason, qint64 retryInMs);
    // Refused for good: the loop has stopped.
    void refused(const cloop::Error &error);
    void stateChanged(cloop::tunnel::TunnelClient::State state);

private:
    void connectNow();
    void onConnected();
    void onControl(const protocol::ControlMessage &message);
    void onConnectionLost(const QString &reason);
    void failAttempt(const Error &error);
    void setState(State state);

    TunnelClientOptions m_options;
    net::Backoff m_backoff;
    QString m_credential;
    QString m_token;
    State m_state = State::Idle;
    QPointer<TunnelConnection> m_connection;
    QTimer m_retryTimer;
    QTimer m_authTimer;
    std::optional<Error> m_attemptError;
};

} // namespace cloop::tunnel
