#include "hub/relay/relaythreads.h"

#include "common/logging.h"
#include "common/util/epolleventdispatcher.h"
#include "hub/relay/legjoin.h"

#include <QThread>

#include <algorithm>

using namespace Qt::StringLiterals;

namespace cloop::hub {

int RelayThreads::defaultCount()
{
    return std::max(1, QThread::idealThreadCount());
}

RelayThreads::RelayThreads(int count)
{
    for (int i = 0; i < count; ++i) {
        auto lane = std::make_unique<Lane>();
        lane->thread = std::make_unique<QThread>();
        lane->thread->setObjectName(u"cloop-relay-%1"_s.arg(i));
        // Many streams on a thread: epoll, as the main thread has.
        lane->thread->setEventDispatcher(new util::EpollEventDispatcher);
        lane->home = new QObject;
        lane->home->moveToThread(lane->thread.get());
        lane->thread->start();
        m_lanes.push_back(std::move(lane));
    }
}

RelayThreads::~RelayThreads()
{
    for (const auto &lane : m_lanes) {
        QObject *home = lane->home;
        // The joins end there, on their thread, before it stops.
        QMetaObject::invokeMethod(
            home, [home] { delete home; }, Qt::BlockingQueuedConnection);
        lane->thread->quit();
        lane->thread->wait();
    }
}

std::vector<int> RelayThreads::carried() const
{
    std::vector<int> counts;
    for (const auto &lane : m_lanes)
        counts.push_back(lane->carried.load(std::memory_order_relaxed));
    return counts;
}

RelayThreads::Handle RelayThreads::run(LegJoin *join)
{
    Lane &lane = **std::min_element(m_lanes.begin(), m_lanes.end(),
        [](const auto &a, const auto &b) { return a->carried < b->carried; });
    ++lane.carried;
    Handle handle;
    handle.m_home = lane.home;
    handle.m_join = join;
    join->moveToThread(lane.thread.get());
    QObject *home = lane.home;
    QMetaObject::invokeMethod(home, [home, join, carried = &lane.carried] {
        join->setParent(home);
        QObject::connect(join, &QObject::destroyed, home,
            [carried] { carried->fetch_sub(1, std::memory_order_relaxed); });
        join->start();
    });
    return handle;
}

void RelayThreads::Handle::post(std::function<void(LegJoin &)> call) const
{
    if (!m_home)
        return;
    // Checked there: a join is deleted on its own thread only.
    QMetaObject::invokeMethod(m_home, [join = m_join, call = std::move(call)] {
        if (join)
            call(*join);
    });
}

} // namespace cloop::hub
