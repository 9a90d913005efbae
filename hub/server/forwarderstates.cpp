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
                if (!before || *before != *state)
                    Q_EMIT stateChanged(id, *state);
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

QJsonObject ForwarderStates::toJson(const protocol::DeviceState &state)
{
    return { { QStringLiteral("mtu"), state.mtu }, { QStringLiteral("up"), state.up },
        { QStringLiteral("carrier"), state.carrier }, { QStringLiteral("usb"), state.usb },
        { QStringLiteral("usb_busid"), state.usbBusId } };
}

std::optional<protocol::DeviceState> ForwarderStates::fromJson(const QJsonObject &object)
{
    if (object.isEmpty() || !object.value(QLatin1String("mtu")).isDouble())
        return std::nullopt;
    protocol::DeviceState state;
    state.mtu = object.value(QLatin1String("mtu")).toInt();
    state.up = object.value(QLatin1String("up")).toBool();
    state.carrier = object.value(QLatin1String("carrier")).toBool();
    state.usb = object.value(QLatin1String("usb")).toBool();
    state.usbBusId = object.value(QLatin1String("usb_busid")).toString();
    return state;
}

} // namespace cloop::hub
