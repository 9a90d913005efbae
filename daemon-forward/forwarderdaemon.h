#pragma once

#include "common/daemon/daemonconnector.h"
#include "common/result.h"

#include <QObject>

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
    static constexpr int kExitStopped = daemon::kExitStopped;
    static constexpr int kExitFailure = daemon::kExitFailure;
    static constexpr int kExitUsage = daemon::kExitUsage;
    static constexpr int kExitRefused = daemon::kExitRefused;

    explicit ForwarderDaemon(const ForwarderDaemonOptions &options, QObject *parent = nullptr);

    Status prepare() { return m_connector.prepare(); }
    void start();
    void stop() { m_connector.stop(); }

Q_SIGNALS:
    void finished(int exitCode);

private:
    daemon::DaemonConnector m_connector;
};

} // namespace cloop::forward
