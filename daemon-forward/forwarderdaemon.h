#pragma once

#include "common/identity/credentialfile.h"
#include "common/result.h"

#include <QObject>

#include <memory>

namespace cloop::tunnel {
class TunnelClient;
}

namespace cloop::forward {

struct ForwarderDaemonOptions
{
    QString credentialPath; // ~/.cloop/forwarder.json by default
    QString bundle; // cloopfwd1.… for a first start
    QString tokenFile; // a file holding the bundle; deleted once redeemed
    QString caFile; // private CA for the hub's certificate
    bool insecurePlaintext = false;
};

// `cloop forward`: enrolls with a bundle once, then keeps one outbound
// tunnel to the hub for the one device it was enrolled for.
class ForwarderDaemon final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ForwarderDaemon)

public:
    // Exit codes, documented in the README.
    static constexpr int kExitStopped = 0;
    static constexpr int kExitFailure = 1;
    static constexpr int kExitUsage = 2;
    static constexpr int kExitRefused = 3;

    explicit ForwarderDaemon(ForwarderDaemonOptions options, QObject *parent = nullptr);
    ~ForwarderDaemon() override;

    // Reads the credential or the bundle; an error here means "cannot start".
    Status prepare();
    void start();
    void stop();

Q_SIGNALS:
    void finished(int exitCode);

private:
    Status prepareFromBundle(const QString &bundleText);
    void onEnrolled(qint64 id, const QString &name, const QString &credential);

    ForwarderDaemonOptions m_options;
    identity::CredentialFile m_credentialFile;
    identity::DaemonCredential m_pendingCredential; // from a bundle, until enrolled
    std::unique_ptr<tunnel::TunnelClient> m_client;
};

} // namespace cloop::forward
