#include "common/net/spkipin.h"
#include "common/util/atomicfile.h"
#include "hub/tls/devcertificate.h"

#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

using namespace cloop;
using namespace cloop::hub;

class TestDevCertificate : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void generatesAUsableIdentity();
    void eachGenerationIsANewKey();
    void missingOrBrokenFilesAreClearErrors();
    void refusesNoHostNames();
};

void TestDevCertificate::generatesAUsableIdentity()
{
    QTemporaryDir dir;
    const QString cert = dir.filePath(QStringLiteral("tls/cert.pem"));
    const QString key = dir.filePath(QStringLiteral("tls/key.pem"));
    DevCertificateRequest request;
    request.hostNames
        = { QStringLiteral("hub.lab.test"), QStringLiteral("127.0.0.1"), QStringLiteral("::1") };
    QVERIFY(generateDevCertificate(request, cert, key));

    QCOMPARE(util::fileMode(key), 0600);
    QCOMPARE(util::fileMode(dir.filePath(QStringLiteral("tls"))), 0700);

    auto identity = TlsIdentity::load(cert, key);
    QVERIFY2(identity, qPrintable(identity.ok() ? QString() : identity.error().message));
    QCOMPARE(identity->chain.size(), 1);
    QCOMPARE(identity->key.algorithm(), QSsl::Ec);
    QCOMPARE(identity->pin, net::PinSet::pinOf(identity->chain.first()));
    QVERIFY(identity->pin.startsWith(QStringLiteral("sha256:")));

    const QSslCertificate &leaf = identity->chain.first();
    const auto names = leaf.subjectAlternativeNames();
    QVERIFY(names.values(QSsl::DnsEntry).contains(QStringLiteral("hub.lab.test")));
    QVERIFY(names.values(QSsl::IpAddressEntry).contains(QStringLiteral("127.0.0.1")));
    QVERIFY(leaf.expiryDate() > QDateTime::currentDateTimeUtc().addDays(800));
    QVERIFY(leaf.effectiveDate() <= QDateTime::currentDateTimeUtc());
    QCOMPARE(identity->key.length(), 256);
}

void TestDevCertificate::eachGenerationIsANewKey()
{
    QTemporaryDir dir;
    DevCertificateRequest request;
    request.hostNames = { QStringLiteral("localhost") };
    QVERIFY(generateDevCertificate(
        request, dir.filePath(QStringLiteral("a.pem")), dir.filePath(QStringLiteral("a.key"))));
    QVERIFY(generateDevCertificate(
        request, dir.filePath(QStringLiteral("b.pem")), dir.filePath(QStringLiteral("b.key"))));
    auto a = TlsIdentity::load(
        dir.filePath(QStringLiteral("a.pem")), dir.filePath(QStringLiteral("a.key")));
    auto b = TlsIdentity::load(
        dir.filePath(QStringLiteral("b.pem")), dir.filePath(QStringLiteral("b.key")));
    QVERIFY(a && b);
    QVERIFY(a->pin != b->pin);
    QVERIFY(a->chain.first().serialNumber() != b->chain.first().serialNumber());
}

void TestDevCertificate::missingOrBrokenFilesAreClearErrors()
{
    QTemporaryDir dir;
    auto missing = TlsIdentity::load(
        dir.filePath(QStringLiteral("none.pem")), dir.filePath(QStringLiteral("none.key")));
    QVERIFY(!missing);
    QVERIFY(missing.error().message.contains(QStringLiteral("tls-init")));

    QFile broken(dir.filePath(QStringLiteral("broken.pem")));
    QVERIFY(broken.open(QIODevice::WriteOnly));
    broken.write("-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n");
    broken.close();
    auto unreadable = TlsIdentity::load(broken.fileName(), broken.fileName());
    QVERIFY(!unreadable);
    QVERIFY(unreadable.error().message.contains(broken.fileName()));

    DevCertificateRequest request;
    request.hostNames = { QStringLiteral("localhost") };
    const QString cert = dir.filePath(QStringLiteral("c.pem"));
    QVERIFY(generateDevCertificate(request, cert, dir.filePath(QStringLiteral("c.key"))));
    auto wrongKey = TlsIdentity::load(cert, cert);
    QVERIFY(!wrongKey);
    QVERIFY(wrongKey.error().message.contains(QStringLiteral("private key")));

    // A key from another pair is refused at load, not at the first handshake.
    QVERIFY(generateDevCertificate(
        request, dir.filePath(QStringLiteral("d.pem")), dir.filePath(QStringLiteral("d.key"))));
    auto mismatched = TlsIdentity::load(cert, dir.filePath(QStringLiteral("d.key")));
    QVERIFY(!mismatched);
    QVERIFY2(mismatched.error().message.contains(QStringLiteral("does not belong")),
        qPrintable(mismatched.error().message));
}

void TestDevCertificate::refusesNoHostNames()
{
    QTemporaryDir dir;
    const Status generated = generateDevCertificate(
        {}, dir.filePath(QStringLiteral("c.pem")), dir.filePath(QStringLiteral("c.key")));
    QVERIFY(!generated);
    QVERIFY(!QFile::exists(dir.filePath(QStringLiteral("c.pem"))));
}

QTEST_GUILESS_MAIN(TestDevCertificate)
#include "tst_devcertificate.moc"
