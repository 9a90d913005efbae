// Integration: `cloop forward install` and `cloop executor agent install`
// prepare a system image (--root, systemctl --root: this machine runs no
// systemd), as they do a machine: the bundle where only root reads it and
// nowhere else, the daemon's options in a drop-in, the unit enabled; the
// service's first start redeems the bundle. Bad input writes nothing;
// uninstall keeps the credential unless --purge.

#include "common/util/atomicfile.h"
#include "support/testrig.h"

#include <QDir>
#include <QFile>
#include <QTest>
#include <QUuid>

using namespace cloop;
using namespace cloop::testing;
using namespace Qt::StringLiterals;

class TestServiceInstall final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void aForwarderInstalledIntoAnImageRedeemsOnItsFirstStart();
    void anAgentKeepsItsOptionsInTheDropIn();
    void badInputWritesNothing();

private:
    QString image(const QString &unit);
    QString tokenFile(const QString &bundle);
    CliResult forward(const QStringList &arguments);
    std::unique_ptr<TestRig> m_rig;
};

namespace {
QByteArray contentsOf(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}
} // namespace

void TestServiceInstall::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
}

void TestServiceInstall::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

// A system image with the package's unit in it.
QString TestServiceInstall::image(const QString &unit)
{
    const QString root = m_rig->path(u"image-"_s + unit);
    QDir().mkpath(root + u"/lib/systemd/system"_s);
    QFile::copy(QStringLiteral(CLOOP_SOURCE_DIR "/resources/systemd/") + unit,
        root + u"/lib/systemd/system/"_s + unit);
    return root;
}

QString TestServiceInstall::tokenFile(const QString &bundle)
{
    const QString path = m_rig->path(QUuid::createUuid().toString(QUuid::WithoutBraces));
    // An empty path fails the install that reads it, and so the test.
    return util::writeFileAtomically(path, bundle.toLatin1() + '\n', 0600) ? path : QString();
}

CliResult TestServiceInstall::forward(const QStringList &arguments)
{
    return m_rig->runForwarder(arguments, m_rig->newHome());
}

void TestServiceInstall::aForwarderInstalledIntoAnImageRedeemsOnItsFirstStart()
{
    const Enrollment enrollment = m_rig->hub().enroll(u"bench-9"_s);
    QVERIFY2(enrollment.ok, qPrintable(enrollment.error));
    const QString root = image(u"cloop-forward.service"_s);
    const QString token = tokenFile(enrollment.bundle);
    const CliResult installed
        = forward({ u"install"_s, u"--root"_s, root, u"--token-file"_s, token });
    CLOOP_COMPARE_EXIT(installed, 0);

    // The bundle is in /etc/cloop, root's alone, and nowhere else.
    const QString bundle = root + u"/etc/cloop/forwarder.bundle"_s;
    QCOMPARE(contentsOf(bundle).trimmed(), enrollment.bundle.toLatin1());
    QCOMPARE(util::fileMode(bundle), 0600);
    QCOMPARE(util::fileMode(root + u"/etc/cloop"_s), 0700);
    QVERIFY(!QFileInfo::exists(token));
    const QString dropIn = root + u"/etc/systemd/system/cloop-forward.service.d/install.conf"_s;
    QVERIFY(QFileInfo::exists(dropIn));
    QVERIFY(!contentsOf(dropIn).contains(enrollment.bundle.toLatin1()));
    QVERIFY(
        !contentsOf(root + u"/lib/systemd/system/cloop-forward.service"_s).contains("cloopfwd1."));
    // Enabled the way systemd reads it at boot.
    QVERIFY(QFileInfo(root + u"/etc/systemd/system/multi-user.target.wants/cloop-forward.service"_s)
                .isSymLink());

    // The unit's first start: it redeems the bundle, keeps the credential
    // and deletes the bundle.
    const QString credential = root + u"/etc/cloop/forwarder.json"_s;
    ForwarderProcess &service
        = m_rig->addForwarder({ u"--credential-file"_s, credential, u"--token-file"_s, bundle });
    QVERIFY(m_rig->startAndAwaitConnection(service, enrollment.id));
    QTRY_VERIFY_WITH_TIMEOUT(!QFileInfo::exists(bundle), 10000);
    QCOMPARE(util::fileMode(credential), 0600);

    // Installed twice: refused, the credential kept.
    const QString again = tokenFile(enrollment.bundle);
    CLOOP_COMPARE_EXIT(forward({ u"install"_s, u"--root"_s, root, u"--token-file"_s, again }), 1);
    QVERIFY(QFileInfo::exists(credential));

    // Uninstalled: the unit is off, the credential stays; --purge forgets it.
    CLOOP_COMPARE_EXIT(forward({ u"uninstall"_s, u"--root"_s, root }), 0);
    QVERIFY(!QFileInfo::exists(
        root + u"/etc/systemd/system/multi-user.target.wants/cloop-forward.service"_s));
    QVERIFY(!QFileInfo::exists(dropIn));
    QVERIFY(QFileInfo::exists(credential));
    CLOOP_COMPARE_EXIT(forward({ u"uninstall"_s, u"--root"_s, root, u"--purge"_s }), 0);
    QVERIFY(!QFileInfo::exists(credential));
}

void TestServiceInstall::anAgentKeepsItsOptionsInTheDropIn()
{
    const QJsonObject enrolled
        = m_rig->hub()
              .cliJson({ u"executor"_s, u"enroll"_s, u"--name"_s, u"box"_s, u"--json"_s })
              .toObject();
    const QString root = image(u"cloop-agent.service"_s);
    const QString token = tokenFile(enrolled.value("bundle"_L1).toString());
    const auto agent = [this](const QStringList &arguments) {
        return runProgram(
            binaryPath(u"cloop-agent"_s), arguments, childEnvironment(m_rig->newHome()));
    };
    // A value systemd would split is refused before anything is written.
    CLOOP_COMPARE_EXIT(agent({ u"install"_s, u"--root"_s, root, u"--token-file"_s, token,
                           u"--label"_s, u"room=lab 2"_s }),
        2);
    QVERIFY(!QFileInfo::exists(root + u"/etc/cloop"_s));
    QVERIFY(QFileInfo::exists(token));

    CLOOP_COMPARE_EXIT(
        agent({ u"install"_s, u"--root"_s, root, u"--token-file"_s, token, u"--work-root"_s,
            u"/srv/cloop-work"_s, u"--label"_s, u"room=lab2"_s, u"--max-concurrent"_s, u"2"_s }),
        0);
    const QByteArray dropIn
        = contentsOf(root + u"/etc/systemd/system/cloop-agent.service.d/install.conf"_s);
    QVERIFY2(dropIn.contains("Environment=\"CLOOP_AGENT_OPTIONS=--work-root /srv/cloop-work "
                             "--label room=lab2 --max-concurrent 2\""),
        dropIn.constData());
    QCOMPARE(util::fileMode(root + u"/etc/cloop/agent.bundle"_s), 0600);
    QVERIFY(QFileInfo(root + u"/etc/systemd/system/multi-user.target.wants/cloop-agent.service"_s)
                .isSymLink());
}

void TestServiceInstall::badInputWritesNothing()
{
    const Enrollment enrollment = m_rig->hub().enroll(u"bench-10"_s);
    QVERIFY2(enrollment.ok, qPrintable(enrollment.error));
    const QString root = image(u"cloop-forward.service"_s);
    // Not a bundle; a bundle of the other kind; no token file; no unit.
    const QString garbage = tokenFile(u"cloopfwd1.not-a-bundle"_s);
    CLOOP_COMPARE_EXIT(forward({ u"install"_s, u"--root"_s, root, u"--token-file"_s, garbage }), 2);
    const QJsonObject executor
        = m_rig->hub()
              .cliJson({ u"executor"_s, u"enroll"_s, u"--name"_s, u"other"_s, u"--json"_s })
              .toObject();
    const QString wrongKind = tokenFile(executor.value("bundle"_L1).toString());
    CLOOP_COMPARE_EXIT(
        forward({ u"install"_s, u"--root"_s, root, u"--token-file"_s, wrongKind }), 2);
    CLOOP_COMPARE_EXIT(forward({ u"install"_s, u"--root"_s, root }), 2);
    const QString token = tokenFile(enrollment.bundle);
    const QString bare = m_rig->path(u"bare-image"_s);
    QDir().mkpath(bare);
    const CliResult noUnit = forward({ u"install"_s, u"--root"_s, bare, u"--token-file"_s, token });
    CLOOP_COMPARE_EXIT(noUnit, 1);
    QVERIFY2(noUnit.stderrText().contains(u"install its package"_s), qPrintable(noUnit.describe()));
    QVERIFY(!QFileInfo::exists(root + u"/etc/cloop"_s));
    QVERIFY(!QFileInfo::exists(bare + u"/etc/cloop"_s));
    QVERIFY(QFileInfo::exists(garbage) && QFileInfo::exists(wrongKind) && QFileInfo::exists(token));
}

QTEST_GUILESS_MAIN(TestServiceInstall)
#include "tst_serviceinstall.moc"
