// The USB stand-in on its own, in process, no daemons: a forwarder's
// machine (usbip-host and a simulated device) and an agent's (vhci_hcd),
// each over a fixture tree of its own, driven through their files the way
// usbip and usbipd drive the kernel's. Where a test plays the far end of a
// USB/IP stream itself, the expected bytes are written out per
// linux-usbip-and-l2.md §1.6, not taken from the stand-in.

#include "common/device/sysfsroot.h"
#include "common/device/usb/usbipprotocol.h"
#include "common/util/fd.h"
#include "tests/support/usbstandin/blockingio.h"
#include "tests/support/usbstandin/standinmain.h"
#include "tests/support/usbstandin/usbfixture.h"
#include "tests/support/usbstandin/usbkernelstandin.h"

#include <QDeadlineTimer>
#include <QFileInfo>
#include <QJsonArray>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QtTest>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <memory>
#include <optional>
#include <thread>

using cloop::Result;
using cloop::Status;
using cloop::device::SysfsRoot;
using cloop::util::Fd;
using namespace cloop::testsupport::usb;
namespace usbip = cloop::device::usb::usbip;

namespace {

constexpr quint16 kVendor = 0x1d50;
constexpr quint16 kProduct = 0x6089;
constexpr int kHcPorts = 4;

struct SocketPair
{
    Fd ours;
    Fd theirs;
};

SocketPair socketPair(int type = SOCK_STREAM)
{
    int fds[2] = { -1, -1 };
    if (::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds) != 0)
        qFatal("socketpair: %s", strerror(errno));
    return { Fd(fds[0]), Fd(fds[1]) };
}

// Reads exactly `size` bytes, or less when the stream ends first.
QByteArray receive(int fd, qsizetype size)
{
    QByteArray bytes(size, Qt::Uninitialized);
    qsizetype have = 0;
    while (have < size) {
        const ssize_t got = ::recv(fd, bytes.data() + have, size_t(size - have), 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        have += got;
    }
    bytes.truncate(have);
    return bytes;
}

// Whether the stream ends (EOF), whatever still comes before; bounded by
// the socket's own receive timeout so a failing test cannot hang.
bool endsWithin(int fd, int timeoutMs)
{
    timeval timeout { timeoutMs / 1000, (timeoutMs % 1000) * 1000 };
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    std::array<char, 4096> buffer {};
    for (;;) {
        const ssize_t got = ::recv(fd, buffer.data(), buffer.size(), 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got == 0;
    }
}

// The relay between the two machines: copies both ways until either side
// ends, then ends the other.
class Pump
{
public:
    Pump(Fd forwarderSide, Fd agentSide)
        : m_forwarder(std::move(forwarderSide))
        , m_agent(std::move(agentSide))
    {
        m_toAgent = std::thread([this] { copy(m_forwarder.get(), m_agent.get()); });
        m_toForwarder = std::thread([this] { copy(m_agent.get(), m_forwarder.get()); });
    }
    ~Pump()
    {
        ::shutdown(m_forwarder.get(), SHUT_RDWR);
        ::shutdown(m_agent.get(), SHUT_RDWR);
        m_toAgent.join();
        m_toForwarder.join();
    }

private:
    static void copy(int from, int to)
    {
        std::array<char, 64 * 1024> buffer {};
        for (;;) {
            const ssize_t got = ::recv(from, buffer.data(), buffer.size(), 0);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0 || !sendAll(to, buffer.data(), got))
                break;
        }
        ::shutdown(from, SHUT_RDWR);
        ::shutdown(to, SHUT_RDWR);
    }

    Fd m_forwarder;
    Fd m_agent;
    std::thread m_toAgent;
    std::thread m_toForwarder;
};

QString resolved(const SysfsRoot &roots, QStringView path)
{
    return roots.resolve(path).value_or(QStringLiteral("<missing>"));
}

QString attribute(const SysfsRoot &roots, QStringView path)
{
    return roots.readAttribute(path).value_or(QStringLiteral("<missing>"));
}

QByteArray linkText(const QString &path)
{
    std::array<char, 4096> target {};
    const ssize_t length
        = ::readlink(QFile::encodeName(path).constData(), target.data(), target.size());
    return length < 0 ? QByteArray() : QByteArray(target.data(), length);
}

QString errorOf(const Status &status)
{
    return status ? QString() : status.error().message;
}

std::array<quint8, 8> setupPacket(
    quint8 type, quint8 request, quint16 value, quint16 index, quint16 length)
{
    return { type, request, quint8(value), quint8(value >> 8), quint8(index), quint8(index >> 8),
        quint8(length), quint8(length >> 8) };
}

UsbTransfer control(const std::array<quint8, 8> &setup, const QByteArray &data = {})
{
    UsbTransfer transfer;
    transfer.setup = setup;
    transfer.data = data;
    return transfer;
}

UsbTransfer bulk(bool in, const QByteArray &data, qint32 length = 0)
{
    UsbTransfer transfer;
    transfer.endpoint = 1;
    transfer.in = in;
    transfer.data = data;
    transfer.length = length;
    return transfer;
}

quint16 le16(const QByteArray &bytes, qsizetype at)
{
    return quint16(quint8(bytes.at(at)) | (quint8(bytes.at(at + 1)) << 8));
}

// The client blocks, and the server answers in this thread's event loop:
// the call runs on a thread of its own while this one spins.
Result<QJsonObject> callOnThread(const QString &root, const QJsonObject &request)
{
    std::optional<Result<QJsonObject>> answer;
    std::atomic<bool> done { false };
    std::thread client([&] {
        StandInControl control(root);
        answer.emplace(control.call(request, 10000));
        done = true;
    });
    const QDeadlineTimer deadline(20000);
    while (!done && !deadline.hasExpired())
        QTest::qWait(5);
    client.join(); // bounded by the call's own timeout
    return *answer;
}

} // namespace

class TestUsbKernelStandIn : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void fixtureRootsComeFromTheEnvironment();
    void forwarderTreeLooksLikeTheKernels();
    void agentTreeLooksLikeTheKernels();
    void exportAndUnexportAsUsbipDoes();
    void matchBusIdKeepsTheNewline();
    void matchBusIdHasSixteenSlots();
    void rebindLeavesAStillBoundDeviceBound();
    void usbipSockfdTakesOnlyStreamSockets();
    void simulatedDeviceOnTheWire();
    void attachChecksItsArguments();
    void vhciEnumeratesOnTheWire();
    void unknownSequenceNumberDropsThePort();
    void roundTripThroughBothMachines();
    void wrongDeviceIdDropsTheConnection();
    void unplugDuringExportFreesThePort();
    void controlSocket();
    void otherFilesAreWrittenAsTheyAre();

private:
    // usbip bind -b busId: unbind from usb, add to match_busid, bind.
    void exportDevice(const QString &busId);
    // usbipd's hand-over: one end of a stream socketpair to usbip_sockfd;
    // returns the other end.
    Fd handOver(const QString &busId);
    // usbip attach: one end to vhci's attach; returns the other end.
    Fd attach(int port, quint32 deviceId, int speed = 3);
    QString forwarderFile(QStringView path) const;
    QString agentStatusLine(int port) const;
    // Export 1-1, attach it on hs port 0 through a pump, wait for 3-1.
    std::unique_ptr<Pump> connectBothMachines();

    std::unique_ptr<QTemporaryDir> m_forwarderDir;
    std::unique_ptr<QTemporaryDir> m_agentDir;
    std::optional<SysfsRoot> m_forwarderRoot;
    std::optional<SysfsRoot> m_agentRoot;
    std::unique_ptr<UsbKernelStandIn> m_forwarder;
    std::unique_ptr<UsbKernelStandIn> m_agent;
    std::shared_ptr<std::atomic<int>> m_agentChanges;
};

void TestUsbKernelStandIn::init()
{
    m_forwarderDir = std::make_unique<QTemporaryDir>();
    m_agentDir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_forwarderDir->isValid() && m_agentDir->isValid());
    FixtureDevice device;
    device.busId = QStringLiteral("1-1");
    device.vendorId = kVendor;
    device.productId = kProduct;
    device.bcdDevice = 0x0105;
    device.serial = QStringLiteral("SN-42");
    device.manufacturer = QStringLiteral("Great Scott Gadgets");
    device.product = QStringLiteral("HackRF One");
    FixtureDevice second;
    second.busId = QStringLiteral("1-2");
    FixtureDevice imported;
    imported.busId = QStringLiteral("3-1");
    imported.imported = true;
    QVERIFY2(UsbFixture::makeForwarderMachine(m_forwarderDir->path(), { device, second, imported }),
        "forwarder fixture");
    QVERIFY2(UsbFixture::makeAgentMachine(m_agentDir->path(), kHcPorts), "agent fixture");
    m_forwarderRoot.emplace(m_forwarderDir->path());
    m_agentRoot.emplace(m_agentDir->path());
    m_forwarder = std::make_unique<UsbKernelStandIn>(*m_forwarderRoot);
    m_agent = std::make_unique<UsbKernelStandIn>(*m_agentRoot);
    m_agentChanges = std::make_shared<std::atomic<int>>(0);
    QVERIFY(m_agent->watchUsbDevices([changes = m_agentChanges] { ++*changes; }));
}

void TestUsbKernelStandIn::cleanup()
{
    m_agent.reset();
    m_forwarder.reset();
    m_agentDir.reset();
    m_forwarderDir.reset();
}

void TestUsbKernelStandIn::exportDevice(const QString &busId)
{
    const QString unbind
        = QStringLiteral("/sys/bus/usb/devices/") + busId + QStringLiteral("/driver/unbind");
    QCOMPARE(errorOf(m_forwarder->write(unbind, busId.toUtf8())), QString());
    QCOMPARE(errorOf(m_forwarder->write(
                 u"/sys/bus/usb/drivers/usbip-host/match_busid", "add " + busId.toUtf8())),
        QString());
    QCOMPARE(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/bind", busId.toUtf8())),
        QString());
}

Fd TestUsbKernelStandIn::handOver(const QString &busId)
{
    SocketPair pair = socketPair();
    const Status handed
        = m_forwarder->write(QStringLiteral("/sys/bus/usb/devices/%1/usbip_sockfd").arg(busId),
            QByteArray::number(pair.ours.get()) + '\n');
    if (!handed) {
        qWarning("usbip_sockfd: %s", qPrintable(handed.error().message));
        return {};
    }
    return std::move(pair.theirs); // ours closes: the stand-in keeps its own
}

Fd TestUsbKernelStandIn::attach(int port, quint32 deviceId, int speed)
{
    SocketPair pair = socketPair();
    const Status attached = m_agent->write(u"/sys/devices/platform/vhci_hcd.0/attach",
        QStringLiteral("%1 %2 %3 %4")
            .arg(port)
            .arg(pair.ours.get())
            .arg(deviceId)
            .arg(speed)
            .toLatin1());
    if (!attached) {
        qWarning("attach: %s", qPrintable(attached.error().message));
        return {};
    }
    return std::move(pair.theirs);
}

QString TestUsbKernelStandIn::forwarderFile(QStringView path) const
{
    QFile file(m_forwarderRoot->path(path));
    if (!file.open(QIODevice::ReadOnly))
        return QStringLiteral("<missing>");
    return QString::fromUtf8(file.readAll());
}

QString TestUsbKernelStandIn::agentStatusLine(int port) const
{
    const QStringList lines = m_agentRoot->readAttribute(u"/sys/devices/platform/vhci_hcd.0/status")
                                  .value_or(QString())
                                  .split(QLatin1Char('\n'));
    return lines.value(port + 1);
}

std::unique_ptr<Pump> TestUsbKernelStandIn::connectBothMachines()
{
    exportDevice(QStringLiteral("1-1"));
    Fd forwarderSide = handOver(QStringLiteral("1-1"));
    Fd agentSide = attach(0, (1u << 16) | 2u);
    if (!forwarderSide.valid() || !agentSide.valid())
        return nullptr;
    auto pump = std::make_unique<Pump>(std::move(forwarderSide), std::move(agentSide));
    // The status line changes last, once the device and its node are there.
    const QDeadlineTimer deadline(10000);
    while (!agentStatusLine(0).endsWith(u" 3-1") && !deadline.hasExpired())
        QTest::qWait(5);
    return pump;
}

void TestUsbKernelStandIn::forwarderTreeLooksLikeTheKernels()
{
    const SysfsRoot &roots = *m_forwarderRoot;
    QCOMPARE(resolved(roots, u"/sys/bus/usb/devices/1-1"),
        QStringLiteral("/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1"));
    // Links, relative, as sysfs makes them.
    QVERIFY(QFileInfo(roots.path(u"/sys/bus/usb/devices/1-1")).isSymLink());
    QCOMPARE(linkText(roots.path(u"/sys/bus/usb/devices/1-1")),
        QByteArray("../../../devices/pci0000:00/0000:00:14.0/usb1/1-1"));
    QCOMPARE(linkText(roots.path(u"/sys/bus/usb/devices/1-1/driver")),
        QByteArray("../../../../../bus/usb/drivers/usb"));
    QCOMPARE(forwarderFile(u"/sys/bus/usb/devices/1-1/idVendor"), QStringLiteral("1d50\n"));
    QCOMPARE(forwarderFile(u"/sys/bus/usb/devices/1-1/idProduct"), QStringLiteral("6089\n"));
    QCOMPARE(forwarderFile(u"/sys/bus/usb/devices/1-1/bcdDevice"), QStringLiteral("0105\n"));
    QCOMPARE(forwarderFile(u"/sys/bus/usb/devices/1-1/bNumInterfaces"), QStringLiteral(" 1\n"));
    QCOMPARE(forwarderFile(u"/sys/bus/usb/devices/1-1/bDeviceClass"), QStringLiteral("00\n"));
    QCOMPARE(attribute(roots, u"/sys/bus/usb/devices/1-1/busnum"), QStringLiteral("1"));
    QCOMPARE(attribute(roots, u"/sys/bus/usb/devices/1-1/devnum"), QStringLiteral("2"));
    QCOMPARE(attribute(roots, u"/sys/bus/usb/devices/1-2/devnum"), QStringLiteral("3"));
    QCOMPARE(attribute(roots, u"/sys/bus/usb/devices/1-1/speed"), QStringLiteral("480"));
    QCOMPARE(attribute(roots, u"/sys/bus/usb/devices/1-1/serial"), QStringLiteral("SN-42"));
    QCOMPARE(attribute(roots, u"/sys/bus/usb/devices/1-1/product"), QStringLiteral("HackRF One"));
    QVERIFY(!roots.exists(u"/sys/bus/usb/devices/1-2/serial"));
    QCOMPARE(
        attribute(roots, u"/sys/bus/usb/devices/1-1:1.0/bInterfaceClass"), QStringLiteral("ff"));
    QCOMPARE(resolved(roots, u"/sys/bus/usb/devices/1-1/driver"),
        QStringLiteral("/sys/bus/usb/drivers/usb"));
    QCOMPARE(UsbFixture::driverOf(roots, QStringLiteral("1-1")), QStringLiteral("usb"));
    QCOMPARE(resolved(roots, u"/sys/bus/usb/devices/usb1"),
        QStringLiteral("/sys/devices/pci0000:00/0000:00:14.0/usb1"));
    QCOMPARE(attribute(roots, u"/sys/bus/usb/devices/usb1/idVendor"), QStringLiteral("1d6b"));
    QCOMPARE(resolved(roots, u"/sys/bus/usb/devices/3-1"),
        QStringLiteral("/sys/devices/platform/vhci_hcd.0/usb3/3-1"));
    for (const char *file : { "bind", "unbind", "match_busid", "rebind" })
        QVERIFY(
            roots.exists(QStringLiteral("/sys/bus/usb/drivers/usbip-host/") + QLatin1String(file)));
    QCOMPARE(forwarderFile(u"/sys/bus/usb/drivers/usbip-host/match_busid"), QStringLiteral("\n"));
}

void TestUsbKernelStandIn::agentTreeLooksLikeTheKernels()
{
    const SysfsRoot &roots = *m_agentRoot;
    QCOMPARE(attribute(roots, u"/sys/devices/platform/vhci_hcd.0/nports"), QStringLiteral("8"));
    QFile status(roots.path(u"/sys/devices/platform/vhci_hcd.0/status"));
    QVERIFY(status.open(QIODevice::ReadOnly));
    QCOMPARE(status.readAll(),
        QByteArray("hub port sta spd dev      sockfd local_busid\n"
                   "hs  0000 004 000 00000000 000000 0-0\n"
                   "hs  0001 004 000 00000000 000000 0-0\n"
                   "hs  0002 004 000 00000000 000000 0-0\n"
                   "hs  0003 004 000 00000000 000000 0-0\n"
                   "ss  0004 004 000 00000000 000000 0-0\n"
                   "ss  0005 004 000 00000000 000000 0-0\n"
                   "ss  0006 004 000 00000000 000000 0-0\n"
                   "ss  0007 004 000 00000000 000000 0-0\n"));
    QVERIFY(roots.exists(u"/sys/devices/platform/vhci_hcd.0/attach"));
    QVERIFY(roots.exists(u"/sys/devices/platform/vhci_hcd.0/detach"));
    QVERIFY(roots.exists(u"/dev/bus/usb"));
    QCOMPARE(resolved(roots, u"/sys/bus/usb/devices/usb3"),
        QStringLiteral("/sys/devices/platform/vhci_hcd.0/usb3"));
    QCOMPARE(attribute(roots, u"/sys/bus/usb/devices/usb4/speed"), QStringLiteral("5000"));
    QCOMPARE(roots.list(u"/sys/bus/usb/devices"),
        QStringList({ QStringLiteral("usb3"), QStringLiteral("usb4") }));
}

void TestUsbKernelStandIn::exportAndUnexportAsUsbipDoes()
{
    const SysfsRoot &roots = *m_forwarderRoot;
    // Bound to usb: usbip-host may not take it yet, nor may usb again.
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usb/bind", "1-1"))
                .endsWith(u"Device or resource busy"));
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/unbind", "1-1"))
                .endsWith(u"No such device"));

    QCOMPARE(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usb/unbind", "1-1")), QString());
    QVERIFY(!roots.exists(u"/sys/bus/usb/devices/1-1/driver"));
    QVERIFY(!roots.exists(u"/sys/bus/usb/drivers/usb/1-1"));
    // Not in match_busid: usbip-host's probe refuses it.
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/bind", "1-1"))
                .endsWith(u"No such device"));

    QCOMPARE(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/match_busid", "add 1-1")),
        QString());
    QCOMPARE(
        forwarderFile(u"/sys/bus/usb/drivers/usbip-host/match_busid"), QStringLiteral("1-1 \n"));
    QCOMPARE(
        errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/bind", "1-1")), QString());
    QCOMPARE(resolved(roots, u"/sys/bus/usb/devices/1-1/driver"),
        QStringLiteral("/sys/bus/usb/drivers/usbip-host"));
    QCOMPARE(resolved(roots, u"/sys/bus/usb/drivers/usbip-host/1-1"),
        QStringLiteral("/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1"));
    QCOMPARE(attribute(roots, u"/sys/bus/usb/devices/1-1/usbip_status"), QStringLiteral("1"));
    QVERIFY(roots.exists(u"/sys/bus/usb/devices/1-1/usbip_sockfd"));
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/bind", "1-1"))
                .endsWith(u"Device or resource busy"));

    // usbip unbind: unbind, del, rebind — the entry outlives del (the
    // kernel's del leaves an Added entry for rebind to clear).
    QCOMPARE(
        errorOf(m_forwarder->write(u"/sys/bus/usb/devices/1-1/driver/unbind", "1-1")), QString());
    QVERIFY(!roots.exists(u"/sys/bus/usb/devices/1-1/driver"));
    QVERIFY(!roots.exists(u"/sys/bus/usb/devices/1-1/usbip_status"));
    QVERIFY(!roots.exists(u"/sys/bus/usb/devices/1-1/usbip_sockfd"));
    QCOMPARE(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/match_busid", "del 1-1")),
        QString());
    QCOMPARE(
        forwarderFile(u"/sys/bus/usb/drivers/usbip-host/match_busid"), QStringLiteral("1-1 \n"));
    QCOMPARE(
        errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/rebind", "1-1")), QString());
    QCOMPARE(resolved(roots, u"/sys/bus/usb/devices/1-1/driver"),
        QStringLiteral("/sys/bus/usb/drivers/usb"));
    QCOMPARE(forwarderFile(u"/sys/bus/usb/drivers/usbip-host/match_busid"), QStringLiteral("\n"));
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/rebind", "1-1"))
                .endsWith(u"No such device"));
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/match_busid", "del 1-1"))
                .endsWith(u"No such device"));
    // The error names what was written where, as SysfsRoot's own do.
    QCOMPARE(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/rebind", "1-1")),
        QStringLiteral(
            "writing \"1-1\" to /sys/bus/usb/drivers/usbip-host/rebind: No such device"));
    QCOMPARE(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/rebind", "1-1").error().code,
        QStringLiteral("kernel_write"));
}

void TestUsbKernelStandIn::matchBusIdKeepsTheNewline()
{
    QCOMPARE(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usb/unbind", "1-1\n")),
        QString()); // sysfs_streq
    QCOMPARE(
        errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/match_busid", "add 1-1\n")),
        QString());
    QCOMPARE(
        forwarderFile(u"/sys/bus/usb/drivers/usbip-host/match_busid"), QStringLiteral("1-1\n \n"));
    // "1-1\n" is not "1-1": no device matches the entry.
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/bind", "1-1"))
                .endsWith(u"No such device"));
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/bind", "1-1\n"))
                .endsWith(u"No such device"));
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/rebind", "1-1"))
                .endsWith(u"No such device"));
    QVERIFY(!m_forwarderRoot->exists(u"/sys/bus/usb/devices/1-1/driver"));
}

void TestUsbKernelStandIn::matchBusIdHasSixteenSlots()
{
    for (int i = 0; i < 16; ++i) {
        QCOMPARE(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/match_busid",
                     "add 2-" + QByteArray::number(i + 1))),
            QString());
    }
    // Adding one that is there is no change.
    QCOMPARE(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/match_busid", "add 2-1")),
        QString());
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/match_busid", "add 1-1"))
                .endsWith(u"Cannot allocate memory"));
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/match_busid", "put 1-1"))
                .endsWith(u"Invalid argument"));
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/match_busid", "add"))
                .endsWith(u"Invalid argument"));
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/match_busid",
                        "add " + QByteArray(32, '1')))
                .endsWith(u"Invalid argument"));
    QCOMPARE(m_forwarder->deviceStatus().value(u"match_busid").toArray().size(), 16);
}

void TestUsbKernelStandIn::rebindLeavesAStillBoundDeviceBound()
{
    // do_rebind is device_attach, which leaves a bound device alone: usbip
    // unbinds first. The entry goes all the same.
    exportDevice(QStringLiteral("1-1"));
    QCOMPARE(
        errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/rebind", "1-1")), QString());
    QCOMPARE(UsbFixture::driverOf(*m_forwarderRoot, QStringLiteral("1-1")),
        QStringLiteral("usbip-host"));
    QCOMPARE(forwarderFile(u"/sys/bus/usb/drivers/usbip-host/match_busid"), QStringLiteral("\n"));

    // An entry usbip-host never bound a device for: the kernel's rebind
    // would dereference a NULL device. Refused, not played along.
    QCOMPARE(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/match_busid", "add 1-2")),
        QString());
    QTest::ignoreMessage(QtWarningMsg,
        QRegularExpression(QStringLiteral("rebind of \"1-2\", which usbip-host never bound")));
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/rebind", "1-2"))
                .endsWith(u"Bad address"));
}

void TestUsbKernelStandIn::usbipSockfdTakesOnlyStreamSockets()
{
    const QString sockfd = QStringLiteral("/sys/bus/usb/devices/1-1/usbip_sockfd");
    SocketPair stream = socketPair();
    // Not bound to usbip-host: there is no such file.
    QVERIFY(errorOf(m_forwarder->write(sockfd, QByteArray::number(stream.ours.get())))
                .endsWith(u"No such file or directory"));
    exportDevice(QStringLiteral("1-1"));

    SocketPair seqpacket = socketPair(SOCK_SEQPACKET);
    SocketPair datagram = socketPair(SOCK_DGRAM);
    int pipeFds[2];
    QCOMPARE(::pipe2(pipeFds, O_CLOEXEC), 0);
    const Fd pipeRead(pipeFds[0]);
    const Fd pipeWrite(pipeFds[1]);
    for (const int fd : { seqpacket.ours.get(), datagram.ours.get(), pipeRead.get(), 9999 }) {
        QCOMPARE(errorOf(m_forwarder->write(sockfd, QByteArray::number(fd))),
            QStringLiteral("writing \"%1\" to %2: Invalid argument").arg(fd).arg(sockfd));
    }
    QVERIFY(errorOf(m_forwarder->write(sockfd, "socket")).endsWith(u"Invalid argument"));
    // -1 stops a connection; there is none.
    QVERIFY(errorOf(m_forwarder->write(sockfd, "-1")).endsWith(u"Invalid argument"));
    QCOMPARE(
        attribute(*m_forwarderRoot, u"/sys/bus/usb/devices/1-1/usbip_status"), QStringLiteral("1"));

    QCOMPARE(errorOf(m_forwarder->write(sockfd, QByteArray::number(stream.ours.get()) + '\n')),
        QString());
    QCOMPARE(
        attribute(*m_forwarderRoot, u"/sys/bus/usb/devices/1-1/usbip_status"), QStringLiteral("2"));
    // In use: not ready for another.
    SocketPair another = socketPair();
    QVERIFY(errorOf(m_forwarder->write(sockfd, QByteArray::number(another.ours.get())))
                .endsWith(u"Invalid argument"));
    // The stand-in holds its own duplicate: closing ours changes nothing.
    stream.ours.reset();
    QCOMPARE(
        attribute(*m_forwarderRoot, u"/sys/bus/usb/devices/1-1/usbip_status"), QStringLiteral("2"));

    QCOMPARE(errorOf(m_forwarder->write(sockfd, "-1")), QString());
    QCOMPARE(
        attribute(*m_forwarderRoot, u"/sys/bus/usb/devices/1-1/usbip_status"), QStringLiteral("1"));
    QVERIFY(endsWithin(stream.theirs.get(), 5000));
    QCOMPARE(UsbFixture::driverOf(*m_forwarderRoot, QStringLiteral("1-1")),
        QStringLiteral("usbip-host"));
}

void TestUsbKernelStandIn::simulatedDeviceOnTheWire()
{
    exportDevice(QStringLiteral("1-1"));
    const Fd vhci = handOver(QStringLiteral("1-1"));
    QVERIFY(vhci.valid());
    const int fd = vhci.get();

    // CMD_SUBMIT, seq 7, devid 1-2, IN, ep 0, GET_DESCRIPTOR(DEVICE) for 18 bytes.
    const QByteArray getDescriptor = QByteArray::fromHex("00000001"
                                                         "00000007"
                                                         "00010002"
                                                         "00000001"
                                                         "00000000"
                                                         "00000200"
                                                         "00000012"
                                                         "00000000"
                                                         "00000000"
                                                         "00000000"
                                                         "8006000100001200");
    QVERIFY(sendAll(fd, getDescriptor));
    const QByteArray reply = receive(fd, 48 + 18);
    QCOMPARE(reply.left(48).toHex(),
        QByteArray("00000003"
                   "00000007"
                   "00000000"
                   "00000000"
                   "00000000"
                   "00000000"
                   "00000012"
                   "00000000"
                   "00000000"
                   "00000000"
                   "0000000000000000"));
    const QByteArray descriptor = reply.mid(48);
    QCOMPARE(descriptor.toHex(), QByteArray("1201000200000040501d8960050101020301"));

    // CMD_UNLINK seq 8 of seq 7: it completed already; RET_UNLINK seq 8, status 0.
    QVERIFY(sendAll(fd,
        QByteArray::fromHex("00000002"
                            "00000008"
                            "00010002"
                            "00000000"
                            "00000000"
                            "00000007")
            + QByteArray(24, '\0')));
    QCOMPARE(receive(fd, 48).toHex(),
        QByteArray("00000004"
                   "00000008"
                   "00000000"
                   "00000000"
                   "00000000"
                   "00000000")
            + QByteArray(48, '0'));

    // Bulk OUT, seq 9, ep 1, 5 bytes; then IN for 100 gives those back.
    QVERIFY(sendAll(fd,
        QByteArray::fromHex("00000001"
                            "00000009"
                            "00010002"
                            "00000000"
                            "00000001"
                            "00000000"
                            "00000005"
                            "00000000"
                            "00000000"
                            "00000000"
                            "0000000000000000")
            + "hello"));
    QCOMPARE(receive(fd, 48).mid(0x14, 8).toHex(), QByteArray("0000000000000005"));
    QVERIFY(sendAll(fd,
        QByteArray::fromHex("00000001"
                            "0000000a"
                            "00010002"
                            "00000001"
                            "00000001"
                            "00000200"
                            "00000064"
                            "00000000"
                            "00000000"
                            "00000000"
                            "0000000000000000")));
    const QByteArray looped = receive(fd, 48 + 5);
    QCOMPARE(looped.mid(0x04, 4).toHex(), QByteArray("0000000a"));
    QCOMPARE(looped.mid(0x18, 4).toHex(), QByteArray("00000005"));
    QCOMPARE(looped.mid(48), QByteArray("hello"));

    // An unknown request stalls: -EPIPE, nothing sent back.
    QVERIFY(sendAll(fd,
        QByteArray::fromHex("00000001"
                            "0000000b"
                            "00010002"
                            "00000001"
                            "00000000"
                            "00000200"
                            "00000040"
                            "00000000"
                            "00000000"
                            "00000000"
                            "c0ff000000004000")));
    const QByteArray stalled = receive(fd, 48);
    QCOMPARE(stalled.mid(0x14, 8).toHex(), QByteArray("ffffffe000000000"));

    // Another devid: the stub drops the connection; the device is
    // available again.
    QVERIFY(sendAll(fd,
        QByteArray::fromHex("00000001"
                            "0000000c"
                            "00010003"
                            "00000001"
                            "00000000"
                            "00000200"
                            "00000012"
                            "00000000"
                            "00000000"
                            "00000000"
                            "8006000100001200")));
    QVERIFY(endsWithin(fd, 5000));
    QTRY_COMPARE(
        attribute(*m_forwarderRoot, u"/sys/bus/usb/devices/1-1/usbip_status"), QStringLiteral("1"));
    QCOMPARE(UsbFixture::driverOf(*m_forwarderRoot, QStringLiteral("1-1")),
        QStringLiteral("usbip-host"));
}

void TestUsbKernelStandIn::attachChecksItsArguments()
{
    const QString attachFile = QStringLiteral("/sys/devices/platform/vhci_hcd.0/attach");
    SocketPair stream = socketPair();
    const QByteArray fd = QByteArray::number(stream.ours.get());
    SocketPair seqpacket = socketPair(SOCK_SEQPACKET);
    QVERIFY(errorOf(m_agent->write(attachFile, "0 " + fd + " 65538 0"))
                .endsWith(u"Invalid argument")); // speed 0
    QVERIFY(
        errorOf(m_agent->write(attachFile, "0 " + fd + " 65538 7")).endsWith(u"Invalid argument"));
    QVERIFY(errorOf(m_agent->write(attachFile, "8 " + fd + " 65538 3"))
                .endsWith(u"Invalid argument")); // nports 8
    QVERIFY(
        errorOf(m_agent->write(attachFile, "0 " + fd + " 65538")).endsWith(u"Invalid argument"));
    QVERIFY(errorOf(
        m_agent->write(attachFile, "0 " + QByteArray::number(seqpacket.ours.get()) + " 65538 3"))
                .endsWith(u"Invalid argument"));
    QVERIFY(errorOf(m_agent->write(u"/sys/devices/platform/vhci_hcd.0/detach", "0"))
                .endsWith(u"Invalid argument"));

    QCOMPARE(errorOf(m_agent->write(attachFile, "2 " + fd + " 65538 3")), QString());
    QCOMPARE(agentStatusLine(2),
        QStringLiteral("hs  0002 006 003 00010002 %1 0-0")
            .arg(stream.ours.get(), 6, 10, QLatin1Char('0')));
    SocketPair other = socketPair();
    const QByteArray otherFd = QByteArray::number(other.ours.get());
    QVERIFY(errorOf(m_agent->write(attachFile, "2 " + otherFd + " 65538 3"))
                .endsWith(u"Device or resource busy"));
    // Speed picks the hub: port 6 at high speed is hs port 2 again.
    QVERIFY(errorOf(m_agent->write(attachFile, "6 " + otherFd + " 65538 3"))
                .endsWith(u"Device or resource busy"));
    // Super speed on an hs port number lands on the ss hub's port 2.
    QCOMPARE(errorOf(m_agent->write(attachFile, "2 " + otherFd + " 65539 5")), QString());
    QVERIFY(agentStatusLine(6).startsWith(u"ss  0006 006 005 00010003 "));

    // Nobody answers the enumeration; detach frees the port at once.
    QCOMPARE(errorOf(m_agent->write(u"/sys/devices/platform/vhci_hcd.0/detach", "2\n")), QString());
    QCOMPARE(agentStatusLine(2), QStringLiteral("hs  0002 004 000 00000000 000000 0-0"));
    QVERIFY(endsWithin(stream.theirs.get(), 5000));
    // The peer closing frees the other.
    other.theirs.reset();
    QTRY_COMPARE(agentStatusLine(6), QStringLiteral("ss  0006 004 000 00000000 000000 0-0"));
}

void TestUsbKernelStandIn::vhciEnumeratesOnTheWire()
{
    Fd device = attach(1, (1u << 16) | 5u);
    QVERIFY(device.valid());
    const QByteArray command = receive(device.get(), 48);
    // CMD_SUBMIT, the first seqnum, the devid given, IN, ep 0, URB_DIR_IN,
    // 18 bytes, GET_DESCRIPTOR(DEVICE).
    QCOMPARE(command.toHex(),
        QByteArray("00000001"
                   "00000001"
                   "00010005"
                   "00000001"
                   "00000000"
                   "00000200"
                   "00000012"
                   "00000000"
                   "00000000"
                   "00000000"
                   "8006000100001200"));
    QByteArray descriptor = QByteArray::fromHex("12010002ff000040501d8960050101020301");
    QVERIFY(sendAll(device.get(),
        QByteArray::fromHex("00000003"
                            "00000001"
                            "00000000"
                            "00000000"
                            "00000000"
                            "00000000"
                            "00000012"
                            "00000000"
                            "00000000"
                            "00000000"
                            "0000000000000000")
            + descriptor));
    QTRY_VERIFY(agentStatusLine(1).endsWith(u" 3-2"));
    QCOMPARE(resolved(*m_agentRoot, u"/sys/bus/usb/devices/3-2"),
        QStringLiteral("/sys/devices/platform/vhci_hcd.0/usb3/3-2"));
    QCOMPARE(attribute(*m_agentRoot, u"/sys/bus/usb/devices/3-2/idVendor"), QStringLiteral("1d50"));
    QCOMPARE(
        attribute(*m_agentRoot, u"/sys/bus/usb/devices/3-2/idProduct"), QStringLiteral("6089"));
    QCOMPARE(
        attribute(*m_agentRoot, u"/sys/bus/usb/devices/3-2/bDeviceClass"), QStringLiteral("ff"));
    QCOMPARE(attribute(*m_agentRoot, u"/sys/bus/usb/devices/3-2/busnum"), QStringLiteral("3"));
    QCOMPARE(attribute(*m_agentRoot, u"/sys/bus/usb/devices/3-2/devnum"), QStringLiteral("2"));
    QCOMPARE(attribute(*m_agentRoot, u"/sys/bus/usb/devices/3-2/speed"), QStringLiteral("480"));
    QCOMPARE(resolved(*m_agentRoot, u"/sys/bus/usb/devices/3-2/driver"),
        QStringLiteral("/sys/bus/usb/drivers/usb"));
    QVERIFY(m_agentRoot->exists(u"/dev/bus/usb/003/002"));
    if (::geteuid() == 0) {
        QVERIFY(m_agentRoot->isCharacterDevice(u"/dev/bus/usb/003/002"));
        struct stat info
        {
        };
        QCOMPARE(::stat(QFile::encodeName(m_agentRoot->path(u"/dev/bus/usb/003/002")).constData(),
                     &info),
            0);
        QCOMPARE(major(info.st_rdev), 189u);
        QCOMPARE(minor(info.st_rdev), 257u); // (3 - 1) * 128 + 2 - 1
    }
    QTRY_VERIFY(*m_agentChanges >= 1);

    // A transfer through the port: the next seqnum, the same devid.
    Result<UsbTransferResult> transfer = cloop::Error::make(QString(), QString());
    std::thread submitter([&] {
        transfer
            = m_agent->submit(QStringLiteral("/dev/bus/usb/003/002"), bulk(false, "abc"), 5000);
    });
    const QByteArray bulkOut = receive(device.get(), 48 + 3);
    QCOMPARE(bulkOut.left(0x1c).toHex(),
        QByteArray("00000001"
                   "00000002"
                   "00010005"
                   "00000000"
                   "00000001"
                   "00000000"
                   "00000003"));
    QCOMPARE(bulkOut.mid(48), QByteArray("abc"));
    QVERIFY(sendAll(device.get(),
        QByteArray::fromHex("00000003"
                            "00000002"
                            "00000000"
                            "00000000"
                            "00000000"
                            "00000000"
                            "00000003")
            + QByteArray(20, '\0')));
    submitter.join();
    QVERIFY2(transfer, qPrintable(transfer ? QString() : transfer.error().message));
    QCOMPARE(transfer->status, 0);
    QCOMPARE(transfer->actual, 3);

    // The device goes away: the port frees itself and the device is gone.
    const int changesBefore = *m_agentChanges;
    device.reset();
    QTRY_COMPARE(agentStatusLine(1), QStringLiteral("hs  0001 004 000 00000000 000000 0-0"));
    QVERIFY(!m_agentRoot->exists(u"/sys/bus/usb/devices/3-2"));
    QVERIFY(!m_agentRoot->exists(u"/sys/devices/platform/vhci_hcd.0/usb3/3-2"));
    QVERIFY(!m_agentRoot->exists(u"/dev/bus/usb/003/002"));
    QTRY_VERIFY(*m_agentChanges > changesBefore);
    QVERIFY(!m_agent->submit(QStringLiteral("/dev/bus/usb/003/002"), bulk(false, "x")));
}

void TestUsbKernelStandIn::unknownSequenceNumberDropsThePort()
{
    Fd device = attach(0, 0x10002);
    QVERIFY(device.valid());
    QCOMPARE(receive(device.get(), 48).size(), 48);
    // Sequence 99 was never sent: vhci_recv_ret_submit ends the session.
    QVERIFY(sendAll(device.get(),
        QByteArray::fromHex("00000003"
                            "00000063"
                            "00000000"
                            "00000000"
                            "00000000"
                            "00000000"
                            "00000000")
            + QByteArray(20, '\0')));
    QVERIFY(endsWithin(device.get(), 5000));
    QTRY_COMPARE(agentStatusLine(0), QStringLiteral("hs  0000 004 000 00000000 000000 0-0"));
    QVERIFY(!m_agentRoot->exists(u"/sys/bus/usb/devices/3-1"));
}

void TestUsbKernelStandIn::roundTripThroughBothMachines()
{
    std::unique_ptr<Pump> pump = connectBothMachines();
    QVERIFY(pump);
    QVERIFY(m_agentRoot->exists(u"/dev/bus/usb/003/002"));
    QCOMPARE(resolved(*m_agentRoot, u"/sys/bus/usb/devices/3-1"),
        QStringLiteral("/sys/devices/platform/vhci_hcd.0/usb3/3-1"));
    QCOMPARE(attribute(*m_agentRoot, u"/sys/bus/usb/devices/3-1/idVendor"), QStringLiteral("1d50"));
    QCOMPARE(
        attribute(*m_agentRoot, u"/sys/bus/usb/devices/3-1/bcdDevice"), QStringLiteral("0105"));
    QCOMPARE(agentStatusLine(0).section(QLatin1Char(' '), -1), QStringLiteral("3-1"));
    QCOMPARE(
        attribute(*m_forwarderRoot, u"/sys/bus/usb/devices/1-1/usbip_status"), QStringLiteral("2"));
    QTRY_VERIFY(*m_agentChanges >= 1);
    const QString node = QStringLiteral("/dev/bus/usb/003/002");

    const auto descriptor = m_agent->submit(node, control(setupPacket(0x80, 0x06, 0x0100, 0, 18)));
    QVERIFY2(descriptor, qPrintable(descriptor ? QString() : descriptor.error().message));
    QCOMPARE(descriptor->status, 0);
    QCOMPARE(descriptor->actual, 18);
    QCOMPARE(le16(descriptor->data, 8), kVendor);
    QCOMPARE(le16(descriptor->data, 10), kProduct);

    const auto configuration
        = m_agent->submit(node, control(setupPacket(0x80, 0x06, 0x0200, 0, 255)));
    QVERIFY(configuration);
    QCOMPARE(configuration->data.size(), 32);
    QCOMPARE(configuration->data.mid(9).toHex(),
        QByteArray("090400000"
                   "2ff0000"
                   "00"
                   "0705010200020007058102000200"));

    const auto product
        = m_agent->submit(node, control(setupPacket(0x80, 0x06, 0x0302, 0x0409, 255)));
    QVERIFY(product);
    QCOMPARE(QString::fromUtf16(reinterpret_cast<const char16_t *>(product->data.constData() + 2),
                 (product->data.size() - 2) / 2),
        QStringLiteral("HackRF One"));

    const QByteArray vendorData = "some vendor bytes";
    const auto stored = m_agent->submit(
        node, control(setupPacket(0x40, 0x01, 0, 0, quint16(vendorData.size())), vendorData));
    QVERIFY(stored);
    QCOMPARE(stored->status, 0);
    QCOMPARE(stored->actual, vendorData.size());
    const auto readBack = m_agent->submit(node, control(setupPacket(0xc0, 0x02, 0, 0, 4)));
    QVERIFY(readBack);
    QCOMPARE(readBack->data, vendorData.left(4));

    const auto stalled = m_agent->submit(node, control(setupPacket(0xc0, 0x7f, 0, 0, 8)));
    QVERIFY(stalled);
    QCOMPARE(stalled->status, -32);
    QCOMPARE(stalled->actual, 0);

    QByteArray payload(1024 * 1024, Qt::Uninitialized);
    QRandomGenerator generator(42);
    generator.fillRange(reinterpret_cast<quint32 *>(payload.data()), payload.size() / 4);
    const auto out = m_agent->submit(node, bulk(false, payload));
    QVERIFY(out);
    QCOMPARE(out->status, 0);
    QCOMPARE(out->actual, payload.size());
    const auto in = m_agent->submit(node, bulk(true, {}, qint32(payload.size())));
    QVERIFY(in);
    QCOMPARE(in->status, 0);
    QCOMPARE(in->actual, payload.size());
    QVERIFY(in->data == payload);
    // Nothing left: answered at once, empty.
    const auto empty = m_agent->submit(node, bulk(true, {}, 512));
    QVERIFY(empty);
    QCOMPARE(empty->actual, 0);

    QVERIFY(!m_agent->submit(QStringLiteral("/dev/bus/usb/003/009"), bulk(true, {}, 1)));

    // usbip detach: the port is free at once, the local device gone; the
    // forwarder sees its connection end.
    QCOMPARE(errorOf(m_agent->write(u"/sys/devices/platform/vhci_hcd.0/detach", "0")), QString());
    QCOMPARE(agentStatusLine(0), QStringLiteral("hs  0000 004 000 00000000 000000 0-0"));
    QVERIFY(!m_agentRoot->exists(u"/sys/bus/usb/devices/3-1"));
    QVERIFY(!m_agentRoot->exists(u"/dev/bus/usb/003/002"));
    QTRY_COMPARE(
        attribute(*m_forwarderRoot, u"/sys/bus/usb/devices/1-1/usbip_status"), QStringLiteral("1"));

    // And again on the same port: the next device number.
    Fd forwarderSide = handOver(QStringLiteral("1-1"));
    Fd agentSide = attach(0, (1u << 16) | 2u);
    QVERIFY(forwarderSide.valid() && agentSide.valid());
    pump = std::make_unique<Pump>(std::move(forwarderSide), std::move(agentSide));
    QTRY_VERIFY(agentStatusLine(0).endsWith(u" 3-1"));
    QVERIFY(m_agentRoot->exists(u"/dev/bus/usb/003/003"));
    QCOMPARE(attribute(*m_agentRoot, u"/sys/bus/usb/devices/3-1/devnum"), QStringLiteral("3"));
}

void TestUsbKernelStandIn::wrongDeviceIdDropsTheConnection()
{
    exportDevice(QStringLiteral("1-1"));
    Fd forwarderSide = handOver(QStringLiteral("1-1"));
    Fd agentSide = attach(0, (1u << 16) | 3u); // 1-1 is device 2
    QVERIFY(forwarderSide.valid() && agentSide.valid());
    const Pump pump(std::move(forwarderSide), std::move(agentSide));
    QTRY_COMPARE(agentStatusLine(0), QStringLiteral("hs  0000 004 000 00000000 000000 0-0"));
    QTRY_COMPARE(
        attribute(*m_forwarderRoot, u"/sys/bus/usb/devices/1-1/usbip_status"), QStringLiteral("1"));
    QVERIFY(!m_agentRoot->exists(u"/sys/bus/usb/devices/3-1"));
    QVERIFY(!m_agentRoot->exists(u"/dev/bus/usb/003/002"));
}

void TestUsbKernelStandIn::unplugDuringExportFreesThePort()
{
    std::unique_ptr<Pump> pump = connectBothMachines();
    QVERIFY(pump);
    QVERIFY(m_agentRoot->exists(u"/sys/bus/usb/devices/3-1"));

    QCOMPARE(errorOf(m_forwarder->unplug(QStringLiteral("1-1"))), QString());
    QVERIFY(!m_forwarderRoot->exists(u"/sys/bus/usb/devices/1-1"));
    QVERIFY(!m_forwarderRoot->exists(u"/sys/bus/usb/devices/1-1:1.0"));
    QVERIFY(!m_forwarderRoot->exists(u"/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1"));
    QVERIFY(!m_forwarderRoot->exists(u"/sys/bus/usb/drivers/usbip-host/1-1"));
    QTRY_COMPARE(agentStatusLine(0), QStringLiteral("hs  0000 004 000 00000000 000000 0-0"));
    QVERIFY(!m_agentRoot->exists(u"/sys/bus/usb/devices/3-1"));
    QVERIFY(!m_agentRoot->exists(u"/dev/bus/usb/003/002"));
    QVERIFY(!m_forwarder->unplug(QStringLiteral("1-1")));

    // Back with a new device number, on the usb driver; match_busid still
    // names it (stub_disconnect left the entry Added).
    QCOMPARE(errorOf(m_forwarder->plug(QStringLiteral("1-1"))), QString());
    QCOMPARE(attribute(*m_forwarderRoot, u"/sys/bus/usb/devices/1-1/devnum"), QStringLiteral("4"));
    QCOMPARE(
        attribute(*m_forwarderRoot, u"/sys/bus/usb/devices/1-1/idVendor"), QStringLiteral("1d50"));
    QCOMPARE(
        attribute(*m_forwarderRoot, u"/sys/bus/usb/devices/1-1/serial"), QStringLiteral("SN-42"));
    QCOMPARE(attribute(*m_forwarderRoot, u"/sys/bus/usb/devices/1-1:1.0/bInterfaceClass"),
        QStringLiteral("ff"));
    QCOMPARE(UsbFixture::driverOf(*m_forwarderRoot, QStringLiteral("1-1")), QStringLiteral("usb"));
    QCOMPARE(
        forwarderFile(u"/sys/bus/usb/drivers/usbip-host/match_busid"), QStringLiteral("1-1 \n"));
    QVERIFY(!m_forwarder->plug(QStringLiteral("1-1")));

    // Exported again, the old devid no longer reaches it.
    QCOMPARE(errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usb/unbind", "1-1")), QString());
    QCOMPARE(
        errorOf(m_forwarder->write(u"/sys/bus/usb/drivers/usbip-host/bind", "1-1")), QString());
    Fd forwarderSide = handOver(QStringLiteral("1-1"));
    Fd agentSide = attach(0, (1u << 16) | 4u);
    QVERIFY(forwarderSide.valid() && agentSide.valid());
    pump = std::make_unique<Pump>(std::move(forwarderSide), std::move(agentSide));
    QTRY_VERIFY(agentStatusLine(0).endsWith(u" 3-1"));
    QVERIFY(m_agentRoot->exists(u"/dev/bus/usb/003/003"));
}

void TestUsbKernelStandIn::controlSocket()
{
    QCOMPARE(errorOf(m_forwarder->listen()), QString());
    QCOMPARE(errorOf(m_agent->listen()), QString());
    QCOMPARE(m_agent->controlSocketPath(), m_agentDir->filePath(QStringLiteral("standin.sock")));
    const QString forwarderRoot = m_forwarderDir->path();
    const QString agentRoot = m_agentDir->path();

    auto status
        = callOnThread(forwarderRoot, { { QStringLiteral("op"), QStringLiteral("status") } });
    QVERIFY2(status, qPrintable(status ? QString() : status.error().message));
    const QJsonArray devices = status->value(u"devices").toArray();
    QCOMPARE(devices.size(), 3);
    QCOMPARE(devices.at(0).toObject().value(u"busid").toString(), QStringLiteral("1-1"));
    QCOMPARE(devices.at(0).toObject().value(u"driver").toString(), QStringLiteral("usb"));
    QCOMPARE(devices.at(0).toObject().value(u"devnum").toInt(), 2);
    QVERIFY(!devices.at(0).toObject().contains(u"usbip_status"));

    std::unique_ptr<Pump> pump = connectBothMachines();
    QVERIFY(pump);
    status = callOnThread(forwarderRoot, { { QStringLiteral("op"), QStringLiteral("status") } });
    QVERIFY(status);
    const QJsonObject exported = status->value(u"devices").toArray().at(0).toObject();
    QCOMPARE(exported.value(u"driver").toString(), QStringLiteral("usbip-host"));
    QCOMPARE(exported.value(u"usbip_status").toInt(), 2);

    const auto ports
        = callOnThread(agentRoot, { { QStringLiteral("op"), QStringLiteral("ports") } });
    QVERIFY(ports);
    QCOMPARE(ports->value(u"ports").toArray().size(), 2 * kHcPorts);
    const QJsonObject first = ports->value(u"ports").toArray().at(0).toObject();
    QCOMPARE(first.value(u"status").toInt(), 6);
    QCOMPARE(first.value(u"local_busid").toString(), QStringLiteral("3-1"));
    QCOMPARE(first.value(u"node").toString(), QStringLiteral("/dev/bus/usb/003/002"));
    QCOMPARE(first.value(u"devid").toInteger(), qint64(0x10002));

    const auto descriptor = callOnThread(agentRoot,
        { { QStringLiteral("op"), QStringLiteral("control") },
            { QStringLiteral("node"), QStringLiteral("/dev/bus/usb/003/002") },
            { QStringLiteral("setup"), QStringLiteral("8006000100001200") } });
    QVERIFY2(descriptor, qPrintable(descriptor ? QString() : descriptor.error().message));
    QCOMPARE(descriptor->value(u"status").toInt(), 0);
    QCOMPARE(descriptor->value(u"actual").toInt(), 18);
    const QByteArray bytes
        = QByteArray::fromBase64(descriptor->value(u"data").toString().toLatin1());
    QCOMPARE(le16(bytes, 8), kVendor);
    QCOMPARE(le16(bytes, 10), kProduct);

    const QByteArray payload(100000, 'x');
    const auto out = callOnThread(agentRoot,
        { { QStringLiteral("op"), QStringLiteral("bulk") },
            { QStringLiteral("node"), QStringLiteral("/dev/bus/usb/003/002") },
            { QStringLiteral("endpoint"), 1 },
            { QStringLiteral("direction"), QStringLiteral("out") },
            { QStringLiteral("data"), QString::fromLatin1(payload.toBase64()) } });
    QVERIFY(out);
    QCOMPARE(out->value(u"actual").toInt(), payload.size());
    const auto in = callOnThread(agentRoot,
        { { QStringLiteral("op"), QStringLiteral("bulk") },
            { QStringLiteral("node"), QStringLiteral("/dev/bus/usb/003/002") },
            { QStringLiteral("endpoint"), 1 },
            { QStringLiteral("direction"), QStringLiteral("in") },
            { QStringLiteral("length"), 200000 } });
    QVERIFY(in);
    QCOMPARE(QByteArray::fromBase64(in->value(u"data").toString().toLatin1()), payload);

    const auto unknown = callOnThread(agentRoot,
        { { QStringLiteral("op"), QStringLiteral("control") },
            { QStringLiteral("node"), QStringLiteral("/dev/bus/usb/009/009") },
            { QStringLiteral("setup"), QStringLiteral("8006000100001200") } });
    QVERIFY(!unknown);
    QCOMPARE(unknown.error().code, QStringLiteral("usb_standin"));
    QVERIFY(!callOnThread(agentRoot, { { QStringLiteral("op"), QStringLiteral("fly") } }));

    const auto unplugged = callOnThread(forwarderRoot,
        { { QStringLiteral("op"), QStringLiteral("unplug") },
            { QStringLiteral("busid"), QStringLiteral("1-1") } });
    QVERIFY2(unplugged, qPrintable(unplugged ? QString() : unplugged.error().message));
    QCOMPARE(unplugged->value(u"ok").toBool(), true);
    QTRY_COMPARE(agentStatusLine(0), QStringLiteral("hs  0000 004 000 00000000 000000 0-0"));
    const auto plugged = callOnThread(forwarderRoot,
        { { QStringLiteral("op"), QStringLiteral("plug") },
            { QStringLiteral("busid"), QStringLiteral("1-1") } });
    QVERIFY(plugged);
    QVERIFY(m_forwarderRoot->exists(u"/sys/bus/usb/devices/1-1"));
}

void TestUsbKernelStandIn::otherFilesAreWrittenAsTheyAre()
{
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/devices/1-1/power/control", "auto"))
                .endsWith(u"No such file or directory"));
    QVERIFY(UsbFixture::writeFile(
        m_forwarderRoot->path(u"/sys/bus/usb/devices/1-1/authorized"), "1\n"));
    QCOMPARE(errorOf(m_forwarder->write(u"/sys/bus/usb/devices/1-1/authorized", "0")), QString());
    QCOMPARE(forwarderFile(u"/sys/bus/usb/devices/1-1/authorized"), QStringLiteral("0"));
    QVERIFY(errorOf(m_forwarder->write(u"/sys/bus/usb/devices/1-1/idVendor", "ffff"))
                .endsWith(u"Permission denied"));
    QVERIFY(errorOf(m_agent->write(u"/sys/devices/platform/vhci_hcd.0/status", "x"))
                .endsWith(u"Permission denied"));
    // The forwarder's machine has no vhci controller files.
    QVERIFY(errorOf(m_forwarder->write(u"/sys/devices/platform/vhci_hcd.0/attach", "0 1 2 3"))
                .endsWith(u"No such file or directory"));
}

void TestUsbKernelStandIn::fixtureRootsComeFromTheEnvironment()
{
    // A stand-in build is pointed at a fixture tree, each file system apart.
    qputenv("CLOOP_SYSFS_ROOT", "/fx/s");
    qputenv("CLOOP_DEV_ROOT", "/fx/d");
    qunsetenv("CLOOP_PROC_ROOT");
    const auto unset = qScopeGuard([] {
        qunsetenv("CLOOP_SYSFS_ROOT");
        qunsetenv("CLOOP_DEV_ROOT");
    });
    const SysfsRoot roots = fixtureRootsFromEnvironment();
    QCOMPARE(roots.path(u"/sys/bus"), QStringLiteral("/fx/s/sys/bus"));
    QCOMPARE(roots.path(u"/dev/kvm"), QStringLiteral("/fx/d/dev/kvm"));
    QCOMPARE(roots.path(u"/proc/meminfo"), QStringLiteral("/proc/meminfo"));
    QCOMPARE(roots.kernelStandIn(), nullptr);
    qunsetenv("CLOOP_SYSFS_ROOT");
    QCOMPARE(fixtureRootsFromEnvironment().path(u"/sys/bus"), QStringLiteral("/sys/bus"));
}

QTEST_GUILESS_MAIN(TestUsbKernelStandIn)
#include "tst_usbkernelstandin.moc"
