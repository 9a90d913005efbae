// The attachment ledger: its file, and what a restarted agent removes.
// The file handling and the recovery's decisions run on fake interfaces
// everywhere; as root the recovery also runs on real ones, in a network
// namespace of this process's own (so copies run side by side and nothing
// of the host's is in reach).

#include "common/device/l2/tapdevice.h"
#include "daemon-agent/devices/attachmentledger.h"
#include "support/labnetwork.h"
#include "support/processutil.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <unistd.h>

using namespace cloop;
using namespace cloop::testing;
using agent::Attachment;
using agent::AttachmentLedger;
using agent::HostInterface;

namespace {

Attachment attachment(qint64 runId, qint64 bindingId, const QString &hostName)
{
    return Attachment { runId, bindingId, QStringLiteral("l2"), hostName, QStringLiteral("fwd0"),
        4242 };
}

QJsonObject readFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

QStringList hostNamesIn(const QString &path)
{
    QStringList names;
    for (const QJsonValue entry : readFile(path).value(QLatin1String("attachments")).toArray())
        names << entry.toObject().value(QLatin1String("host_name")).toString();
    return names;
}

bool writeRaw(const QString &path, const QByteArray &contents)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate)
        && file.write(contents) == contents.size();
}

// The host as the fakes see it: name → what is there; names not listed do
// not exist. Every call is noted, so a test can tell what was looked at.
struct FakeHost
{
    QHash<QString, HostInterface> interfaces;
    QHash<QString, QString> removalRefusals; // name → error code
    QStringList probed;
    QStringList removeCalls;

    AttachmentLedger::InterfaceProbe probe()
    {
        return [this](const QString &name) -> Result<HostInterface> {
            probed << name;
            if (name == QLatin1String("brokenprobe"))
                return Error::make(
                    QStringLiteral("probe_failed"), QStringLiteral("the probe broke"));
            return interfaces.value(name);
        };
    }
    AttachmentLedger::TapRemover remover()
    {
        return [this](const QString &name) -> Status {
            removeCalls << name;
            if (removalRefusals.contains(name))
                return Error::make(removalRefusals.value(name),
                    QStringLiteral("TAP %1 not removed: refused").arg(name));
            interfaces.remove(name);
            return {};
        };
    }
    // vhci ports: port → the devid it holds now (absent: free).
    QHash<int, quint32> usbPorts;
    QList<int> releaseCalls;
    AttachmentLedger::UsbPortReleaser releaser()
    {
        return [this](int port, quint32 deviceId) -> Result<bool> {
            releaseCalls << port;
            if (!usbPorts.contains(port))
                return false;
            if (usbPorts.value(port) != deviceId)
                return Error::make(QStringLiteral("port_reused"),
                    QStringLiteral("vhci port %1 holds another device now").arg(port));
            usbPorts.remove(port);
            return true;
        };
    }
};

Attachment usbAttachment(
    qint64 run, qint64 binding, const QString &localBusId, int port, quint32 deviceId)
{
    Attachment attachment { run, binding, QStringLiteral("usb"), localBusId,
        QStringLiteral("/dev/bus/usb/003/002"), 0 };
    attachment.vhciPort = port;
    attachment.usbDeviceId = deviceId;
    return attachment;
}

HostInterface tap()
{
    return HostInterface { true, true, QStringLiteral("tun") };
}

HostInterface other(const QString &driver)
{
    return HostInterface { true, false, driver };
}

CliResult ip(const QStringList &arguments)
{
    return runProgram(
        QStringLiteral("ip"), arguments, QProcessEnvironment::systemEnvironment(), 10'000);
}

bool linkExists(const QString &name)
{
    return ip({ QStringLiteral("link"), QStringLiteral("show"), QStringLiteral("dev"), name })
               .exitCode
        == 0;
}

} // namespace

class TestAttachmentLedger : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void recordAndForgetKeepTheFile();
    void recordRefusesWhatCannotBeAnAttachment_data();
    void recordRefusesWhatCannotBeAnAttachment();
    void aFileThatCannotBeWrittenKeepsNothing();
    void recoveryRemovesOnlyRecordedTaps();
    void recoveryLeavesNamesThisProcessRecorded();
    void recoveryFreesOnlyTheRecordedUsbPorts();
    void leftoversStayInTheFileUntilRecovered();
    void aCorruptFileIsReportedNotFatal();
    void anUnreadableEntryIsReportedTheRestRecovered();

    void theRealProbeTellsTapsFromOthers();
    void theRealRemoverRefusesWhatIsNotAnIdleTap();
    void theRealRecoveryRemovesARecordedLeftoverTapOnly();

private:
    bool needsRoot();

    std::unique_ptr<QTemporaryDir> m_root;
    QString m_rootSkip;
    QStringList m_createdLinks;
};

void TestAttachmentLedger::initTestCase()
{
    if (!QFileInfo::exists(QStringLiteral("/dev/net/tun")))
        m_rootSkip = QStringLiteral("/dev/net/tun is missing: no TUN/TAP support here");
    else
        m_rootSkip = enterPrivateNetwork();
}

void TestAttachmentLedger::init()
{
    m_root = std::make_unique<QTemporaryDir>();
    QVERIFY(m_root->isValid());
}

void TestAttachmentLedger::cleanup()
{
    for (const QString &name : std::exchange(m_createdLinks, {})) {
        if (linkExists(name))
            ip({ QStringLiteral("link"), QStringLiteral("delete"), QStringLiteral("dev"), name });
    }
    m_root.reset();
}

bool TestAttachmentLedger::needsRoot()
{
    return m_rootSkip.isEmpty();
}

void TestAttachmentLedger::recordAndForgetKeepTheFile()
{
    FakeHost host;
    AttachmentLedger ledger(m_root->path(), host.probe(), host.remover());
    QCOMPARE(ledger.filePath(), m_root->path() + QStringLiteral("/attachments.json"));
    QVERIFY(!QFile::exists(ledger.filePath()));

    const Attachment first = attachment(7, 1, QStringLiteral("cltap0"));
    const Attachment second { 8, 2, QStringLiteral("l2"), QStringLiteral("cltap1"),
        QStringLiteral("lab0"), 99 };
    QVERIFY(ledger.record(first));
    QVERIFY(ledger.record(second));
    QCOMPARE(ledger.attachments(), (QList<Attachment> { first, second }));
    QCOMPARE(
        QFile::permissions(ledger.filePath()) & (QFileDevice::ReadOther | QFileDevice::ReadGroup),
        QFileDevice::Permissions());

    const QJsonArray entries
        = readFile(ledger.filePath()).value(QLatin1String("attachments")).toArray();
    QCOMPARE(entries.size(), 2);
    const QJsonObject written = entries.at(1).toObject();
    QCOMPARE(written.value(QLatin1String("run_id")).toInteger(), qint64(8));
    QCOMPARE(written.value(QLatin1String("binding_id")).toInteger(), qint64(2));
    QCOMPARE(written.value(QLatin1String("kind")).toString(), QStringLiteral("l2"));
    QCOMPARE(written.value(QLatin1String("host_name")).toString(), QStringLiteral("cltap1"));
    QCOMPARE(written.value(QLatin1String("sandbox_name")).toString(), QStringLiteral("lab0"));
    QCOMPARE(written.value(QLatin1String("sandbox_pid")).toInteger(), qint64(99));

    // The same run and binding again replaces the entry.
    Attachment moved = first;
    moved.sandboxPid = 4343;
    QVERIFY(ledger.record(moved));
    QCOMPARE(ledger.attachments(), (QList<Attachment> { second, moved }));
    QCOMPARE(hostNamesIn(ledger.filePath()),
        (QStringList { QStringLiteral("cltap1"), QStringLiteral("cltap0") }));

    QVERIFY(ledger.forget(8, 2));
    QCOMPARE(ledger.attachments(), QList<Attachment> { moved });
    QCOMPARE(hostNamesIn(ledger.filePath()), QStringList { QStringLiteral("cltap0") });
    // Forgetting twice, or what never was, is no error.
    QVERIFY(ledger.forget(8, 2));
    QVERIFY(ledger.forget(1234, 1));
    QVERIFY(ledger.forget(7, 1));
    QVERIFY(ledger.attachments().isEmpty());
    QCOMPARE(hostNamesIn(ledger.filePath()), QStringList());
    QVERIFY(host.probed.isEmpty());
    QVERIFY(host.removeCalls.isEmpty());
}

void TestAttachmentLedger::recordRefusesWhatCannotBeAnAttachment_data()
{
    QTest::addColumn<Attachment>("refused");
    QTest::newRow("no run") << attachment(0, 1, QStringLiteral("cltap0"));
    QTest::newRow("negative binding") << attachment(1, -1, QStringLiteral("cltap0"));
    QTest::newRow("no kind") << Attachment { 1, 1, QString(), QStringLiteral("cltap0"), QString(),
        0 };
    QTest::newRow("no host name") << attachment(1, 1, QString());
    QTest::newRow("a path for a name") << attachment(1, 1, QStringLiteral("../etc"));
    QTest::newRow("too long") << attachment(1, 1, QStringLiteral("a").repeated(16));
    QTest::newRow("bad sandbox name") << Attachment { 1, 1, QStringLiteral("l2"),
        QStringLiteral("cltap0"), QStringLiteral("fwd 0"), 1 };
    QTest::newRow("negative pid") << Attachment { 1, 1, QStringLiteral("l2"),
        QStringLiteral("cltap0"), QStringLiteral("fwd0"), -5 };
}

void TestAttachmentLedger::recordRefusesWhatCannotBeAnAttachment()
{
    QFETCH(Attachment, refused);
    FakeHost host;
    AttachmentLedger ledger(m_root->path(), host.probe(), host.remover());
    const Status recorded = ledger.record(refused);
    QVERIFY(!recorded);
    QCOMPARE(recorded.error().code, QStringLiteral("invalid_attachment"));
    QVERIFY(ledger.attachments().isEmpty());
    QVERIFY(!QFile::exists(ledger.filePath()));
}

void TestAttachmentLedger::aFileThatCannotBeWrittenKeepsNothing()
{
    // A file where the work root should be: nothing can be written below it.
    const QString blocked = m_root->filePath(QStringLiteral("not-a-folder"));
    QVERIFY(writeRaw(blocked, "x"));
    FakeHost host;
    AttachmentLedger ledger(blocked, host.probe(), host.remover());
    const Status recorded = ledger.record(attachment(1, 1, QStringLiteral("cltap0")));
    QVERIFY(!recorded);
    QVERIFY2(recorded.error().message.contains(QLatin1String("cltap0")),
        qPrintable(recorded.error().message));
    QVERIFY(ledger.attachments().isEmpty());
}

void TestAttachmentLedger::recoveryRemovesOnlyRecordedTaps()
{
    {
        FakeHost before;
        AttachmentLedger previous(m_root->path(), before.probe(), before.remover());
        QVERIFY(previous.record(attachment(1, 1, QStringLiteral("tapleft"))));
        QVERIFY(previous.record(attachment(1, 2, QStringLiteral("tapgone"))));
        QVERIFY(previous.record(attachment(2, 1, QStringLiteral("vethnow"))));
        QVERIFY(previous.record(attachment(2, 2, QStringLiteral("tapbusy"))));
        QVERIFY(previous.record(attachment(3, 1, QStringLiteral("brokenprobe"))));
        QVERIFY(previous.record(usbAttachment(3, 2, QStringLiteral("3-1"), 2, 0x10002)));
    }
    FakeHost host;
    host.interfaces.insert(QStringLiteral("tapleft"), tap());
    host.interfaces.insert(QStringLiteral("vethnow"), other(QStringLiteral("veth")));
    host.interfaces.insert(QStringLiteral("tapbusy"), tap());
    host.interfaces.insert(QStringLiteral("tapother"), tap());
    host.interfaces.insert(QStringLiteral("unrecorded"), tap());
    host.removalRefusals.insert(QStringLiteral("tapbusy"), QStringLiteral("tap_in_use"));

    host.usbPorts.insert(2, 0x20003);
    AttachmentLedger ledger(m_root->path(), host.probe(), host.remover(), host.releaser());
    QVERIFY(ledger.attachments().isEmpty());
    const AttachmentLedger::Recovery recovery = ledger.recoverLeftovers();

    QCOMPARE(recovery.removed, QStringList { QStringLiteral("tapleft (run 1, binding 1)") });
    // The USB entry's port is asked about, never its name as a TAP.
    QCOMPARE(host.releaseCalls, QList<int> { 2 });
    QCOMPARE(host.usbPorts.value(2), 0x20003u);
    // Only what was recorded as a TAP is looked at, and only TAPs are removed.
    QCOMPARE(host.probed,
        (QStringList { QStringLiteral("tapleft"), QStringLiteral("tapgone"),
            QStringLiteral("vethnow"), QStringLiteral("tapbusy"), QStringLiteral("brokenprobe") }));
    QCOMPARE(
        host.removeCalls, (QStringList { QStringLiteral("tapleft"), QStringLiteral("tapbusy") }));
    QVERIFY(host.interfaces.contains(QStringLiteral("vethnow")));
    QVERIFY(host.interfaces.contains(QStringLiteral("unrecorded")));
    QVERIFY(host.interfaces.contains(QStringLiteral("tapother")));

    // A TAP already gone is the usual case, not news; the rest say why.
    QCOMPARE(recovery.skipped.size(), 4);
    const QString skipped = recovery.skipped.join(QLatin1Char('\n'));
    QVERIFY2(!skipped.contains(QLatin1String("tapgone")), qPrintable(skipped));
    QVERIFY2(skipped.contains(QLatin1String(
                 "vethnow (run 2, binding 1): the name now belongs to another kind of "
                 "interface (veth)")),
        qPrintable(skipped));
    QVERIFY2(skipped.contains(QLatin1String("tapbusy (run 2, binding 2): TAP tapbusy not removed")),
        qPrintable(skipped));
    QVERIFY2(skipped.contains(QLatin1String(
                 "brokenprobe (run 3, binding 1): cannot tell what it is: the probe broke")),
        qPrintable(skipped));
    QVERIFY2(skipped.contains(
                 QLatin1String("3-1 (run 3, binding 2): vhci port 2 holds another device now")),
        qPrintable(skipped));

    // The file is emptied of them, and a second recovery finds nothing.
    QCOMPARE(hostNamesIn(ledger.filePath()), QStringList());
    const AttachmentLedger::Recovery again = ledger.recoverLeftovers();
    QVERIFY(again.removed.isEmpty());
    QVERIFY(again.skipped.isEmpty());
    QCOMPARE(
        AttachmentLedger(m_root->path(), host.probe(), host.remover()).recoverLeftovers().removed,
        QStringList());
}

void TestAttachmentLedger::recoveryFreesOnlyTheRecordedUsbPorts()
{
    {
        FakeHost before;
        AttachmentLedger previous(
            m_root->path(), before.probe(), before.remover(), before.releaser());
        QVERIFY(previous.record(usbAttachment(1, 1, QStringLiteral("3-1"), 0, 0x10002)));
        QVERIFY(previous.record(usbAttachment(1, 2, QStringLiteral("3-2"), 1, 0x10003)));
        QVERIFY(previous.record(usbAttachment(2, 1, QStringLiteral("4-1"), 8, 0x20004)));
        // A USB entry must say which port it holds.
        Attachment portless = usbAttachment(2, 2, QStringLiteral("3-3"), -1, 0x10005);
        QVERIFY(!previous.record(portless));
    }
    FakeHost host;
    host.usbPorts.insert(0, 0x10002); // still the recorded device
    host.usbPorts.insert(8, 0x30001); // another device took the port since
    host.usbPorts.insert(5, 0x10009); // never recorded
    AttachmentLedger ledger(m_root->path(), host.probe(), host.remover(), host.releaser());
    const AttachmentLedger::Recovery recovery = ledger.recoverLeftovers();

    QCOMPARE(host.releaseCalls, (QList<int> { 0, 1, 8 }));
    QCOMPARE(
        recovery.removed, QStringList { QStringLiteral("3-1 (run 1, binding 1) on vhci port 0") });
    QCOMPARE(recovery.skipped.size(), 1);
    QVERIFY2(recovery.skipped.first().contains(
                 QLatin1String("4-1 (run 2, binding 1): vhci port 8 holds another")),
        qPrintable(recovery.skipped.first()));
    QVERIFY(!host.usbPorts.contains(0));
    QCOMPARE(host.usbPorts.value(8), 0x30001u);
    QCOMPARE(host.usbPorts.value(5), 0x10009u);
    QVERIFY(host.probed.isEmpty());
    QVERIFY(host.removeCalls.isEmpty());
    QCOMPARE(hostNamesIn(ledger.filePath()), QStringList());
}

void TestAttachmentLedger::recoveryLeavesNamesThisProcessRecorded()
{
    {
        FakeHost before;
        AttachmentLedger previous(m_root->path(), before.probe(), before.remover());
        QVERIFY(previous.record(attachment(1, 1, QStringLiteral("cltap0"))));
    }
    FakeHost host;
    host.interfaces.insert(QStringLiteral("cltap0"), tap());
    AttachmentLedger ledger(m_root->path(), host.probe(), host.remover());
    // This process was given the same name for an attachment of its own.
    QVERIFY(ledger.record(attachment(5, 1, QStringLiteral("cltap0"))));
    const AttachmentLedger::Recovery recovery = ledger.recoverLeftovers();
    QVERIFY(recovery.removed.isEmpty());
    QCOMPARE(recovery.skipped.size(), 1);
    QVERIFY(host.probed.isEmpty());
    QVERIFY(host.removeCalls.isEmpty());
    QVERIFY(host.interfaces.contains(QStringLiteral("cltap0")));
    QCOMPARE(
        ledger.attachments(), QList<Attachment> { attachment(5, 1, QStringLiteral("cltap0")) });
    QCOMPARE(hostNamesIn(ledger.filePath()), QStringList { QStringLiteral("cltap0") });
}

void TestAttachmentLedger::leftoversStayInTheFileUntilRecovered()
{
    {
        FakeHost before;
        AttachmentLedger previous(m_root->path(), before.probe(), before.remover());
        QVERIFY(previous.record(attachment(1, 1, QStringLiteral("cltap3"))));
    }
    FakeHost host;
    host.interfaces.insert(QStringLiteral("cltap3"), tap());
    {
        // Records and dies before recovering: the old entry must survive.
        AttachmentLedger interrupted(m_root->path(), host.probe(), host.remover());
        QVERIFY(interrupted.record(attachment(2, 1, QStringLiteral("cltap4"))));
        QCOMPARE(hostNamesIn(interrupted.filePath()),
            (QStringList { QStringLiteral("cltap3"), QStringLiteral("cltap4") }));
    }
    AttachmentLedger ledger(m_root->path(), host.probe(), host.remover());
    const AttachmentLedger::Recovery recovery = ledger.recoverLeftovers();
    QCOMPARE(recovery.removed.size(), 1);
    QVERIFY(recovery.removed.first().startsWith(QLatin1String("cltap3")));
    QCOMPARE(host.removeCalls, QStringList { QStringLiteral("cltap3") });
    QCOMPARE(hostNamesIn(ledger.filePath()), QStringList());
}

void TestAttachmentLedger::aCorruptFileIsReportedNotFatal()
{
    const QString path = m_root->filePath(AttachmentLedger::fileName());
    QVERIFY(writeRaw(path, "{\"attachments\": [ {\"run_id\": 1, "));
    FakeHost host;
    host.interfaces.insert(QStringLiteral("cltap0"), tap());
    AttachmentLedger ledger(m_root->path(), host.probe(), host.remover());
    const AttachmentLedger::Recovery recovery = ledger.recoverLeftovers();
    QVERIFY(recovery.removed.isEmpty());
    QCOMPARE(recovery.skipped.size(), 1);
    QVERIFY2(recovery.skipped.first().startsWith(QLatin1String("attachments.json: not JSON")),
        qPrintable(recovery.skipped.first()));
    QVERIFY(host.probed.isEmpty());
    QVERIFY(host.removeCalls.isEmpty());
    // The ledger works on.
    QVERIFY(ledger.record(attachment(1, 1, QStringLiteral("cltap1"))));
    QCOMPARE(hostNamesIn(path), QStringList { QStringLiteral("cltap1") });

    QVERIFY(writeRaw(path, "[1, 2, 3]"));
    const AttachmentLedger::Recovery wrongShape
        = AttachmentLedger(m_root->path(), host.probe(), host.remover()).recoverLeftovers();
    QCOMPARE(wrongShape.skipped.size(), 1);
    QVERIFY2(wrongShape.skipped.first().contains(QLatin1String("no list of attachments")),
        qPrintable(wrongShape.skipped.first()));
}

void TestAttachmentLedger::anUnreadableEntryIsReportedTheRestRecovered()
{
    const QString path = m_root->filePath(AttachmentLedger::fileName());
    QVERIFY(writeRaw(path, R"({"attachments": [
        {"run_id": 1, "binding_id": 1, "kind": "l2", "host_name": "../../x", "sandbox_name": "fwd0", "sandbox_pid": 1},
        {"run_id": 1.5, "binding_id": 1, "kind": "l2", "host_name": "cltap5", "sandbox_name": "fwd0", "sandbox_pid": 1},
        "cltap6",
        {"run_id": 2, "binding_id": 1, "kind": "l2", "host_name": "cltap7", "sandbox_name": "fwd0", "sandbox_pid": 1}
    ]})"));
    FakeHost host;
    for (const char *name : { "cltap5", "cltap6", "cltap7" })
        host.interfaces.insert(QString::fromLatin1(name), tap());
    AttachmentLedger ledger(m_root->path(), host.probe(), host.remover());
    const AttachmentLedger::Recovery recovery = ledger.recoverLeftovers();
    QCOMPARE(recovery.removed, QStringList { QStringLiteral("cltap7 (run 2, binding 1)") });
    QCOMPARE(recovery.skipped.size(), 3);
    for (int entry = 1; entry <= 3; ++entry) {
        QVERIFY2(recovery.skipped.at(entry - 1).startsWith(
                     QStringLiteral("attachments.json: entry %1 ").arg(entry)),
            qPrintable(recovery.skipped.at(entry - 1)));
    }
    QCOMPARE(host.probed, QStringList { QStringLiteral("cltap7") });
}

void TestAttachmentLedger::theRealProbeTellsTapsFromOthers()
{
    if (!needsRoot())
        QSKIP(qPrintable(m_rootSkip));
    const QString tapName = QStringLiteral("clprobetap");
    const QString vethName = QStringLiteral("clprobeveth");
    m_createdLinks << tapName << vethName;
    CLOOP_COMPARE_EXIT(ip({ QStringLiteral("tuntap"), QStringLiteral("add"), tapName,
                           QStringLiteral("mode"), QStringLiteral("tap") }),
        0);
    CLOOP_COMPARE_EXIT(ip({ QStringLiteral("link"), QStringLiteral("add"), vethName,
                           QStringLiteral("type"), QStringLiteral("veth"), QStringLiteral("peer"),
                           QStringLiteral("name"), vethName + QStringLiteral("b") }),
        0);
    const auto probe = [](const QString &name) {
        Result<HostInterface> found = AttachmentLedger::probeHostInterface(name);
        if (!found)
            qWarning().noquote() << found.error().message;
        return found ? *found : HostInterface { false, false, QStringLiteral("probe failed") };
    };
    const HostInterface tapFound = probe(tapName);
    QVERIFY(tapFound.exists);
    QVERIFY(tapFound.tap);
    QCOMPARE(tapFound.driver, QStringLiteral("tun"));
    const HostInterface vethFound = probe(vethName);
    QVERIFY(vethFound.exists);
    QVERIFY(!vethFound.tap);
    QCOMPARE(vethFound.driver, QStringLiteral("veth"));
    // Never a name a TAP could not have been given.
    QVERIFY(!AttachmentLedger::probeHostInterface(QStringLiteral("lo")));
    QCOMPARE(AttachmentLedger::removeIdleTap(QStringLiteral("lo")).error().code,
        QStringLiteral("invalid_interface_name"));
    QVERIFY(linkExists(QStringLiteral("lo")));
    const HostInterface missing = probe(QStringLiteral("clnosuchlink"));
    QVERIFY(!missing.exists);
    QVERIFY(!missing.tap);
    // A TUN (layer 3) is of the same driver, and not a TAP.
    const QString tunName = QStringLiteral("clprobetun");
    m_createdLinks << tunName;
    CLOOP_COMPARE_EXIT(ip({ QStringLiteral("tuntap"), QStringLiteral("add"), tunName,
                           QStringLiteral("mode"), QStringLiteral("tun") }),
        0);
    const HostInterface tunFound = probe(tunName);
    QVERIFY(tunFound.exists);
    QVERIFY(!tunFound.tap);
}

void TestAttachmentLedger::theRealRemoverRefusesWhatIsNotAnIdleTap()
{
    if (!needsRoot())
        QSKIP(qPrintable(m_rootSkip));
    const QString vethName = QStringLiteral("clrmveth");
    const QString tunName = QStringLiteral("clrmtun");
    m_createdLinks << vethName << tunName;
    CLOOP_COMPARE_EXIT(ip({ QStringLiteral("link"), QStringLiteral("add"), vethName,
                           QStringLiteral("type"), QStringLiteral("veth"), QStringLiteral("peer"),
                           QStringLiteral("name"), vethName + QStringLiteral("b") }),
        0);
    CLOOP_COMPARE_EXIT(ip({ QStringLiteral("tuntap"), QStringLiteral("add"), tunName,
                           QStringLiteral("mode"), QStringLiteral("tun") }),
        0);

    const Status veth = AttachmentLedger::removeIdleTap(vethName);
    QVERIFY(!veth);
    QCOMPARE(veth.error().code, QStringLiteral("not_a_tap"));
    QVERIFY(linkExists(vethName));

    const Status tun = AttachmentLedger::removeIdleTap(tunName);
    QVERIFY(!tun);
    QCOMPARE(tun.error().code, QStringLiteral("not_a_tap"));
    QVERIFY(linkExists(tunName));

    // A TAP a live process holds, like the agent's own.
    auto held = device::l2::TapDevice::create(device::l2::TapDevice::Options {});
    QVERIFY2(held, held ? "" : qPrintable(held.error().message));
    const Status busy = AttachmentLedger::removeIdleTap((*held)->name());
    QVERIFY(!busy);
    QCOMPARE(busy.error().code, QStringLiteral("tap_in_use"));
    QVERIFY(linkExists((*held)->name()));
    QCOMPARE(
        (*held)->writeFrame(QByteArray(10 + 60, '\0')).error().code, QStringLiteral("link_down"));

    // Nothing there: nothing made either.
    const Status missing = AttachmentLedger::removeIdleTap(QStringLiteral("clrmnone"));
    QVERIFY(!missing);
    QCOMPARE(missing.error().code, QStringLiteral("interface_gone"));
    QVERIFY(!linkExists(QStringLiteral("clrmnone")));
}

void TestAttachmentLedger::theRealRecoveryRemovesARecordedLeftoverTapOnly()
{
    if (!needsRoot())
        QSKIP(qPrintable(m_rootSkip));
    const QString leftover = QStringLiteral("clleft0");
    const QString nowVeth = QStringLiteral("clleft1");
    const QString unrecorded = QStringLiteral("clstray0");
    m_createdLinks << leftover << nowVeth << unrecorded;
    CLOOP_COMPARE_EXIT(ip({ QStringLiteral("tuntap"), QStringLiteral("add"), leftover,
                           QStringLiteral("mode"), QStringLiteral("tap") }),
        0);
    CLOOP_COMPARE_EXIT(ip({ QStringLiteral("link"), QStringLiteral("add"), nowVeth,
                           QStringLiteral("type"), QStringLiteral("veth"), QStringLiteral("peer"),
                           QStringLiteral("name"), nowVeth + QStringLiteral("b") }),
        0);
    CLOOP_COMPARE_EXIT(ip({ QStringLiteral("tuntap"), QStringLiteral("add"), unrecorded,
                           QStringLiteral("mode"), QStringLiteral("tap") }),
        0);
    auto held = device::l2::TapDevice::create(device::l2::TapDevice::Options {});
    QVERIFY2(held, held ? "" : qPrintable(held.error().message));
    const QString heldName = (*held)->name();
    {
        AttachmentLedger previous(m_root->path(), device::SysfsRoot());
        QVERIFY(previous.record(attachment(1, 1, leftover)));
        QVERIFY(previous.record(attachment(1, 2, nowVeth)));
        QVERIFY(previous.record(attachment(2, 1, heldName)));
        QVERIFY(previous.record(attachment(2, 2, QStringLiteral("clgone0"))));
    }

    AttachmentLedger ledger(m_root->path(), device::SysfsRoot());
    const AttachmentLedger::Recovery recovery = ledger.recoverLeftovers();
    QCOMPARE(recovery.removed, QStringList { QStringLiteral("clleft0 (run 1, binding 1)") });
    QVERIFY(!linkExists(leftover));
    QVERIFY(linkExists(nowVeth));
    QVERIFY(linkExists(unrecorded));
    QVERIFY(linkExists(heldName));
    QVERIFY(!linkExists(QStringLiteral("clgone0")));
    QCOMPARE(recovery.skipped.size(), 2);
    QVERIFY2(recovery.skipped.at(0).contains(QLatin1String("another kind of interface (veth)")),
        qPrintable(recovery.skipped.at(0)));
    QVERIFY2(recovery.skipped.at(1).contains(QLatin1String("a running process holds it")),
        qPrintable(recovery.skipped.at(1)));
    QCOMPARE(hostNamesIn(ledger.filePath()), QStringList());
}

QTEST_GUILESS_MAIN(TestAttachmentLedger)
#include "tst_attachmentledger.moc"
