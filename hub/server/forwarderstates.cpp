#include "hub/server/forwarderstates.h"

#include "common/logging.h"
#include "hub/server/daemongateway.h"

namespace cloop::hub {

ForwarderStates::ForwarderStates(DaemonGateway &forwarders, QObject *parent)
    : QObject(parent)
{
    connect(&forwarders, &DaemonGateway::controlReceived, this,
        [this](qint64 id, const protocol::ControlMessage &message) {
            if (const auto *state = std::get_if<protocol::DeviceState>(&message)) {
                const std::optional<protocol::DeviceState> before = stateOf(id);
                m_states.insert(id, *state);
                if (state->usb) {
                    if (!before || !before->usb || before->usbBusId != state->usbBusId)
                        Q_EMIT usbPresenceChanged(id, state->usbBusId);
                    qCInfo(lcHub).noquote()
                        << "forwarder" << id << "reports its USB device"
                        << (state->usbBusId.isEmpty() ? QStringLiteral("unplugged")
                                                      : QStringLiteral("at ") + state->usbBusId);
                    return;
                }
                qCInfo(lcHub).noquote()
                    << "forwarder" << id << "reports its segment"
                    << (state->up ? QStringLiteral("up") : QStringLiteral("down"))
                    << (state->carrier ? QStringLiteral("with carrier")
                                       : QStringLiteral("without carrier"))
                    << "MTU" << state->mtu;
            }
        });
    connect(&forwarders, &DaemonGateway::daemonDisconnected, this,
        [this](qint64 id, const QString &) { m_states.remove(id); });
}

std::optional<protocol::DeviceState> ForwarderStates::stateOf(qint64 forwarderId) const
{
    const auto found = m_states.constFind(forwarderId);
    if (found == m_states.constEnd())
        return std::nullopt;
    return *found;
}

} // namespace cloop::hub
