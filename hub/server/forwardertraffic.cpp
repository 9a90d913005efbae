#include "hub/server/forwardertraffic.h"

#include "hub/server/countgrowth.h"

#include <algorithm>

namespace cloop::hub {

ForwarderTraffic::ForwarderTraffic(
    Source source, const Clock &clock, std::chrono::milliseconds step, int steps, QObject *parent)
    : QObject(parent)
    , m_source(std::move(source))
    , m_clock(clock)
    , m_step(step)
    , m_steps(std::max(steps, 1))
{
    m_timer.setInterval(m_step);
    // A graph's steps should be equal; a coarse timer drifts by up to 5%.
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, &ForwarderTraffic::sample);
}

void ForwarderTraffic::start()
{
    // The first step's difference is taken from what streams carried before.
    m_previous = m_source();
    m_timer.start();
}

void ForwarderTraffic::sample()
{
    const std::map<qint64, Totals> now = m_source();
    const quint64 step = m_taken++;
    const auto slot = std::size_t(step % quint64(m_steps));
    for (auto &[forwarder, window] : m_windows)
        window.ring[slot] = {};
    for (const auto &[forwarder, total] : now) {
        const auto before = m_previous.find(forwarder);
        const Counts earlier = before == m_previous.end() ? Counts {} : before->second.counts;
        const Counts &later = total.counts;
        const Counts moved { countGrowth(later.toAgent, earlier.toAgent),
            countGrowth(later.toForwarder, earlier.toForwarder),
            countGrowth(later.framesToAgent, earlier.framesToAgent),
            countGrowth(later.framesToForwarder, earlier.framesToForwarder),
            countGrowth(later.droppedToAgent, earlier.droppedToAgent),
            countGrowth(later.droppedToForwarder, earlier.droppedToForwarder) };
        if (moved == Counts {})
            continue;
        Window &window = m_windows[forwarder];
        if (window.ring.empty())
            window.ring.resize(std::size_t(m_steps));
        window.ring[slot] = moved;
        window.lastBusyStep = step;
        if (total.framesCounted) {
            window.framesCounted = true;
            window.unit = total.unit;
        }
    }
    std::erase_if(m_windows, [this, step](const auto &entry) {
        return step - entry.second.lastBusyStep >= quint64(m_steps);
    });
    m_previous = now;
    m_lastSampleAt = m_clock.now();
}

int ForwarderTraffic::stepsHeld() const
{
    return int(std::min(m_taken, quint64(m_steps)));
}

bool ForwarderTraffic::countsFrames(qint64 forwarderId) const
{
    const auto found = m_windows.find(forwarderId);
    return found != m_windows.end() && found->second.framesCounted;
}

protocol::DeviceCounters::Unit ForwarderTraffic::unitOf(qint64 forwarderId) const
{
    const auto found = m_windows.find(forwarderId);
    return found == m_windows.end() ? protocol::DeviceCounters::Unit::Frames : found->second.unit;
}

std::vector<ForwarderTraffic::Counts> ForwarderTraffic::history(qint64 forwarderId) const
{
    const auto found = m_windows.find(forwarderId);
    if (found == m_windows.end())
        return {};
    const std::vector<Counts> &ring = found->second.ring;
    const int held = stepsHeld();
    std::vector<Counts> oldestFirst;
    oldestFirst.reserve(std::size_t(held));
    for (quint64 step = m_taken - quint64(held); step < m_taken; ++step)
        oldestFirst.push_back(ring[std::size_t(step % quint64(m_steps))]);
    return oldestFirst;
}

std::vector<qint64> ForwarderTraffic::activeForwarders() const
{
    std::vector<qint64> ids;
    ids.reserve(m_windows.size());
    for (const auto &[forwarder, window] : m_windows)
        ids.push_back(forwarder);
    std::sort(ids.begin(), ids.end());
    return ids;
}

} // namespace cloop::hub
