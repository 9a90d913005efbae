// Tests of the epoll event dispatcher (common/util/epolleventdispatcher.h),
// installed on this test's main thread as the hub installs it: timers,
// socket notifiers, posted events and wake-ups from other threads, each
// changed from inside the handlers that a turn of the loop runs.

#include "common/util/epolleventdispatcher.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSocketNotifier>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTest>
#include <QTimer>

#include <atomic>
#include <memory>
#include <thread>

#include <sys/socket.h>
#include <unistd.h>

using cloop::util::EpollEventDispatcher;

namespace {

constexpr int kEventTimeoutMs = 5000;

// Both ends of a local stream socket, closed at the end.
struct SocketPair
{
    int ends[2] = { -1, -1 };
    SocketPair() { ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, ends); }
    ~SocketPair()
    {
        for (const int end : ends)
            if (end >= 0)
                ::close(end);
    }
    bool valid() const { return ends[0] >= 0 && ends[1] >= 0; }
    void send(int end) const { [[maybe_unused]] auto n = ::write(ends[end], "x", 1); }
    void drain(int end) const
    {
        char buffer[64];
        while (::read(ends[end], buffer, sizeof buffer) > 0) { }
    }
};

// One end of a pair watched for reading, and for writing only when a test
// turns it on, as a QAbstractSocket with nothing to send is.
struct SocketWithQuietWriter
{
    SocketPair pair;
    QSocketNotifier readable { pair.ends[0], QSocketNotifier::Read };
    QSocketNotifier writable { pair.ends[0], QSocketNotifier::Write };
    SocketWithQuietWriter() { writable.setEnabled(false); }
};

EpollEventDispatcher *dispatcher()
{
    return qobject_cast<EpollEventDispatcher *>(QAbstractEventDispatcher::instance());
}

} // namespace

class TestEpollEventDispatcher final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theMainThreadRunsOnIt();
    void singleShotTimersFireInDeadlineOrder();
    void aRepeatingTimerKeepsFiring();
    void aTimerStoppedByAnotherDueOneDoesNotFire();
    void timersSharingADeadlineAreStoppedOneByOne();
    void aZeroTimerStartedInAHandlerWaitsForTheNextTurn();
    void remainingTimeAndRegisteredTimersDescribeTheTimer();
    void aReadNotifierFiresWhileDataWaitsAndNotWhenDisabled();
    void readAndWriteNotifiersShareADescriptor();
    void aNotifierDeletedByAnEarlierOneInTheSameTurnIsNotTold();
    void descriptorsLeaveTheSetWithTheirLastNotifier();
    void aDescriptorNumberReusedUnderAStaleNotifierIsWatched();
    void anotherThreadWakesTheBlockedLoop();
    void wakeUpsRacingTheLoopAreNeverLost();
    void tcpRoundTripsOverLoopback();
    void anEventPostedByAHandlerGoesOutInTheSameTurnWithoutTheEventfd();
    void aWriteNotifierToggledWithinATurnLeavesTheSetAlone();
    void aWriteNotifierLeftOnIsInTheSetBeforeTheLoopSleeps();
    void aDescriptorClosedBeforeItsChangeIsAppliedIsDroppedQuietly();
};

void TestEpollEventDispatcher::theMainThreadRunsOnIt()
{
    QVERIFY(dispatcher());
}

void TestEpollEventDispatcher::singleShotTimersFireInDeadlineOrder()
{
    QList<int> order;
    for (const int ms : { 60, 20, 40, 0 })
        QTimer::singleShot(ms, Qt::PreciseTimer, this, [&order, ms] { order.append(ms); });
    QTRY_COMPARE_WITH_TIMEOUT(order.size(), 4, kEventTimeoutMs);
    QCOMPARE(order, (QList<int> { 0, 20, 40, 60 }));
}

void TestEpollEventDispatcher::aRepeatingTimerKeepsFiring()
{
    QTimer timer;
    timer.setInterval(10);
    QSignalSpy fired(&timer, &QTimer::timeout);
    timer.start();
    QTRY_VERIFY_WITH_TIMEOUT(fired.count() >= 5, kEventTimeoutMs);
    timer.stop();
    const qsizetype stoppedAt = fired.count();
    QTest::qWait(100);
    QCOMPARE(fired.count(), stoppedAt);
}

void TestEpollEventDispatcher::aTimerStoppedByAnotherDueOneDoesNotFire()
{
    QTimer first;
    QTimer second;
    for (QTimer *timer : { &first, &second }) {
        timer->setSingleShot(true);
        timer->setTimerType(Qt::PreciseTimer);
    }
    bool secondFired = false;
    connect(&first, &QTimer::timeout, &second, &QTimer::stop);
    connect(&second, &QTimer::timeout, this, [&secondFired] { secondFired = true; });
    first.start(20);
    second.start(20);
    // Due in the same turn or the first a moment sooner: either way the
    // first runs first and the second never fires.
    QTest::qWait(200);
    QVERIFY(!first.isActive());
    QVERIFY(!second.isActive());
    QVERIFY(!secondFired);
    // And a timer stopped before its deadline stays quiet.
    QTimer stopped;
    QSignalSpy quiet(&stopped, &QTimer::timeout);
    stopped.start(30);
    stopped.stop();
    QTest::qWait(100);
    QCOMPARE(quiet.count(), 0);
}

// Thousands of timers may share one deadline (every session's close guard,
// started in one pass at the hub's shutdown): stopping any of them stops
// that one alone, and the others still fire, each once.
void TestEpollEventDispatcher::timersSharingADeadlineAreStoppedOneByOne()
{
    constexpr int kTimers = 2000;
    std::vector<std::unique_ptr<QTimer>> timers;
    std::vector<int> fired(kTimers, 0);
    for (int i = 0; i < kTimers; ++i) {
        auto timer = std::make_unique<QTimer>();
        timer->setSingleShot(true);
        // Coarse, as the close guards are: rounded to a common boundary,
        // hundreds of them land on one deadline.
        timer->setTimerType(Qt::CoarseTimer);
        connect(timer.get(), &QTimer::timeout, this, [&fired, i] { ++fired[size_t(i)]; });
        timers.push_back(std::move(timer));
    }
    for (auto &timer : timers)
        timer->start(50);
    for (int i = 0; i < kTimers; i += 2)
        timers[size_t(i)]->stop();
    QTRY_VERIFY_WITH_TIMEOUT(
        std::count(fired.cbegin(), fired.cend(), 1) == kTimers / 2, kEventTimeoutMs);
    QTest::qWait(100);
    for (int i = 0; i < kTimers; ++i)
        QCOMPARE(fired[size_t(i)], i % 2);
}

void TestEpollEventDispatcher::aZeroTimerStartedInAHandlerWaitsForTheNextTurn()
{
    QStringList steps;
    QTimer::singleShot(10, Qt::PreciseTimer, this, [&] {
        steps.append(QStringLiteral("outer"));
        QTimer::singleShot(0, this, [&] { steps.append(QStringLiteral("inner")); });
        steps.append(QStringLiteral("outer done"));
    });
    QTRY_COMPARE_WITH_TIMEOUT(steps.size(), 3, kEventTimeoutMs);
    QCOMPARE(steps,
        (QStringList {
            QStringLiteral("outer"), QStringLiteral("outer done"), QStringLiteral("inner") }));
}

void TestEpollEventDispatcher::remainingTimeAndRegisteredTimersDescribeTheTimer()
{
    QObject owner;
    const int id = owner.startTimer(5000, Qt::PreciseTimer);
    QVERIFY(id > 0);
    const int left = dispatcher()->remainingTime(id);
    QVERIFY2(left > 4000 && left <= 5000, qPrintable(QString::number(left)));
    const auto timers = dispatcher()->registeredTimers(&owner);
    QCOMPARE(timers.size(), 1);
    QCOMPARE(timers.first().timerId, id);
    QCOMPARE(timers.first().interval, 5000);
    QCOMPARE(timers.first().timerType, Qt::PreciseTimer);
    QVERIFY(dispatcher()->unregisterTimers(&owner));
    QVERIFY(dispatcher()->registeredTimers(&owner).isEmpty());
    QCOMPARE(dispatcher()->remainingTime(id), -1);
    QVERIFY(!dispatcher()->unregisterTimer(id));
}

void TestEpollEventDispatcher::aReadNotifierFiresWhileDataWaitsAndNotWhenDisabled()
{
    SocketPair pair;
    QVERIFY(pair.valid());
    QSocketNotifier readable(pair.ends[0], QSocketNotifier::Read);
    QSignalSpy activated(&readable, &QSocketNotifier::activated);
    QTest::qWait(50);
    QCOMPARE(activated.count(), 0);

    pair.send(1);
    QVERIFY(activated.wait(kEventTimeoutMs));
    pair.drain(0);

    readable.setEnabled(false);
    pair.send(1);
    QTest::qWait(100);
    const qsizetype whileDisabled = activated.count();
    QCOMPARE(whileDisabled, 1);
    // Level-triggered, as poll(): the byte still waiting is reported again.
    readable.setEnabled(true);
    QVERIFY(activated.wait(kEventTimeoutMs));
}

void TestEpollEventDispatcher::readAndWriteNotifiersShareADescriptor()
{
    SocketPair pair;
    QVERIFY(pair.valid());
    QSocketNotifier readable(pair.ends[0], QSocketNotifier::Read);
    QSocketNotifier writable(pair.ends[0], QSocketNotifier::Write);
    QSignalSpy read(&readable, &QSocketNotifier::activated);
    QSignalSpy written(&writable, &QSocketNotifier::activated);
    // A socket with room is writable at once; it is told, and stops
    // listening, as QAbstractSocket does.
    connect(&writable, &QSocketNotifier::activated, &writable,
        [&writable] { writable.setEnabled(false); });
    QVERIFY(written.wait(kEventTimeoutMs));
    QVERIFY(dispatcher()->watchedDescriptors() >= 1);
    pair.send(1);
    QVERIFY(read.wait(kEventTimeoutMs));
    QCOMPARE(written.count(), 1);
    pair.drain(0);
}

void TestEpollEventDispatcher::aNotifierDeletedByAnEarlierOneInTheSameTurnIsNotTold()
{
    SocketPair first;
    SocketPair second;
    QVERIFY(first.valid() && second.valid());
    auto *victim = new QSocketNotifier(second.ends[0], QSocketNotifier::Read);
    bool victimTold = false;
    connect(victim, &QSocketNotifier::activated, this, [&victimTold] { victimTold = true; });
    QSocketNotifier killer(first.ends[0], QSocketNotifier::Read);
    bool killerTold = false;
    connect(&killer, &QSocketNotifier::activated, this, [&] {
        killerTold = true;
        delete victim;
        victim = nullptr;
        first.drain(0);
    });
    // Both readable before the loop turns: one turn reports both.
    first.send(1);
    second.send(1);
    QTRY_VERIFY_WITH_TIMEOUT(killerTold || victimTold, kEventTimeoutMs);
    QTest::qWait(50);
    QVERIFY(killerTold);
    // Either the victim was told before the killer ran, or never after.
    QVERIFY(victim == nullptr);
    second.drain(0);
}

void TestEpollEventDispatcher::descriptorsLeaveTheSetWithTheirLastNotifier()
{
    const int before = dispatcher()->watchedDescriptors();
    SocketPair pair;
    QVERIFY(pair.valid());
    {
        QSocketNotifier readable(pair.ends[0], QSocketNotifier::Read);
        QSocketNotifier writable(pair.ends[0], QSocketNotifier::Write);
        writable.setEnabled(false);
        QCOMPARE(dispatcher()->watchedDescriptors(), before + 1);
    }
    QCOMPARE(dispatcher()->watchedDescriptors(), before);
}

void TestEpollEventDispatcher::aDescriptorNumberReusedUnderAStaleNotifierIsWatched()
{
    // As libpq does to QPSQL's notifier when a connection is lost: the
    // descriptor is closed while its notifier stays, and the kernel drops
    // it from the epoll set.
    auto stale = std::make_unique<SocketPair>();
    QVERIFY(stale->valid());
    const int number = stale->ends[0];
    QSocketNotifier staleNotifier(number, QSocketNotifier::Read);
    QTest::qWait(10);
    ::close(stale->ends[0]);
    stale->ends[0] = -1;
    // The next socket gets the same number, and a notifier of its own.
    SocketPair fresh;
    QVERIFY(fresh.valid());
    QCOMPARE(fresh.ends[0] == number || fresh.ends[1] == number, true);
    const int end = fresh.ends[0] == number ? 0 : 1;
    QSocketNotifier readable(number, QSocketNotifier::Read);
    QSignalSpy activated(&readable, &QSocketNotifier::activated);
    fresh.send(1 - end);
    QVERIFY(activated.wait(kEventTimeoutMs));
    fresh.drain(end);
}

void TestEpollEventDispatcher::anotherThreadWakesTheBlockedLoop()
{
    // No timer is due: only the wake-up can end the wait.
    bool delivered = false;
    QElapsedTimer took;
    took.start();
    std::thread poster([this, &delivered] {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        QMetaObject::invokeMethod(
            this, [&delivered] { delivered = true; }, Qt::QueuedConnection);
    });
    QEventLoop loop;
    QTimer::singleShot(kEventTimeoutMs, &loop, &QEventLoop::quit);
    while (!delivered && took.elapsed() < kEventTimeoutMs)
        loop.processEvents(QEventLoop::WaitForMoreEvents);
    poster.join();
    QVERIFY(delivered);
    QVERIFY2(took.elapsed() < kEventTimeoutMs - 1000, qPrintable(QString::number(took.elapsed())));
}

void TestEpollEventDispatcher::wakeUpsRacingTheLoopAreNeverLost()
{
    // Phase one: another thread posts as fast as it can, so its wake-ups
    // land at every point of the loop's turn, the moment it reads the
    // wake-up descriptor included. Phase two: ping-pong, where each post
    // is answered before the next; a wake-up lost in phase one leaves the
    // loop asleep until the keeper timer, a stall.
    constexpr int kFlood = 100'000;
    constexpr int kRounds = 200;
    std::atomic<int> delivered { 0 };
    std::atomic<int> stalls { 0 };
    std::atomic<bool> done { false };
    std::thread poster([&] {
        // Uneven gaps, so the posts fall at every point of the loop's turn.
        std::uint32_t noise = 2463534242u;
        for (int i = 0; i < kFlood; ++i) {
            QMetaObject::invokeMethod(
                this, [&delivered] { ++delivered; }, Qt::QueuedConnection);
            noise ^= noise << 13;
            noise ^= noise >> 17;
            noise ^= noise << 5;
            for (std::uint32_t spin = noise % 2000; spin > 0; --spin)
                std::atomic_signal_fence(std::memory_order_seq_cst);
        }
        while (delivered.load() < kFlood)
            std::this_thread::yield();
        for (int round = 1; round <= kRounds && stalls.load() == 0; ++round) {
            QMetaObject::invokeMethod(
                this, [&delivered] { ++delivered; }, Qt::QueuedConnection);
            QElapsedTimer waited;
            waited.start();
            while (delivered.load() < kFlood + round) {
                if (waited.elapsed() > 1000) {
                    ++stalls;
                    break;
                }
                std::this_thread::yield();
            }
        }
        done = true;
        QMetaObject::invokeMethod(
            this, [] {}, Qt::QueuedConnection);
    });
    // Only this ends a sleep a lost wake-up left behind.
    QTimer keeper;
    keeper.start(1500);
    while (!done)
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    poster.join();
    QCOMPARE(stalls.load(), 0);
    QTRY_COMPARE_WITH_TIMEOUT(delivered.load(), kFlood + kRounds, kEventTimeoutMs);
}

void TestEpollEventDispatcher::tcpRoundTripsOverLoopback()
{
    QTcpServer server;
    QVERIFY(server.listen(QHostAddress::LocalHost));
    QTcpSocket client;
    client.connectToHost(QHostAddress::LocalHost, server.serverPort());
    QVERIFY(server.waitForNewConnection(kEventTimeoutMs) || server.hasPendingConnections());
    std::unique_ptr<QTcpSocket> accepted(server.nextPendingConnection());
    QVERIFY(accepted);
    // Echo whatever arrives, through signals only (no blocking waits).
    connect(accepted.get(), &QTcpSocket::readyRead, accepted.get(),
        [socket = accepted.get()] { socket->write(socket->readAll()); });
    QByteArray echoed;
    connect(&client, &QTcpSocket::readyRead, this, [&] { echoed += client.readAll(); });
    const QByteArray payload(256 * 1024, 'z');
    QTRY_VERIFY_WITH_TIMEOUT(client.state() == QAbstractSocket::ConnectedState, kEventTimeoutMs);
    client.write(payload);
    QTRY_COMPARE_WITH_TIMEOUT(echoed.size(), payload.size(), kEventTimeoutMs);
    QCOMPARE(echoed, payload);
}

void TestEpollEventDispatcher::anEventPostedByAHandlerGoesOutInTheSameTurnWithoutTheEventfd()
{
    // As QSslSocket posts a flush for every write made from a readyRead.
    SocketPair pair;
    QVERIFY(pair.valid());
    QSocketNotifier readable(pair.ends[0], QSocketNotifier::Read);
    bool delivered = false;
    connect(&readable, &QSocketNotifier::activated, this, [&] {
        pair.drain(0);
        QMetaObject::invokeMethod(
            this, [&delivered] { delivered = true; }, Qt::QueuedConnection);
    });
    QCoreApplication::processEvents();
    const quint64 wakeUpsBefore = dispatcher()->wakeUpsWritten();
    pair.send(1);
    // One turn: the notifier fires, and what it posted is delivered before
    // the turn ends.
    QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    QVERIFY(delivered);
    QCOMPARE(dispatcher()->wakeUpsWritten(), wakeUpsBefore);
}

void TestEpollEventDispatcher::aWriteNotifierToggledWithinATurnLeavesTheSetAlone()
{
    // QAbstractSocket's write(): the write notifier on, the bytes out, off
    // again, all inside one readyRead.
    SocketWithQuietWriter s;
    QVERIFY(s.pair.valid());
    QSignalSpy written(&s.writable, &QSocketNotifier::activated);
    int toggled = 0;
    connect(&s.readable, &QSocketNotifier::activated, this, [&] {
        s.pair.drain(0);
        s.writable.setEnabled(true);
        s.writable.setEnabled(false);
        ++toggled;
    });
    QCoreApplication::processEvents();
    const quint64 before = dispatcher()->setChanges();
    for (int i = 0; i < 10; ++i) {
        s.pair.send(1);
        QCoreApplication::processEvents(QEventLoop::WaitForMoreEvents);
    }
    QCOMPARE(toggled, 10);
    QCOMPARE(dispatcher()->setChanges(), before);
    QCOMPARE(written.count(), 0);
}

void TestEpollEventDispatcher::aWriteNotifierLeftOnIsInTheSetBeforeTheLoopSleeps()
{
    SocketWithQuietWriter s;
    QVERIFY(s.pair.valid());
    QSignalSpy written(&s.writable, &QSocketNotifier::activated);
    connect(&s.readable, &QSocketNotifier::activated, this, [&] {
        s.pair.drain(0);
        s.writable.setEnabled(true);
    });
    connect(&s.writable, &QSocketNotifier::activated, &s.writable,
        [&s] { s.writable.setEnabled(false); });
    s.pair.send(1);
    // Nothing else will wake the loop: if the change waited past the sleep,
    // the write notifier would never be told.
    QVERIFY(written.wait(kEventTimeoutMs));
    QCOMPARE(written.count(), 1);
}

void TestEpollEventDispatcher::aDescriptorClosedBeforeItsChangeIsAppliedIsDroppedQuietly()
{
    QTest::failOnWarning(QRegularExpression(QStringLiteral("epoll_ctl")));
    auto stale = std::make_unique<SocketPair>();
    QVERIFY(stale->valid());
    const int number = stale->ends[0];
    auto readable = std::make_unique<QSocketNotifier>(number, QSocketNotifier::Read);
    QCoreApplication::processEvents();
    // A change the loop has not applied yet, then the descriptor goes.
    auto writable = std::make_unique<QSocketNotifier>(number, QSocketNotifier::Write);
    ::close(stale->ends[0]);
    stale->ends[0] = -1;
    QCoreApplication::processEvents();
    writable.reset();
    readable.reset();
    // The number, given to the next socket, is watched for it.
    SocketPair fresh;
    QVERIFY(fresh.valid());
    QVERIFY(fresh.ends[0] == number || fresh.ends[1] == number);
    const int end = fresh.ends[0] == number ? 0 : 1;
    QSocketNotifier freshReadable(number, QSocketNotifier::Read);
    QSignalSpy activated(&freshReadable, &QSocketNotifier::activated);
    fresh.send(1 - end);
    QVERIFY(activated.wait(kEventTimeoutMs));
    fresh.drain(end);
}

int main(int argc, char *argv[])
{
    QCoreApplication::setEventDispatcher(new EpollEventDispatcher);
    QCoreApplication app(argc, argv);
    TestEpollEventDispatcher test;
    return QTest::qExec(&test, argc, argv);
}

#include "tst_epolleventdispatcher.moc"
