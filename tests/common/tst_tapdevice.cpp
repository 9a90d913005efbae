// Tests of the TAP device (common/device/l2/tapdevice.h) against the real
// kernel: every test makes its own network namespaces and TAPs with names
// unique to this process, so copies of this test can run side by side, and
// removes them again however the test ends.

#include "common/device/l2/tapdevice.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QTest>
#include <QThread>

#include <atomic>
#include <functional>
#include <thread>

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace cloop;
using namespace cloop::device::l2;

namespace {

constexpr int kToolTimeoutMs = 10000;
const QString kSandboxName = QStringLiteral("fwd0");

struct Ran
{
    int exitCode = -1;
    QByteArray standardOutput;
    QByteArray standardError;
    bool ok() const { return exitCode == 0; }
};

QString ipTool()
{
    QString found = QStandardPaths::findExecutable(QStringLiteral("ip"));
    if (found.isEmpty()) {
        found = QStandardPaths::findExecutable(
            QStringLiteral("ip"), { QStringLiteral("/usr/sbin"), QStringLiteral("/sbin") });
    }
    return found;
}

Ran runIp(const QStringList &arguments)
{
    QProcess process;
    process.setStandardInputFile(QProcess::nullDevice());
    process.start(ipTool(), arguments);
    Ran ran;
    if (!process.waitForStarted(kToolTimeoutMs)) {
        ran.standardError = process.errorString().toLocal8Bit();
        return ran;
    }
    if (!process.waitForFinished(kToolTimeoutMs)) {
        process.kill();
        process.waitForFinished(kToolTimeoutMs);
        ran.standardError = "timed out";
        return ran;
    }
    ran.exitCode = process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -1;
    ran.standardOutput = process.readAllStandardOutput();
    ran.standardError = process.readAllStandardError();
    return ran;
}

// `ip [-n NS] -j link show dev NAME`, or an empty object when it is not
// there.
QJsonObject linkInfo(const QString &ns, const QString &name)
{
    QStringList arguments;
    if (!ns.isEmpty())
        arguments << QStringLiteral("-n") << ns;
    arguments << QStringLiteral("-j") << QStringLiteral("link") << QStringLiteral("show")
              << QStringLiteral("dev") << name;
    const Ran ran = runIp(arguments);
    if (!ran.ok())
        return {};
    return QJsonDocument::fromJson(ran.standardOutput).array().at(0).toObject();
}

bool linkExists(const QString &ns, const QString &name)
{
    return !linkInfo(ns, name).isEmpty();
}

QStringList linkNames(const QString &ns)
{
    const Ran ran = runIp({ QStringLiteral("-n"), ns, QStringLiteral("-j"), QStringLiteral("link"),
        QStringLiteral("show") });
    QStringList names;
    for (const QJsonValue link : QJsonDocument::fromJson(ran.standardOutput).array())
        names << link.toObject().value(QLatin1String("ifname")).toString();
    return names;
}

QStringList addresses(const QString &ns, const QString &name)
{
    const Ran ran = runIp({ QStringLiteral("-n"), ns, QStringLiteral("-j"),
        QStringLiteral("address"), QStringLiteral("show"), QStringLiteral("dev"), name });
    QStringList found;
    const QJsonArray links = QJsonDocument::fromJson(ran.standardOutput).array();
    for (const QJsonValue link : links) {
        for (const QJsonValue info : link.toObject().value(QLatin1String("addr_info")).toArray()) {
            const QJsonObject object = info.toObject();
            found << QStringLiteral("%1/%2")
                         .arg(object.value(QLatin1String("local")).toString())
                         .arg(object.value(QLatin1String("prefixlen")).toInt());
        }
    }
    return found;
}

bool isUp(const QJsonObject &link)
{
    return link.value(QLatin1String("flags")).toArray().contains(QJsonValue(QStringLiteral("UP")));
}

// A network namespace with one process in it (the stand-in for a sandbox),
// both removed when this goes out of scope, also when a check failed.
class Namespace
{
public:
    Namespace()
    {
        static std::atomic_int counter { 0 };
        m_name = QStringLiteral("cloop-tst-%1-%2").arg(::getpid()).arg(++counter);
    }
    ~Namespace()
    {
        if (m_process.state() != QProcess::NotRunning) {
            m_process.kill();
            m_process.waitForFinished(kToolTimeoutMs);
        }
        if (m_created) {
            const Ran ran = runIp({ QStringLiteral("netns"), QStringLiteral("delete"), m_name });
            if (!ran.ok())
                qWarning("could not delete namespace %s: %s", qPrintable(m_name),
                    ran.standardError.constData());
        }
    }
    Namespace(const Namespace &) = delete;
    Namespace &operator=(const Namespace &) = delete;

    // Empty on success, else what went wrong.
    QString start()
    {
        const Ran added = runIp({ QStringLiteral("netns"), QStringLiteral("add"), m_name });
        if (!added.ok())
            return QStringLiteral("ip netns add %1: %2")
                .arg(m_name, QString::fromLocal8Bit(added.standardError));
        m_created = true;
        // ip execs the command itself, so this PID is the process inside.
        m_process.start(ipTool(),
            { QStringLiteral("netns"), QStringLiteral("exec"), m_name, QStringLiteral("sleep"),
                QStringLiteral("60") });
        if (!m_process.waitForStarted(kToolTimeoutMs))
            return QStringLiteral("cannot start the namespace's process: %1")
                .arg(m_process.errorString());
        // The PID exists before ip has entered the namespace.
        QElapsedTimer waited;
        waited.start();
        while (!inOwnNamespace()) {
            if (waited.elapsed() > kToolTimeoutMs || m_process.state() == QProcess::NotRunning)
                return QStringLiteral("the process never entered namespace %1").arg(m_name);
            QThread::msleep(5);
        }
        return {};
    }

    QString name() const { return m_name; }
    qint64 pid() const { return m_process.processId(); }

    // Runs `work` on a thread that joined this namespace: sockets it opens
    // and /proc/sys/net it touches belong to the namespace.
    QString runInside(const std::function<QString()> &work) const
    {
        QString result;
        std::thread worker([&] {
            const QByteArray path = QStringLiteral("/proc/%1/ns/net").arg(pid()).toLocal8Bit();
            const int nsFd = ::open(path.constData(), O_RDONLY | O_CLOEXEC);
            if (nsFd < 0) {
                result = QStringLiteral("open %1 failed").arg(QString::fromLocal8Bit(path));
                return;
            }
            const int joined = ::setns(nsFd, CLONE_NEWNET);
            ::close(nsFd);
            if (joined != 0) {
                result = QStringLiteral("setns failed: %1").arg(errno);
                return;
            }
            result = work();
        });
        worker.join();
        return result;
    }

private:
    bool inOwnNamespace() const
    {
        struct stat own
        {
        };
        struct stat theirs
        {
        };
        const QByteArray path = QStringLiteral("/proc/%1/ns/net").arg(pid()).toLocal8Bit();
        return ::stat("/proc/self/ns/net", &own) == 0 && ::stat(path.constData(), &theirs) == 0
            && own.st_ino != theirs.st_ino;
    }

    QString m_name;
    bool m_created = false;
    QProcess m_process;
};

// Unique to this process, so a TAP name seen gone is not refilled by a
// parallel copy of this test a moment later.
TapDevice::Options tapOptions()
{
    TapDevice::Options options;
    options.nameTemplate = QStringLiteral("clt%1x%d").arg(::getpid());
    return options;
}

QByteArray vnetHeader()
{
    return QByteArray(TapDevice::kVnetHeaderBytes, '\0');
}

QByteArray ipv4Bytes(const char *text)
{
    in_addr address {};
    ::inet_pton(AF_INET, text, &address);
    return QByteArray(reinterpret_cast<const char *>(&address), sizeof address);
}

QString macText(QByteArrayView mac)
{
    return QString::fromLatin1(mac.toByteArray().toHex(':'));
}

// Waits up to `ms` for a frame on the TAP that `accept` likes.
std::optional<QByteArray> awaitFrame(
    TapDevice &tap, int ms, const std::function<bool(const QByteArray &)> &accept)
{
    QElapsedTimer waited;
    waited.start();
    while (waited.elapsed() < ms) {
        pollfd ready { tap.fd(), POLLIN, 0 };
        ::poll(&ready, 1, 50);
        while (true) {
            Result<std::optional<QByteArray>> frame = tap.readFrame();
            if (!frame) {
                qWarning("readFrame: %s", qPrintable(frame.error().message));
                return std::nullopt;
            }
            if (!frame->has_value())
                break;
            if (accept(**frame))
                return **frame;
        }
    }
    return std::nullopt;
}

// QVERIFY2 builds its message even when the check passes.
template <typename T> QString why(const Result<T> &result)
{
    return result ? QString() : result.error().message;
}

} // namespace

class TestTapDevice final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void createMakesTapThatVanishesWithObject();
    void createWithoutVnetHeader();
    void createRefusesBadOptions_data();
    void createRefusesBadOptions();
    void moveIntoConfiguresInterface_data();
    void moveIntoConfiguresInterface();
    void framesFlowAfterMove();
    void invalidArgumentsChangeNothing_data();
    void invalidArgumentsChangeNothing();
    void moveIntoMissingProcessKeepsTapUsable();
    void moveIntoOwnNamespaceIsRefused();
    void takenNameInSandboxIsRefused();
    void failureAfterMoveBringsTapBack();
    void secondMoveIsRefused();
    void writeFrameChecksSize_data();
    void writeFrameChecksSize();
    void destroyedNamespaceIsReported();
};

void TestTapDevice::initTestCase()
{
    if (::geteuid() != 0)
        QSKIP("needs root: creating TAPs and network namespaces needs CAP_NET_ADMIN");
    if (!QFileInfo::exists(QStringLiteral("/dev/net/tun")))
        QSKIP("/dev/net/tun is missing: no TUN/TAP support here");
    if (ipTool().isEmpty())
        QSKIP("ip (iproute2) is not installed");
    if (QStandardPaths::findExecutable(QStringLiteral("nsenter")).isEmpty())
        QSKIP("nsenter (util-linux) is not installed");

    // A copy of this test that crashed could not clean up; its namespaces
    // carry its PID, so they are known to be nobody's once it is gone.
    const Ran listed = runIp({ QStringLiteral("netns"), QStringLiteral("list") });
    static const QRegularExpression ours(QStringLiteral("^cloop-tst-(\\d+)-\\d+$"));
    for (const QByteArray &line : listed.standardOutput.split('\n')) {
        const QString name = QString::fromLocal8Bit(line.split(' ').constFirst());
        const QRegularExpressionMatch match = ours.match(name);
        if (match.hasMatch() && !QFileInfo::exists(QStringLiteral("/proc/") + match.captured(1))) {
            qInfo("removing namespace %s left by a test that did not finish", qPrintable(name));
            runIp({ QStringLiteral("netns"), QStringLiteral("delete"), name });
        }
    }
}

void TestTapDevice::createMakesTapThatVanishesWithObject()
{
    TapDevice::Options options = tapOptions();
    options.mtu = 1400;
    auto tap = TapDevice::create(options);
    QVERIFY2(tap, qPrintable(why(tap)));
    const QString name = (*tap)->name();
    QVERIFY2(name.startsWith(QStringLiteral("clt%1x").arg(::getpid())), qPrintable(name));
    QVERIFY((*tap)->fd() >= 0);
    QVERIFY((*tap)->hasVnetHeader());
    QVERIFY(!(*tap)->isMoved());
    QVERIFY(fcntl((*tap)->fd(), F_GETFL) & O_NONBLOCK);

    const QJsonObject link = linkInfo({}, name);
    QVERIFY2(!link.isEmpty(), qPrintable(name));
    QCOMPARE(link.value(QLatin1String("mtu")).toInt(), 1400);
    QVERIFY(!isUp(link));
    const Result<bool> home = (*tap)->inHomeNamespace();
    QVERIFY(home);
    QVERIFY(*home);

    // Nothing waits on a new, down TAP.
    const auto nothing = (*tap)->readFrame();
    QVERIFY(nothing);
    QVERIFY(!nothing->has_value());

    tap->reset();
    QVERIFY2(!linkExists({}, name), qPrintable(name));
}

void TestTapDevice::createWithoutVnetHeader()
{
    TapDevice::Options options = tapOptions();
    options.vnetHeader = false;
    options.offloads = false;
    auto tap = TapDevice::create(options);
    QVERIFY2(tap, qPrintable(why(tap)));
    QVERIFY(!(*tap)->hasVnetHeader());
    QCOMPARE((*tap)->minWriteBytes(), TapDevice::kMinFrameBytes);
    QCOMPARE((*tap)->maxWriteBytes(), TapDevice::kMaxFrameBytes);
    QVERIFY(linkExists({}, (*tap)->name()));
}

void TestTapDevice::createRefusesBadOptions_data()
{
    QTest::addColumn<QString>("nameTemplate");
    QTest::addColumn<bool>("vnetHeader");
    QTest::addColumn<bool>("offloads");
    QTest::addColumn<int>("mtu");
    QTest::addColumn<QString>("code");

    const QString good = QStringLiteral("clt%1x%d").arg(::getpid());
    QTest::newRow("offloads without header") << good << false << true << 1500 << "invalid_options";
    QTest::newRow("template too long")
        << QStringLiteral("cloop-tap-long-%d") << true << true << 1500 << "invalid_options";
    QTest::newRow("two placeholders")
        << QStringLiteral("t%d%d") << true << true << 1500 << "invalid_options";
    QTest::newRow("other placeholder")
        << QStringLiteral("t%s") << true << true << 1500 << "invalid_options";
    QTest::newRow("slash") << QStringLiteral("t/%d") << true << true << 1500 << "invalid_options";
    QTest::newRow("empty") << QString() << true << true << 1500 << "invalid_options";
    QTest::newRow("mtu too small") << good << true << true << 67 << "invalid_mtu";
    QTest::newRow("mtu too big") << good << true << true << 65522 << "invalid_mtu";
}

void TestTapDevice::createRefusesBadOptions()
{
    QFETCH(QString, nameTemplate);
    QFETCH(bool, vnetHeader);
    QFETCH(bool, offloads);
    QFETCH(int, mtu);
    QFETCH(QString, code);

    TapDevice::Options options;
    options.nameTemplate = nameTemplate;
    options.vnetHeader = vnetHeader;
    options.offloads = offloads;
    options.mtu = mtu;
    auto tap = TapDevice::create(options);
    QVERIFY(!tap);
    QCOMPARE(tap.error().code, code);
    QVERIFY(tap.error().permanent);
}

void TestTapDevice::moveIntoConfiguresInterface_data()
{
    QTest::addColumn<std::optional<QString>>("address");
    QTest::addColumn<int>("mtu");
    QTest::addColumn<QString>("expected");

    QTest::newRow("IPv4") << std::optional<QString>(QStringLiteral("192.0.2.1/24")) << 1500
                          << QStringLiteral("192.0.2.1/24");
    QTest::newRow("IPv6") << std::optional<QString>(QStringLiteral("2001:DB8:0::1/64")) << 1400
                          << QStringLiteral("2001:db8::1/64");
    QTest::newRow("no address") << std::optional<QString>() << 9000 << QString();
}

void TestTapDevice::moveIntoConfiguresInterface()
{
    QFETCH(std::optional<QString>, address);
    QFETCH(int, mtu);
    QFETCH(QString, expected);

    Namespace sandbox;
    const QString started = sandbox.start();
    QVERIFY2(started.isEmpty(), qPrintable(started));
    TapDevice::Options options = tapOptions();
    options.mtu = 1280; // so the MTU the move sets is visible
    auto tap = TapDevice::create(options);
    QVERIFY2(tap, qPrintable(why(tap)));
    const QString hostName = (*tap)->name();

    QElapsedTimer timer;
    timer.start();
    const Status moved = (*tap)->moveInto(sandbox.pid(), kSandboxName, address, mtu);
    QVERIFY2(moved, qPrintable(why(moved)));
    qInfo("moveInto took %lld ms", timer.elapsed());
    QCOMPARE((*tap)->name(), kSandboxName);
    QVERIFY((*tap)->isMoved());
    const Result<bool> home = (*tap)->inHomeNamespace();
    QVERIFY(home);
    QVERIFY(!*home);

    const QJsonObject link = linkInfo(sandbox.name(), kSandboxName);
    QVERIFY2(!link.isEmpty(), qPrintable(linkNames(sandbox.name()).join(u' ')));
    QVERIFY(isUp(link));
    QCOMPARE(link.value(QLatin1String("mtu")).toInt(), mtu);
    QCOMPARE(link.value(QLatin1String("link_type")).toString(), QStringLiteral("ether"));
    const QStringList found = addresses(sandbox.name(), kSandboxName);
    if (!expected.isEmpty())
        QVERIFY2(found.contains(expected), qPrintable(found.join(u' ')));
    for (const QString &one : found)
        QVERIFY2(one.startsWith(QStringLiteral("fe80:")) || one == expected, qPrintable(one));
    QVERIFY2(!linkExists({}, hostName), qPrintable(hostName));

    // Closing the descriptor removes the TAP from the sandbox too.
    tap->reset();
    QVERIFY(!linkExists(sandbox.name(), kSandboxName));
}

void TestTapDevice::framesFlowAfterMove()
{
    Namespace sandbox;
    const QString started = sandbox.start();
    QVERIFY2(started.isEmpty(), qPrintable(started));
    auto created = TapDevice::create(tapOptions());
    QVERIFY2(created, qPrintable(why(created)));
    TapDevice &tap = **created;
    const Status moved
        = tap.moveInto(sandbox.pid(), kSandboxName, QStringLiteral("192.0.2.1/24"), 1500);
    QVERIFY2(moved, qPrintable(why(moved)));

    // A datagram to a neighbour nobody has resolved yet makes the sandbox
    // ask for it by ARP; the datagram waits in the neighbour's queue.
    const QByteArray payload("cloop-tap-test");
    const QString sent = sandbox.runInside([&payload]() -> QString {
        const int sock = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (sock < 0)
            return QStringLiteral("socket failed");
        sockaddr_in to {};
        to.sin_family = AF_INET;
        to.sin_port = htons(9);
        ::inet_pton(AF_INET, "192.0.2.2", &to.sin_addr);
        const ssize_t n = ::sendto(sock, payload.constData(), std::size_t(payload.size()), 0,
            reinterpret_cast<const sockaddr *>(&to), sizeof to);
        const int error = errno;
        ::close(sock);
        return n == payload.size() ? QString() : QStringLiteral("sendto failed: %1").arg(error);
    });
    QVERIFY2(sent.isEmpty(), qPrintable(sent));

    const qsizetype h = TapDevice::kVnetHeaderBytes;
    const QByteArray wanted = ipv4Bytes("192.0.2.2");
    const auto request = awaitFrame(tap, 3000, [&](const QByteArray &frame) {
        // Other frames (IPv6 router solicitations, MLD) pass by meanwhile.
        return frame.size() >= h + 42 && frame.mid(h + 12, 2) == QByteArray("\x08\x06", 2)
            && frame.mid(h + 20, 2) == QByteArray("\x00\x01", 2) && frame.mid(h + 38, 4) == wanted;
    });
    QVERIFY2(request, "no ARP request for 192.0.2.2 arrived on the TAP");
    QCOMPARE(request->left(h), vnetHeader());
    const QByteArray sandboxMac = request->mid(h + 22, 6);
    QCOMPARE(request->mid(h + 6, 6), sandboxMac);
    QCOMPARE(request->mid(h + 28, 4), ipv4Bytes("192.0.2.1"));

    const QByteArray peerMac("\x02\x00\x5e\x10\x00\x02", 6);
    QByteArray reply = vnetHeader();
    reply += sandboxMac;
    reply += peerMac;
    reply += QByteArray("\x08\x06", 2);
    reply += QByteArray("\x00\x01\x08\x00\x06\x04\x00\x02", 8); // Ethernet/IPv4, reply
    reply += peerMac + wanted + sandboxMac + ipv4Bytes("192.0.2.1");
    const Status written = tap.writeFrame(reply);
    QVERIFY2(written, qPrintable(why(written)));

    QString state;
    QString lladdr;
    QElapsedTimer waited;
    waited.start();
    while (waited.elapsed() < 3000) {
        const Ran ran = runIp({ QStringLiteral("-n"), sandbox.name(), QStringLiteral("-j"),
            QStringLiteral("neigh"), QStringLiteral("show"), QStringLiteral("dev"), kSandboxName,
            QStringLiteral("to"), QStringLiteral("192.0.2.2") });
        const QJsonObject entry
            = QJsonDocument::fromJson(ran.standardOutput).array().at(0).toObject();
        state = entry.value(QLatin1String("state")).toArray().at(0).toString();
        lladdr = entry.value(QLatin1String("lladdr")).toString();
        if (state == QLatin1String("REACHABLE") || state == QLatin1String("STALE"))
            break;
        QThread::msleep(20);
    }
    QVERIFY2(
        state == QLatin1String("REACHABLE") || state == QLatin1String("STALE"), qPrintable(state));
    QCOMPARE(lladdr, macText(peerMac));

    // With the neighbour known, the queued datagram leaves for it.
    const auto datagram = awaitFrame(tap, 3000, [&](const QByteArray &frame) {
        return frame.mid(h, 6) == peerMac && frame.mid(h + 12, 2) == QByteArray("\x08\x00", 2)
            && frame.endsWith(payload);
    });
    QVERIFY2(datagram, "the queued datagram never reached the TAP");
}

void TestTapDevice::invalidArgumentsChangeNothing_data()
{
    QTest::addColumn<QString>("interfaceName");
    QTest::addColumn<std::optional<QString>>("address");
    QTest::addColumn<int>("mtu");
    QTest::addColumn<QString>("code");

    const std::optional<QString> v4(QStringLiteral("192.0.2.1/24"));
    const QString badName = QStringLiteral("invalid_interface_name");
    const QString badAddress = QStringLiteral("invalid_address");
    QTest::newRow("empty name") << QString() << v4 << 1500 << badName;
    QTest::newRow("16 characters") << QStringLiteral("abcdefghijklmnop") << v4 << 1500 << badName;
    QTest::newRow("lo") << QStringLiteral("lo") << v4 << 1500 << badName;
    QTest::newRow("dot") << QStringLiteral(".") << v4 << 1500 << badName;
    QTest::newRow("dot dot") << QStringLiteral("..") << v4 << 1500 << badName;
    QTest::newRow("all") << QStringLiteral("all") << v4 << 1500 << badName;
    QTest::newRow("slash") << QStringLiteral("a/b") << v4 << 1500 << badName;
    QTest::newRow("colon") << QStringLiteral("eth0:1") << v4 << 1500 << badName;
    QTest::newRow("space") << QStringLiteral("fwd 0") << v4 << 1500 << badName;
    QTest::newRow("placeholder") << QStringLiteral("fwd%d") << v4 << 1500 << badName;
    QTest::newRow("non-ASCII") << QStringLiteral("fwdé") << v4 << 1500 << badName;
    const auto address
        = [](const char *text) { return std::optional<QString>(QString::fromUtf8(text)); };
    QTest::newRow("no prefix") << kSandboxName << address("192.0.2.1") << 1500 << badAddress;
    QTest::newRow("empty address") << kSandboxName << address("") << 1500 << badAddress;
    QTest::newRow("prefix 33") << kSandboxName << address("192.0.2.1/33") << 1500 << badAddress;
    QTest::newRow("prefix 129") << kSandboxName << address("2001:db8::1/129") << 1500 << badAddress;
    QTest::newRow("prefix 0") << kSandboxName << address("192.0.2.1/0") << 1500 << badAddress;
    QTest::newRow("prefix sign") << kSandboxName << address("192.0.2.1/+24") << 1500 << badAddress;
    QTest::newRow("two prefixes") << kSandboxName << address("192.0.2.1/24/8") << 1500
                                  << badAddress;
    QTest::newRow("octet 300") << kSandboxName << address("192.0.2.300/24") << 1500 << badAddress;
    QTest::newRow("short IPv4") << kSandboxName << address("10.1/8") << 1500 << badAddress;
    QTest::newRow("hostname") << kSandboxName << address("example.org/24") << 1500 << badAddress;
    QTest::newRow("scope") << kSandboxName << address("fe80::1%eth0/64") << 1500 << badAddress;
    QTest::newRow("unspecified") << kSandboxName << address("0.0.0.0/8") << 1500 << badAddress;
    QTest::newRow("loopback") << kSandboxName << address("127.0.0.2/8") << 1500 << badAddress;
    QTest::newRow("multicast") << kSandboxName << address("224.0.0.1/24") << 1500 << badAddress;
    QTest::newRow("IPv6 multicast") << kSandboxName << address("ff02::1/64") << 1500 << badAddress;
    QTest::newRow("mapped") << kSandboxName << address("::ffff:192.0.2.1/120") << 1500
                            << badAddress;
    QTest::newRow("option-like") << kSandboxName << address("-192.0.2.1/24") << 1500 << badAddress;
    QTest::newRow("mtu 67") << kSandboxName << v4 << 67 << "invalid_mtu";
    QTest::newRow("mtu 65522") << kSandboxName << v4 << 65522 << "invalid_mtu";
    QTest::newRow("IPv6 below 1280")
        << kSandboxName << address("2001:db8::1/64") << 1279 << "invalid_mtu";
}

void TestTapDevice::invalidArgumentsChangeNothing()
{
    QFETCH(QString, interfaceName);
    QFETCH(std::optional<QString>, address);
    QFETCH(int, mtu);
    QFETCH(QString, code);

    Namespace sandbox;
    const QString started = sandbox.start();
    QVERIFY2(started.isEmpty(), qPrintable(started));
    auto tap = TapDevice::create(tapOptions());
    QVERIFY2(tap, qPrintable(why(tap)));
    const QString hostName = (*tap)->name();

    const Status moved = (*tap)->moveInto(sandbox.pid(), interfaceName, address, mtu);
    QVERIFY(!moved);
    QCOMPARE(moved.error().code, code);
    QVERIFY(moved.error().permanent);
    QCOMPARE((*tap)->name(), hostName);
    QVERIFY(!(*tap)->isMoved());
    QVERIFY(linkExists({}, hostName));
    QCOMPARE(linkNames(sandbox.name()), QStringList { QStringLiteral("lo") });
}

void TestTapDevice::moveIntoMissingProcessKeepsTapUsable()
{
    auto created = TapDevice::create(tapOptions());
    QVERIFY2(created, qPrintable(why(created)));
    TapDevice &tap = **created;
    const QString hostName = tap.name();

    // Above pid_max no process can exist.
    QFile pidMaxFile(QStringLiteral("/proc/sys/kernel/pid_max"));
    QVERIFY(pidMaxFile.open(QIODevice::ReadOnly));
    const qint64 missing = pidMaxFile.readAll().trimmed().toLongLong() + 1;
    for (const qint64 pid : { missing, qint64(0), qint64(-5) }) {
        const Status moved = tap.moveInto(pid, kSandboxName, QStringLiteral("192.0.2.1/24"), 1500);
        QVERIFY(!moved);
        QCOMPARE(moved.error().code, QStringLiteral("no_such_process"));
        QVERIFY2(moved.error().message.contains(QLatin1String("no such process"))
                || moved.error().message.contains(QLatin1String("not a process id")),
            qPrintable(moved.error().message));
    }
    QCOMPARE(tap.name(), hostName);
    QVERIFY(linkExists({}, hostName));

    // Still a working device: down, so writes say so, and it can still move.
    const Status written = tap.writeFrame(vnetHeader() + QByteArray(60, '\xff'));
    QVERIFY(!written);
    QCOMPARE(written.error().code, QStringLiteral("link_down"));

    Namespace sandbox;
    const QString started = sandbox.start();
    QVERIFY2(started.isEmpty(), qPrintable(started));
    const Status moved = tap.moveInto(sandbox.pid(), kSandboxName, std::nullopt, 1500);
    QVERIFY2(moved, qPrintable(why(moved)));
    QVERIFY(linkExists(sandbox.name(), kSandboxName));
}

void TestTapDevice::moveIntoOwnNamespaceIsRefused()
{
    auto tap = TapDevice::create(tapOptions());
    QVERIFY2(tap, qPrintable(why(tap)));
    const QString hostName = (*tap)->name();
    const Status moved
        = (*tap)->moveInto(::getpid(), QStringLiteral("cltstself0"), std::nullopt, 1500);
    QVERIFY(!moved);
    QCOMPARE(moved.error().code, QStringLiteral("same_namespace"));
    QVERIFY(linkExists({}, hostName));
    QVERIFY(!linkExists({}, QStringLiteral("cltstself0")));
}

void TestTapDevice::takenNameInSandboxIsRefused()
{
    Namespace sandbox;
    const QString started = sandbox.start();
    QVERIFY2(started.isEmpty(), qPrintable(started));
    // The kernel would move the TAP and only then refuse the name.
    const Ran taken = runIp(
        { QStringLiteral("-n"), sandbox.name(), QStringLiteral("tuntap"), QStringLiteral("add"),
            QStringLiteral("dev"), kSandboxName, QStringLiteral("mode"), QStringLiteral("tap") });
    QVERIFY2(taken.ok(), taken.standardError.constData());
    auto tap = TapDevice::create(tapOptions());
    QVERIFY2(tap, qPrintable(why(tap)));
    const QString hostName = (*tap)->name();

    const Status moved = (*tap)->moveInto(sandbox.pid(), kSandboxName, std::nullopt, 1500);
    QVERIFY(!moved);
    QCOMPARE(moved.error().code, QStringLiteral("interface_exists"));
    QVERIFY(linkExists({}, hostName));
    QCOMPARE(linkNames(sandbox.name()).size(), 2);
}

void TestTapDevice::failureAfterMoveBringsTapBack()
{
    Namespace sandbox;
    const QString started = sandbox.start();
    QVERIFY2(started.isEmpty(), qPrintable(started));
    // New interfaces in this namespace get no IPv6, so adding an IPv6
    // address fails only after the move: the case that must be undone.
    const QString disabled = sandbox.runInside([]() -> QString {
        QFile setting(QStringLiteral("/proc/sys/net/ipv6/conf/default/disable_ipv6"));
        if (!setting.open(QIODevice::WriteOnly) || setting.write("1\n") != 2)
            return setting.errorString();
        return {};
    });
    if (!disabled.isEmpty())
        QSKIP(qPrintable(QStringLiteral("cannot disable IPv6 in the namespace: %1").arg(disabled)));

    auto created = TapDevice::create(tapOptions());
    QVERIFY2(created, qPrintable(why(created)));
    TapDevice &tap = **created;

    const Status moved
        = tap.moveInto(sandbox.pid(), kSandboxName, QStringLiteral("2001:db8::1/64"), 1500);
    QVERIFY(!moved);
    QCOMPARE(moved.error().code, QStringLiteral("tap_configure"));
    QVERIFY2(moved.error().message.contains(QLatin1String("moved back")),
        qPrintable(moved.error().message));
    qInfo("%s", qPrintable(moved.error().message));
    QVERIFY(!tap.isMoved());
    const Result<bool> home = tap.inHomeNamespace();
    QVERIFY(home);
    QVERIFY(*home);
    QVERIFY2(
        tap.name().startsWith(QStringLiteral("clt%1x").arg(::getpid())), qPrintable(tap.name()));
    QVERIFY(linkExists({}, tap.name()));
    QCOMPARE(linkNames(sandbox.name()), QStringList { QStringLiteral("lo") });

    // And it can go again, this time with an address the namespace takes.
    const Status again
        = tap.moveInto(sandbox.pid(), kSandboxName, QStringLiteral("192.0.2.1/24"), 1500);
    QVERIFY2(again, qPrintable(why(again)));
    QVERIFY(addresses(sandbox.name(), kSandboxName).contains(QStringLiteral("192.0.2.1/24")));
}

void TestTapDevice::secondMoveIsRefused()
{
    Namespace sandbox;
    const QString started = sandbox.start();
    QVERIFY2(started.isEmpty(), qPrintable(started));
    auto tap = TapDevice::create(tapOptions());
    QVERIFY2(tap, qPrintable(why(tap)));
    const Status moved = (*tap)->moveInto(sandbox.pid(), kSandboxName, std::nullopt, 1500);
    QVERIFY2(moved, qPrintable(why(moved)));
    const Status again
        = (*tap)->moveInto(sandbox.pid(), QStringLiteral("fwd1"), std::nullopt, 1500);
    QVERIFY(!again);
    QCOMPARE(again.error().code, QStringLiteral("already_moved"));
    QCOMPARE((*tap)->name(), kSandboxName);
}

void TestTapDevice::writeFrameChecksSize_data()
{
    QTest::addColumn<bool>("withHeader");
    QTest::addColumn<int>("size");
    QTest::addColumn<QString>("code");

    const int header = int(TapDevice::kVnetHeaderBytes);
    const int maxFrame = int(TapDevice::kMaxFrameBytes);
    const QString tooBig = QStringLiteral("frame_size");
    QTest::newRow("empty") << true << 0 << tooBig;
    QTest::newRow("header only") << true << header << tooBig;
    QTest::newRow("13-byte frame") << true << header + 13 << tooBig;
    QTest::newRow("14-byte frame") << true << header + 14 << "link_down";
    QTest::newRow("largest") << true << header + maxFrame << "link_down";
    QTest::newRow("one too many") << true << header + maxFrame + 1 << tooBig;
    QTest::newRow("no header, 13") << false << 13 << tooBig;
    QTest::newRow("no header, 14") << false << 14 << "link_down";
    QTest::newRow("no header, largest") << false << maxFrame << "link_down";
    QTest::newRow("no header, one too many") << false << maxFrame + 1 << tooBig;
}

void TestTapDevice::writeFrameChecksSize()
{
    QFETCH(bool, withHeader);
    QFETCH(int, size);
    QFETCH(QString, code);

    TapDevice::Options options = tapOptions();
    options.vnetHeader = withHeader;
    options.offloads = withHeader;
    auto tap = TapDevice::create(options);
    QVERIFY2(tap, qPrintable(why(tap)));
    // A plain header and a broadcast frame: only the size or the link state
    // can be wrong with it.
    const qsizetype header = withHeader ? TapDevice::kVnetHeaderBytes : 0;
    QByteArray frame
        = vnetHeader().left(header) + QByteArray(qMax<qsizetype>(0, size - header), '\xff');
    frame.truncate(size);
    const Status written = (*tap)->writeFrame(frame);
    QVERIFY(!written);
    QCOMPARE(written.error().code, code);
    QVERIFY2(written.error().message.contains((*tap)->name()), qPrintable(written.error().message));
}

void TestTapDevice::destroyedNamespaceIsReported()
{
    auto created = TapDevice::create(tapOptions());
    QVERIFY2(created, qPrintable(why(created)));
    TapDevice &tap = **created;
    {
        Namespace sandbox;
        const QString started = sandbox.start();
        QVERIFY2(started.isEmpty(), qPrintable(started));
        const Status moved = tap.moveInto(sandbox.pid(), kSandboxName, std::nullopt, 1500);
        QVERIFY2(moved, qPrintable(why(moved)));
    }
    // The kernel tears a namespace down asynchronously; a TAP in it is
    // deleted, not returned to the host.
    QElapsedTimer waited;
    waited.start();
    Result<std::optional<QByteArray>> read = tap.readFrame();
    while (read && waited.elapsed() < 5000) {
        QThread::msleep(20);
        read = tap.readFrame();
    }
    QVERIFY2(!read, "the TAP kept working after its namespace was destroyed");
    qInfo("device gone %lld ms after the namespace was deleted", waited.elapsed());
    QCOMPARE(read.error().code, QStringLiteral("device_gone"));
    const Status written = tap.writeFrame(vnetHeader() + QByteArray(60, '\xff'));
    QVERIFY(!written);
    QCOMPARE(written.error().code, QStringLiteral("device_gone"));
    const Result<bool> home = tap.inHomeNamespace();
    QVERIFY(!home);
    QCOMPARE(home.error().code, QStringLiteral("device_gone"));
}

QTEST_GUILESS_MAIN(TestTapDevice)
#include "tst_tapdevice.moc"
