// SandboxDeviceNode, as root: a real process in a mount namespace of its
// own, with a tmpfs for /dev as a container has, stands for the sandbox; the
// machine's node is a real character device (USB major 189) in a fixture
// /dev. Skipped without root or unshare(1).

#include "daemon-agent/devices/sandboxdevicenode.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

using cloop::agent::SandboxDeviceNode;
using cloop::device::SysfsRoot;

namespace {

const QString kNode = QStringLiteral("/dev/bus/usb/003/002");
// (bus 3 - 1) * 128 + (device 2 - 1)
const dev_t kNumber = makedev(189, 257);

bool makeNode(const QString &path, dev_t number)
{
    QDir().mkpath(QFileInfo(path).path());
    return ::mknod(QFile::encodeName(path).constData(), S_IFCHR | 0664, number) == 0;
}

std::optional<struct stat> statOf(const QString &path)
{
    struct stat info
    {
    };
    if (::lstat(QFile::encodeName(path).constData(), &info) != 0)
        return std::nullopt;
    return info;
}

} // namespace

class TestSandboxDeviceNode final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void parseOwner_data();
    void parseOwner();
    void placeMakesTheMachinesNodeInTheSandbox();
    void placeReplacesAStaleNumberAndRefusesAnythingElse();
    void placeNeverFollowsALinkOutOfTheSandbox();
    void placeRefusesWhatIsNoUsbNode();
    void removeTakesOnlyAUsbNode();
    void aSandboxOnTheHostsMountsGetsNothingMade();
    void aDeviceNumberedAnewKeepsItsFirstPath();

private:
    // The sandbox's /dev, seen from here.
    QString inSandbox(const QString &path) const
    {
        return QStringLiteral("/proc/%1/root%2").arg(m_sandbox->processId()).arg(path);
    }
    SandboxDeviceNode node() const
    {
        return SandboxDeviceNode(
            SysfsRoot(QStringLiteral("/"), m_machine->path(), QStringLiteral("/")),
            m_sandbox->processId());
    }

    std::unique_ptr<QTemporaryDir> m_machine;
    std::unique_ptr<QProcess> m_sandbox;
};

void TestSandboxDeviceNode::initTestCase()
{
    if (::geteuid() != 0)
        QSKIP("needs root (mknod, and a mount namespace for the sandbox)");
    if (QStandardPaths::findExecutable(QStringLiteral("unshare")).isEmpty())
        QSKIP("unshare (util-linux) is not installed");
}

void TestSandboxDeviceNode::init()
{
    m_machine = std::make_unique<QTemporaryDir>();
    QVERIFY(m_machine->isValid());
    QVERIFY(makeNode(m_machine->path() + kNode, kNumber));
    m_sandbox = std::make_unique<QProcess>();
    m_sandbox->setProcessChannelMode(QProcess::MergedChannels);
    // The same pid from unshare to sleep: each execs the next.
    m_sandbox->start(QStringLiteral("unshare"),
        { QStringLiteral("--mount"), QStringLiteral("--propagation"), QStringLiteral("private"),
            QStringLiteral("sh"), QStringLiteral("-c"),
            QStringLiteral("mount -t tmpfs -o mode=755 sandbox-dev /dev && mkdir -p "
                           "/dev/bus/usb/003 && echo ready && exec sleep 300") });
    QVERIFY(m_sandbox->waitForStarted());
    QByteArray said;
    // (QTRY_ evaluates its condition once more at the end: readAll() only
    // once per round.)
    QTRY_VERIFY_WITH_TIMEOUT((said += m_sandbox->readAll()).contains("ready")
            || m_sandbox->state() == QProcess::NotRunning,
        10'000);
    QVERIFY2(m_sandbox->state() == QProcess::Running, said.constData());
    QVERIFY(QFileInfo(inSandbox(QStringLiteral("/dev/bus/usb/003"))).isDir());
}

void TestSandboxDeviceNode::cleanup()
{
    if (m_sandbox) {
        m_sandbox->kill();
        m_sandbox->waitForFinished();
    }
    m_sandbox.reset();
    m_machine.reset();
}

void TestSandboxDeviceNode::parseOwner_data()
{
    QTest::addColumn<QString>("owner");
    QTest::addColumn<bool>("valid");
    QTest::newRow("ids") << QStringLiteral("1000:1001") << true;
    QTest::newRow("root") << QStringLiteral("0:0") << true;
    QTest::newRow("a name") << QStringLiteral("cloop-run:cloop-run") << false;
    QTest::newRow("one id") << QStringLiteral("1000") << false;
    QTest::newRow("three") << QStringLiteral("1:2:3") << false;
    QTest::newRow("negative") << QStringLiteral("-1:0") << false;
    QTest::newRow("empty") << QString() << false;
}

void TestSandboxDeviceNode::parseOwner()
{
    QFETCH(QString, owner);
    QFETCH(bool, valid);
    QCOMPARE(SandboxDeviceNode::parseOwner(owner).has_value(), valid);
}

void TestSandboxDeviceNode::placeMakesTheMachinesNodeInTheSandbox()
{
    const cloop::Status placed = node().place(kNode, QStringLiteral("1234:1235"));
    QVERIFY2(placed, qPrintable(placed ? QString() : placed.error().message));
    const auto there = statOf(inSandbox(kNode));
    QVERIFY(there);
    QVERIFY(S_ISCHR(there->st_mode));
    QCOMPARE(there->st_rdev, kNumber);
    QCOMPARE(there->st_uid, uid_t(1234));
    QCOMPARE(there->st_gid, gid_t(1235));
    QCOMPARE(there->st_mode & 07777, mode_t(0600));
    // The machine's own node is the workload's user's too.
    QCOMPARE(statOf(m_machine->path() + kNode)->st_uid, uid_t(1234));
    // Missing folders are made: a device on another bus.
    const QString otherBus = QStringLiteral("/dev/bus/usb/004/009");
    QVERIFY(makeNode(m_machine->path() + otherBus, makedev(189, 3 * 128 + 8)));
    QVERIFY(node().place(otherBus, QStringLiteral("1234:1235")));
    QCOMPARE(statOf(inSandbox(otherBus))->st_rdev, makedev(189, 3 * 128 + 8));
    // Placing again changes nothing.
    QVERIFY(node().place(kNode, QStringLiteral("1234:1235")));
    QCOMPARE(statOf(inSandbox(kNode))->st_rdev, kNumber);
    QVERIFY(!QFileInfo::exists(QStringLiteral("/dev/bus/usb/004/009"))
        || statOf(QStringLiteral("/dev/bus/usb/004/009"))->st_rdev != makedev(189, 3 * 128 + 8));
}

void TestSandboxDeviceNode::aDeviceNumberedAnewKeepsItsFirstPath()
{
    // The device came back as 003/005 (the kernel numbers each import
    // anew); the workload first knew it as 003/002.
    const QString again = QStringLiteral("/dev/bus/usb/003/005");
    const dev_t number = makedev(189, 2 * 128 + 4);
    QVERIFY(makeNode(m_machine->path() + again, number));
    QVERIFY(node().place(again, QStringLiteral("1:1")));
    const cloop::Status kept = node().place(again, QStringLiteral("1:1"), kNode);
    QVERIFY2(kept, qPrintable(kept ? QString() : kept.error().message));
    // Both paths open the device that is there now,
    QCOMPARE(statOf(inSandbox(kNode))->st_rdev, number);
    QCOMPARE(statOf(inSandbox(again))->st_rdev, number);
    QCOMPARE(statOf(inSandbox(kNode))->st_uid, uid_t(1));
    // and nothing is made outside the USB node folders.
    QVERIFY(!node().place(again, QStringLiteral("1:1"), QStringLiteral("/dev/sda")));
    QVERIFY(!node().place(again, QStringLiteral("1:1"), QStringLiteral("/dev/bus/usb/../../sda")));
    QVERIFY(!QFileInfo::exists(inSandbox(QStringLiteral("/dev/sda"))));
}

void TestSandboxDeviceNode::placeReplacesAStaleNumberAndRefusesAnythingElse()
{
    // A node left there with another number (an older device of that path).
    QVERIFY(makeNode(inSandbox(kNode), makedev(189, 300)));
    QVERIFY(node().place(kNode, QStringLiteral("1:1")));
    QCOMPARE(statOf(inSandbox(kNode))->st_rdev, kNumber);

    QVERIFY(QFile::remove(inSandbox(kNode)));
    QFile planted(inSandbox(kNode));
    QVERIFY(planted.open(QIODevice::WriteOnly));
    planted.write("the workload's");
    planted.close();
    const cloop::Status refused = node().place(kNode, QStringLiteral("1:1"));
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.contains(QStringLiteral("something else")),
        qPrintable(refused.error().message));
    QVERIFY(S_ISREG(statOf(inSandbox(kNode))->st_mode));
}

void TestSandboxDeviceNode::placeNeverFollowsALinkOutOfTheSandbox()
{
    // A workload that owns its /dev points a folder of it at the host.
    QTemporaryDir host;
    QVERIFY(host.isValid());
    QVERIFY(QDir(inSandbox(QStringLiteral("/dev/bus/usb"))).removeRecursively());
    QVERIFY(QFile::link(host.path(), inSandbox(QStringLiteral("/dev/bus/usb"))));
    const cloop::Status refused = node().place(kNode, QStringLiteral("1:1"));
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.contains(kNode), qPrintable(refused.error().message));
    QVERIFY(QDir(host.path()).isEmpty(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::System));

    // Nor a link in place of the node itself.
    QVERIFY(QFile::remove(inSandbox(QStringLiteral("/dev/bus/usb"))));
    QVERIFY(QDir().mkpath(inSandbox(QStringLiteral("/dev/bus/usb/003"))));
    const QString target = host.path() + QStringLiteral("/target");
    QVERIFY(QFile::link(target, inSandbox(kNode)));
    QVERIFY(!node().place(kNode, QStringLiteral("1:1")));
    QVERIFY(!QFileInfo::exists(target));
    // A link is no USB node: remove() leaves it, and what it names.
    QVERIFY(node().remove(kNode));
    QVERIFY(QFileInfo(inSandbox(kNode)).isSymLink());
}

void TestSandboxDeviceNode::placeRefusesWhatIsNoUsbNode()
{
    const QString other = QStringLiteral("/dev/bus/usb/003/007");
    // /dev/null's number under a USB name on the machine.
    QVERIFY(makeNode(m_machine->path() + other, makedev(1, 3)));
    const cloop::Status refused = node().place(other, QStringLiteral("1:1"));
    QVERIFY(!refused);
    QVERIFY2(refused.error().message.contains(QStringLiteral("not a USB device node")),
        qPrintable(refused.error().message));
    QVERIFY(!QFileInfo::exists(inSandbox(other)));
    QVERIFY(!node().place(QStringLiteral("/dev/bus/usb/003/008"), QStringLiteral("1:1")));
    QVERIFY(!node().place(kNode, QStringLiteral("cloop-run")));
    QVERIFY(!QFileInfo::exists(inSandbox(kNode)));
}

void TestSandboxDeviceNode::removeTakesOnlyAUsbNode()
{
    QVERIFY(node().place(kNode, QStringLiteral("1:1")));
    QVERIFY(node().remove(kNode));
    QVERIFY(!statOf(inSandbox(kNode)));
    // Gone already, or never there: nothing to do.
    QVERIFY(node().remove(kNode));
    QVERIFY(node().remove(QStringLiteral("/dev/bus/usb/009/001")));
    // A file of the workload's under that name stays.
    QFile planted(inSandbox(kNode));
    QVERIFY(planted.open(QIODevice::WriteOnly));
    planted.close();
    QVERIFY(node().remove(kNode));
    QVERIFY(QFileInfo::exists(inSandbox(kNode)));
    // The machine's node is never touched.
    QCOMPARE(statOf(m_machine->path() + kNode)->st_rdev, kNumber);
}

void TestSandboxDeviceNode::aSandboxOnTheHostsMountsGetsNothingMade()
{
    // A host process shares this mount namespace: the kernel's node is its.
    const SandboxDeviceNode host(
        SysfsRoot(QStringLiteral("/"), m_machine->path(), QStringLiteral("/")), ::getpid());
    const bool existed = QFileInfo::exists(kNode);
    QVERIFY(host.place(kNode, QStringLiteral("4321:4322")));
    QCOMPARE(statOf(m_machine->path() + kNode)->st_uid, uid_t(4321));
    QCOMPARE(QFileInfo::exists(kNode), existed);
    QVERIFY(host.remove(kNode));
    QVERIFY(statOf(m_machine->path() + kNode));
}

QTEST_GUILESS_MAIN(TestSandboxDeviceNode)
#include "tst_sandboxdevicenode.moc"
