#pragma once

#include "hub/server/api/apirouter.h"

#include <QObject>

#include <chrono>

namespace cloop::hub {

class DaemonGateway;
struct ForwarderRecord;

// The Test button: opens a test stream to a connected forwarder, which
// reads what its device exports without handing it to anything (a
// segment's link state, MTU, counters and a few frames seen; a USB device
// list) and sends it back as one JSON document. The answer is deferred
// until then, and bounded in time and size.
class DeviceTester final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DeviceTester)

public:
    static constexpr std::chrono::milliseconds kDefaultTimeout{10'000};
    static constexpr qsizetype kMaxReportBytes = 256 * 1024;

    explicit DeviceTester(DaemonGateway &forwarders, std::chrono::milliseconds timeout = kDefaultTimeout,
                          QObject *parent = nullptr);

    // Refuses at once (409 forwarder_offline) when the forwarder has no live session.
    ApiResponse test(const ForwarderRecord &forwarder, const QJsonObject &forwarderJson);

private:
    DaemonGateway &m_forwarders;
    std::chrono::milliseconds m_timeout;
};

} // namespace cloop::hub
