#pragma once

#include "common/api/recordfields.h"

namespace cloop::api {

// What forwarders' device streams carried lately (GET /api/forwarders/traffic):
// equal steps, oldest first, the last ending at `until`.
struct ForwarderTraffic
{
    struct Item
    {
        qint64 forwarderId = 0;
        QList<qint64> toAgentBytes; // from the device to the run, a number a step
        QList<qint64> toForwarderBytes; // from the run to the device
        // A forwarder of protocol 33 on says its frames and drops too (a
        // segment's), or its URBs (a USB device's: "frames" counts URBs,
        // never dropped); empty from older forwarders.
        bool urbs = false;
        QList<qint64> toAgentFrames;
        QList<qint64> toForwarderFrames;
        QList<qint64> droppedToAgent;
        QList<qint64> droppedToForwarder;

        bool countsFrames() const { return !toAgentFrames.isEmpty(); }

        friend bool operator==(const Item &, const Item &) = default;
    };

    qint64 stepSeconds = 0;
    qint64 steps = 0;
    QDateTime until; // invalid before the hub's first step
    QList<Item> items; // forwarders not listed carried nothing

    // A hub keeps 120 steps; what a dashboard takes is bounded all the same.
    static constexpr qint64 kMaxSteps = 10'000;

    // Refused, naming the field, when a step is no count of bytes, a list's
    // length is not `steps`, or there are more steps than kMaxSteps.
    static Result<ForwarderTraffic> fromJson(const QJsonObject &object);
    const Item *itemOf(qint64 forwarderId) const;

    friend bool operator==(const ForwarderTraffic &, const ForwarderTraffic &) = default;
};

} // namespace cloop::api
