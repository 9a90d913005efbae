#include "hub/server/forwarderframes.h"

#include "hub/server/countgrowth.h"
#include "hub/server/daemongateway.h"

namespace cloop::hub {

ForwarderFrames::ForwarderFrames(DaemonGateway &forwarders, QObject *parent)
    : QObject(parent)
{
    connect(&forwarders, &DaemonGateway::controlReceived, this,
        [this](qint64 id, const protocol::ControlMessage &message) {
            if (const auto *counters = std::get_if<protocol::DeviceCounters>(&message))
                record(id, *counters);
        });
    // The next session's streams report afresh; the totals stay.
    connect(&forwarders, &DaemonGateway::daemonDisconnected, this,
        [this](qint64 id, const QString &) { m_streams.erase(id); });
}

void ForwarderFrames::record(qint64 forwarderId, const protocol::DeviceCounters &counters)
{
    Streams &streams = m_streams[forwarderId];
    const StreamKey key { counters.runId, counters.bindingId };
    const auto last = streams.last.find(key);
    const protocol::DeviceCounters before
        = last == streams.last.end() ? protocol::DeviceCounters {} : last->second;
    Totals &totals = m_totals[forwarderId];
    totals.framesToRun += countGrowth(counters.framesToRun, before.framesToRun);
    totals.framesFromRun += countGrowth(counters.framesFromRun, before.framesFromRun);
    totals.droppedToRun += countGrowth(counters.droppedToRun, before.droppedToRun);
    totals.droppedFromRun += countGrowth(counters.droppedFromRun, before.droppedFromRun);
    totals.unit = counters.unit;

    streams.last[key] = counters;
    if (const auto age = streams.ageOf.find(key); age != streams.ageOf.end())
        streams.byAge.erase(age->second);
    streams.ageOf[key] = m_reports;
    streams.byAge[m_reports] = key;
    ++m_reports;
    while (streams.last.size() > kStreamsKept) {
        const StreamKey oldest = streams.byAge.begin()->second;
        streams.byAge.erase(streams.byAge.begin());
        streams.ageOf.erase(oldest);
        streams.last.erase(oldest);
    }
}

} // namespace cloop::hub
