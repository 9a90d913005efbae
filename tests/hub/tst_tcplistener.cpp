// The hub's listening socket: connections are handed over as descriptors,
// the backlog is what the kernel allows, and running out of descriptors
// refuses newcomers without a spin and without going deaf.

#include "hub/edge/tcplistener.h"

#include <QtTest>

#include <arpa/inet.h>
#include <cerrno>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

using cloop::hub::edge::TcpListener;
using cloop::util::Fd;

namespace {

// A blocking connect to 127.0.0.1:port; loopback completes it in the
// kernel whether or not the listener accepts.
Fd connectTo(quint16 port)
{
    Fd socket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(socket.get(), reinterpret_cast<sockaddr *>(&address), sizeof(address)) != 0)
        return Fd();
    return socket;
}

// True once the peer closed (EOF or reset), false while it stays open.
bool closedByPeer(const Fd &socket)
{
    char byte = 0;
    const ssize_t n = ::recv(socket.get(), &byte, 1, MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

double cpuSeconds()
{
    rusage usage {};
    ::getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec
        + (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

} // namespace

class TestTcpListener final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void acceptsAndHandsOver();
    void backlogWithinTheKernelsCap();
    void outOfDescriptorsRefusesWithoutASpin();
};

void TestTcpListener::acceptsAndHandsOver()
{
    std::vector<Fd> accepted;
    QHostAddress peer;
    TcpListener::Options options;
    options.address = QHostAddress::LocalHost;
    auto listener = TcpListener::listen(options, [&](Fd socket, const QHostAddress &from, quint16) {
        accepted.push_back(std::move(socket));
        peer = from;
    });
    QVERIFY2(listener, qPrintable(listener ? QString() : listener.error().message));
    QVERIFY((*listener)->port() != 0);
    std::vector<Fd> clients;
    for (int i = 0; i < 3; ++i)
        clients.push_back(connectTo((*listener)->port()));
    QTRY_COMPARE(accepted.size(), size_t(3));
    QCOMPARE(peer, QHostAddress(QHostAddress::LocalHost));
    // Non-blocking, as the front expects.
    QVERIFY(::fcntl(accepted.front().get(), F_GETFL) & O_NONBLOCK);

    // A second listener on the same port is refused with the reason.
    options.port = (*listener)->port();
    auto twice = TcpListener::listen(options, [](Fd, const QHostAddress &, quint16) {});
    QVERIFY(!twice);
    QVERIFY2(
        twice.error().message.contains(QLatin1String("in use")), qPrintable(twice.error().message));
}

void TestTcpListener::backlogWithinTheKernelsCap()
{
    TcpListener::Options options;
    options.address = QHostAddress::LocalHost;
    options.backlog = 1 << 20;
    auto listener = TcpListener::listen(options, [](Fd, const QHostAddress &, quint16) {});
    QVERIFY(listener);
    QCOMPARE((*listener)->backlog(), cloop::hub::edge::kernelListenBacklogCap());
    QVERIFY((*listener)->backlog() >= 128);
}

void TestTcpListener::outOfDescriptorsRefusesWithoutASpin()
{
    int handed = 0;
    std::vector<Fd> accepted;
    TcpListener::Options options;
    options.address = QHostAddress::LocalHost;
    auto made = TcpListener::listen(options, [&](Fd socket, const QHostAddress &, quint16) {
        ++handed;
        accepted.push_back(std::move(socket));
    });
    QVERIFY(made);
    TcpListener &listener = **made;

    // Given clients waiting in the backlog and a process with no descriptor to spare
    std::vector<Fd> clients;
    for (int i = 0; i < 20; ++i)
        clients.push_back(connectTo(listener.port()));
    rlimit saved {};
    ::getrlimit(RLIMIT_NOFILE, &saved);
    rlimit low = saved;
    low.rlim_cur = std::min<rlim_t>(saved.rlim_cur, 512);
    QCOMPARE(::setrlimit(RLIMIT_NOFILE, &low), 0);
    std::vector<Fd> filler;
    for (;;) {
        Fd one(::open("/dev/null", O_RDONLY | O_CLOEXEC));
        if (!one.valid())
            break;
        filler.push_back(std::move(one));
    }
    QCOMPARE(errno, EMFILE);

    // When the listener wakes, each waiting client is refused (closed), none
    // is handed over, and the listener goes quiet instead of spinning.
    const double before = cpuSeconds();
    QTest::qWait(500);
    const double spent = cpuSeconds() - before;
    QCOMPARE(handed, 0);
    QCOMPARE(listener.refusedForDescriptors(), quint64(20));
    for (const Fd &client : clients)
        QVERIFY(closedByPeer(client));
    QVERIFY2(spent < 0.2,
        qPrintable(QStringLiteral("%1 s of CPU in 0.5 s out of descriptors").arg(spent)));

    // Then, with descriptors back, the next client is handed over as usual.
    filler.clear();
    QCOMPARE(::setrlimit(RLIMIT_NOFILE, &saved), 0);
    Fd late = connectTo(listener.port());
    QTRY_COMPARE(handed, 1);
}

QTEST_GUILESS_MAIN(TestTcpListener)
#include "tst_tcplistener.moc"
