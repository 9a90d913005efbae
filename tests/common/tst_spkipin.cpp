// Unit tests of key pinning and hub trust (common/net/spkipin.h,
// common/net/hubtls.h). Certificates are made at test time with the openssl
// command line, and the expected pins are computed by openssl too, so the
// code under test is compared with an independent implementation.

#include "common/net/hubtls.h"
#include "common/net/spkipin.h"

#include <QFileInfo>
#include <QProcess>
#include <QSslCertificate>
#include <QSslError>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

using namespace cloop;
using namespace cloop::net;

namespace {

struct TestCertificate
{
    QSslCertificate certificate;
    QString expectedPin; // computed by openssl
};

} // namespace

class TestSpkiPin final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();

    void pinOfMatchesOpenssl_data();
    void pinOfMatchesOpenssl();
    void pinOfNullCertificateIsEmpty();
    void matches();
    void setWithTwoPinsMatchesEither();
    void parseRoundTrip();
    void aPinIsGroupedForPeopleToCompare();
    void parseErrors_data();
    void parseErrors();
    void verifyNamesExpectedAndPresentedPins();

    void judge_data();
    void judge();

    void checkHubUrl_data();
    void checkHubUrl();
    void endpointUrl_data();
    void endpointUrl();

private:
    QByteArray openssl(const QStringList &arguments);
    TestCertificate makeCertificate(const QString &name, const QStringList &keyArguments);

    QString m_openssl;
    QTemporaryDir m_dir;
    QMap<QString, TestCertificate> m_certs;
};

QByteArray TestSpkiPin::openssl(const QStringList &arguments)
{
    QProcess process;
    process.setWorkingDirectory(m_dir.path());
    process.start(m_openssl, arguments);
    if (!process.waitForStarted() || !process.waitForFinished(60'000)) {
        qWarning("openssl %s did not run: %s", qPrintable(arguments.join(QLatin1Char(' '))),
            qPrintable(process.errorString()));
        return {};
    }
    if (process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
        qWarning("openssl %s failed: %s", qPrintable(arguments.join(QLatin1Char(' '))),
            process.readAllStandardError().constData());
        return {};
    }
    return process.readAllStandardOutput();
}

TestCertificate TestSpkiPin::makeCertificate(const QString &name, const QStringList &keyArguments)
{
    const QString key = name + QStringLiteral(".key.pem");
    const QString cert = name + QStringLiteral(".pem");
    const QString pub = name + QStringLiteral(".pub.pem");
    const QString der = name + QStringLiteral(".pub.der");
    const QString digest = name + QStringLiteral(".sha256");

    TestCertificate result;
    // openssl req -x509 -newkey ... -nodes -keyout k.pem -out c.pem -days 2 -subj /CN=...
    openssl(QStringList { QStringLiteral("req"), QStringLiteral("-x509") } + keyArguments
        + QStringList { QStringLiteral("-nodes"), QStringLiteral("-keyout"), key,
            QStringLiteral("-out"), cert, QStringLiteral("-days"), QStringLiteral("2"),
            QStringLiteral("-subj"), QStringLiteral("/CN=") + name });
    // openssl x509 -pubkey -noout | openssl pkey -pubin -outform der
    //   | openssl dgst -sha256 -binary | base64
    openssl({ QStringLiteral("x509"), QStringLiteral("-pubkey"), QStringLiteral("-noout"),
        QStringLiteral("-in"), cert, QStringLiteral("-out"), pub });
    openssl({ QStringLiteral("pkey"), QStringLiteral("-pubin"), QStringLiteral("-in"), pub,
        QStringLiteral("-outform"), QStringLiteral("der"), QStringLiteral("-out"), der });
    openssl({ QStringLiteral("dgst"), QStringLiteral("-sha256"), QStringLiteral("-binary"),
        QStringLiteral("-out"), digest, der });
    const QByteArray base64
        = openssl({ QStringLiteral("base64"), QStringLiteral("-A"), QStringLiteral("-in"), digest })
              .trimmed();
    if (!base64.isEmpty())
        result.expectedPin = QStringLiteral("sha256:") + QString::fromLatin1(base64);
    const auto certificates = QSslCertificate::fromPath(m_dir.filePath(cert), QSsl::Pem);
    if (certificates.size() == 1)
        result.certificate = certificates.first();
    return result;
}

void TestSpkiPin::initTestCase()
{
    // CMake passes the openssl it found ("...-NOTFOUND" when it found none).
    m_openssl = qEnvironmentVariable("CLOOP_OPENSSL");
    if (!QFileInfo(m_openssl).isExecutable())
        m_openssl = QStandardPaths::findExecutable(QStringLiteral("openssl"));
    if (m_openssl.isEmpty())
        QSKIP("the openssl command line is needed to make test certificates");
    QVERIFY(m_dir.isValid());

    const QStringList p256 { QStringLiteral("-newkey"), QStringLiteral("ec"),
        QStringLiteral("-pkeyopt"), QStringLiteral("ec_paramgen_curve:P-256") };
    m_certs.insert(QStringLiteral("hub-a"), makeCertificate(QStringLiteral("hub-a"), p256));
    m_certs.insert(QStringLiteral("hub-b"), makeCertificate(QStringLiteral("hub-b"), p256));
    m_certs.insert(QStringLiteral("rsa"),
        makeCertificate(
            QStringLiteral("rsa"), { QStringLiteral("-newkey"), QStringLiteral("rsa:2048") }));
    for (auto it = m_certs.cbegin(); it != m_certs.cend(); ++it) {
        QVERIFY2(!it->certificate.isNull(), qPrintable(it.key()));
        QVERIFY2(it->expectedPin.startsWith(QStringLiteral("sha256:")), qPrintable(it.key()));
    }
    QCOMPARE_NE(
        m_certs[QStringLiteral("hub-a")].expectedPin, m_certs[QStringLiteral("hub-b")].expectedPin);
}

void TestSpkiPin::pinOfMatchesOpenssl_data()
{
    QTest::addColumn<QString>("name");
    QTest::newRow("P-256") << QStringLiteral("hub-a");
    QTest::newRow("another P-256") << QStringLiteral("hub-b");
    QTest::newRow("RSA 2048") << QStringLiteral("rsa");
}

void TestSpkiPin::pinOfMatchesOpenssl()
{
    QFETCH(QString, name);
    const TestCertificate &cert = m_certs[name];
    QCOMPARE(PinSet::pinOf(cert.certificate), cert.expectedPin);
    QCOMPARE(PinSet::spkiSha256(cert.certificate).size(), 32);
    QCOMPARE(PinSet::ofCertificate(cert.certificate).toString(), cert.expectedPin);
}

void TestSpkiPin::pinOfNullCertificateIsEmpty()
{
    QCOMPARE(PinSet::pinOf(QSslCertificate()), QString());
    QVERIFY(PinSet::ofCertificate(QSslCertificate()).isEmpty());
    // A set never matches a null certificate, whatever it holds.
    const auto set = PinSet::parse(m_certs[QStringLiteral("hub-a")].expectedPin);
    QVERIFY(set.ok());
    QVERIFY(!set->matches(QSslCertificate()));
}

void TestSpkiPin::matches()
{
    const TestCertificate &a = m_certs[QStringLiteral("hub-a")];
    const TestCertificate &b = m_certs[QStringLiteral("hub-b")];
    const auto set = PinSet::parse(a.expectedPin);
    QVERIFY(set.ok());
    QVERIFY(!set->isEmpty());
    QVERIFY(set->matches(a.certificate));
    QVERIFY(!set->matches(b.certificate));
    QVERIFY(!set->matches(m_certs[QStringLiteral("rsa")].certificate));
    QVERIFY(set->verify(a.certificate).ok());
    QVERIFY(!set->verify(b.certificate).ok());
}

void TestSpkiPin::setWithTwoPinsMatchesEither()
{
    // Given the pins of the old and the new key during a rotation,
    const TestCertificate &a = m_certs[QStringLiteral("hub-a")];
    const TestCertificate &b = m_certs[QStringLiteral("hub-b")];
    const auto set = PinSet::parse(a.expectedPin + QStringLiteral(" , ") + b.expectedPin);
    QVERIFY2(set.ok(), qPrintable(set.ok() ? QString() : set.error().message));
    // then either certificate is accepted, and a third key is not.
    QVERIFY(set->matches(a.certificate));
    QVERIFY(set->matches(b.certificate));
    QVERIFY(!set->matches(m_certs[QStringLiteral("rsa")].certificate));
    QCOMPARE(set->toString(), a.expectedPin + QLatin1Char(',') + b.expectedPin);
}

void TestSpkiPin::parseRoundTrip()
{
    const QString a = m_certs[QStringLiteral("hub-a")].expectedPin;
    const QString b = m_certs[QStringLiteral("hub-b")].expectedPin;

    const auto empty = PinSet::parse(QString());
    QVERIFY(empty.ok());
    QVERIFY(empty->isEmpty());
    QCOMPARE(empty->toString(), QString());
    // No pin means "no pinning", so verify() passes anything.
    QVERIFY(empty->verify(m_certs[QStringLiteral("rsa")].certificate).ok());

    // Duplicates collapse, stray commas are ignored, order is kept.
    const auto set
        = PinSet::parse(b + QStringLiteral(",,") + a + QLatin1Char(',') + b + QLatin1Char(','));
    QVERIFY(set.ok());
    QCOMPARE(set->toString(), b + QLatin1Char(',') + a);
    const auto again = PinSet::parse(set->toString());
    QVERIFY(again.ok());
    QVERIFY(*again == *set);
}

void TestSpkiPin::parseErrors_data()
{
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("problem");

    const QString digest32 = QString::fromLatin1(QByteArray(32, 'k').toBase64());
    const QString prefix = QStringLiteral("does not start with \"sha256:\"");
    const QString notDigest = QStringLiteral("is not the base64 of a 32-byte SHA-256 digest");
    QTest::newRow("missing prefix") << digest32 << prefix;
    QTest::newRow("sha1 prefix") << QStringLiteral("sha1:") + digest32 << prefix;
    QTest::newRow("upper-case prefix") << QStringLiteral("SHA256:") + digest32 << prefix;
    QTest::newRow("second pin without prefix")
        << QStringLiteral("sha256:") + digest32 + QStringLiteral(",abc") << prefix;
    QTest::newRow("bad base64") << QStringLiteral("sha256:!!!notbase64!!!") << notDigest;
    QTest::newRow("empty digest") << QStringLiteral("sha256:") << notDigest;
    QTest::newRow("31 bytes") << QStringLiteral("sha256:")
            + QString::fromLatin1(QByteArray(31, 'k').toBase64())
                              << notDigest;
    QTest::newRow("33 bytes") << QStringLiteral("sha256:")
            + QString::fromLatin1(QByteArray(33, 'k').toBase64())
                              << notDigest;
    QTest::newRow("hex instead of base64")
        << QStringLiteral("sha256:") + QString::fromLatin1(QByteArray(32, 'k').toHex())
        << notDigest;
}

void TestSpkiPin::parseErrors()
{
    QFETCH(QString, text);
    QFETCH(QString, problem);
    const auto set = PinSet::parse(text);
    QVERIFY(!set.ok());
    QCOMPARE(set.error().code, QStringLiteral("invalid_pin"));
    QVERIFY(set.error().permanent);
    QVERIFY2(set.error().message.contains(problem), qPrintable(set.error().message));
}

void TestSpkiPin::verifyNamesExpectedAndPresentedPins()
{
    const TestCertificate &a = m_certs[QStringLiteral("hub-a")];
    const TestCertificate &b = m_certs[QStringLiteral("hub-b")];
    const auto set = PinSet::parse(a.expectedPin);
    QVERIFY(set.ok());

    // When the hub presents another key,
    const Status status = set->verify(b.certificate);
    // then the refusal names both the pinned and the presented pin.
    QVERIFY(!status.ok());
    QCOMPARE(status.error().code, QStringLiteral("pin_mismatch"));
    QVERIFY2(status.error().message.contains(QStringLiteral("expected ") + a.expectedPin),
        qPrintable(status.error().message));
    QVERIFY2(status.error().message.contains(QStringLiteral("presented ") + b.expectedPin),
        qPrintable(status.error().message));

    // And HubTrust::verifyPeer says the same.
    const HubTrust trust(*set, {});
    QVERIFY(trust.verifyPeer(a.certificate).ok());
    QCOMPARE(trust.verifyPeer(b.certificate).error().message, status.error().message);
}

void TestSpkiPin::judge_data()
{
    QTest::addColumn<QString>("pinnedCert"); // empty = no pin
    QTest::addColumn<QString>("presentedCert");
    QTest::addColumn<QList<int>>("errors"); // QSslError::SslError values
    QTest::addColumn<QString>("expectedCode"); // empty = accepted

    const QString a = QStringLiteral("hub-a");
    const QString b = QStringLiteral("hub-b");
    const QString none;
    QTest::newRow("pinned, self-signed: waived")
        << a << a << QList<int> { QSslError::SelfSignedCertificate } << QString();
    QTest::newRow("pinned, whole untrusted-chain family: waived")
        << a << a
        << QList<int> { QSslError::SelfSignedCertificateInChain,
               QSslError::UnableToGetLocalIssuerCertificate,
               QSslError::UnableToGetIssuerCertificate, QSslError::UnableToVerifyFirstCertificate,
               QSslError::CertificateUntrusted }
        << QString();
    QTest::newRow("pinned, no errors") << a << a << QList<int> {} << QString();
    QTest::newRow("pinned, expired: never waived")
        << a << a << QList<int> { QSslError::CertificateExpired }
        << QStringLiteral("tls_untrusted");
    QTest::newRow("pinned, self-signed and expired: refused")
        << a << a << QList<int> { QSslError::SelfSignedCertificate, QSslError::CertificateExpired }
        << QStringLiteral("tls_untrusted");
    QTest::newRow("pinned, not yet valid: refused")
        << a << a << QList<int> { QSslError::CertificateNotYetValid }
        << QStringLiteral("tls_untrusted");
    QTest::newRow("pinned, wrong host name: refused")
        << a << a << QList<int> { QSslError::HostNameMismatch } << QStringLiteral("tls_untrusted");
    QTest::newRow("pinned, revoked: refused")
        << a << a << QList<int> { QSslError::CertificateRevoked }
        << QStringLiteral("tls_untrusted");
    QTest::newRow("pin mismatch, self-signed: refused")
        << a << b << QList<int> { QSslError::SelfSignedCertificate }
        << QStringLiteral("pin_mismatch");
    QTest::newRow("pin mismatch, no errors: refused")
        << a << b << QList<int> {} << QStringLiteral("pin_mismatch");
    QTest::newRow("no pin, self-signed: refused")
        << none << a << QList<int> { QSslError::SelfSignedCertificate }
        << QStringLiteral("tls_untrusted");
    QTest::newRow("no pin, expired: refused")
        << none << a << QList<int> { QSslError::CertificateExpired }
        << QStringLiteral("tls_untrusted");
    QTest::newRow("no pin, no errors (a CA vouches): accepted")
        << none << a << QList<int> {} << QString();
}

void TestSpkiPin::judge()
{
    QFETCH(QString, pinnedCert);
    QFETCH(QString, presentedCert);
    QFETCH(QList<int>, errors);
    QFETCH(QString, expectedCode);

    PinSet pins;
    if (!pinnedCert.isEmpty()) {
        const auto parsed = PinSet::parse(m_certs[pinnedCert].expectedPin);
        QVERIFY(parsed.ok());
        pins = *parsed;
    }
    const HubTrust trust(pins, {});
    const QSslCertificate peer = m_certs[presentedCert].certificate;
    QList<QSslError> sslErrors;
    for (const int e : std::as_const(errors))
        sslErrors.append(QSslError(static_cast<QSslError::SslError>(e), peer));

    const auto verdict = trust.judge(sslErrors, peer);
    if (expectedCode.isEmpty()) {
        // Accepted: the errors handed back are exactly the ones to ignore.
        QVERIFY2(verdict.ok(), qPrintable(verdict.ok() ? QString() : verdict.error().message));
        QCOMPARE(*verdict, sslErrors);
        return;
    }
    QVERIFY(!verdict.ok());
    QCOMPARE(verdict.error().code, expectedCode);
    if (expectedCode == QLatin1String("tls_untrusted")) {
        // The message names each error that could not be waived.
        for (const QSslError &e : std::as_const(sslErrors)) {
            const bool waivable = e.error() == QSslError::SelfSignedCertificate;
            if (!waivable || pinnedCert.isEmpty())
                QVERIFY2(verdict.error().message.contains(e.errorString()),
                    qPrintable(verdict.error().message));
        }
        // Without a pin it says how to get one.
        QCOMPARE(verdict.error().message.contains(QStringLiteral("--pin")), pinnedCert.isEmpty());
    }
}

void TestSpkiPin::checkHubUrl_data()
{
    QTest::addColumn<QString>("url");
    QTest::addColumn<bool>("allowInsecure");
    QTest::addColumn<QString>("expectedCode"); // empty = accepted
    QTest::addColumn<bool>("insecure");

    QTest::newRow("wss") << QStringLiteral("wss://hub.example.com:8443") << false << QString()
                         << false;
    QTest::newRow("https") << QStringLiteral("https://hub.example.com") << false << QString()
                           << false;
    QTest::newRow("wss to a private address")
        << QStringLiteral("wss://10.0.0.1:8443") << false << QString() << false;
    QTest::newRow("ws to 127.0.0.1")
        << QStringLiteral("ws://127.0.0.1:8080") << false << QString() << false;
    QTest::newRow("ws to 127.0.0.53")
        << QStringLiteral("ws://127.0.0.53") << false << QString() << false;
    QTest::newRow("ws to ::1") << QStringLiteral("ws://[::1]:8080") << false << QString() << false;
    QTest::newRow("ws to localhost")
        << QStringLiteral("ws://localhost:8080") << false << QString() << false;
    QTest::newRow("ws to LocalHost")
        << QStringLiteral("ws://LocalHost:8080") << false << QString() << false;
    QTest::newRow("ws to 10.0.0.1")
        << QStringLiteral("ws://10.0.0.1:8080") << false << QStringLiteral("insecure_url") << false;
    QTest::newRow("ws to 10.0.0.1, insecure allowed")
        << QStringLiteral("ws://10.0.0.1:8080") << true << QString() << true;
    QTest::newRow("http to a name")
        << QStringLiteral("http://hub.lan") << false << QStringLiteral("insecure_url") << false;
    QTest::newRow("ws to localhost.example.com")
        << QStringLiteral("ws://localhost.example.com") << false << QStringLiteral("insecure_url")
        << false;
    QTest::newRow("ftp") << QStringLiteral("ftp://hub.example.com") << false
                         << QStringLiteral("invalid_url") << false;
    QTest::newRow("ftp, insecure allowed") << QStringLiteral("ftp://hub.example.com") << true
                                           << QStringLiteral("invalid_url") << false;
    QTest::newRow("no host") << QStringLiteral("wss://") << false << QStringLiteral("invalid_url")
                             << false;
    QTest::newRow("bare host") << QStringLiteral("hub.example.com") << false
                               << QStringLiteral("invalid_url") << false;
}

void TestSpkiPin::checkHubUrl()
{
    QFETCH(QString, url);
    QFETCH(bool, allowInsecure);
    QFETCH(QString, expectedCode);
    QFETCH(bool, insecure);

    const auto checked = net::checkHubUrl(QUrl(url), allowInsecure);
    if (expectedCode.isEmpty()) {
        QVERIFY2(checked.ok(), qPrintable(checked.ok() ? QString() : checked.error().message));
        QCOMPARE(*checked, insecure);
    } else {
        QVERIFY(!checked.ok());
        QCOMPARE(checked.error().code, expectedCode);
        QVERIFY(checked.error().permanent);
    }
}

void TestSpkiPin::endpointUrl_data()
{
    QTest::addColumn<QString>("hub");
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("expected");

    QTest::newRow("https -> wss") << QStringLiteral("https://hub.example.com:8443")
                                  << QStringLiteral("/tunnel/forwarder")
                                  << QStringLiteral("wss://hub.example.com:8443/tunnel/forwarder");
    QTest::newRow("http -> ws") << QStringLiteral("http://127.0.0.1:8080")
                                << QStringLiteral("/enroll")
                                << QStringLiteral("ws://127.0.0.1:8080/enroll");
    QTest::newRow("wss kept, old path and query replaced")
        << QStringLiteral("wss://hub.example.com/old/path?x=1")
        << QStringLiteral("/tunnel/executor")
        << QStringLiteral("wss://hub.example.com/tunnel/executor");
    QTest::newRow("ws kept") << QStringLiteral("ws://[::1]:9000") << QStringLiteral("/t")
                             << QStringLiteral("ws://[::1]:9000/t");
}

void TestSpkiPin::endpointUrl()
{
    QFETCH(QString, hub);
    QFETCH(QString, path);
    QFETCH(QString, expected);
    const QUrl url = net::endpointUrl(QUrl(hub), path);
    QCOMPARE(url.toString(), expected);
    QCOMPARE(url.path(), path);
}

void TestSpkiPin::aPinIsGroupedForPeopleToCompare()
{
    const QString pin = QStringLiteral("sha256:") + QString(43, u'A') + u'=';
    const QString grouped = PinSet::grouped(pin);
    QCOMPARE(grouped.left(18), QStringLiteral("sha256: AAAA AAAA "));
    QCOMPARE(grouped.split(u' ').size(), 12); // the prefix and eleven groups of four
    // Nothing is lost: without its spaces it is the pin again.
    QCOMPARE(QString(grouped).remove(u' '), pin);
}

QTEST_GUILESS_MAIN(TestSpkiPin)
#include "tst_spkipin.moc"
