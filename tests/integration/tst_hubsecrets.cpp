// Integration: what the hub does with secrets. Credentials are typed (a
// forwarder's credential or an enrollment token never opens the admin API),
// and the database keeps only SHA-256 hashes. Every test function has a hub
// of its own on 127.0.0.1.

#include "support/pinnedhttp.h"
#include "support/testrig.h"

#include "common/identity/enrollmentbundle.h"

#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QTest>

using namespace cloop;
using namespace cloop::testing;

namespace {

QString tokenOf(const QString &bundle)
{
    auto decoded
        = identity::EnrollmentBundle::decode(bundle, identity::EnrollmentBundle::Kind::Forwarder);
    return decoded ? decoded->token : QString();
}

QString credentialIn(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(file.readAll())
        .object()
        .value(QLatin1String("credential"))
        .toString();
}

QByteArray randomBytes(int words)
{
    QByteArray bytes(words * 4, Qt::Uninitialized);
    QRandomGenerator::system()->fillRange(reinterpret_cast<quint32 *>(bytes.data()), words);
    return bytes;
}

// hub.db and, when there is one, its write-ahead log: everything SQLite has
// written, also what is not checkpointed yet.
QByteArray databaseBytes(const QString &databasePath)
{
    QByteArray bytes;
    for (const QString &path : { databasePath, databasePath + QLatin1String("-wal") }) {
        QFile file(path);
        if (file.open(QIODevice::ReadOnly))
            bytes += file.readAll();
    }
    return bytes;
}

} // namespace

class TestHubSecrets final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void forwarderCredentialRefusedOnAdminApi();
    void databaseHoldsNoSecrets();

private:
    std::unique_ptr<TestRig> m_rig;
};

void TestHubSecrets::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
}

void TestHubSecrets::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

void TestHubSecrets::forwarderCredentialRefusedOnAdminApi()
{
    HubProcess &hub = m_rig->hub();
    ConnectedForwarder forwarder;
    QVERIFY2(m_rig->enrollAndConnect(QStringLiteral("typed"), forwarder),
        qPrintable(m_rig->lastError()));
    const QString credential = credentialIn(forwarder.credentialFile);
    QVERIFY2(credential.startsWith(QLatin1String("cfc_")), qPrintable(credential));
    const Enrollment pending = hub.enroll(QStringLiteral("pending"));
    QVERIFY2(pending.ok, qPrintable(pending.error));
    const QString enrollmentToken = tokenOf(pending.bundle);
    QVERIFY2(enrollmentToken.startsWith(QLatin1String("cft_")), qPrintable(enrollmentToken));

    const QUrl url = hub.apiUrl(QStringLiteral("/api/forwarders"));
    const QString pin = hub.pin();

    // The test's own client refuses a key it was not told to trust.
    const HttpResult wrongKey
        = pinnedGet(url, QStringLiteral("sha256:") + QString::fromLatin1(randomBytes(8).toBase64()),
            hub.adminToken());
    QVERIFY2(wrongKey.status == 0 && wrongKey.error.contains(QLatin1String("does not match")),
        qPrintable(wrongKey.describe()));

    // A forwarder credential is the wrong kind of secret for the admin API
    const HttpResult asForwarder = pinnedGet(url, pin, credential);
    QVERIFY2(asForwarder.status == 401, qPrintable(asForwarder.describe()));
    QCOMPARE(asForwarder.errorCode(), QStringLiteral("wrong_credential_type"));
    QVERIFY2(!asForwarder.body.contains("\"forwarders\""), qPrintable(asForwarder.describe()));

    // the administrator's token is the right one
    const HttpResult asAdmin = pinnedGet(url, pin, hub.adminToken());
    QVERIFY2(asAdmin.status == 200, qPrintable(asAdmin.describe()));
    const QJsonArray listed = asAdmin.json().value(QLatin1String("forwarders")).toArray();
    QCOMPARE(listed.size(), 2);

    // an enrollment token is not an API token either
    const HttpResult asEnrollment = pinnedGet(url, pin, enrollmentToken);
    QVERIFY2(asEnrollment.status == 401, qPrintable(asEnrollment.describe()));
    QCOMPARE(asEnrollment.errorCode(), QStringLiteral("wrong_credential_type"));

    // and neither is a random string, nor no token at all
    const HttpResult asNobody = pinnedGet(
        url, pin, QString::fromLatin1(randomBytes(8).toBase64(QByteArray::Base64UrlEncoding)));
    QVERIFY2(asNobody.status == 401, qPrintable(asNobody.describe()));
    QCOMPARE(asNobody.errorCode(), QStringLiteral("unauthorized"));
    const HttpResult anonymous = pinnedGet(url, pin);
    QVERIFY2(anonymous.status == 401, qPrintable(anonymous.describe()));

    // Trying the enrollment token on the wrong door did not spend it.
    ForwarderProcess &late = m_rig->addForwarder({ QStringLiteral("--bundle"), pending.bundle,
        QStringLiteral("--credential-file"), m_rig->path(QStringLiteral("pending.json")) });
    QVERIFY2(m_rig->startAndAwaitConnection(late, pending.id), qPrintable(m_rig->lastError()));
}

void TestHubSecrets::databaseHoldsNoSecrets()
{
    HubProcess &hub = m_rig->hub();
    ConnectedForwarder redeemed;
    QVERIFY2(m_rig->enrollAndConnect(QStringLiteral("redeemed"), redeemed),
        qPrintable(m_rig->lastError()));
    const Enrollment unredeemed = hub.enroll(QStringLiteral("unredeemed"));
    QVERIFY2(unredeemed.ok, qPrintable(unredeemed.error));

    const QString credential = credentialIn(redeemed.credentialFile);
    QVERIFY2(credential.startsWith(QLatin1String("cfc_")), qPrintable(credential));
    const QStringList secrets {
        hub.adminToken(),
        tokenOf(redeemed.enrollment.bundle),
        tokenOf(unredeemed.bundle),
        credential,
    };
    for (const QString &secret : secrets)
        QVERIFY2(
            secret.size() > 20, qPrintable(QStringLiteral("not a secret: \"%1\"").arg(secret)));
    const QByteArray credentialHash
        = QCryptographicHash::hash(credential.toUtf8(), QCryptographicHash::Sha256).toHex();

    const auto check = [&](const char *when) {
        const QByteArray stored = databaseBytes(hub.databasePath());
        QVERIFY2(stored.size() > 4096, when);
        for (const QString &secret : secrets) {
            // Whole, and without its type prefix in case only that was cut off.
            QVERIFY2(!stored.contains(secret.toUtf8()),
                qPrintable(QStringLiteral("%1: the database holds %2…")
                               .arg(QLatin1String(when), secret.left(8))));
            QVERIFY2(!stored.contains(secret.mid(4).toUtf8()),
                qPrintable(QStringLiteral("%1: the database holds the body of %2…")
                               .arg(QLatin1String(when), secret.left(8))));
        }
        // The search looks at the right bytes: the credential's hash is there.
        QVERIFY2(stored.contains(credentialHash),
            qPrintable(QStringLiteral("%1: the hash %2 of the credential is not in the database")
                           .arg(QLatin1String(when), QString::fromLatin1(credentialHash))));
    };
    check("while the hub runs");
    if (QTest::currentTestFailed())
        return;

    // Once stopped, SQLite folds the log into hub.db; still nothing in clear.
    QCOMPARE(hub.stop(), 0);
    check("after the hub stopped");
}

QTEST_GUILESS_MAIN(TestHubSecrets)
#include "tst_hubsecrets.moc"
