#include "common/util/epolleventdispatcher.h"

#include "common/logging.h"

#include <QCoreApplication>
#include <QSocketNotifier>
#include <QThread>
#include <QTimerEvent>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>

#include <sys/epoll.h>
#include <sys/eventfd.h>

namespace cloop::util {

namespace {

// How many ready descriptors one turn takes; more wait for the next turn.
constexpr int kEventsPerTurn = 256;

quint32 eventsFor(QSocketNotifier::Type type)
{
    switch (type) {
    case QSocketNotifier::Read:
        return EPOLLIN | EPOLLRDHUP;
    case QSocketNotifier::Write:
        return EPOLLOUT;
    case QSocketNotifier::Exception:
        return EPOLLPRI;
    }
    return 0;
}

} // namespace

EpollEventDispatcher::EpollEventDispatcher(QObject *parent)
    : QAbstractEventDispatcher(parent)
    , m_epoll(::epoll_create1(EPOLL_CLOEXEC))
    , m_wakeUp(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK))
{
    if (!m_epoll.valid() || !m_wakeUp.valid())
        qFatal("cannot make the event loop's epoll set or wake-up descriptor: %s",
            std::strerror(errno));
    epoll_event event {};
    event.events = EPOLLIN;
    event.data.fd = m_wakeUp.get();
    if (::epoll_ctl(m_epoll.get(), EPOLL_CTL_ADD, m_wakeUp.get(), &event) != 0)
        qFatal("cannot watch the event loop's wake-up descriptor: %s", std::strerror(errno));
}

EpollEventDispatcher::~EpollEventDispatcher() = default;

quint32 EpollEventDispatcher::wantedEvents(const Watched &watched) const
{
    quint32 wanted = 0;
    if (watched.read)
        wanted |= eventsFor(QSocketNotifier::Read);
    if (watched.write)
        wanted |= eventsFor(QSocketNotifier::Write);
    if (watched.exception)
        wanted |= eventsFor(QSocketNotifier::Exception);
    return wanted;
}

// A buffered QAbstractSocket turns its write notifier on for every write and
// off again once the bytes went out, usually within one turn of the loop:
// two epoll_ctl calls a frame for nothing. So a change waits until the loop
// is about to sleep, when only the last state counts. A descriptor's last
// notifier leaving is the exception: the descriptor may be closed, and its
// number reused, before the loop sleeps, so it leaves the set at once.
void EpollEventDispatcher::updateEpoll(int fd, Watched &watched, Update update)
{
    const quint32 wanted = wantedEvents(watched);
    if (wanted == 0) {
        watched.pending = false;
        if (watched.events == 0 && update == Update::IfChanged)
            return;
        watched.events = 0;
        ++m_setChanges;
        // A descriptor closed before its notifier went has left the set
        // by itself.
        ::epoll_ctl(m_epoll.get(), EPOLL_CTL_DEL, fd, nullptr);
        return;
    }
    if (update == Update::Always)
        watched.forced = true;
    if (!watched.pending) {
        watched.pending = true;
        m_pending.push_back(fd);
    }
}

void EpollEventDispatcher::applyToSet(int fd, Watched &watched, quint32 wanted)
{
    epoll_event event {};
    event.events = wanted;
    event.data.fd = fd;
    ++m_setChanges;
    // The set may not hold what the record says: a descriptor closed while
    // its notifier stayed (libpq closes the socket of a lost connection
    // under QPSQL's notifier) left the set, and the number it had may now
    // be a new socket's. So whichever of the two fails, the other is tried,
    // the likelier first.
    const bool known = watched.events != 0;
    watched.events = wanted;
    if (::epoll_ctl(m_epoll.get(), known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event) == 0)
        return;
    if (errno == (known ? ENOENT : EEXIST)
        && ::epoll_ctl(m_epoll.get(), known ? EPOLL_CTL_ADD : EPOLL_CTL_MOD, fd, &event) == 0)
        return;
    // Closed under its notifier since the change was asked for: it left the
    // set by itself, and a socket given its number later is added anew.
    if (errno == EBADF) {
        watched.events = 0;
        return;
    }
    qCWarning(lcNet) << "epoll_ctl on descriptor" << fd << "failed:" << std::strerror(errno);
}

void EpollEventDispatcher::applyPendingChanges()
{
    for (const int fd : m_pending) {
        const auto found = m_watched.find(fd);
        // Its notifiers left since (and it left the set then).
        if (found == m_watched.end() || !found->pending)
            continue;
        Watched &watched = *found;
        watched.pending = false;
        const quint32 wanted = wantedEvents(watched);
        if (wanted != 0 && (wanted != watched.events || watched.forced))
            applyToSet(fd, watched, wanted);
        watched.forced = false;
    }
    m_pending.clear();
}

void EpollEventDispatcher::registerSocketNotifier(QSocketNotifier *notifier)
{
    const int fd = static_cast<int>(notifier->socket());
    Watched &watched = m_watched[fd];
    QSocketNotifier *&slot = notifier->type() == QSocketNotifier::Read ? watched.read
        : notifier->type() == QSocketNotifier::Write                   ? watched.write
                                                                       : watched.exception;
    // Another notifier still in the slot is a stale one whose descriptor was
    // closed under it (see applyToSet): the set is told again even when the
    // record says it holds the events already.
    const bool replacesStale = slot != nullptr && slot != notifier;
    slot = notifier;
    updateEpoll(fd, watched, replacesStale ? Update::Always : Update::IfChanged);
}

void EpollEventDispatcher::unregisterSocketNotifier(QSocketNotifier *notifier)
{
    const int fd = static_cast<int>(notifier->socket());
    const auto found = m_watched.find(fd);
    if (found == m_watched.end())
        return;
    Watched &watched = *found;
    if (watched.read == notifier)
        watched.read = nullptr;
    if (watched.write == notifier)
        watched.write = nullptr;
    if (watched.exception == notifier)
        watched.exception = nullptr;
    updateEpoll(fd, watched);
    if (!watched.read && !watched.write && !watched.exception)
        m_watched.erase(found);
}

EpollEventDispatcher::Clock::time_point EpollEventDispatcher::deadlineFor(
    const Timer &timer, Clock::time_point from) const
{
    using namespace std::chrono;
    const auto interval = milliseconds(timer.interval);
    Clock::time_point deadline = from + interval;
    // Coarse timers may fire a little late so that many of them fire in
    // one turn: thousands of heartbeats cost a few wake-ups, not thousands.
    // Like Qt's: up to 5% late, rounded to a common boundary.
    milliseconds granularity { 0 };
    if (timer.type == Qt::VeryCoarseTimer)
        granularity = seconds(1);
    else if (timer.type == Qt::CoarseTimer && timer.interval >= 20)
        granularity = std::min(milliseconds(timer.interval / 20), milliseconds(500));
    if (granularity.count() > 0) {
        const auto sinceEpoch = duration_cast<milliseconds>(deadline.time_since_epoch());
        const auto rounded = (sinceEpoch + granularity - milliseconds(1)) / granularity;
        deadline = Clock::time_point(duration_cast<Clock::duration>(rounded * granularity));
    }
    return deadline;
}

void EpollEventDispatcher::scheduleTimer(int timerId, Timer &timer, Clock::time_point from)
{
    timer.deadline = deadlineFor(timer, from);
    m_deadlines.emplace(timer.deadline, timerId);
}

void EpollEventDispatcher::registerTimer(
    int timerId, qint64 interval, Qt::TimerType timerType, QObject *object)
{
    Timer timer;
    timer.object = object;
    timer.interval = std::max<qint64>(0, interval);
    timer.type = timerType;
    auto inserted = m_timers.insert(timerId, timer);
    scheduleTimer(timerId, *inserted, Clock::now());
}

bool EpollEventDispatcher::unregisterTimer(int timerId)
{
    const auto found = m_timers.find(timerId);
    if (found == m_timers.end())
        return false;
    m_deadlines.erase({ found->deadline, timerId });
    m_timers.erase(found);
    return true;
}

bool EpollEventDispatcher::unregisterTimers(QObject *object)
{
    QList<int> ids;
    for (auto it = m_timers.cbegin(); it != m_timers.cend(); ++it) {
        if (it->object == object)
            ids.append(it.key());
    }
    for (const int id : std::as_const(ids))
        unregisterTimer(id);
    return !ids.isEmpty();
}

QList<QAbstractEventDispatcher::TimerInfo> EpollEventDispatcher::registeredTimers(
    QObject *object) const
{
    QList<TimerInfo> timers;
    for (auto it = m_timers.cbegin(); it != m_timers.cend(); ++it) {
        if (it->object == object)
            timers.append(TimerInfo(it.key(), static_cast<int>(it->interval), it->type));
    }
    return timers;
}

int EpollEventDispatcher::remainingTime(int timerId)
{
    const auto found = m_timers.constFind(timerId);
    if (found == m_timers.cend())
        return -1;
    const auto left
        = std::chrono::duration_cast<std::chrono::milliseconds>(found->deadline - Clock::now());
    return static_cast<int>(std::max<qint64>(0, left.count()));
}

int EpollEventDispatcher::millisecondsToNextTimer() const
{
    if (m_deadlines.empty())
        return -1;
    const auto left = m_deadlines.begin()->first - Clock::now();
    if (left <= Clock::duration::zero())
        return 0;
    // Rounded up: waking a moment early would only turn the loop once more.
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
    return static_cast<int>(std::min<qint64>(ms, std::numeric_limits<int>::max()));
}

void EpollEventDispatcher::wakeUp()
{
    // Most posted events come from the loop's own thread (QSslSocket posts
    // a flush for every write), which is awake: a flag does, where the
    // eventfd would cost a write, a read and one more epoll_wait a frame.
    if (QThread::currentThread() == thread()) {
        m_postedFromOwnThread = true;
        return;
    }
    if (m_wakeUpPending.exchange(true))
        return;
    const quint64 one = 1;
    // The counter cannot overflow here: it is read before the next write.
    [[maybe_unused]] const ssize_t written = ::write(m_wakeUp.get(), &one, sizeof one);
    ++m_wakeUpsWritten;
}

void EpollEventDispatcher::interrupt()
{
    m_interrupted = true;
    wakeUp();
}

void EpollEventDispatcher::activateSocketNotifiers(const epoll_event *events, int count)
{
    for (int i = 0; i < count; ++i) {
        const int fd = events[i].data.fd;
        const quint32 ready = events[i].events;
        // Each notifier is looked up again just before it is told: the one
        // told before may have deleted or disabled it.
        const auto tell = [this, fd](QSocketNotifier *Watched::*which) {
            const auto found = m_watched.constFind(fd);
            if (found == m_watched.cend())
                return;
            if (QSocketNotifier *notifier = (*found).*which) {
                QEvent event(QEvent::SockAct);
                QCoreApplication::sendEvent(notifier, &event);
            }
        };
        // An error or a hang-up wakes whoever waits on the descriptor, as
        // poll() would; the read or write that follows finds out what.
        const bool broken = ready & (EPOLLERR | EPOLLHUP);
        if (ready & (EPOLLIN | EPOLLRDHUP) || broken)
            tell(&Watched::read);
        if (ready & EPOLLOUT || broken)
            tell(&Watched::write);
        if (ready & EPOLLPRI)
            tell(&Watched::exception);
    }
}

int EpollEventDispatcher::activateTimers()
{
    const Clock::time_point now = Clock::now();
    // Only the timers due now, each once: a handler may register timers
    // (even zero ones) that must wait for the next turn.
    QList<int> due;
    for (auto it = m_deadlines.begin(); it != m_deadlines.end() && it->first <= now;) {
        due.append(it->second);
        it = m_deadlines.erase(it);
    }
    int fired = 0;
    for (const int id : std::as_const(due)) {
        auto found = m_timers.find(id);
        if (found == m_timers.end())
            continue;
        // Due again inside its own handler's nested loop: its next turn
        // comes after the handler returns.
        if (found->firing) {
            scheduleTimer(id, *found, now);
            continue;
        }
        // Rescheduled before it is sent: the handler may stop it, or start
        // it again with another interval.
        scheduleTimer(id, *found, std::max(now, found->deadline));
        found->firing = true;
        QObject *object = found->object;
        QTimerEvent event(id);
        QCoreApplication::sendEvent(object, &event);
        ++fired;
        found = m_timers.find(id);
        if (found != m_timers.end())
            found->firing = false;
    }
    return fired;
}

bool EpollEventDispatcher::processEvents(QEventLoop::ProcessEventsFlags flags)
{
    m_interrupted = false;
    Q_EMIT awake();
    m_postedFromOwnThread = false;
    QCoreApplication::sendPostedEvents();

    const bool canWait = (flags & QEventLoop::WaitForMoreEvents) && !m_interrupted;
    if (canWait)
        Q_EMIT aboutToBlock();
    if (m_interrupted)
        return false;

    const bool withTimers = !(flags & QEventLoop::X11ExcludeTimers);
    int timeout = 0;
    // Posted while the events above were delivered: the turn must not sleep.
    if (canWait && !m_postedFromOwnThread)
        timeout = withTimers ? millisecondsToNextTimer() : -1;
    applyPendingChanges();

    epoll_event events[kEventsPerTurn];
    int count = ::epoll_wait(m_epoll.get(), events, kEventsPerTurn, timeout);
    if (count < 0) {
        if (errno != EINTR)
            qCWarning(lcNet) << "epoll_wait failed:" << std::strerror(errno);
        count = 0;
    }

    int handled = 0;
    int sockets = 0;
    bool woken = false;
    for (int i = 0; i < count; ++i) {
        if (events[i].data.fd == m_wakeUp.get()) {
            // Read before the flag is cleared: cleared first, a wake-up
            // written in between would be read away with the old one and
            // leave the flag set, and every later wake-up would be skipped.
            // A wake-up skipped while the flag is still set is for an event
            // already posted, which the sendPostedEvents() below delivers.
            quint64 value = 0;
            [[maybe_unused]] const ssize_t read = ::read(m_wakeUp.get(), &value, sizeof value);
            m_wakeUpPending = false;
            woken = true;
            ++handled;
        } else {
            events[sockets++] = events[i];
        }
    }
    // What woke the loop is delivered in this turn: a caller checking
    // between turns sees it before the next wait.
    if (woken)
        QCoreApplication::sendPostedEvents();
    if (!(flags & QEventLoop::ExcludeSocketNotifiers)) {
        activateSocketNotifiers(events, sockets);
        handled += sockets;
    }
    if (withTimers)
        handled += activateTimers();
    // What the handlers above posted goes out in this turn, as an eventfd
    // wake-up would have had it go out at the start of the next, without
    // the system calls.
    if (m_postedFromOwnThread) {
        m_postedFromOwnThread = false;
        QCoreApplication::sendPostedEvents();
    }
    return handled > 0;
}

} // namespace cloop::util
