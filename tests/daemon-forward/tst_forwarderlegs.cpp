// A forwarder's legs (protocol 32): the whole ForwarderDaemon, carrying a
// USB device of a fixture machine whose kernel is the in-process stand-in,
// against an in-process fake hub on 127.0.0.1 (TLS with a development
// certificate the forwarder pins). The hub opens a run's opening with a
// "leg" on the forwarder's session and the stream itself on the leg the
// forwarder dials.

#include "common/crypto/secrets.h"
#include "common/device/sysfsroot.h"
#include "common/device/usb/usbipprotocol.h"
#include "common/identity/credentialfile.h"
#include "common/net/qtmessagesocket.h"
#include "common/protocol/channelopen.h"
#include "common/tunnel/channelmultiplexer.h"
#include "common/tunnel/tunnelconnection.h"
#include "common/tunneltestsupport.h"
#include "daemon-forward/forwarderdaemon.h"
#include "support/usbstandin/usbfixture.h"
#include "support/usbstandin/usbkernelstandin.h"

#include <QDir>
#include <QJsonArray>
#include <QPointer>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QWebSocket>

#include <memory>
#include <vector>

using namespace cloop;
using cloop::device::SysfsRoot;
using cloop::testsupport::ChannelEnding;
using cloop::testsupport::FakeHub;
using namespace cloop::testsupport::usb;
using protocol::CloseCode;
using tunnel::Channel;
using tunnel::ChannelMultiplexer;
using tunnel::TunnelConnection;
namespace usbip = cloop::device::usb::usbip;

namespace {

constexpr int kEventTimeoutMs = 5000;
constexpr qint64 kRunId = 5;
constexpr qint64 kBindingId = 7;

QString ticket()
{
    return QString(43, u'f');
}

protocol::UsbOpen usbOpen(bool withLeg)
{
    protocol::UsbOpen open;
    open.runId = kRunId;
    open.bindingId = kBindingId;
    if (withLeg)
        open.leg = protocol::DirectLeg { QString(), ticket() };
    return open;
}

QString driverOf(const UsbKernelStandIn &kernel, const QString &busId)
{
    for (const QJsonValue &device : kernel.deviceStatus().value(QLatin1String("devices")).toArray())
        if (device.toObject().value(QLatin1String("busid")).toString() == busId)
            return device.toObject().value(QLatin1String("driver")).toString();
    return {};
}

} // namespace

class TestForwarderLegs final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void aRunsUsbStreamComesOnTheForwardersLeg();
    void theHandleClosingBeforeTheStreamLendsNothing();
    void aStreamNamingAnotherDeviceIsRefusedWithItsHandle();
    void aSegmentLegToAUsbForwarderIsRefusedWithoutDialling();

private:
    // The hub's end of a channel it opened on the session, or null.
    Channel *openOnSession(const protocol::ChannelOpen &open);
    // The hub's end of a channel it opened on the newest leg, or null.
    Channel *openOnLeg(const protocol::ChannelOpen &open);

    QTemporaryDir m_dir;
    std::optional<hub::TlsIdentity> m_identity;
    std::unique_ptr<QTemporaryDir> m_root;
    std::unique_ptr<UsbKernelStandIn> m_kernel;
    std::unique_ptr<FakeHub> m_hub;
    std::unique_ptr<TunnelConnection> m_session; // the hub's end
    std::vector<std::unique_ptr<TunnelConnection>> m_legs; // the hub's ends
    QList<protocol::Hello> m_legHellos;
    std::unique_ptr<forward::ForwarderDaemon> m_forwarder;
    QString m_credential;
};

void TestForwarderLegs::initTestCase()
{
    QStandardPaths::setTestModeEnabled(true);
    QVERIFY(m_dir.isValid());
    auto identity = testsupport::makeDevIdentity(m_dir.path(), QStringLiteral("hub"),
        { QStringLiteral("127.0.0.1"), QStringLiteral("localhost") });
    QVERIFY2(identity, qPrintable(identity.ok() ? QString() : identity.error().message));
    m_identity = *identity;
}

void TestForwarderLegs::init()
{
    // The forwarder's machine with the carried device at 1-1.
    m_root = std::make_unique<QTemporaryDir>();
    QVERIFY(m_root->isValid());
    FixtureDevice carried;
    carried.busId = QStringLiteral("1-1");
    carried.vendorId = 0x1d50;
    carried.productId = 0x6089;
    QVERIFY(UsbFixture::makeForwarderMachine(m_root->path(), { carried }));
    m_kernel = std::make_unique<UsbKernelStandIn>(SysfsRoot(m_root->path()));
    const auto spec = protocol::DeviceSpec::parseUsb(QStringLiteral("1d50:6089"));
    QVERIFY(spec);

    // The hub welcomes the session and every leg, and opens channels on each.
    m_hub = std::make_unique<FakeHub>();
    QVERIFY(m_hub->listenSecure(*m_identity));
    m_legs.clear();
    m_legHellos.clear();
    m_hub->setResponder([this, spec = *spec](FakeHub &hub, int connection, QWebSocket *socket,
                            const protocol::ControlMessage &message) {
        const auto *hello = std::get_if<protocol::Hello>(&message);
        if (!hello)
            return;
        protocol::Welcome welcome = FakeHub::welcome();
        welcome.device = spec;
        hub.send(socket, welcome);
        auto connectionEnd = std::make_unique<TunnelConnection>(
            new net::QtMessageSocket(socket), ChannelMultiplexer::Side::Hub);
        if (hub.requestPath(connection) == QString(protocol::kForwarderLegPath)) {
            m_legHellos.append(*hello);
            m_legs.push_back(std::move(connectionEnd));
        } else {
            m_session = std::move(connectionEnd);
        }
    });

    // A forwarder enrolled there for that device.
    const QString home = m_dir.filePath(QString::fromLatin1(QTest::currentTestFunction()));
    QVERIFY(QDir().mkpath(home));
    identity::DaemonCredential enrolled;
    enrolled.setServers({ m_hub->url() });
    enrolled.id = 42;
    enrolled.name = QStringLiteral("bench-forwarder");
    enrolled.credential = secrets::generate(secrets::SecretKind::ForwarderCredential);
    enrolled.pin = m_identity->pin;
    enrolled.enrolledAt = QDateTime::currentDateTimeUtc();
    enrolled.device = *spec;
    m_credential = enrolled.credential;
    const QString credentialPath = home + QStringLiteral("/forwarder.json");
    QVERIFY(identity::CredentialFile(credentialPath).save(enrolled).ok());
    daemon::ConnectionOptions connection;
    connection.credentialPath = credentialPath;
    daemon::UpgradeResponder::Options upgrade;
    upgrade.program = QStringLiteral("cloop forward");
    upgrade.spoolFolder = home + QStringLiteral("/upgrade");
    upgrade.installedVersion = QStringLiteral("0.4.0");
    m_forwarder = std::make_unique<forward::ForwarderDaemon>(
        connection, SysfsRoot(m_root->path()).withStandIn(m_kernel.get()), upgrade);
    const Status prepared = m_forwarder->prepare();
    QVERIFY2(prepared.ok(), qPrintable(prepared.ok() ? QString() : prepared.error().message));
    m_forwarder->start();
    QTRY_VERIFY_WITH_TIMEOUT(m_session, kEventTimeoutMs);
    // Its device state says it found the device.
    QTRY_VERIFY_WITH_TIMEOUT(
        m_hub->allTexts().join(QString()).contains(QStringLiteral("1-1")), kEventTimeoutMs);
}

void TestForwarderLegs::cleanup()
{
    if (m_forwarder)
        m_forwarder->stop();
    m_forwarder.reset();
    m_legs.clear();
    m_session.reset();
    m_hub.reset();
    m_kernel.reset();
    m_root.reset();
}

Channel *TestForwarderLegs::openOnSession(const protocol::ChannelOpen &open)
{
    auto opened = m_session->channels()->openChannel(open);
    return opened ? *opened : nullptr;
}

Channel *TestForwarderLegs::openOnLeg(const protocol::ChannelOpen &open)
{
    if (m_legs.empty())
        return nullptr;
    auto opened = m_legs.back()->channels()->openChannel(open);
    return opened ? *opened : nullptr;
}

void TestForwarderLegs::aRunsUsbStreamComesOnTheForwardersLeg()
{
    // Given a run's USB opening with a leg to this hub on the session,
    QPointer<Channel> handle = openOnSession(usbOpen(true));
    QVERIFY(handle);
    QSignalSpy handleOpened(handle.data(), &Channel::opened);
    ChannelEnding handleEnding(handle);

    // when the forwarder takes it and comes on its leg,
    QVERIFY(handleOpened.wait(kEventTimeoutMs));
    QTRY_COMPARE_WITH_TIMEOUT(m_legs.size(), std::size_t(1), kEventTimeoutMs);

    // then the leg is the forwarders', with its credential and the ticket,
    QCOMPARE(m_legHellos.size(), 1);
    QCOMPARE(m_legHellos.first().role, protocol::PeerRole::Forwarder);
    QCOMPARE(m_legHellos.first().credential, m_credential);
    QCOMPARE(m_legHellos.first().streamTicket, ticket());
    QVERIFY(m_legHellos.first().channel.isEmpty());
    // and the stream the hub opens there is a run's USB/IP connection: the
    // import lends the device,
    QPointer<Channel> stream = openOnLeg(usbOpen(false));
    QVERIFY(stream);
    QSignalSpy streamOpened(stream.data(), &Channel::opened);
    QVERIFY(streamOpened.wait(kEventTimeoutMs));
    QByteArray reply;
    connect(stream.data(), &Channel::readyRead, stream.data(),
        [&reply, stream] { reply += stream->readAll(); });
    QVERIFY(stream->write(*usbip::encodeImportRequest("1-1")));
    QTRY_VERIFY_WITH_TIMEOUT(reply.size() >= usbip::kImportReplySize, kEventTimeoutMs);
    const auto decoded = usbip::decodeImportReply(reply);
    QVERIFY2(decoded && *decoded, reply.toHex().constData());
    QCOMPARE((*decoded)->message.status, 0u);
    QCOMPARE(driverOf(*m_kernel, QStringLiteral("1-1")), QStringLiteral("usbip-host"));
    QVERIFY(!handleEnding.seen);

    // and when the hub closes the handle, the stream ends with its reason
    // and the device goes back to its driver.
    ChannelEnding streamEnding(stream);
    handle->close(CloseCode::Normal, QStringLiteral("the run ended"));
    QTRY_VERIFY_WITH_TIMEOUT(streamEnding.seen, kEventTimeoutMs);
    QCOMPARE(streamEnding.reason, QStringLiteral("the run ended"));
    QTRY_COMPARE_WITH_TIMEOUT(
        driverOf(*m_kernel, QStringLiteral("1-1")), QStringLiteral("usb"), kEventTimeoutMs);
}

void TestForwarderLegs::theHandleClosingBeforeTheStreamLendsNothing()
{
    // Given a leg that is up with no stream on it yet,
    QPointer<Channel> handle = openOnSession(usbOpen(true));
    QVERIFY(handle);
    QTRY_COMPARE_WITH_TIMEOUT(m_legs.size(), std::size_t(1), kEventTimeoutMs);
    QPointer<TunnelConnection> leg = m_legs.back().get();
    QSignalSpy legGone(leg.data(), &TunnelConnection::disconnected);

    // when the hub takes the device back,
    handle->close(CloseCode::Normal, QStringLiteral("the binding ended"));

    // then the leg closes and the device stays with its driver.
    QVERIFY(legGone.wait(kEventTimeoutMs));
    QCOMPARE(driverOf(*m_kernel, QStringLiteral("1-1")), QStringLiteral("usb"));
    QCOMPARE(m_legs.size(), std::size_t(1));
}

void TestForwarderLegs::aStreamNamingAnotherDeviceIsRefusedWithItsHandle()
{
    // Given a leg that is up,
    QPointer<Channel> handle = openOnSession(usbOpen(true));
    QVERIFY(handle);
    ChannelEnding handleEnding(handle);
    QTRY_COMPARE_WITH_TIMEOUT(m_legs.size(), std::size_t(1), kEventTimeoutMs);

    // when the stream that comes there names another bus id,
    protocol::UsbOpen other = usbOpen(false);
    other.names.busId = QStringLiteral("1-2");
    QPointer<Channel> stream = openOnLeg(other);
    QVERIFY(stream);
    ChannelEnding streamEnding(stream);

    // then it is refused as on the session, and the handle closes with it.
    QTRY_VERIFY_WITH_TIMEOUT(streamEnding.seen, kEventTimeoutMs);
    QCOMPARE(streamEnding.code, CloseCode::Refused);
    QVERIFY2(streamEnding.reason.contains(QStringLiteral("1-2")), qPrintable(streamEnding.reason));
    QTRY_VERIFY_WITH_TIMEOUT(handleEnding.seen, kEventTimeoutMs);
    QCOMPARE(handleEnding.code, CloseCode::Refused);
    QCOMPARE(handleEnding.reason, streamEnding.reason);
    QVERIFY(!handleEnding.reason.startsWith(protocol::kDirectLegUnreachable));
    QCOMPARE(driverOf(*m_kernel, QStringLiteral("1-1")), QStringLiteral("usb"));
}

void TestForwarderLegs::aSegmentLegToAUsbForwarderIsRefusedWithoutDialling()
{
    // When a segment's opening with a leg comes to this USB forwarder,
    protocol::SegmentOpen segment;
    segment.runId = kRunId;
    segment.bindingId = kBindingId;
    segment.leg = protocol::DirectLeg { QString(), ticket() };
    QPointer<Channel> handle = openOnSession(segment);
    QVERIFY(handle);
    ChannelEnding handleEnding(handle);

    // then it is refused as without a leg, and no leg is dialled.
    QTRY_VERIFY_WITH_TIMEOUT(handleEnding.seen, kEventTimeoutMs);
    QCOMPARE(handleEnding.code, CloseCode::Refused);
    QCOMPARE(
        handleEnding.reason, QStringLiteral("this forwarder carries a USB device, not a segment"));
    QTest::qWait(300);
    QCOMPARE(m_hub->connectionCount(), 1);
}

QTEST_GUILESS_MAIN(TestForwarderLegs)
#include "tst_forwarderlegs.moc"
