#pragma once

#include "common/protocol/controlmessage.h"
#include "common/util/clock.h"

#include <QDateTime>
#include <QObject>
#include <QTimer>

#include <chrono>
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

namespace cloop::hub {

// What each forwarder's device streams carried over the last minutes, in
// equal steps, for the dashboard's graphs: every step the hub reads what it
// has relayed since it started and keeps the difference. A forwarder whose
// window holds no byte is forgotten, so memory follows the forwarders in
// use, not those enrolled; reading the counters costs one pass over the open
// streams, not over the sessions.
class ForwarderTraffic final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(ForwarderTraffic)

public:
    // What moved: bytes as the hub relayed them, frames and drops as a
    // segment's forwarder said them (device.counters).
    struct Counts
    {
        quint64 toAgent = 0; // bytes from the device to the run
        quint64 toForwarder = 0; // bytes from the run to the device
        quint64 framesToAgent = 0;
        quint64 framesToForwarder = 0;
        quint64 droppedToAgent = 0;
        quint64 droppedToForwarder = 0;

        friend bool operator==(const Counts &, const Counts &) = default;
    };
    struct Totals
    {
        Counts counts;
        // The forwarder reports frames and drops (a segment's) or URBs (a
        // USB device's), from protocol 33 on; otherwise those counts mean
        // nothing.
        bool framesCounted = false;
        protocol::DeviceCounters::Unit unit = protocol::DeviceCounters::Unit::Frames;
    };
    // What moved for each forwarder since the hub started: never less than
    // the last time it was asked.
    using Source = std::function<std::map<qint64, Totals>()>;

    static constexpr std::chrono::milliseconds kDefaultStep { 5'000 };
    static constexpr int kDefaultSteps = 120; // ten minutes of five-second steps

    ForwarderTraffic(Source source, const Clock &clock, std::chrono::milliseconds step,
        int steps = kDefaultSteps, QObject *parent = nullptr);

    // Samples every step from now on.
    void start();
    // One step ends now.
    void sample();

    std::chrono::milliseconds step() const { return m_step; }
    // Steps held for every forwarder: those taken, up to the window.
    int stepsHeld() const;
    // When the newest step ended; invalid before the first.
    QDateTime lastSampleAt() const { return m_lastSampleAt; }
    // The forwarder's steps, oldest first, stepsHeld() of them; empty when
    // nothing moved in the window.
    std::vector<Counts> history(qint64 forwarderId) const;
    // Whether the forwarder reported frames (or URBs) and drops lately, and which.
    bool countsFrames(qint64 forwarderId) const;
    protocol::DeviceCounters::Unit unitOf(qint64 forwarderId) const;
    // The forwarders whose window holds traffic.
    std::vector<qint64> activeForwarders() const;

private:
    Source m_source;
    const Clock &m_clock;
    std::chrono::milliseconds m_step;
    int m_steps;
    QTimer m_timer;
    quint64 m_taken = 0;
    QDateTime m_lastSampleAt;
    std::map<qint64, Totals> m_previous;
    // Each forwarder's window as a ring aligned with every other's: step n
    // is at n % m_steps.
    struct Window
    {
        std::vector<Counts> ring;
        quint64 lastBusyStep = 0;
        bool framesCounted = false;
        protocol::DeviceCounters::Unit unit = protocol::DeviceCounters::Unit::Frames;
    };
    std::unordered_map<qint64, Window> m_windows;
};

} // namespace cloop::hub
