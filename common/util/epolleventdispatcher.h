#pragma once

#include "common/util/fd.h"

#include <QAbstractEventDispatcher>
#include <QHash>

#include <atomic>
#include <chrono>
#include <set>
#include <vector>

class QSocketNotifier;
struct epoll_event;

namespace cloop::util {

// An event dispatcher whose every turn costs what is ready, not what is
// open: socket notifiers live in an epoll set, timers in an ordered map.
// Qt 6.4's own dispatchers hand every descriptor to poll() and walk every
// timer on each turn; with thousands of sessions that bookkeeping was most
// of the hub's CPU (docs/performance.md). Install it on the main thread
// with QCoreApplication::setEventDispatcher() before the application
// object exists; other threads keep Qt's.
class EpollEventDispatcher final : public QAbstractEventDispatcher
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(EpollEventDispatcher)

public:
    explicit EpollEventDispatcher(QObject *parent = nullptr);
    ~EpollEventDispatcher() override;

    bool processEvents(QEventLoop::ProcessEventsFlags flags) override;

    void registerSocketNotifier(QSocketNotifier *notifier) override;
    void unregisterSocketNotifier(QSocketNotifier *notifier) override;

    void registerTimer(
        int timerId, qint64 interval, Qt::TimerType timerType, QObject *object) override;
    bool unregisterTimer(int timerId) override;
    bool unregisterTimers(QObject *object) override;
    QList<TimerInfo> registeredTimers(QObject *object) const override;
    int remainingTime(int timerId) override;

    void wakeUp() override;
    void interrupt() override;

    // For a test: how many descriptors the epoll set holds.
    int watchedDescriptors() const { return static_cast<int>(m_watched.size()); }
    // For a test: how many times the epoll set was changed (epoll_ctl).
    quint64 setChanges() const { return m_setChanges; }
    // For a test: how many wake-ups went through the eventfd.
    quint64 wakeUpsWritten() const { return m_wakeUpsWritten; }

private:
    using Clock = std::chrono::steady_clock;

    struct Watched
    {
        QSocketNotifier *read = nullptr;
        QSocketNotifier *write = nullptr;
        QSocketNotifier *exception = nullptr;
        quint32 events = 0; // what the epoll set holds for the descriptor
        // A change waits in m_pending for the next wait (see updateEpoll).
        bool pending = false;
        bool forced = false;
    };

    struct Timer
    {
        QObject *object = nullptr;
        qint64 interval = 0;
        Qt::TimerType type = Qt::CoarseTimer;
        Clock::time_point deadline;
        // Keeps one timer from firing twice in one turn when its handler
        // runs a nested event loop.
        bool firing = false;
    };

    enum class Update
    {
        IfChanged,
        // Even when the record says the set holds it already.
        Always
    };
    void updateEpoll(int fd, Watched &watched, Update update = Update::IfChanged);
    quint32 wantedEvents(const Watched &watched) const;
    void applyToSet(int fd, Watched &watched, quint32 wanted);
    void applyPendingChanges();
    Clock::time_point deadlineFor(const Timer &timer, Clock::time_point from) const;
    void scheduleTimer(int timerId, Timer &timer, Clock::time_point from);
    int millisecondsToNextTimer() const;
    void activateSocketNotifiers(const ::epoll_event *events, int count);
    int activateTimers();

    Fd m_epoll;
    Fd m_wakeUp;
    std::atomic<bool> m_wakeUpPending { false };
    // An event posted by this thread itself: the loop is awake by
    // definition, so it needs no eventfd round trip, only a turn that does
    // not sleep before delivering it. Touched by the owning thread alone.
    bool m_postedFromOwnThread = false;
    std::vector<int> m_pending;
    quint64 m_setChanges = 0;
    std::atomic<quint64> m_wakeUpsWritten { 0 };
    std::atomic<bool> m_interrupted { false };
    QHash<int, Watched> m_watched;
    QHash<int, Timer> m_timers;
    // Deadline order, then id: a timer's entry is found again in log time
    // even when thousands share its deadline (coarse timers started
    // together, as every session's at the hub's shutdown).
    std::set<std::pair<Clock::time_point, int>> m_deadlines;
};

} // namespace cloop::util
