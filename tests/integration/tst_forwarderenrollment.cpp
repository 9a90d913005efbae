// Integration: enrolling a forwarder through the real `cloop` command line
// and connecting the real `cloop-forward` (and `cloop forward`) to a real hub
// on 127.0.0.1. Every test function has a hub of its own.

#include "support/testrig.h"

#include <QDateTime>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTest>

#include <sys/stat.h>

using namespace cloop::testing;

namespace {

int permissionBits(const QString &path)
{
    struct stat info
    {
    };
    if (::stat(QFile::encodeName(path).constData(), &info) != 0)
        return -1;
    return static_cast<int>(info.st_mode & 07777);
}

QJsonObject readJsonFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll()).object();
}

// The words of the row of `cloop forward list` whose NAME is `name`.
QStringList tableRowWords(const QString &table, const QString &name)
{
    const QStringList lines = table.split(QLatin1Char('\n'));
    for (const QString &line : lines) {
        const QStringList words = line.split(QLatin1Char(' '), Qt::SkipEmptyParts);
        if (words.size() > 1 && words.at(1) == name)
            return words;
    }
    return {};
}

} // namespace

class TestForwarderEnrollment final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void enrollConnectList();
    void plainRestartUsesSavedCredential();
    void tokenFileDeletedAfterRedemption();
    void aServiceNamingTheRedeemedTokenFileRestartsWithItsCredential();
    void umbrellaRunsForwarder();
    void thePrintedAdviceKeepsTheBundleOffCommandLines();
    void aLostBundleIsReplacedAndTheOldOneRefused();

private:
    std::unique_ptr<TestRig> m_rig;
};

void TestForwarderEnrollment::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
}

void TestForwarderEnrollment::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

void TestForwarderEnrollment::enrollConnectList()
{
    HubProcess &hub = m_rig->hub();
    QCOMPARE(hub.pin(), hub.tlsInitPin());
    // `cloop hub pin` prints the same, for comparing with a client's first contact.
    const CliResult pinned = hub.cli(
        { QStringLiteral("hub"), QStringLiteral("pin"), QStringLiteral("--data"), hub.dataDir() });
    CLOOP_COMPARE_EXIT(pinned, 0);
    QCOMPARE(pinned.stdoutText().trimmed(), hub.pin());
    const CliResult missing = hub.cli({ QStringLiteral("hub"), QStringLiteral("pin"),
        QStringLiteral("--certificate"), hub.dataDir() + QLatin1String("/no-such.pem") });
    CLOOP_COMPARE_EXIT(missing, 1);
    QVERIFY2(
        missing.stderrText().contains(QLatin1String("tls-init")), qPrintable(missing.describe()));

    // Given an enrollment made with the command line
    const Enrollment enrollment = hub.enroll(QStringLiteral("lab-key"));
    QVERIFY2(enrollment.ok, qPrintable(enrollment.error));
    QVERIFY2(
        enrollment.bundle.startsWith(QLatin1String("cloopfwd1.")), qPrintable(enrollment.bundle));
    QVERIFY2(enrollment.command.endsWith(
                 QLatin1String(" && cloop forward --token-file forwarder.bundle")),
        qPrintable(enrollment.command));
    QVERIFY2(
        !enrollment.command.contains(QLatin1String("--bundle")), qPrintable(enrollment.command));
    const QJsonObject record = enrollment.answer.value(QLatin1String("forwarder")).toObject();
    QCOMPARE(record.value(QLatin1String("name")).toString(), QStringLiteral("lab-key"));
    QCOMPARE(
        record.value(QLatin1String("state")).toString(), QStringLiteral("awaiting_enrollment"));
    QVERIFY(QDateTime::fromString(
        enrollment.answer.value(QLatin1String("token_expires_at")).toString(), Qt::ISODateWithMs)
                .isValid());

    // When the forwarder runs with the bundle
    const QString credentialFile = m_rig->path(QStringLiteral("forwarder.json"));
    ForwarderProcess &forwarder = m_rig->addForwarder({ QStringLiteral("--bundle"),
        enrollment.bundle, QStringLiteral("--credential-file"), credentialFile });
    QVERIFY2(forwarder.start(), qPrintable(forwarder.describe()));

    // Then the hub lists it connected
    QTRY_VERIFY2_WITH_TIMEOUT(
        hub.forwarderConnected(enrollment.id), qPrintable(forwarder.describe()), kLongWaitMs);
    QVERIFY2(forwarder.isRunning(), qPrintable(forwarder.describe()));
    QVERIFY2(forwarder.waitForStderr(QStringLiteral("connected to the hub")),
        qPrintable(forwarder.describe()));
    const QJsonObject listed = hub.forwarder(enrollment.id);
    QCOMPARE(listed.value(QLatin1String("state")).toString(), QStringLiteral("connected"));
    QVERIFY(listed.value(QLatin1String("enrolled_at")).isString());

    // and the credential was kept with mode 0600, holding what a restart needs
    QVERIFY2(QFile::exists(credentialFile), qPrintable(forwarder.describe()));
    QCOMPARE(permissionBits(credentialFile), 0600);
    const QJsonObject saved = readJsonFile(credentialFile);
    const QJsonObject access = hub.localAccess();
    QCOMPARE(saved.value(QLatin1String("server")).toString(),
        access.value(QLatin1String("url")).toString());
    QCOMPARE(saved.value(QLatin1String("id")).toInteger(), enrollment.id);
    QCOMPARE(saved.value(QLatin1String("name")).toString(), QStringLiteral("lab-key"));
    QVERIFY2(saved.value(QLatin1String("credential")).toString().startsWith(QLatin1String("cfc_")),
        qPrintable(QString::fromUtf8(QJsonDocument(saved).toJson())));
    QCOMPARE(saved.value(QLatin1String("pin")).toString(),
        access.value(QLatin1String("pin")).toString());
    QVERIFY(QDateTime::fromString(
        saved.value(QLatin1String("enrolled_at")).toString(), Qt::ISODateWithMs)
                .isValid());
    // --credential-file means the default place stays untouched.
    QVERIFY(!QFile::exists(forwarder.home() + QLatin1String("/.cloop/forwarder.json")));

    // and the table names it connected
    const CliResult table = hub.cli({ QStringLiteral("forward"), QStringLiteral("list") });
    CLOOP_COMPARE_EXIT(table, 0);
    QVERIFY2(table.stdoutText().contains(QLatin1String("lab-key")), qPrintable(table.describe()));
    const QStringList row = tableRowWords(table.stdoutText(), QStringLiteral("lab-key"));
    QVERIFY2(row.contains(QLatin1String("connected")), qPrintable(table.describe()));
}

void TestForwarderEnrollment::plainRestartUsesSavedCredential()
{
    HubProcess &hub = m_rig->hub();
    ConnectedForwarder first;
    QVERIFY2(m_rig->enrollAndConnect(QStringLiteral("restarted"), first),
        qPrintable(m_rig->lastError()));
    QFile credential(first.credentialFile);
    QVERIFY(credential.open(QIODevice::ReadOnly));
    const QByteArray savedBefore = credential.readAll();
    credential.close();

    // When the daemon is stopped the ordinary way
    QVERIFY(first.process->terminate());
    QTRY_VERIFY_WITH_TIMEOUT(first.process->hasExited(), kLongWaitMs);
    QVERIFY2(first.process->exitCode() == 0, qPrintable(first.process->describe()));
    QTRY_VERIFY_WITH_TIMEOUT(!hub.forwarderConnected(first.enrollment.id), kLongWaitMs);
    QCOMPARE(hub.forwarder(first.enrollment.id).value(QLatin1String("state")).toString(),
        QStringLiteral("disconnected"));

    // and started again with no bundle
    ForwarderProcess &again = m_rig->addForwarder(
        { QStringLiteral("--credential-file"), first.credentialFile }, first.process->home());
    QVERIFY2(
        m_rig->startAndAwaitConnection(again, first.enrollment.id), qPrintable(m_rig->lastError()));

    // Then it said hello with the saved credential, not a new enrollment
    QVERIFY2(
        !again.stderrText().contains(QLatin1String("enrolled as")), qPrintable(again.describe()));
    QVERIFY(credential.open(QIODevice::ReadOnly));
    QCOMPARE(credential.readAll(), savedBefore);
}

void TestForwarderEnrollment::tokenFileDeletedAfterRedemption()
{
    HubProcess &hub = m_rig->hub();
    const Enrollment enrollment = hub.enroll(QStringLiteral("from-file"));
    QVERIFY2(enrollment.ok, qPrintable(enrollment.error));
    const QString tokenFile = m_rig->path(QStringLiteral("bundle.txt"));
    {
        QFile file(tokenFile);
        QVERIFY(file.open(QIODevice::WriteOnly));
        QVERIFY(file.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner));
        QVERIFY(file.write(enrollment.bundle.toUtf8() + '\n') > 0);
    }
    const QString credentialFile = m_rig->path(QStringLiteral("from-file.json"));

    ForwarderProcess &forwarder = m_rig->addForwarder({ QStringLiteral("--token-file"), tokenFile,
        QStringLiteral("--credential-file"), credentialFile });
    QVERIFY2(
        m_rig->startAndAwaitConnection(forwarder, enrollment.id), qPrintable(m_rig->lastError()));

    QTRY_VERIFY2_WITH_TIMEOUT(
        !QFile::exists(tokenFile), qPrintable(forwarder.describe()), kLongWaitMs);
    QVERIFY(QFile::exists(credentialFile));
    QVERIFY(forwarder.isRunning());
}

void TestForwarderEnrollment::aServiceNamingTheRedeemedTokenFileRestartsWithItsCredential()
{
    // As the forwarder's unit starts it: always with the same token file.
    HubProcess &hub = m_rig->hub();
    const Enrollment enrollment = hub.enroll(QStringLiteral("service"));
    QVERIFY2(enrollment.ok, qPrintable(enrollment.error));
    const QString tokenFile = m_rig->path(QStringLiteral("service.bundle"));
    const QString credentialFile = m_rig->path(QStringLiteral("service.json"));
    const QStringList unit { QStringLiteral("--credential-file"), credentialFile,
        QStringLiteral("--token-file"), tokenFile };
    const QString home = m_rig->newHome();

    // Before the bundle is there, it says what is missing and stops.
    const CliResult early = m_rig->runForwarder(unit, home);
    CLOOP_COMPARE_EXIT(early, 2);
    QVERIFY2(early.stderrText().contains(tokenFile), qPrintable(early.describe()));

    {
        QFile file(tokenFile);
        QVERIFY(file.open(QIODevice::WriteOnly, QFileDevice::ReadOwner | QFileDevice::WriteOwner));
        QVERIFY(file.write(enrollment.bundle.toUtf8() + '\n') > 0);
    }
    ForwarderProcess &first = m_rig->addForwarder(unit, home);
    QVERIFY2(m_rig->startAndAwaitConnection(first, enrollment.id), qPrintable(m_rig->lastError()));
    QTRY_VERIFY_WITH_TIMEOUT(!QFile::exists(tokenFile), kLongWaitMs);
    const QString credential
        = readJsonFile(credentialFile).value(QLatin1String("credential")).toString();
    QVERIFY(first.terminate());
    QTRY_VERIFY_WITH_TIMEOUT(first.hasExited(), kLongWaitMs);

    // The next start, with the token file gone, reconnects with the credential.
    ForwarderProcess &second = m_rig->addForwarder(unit, home);
    QVERIFY2(m_rig->startAndAwaitConnection(second, enrollment.id), qPrintable(m_rig->lastError()));
    QVERIFY2(second.stderrText().contains(QLatin1String("is gone (redeemed)")),
        qPrintable(second.describe()));
    QVERIFY2(
        !second.stderrText().contains(QLatin1String("enrolled as")), qPrintable(second.describe()));
    QCOMPARE(
        readJsonFile(credentialFile).value(QLatin1String("credential")).toString(), credential);
}

void TestForwarderEnrollment::umbrellaRunsForwarder()
{
    HubProcess &hub = m_rig->hub();
    const Enrollment enrollment = hub.enroll(QStringLiteral("umbrella"));
    QVERIFY2(enrollment.ok, qPrintable(enrollment.error));
    const QString credentialFile = m_rig->path(QStringLiteral("umbrella.json"));

    // `cloop forward …`, the command the enrollment printed, not cloop-forward
    ForwarderProcess &forwarder
        = m_rig->addForwarder({ QStringLiteral("--bundle"), enrollment.bundle,
                                  QStringLiteral("--credential-file"), credentialFile },
            {}, ForwarderProcess::Program::Umbrella);
    QVERIFY2(
        m_rig->startAndAwaitConnection(forwarder, enrollment.id), qPrintable(m_rig->lastError()));
    QVERIFY2(forwarder.waitForStderr(QStringLiteral("connected to the hub")),
        qPrintable(forwarder.describe()));
    QVERIFY(readJsonFile(credentialFile)
                .value(QLatin1String("credential"))
                .toString()
                .startsWith(QLatin1String("cfc_")));
    QCOMPARE(permissionBits(credentialFile), 0600);

    QVERIFY(forwarder.terminate());
    QTRY_VERIFY_WITH_TIMEOUT(forwarder.hasExited(), kLongWaitMs);
    QVERIFY2(forwarder.exitCode() == 0, qPrintable(forwarder.describe()));
}

void TestForwarderEnrollment::thePrintedAdviceKeepsTheBundleOffCommandLines()
{
    HubProcess &hub = m_rig->hub();
    // What `cloop forward enroll` tells a person to do, as printed.
    const CliResult printed
        = hub.cli({ QStringLiteral("forward"), QStringLiteral("enroll"), QStringLiteral("--name"),
            QStringLiteral("advised"), QStringLiteral("--interface"), QStringLiteral("eth9") });
    CLOOP_COMPARE_EXIT(printed, 0);
    const QStringList lines = printed.stdoutText().split(QLatin1Char('\n'));
    QString bundle;
    QString store;
    QStringList starts; // the foreground form, then the service's
    for (const QString &line : lines) {
        const QString text = line.trimmed();
        if (text.startsWith(QLatin1String("cloopfwd1.")))
            bundle = text;
        else if (text.startsWith(QLatin1String("(umask 077;")) && store.isEmpty())
            store = text.section(QLatin1Char('#'), 0, 0).trimmed();
        else if (text.startsWith(QLatin1String("cloop forward ")))
            starts.append(text);
    }
    QVERIFY2(!bundle.isEmpty() && !store.isEmpty() && starts.size() == 2,
        qPrintable(printed.describe()));
    const QString start = starts.constFirst();
    // No command it prints carries the bundle.
    QVERIFY2(!starts.join(QLatin1Char(' ')).contains(bundle) && !store.contains(bundle),
        qPrintable(printed.describe()));
    QVERIFY2(start.startsWith(QLatin1String("cloop forward --token-file ")), qPrintable(start));
    QVERIFY2(starts.constLast().startsWith(QLatin1String("cloop forward install --token-file ")),
        qPrintable(starts.constLast()));

    // Followed to the letter, in a folder of the device's machine: the store
    // line takes the pasted bundle into a file only its owner may read,
    const QString machine = m_rig->newHome();
    QProcessEnvironment environment = childEnvironment(machine);
    const CliResult stored = [&] {
        QProcess shell;
        shell.setWorkingDirectory(machine);
        shell.setProcessEnvironment(environment);
        shell.start(QStringLiteral("/bin/sh"), { QStringLiteral("-c"), store });
        shell.waitForStarted();
        shell.write(bundle.toLatin1() + '\n');
        shell.closeWriteChannel();
        CliResult result;
        result.started = shell.waitForFinished(kLongWaitMs);
        result.exitCode = shell.exitStatus() == QProcess::NormalExit ? shell.exitCode() : -1;
        return result;
    }();
    QCOMPARE(stored.exitCode, 0);
    const QString tokenFile = machine + QLatin1Char('/') + start.section(QLatin1Char(' '), -1);
    QCOMPARE(permissionBits(tokenFile), 0600);

    // and the start line enrolls (run from that folder, with the forwarder
    // binary for `cloop forward`), with no bundle in its process list.
    QStringList arguments = start.split(QLatin1Char(' ')).mid(2);
    arguments.last() = tokenFile;
    ForwarderProcess &forwarder = m_rig->addForwarder(arguments, machine);
    QVERIFY(forwarder.start());
    QVERIFY2(forwarder.waitForStderr(QStringLiteral("connected to the hub as forwarder")),
        qPrintable(forwarder.describe()));
    QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(forwarder.processId()));
    QVERIFY(cmdline.open(QIODevice::ReadOnly));
    QVERIFY(!cmdline.readAll().contains(bundle.toLatin1()));
    QVERIFY(!QFile::exists(tokenFile));
    QVERIFY(QFile::exists(machine + QLatin1String("/.cloop/forwarder.json")));
}

void TestForwarderEnrollment::aLostBundleIsReplacedAndTheOldOneRefused()
{
    HubProcess &hub = m_rig->hub();
    const Enrollment lost = hub.enroll(QStringLiteral("bench-probe"));
    QVERIFY2(lost.ok, qPrintable(lost.error));
    const QString id = QString::number(lost.id);

    // Arguments are checked before anything is sent.
    const CliResult noId = hub.cli({ QStringLiteral("forward"), QStringLiteral("reenroll") });
    CLOOP_COMPARE_EXIT(noId, 2);
    const CliResult badTtl = hub.cli({ QStringLiteral("forward"), QStringLiteral("reenroll"), id,
        QStringLiteral("--token-ttl"), QStringLiteral("soon") });
    CLOOP_COMPARE_EXIT(badTtl, 2);
    QVERIFY2(
        badTtl.stderrText().contains(QLatin1String("--token-ttl")), qPrintable(badTtl.describe()));
    const CliResult nobody = hub.cli(
        { QStringLiteral("forward"), QStringLiteral("reenroll"), QString::number(lost.id + 100) });
    CLOOP_COMPARE_EXIT(nobody, 1);
    QVERIFY2(nobody.stderrText().contains(QLatin1String("no forwarder with id")),
        qPrintable(nobody.describe()));

    // A new bundle for the same forwarder, printed as enroll prints it.
    const CliResult renewed
        = hub.cli({ QStringLiteral("forward"), QStringLiteral("reenroll"), id });
    CLOOP_COMPARE_EXIT(renewed, 0);
    QVERIFY2(renewed.stdoutText().contains(QLatin1String("earlier ones no longer work")),
        qPrintable(renewed.describe()));
    QVERIFY2(renewed.stdoutText().contains(QLatin1String("cloop forward --token-file")),
        qPrintable(renewed.describe()));
    const QJsonValue again = hub.cliJson({ QStringLiteral("forward"), QStringLiteral("reenroll"),
        id, QStringLiteral("--token-ttl"), QStringLiteral("2h"), QStringLiteral("--json") });
    QVERIFY2(again.isObject(), qPrintable(hub.lastError()));
    const QString bundle = again.toObject().value(QLatin1String("bundle")).toString();
    QVERIFY2(bundle.startsWith(QLatin1String("cloopfwd1.")), qPrintable(bundle));
    QVERIFY(bundle != lost.bundle);
    QCOMPARE(again.toObject()
                 .value(QLatin1String("forwarder"))
                 .toObject()
                 .value(QLatin1String("id"))
                 .toInteger(),
        lost.id);
    const QDateTime until = QDateTime::fromString(
        again.toObject().value(QLatin1String("token_expires_at")).toString(), Qt::ISODateWithMs);
    QVERIFY(until.isValid());
    QVERIFY(until < QDateTime::currentDateTimeUtc().addSecs(2 * 3600 + 60));

    // The lost bundle, found and pasted after all, is refused and keeps
    // nothing,
    const QString staleCredential = m_rig->path(QStringLiteral("stale.json"));
    ForwarderProcess &stale = m_rig->addForwarder({ QStringLiteral("--bundle"), lost.bundle,
        QStringLiteral("--credential-file"), staleCredential });
    QVERIFY2(stale.start(), qPrintable(stale.describe()));
    QTRY_VERIFY2_WITH_TIMEOUT(stale.hasExited(), qPrintable(stale.describe()), kLongWaitMs);
    QVERIFY2(stale.exitCode() == 3, qPrintable(stale.describe()));
    QVERIFY2(stale.stderrText().contains(QLatin1String("reenroll")), qPrintable(stale.describe()));
    QVERIFY(!QFile::exists(staleCredential));

    // while the newest connects as the same forwarder,
    ForwarderProcess &current = m_rig->addForwarder({ QStringLiteral("--bundle"), bundle,
        QStringLiteral("--credential-file"), m_rig->path(QStringLiteral("current.json")) });
    QVERIFY2(current.start(), qPrintable(current.describe()));
    QTRY_VERIFY2_WITH_TIMEOUT(
        hub.forwarderConnected(lost.id), qPrintable(current.describe()), kLongWaitMs);

    // and a forwarder that has enrolled is never given another bundle.
    const CliResult enrolled
        = hub.cli({ QStringLiteral("forward"), QStringLiteral("reenroll"), id });
    CLOOP_COMPARE_EXIT(enrolled, 1);
    QVERIFY2(enrolled.stderrText().contains(QLatin1String("redeemed its token")),
        qPrintable(enrolled.describe()));
}

QTEST_GUILESS_MAIN(TestForwarderEnrollment)
#include "tst_forwarderenrollment.moc"
