// End to end, as root, in a network namespace of this test's own: a
// forwarder carries the one device it was enrolled for, whoever asks. A
// real hub enrolls the real cloop-forward for one interface (or one USB
// device, over the kernel stand-in's fixture machine); then the hub stops
// and an impostor takes its port with the hub's own TLS key, so the
// forwarder's pin passes, and names another device in its welcome or in a
// channel. The forwarder refuses before any socket is opened on the other
// device: it holds no AF_PACKET socket (its fds against /proc/net/packet),
// and the stand-in's device stays on its own driver (no usbip-host bind).
// Skipped, saying why, without root.

#include "common/device/usb/usbipprotocol.h"
#include "common/tunnel/channelmultiplexer.h"
#include "support/impostorhub.h"
#include "support/labnetwork.h"
#include "support/testrig.h"
#include "support/usbstandin/usbfixture.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>

#include <net/if.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace cloop;
using namespace cloop::testing;
using namespace cloop::testsupport::usb;

namespace {

const QString kMine = QStringLiteral("cl-mine");
const QString kOther = QStringLiteral("cl-other");
const QString kKey = QStringLiteral("1d50:6089:HSM0001");
const QString kOtherUsb = QStringLiteral("1050:0407");

CliResult ip(const QStringList &arguments)
{
    return runProgram(
        QStringLiteral("ip"), arguments, QProcessEnvironment::systemEnvironment(), 10'000);
}

// In this process's namespace (/sys/class/net shows the one sysfs was mounted in).
int ifindexOf(const QString &name)
{
    return int(::if_nametoindex(name.toLatin1().constData()));
}

// The interface index of every AF_PACKET socket process `pid` holds: the
// socket inodes among its fds, looked up in this namespace's packet table.
QList<int> packetSocketsOf(qint64 pid)
{
    QSet<QString> held;
    const QString fds = QStringLiteral("/proc/%1/fd").arg(pid);
    for (const QString &fd :
        QDir(fds).entryList(QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot)) {
        char target[64] = {};
        const QByteArray path = QFile::encodeName(fds + QLatin1Char('/') + fd);
        const ssize_t length = ::readlink(path.constData(), target, sizeof target - 1);
        const QByteArray link(target, length > 0 ? int(length) : 0);
        if (link.startsWith("socket:[") && link.endsWith(']'))
            held.insert(QString::fromLatin1(link.mid(8).chopped(1)));
    }
    QList<int> interfaces;
    QFile table(QStringLiteral("/proc/net/packet"));
    if (!table.open(QIODevice::ReadOnly))
        return interfaces;
    const QList<QByteArray> lines = table.readAll().split('\n');
    for (qsizetype i = 1; i < lines.size(); ++i) {
        // sk RefCnt Type Proto Iface R Rmem User Inode
        const QList<QByteArray> fields = lines.at(i).simplified().split(' ');
        if (fields.size() >= 9 && held.contains(QString::fromLatin1(fields.at(8))))
            interfaces.append(fields.at(4).toInt());
    }
    return interfaces;
}

QJsonObject readJson(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(file.readAll()).object()
                                          : QJsonObject();
}

int modeOf(const QString &path)
{
    struct stat st
    {
    };
    return ::stat(QFile::encodeName(path).constData(), &st) == 0 ? int(st.st_mode & 07777) : -1;
}

bool writePrivateFile(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate,
            QFileDevice::ReadOwner | QFileDevice::WriteOwner))
        return false;
    return file.write(bytes) == bytes.size();
}

// How a channel the impostor opened ended, once it has.
struct ChannelOutcome
{
    bool opened = false;
    bool closed = false;
    protocol::CloseCode code = protocol::CloseCode::Normal;
    QString reason;
    QByteArray received;
    // What is watched stops reaching this once it goes (channels outlive
    // the test function when the impostor closes them in cleanup()).
    QObject alive;
};

void watch(tunnel::Channel *channel, ChannelOutcome &outcome)
{
    QObject::connect(
        channel, &tunnel::Channel::opened, &outcome.alive, [&outcome] { outcome.opened = true; });
    QObject::connect(channel, &tunnel::Channel::readyRead, &outcome.alive,
        [channel, &outcome] { outcome.received += channel->readAll(); });
    QObject::connect(channel, &tunnel::Channel::closed, &outcome.alive,
        [&outcome](protocol::CloseCode code, const QString &reason) {
            outcome.closed = true;
            outcome.code = code;
            outcome.reason = reason;
        });
}

} // namespace

class TestImpostorHub final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void cleanupTestCase();
    void init();
    void cleanup();

    void aWelcomeNamingAnotherInterfaceIsRefusedBeforeAnySocket();
    void aChannelNamingAnotherInterfaceIsRefusedAndOpensNothing();
    void anOldCredentialIsUpgradedOnceFromTheFirstWelcome();
    void aWelcomeNamingAnotherUsbDeviceIsRefusedWithoutABind();
    void anImportOfAnotherUsbDeviceIsRefusedWithoutABind();

private:
    // Enrolls a forwarder with the real hub for `device`, redeems it through
    // a 0600 token file, waits for the connection and stops it again: its
    // credential file, or empty (the test has failed).
    QString enrollAndStop(const QStringList &device);
    // A forwarder machine with two USB devices (the key at 1-1, another at
    // 1-2) and a forwarder enrolled for the key, as enrollAndStop().
    QString enrollForTheKey();
    // An import of `busId` on a new usb channel of run `runId`.
    tunnel::Channel *askToImport(const QString &busId, qint64 runId, ChannelOutcome &outcome);
    // The real hub stops and the impostor takes its port with its key.
    bool becomeTheImpostor(const std::optional<protocol::DeviceSpec> &welcomeDevice);
    ForwarderProcess &startForwarder(const QString &credentialFile);
    ForwarderProcess::Program program() const;

    std::unique_ptr<TestRig> m_rig;
    std::unique_ptr<ImpostorHub> m_impostor;
    std::unique_ptr<QTemporaryDir> m_usbRoot; // the USB tests' fixture machine
    bool m_interfaces = false;
};

void TestImpostorHub::initTestCase()
{
    if (const QString why = enterPrivateNetwork(); !why.isEmpty())
        QSKIP(qPrintable(why));
    // Two interfaces nobody else sees: the one enrolled and another.
    for (const QString &name : { kMine, kOther }) {
        CLOOP_COMPARE_EXIT(
            ip({ QStringLiteral("link"), QStringLiteral("add"), name, QStringLiteral("type"),
                QStringLiteral("veth"), QStringLiteral("peer"), QStringLiteral("name"),
                name + QLatin1String("-p") }),
            0);
        CLOOP_COMPARE_EXIT(
            ip({ QStringLiteral("link"), QStringLiteral("set"), name, QStringLiteral("up") }), 0);
    }
    m_interfaces = true;
}

void TestImpostorHub::cleanupTestCase()
{
    if (!m_interfaces)
        return;
    for (const QString &name : { kMine, kOther })
        ip({ QStringLiteral("link"), QStringLiteral("delete"), name });
}

void TestImpostorHub::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
    m_impostor = std::make_unique<ImpostorHub>();
}

void TestImpostorHub::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
    m_impostor.reset();
    m_usbRoot.reset();
}

ForwarderProcess::Program TestImpostorHub::program() const
{
    return m_usbRoot ? ForwarderProcess::Program::ForwarderUsbStandIn
                     : ForwarderProcess::Program::Standalone;
}

ForwarderProcess &TestImpostorHub::startForwarder(const QString &credentialFile)
{
    ForwarderProcess &forwarder = m_rig->addForwarder(
        { QStringLiteral("--credential-file"), credentialFile }, {}, program());
    if (m_usbRoot) {
        forwarder.setEnvironmentVariable(
            QStringLiteral("CLOOP_USB_STANDIN"), QStringLiteral("forwarder"));
        forwarder.setEnvironmentVariable(QStringLiteral("CLOOP_SYSFS_ROOT"), m_usbRoot->path());
    }
    forwarder.start();
    return forwarder;
}

QString TestImpostorHub::enrollAndStop(const QStringList &device)
{
    HubProcess &hub = m_rig->hub();
    const Enrollment enrollment = hub.enroll(QStringLiteral("bench"), device);
    if (!enrollment.ok) {
        qWarning().noquote() << "enrollment failed:" << enrollment.error;
        return {};
    }
    const QString tokenFile = m_rig->path(QStringLiteral("bundle"));
    const QString credentialFile = m_rig->path(QStringLiteral("forwarder.json"));
    if (!writePrivateFile(tokenFile, enrollment.bundle.toLatin1() + '\n'))
        return {};
    ForwarderProcess &forwarder
        = m_rig->addForwarder({ QStringLiteral("--token-file"), tokenFile,
                                  QStringLiteral("--credential-file"), credentialFile },
            {}, program());
    if (m_usbRoot) {
        forwarder.setEnvironmentVariable(
            QStringLiteral("CLOOP_USB_STANDIN"), QStringLiteral("forwarder"));
        forwarder.setEnvironmentVariable(QStringLiteral("CLOOP_SYSFS_ROOT"), m_usbRoot->path());
    }
    if (!m_rig->startAndAwaitConnection(forwarder, enrollment.id)) {
        qWarning().noquote() << m_rig->lastError();
        return {};
    }
    // The redemption recorded the device; the token file is gone.
    if (!forwarder.waitForStderr(QStringLiteral("enrolled for"))) {
        qWarning().noquote() << "no record of the device:" << forwarder.describe();
        return {};
    }
    if (QFile::exists(tokenFile)) {
        qWarning().noquote() << "the redeemed token file is still there";
        return {};
    }
    forwarder.terminate();
    if (!forwarder.waitForExit() || forwarder.exitCode() != 0) {
        qWarning().noquote() << "the forwarder did not stop:" << forwarder.describe();
        return {};
    }
    return credentialFile;
}

QString TestImpostorHub::enrollForTheKey()
{
    m_usbRoot = std::make_unique<QTemporaryDir>();
    FixtureDevice key;
    key.busId = QStringLiteral("1-1");
    key.vendorId = 0x1d50;
    key.productId = 0x6089;
    key.serial = QStringLiteral("HSM0001");
    FixtureDevice other;
    other.busId = QStringLiteral("1-2");
    other.vendorId = 0x1050;
    other.productId = 0x0407;
    if (Status made = UsbFixture::makeForwarderMachine(m_usbRoot->path(), { key, other }); !made) {
        qWarning().noquote() << made.error().message;
        return {};
    }
    return enrollAndStop({ QStringLiteral("--usb"), kKey });
}

tunnel::Channel *TestImpostorHub::askToImport(
    const QString &busId, qint64 runId, ChannelOutcome &outcome)
{
    tunnel::Channel *channel
        = m_impostor->openChannel({ { QStringLiteral("kind"), QStringLiteral("usb") },
            { QStringLiteral("run_id"), runId }, { QStringLiteral("binding_id"), 1 } });
    if (channel) {
        watch(channel, outcome);
        channel->write(*device::usb::usbip::encodeImportRequest(busId.toLatin1()));
    }
    return channel;
}

bool TestImpostorHub::becomeTheImpostor(const std::optional<protocol::DeviceSpec> &welcomeDevice)
{
    HubProcess &hub = m_rig->hub();
    const quint16 port = hub.port();
    if (hub.stop() != 0) {
        qWarning().noquote() << "the hub did not stop";
        return false;
    }
    m_impostor->setWelcomeDevice(welcomeDevice);
    if (!m_impostor->listen(hub.dataDir() + QLatin1String("/tls"), port)) {
        qWarning().noquote() << m_impostor->lastError();
        return false;
    }
    return true;
}

void TestImpostorHub::aWelcomeNamingAnotherInterfaceIsRefusedBeforeAnySocket()
{
    // Given a forwarder enrolled for cl-mine, which its credential records,
    const QString credentialFile = enrollAndStop({ QStringLiteral("--interface"), kMine });
    QVERIFY(!credentialFile.isEmpty());
    const QJsonObject saved = readJson(credentialFile);
    QCOMPARE(saved.value(QLatin1String("device")).toObject(),
        (QJsonObject { { QStringLiteral("kind"), QStringLiteral("l2") },
            { QStringLiteral("interface"), kMine } }));
    QCOMPARE(modeOf(credentialFile), 0600);

    // when a hub holding the hub's key welcomes it as the carrier of
    // cl-other and at once opens a run's stream, as a hub does,
    QVERIFY(becomeTheImpostor(*protocol::DeviceSpec::parseInterface(kOther)));
    ChannelOutcome stream;
    connect(m_impostor.get(), &ImpostorHub::welcomed, &stream.alive, [&] {
        if (tunnel::Channel *channel
            = m_impostor->openChannel({ { QStringLiteral("kind"), QStringLiteral("segment") },
                { QStringLiteral("run_id"), 1 }, { QStringLiteral("binding_id"), 1 } }))
            watch(channel, stream);
    });
    ForwarderProcess &forwarder = startForwarder(credentialFile);
    QList<int> socketsSeen;
    waitUntil(
        [&] {
            if (const qint64 pid = forwarder.processId(); pid > 0)
                socketsSeen += packetSocketsOf(pid);
            return forwarder.hasExited() || !socketsSeen.isEmpty();
        },
        kLongWaitMs);

    // then it refuses for good, naming both devices and the file, and opens
    // nothing: no packet socket at any moment, no stream, no retry.
    QVERIFY2(socketsSeen.isEmpty(),
        qPrintable(QStringLiteral("the forwarder held an AF_PACKET socket on ifindex %1 "
                                  "(cl-other is %2)")
                       .arg(socketsSeen.value(0))
                       .arg(ifindexOf(kOther))));
    QVERIFY2(forwarder.exitCode() == 3, qPrintable(forwarder.describe()));
    const QString log = forwarder.stderrText();
    QVERIFY2(log.contains(QLatin1String("refusing the hub for good")), qPrintable(log));
    QVERIFY2(
        log.contains(QLatin1String("l2 cl-other")) && log.contains(QLatin1String("l2 cl-mine")),
        qPrintable(log));
    QVERIFY2(log.contains(credentialFile), qPrintable(log));
    QVERIFY2(!log.contains(QLatin1String("carrying l2 cl-other"))
            && !log.contains(QLatin1String("lending")),
        qPrintable(log));
    QCOMPARE(m_impostor->hellos(), 1);
    QVERIFY(!stream.opened);
    // Its record is as enrollment left it.
    QCOMPARE(readJson(credentialFile).value(QLatin1String("device")),
        saved.value(QLatin1String("device")));
}

void TestImpostorHub::aChannelNamingAnotherInterfaceIsRefusedAndOpensNothing()
{
    const QString credentialFile = enrollAndStop({ QStringLiteral("--interface"), kMine });
    QVERIFY(!credentialFile.isEmpty());
    // Given the impostor's welcome naming the enrolled interface,
    QVERIFY(becomeTheImpostor(*protocol::DeviceSpec::parseInterface(kMine)));
    ForwarderProcess &forwarder = startForwarder(credentialFile);
    QVERIFY2(forwarder.waitForStderr(QStringLiteral("connected to the hub as forwarder")),
        qPrintable(forwarder.describe()));
    QVERIFY(waitUntil([&] { return m_impostor->session() != nullptr; }));

    // when it opens a run's stream and a test naming cl-other,
    ChannelOutcome stream;
    ChannelOutcome test;
    tunnel::Channel *streamChannel = m_impostor->openChannel(
        { { QStringLiteral("kind"), QStringLiteral("segment") }, { QStringLiteral("run_id"), 1 },
            { QStringLiteral("binding_id"), 1 }, { QStringLiteral("interface"), kOther } });
    tunnel::Channel *testChannel
        = m_impostor->openChannel({ { QStringLiteral("kind"), QStringLiteral("device-test") },
            { QStringLiteral("interface"), kOther } });
    QVERIFY2(streamChannel && testChannel, qPrintable(m_impostor->lastError()));
    watch(streamChannel, stream);
    watch(testChannel, test);
    QVERIFY(waitUntil([&] { return stream.closed && test.closed; }));

    // then both are refused naming what it carries, no packet socket was
    // opened, and the forwarder carries on.
    for (const ChannelOutcome *outcome : { &stream, &test }) {
        QVERIFY(!outcome->opened);
        QCOMPARE(outcome->code, protocol::CloseCode::Refused);
        QVERIFY2(outcome->reason.contains(kOther)
                && outcome->reason.contains(QLatin1String("l2 cl-mine")),
            qPrintable(outcome->reason));
    }
    QVERIFY2(forwarder.stderrText().contains(QLatin1String("refused a segment channel")),
        qPrintable(forwarder.describe()));
    QVERIFY(forwarder.isRunning());
    QCOMPARE(packetSocketsOf(forwarder.processId()), QList<int> {});

    // And the count above can see a socket: a stream naming nothing gets
    // the enrolled interface, bound to cl-mine.
    ChannelOutcome plain;
    tunnel::Channel *plainChannel
        = m_impostor->openChannel({ { QStringLiteral("kind"), QStringLiteral("segment") },
            { QStringLiteral("run_id"), 2 }, { QStringLiteral("binding_id"), 1 } });
    QVERIFY(plainChannel);
    watch(plainChannel, plain);
    QVERIFY(waitUntil([&] { return plain.opened || plain.closed; }));
    QVERIFY2(plain.opened, qPrintable(plain.reason));
    QCOMPARE(packetSocketsOf(forwarder.processId()), QList<int> { ifindexOf(kMine) });
}

void TestImpostorHub::anOldCredentialIsUpgradedOnceFromTheFirstWelcome()
{
    const QString credentialFile = enrollAndStop({ QStringLiteral("--interface"), kMine });
    QVERIFY(!credentialFile.isEmpty());
    // Given the credential file as an older version wrote it, without the record,
    QJsonObject old = readJson(credentialFile);
    QVERIFY(old.contains(QLatin1String("device")));
    old.remove(QStringLiteral("device"));
    QVERIFY(QFile::remove(credentialFile));
    QVERIFY(writePrivateFile(credentialFile, QJsonDocument(old).toJson()));

    // when the forwarder reconnects to the real hub, then it records the
    // device of the first welcome, 0600, and says so,
    ForwarderProcess &first = startForwarder(credentialFile);
    QVERIFY2(first.waitForStderr(QStringLiteral("connected to the hub as forwarder")),
        qPrintable(first.describe()));
    QVERIFY2(first.stderrText().contains(QLatin1String("recorded no device")),
        qPrintable(first.describe()));
    QCOMPARE(readJson(credentialFile)
                 .value(QLatin1String("device"))
                 .toObject()
                 .value(QLatin1String("interface"))
                 .toString(),
        kMine);
    QCOMPARE(modeOf(credentialFile), 0600);
    QVERIFY(first.terminate());
    QVERIFY(first.waitForExit());

    // once: the next start has its record,
    ForwarderProcess &second = startForwarder(credentialFile);
    QVERIFY2(second.waitForStderr(QStringLiteral("connected to the hub as forwarder")),
        qPrintable(second.describe()));
    QVERIFY2(!second.stderrText().contains(QLatin1String("recorded no device")),
        qPrintable(second.describe()));
    QVERIFY(second.terminate());
    QVERIFY(second.waitForExit());

    // and holds to it when a hub names another interface.
    QVERIFY(becomeTheImpostor(*protocol::DeviceSpec::parseInterface(kOther)));
    ForwarderProcess &misled = startForwarder(credentialFile);
    QVERIFY(misled.waitForExit());
    QVERIFY2(misled.exitCode() == 3, qPrintable(misled.describe()));
    QVERIFY2(
        misled.stderrText().contains(QLatin1String("l2 cl-other")), qPrintable(misled.describe()));
}

void TestImpostorHub::aWelcomeNamingAnotherUsbDeviceIsRefusedWithoutABind()
{
    // Given a forwarder machine with two USB devices, and a forwarder
    // enrolled for the first,
    const QString credentialFile = enrollForTheKey();
    QVERIFY(!credentialFile.isEmpty());
    QCOMPARE(readJson(credentialFile)
                 .value(QLatin1String("device"))
                 .toObject()
                 .value(QLatin1String("product"))
                 .toString(),
        QStringLiteral("6089"));

    // when a hub holding the key welcomes it as the other device's carrier
    // and asks for an import at once,
    QVERIFY(becomeTheImpostor(*protocol::DeviceSpec::parseUsb(kOtherUsb)));
    ChannelOutcome import;
    connect(m_impostor.get(), &ImpostorHub::welcomed, &import.alive,
        [&] { askToImport(QStringLiteral("1-2"), 1, import); });
    ForwarderProcess &forwarder = startForwarder(credentialFile);
    QVERIFY(forwarder.waitForExit());

    // then it refuses for good and neither device left its driver.
    QVERIFY2(forwarder.exitCode() == 3, qPrintable(forwarder.describe()));
    QVERIFY2(forwarder.stderrText().contains(QLatin1String("usb 1050:0407"))
            && forwarder.stderrText().contains(QLatin1String("usb 1d50:6089:HSM0001")),
        qPrintable(forwarder.describe()));
    QVERIFY(!import.opened);
    const device::SysfsRoot roots(m_usbRoot->path());
    QCOMPARE(UsbFixture::driverOf(roots, QStringLiteral("1-2")), QStringLiteral("usb"));
    QCOMPARE(UsbFixture::driverOf(roots, QStringLiteral("1-1")), QStringLiteral("usb"));
}

void TestImpostorHub::anImportOfAnotherUsbDeviceIsRefusedWithoutABind()
{
    const QString credentialFile = enrollForTheKey();
    QVERIFY(!credentialFile.isEmpty());
    QVERIFY(becomeTheImpostor(*protocol::DeviceSpec::parseUsb(kKey)));
    ForwarderProcess &forwarder = startForwarder(credentialFile);
    QVERIFY2(forwarder.waitForStderr(QStringLiteral("is present as 1-1")),
        qPrintable(forwarder.describe()));
    QVERIFY(waitUntil([&] { return m_impostor->session() != nullptr; }));
    const device::SysfsRoot roots(m_usbRoot->path());

    // A channel naming the other bus id is refused when it opens,
    ChannelOutcome named;
    tunnel::Channel *namedChannel
        = m_impostor->openChannel({ { QStringLiteral("kind"), QStringLiteral("usb") },
            { QStringLiteral("run_id"), 1 }, { QStringLiteral("binding_id"), 1 },
            { QStringLiteral("busid"), QStringLiteral("1-2") } });
    QVERIFY(namedChannel);
    watch(namedChannel, named);
    QVERIFY(waitUntil([&] { return named.closed; }));
    QVERIFY(!named.opened);
    QCOMPARE(named.code, protocol::CloseCode::Refused);
    QVERIFY2(named.reason.contains(QLatin1String("1-2")), qPrintable(named.reason));

    // an import of it on the wire is answered with a failure status,
    ChannelOutcome asked;
    QVERIFY(askToImport(QStringLiteral("1-2"), 2, asked));
    QVERIFY(waitUntil([&] { return asked.closed; }));
    auto reply = device::usb::usbip::decodeImportReply(asked.received);
    QVERIFY2(reply && *reply, "no import reply");
    QVERIFY((*reply)->message.status != quint32(device::usb::usbip::OpStatus::Ok));
    QVERIFY2(asked.reason.contains(QLatin1String("1-2")), qPrintable(asked.reason));

    // and neither device was bound to usbip-host.
    QCOMPARE(UsbFixture::driverOf(roots, QStringLiteral("1-2")), QStringLiteral("usb"));
    QCOMPARE(UsbFixture::driverOf(roots, QStringLiteral("1-1")), QStringLiteral("usb"));

    // The driver check can see a bind: importing the carried device binds it.
    ChannelOutcome carried;
    tunnel::Channel *carriedChannel = askToImport(QStringLiteral("1-1"), 3, carried);
    QVERIFY(carriedChannel);
    QVERIFY(waitUntil([&] {
        return carried.received.size() >= device::usb::usbip::kImportReplySize || carried.closed;
    }));
    auto accepted = device::usb::usbip::decodeImportReply(carried.received);
    QVERIFY2(accepted && *accepted, qPrintable(carried.reason));
    QCOMPARE((*accepted)->message.status, quint32(device::usb::usbip::OpStatus::Ok));
    QCOMPARE(UsbFixture::driverOf(roots, QStringLiteral("1-1")), QStringLiteral("usbip-host"));
    QCOMPARE(UsbFixture::driverOf(roots, QStringLiteral("1-2")), QStringLiteral("usb"));
    carriedChannel->close();
    QVERIFY(waitUntil([&] {
        return UsbFixture::driverOf(roots, QStringLiteral("1-1")) == QLatin1String("usb");
    }));
}

QTEST_GUILESS_MAIN(TestImpostorHub)
#include "tst_impostorhub.moc"
