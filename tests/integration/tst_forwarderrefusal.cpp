// Integration: bundles the hub must not honour. A spent token, an expired
// token and a bundle whose pin is not the hub's key never get a forwarder
// connected, and they say why. A bundle or credential file that pins no key
// is refused unless the operator chose CA-only trust, and what the daemon
// says names only options it has. Every test function has a hub of its own.

#include "support/testrig.h"

#include "common/identity/enrollmentbundle.h"

#include <QElapsedTimer>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTest>

using namespace cloop;
using namespace cloop::testing;

namespace {

QString randomPin()
{
    QByteArray digest(32, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(
        reinterpret_cast<quint32 *>(digest.data()), digest.size() / 4);
    return QStringLiteral("sha256:") + QString::fromLatin1(digest.toBase64());
}

} // namespace

class TestForwarderRefusal final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void reusedTokenRefused();
    void expiredTokenRefused();
    void wrongPinRefused();
    void anUnpinnedBundleIsRefusedNamingItsFile();
    void anUnpinnedCredentialFileIsRefusedNamingIt();

private:
    std::unique_ptr<TestRig> m_rig;
};

void TestForwarderRefusal::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
}

void TestForwarderRefusal::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

void TestForwarderRefusal::reusedTokenRefused()
{
    HubProcess &hub = m_rig->hub();
    ConnectedForwarder first;
    QVERIFY2(
        m_rig->enrollAndConnect(QStringLiteral("original"), first), qPrintable(m_rig->lastError()));

    // When a second machine pastes the same bundle
    const QString secondCredential = m_rig->path(QStringLiteral("second.json"));
    ForwarderProcess &second = m_rig->addForwarder({ QStringLiteral("--bundle"),
        first.enrollment.bundle, QStringLiteral("--credential-file"), secondCredential });
    QVERIFY2(second.start(), qPrintable(second.describe()));

    // Then it is refused for good and keeps nothing
    QTRY_VERIFY2_WITH_TIMEOUT(second.hasExited(), qPrintable(second.describe()), kLongWaitMs);
    QVERIFY2(second.exitCode() == 3, qPrintable(second.describe()));
    QVERIFY2(
        second.stderrText().contains(QLatin1String("already used")), qPrintable(second.describe()));
    QVERIFY(!QFile::exists(secondCredential));

    // and the first one is not disturbed
    QVERIFY2(first.process->isRunning(), qPrintable(first.process->describe()));
    QVERIFY(hub.forwarderConnected(first.enrollment.id));
    QCOMPARE(first.process->stderrCount(QStringLiteral("connected to the hub as forwarder")), 1);
}

void TestForwarderRefusal::expiredTokenRefused()
{
    HubProcess &hub = m_rig->hub();
    const Enrollment enrollment = hub.enroll(QStringLiteral("late"),
        { QStringLiteral("--usb"), QStringLiteral("1050:0407") },
        { QStringLiteral("--token-ttl"), QStringLiteral("1s") });
    QVERIFY2(enrollment.ok, qPrintable(enrollment.error));
    // Counted from after the answer, so this wait can only be too long: the
    // token's one second began before the hub answered.
    QElapsedTimer sinceEnrollment;
    sinceEnrollment.start();
    QTRY_VERIFY_WITH_TIMEOUT(sinceEnrollment.hasExpired(2000), 10'000);

    const QString credentialFile = m_rig->path(QStringLiteral("late.json"));
    ForwarderProcess &forwarder = m_rig->addForwarder({ QStringLiteral("--bundle"),
        enrollment.bundle, QStringLiteral("--credential-file"), credentialFile });
    QVERIFY2(forwarder.start(), qPrintable(forwarder.describe()));
    QTRY_VERIFY2_WITH_TIMEOUT(forwarder.hasExited(), qPrintable(forwarder.describe()), kLongWaitMs);
    QVERIFY2(forwarder.exitCode() == 3, qPrintable(forwarder.describe()));
    QVERIFY2(forwarder.stderrText().contains(QLatin1String("expired")),
        qPrintable(forwarder.describe()));
    QVERIFY(!QFile::exists(credentialFile));
    QVERIFY(!QFile::exists(forwarder.home() + QLatin1String("/.cloop/forwarder.json")));
    QCOMPARE(hub.forwarder(enrollment.id).value(QLatin1String("state")).toString(),
        QStringLiteral("awaiting_enrollment"));
}

void TestForwarderRefusal::wrongPinRefused()
{
    HubProcess &hub = m_rig->hub();
    const Enrollment enrollment = hub.enroll(QStringLiteral("pinned"));
    QVERIFY2(enrollment.ok, qPrintable(enrollment.error));

    // Given a bundle for this hub and token that pins some other key
    auto decoded = identity::EnrollmentBundle::decode(
        enrollment.bundle, identity::EnrollmentBundle::Kind::Forwarder);
    QVERIFY2(decoded, qPrintable(decoded ? QString() : decoded.error().message));
    const QString realPin = hub.localAccess().value(QLatin1String("pin")).toString();
    QCOMPARE(decoded->pins, realPin);
    QCOMPARE(decoded->hub.toString(), hub.localAccess().value(QLatin1String("url")).toString());
    identity::EnrollmentBundle forged = *decoded;
    forged.pins = randomPin();
    QVERIFY(forged.pins != realPin);
    const QString forgedBundle = forged.encode();

    // When the forwarder runs with it
    const QString credentialFile = m_rig->path(QStringLiteral("pinned.json"));
    ForwarderProcess &misled = m_rig->addForwarder({ QStringLiteral("--bundle"), forgedBundle,
        QStringLiteral("--credential-file"), credentialFile });
    QVERIFY2(misled.start(), qPrintable(misled.describe()));

    // Then it refuses the hub before sending the token, naming both keys
    QVERIFY2(misled.waitForStderr(realPin), qPrintable(misled.describe()));
    QVERIFY2(misled.stderrText().contains(forged.pins), qPrintable(misled.describe()));
    QVERIFY2(misled.isRunning(), qPrintable(misled.describe()));
    QVERIFY2(!misled.stderrText().contains(QLatin1String("connected to the hub")),
        qPrintable(misled.describe()));
    QVERIFY2(
        !misled.stderrText().contains(QLatin1String("enrolled as")), qPrintable(misled.describe()));
    const QJsonObject listed = hub.forwarder(enrollment.id);
    QCOMPARE(listed.value(QLatin1String("connected")).toBool(true), false);
    QCOMPARE(
        listed.value(QLatin1String("state")).toString(), QStringLiteral("awaiting_enrollment"));
    QVERIFY(!QFile::exists(credentialFile));
    QVERIFY(misled.terminate());
    QTRY_VERIFY_WITH_TIMEOUT(misled.hasExited(), kLongWaitMs);
    QVERIFY2(misled.exitCode() == 0, qPrintable(misled.describe()));

    // and the token was not spent: the genuine bundle still enrolls
    ForwarderProcess &genuine
        = m_rig->addForwarder({ QStringLiteral("--bundle"), enrollment.bundle,
                                  QStringLiteral("--credential-file"), credentialFile },
            misled.home());
    QVERIFY2(
        m_rig->startAndAwaitConnection(genuine, enrollment.id), qPrintable(m_rig->lastError()));
    QVERIFY(QFile::exists(credentialFile));
}

void TestForwarderRefusal::anUnpinnedBundleIsRefusedNamingItsFile()
{
    HubProcess &hub = m_rig->hub();
    const Enrollment enrollment = hub.enroll(QStringLiteral("unpinned"));
    QVERIFY2(enrollment.ok, qPrintable(enrollment.error));
    // Given a genuine bundle with its pin taken out, in a token file,
    auto decoded = identity::EnrollmentBundle::decode(
        enrollment.bundle, identity::EnrollmentBundle::Kind::Forwarder);
    QVERIFY(decoded);
    identity::EnrollmentBundle unpinned = *decoded;
    unpinned.pins.clear();
    const QString tokenFile = m_rig->path(QStringLiteral("unpinned.bundle"));
    {
        QFile file(tokenFile);
        QVERIFY(file.open(QIODevice::WriteOnly, QFileDevice::ReadOwner | QFileDevice::WriteOwner));
        file.write(unpinned.encode().toLatin1());
    }
    const QString credentialFile = m_rig->path(QStringLiteral("unpinned.json"));
    const QString home = m_rig->newHome();

    // when the forwarder starts with it, then it stops at once, naming the
    // file and the one option that would take it, and spends nothing.
    const CliResult refused
        = m_rig->runForwarder({ QStringLiteral("--token-file"), tokenFile,
                                  QStringLiteral("--credential-file"), credentialFile },
            home);
    CLOOP_COMPARE_EXIT(refused, 2);
    QVERIFY2(refused.stderrText().contains(tokenFile), qPrintable(refused.describe()));
    QVERIFY2(
        refused.stderrText().contains(QLatin1String("no pin")), qPrintable(refused.describe()));
    QVERIFY2(refused.stderrText().contains(QLatin1String("--trust-ca-only")),
        qPrintable(refused.describe()));
    QVERIFY(QFile::exists(tokenFile));
    QVERIFY(!QFile::exists(credentialFile));
    QCOMPARE(hub.forwarder(enrollment.id).value(QLatin1String("state")).toString(),
        QStringLiteral("awaiting_enrollment"));

    // With --trust-ca-only it tries, warning on every attempt, and the hub's
    // certificate (no public CA vouches for it) is refused with advice in
    // this program's own options: --ca, never --pin, which it lacks.
    ForwarderProcess &caOnly = m_rig->addForwarder(
        { QStringLiteral("--token-file"), tokenFile, QStringLiteral("--credential-file"),
            credentialFile, QStringLiteral("--trust-ca-only") },
        home);
    QVERIFY2(caOnly.start(), qPrintable(caOnly.describe()));
    QVERIFY2(waitUntil([&] { return caOnly.stderrCount(QStringLiteral("UNPINNED")) >= 2; }),
        qPrintable(caOnly.describe()));
    QVERIFY2(
        caOnly.stderrText().contains(QLatin1String("not trusted")), qPrintable(caOnly.describe()));
    QVERIFY2(caOnly.stderrText().contains(QLatin1String("--ca")), qPrintable(caOnly.describe()));
    QVERIFY2(!caOnly.stderrText().contains(QLatin1String("--pin")), qPrintable(caOnly.describe()));
    QVERIFY(caOnly.isRunning());
    QVERIFY(!QFile::exists(credentialFile));
    QVERIFY(caOnly.terminate());
    QVERIFY(caOnly.waitForExit());
}

void TestForwarderRefusal::anUnpinnedCredentialFileIsRefusedNamingIt()
{
    ConnectedForwarder enrolled;
    QVERIFY2(m_rig->enrollAndConnect(QStringLiteral("emptied"), enrolled),
        qPrintable(m_rig->lastError()));
    QVERIFY(enrolled.process->terminate());
    QVERIFY(enrolled.process->waitForExit());
    // Given its credential file with the pin emptied,
    QFile file(enrolled.credentialFile);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QJsonObject saved = QJsonDocument::fromJson(file.readAll()).object();
    file.close();
    saved.insert(QStringLiteral("pin"), QString());
    QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
    file.write(QJsonDocument(saved).toJson());
    file.close();

    // then the forwarder does not fall back to CA checks: it stops, naming
    // the file and the option that would.
    const CliResult refused = m_rig->runForwarder(
        { QStringLiteral("--credential-file"), enrolled.credentialFile }, enrolled.process->home());
    CLOOP_COMPARE_EXIT(refused, 2);
    QVERIFY2(
        refused.stderrText().contains(enrolled.credentialFile), qPrintable(refused.describe()));
    QVERIFY2(
        refused.stderrText().contains(QLatin1String("no pin")), qPrintable(refused.describe()));
    QVERIFY2(refused.stderrText().contains(QLatin1String("--trust-ca-only")),
        qPrintable(refused.describe()));
    QVERIFY(!m_rig->hub().forwarderConnected(enrolled.enrollment.id));

    // Asked for, CA-only trust is what it gets: warned, and refused here.
    ForwarderProcess &caOnly
        = m_rig->addForwarder({ QStringLiteral("--credential-file"), enrolled.credentialFile,
                                  QStringLiteral("--trust-ca-only") },
            enrolled.process->home());
    QVERIFY2(caOnly.start(), qPrintable(caOnly.describe()));
    QVERIFY2(caOnly.waitForStderr(QStringLiteral("not trusted")), qPrintable(caOnly.describe()));
    QVERIFY2(
        caOnly.stderrText().contains(QLatin1String("UNPINNED")), qPrintable(caOnly.describe()));
    QVERIFY2(!caOnly.stderrText().contains(QLatin1String("--pin")), qPrintable(caOnly.describe()));
    QVERIFY(!m_rig->hub().forwarderConnected(enrolled.enrollment.id));
}

QTEST_GUILESS_MAIN(TestForwarderRefusal)
#include "tst_forwarderrefusal.moc"
