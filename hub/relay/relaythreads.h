#pragma once

#include <QObject>
#include <QPointer>

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

class QThread;

namespace cloop::hub {

class LegJoin;

// The threads device streams carried on legs are relayed on, away from the
// hub's main thread (its API, database, sessions and timers): each with its
// own event loop, a stream going to the one carrying fewest. With one
// thread per core, streams in parallel use every core, and no API request
// or SQL statement is ever in front of a stream's frames.
class RelayThreads final
{
    Q_DISABLE_COPY_MOVE(RelayThreads)

public:
    // One per core, as the machine says.
    static int defaultCount();

    explicit RelayThreads(int count);
    // Ends every stream still relayed (as lost: the hub is stopping), then
    // stops the threads.
    ~RelayThreads();

    int count() const { return static_cast<int>(m_lanes.size()); }
    // Streams each thread carries now.
    std::vector<int> carried() const;

    // Moves `join` (unparented, of this thread) with its legs to the least
    // busy relay thread and starts it there. The returned handle reaches
    // it later.
    class Handle
    {
    public:
        Handle() = default;
        // Calls `call` with the join on its thread, unless it is gone by then.
        void post(std::function<void(LegJoin &)> call) const;
        explicit operator bool() const { return m_home != nullptr; }

    private:
        friend class RelayThreads;
        QObject *m_home = nullptr;
        QPointer<LegJoin> m_join;
    };
    Handle run(LegJoin *join);

private:
    struct Lane
    {
        std::unique_ptr<QThread> thread;
        // Lives on the thread; parent of the joins there.
        QObject *home = nullptr;
        std::atomic<int> carried { 0 };
    };
    std::vector<std::unique_ptr<Lane>> m_lanes;
};

} // namespace cloop::hub
