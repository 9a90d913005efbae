#pragma once

#include <QObject>
#include <QTimer>

#include <chrono>

namespace cloop::hub {

class DaemonGateway;
class DeviceStreams;
class HubCore;

// What a member of a cluster holds, checked against the shared records
// every few seconds and whenever its cluster bus may have missed events:
// the sessions of daemons revoked since, and devices still lent to runs
// whose binding or run ended. The bus makes these happen within a poll;
// this makes them happen even when an event never came.
class HoldingsCheck final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(HoldingsCheck)

public:
    HoldingsCheck(HubCore &core, DaemonGateway &forwarders, DaemonGateway &executors,
        DeviceStreams &devices, std::chrono::milliseconds every, QObject *parent = nullptr);

    void start() { m_timer.start(); }
    // `why` is logged when something had to go.
    void checkNow(const QString &why);

private:
    void dropRevoked(DaemonGateway &gateway, const QString &noun, const QString &why);
    void detachEnded(const QString &why);

    HubCore &m_core;
    DaemonGateway &m_forwarders;
    DaemonGateway &m_executors;
    DeviceStreams &m_devices;
    QTimer m_timer;
};

} // namespace cloop::hub
