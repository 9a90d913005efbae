// The forwarder's USB/IP server (UsbipServerSession over a channel) on a
// fixture machine whose kernel is the in-process stand-in. A test-only TCP
// adapter on 127.0.0.1 turns each TCP connection into a channel to the
// server, so Debian's own `usbip` tool can be its peer: `usbip list -r`
// must read the forwarder's device list as it reads usbipd's.

#include "common/device/sysfsroot.h"
#include "common/device/usb/usbipprotocol.h"
#include "common/protocol/devicespec.h"
#include "common/tunnel/channelmultiplexer.h"
#include "daemon-forward/usb/usbdevicewatch.h"
#include "daemon-forward/usb/usbexportledger.h"
#include "daemon-forward/usb/usbipserversession.h"
#include "support/multiplexerpair.h"
#include "support/usbstandin/usbfixture.h"
#include "support/usbstandin/usbkernelstandin.h"

#include <QJsonArray>
#include <QPointer>
#include <QProcess>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>

using namespace cloop;
using cloop::device::SysfsRoot;
using cloop::forward::UsbDeviceWatch;
using cloop::forward::UsbExportLedger;
using cloop::forward::UsbipServerSession;
using namespace cloop::testsupport::usb;
namespace usbip = cloop::device::usb::usbip;

namespace {

constexpr quint16 kVendor = 0x1d50;
constexpr quint16 kProduct = 0x6089;

// Two multiplexers back to back (hub and forwarder), and the forwarder's
// handler: every "usb" channel gets a server session.
class ForwarderEnd final : public QObject
{
public:
    ForwarderEnd(UsbDeviceWatch &watch)
        : m_watch(watch)
    {
        connect(&daemon, &tunnel::ChannelMultiplexer::channelRequested, this,
            [this](tunnel::Channel *channel) {
                channel->accept();
                const bool test = channel->metadata().value(QLatin1String("purpose")).toString()
                    == QLatin1String("test");
                auto *session = new UsbipServerSession(channel, m_watch,
                    test ? UsbipServerSession::Purpose::Test : UsbipServerSession::Purpose::Run,
                    exports, this);
                connect(session, &UsbipServerSession::ended, this,
                    [this, session](const QString &reason) {
                        endings.append(reason);
                        session->deleteLater();
                    });
            });
    }

    testing::MultiplexerPair pair;
    tunnel::ChannelMultiplexer &hub = pair.hub;
    tunnel::ChannelMultiplexer &daemon = pair.daemon;
    QStringList endings;
    UsbExportLedger *exports = nullptr;

private:
    UsbDeviceWatch &m_watch;
};

// What usbipd would be, were it listening: each TCP connection becomes one
// channel to the forwarder, bytes copied both ways. Test-only, loopback only.
class TcpAdapter final : public QObject
{
public:
    TcpAdapter(tunnel::ChannelMultiplexer &hub, QJsonObject metadata)
        : m_hub(hub)
        , m_metadata(std::move(metadata))
    {
        connect(&m_server, &QTcpServer::newConnection, this, [this] {
            while (QTcpSocket *socket = m_server.nextPendingConnection())
                relay(socket);
        });
    }

    bool listen() { return m_server.listen(QHostAddress::LocalHost, 0); }
    quint16 port() const { return m_server.serverPort(); }
    void setMetadata(QJsonObject metadata) { m_metadata = std::move(metadata); }

private:
    void relay(QTcpSocket *socket)
    {
        socket->setParent(this);
        auto opened = m_hub.openChannel(m_metadata);
        if (!opened) {
            socket->abort();
            return;
        }
        QPointer<tunnel::Channel> channel(*opened);
        connect(socket, &QTcpSocket::readyRead, channel,
            [socket, channel] { channel->write(socket->readAll()); });
        connect(channel, &tunnel::Channel::readyRead, socket,
            [socket, channel] { socket->write(channel->readAll()); });
        connect(
            channel, &tunnel::Channel::closed, socket, [socket] { socket->disconnectFromHost(); });
        connect(socket, &QTcpSocket::disconnected, channel, [channel] {
            // The connection's context: the channel is alive when this runs.
            tunnel::Channel *live = channel.data();
            if (live && live->state() != tunnel::Channel::State::Closed)
                live->close(protocol::CloseCode::Normal, QStringLiteral("the TCP peer left"));
        });
    }

    QTcpServer m_server;
    tunnel::ChannelMultiplexer &m_hub;
    QJsonObject m_metadata;
};

QJsonObject deviceEntry(const QJsonObject &status, const QString &busId)
{
    for (const QJsonValue &value : status.value(QLatin1String("devices")).toArray()) {
        if (value.toObject().value(QLatin1String("busid")).toString() == busId)
            return value.toObject();
    }
    return {};
}

} // namespace

class TestUsbipServer : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void theWatchFindsTheDeviceButNeverAnImportedOne();
    void theUsbipToolListsTheOneDevice();
    void anotherBusIdIsRefusedOnTheWireAndLeavesNoTrace();
    void anImportLendsTheDeviceAndGivesItBack();
    void aTestChannelImportsNothing();
    void unplugEndsTheImportAndAReplugIsCarriedAgain();
    void aKernelRefusalIsAnsweredAndLeavesTheDeviceAsItWas();
    void anExportIsRecordedWhileItLasts();
    void aRestartGivesBackOnlyWhatItsPredecessorLeft();
    void malformedRequestsAreRefused_data();
    void malformedRequestsAreRefused();

private:
    // A raw client of the adapter: sends `request`, waits for `replyBytes`
    // (or the close), and returns what came.
    QByteArray ask(const QByteArray &request, qsizetype replyBytes, QTcpSocket &socket);
    // The fixture tree, its writes answered by the stand-in.
    SysfsRoot roots() const { return SysfsRoot(m_root->path()).withStandIn(m_kernel.get()); }

    std::unique_ptr<QTemporaryDir> m_root;
    std::unique_ptr<UsbKernelStandIn> m_kernel;
    std::unique_ptr<UsbDeviceWatch> m_watch;
    std::unique_ptr<ForwarderEnd> m_forwarder;
    std::unique_ptr<TcpAdapter> m_adapter;
};

void TestUsbipServer::init()
{
    m_root = std::make_unique<QTemporaryDir>();
    QVERIFY(m_root->isValid());
    FixtureDevice carried;
    carried.busId = QStringLiteral("1-1");
    carried.vendorId = kVendor;
    carried.productId = kProduct;
    carried.serial = QStringLiteral("BENCH01");
    carried.interfaces
        = { FixtureInterface { 0xff, 0x00, 0x00 }, FixtureInterface { 0x03, 0x01, 0x01 } };
    // The same model, imported over USB/IP from elsewhere: never carried.
    FixtureDevice imported = carried;
    imported.busId = QStringLiteral("3-1");
    imported.imported = true;
    QVERIFY(UsbFixture::makeForwarderMachine(m_root->path(), { carried, imported }));
    m_kernel = std::make_unique<UsbKernelStandIn>(SysfsRoot(m_root->path()));
    auto spec = protocol::DeviceSpec::parseUsb(QStringLiteral("1d50:6089"));
    QVERIFY(spec);
    m_watch = std::make_unique<UsbDeviceWatch>(*spec, roots());
    QVERIFY(m_watch->start());
    m_forwarder = std::make_unique<ForwarderEnd>(*m_watch);
    m_adapter = std::make_unique<TcpAdapter>(
        m_forwarder->hub, QJsonObject { { QStringLiteral("kind"), QStringLiteral("usb") } });
    QVERIFY(m_adapter->listen());
}

void TestUsbipServer::cleanup()
{
    m_adapter.reset();
    m_forwarder.reset();
    m_watch.reset();
    m_kernel.reset();
    m_root.reset();
}

QByteArray TestUsbipServer::ask(const QByteArray &request, qsizetype replyBytes, QTcpSocket &socket)
{
    socket.connectToHost(QHostAddress::LocalHost, m_adapter->port());
    QByteArray reply;
    bool closed = false;
    // Gone with this frame: the lambdas hold its locals.
    const QMetaObject::Connection reading = QObject::connect(
        &socket, &QTcpSocket::readyRead, &socket, [&] { reply += socket.readAll(); });
    const QMetaObject::Connection closing
        = QObject::connect(&socket, &QTcpSocket::disconnected, &socket, [&] { closed = true; });
    [&] { QTRY_VERIFY(socket.state() == QAbstractSocket::ConnectedState); }();
    socket.write(request);
    [&] { QTRY_VERIFY_WITH_TIMEOUT(reply.size() >= replyBytes || closed, 10000); }();
    QObject::disconnect(reading);
    QObject::disconnect(closing);
    return reply;
}

void TestUsbipServer::theWatchFindsTheDeviceButNeverAnImportedOne()
{
    QCOMPARE(m_watch->busId(), QStringLiteral("1-1"));
    // Only the imported one left: nothing is carried.
    QVERIFY(m_kernel->unplug(QStringLiteral("1-1")));
    QTRY_COMPARE(m_watch->busId(), QString());
    QVERIFY(m_kernel->plug(QStringLiteral("1-1")));
    QTRY_COMPARE(m_watch->busId(), QStringLiteral("1-1"));
}

void TestUsbipServer::theUsbipToolListsTheOneDevice()
{
    const QString tool = QStandardPaths::findExecutable(
        QStringLiteral("usbip"), { QStringLiteral("/usr/sbin"), QStringLiteral("/usr/bin") });
    if (tool.isEmpty())
        QSKIP("Debian's usbip tool is not installed (apt-get install usbip)");
    QProcess usbip;
    usbip.start(tool,
        { QStringLiteral("--tcp-port"), QString::number(m_adapter->port()), QStringLiteral("list"),
            QStringLiteral("-r"), QStringLiteral("127.0.0.1") });
    QTRY_VERIFY_WITH_TIMEOUT(usbip.state() == QProcess::NotRunning, 15000);
    const QString out = QString::fromUtf8(usbip.readAllStandardOutput());
    const QString err = QString::fromUtf8(usbip.readAllStandardError());
    const QString both = out + err;
    QVERIFY2(usbip.exitStatus() == QProcess::NormalExit && usbip.exitCode() == 0, qPrintable(both));
    QVERIFY2(out.contains(QLatin1String("1-1:")), qPrintable(both));
    QVERIFY2(out.contains(QLatin1String("(1d50:6089)")), qPrintable(both));
    QVERIFY2(out.contains(QLatin1String("/sys/devices/pci0000:00/0000:00:14.0/usb1/1-1")),
        qPrintable(both));
    // Both interfaces, as usbip reads them from the reply.
    QVERIFY2(out.contains(QLatin1String("(ff/00/00)")) && out.contains(QLatin1String("(03/01/01)")),
        qPrintable(both));
    // The imported device of the same model is not offered.
    QVERIFY2(!out.contains(QLatin1String("3-1")), qPrintable(both));
    // Listing hands the device to nothing.
    QCOMPARE(deviceEntry(m_kernel->deviceStatus(), QStringLiteral("1-1"))
                 .value(QLatin1String("driver"))
                 .toString(),
        QStringLiteral("usb"));
    QTRY_COMPARE(m_forwarder->endings.size(), 1);
    QCOMPARE(m_forwarder->endings.first(), QStringLiteral("listed 1 device(s)"));
}

void TestUsbipServer::anotherBusIdIsRefusedOnTheWireAndLeavesNoTrace()
{
    for (const QByteArray &other : { QByteArray("1-2"), QByteArray("3-1") }) {
        QTcpSocket socket;
        const QByteArray reply
            = ask(*usbip::encodeImportRequest(other), usbip::kOpHeaderSize, socket);
        auto decoded = usbip::decodeImportReply(reply);
        QVERIFY2(decoded && *decoded, reply.toHex().constData());
        QCOMPARE((*decoded)->message.status, quint32(usbip::OpStatus::NoDevice));
        QVERIFY(!(*decoded)->message.device);
        QTRY_COMPARE(socket.state(), QAbstractSocket::UnconnectedState);
    }
    QTRY_COMPARE(m_forwarder->endings.size(), 2);
    QVERIFY2(m_forwarder->endings.at(0).contains(
                 QLatin1String("bus id 1-2 is not the device this forwarder carries")),
        qPrintable(m_forwarder->endings.at(0)));
    const QJsonObject status = m_kernel->deviceStatus();
    QCOMPARE(deviceEntry(status, QStringLiteral("1-1")).value(QLatin1String("driver")).toString(),
        QStringLiteral("usb"));
    QCOMPARE(status.value(QLatin1String("match_busid")).toArray().size(), 0);
}

void TestUsbipServer::anImportLendsTheDeviceAndGivesItBack()
{
    QTcpSocket socket;
    QByteArray reply = ask(*usbip::encodeImportRequest("1-1"), usbip::kImportReplySize, socket);
    auto decoded = usbip::decodeImportReply(reply);
    QVERIFY2(decoded && *decoded, reply.toHex().constData());
    QCOMPARE((*decoded)->message.status, 0u);
    const usbip::DeviceRecord record = *(*decoded)->message.device;
    QCOMPARE(record.busId, QByteArray("1-1"));
    QCOMPARE(record.vendorId, kVendor);
    QCOMPARE(record.speed, quint32(usbip::Speed::High));
    QCOMPARE(record.busNumber, 1u);

    QJsonObject entry = deviceEntry(m_kernel->deviceStatus(), QStringLiteral("1-1"));
    QCOMPARE(entry.value(QLatin1String("driver")).toString(), QStringLiteral("usbip-host"));
    QCOMPARE(entry.value(QLatin1String("usbip_status")).toInt(), 2);

    // The kernel's stream from here on: GET_DESCRIPTOR(DEVICE) on ep0.
    usbip::UrbHeader submit;
    submit.command = usbip::UrbCommand::CmdSubmit;
    submit.sequence = 1;
    submit.deviceId = record.deviceId();
    submit.direction = usbip::kDirectionIn;
    submit.length = 18;
    submit.setup = { 0x80, 0x06, 0x00, 0x01, 0x00, 0x00, 18, 0x00 };
    reply.clear();
    const QMetaObject::Connection reading = QObject::connect(
        &socket, &QTcpSocket::readyRead, &socket, [&] { reply += socket.readAll(); });
    const auto stopReading = qScopeGuard([&] { QObject::disconnect(reading); });
    socket.write(usbip::encodeUrbHeader(submit));
    QTRY_VERIFY(reply.size() >= usbip::kUrbHeaderSize + 18);
    auto answer = usbip::decodeUrbHeader(QByteArrayView(reply).first(usbip::kUrbHeaderSize));
    QVERIFY(answer);
    QCOMPARE(answer->command, usbip::UrbCommand::RetSubmit);
    QCOMPARE(answer->sequence, 1u);
    QCOMPARE(answer->status, 0);
    QCOMPARE(answer->length, 18);
    const QByteArray descriptor = reply.mid(usbip::kUrbHeaderSize, 18);
    QCOMPARE(quint8(descriptor[8]) | quint8(descriptor[9]) << 8, int(kVendor));
    QCOMPARE(quint8(descriptor[10]) | quint8(descriptor[11]) << 8, int(kProduct));

    // The consumer leaves: the device goes back to its own driver.
    socket.disconnectFromHost();
    QTRY_COMPARE(m_forwarder->endings.size(), 1);
    QTRY_COMPARE(deviceEntry(m_kernel->deviceStatus(), QStringLiteral("1-1"))
                     .value(QLatin1String("driver"))
                     .toString(),
        QStringLiteral("usb"));
    QCOMPARE(m_kernel->deviceStatus().value(QLatin1String("match_busid")).toArray().size(), 0);
}

void TestUsbipServer::aTestChannelImportsNothing()
{
    m_adapter->setMetadata({ { QStringLiteral("kind"), QStringLiteral("usb") },
        { QStringLiteral("purpose"), QStringLiteral("test") } });
    QTcpSocket socket;
    const QByteArray reply = ask(*usbip::encodeImportRequest("1-1"), usbip::kOpHeaderSize, socket);
    auto decoded = usbip::decodeImportReply(reply);
    QVERIFY(decoded && *decoded);
    QCOMPARE((*decoded)->message.status, quint32(usbip::OpStatus::NotAvailable));
    QTRY_COMPARE(m_forwarder->endings.size(), 1);
    QVERIFY2(m_forwarder->endings.first().contains(QLatin1String("imports nothing")),
        qPrintable(m_forwarder->endings.first()));
    QCOMPARE(deviceEntry(m_kernel->deviceStatus(), QStringLiteral("1-1"))
                 .value(QLatin1String("driver"))
                 .toString(),
        QStringLiteral("usb"));
    // Its device list is what a test reads.
    QTcpSocket lister;
    const QByteArray list
        = ask(usbip::encodeDevlistRequest(), 12 + usbip::kDeviceRecordSize + 8, lister);
    auto devices = usbip::decodeDevlistReply(list);
    QVERIFY(devices && *devices);
    QCOMPARE((*devices)->message.size(), 1);
    QCOMPARE((*devices)->message.first().interfaces.size(), 2);
}

void TestUsbipServer::unplugEndsTheImportAndAReplugIsCarriedAgain()
{
    {
        QTcpSocket socket;
        const QByteArray reply
            = ask(*usbip::encodeImportRequest("1-1"), usbip::kImportReplySize, socket);
        QVERIFY(reply.size() == usbip::kImportReplySize);
        QVERIFY(m_kernel->unplug(QStringLiteral("1-1")));
        QTRY_COMPARE(socket.state(), QAbstractSocket::UnconnectedState);
        QTRY_COMPARE(m_forwarder->endings.size(), 1);
        QCOMPARE(m_forwarder->endings.first(), QStringLiteral("the USB device was unplugged"));
    }
    // While it is gone an import is refused with that reason.
    QTRY_COMPARE(m_watch->busId(), QString());
    {
        QTcpSocket socket;
        const QByteArray reply
            = ask(*usbip::encodeImportRequest("1-1"), usbip::kOpHeaderSize, socket);
        QCOMPARE(usbip::decodeImportReply(reply).value()->message.status,
            quint32(usbip::OpStatus::NoDevice));
        QTRY_COMPARE(m_forwarder->endings.size(), 2);
        QVERIFY2(m_forwarder->endings.at(1).contains(QLatin1String("is unplugged")),
            qPrintable(m_forwarder->endings.at(1)));
    }
    // Plugged in again (a new device number): carried again.
    QVERIFY(m_kernel->plug(QStringLiteral("1-1")));
    QTRY_COMPARE(m_watch->busId(), QStringLiteral("1-1"));
    QTcpSocket socket;
    const QByteArray reply
        = ask(*usbip::encodeImportRequest("1-1"), usbip::kImportReplySize, socket);
    auto decoded = usbip::decodeImportReply(reply);
    QVERIFY(decoded && *decoded);
    QCOMPARE((*decoded)->message.status, 0u);
    QCOMPARE(deviceEntry(m_kernel->deviceStatus(), QStringLiteral("1-1"))
                 .value(QLatin1String("usbip_status"))
                 .toInt(),
        2);
    QCOMPARE((*decoded)->message.device->deviceNumber,
        quint32(deviceEntry(m_kernel->deviceStatus(), QStringLiteral("1-1"))
                    .value(QLatin1String("devnum"))
                    .toInt()));
}

void TestUsbipServer::aKernelRefusalIsAnsweredAndLeavesTheDeviceAsItWas()
{
    // usbip-host's match table is full (16 entries, other exporters'): the
    // kernel refuses the bus id, and the consumer hears so on the wire.
    for (int i = 0; i < 16; ++i)
        QVERIFY(m_kernel->write(u"/sys/bus/usb/drivers/usbip-host/match_busid",
            QStringLiteral("add 9-%1").arg(i + 1).toLatin1()));
    QTcpSocket socket;
    const QByteArray reply = ask(*usbip::encodeImportRequest("1-1"), usbip::kOpHeaderSize, socket);
    auto decoded = usbip::decodeImportReply(reply);
    QVERIFY(decoded && *decoded);
    QCOMPARE((*decoded)->message.status, quint32(usbip::OpStatus::DeviceError));
    QTRY_COMPARE(m_forwarder->endings.size(), 1);
    QVERIFY2(m_forwarder->endings.first().contains(QLatin1String("Cannot allocate memory")),
        qPrintable(m_forwarder->endings.first()));
    // Back on its own driver, and none of the 16 entries touched.
    const QJsonObject status = m_kernel->deviceStatus();
    QCOMPARE(deviceEntry(status, QStringLiteral("1-1")).value(QLatin1String("driver")).toString(),
        QStringLiteral("usb"));
    QCOMPARE(status.value(QLatin1String("match_busid")).toArray().size(), 16);
    QVERIFY(!status.value(QLatin1String("match_busid")).toArray().contains(QStringLiteral("1-1")));
}

void TestUsbipServer::anExportIsRecordedWhileItLasts()
{
    QTemporaryDir state;
    UsbExportLedger ledger(state.path());
    m_forwarder->exports = &ledger;
    QTcpSocket socket;
    const QByteArray reply
        = ask(*usbip::encodeImportRequest("1-1"), usbip::kImportReplySize, socket);
    QCOMPARE(reply.size(), usbip::kImportReplySize);
    QCOMPARE(ledger.busIds(), QStringList { QStringLiteral("1-1") });
    QCOMPARE(UsbExportLedger(state.path()).busIds(),
        QStringList { QStringLiteral("1-1") }); // on disk too
    socket.disconnectFromHost();
    QTRY_COMPARE(m_forwarder->endings.size(), 1);
    QCOMPARE(ledger.busIds(), QStringList());
    QCOMPARE(UsbExportLedger(state.path()).busIds(), QStringList());
    m_forwarder->exports = nullptr;
}

void TestUsbipServer::aRestartGivesBackOnlyWhatItsPredecessorLeft()
{
    // Another device on usbip-host that a usbipd of this machine exports.
    FixtureDevice other;
    other.busId = QStringLiteral("1-2");
    other.deviceNumber = 9;
    QVERIFY(UsbFixture::addDevice(roots(), other));
    // A forwarder died mid-import: 1-1 stayed on usbip-host, recorded.
    for (const QString &busId : { QStringLiteral("1-1"), QStringLiteral("1-2") }) {
        QVERIFY(m_kernel->write(u"/sys/bus/usb/drivers/usb/unbind", busId.toLatin1()));
        QVERIFY(m_kernel->write(
            u"/sys/bus/usb/drivers/usbip-host/match_busid", "add " + busId.toLatin1()));
        QVERIFY(m_kernel->write(u"/sys/bus/usb/drivers/usbip-host/bind", busId.toLatin1()));
    }
    QTemporaryDir state;
    // What is not a bus id in the file never reaches a sysfs path.
    QVERIFY(UsbFixture::writeFile(state.path() + QStringLiteral("/usb-exports.json"),
        R"({"bus_ids": ["../../../sys/x", "1-1:1.0", 7, "1-1"]})"));
    UsbExportLedger restarted(state.path());
    QCOMPARE(restarted.busIds(), QStringList { QStringLiteral("1-1") });
    const UsbExportLedger::Recovery recovery = restarted.giveBackLeftovers(roots());
    QCOMPARE(recovery.givenBack, QStringList { QStringLiteral("1-1") });
    QVERIFY2(recovery.leftAlone.isEmpty(), qPrintable(recovery.leftAlone.join(QLatin1Char('\n'))));
    const QJsonObject status = m_kernel->deviceStatus();
    QCOMPARE(deviceEntry(status, QStringLiteral("1-1")).value(QLatin1String("driver")).toString(),
        QStringLiteral("usb"));
    QCOMPARE(deviceEntry(status, QStringLiteral("1-2")).value(QLatin1String("driver")).toString(),
        QStringLiteral("usbip-host"));
    QCOMPARE(UsbExportLedger(state.path()).busIds(), QStringList());
}

void TestUsbipServer::malformedRequestsAreRefused_data()
{
    QTest::addColumn<QByteArray>("request");
    QTest::addColumn<QString>("reason");
    QByteArray badVersion = usbip::encodeDevlistRequest();
    badVersion[1] = 0x06;
    QTest::newRow("wrong version") << badVersion << QStringLiteral("version");
    QByteArray unknownCode = usbip::encodeDevlistRequest();
    unknownCode[3] = 0x06;
    QTest::newRow("unknown request") << unknownCode << QStringLiteral("unexpected code");
    QByteArray noNul = *usbip::encodeImportRequest("1-1");
    noNul.replace(8, 32, QByteArray(32, '1'));
    QTest::newRow("bus id without NUL") << noNul << QStringLiteral("NUL");
    QTest::newRow("bytes after the request")
        << usbip::encodeDevlistRequest() + QByteArray(4, '\0') << QStringLiteral("bytes followed");
}

void TestUsbipServer::malformedRequestsAreRefused()
{
    QFETCH(QByteArray, request);
    QFETCH(QString, reason);
    QTcpSocket socket;
    const QByteArray reply = ask(request, 1, socket);
    QTRY_COMPARE(socket.state(), QAbstractSocket::UnconnectedState);
    QCOMPARE(reply, QByteArray());
    QTRY_COMPARE(m_forwarder->endings.size(), 1);
    QVERIFY2(
        m_forwarder->endings.first().contains(reason), qPrintable(m_forwarder->endings.first()));
    QCOMPARE(deviceEntry(m_kernel->deviceStatus(), QStringLiteral("1-1"))
                 .value(QLatin1String("driver"))
                 .toString(),
        QStringLiteral("usb"));
}

QTEST_GUILESS_MAIN(TestUsbipServer)
#include "tst_usbipserver.moc"
