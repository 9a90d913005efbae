#pragma once

#include "common/protocol/controlmessage.h"

#include <QHash>
#include <QJsonObject>
#include <QObject>

#include <optional>

namespace cloop::hub {

class DaemonGateway;

// What each connected forwarder last said about its device (device.state):
// a segment's MTU and link. Forgotten when the forwarder disconnects, since
// the next session reports afresh.
class ForwarderStates final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ForwarderStates)

public:
    explicit ForwarderStates(DaemonGateway &forwarders, QObject *parent = nullptr);

    std::optional<protocol::DeviceState> stateOf(qint64 forwarderId) const;

    // The state as the cluster's members share it.
    static QJsonObject toJson(const protocol::DeviceState &state);
    static std::optional<protocol::DeviceState> fromJson(const QJsonObject &object);

Q_SIGNALS:
    // A connected forwarder said something new about its device.
    void stateChanged(qint64 forwarderId, const cloop::protocol::DeviceState &state);
    // A USB forwarder said its device came (busId), went (empty) or moved.
    void usbPresenceChanged(qint64 forwarderId, const QString &busId);

private:
    QHash<qint64, protocol::DeviceState> m_states;
};

} // namespace cloop::hub
