// Integration: a hub administrator has an executor install a harness. The
// real hub and a real host-mode agent on loopback; the agent's installer
// table (--harness-table) has an entry for a local test program, so nothing
// reaches the network. A root agent installs as the run user cloop-run.

#include "support/testrig.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <pwd.h>
#include <unistd.h>

using namespace cloop::testing;
using namespace Qt::StringLiterals;

namespace {

const QString kProject = u"/srv/projects/bench"_s;

bool writeExecutable(const QString &path, const QByteArray &bytes)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly | QIODevice::Truncate)
        && file.write(bytes) == bytes.size()
        && file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner
            | QFileDevice::ExeOwner | QFileDevice::ReadGroup | QFileDevice::ExeGroup
            | QFileDevice::ReadOther | QFileDevice::ExeOther);
}

} // namespace

class TestHarnessInstall final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void anAdministratorInstallsAHarnessFromTheDevicesTable();
    void aNameWithoutAnInstallerIsRefusedByTheDevice();
    void onlyHubAdministratorsInstallAndSeeInstalls();
    void anInstallerThatFailsSaysSo();

private:
    // Enrolls "bench" and starts a host-mode agent whose table has
    // testharness (installed by a script that prints and creates it in the
    // home's ~/.local/bin) and failingharness (exits 7).
    bool startAgent();
    QJsonObject executor();
    CliResult install(const QString &name, const QString &token = {});
    QJsonArray audit(const QString &action);

    std::unique_ptr<TestRig> m_rig;
    std::unique_ptr<QTemporaryDir> m_base;
    QString m_harnessHome;
    qint64 m_executorId = 0;
    ForwarderProcess *m_agent = nullptr;
};

void TestHarnessInstall::init()
{
    if (::geteuid() == 0 && !::getpwnam("cloop-run"))
        QSKIP("a root agent installs as cloop-run (scripts/install-deps creates it)");
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
    CLOOP_COMPARE_EXIT(m_rig->hub().cli({ u"project"_s, u"add"_s, kProject }), 0);
    QVERIFY(startAgent());
}

void TestHarnessInstall::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
    m_base.reset();
}

bool TestHarnessInstall::startAgent()
{
    m_base = std::make_unique<QTemporaryDir>();
    // The workload user reaches the installers and the harness home.
    QFile::setPermissions(m_base->path(),
        QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner
            | QFileDevice::ReadGroup | QFileDevice::ExeGroup | QFileDevice::ReadOther
            | QFileDevice::ExeOther);
    const QString installer = m_base->filePath(u"install-testharness"_s);
    const QString failing = m_base->filePath(u"install-failingharness"_s);
    if (!writeExecutable(installer,
            "#!/bin/sh\n"
            "echo \"installing $CLOOP_HARNESS as $(id -un) in $HOME\"\n"
            "mkdir -p \"$HOME/.local/bin\"\n"
            "printf '#!/bin/sh\\necho the test harness speaks\\n' > "
            "\"$HOME/.local/bin/testharness\"\n"
            "chmod 755 \"$HOME/.local/bin/testharness\"\n"
            "echo \"installed\" >&2\n")
        || !writeExecutable(failing, "#!/bin/sh\necho 'no network here' >&2\nexit 7\n"))
        return false;
    const QString table = m_base->filePath(u"harnesses.json"_s);
    QFile tableFile(table);
    if (!tableFile.open(QIODevice::WriteOnly))
        return false;
    tableFile.write(
        QJsonDocument(QJsonObject { { u"testharness"_s,
                                        QJsonObject { { u"vendor"_s, u"the test"_s },
                                            { u"command"_s, QJsonArray { installer } } } },
                          { u"failingharness"_s,
                              QJsonObject { { u"vendor"_s, u"the test"_s },
                                  { u"command"_s, QJsonArray { failing } } } } })
            .toJson());
    tableFile.close();
    m_harnessHome = m_base->filePath(u"harness-home"_s);

    const QJsonObject enrolled
        = m_rig->hub()
              .cliJson({ u"executor"_s, u"enroll"_s, u"--name"_s, u"bench"_s, u"--json"_s })
              .toObject();
    m_executorId = enrolled.value("executor"_L1).toObject().value("id"_L1).toInteger();
    m_agent = &m_rig->addForwarder(
        { u"--bundle"_s, enrolled.value("bundle"_L1).toString(), u"--host-mode"_s,
            u"--harness-table"_s, table, u"--harness-home"_s, m_harnessHome },
        m_rig->newHome(), ForwarderProcess::Program::Agent);
    if (!m_agent->start() || !m_agent->waitForStderr(u"connected to the hub as executor"_s)) {
        qWarning().noquote() << m_agent->describe();
        return false;
    }
    return true;
}

QJsonObject TestHarnessInstall::executor()
{
    return m_rig->hub().cliItems({ u"executor"_s, u"list"_s, u"--json"_s }).at(0).toObject();
}

CliResult TestHarnessInstall::install(const QString &name, const QString &token)
{
    const QStringList arguments { u"executor"_s, u"harness"_s, u"install"_s,
        QString::number(m_executorId), name };
    return token.isEmpty() ? m_rig->hub().cli(arguments) : m_rig->hub().cliAs(token, arguments);
}

QJsonArray TestHarnessInstall::audit(const QString &action)
{
    return m_rig->hub().cliItems({ u"audit"_s, u"--action"_s, action, u"--json"_s });
}

void TestHarnessInstall::anAdministratorInstallsAHarnessFromTheDevicesTable()
{
    // Given an agent that reports the installers of its table and no
    // testharness on its PATH,
    const QJsonObject before = executor().value("capabilities"_L1).toObject();
    QVERIFY(before.value("harness_installers"_L1).toArray().contains(u"testharness"_s));
    QVERIFY(!before.value("harnesses"_L1).toObject().contains("testharness"_L1));

    // when an administrator asks it to install testharness,
    const CliResult installed = install(u"testharness"_s);

    // then the installer's own output comes back as a run's does, the
    // harness lands in the harness home as the workload user's, and the
    // agent reports it at once, without reconnecting.
    CLOOP_COMPARE_EXIT(installed, 0);
    const QString user = ::geteuid() == 0
        ? u"cloop-run"_s
        : QString::fromLocal8Bit(::getpwuid(::geteuid())->pw_name);
    QVERIFY2(installed.stdoutText().contains(
                 u"installing testharness as %1 in %2"_s.arg(user, m_harnessHome)),
        qPrintable(installed.describe()));
    QVERIFY2(installed.stderrText().contains(u"installed"_s), qPrintable(installed.describe()));
    const QString program = m_harnessHome + u"/.local/bin/testharness"_s;
    QVERIFY2(installed.stdoutText().contains(
                 u"Executor %1 has testharness at %2."_s.arg(m_executorId).arg(program)),
        qPrintable(installed.describe()));
    QCOMPARE(executor()
                 .value("capabilities"_L1)
                 .toObject()
                 .value("harnesses"_L1)
                 .toObject()
                 .value("testharness"_L1)
                 .toString(),
        program);
    QCOMPARE(m_agent->stderrText().count(u"connected to the hub as executor"_s), 1);

    // The install is a run of no project, and audited with who asked.
    const QJsonArray runs = m_rig->hub().cliItems({ u"run"_s, u"list"_s, u"--all"_s, u"--json"_s });
    QCOMPARE(runs.size(), 1);
    const QJsonObject run = runs.at(0).toObject();
    QCOMPARE(run.value("harness"_L1).toString(), u"testharness"_s);
    QVERIFY(run.value("project"_L1).isNull());
    QCOMPARE(run.value("state"_L1).toString(), u"succeeded"_s);
    const QJsonArray audited = audit(u"executor.harness_install"_s);
    QCOMPARE(audited.size(), 1);
    QCOMPARE(audited.at(0).toObject().value("subject"_L1).toString(),
        u"executor:%1"_s.arg(m_executorId));
    QVERIFY2(QJsonDocument(audited.at(0).toObject()).toJson().contains("testharness"),
        QJsonDocument(audited.at(0).toObject()).toJson().constData());

    // A workload the agent starts on the host finds it by name.
    const CliResult used = m_rig->hub().cli(
        { u"run"_s, u"--project"_s, kProject, u"--host-process"_s, u"--"_s, u"testharness"_s });
    if (::geteuid() == 0) {
        CLOOP_COMPARE_EXIT(used, 0);
        QVERIFY2(
            used.stdoutText().contains(u"the test harness speaks"_s), qPrintable(used.describe()));
    }
}

void TestHarnessInstall::aNameWithoutAnInstallerIsRefusedByTheDevice()
{
    // Given an agent whose table has no "claudia",
    // when an administrator asks for it,
    const CliResult refused = install(u"claudia"_s);
    // then the device refuses, naming what it can install, and nothing ran.
    CLOOP_COMPARE_EXIT(refused, 1);
    QVERIFY2(refused.stderrText().contains(u"no official installer for this harness"_s),
        qPrintable(refused.describe()));
    QVERIFY2(refused.stderrText().contains(u"testharness"_s), qPrintable(refused.describe()));
    QVERIFY(!QFileInfo::exists(m_harnessHome));
    QVERIFY(!executor()
                 .value("capabilities"_L1)
                 .toObject()
                 .value("harnesses"_L1)
                 .toObject()
                 .contains("claudia"_L1));
    // A name no harness could have never leaves the CLI, nor the hub.
    const CliResult shaped = install(u"../../bin/sh"_s);
    CLOOP_COMPARE_EXIT(shaped, 2);
    QVERIFY2(shaped.stderrText().contains(u"not a harness name"_s), qPrintable(shaped.describe()));
    // A revoked executor is asked nothing.
    CLOOP_COMPARE_EXIT(
        m_rig->hub().cli({ u"executor"_s, u"revoke"_s, QString::number(m_executorId) }), 0);
    const CliResult revoked = install(u"testharness"_s);
    CLOOP_COMPARE_EXIT(revoked, 1);
    QVERIFY2(revoked.stderrText().contains(u"revoked"_s), qPrintable(revoked.describe()));
    QVERIFY(!QFileInfo::exists(m_harnessHome));
}

void TestHarnessInstall::onlyHubAdministratorsInstallAndSeeInstalls()
{
    HubProcess &hub = m_rig->hub();
    const QString token = hub.tokenOfNewUser(u"maintainer"_s, kProject, u"administrator"_s);
    QVERIFY(!token.isEmpty());
    // A project's administrator is no hub administrator: refused, no run,
    // no audit entry, nothing installed.
    const CliResult refused = install(u"testharness"_s, token);
    CLOOP_COMPARE_EXIT(refused, 1);
    QVERIFY2(refused.stderrText().contains(u"installing a harness on an executor"_s),
        qPrintable(refused.describe()));
    QCOMPARE(hub.cliItems({ u"run"_s, u"list"_s, u"--all"_s, u"--json"_s }).size(), 0);
    QCOMPARE(audit(u"executor.harness_install"_s).size(), 0);
    QVERIFY(!QFileInfo::exists(m_harnessHome));

    // An administrator's install is not the project's business either.
    CLOOP_COMPARE_EXIT(install(u"testharness"_s), 0);
    const qint64 runId = hub.cliItems({ u"run"_s, u"list"_s, u"--all"_s, u"--json"_s })
                             .at(0)
                             .toObject()
                             .value("id"_L1)
                             .toInteger();
    const CliResult listed = hub.cliAs(token, { u"run"_s, u"list"_s, u"--all"_s, u"--json"_s });
    CLOOP_COMPARE_EXIT(listed, 0);
    const QJsonValue items
        = QJsonDocument::fromJson(listed.stdoutText().toUtf8()).object().value("items"_L1);
    QVERIFY2(items.isArray(), qPrintable(listed.describe()));
    QCOMPARE(items.toArray().size(), 0);
    const CliResult logs = hub.cliAs(token, { u"run"_s, u"logs"_s, QString::number(runId) });
    CLOOP_COMPARE_EXIT(logs, 1);
    QVERIFY2(!logs.stdoutText().contains(u"installing"_s), qPrintable(logs.describe()));
}

void TestHarnessInstall::anInstallerThatFailsSaysSo()
{
    const CliResult failed = install(u"failingharness"_s);
    CLOOP_COMPARE_EXIT(failed, 7);
    QVERIFY2(failed.stderrText().contains(u"no network here"_s), qPrintable(failed.describe()));
    QVERIFY2(failed.stderrText().contains(u"failed"_s), qPrintable(failed.describe()));
    QVERIFY(!executor()
                 .value("capabilities"_L1)
                 .toObject()
                 .value("harnesses"_L1)
                 .toObject()
                 .contains("failingharness"_L1));
}

QTEST_GUILESS_MAIN(TestHarnessInstall)
#include "tst_harnessinstall.moc"
