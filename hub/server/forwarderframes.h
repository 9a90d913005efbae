#pragma once

#include "common/protocol/controlmessage.h"

#include <QObject>

#include <map>
#include <unordered_map>

namespace cloop::hub {

class DaemonGateway;

// What forwarders say of their streams' frames or URBs and drops
// (device.counters), added up for each forwarder since the hub started. A
// stream's counts only grow, so each report adds what it grew by; a report
// for a stream not seen before adds all it says. Only the forwarder's own
// totals depend on what it says.
class ForwarderFrames final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ForwarderFrames)

public:
    struct Totals
    {
        quint64 framesToRun = 0;
        quint64 framesFromRun = 0;
        quint64 droppedToRun = 0;
        quint64 droppedFromRun = 0;
        // What the forwarder counts: a segment's frames, a USB device's URBs.
        protocol::DeviceCounters::Unit unit = protocol::DeviceCounters::Unit::Frames;

        friend bool operator==(const Totals &, const Totals &) = default;
    };

    // Follows what the forwarders' sessions say.
    explicit ForwarderFrames(DaemonGateway &forwarders, QObject *parent = nullptr);
    // Told by hand (tests).
    explicit ForwarderFrames(QObject *parent = nullptr)
        : QObject(parent)
    { }

    void record(qint64 forwarderId, const protocol::DeviceCounters &counters);
    // Every forwarder that ever reported.
    const std::map<qint64, Totals> &totals() const { return m_totals; }

    // A forwarder's streams a hub remembers the last report of; the oldest
    // is forgotten past this (a forgotten stream reporting again counts as new).
    static constexpr std::size_t kStreamsKept = 64;

private:
    using StreamKey = std::pair<qint64, qint64>; // run, binding
    struct Streams
    {
        std::map<StreamKey, protocol::DeviceCounters> last;
        std::map<quint64, StreamKey> byAge; // report order -> stream
        std::map<StreamKey, quint64> ageOf;
    };
    std::unordered_map<qint64, Streams> m_streams;
    std::map<qint64, Totals> m_totals;
    quint64 m_reports = 0;
};

} // namespace cloop::hub
