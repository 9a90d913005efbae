#pragma once

#include "hub/server/api/apirouter.h"

#include <QObject>

#include <chrono>

namespace cloop::hub {

class ForwarderReach;
struct ForwarderRecord;

// The Test button: opens a test stream to a connected forwarder and reads
// what its device exports without handing it to anything. A segment's
// forwarder sends its report (link state, MTU, counters, a few frames seen)
// as one JSON document; a USB forwarder is asked for its USB/IP device list
// (OP_REQ_DEVLIST), exactly as a consumer would read it, which the hub
// decodes into the report. The answer is deferred until then, and bounded
// in time and size.
class DeviceTester final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(DeviceTester)

public:
    static constexpr std::chrono::milliseconds kDefaultTimeout { 10'000 };
    static constexpr qsizetype kMaxReportBytes = 256 * 1024;

    explicit DeviceTester(ForwarderReach &forwarders,
        std::chrono::milliseconds timeout = kDefaultTimeout, QObject *parent = nullptr);

    // Refuses at once (409 forwarder_offline) when the forwarder has no live session.
    ApiResponse test(const ForwarderRecord &forwarder, const QJsonObject &forwarderJson);

    // The report of a USB forwarder's OP_REP_DEVLIST: {"ok", "kind": "usb",
    // "devices": [...]} or, for malformed bytes, an error.
    static Result<QJsonObject> usbReport(const QByteArray &devlistReply);

private:
    ForwarderReach &m_forwarders;
    std::chrono::milliseconds m_timeout;
};

} // namespace cloop::hub
