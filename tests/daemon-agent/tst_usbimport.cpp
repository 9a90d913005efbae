// The agent's side of USB/IP on a fixture machine whose vhci_hcd is the
// in-process kernel stand-in: the port table and attach/detach
// (VhciController), the ledger's real release of a leftover port, and the
// import's client handshake against a forwarder that refuses or lies.

#include "common/device/sysfsroot.h"
#include "common/device/usb/usbipprotocol.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/util/fd.h"
#include "daemon-agent/devices/attachmentledger.h"
#include "daemon-agent/devices/usbimport.h"
#include "daemon-agent/devices/vhcicontroller.h"
#include "support/multiplexerpair.h"
#include "support/usbstandin/usbfixture.h"
#include "support/usbstandin/usbkernelstandin.h"

#include <QDir>
#include <QPointer>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/socket.h>

using namespace cloop;
using cloop::agent::AttachmentLedger;
using cloop::agent::UsbImport;
using cloop::agent::VhciController;
using cloop::device::SysfsRoot;
using namespace cloop::testsupport::usb;
namespace usbip = cloop::device::usb::usbip;

namespace {

// One end of a socketpair for the kernel, the other kept by the test.
struct Pair
{
    util::Fd kernels;
    util::Fd ours;
};

Pair socketPair(int type = SOCK_STREAM)
{
    int ends[2] = { -1, -1 };
    if (::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, ends) != 0)
        return {};
    return Pair { util::Fd(ends[0]), util::Fd(ends[1]) };
}

} // namespace

class TestUsbImport : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void theControllerReadsEveryPort();
    void attachChoosesTheHubBySpeedAndDetachFreesIt();
    void attachRefusesWhatTheKernelWould();
    void theRealReleaseFreesOnlyTheRecordedDevice();
    void hostDriversAreKeptOffAndOnlyItsInterfacesAuthorized();
    void aRefusedImportEndsWithTheForwardersWords_data();
    void aRefusedImportEndsWithTheForwardersWords();

private:
    // The fixture tree, its writes answered by the stand-in.
    SysfsRoot roots() const { return SysfsRoot(m_root->path()).withStandIn(m_kernel.get()); }

    std::unique_ptr<QTemporaryDir> m_root;
    std::unique_ptr<UsbKernelStandIn> m_kernel;
    std::unique_ptr<VhciController> m_vhci;
};

void TestUsbImport::init()
{
    m_root = std::make_unique<QTemporaryDir>();
    QVERIFY(m_root->isValid());
    QVERIFY(UsbFixture::makeAgentMachine(m_root->path(), 4));
    m_kernel = std::make_unique<UsbKernelStandIn>(SysfsRoot(m_root->path()));
    m_vhci = std::make_unique<VhciController>(roots());
}

void TestUsbImport::cleanup()
{
    m_vhci.reset();
    m_kernel.reset();
    m_root.reset();
}

void TestUsbImport::theControllerReadsEveryPort()
{
    QVERIFY(m_vhci->isLoaded());
    auto ports = m_vhci->ports();
    QVERIFY2(ports, qPrintable(ports ? QString() : ports.error().message));
    QCOMPARE(ports->size(), 8);
    for (int i = 0; i < 8; ++i) {
        QCOMPARE(ports->at(i).number, i);
        QCOMPARE(ports->at(i).superSpeedHub, i >= 4);
        QVERIFY(ports->at(i).isFree());
        QCOMPARE(ports->at(i).localBusId, QStringLiteral("0-0"));
    }
    // Without the driver, it says what to load.
    VhciController none { SysfsRoot(m_root->path() + QStringLiteral("/nowhere")) };
    QVERIFY(!none.isLoaded());
    QCOMPARE(none.ports().error().code, QStringLiteral("vhci_missing"));
    QVERIFY(none.ports().error().message.contains(QLatin1String("modprobe vhci-hcd")));
}

void TestUsbImport::attachChoosesTheHubBySpeedAndDetachFreesIt()
{
    Pair high = socketPair();
    Pair super = socketPair();
    Pair second = socketPair();
    auto highPort = m_vhci->attach(high.kernels.get(), 0x10002, quint32(usbip::Speed::High));
    QVERIFY2(highPort, qPrintable(highPort ? QString() : highPort.error().message));
    QCOMPARE(*highPort, 0);
    auto superPort = m_vhci->attach(super.kernels.get(), 0x20003, quint32(usbip::Speed::Super));
    QVERIFY(superPort);
    QCOMPARE(*superPort, 4); // the first port of the ss hub
    auto secondPort = m_vhci->attach(second.kernels.get(), 0x10004, quint32(usbip::Speed::Full));
    QVERIFY(secondPort);
    QCOMPARE(*secondPort, 1);
    const auto port = m_vhci->port(0);
    QVERIFY(port && !port->isFree());
    QCOMPARE(port->deviceId, 0x10002u);
    QVERIFY(m_vhci->detach(0));
    QTRY_VERIFY(m_vhci->port(0)->isFree());
    // The port is free again for the next one.
    Pair again = socketPair();
    QCOMPARE(*m_vhci->attach(again.kernels.get(), 0x10005, quint32(usbip::Speed::High)), 0);
    // Detaching a free port is the kernel's EINVAL.
    QVERIFY(!m_vhci->detach(2));
}

void TestUsbImport::attachRefusesWhatTheKernelWould()
{
    Pair pair = socketPair();
    // Speed 0 (unknown) cannot be attached; vhci would refuse it too.
    auto unknown = m_vhci->attach(pair.kernels.get(), 0x10002, 0);
    QVERIFY(!unknown);
    QCOMPARE(unknown.error().code, QStringLiteral("usb_speed_unsupported"));
    // Only stream sockets: the kernel's check, not ours.
    Pair datagram = socketPair(SOCK_SEQPACKET);
    auto refused = m_vhci->attach(datagram.kernels.get(), 0x10002, quint32(usbip::Speed::High));
    QVERIFY(!refused);
    QCOMPARE(refused.error().code, QStringLiteral("kernel_write"));
    // Every high-speed port taken: said so, no other hub tried.
    std::vector<Pair> held;
    for (int i = 0; i < 4; ++i) {
        held.push_back(socketPair());
        QVERIFY(
            m_vhci->attach(held.back().kernels.get(), 0x10010 + i, quint32(usbip::Speed::High)));
    }
    auto full = m_vhci->attach(pair.kernels.get(), 0x10020, quint32(usbip::Speed::High));
    QVERIFY(!full);
    QCOMPARE(full.error().code, QStringLiteral("vhci_no_free_port"));
    QVERIFY(m_vhci->port(4)->isFree());
}

void TestUsbImport::theRealReleaseFreesOnlyTheRecordedDevice()
{
    // The real release, through the roots the agent's main would give it.
    Pair recorded = socketPair();
    Pair other = socketPair();
    QCOMPARE(*m_vhci->attach(recorded.kernels.get(), 0x10002, quint32(usbip::Speed::High)), 0);
    QCOMPARE(*m_vhci->attach(other.kernels.get(), 0x10003, quint32(usbip::Speed::High)), 1);

    auto released = AttachmentLedger::releaseUsbPort(roots(), 0, 0x10002);
    QVERIFY2(released, qPrintable(released ? QString() : released.error().message));
    QVERIFY(*released);
    QTRY_VERIFY(m_vhci->port(0)->isFree());
    // Port 1 holds another device than the record says: left alone.
    auto reused = AttachmentLedger::releaseUsbPort(roots(), 1, 0x10009);
    QVERIFY(!reused);
    QCOMPARE(reused.error().code, QStringLiteral("port_reused"));
    QVERIFY(m_vhci->port(1)->isUsed());
    // A free port: nothing to do, nothing reported.
    auto free = AttachmentLedger::releaseUsbPort(roots(), 2, 0x10002);
    QVERIFY(free && !*free);
}

void TestUsbImport::hostDriversAreKeptOffAndOnlyItsInterfacesAuthorized()
{
    const QString root = m_root->path();
    const QString vhci = root + QStringLiteral("/sys/devices/platform/vhci_hcd.0");
    // What the kernel shows: interfaces authorized by default on both of
    // vhci's root hubs; a PCI controller's root hub that is not vhci's.
    for (const QString &hub : { vhci + QStringLiteral("/usb3"), vhci + QStringLiteral("/usb4"),
             root + QStringLiteral("/sys/devices/pci0000:00/0000:00:14.0/usb1") }) {
        QVERIFY(QDir().mkpath(hub));
        QVERIFY(
            UsbFixture::writeFile(hub + QStringLiteral("/interface_authorized_default"), "1\n"));
    }
    QVERIFY(m_vhci->keepHostDriversOff());
    for (const QString &hub : { QStringLiteral("usb3"), QStringLiteral("usb4") })
        QCOMPARE(SysfsRoot(root).readAttribute(QStringLiteral(
                     "/sys/devices/platform/vhci_hcd.0/%1/interface_authorized_default")
                                                   .arg(hub)),
            QStringLiteral("0"));
    QCOMPARE(SysfsRoot(root).readAttribute(
                 u"/sys/devices/pci0000:00/0000:00:14.0/usb1/interface_authorized_default"),
        QStringLiteral("1"));

    // Interfaces of 3-1 are authorized; those of 3-10 and of 3-1.2 are not its own.
    const QString devices = root + QStringLiteral("/sys/bus/usb/devices");
    for (const QString &interface : { QStringLiteral("3-1:1.0"), QStringLiteral("3-1:1.1"),
             QStringLiteral("3-10:1.0"), QStringLiteral("3-1.2:1.0") }) {
        QVERIFY(QDir().mkpath(devices + QLatin1Char('/') + interface));
        QVERIFY(UsbFixture::writeFile(
            devices + QLatin1Char('/') + interface + QStringLiteral("/authorized"), "0\n"));
    }
    QVERIFY(m_vhci->authorizeInterfaces(QStringLiteral("3-1")));
    const auto authorized = [&](const QString &interface) {
        return SysfsRoot(root).readAttribute(
            QStringLiteral("/sys/bus/usb/devices/%1/authorized").arg(interface));
    };
    QCOMPARE(authorized(QStringLiteral("3-1:1.0")), QStringLiteral("1"));
    QCOMPARE(authorized(QStringLiteral("3-1:1.1")), QStringLiteral("1"));
    QCOMPARE(authorized(QStringLiteral("3-10:1.0")), QStringLiteral("0"));
    QCOMPARE(authorized(QStringLiteral("3-1.2:1.0")), QStringLiteral("0"));
}

void TestUsbImport::aRefusedImportEndsWithTheForwardersWords_data()
{
    QTest::addColumn<QByteArray>("reply");
    QTest::addColumn<QString>("closeReason");
    QTest::addColumn<QString>("expected");
    QTest::newRow("no such device")
        << usbip::encodeImportReply(usbip::OpStatus::NoDevice)
        << QStringLiteral("the USB device usb 1d50:6089 is unplugged")
        << QStringLiteral("refused the import (%1): the stream was closed: the USB device usb "
                          "1d50:6089 is unplugged")
               .arg(usbip::describeStatus(4));
    usbip::DeviceRecord elsewhere;
    elsewhere.busId = "2-1";
    elsewhere.busNumber = 2;
    elsewhere.deviceNumber = 3;
    elsewhere.speed = quint32(usbip::Speed::High);
    QTest::newRow("another bus id") << usbip::encodeImportReply(usbip::OpStatus::Ok,
        elsewhere) << QString() << QStringLiteral("answered for bus id 2-1, not 1-1");
    QByteArray garbage = usbip::encodeImportReply(usbip::OpStatus::NoDevice);
    garbage[0] = 0x02;
    QTest::newRow("not USB/IP") << garbage << QString()
                                << QStringLiteral("import reply is malformed");
}

void TestUsbImport::aRefusedImportEndsWithTheForwardersWords()
{
    QFETCH(QByteArray, reply);
    QFETCH(QString, closeReason);
    QFETCH(QString, expected);
    testing::MultiplexerPair pair;
    tunnel::ChannelMultiplexer &hub = pair.hub;
    tunnel::ChannelMultiplexer &agent = pair.daemon;
    QPointer<UsbImport> import;
    QString ending;
    connect(
        &agent, &tunnel::ChannelMultiplexer::channelRequested, this, [&](tunnel::Channel *channel) {
            channel->accept();
            import = new UsbImport(channel, QStringLiteral("1-1"), roots(), this);
            connect(
                import, &UsbImport::ended, this, [&](const QString &reason) { ending = reason; });
            import->start();
        });
    // The forwarder's side, played here: it reads the request and answers.
    tunnel::Channel *forwarder
        = *hub.openChannel({ { QStringLiteral("kind"), QStringLiteral("device") } });
    QByteArray request;
    connect(forwarder, &tunnel::Channel::readyRead, this, [&] { request += forwarder->readAll(); });
    QTRY_COMPARE(request.size(), usbip::kImportRequestSize);
    auto asked = usbip::decodeOpeningRequest(request);
    QVERIFY(asked && *asked);
    QCOMPARE((*asked)->message.kind, usbip::OpeningRequest::Kind::Import);
    QCOMPARE((*asked)->message.busId, QByteArray("1-1"));
    forwarder->write(reply);
    if (!closeReason.isNull())
        forwarder->close(protocol::CloseCode::Normal, closeReason);
    QTRY_VERIFY(!ending.isEmpty());
    QVERIFY2(ending.contains(expected), qPrintable(ending));
    QVERIFY(import->hasEnded());
    // Nothing was attached.
    for (int port = 0; port < 8; ++port)
        QVERIFY(m_vhci->port(port)->isFree());
    delete import;
}

QTEST_GUILESS_MAIN(TestUsbImport)
#include "tst_usbimport.moc"
