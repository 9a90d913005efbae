#pragma once

#include "common/daemon/daemonconnector.h"
#include "common/result.h"

#include <QObject>

namespace cloop::forward {

// `cloop forward`: enrolls with a bundle once, then keeps one outbound
// tunnel to the hub for the one device it was enrolled for.
class ForwarderDaemon final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ForwarderDaemon)

public:
    explicit ForwarderDaemon(const daemon::ConnectionOptions &connection, QObject *parent = nullptr);

    Status prepare() { return m_connector.prepare(); }
    void start();
    void stop() { m_connector.stop(); }

Q_SIGNALS:
    void finished(int exitCode);

private:
    daemon::DaemonConnector m_connector;
};

} // namespace cloop::forward
