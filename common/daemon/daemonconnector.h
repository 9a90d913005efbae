#pragma once

#include "common/identity/credentialfile.h"
#include "common/identity/enrollmentbundle.h"
#include "common/net/hubtls.h"
#include "common/protocol/controlmessage.h"
#include "common/result.h"

#include <QJsonObject>
#include <QObject>

#include <memory>

namespace cloop::tunnel {
class TunnelClient;
}

namespace cloop::daemon {

// Exit codes of every daemon, documented in the README.
inline constexpr int kExitStopped = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitRefused = 3;

// How a daemon reaches its hub, as its operator gave it.
struct ConnectionOptions
{
    QString credentialPath; // empty: the daemon's default under ~/.cloop
    QString bundle; // for a first start
    QString tokenFile; // a file holding the bundle; deleted once redeemed
    QString caFile; // private CA for the hub's certificate
    bool insecurePlaintext = false;
    // --trust-ca-only: a bundle or credential without a pin is accepted and
    // the hub is trusted on its certificate's CA chain alone (warned on every
    // attempt). A pin that is there is always checked.
    bool trustCaOnly = false;
};

struct DaemonConnectorOptions
{
    protocol::PeerRole role = protocol::PeerRole::Forwarder;
    QString endpointPath; // /api/forwarders/connect
    ConnectionOptions connection;
    QString defaultCredentialFile; // "forwarder.json": under ~/.cloop unless connection says
    QJsonObject extra; // role settings saved with the credential (an agent's work root)
    QJsonObject capabilities; // sent with every hello
    QString channel; // sent with every hello: the device's update channel
};

// What every daemon does to reach its hub: enroll once with a bundle (the
// credential saved atomically, 0600, the token file deleted), or load the
// saved credential; then keep one outbound tunnel with backoff, and stop for
// good only when the hub refuses it for good.
class DaemonConnector final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DaemonConnector)

public:
    explicit DaemonConnector(DaemonConnectorOptions options, QObject *parent = nullptr);
    ~DaemonConnector() override;

    // Reads the credential or the bundle; an error means "cannot start".
    Status prepare();
    void start();
    void stop();

    tunnel::TunnelClient *client() const { return m_client.get(); }
    // The capabilities every later hello carries.
    void setCapabilities(const QJsonObject &capabilities);
    // The saved credential (after prepare() without a bundle, or enrollment).
    const identity::DaemonCredential &credential() const { return m_credential; }
    QString credentialPath() const { return m_credentialFile.path(); }
    QString roleName() const;
    // Whether this process redeemed a token (the credential is brand new).
    bool enrolledNow() const { return m_enrolledNow; }
    // Replaces the saved credential (atomically, 0600) and the one in use.
    Status saveCredential(const identity::DaemonCredential &credential);
    // Stops for good, saying why (critical): the tunnel closes, nothing
    // retries, and finished(exitCode) follows. kExitRefused when the hub
    // said something this daemon must never act on.
    void giveUp(const QString &reason, int exitCode);

Q_SIGNALS:
    void ready(const cloop::protocol::Welcome &welcome);
    void finished(int exitCode);

private:
    // `source` names where the bundle came from, for its errors.
    Status prepareFromBundle(const QString &bundleText, const QString &source);
    Status makeClient(const QList<QUrl> &hubs, const QString &pins, const QString &caFile);
    void onEnrolled(const protocol::Enrolled &enrolled);
    // The hub announced the keys it serves and staged: pinned from now on,
    // in the saved credential and for the next connection.
    void adoptPins(const QStringList &pins);
    // The hub announced the daemon URLs of its cluster's live members: dialled
    // from the next attempt on, and kept in the saved credential. A list that
    // shares no URL with the daemon's own is ignored (logged once per list):
    // nothing a hub says moves a daemon wholly to hubs it was not enrolled with.
    void adoptHubs(const QList<QUrl> &hubs);
    QString repinCommand() const;
    QString mismatchRemedy() const;
    Result<net::HubTrust> trustFor(const net::PinSet &pins, const QString &caFile) const;
    net::PinRequirement pinRequirement() const;

    DaemonConnectorOptions m_options;
    identity::CredentialFile m_credentialFile;
    identity::DaemonCredential m_credential;
    std::unique_ptr<tunnel::TunnelClient> m_client;
    bool m_enrolledNow = false;
    QList<QUrl> m_ignoredHubs; // the last list adoptHubs refused, to warn once
};

} // namespace cloop::daemon
