// Integration: SIGHUP makes the running hub read its certificate again. A
// certificate renewed with the same key (a public CA's renewal) serves new
// connections at once; one with another key is refused, the old one kept,
// and the hub runs on.

#include "support/testrig.h"

#include <QFile>
#include <QSslSocket>
#include <QTest>

#include <csignal>

using namespace cloop;
using namespace cloop::testing;
using namespace Qt::StringLiterals;

class TestCertificateReload final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void sighupServesARenewedCertificateAndRefusesANewKey();
};

namespace {

// The common name of the certificate a new connection to the hub gets.
QString servedName(quint16 port)
{
    QSslSocket socket;
    socket.setPeerVerifyMode(QSslSocket::QueryPeer);
    QObject::connect(&socket, &QSslSocket::sslErrors, &socket,
        [&socket](const QList<QSslError> &) { socket.ignoreSslErrors(); });
    socket.connectToHostEncrypted(u"127.0.0.1"_s, port);
    if (!socket.waitForEncrypted(10000))
        return {};
    return socket.peerCertificate().subjectInfo(QSslCertificate::CommonName).value(0);
}

CliResult openssl(const QStringList &arguments)
{
    return runProgram(u"openssl"_s, arguments, QProcessEnvironment::systemEnvironment());
}

} // namespace

void TestCertificateReload::sighupServesARenewedCertificateAndRefusesANewKey()
{
    TestRig rig;
    QVERIFY2(rig.startHub(), qPrintable(rig.lastError()));
    HubProcess &hub = rig.hub();
    const QString tls = hub.dataDir() + u"/tls/"_s;
    const QString pinBefore = hub.pin();
    const QString nameBefore = servedName(hub.port());
    QVERIFY(!nameBefore.isEmpty());

    // Renewed with the same key, written over the old file, then SIGHUP.
    const QString renewed = rig.path(u"renewed.pem"_s);
    CLOOP_COMPARE_EXIT(
        openssl({ u"req"_s, u"-new"_s, u"-x509"_s, u"-key"_s, tls + u"key.pem"_s, u"-subj"_s,
            u"/CN=renewed.cloop.test"_s, u"-days"_s, u"30"_s, u"-out"_s, renewed }),
        0);
    QVERIFY(QFile::remove(tls + u"cert.pem"_s) && QFile::copy(renewed, tls + u"cert.pem"_s));
    QCOMPARE(::kill(pid_t(hub.pid()), SIGHUP), 0);
    QTRY_COMPARE_WITH_TIMEOUT(servedName(hub.port()), u"renewed.cloop.test"_s, 10000);
    QVERIFY(hub.isRunning());
    // Its daemons' pins still hold: the key is the same.
    CLOOP_COMPARE_EXIT(
        runProgram(binaryPath(u"cloop-hub"_s), { u"pin"_s, u"--data"_s, hub.dataDir() },
            QProcessEnvironment::systemEnvironment()),
        0);

    // Another key: refused, said in the log, the renewed certificate kept.
    const QString otherKey = rig.path(u"other-key.pem"_s);
    const QString otherCert = rig.path(u"other-cert.pem"_s);
    CLOOP_COMPARE_EXIT(
        openssl({ u"req"_s, u"-new"_s, u"-x509"_s, u"-newkey"_s, u"ec"_s, u"-pkeyopt"_s,
            u"ec_paramgen_curve:P-256"_s, u"-nodes"_s, u"-keyout"_s, otherKey, u"-subj"_s,
            u"/CN=impostor.cloop.test"_s, u"-days"_s, u"30"_s, u"-out"_s, otherCert }),
        0);
    QVERIFY(QFile::remove(tls + u"cert.pem"_s) && QFile::copy(otherCert, tls + u"cert.pem"_s));
    QVERIFY(QFile::remove(tls + u"key.pem"_s) && QFile::copy(otherKey, tls + u"key.pem"_s));
    QCOMPARE(::kill(pid_t(hub.pid()), SIGHUP), 0);
    QTRY_VERIFY_WITH_TIMEOUT(hub.log().contains(u"certificate not reloaded"_s), 10000);
    QVERIFY2(hub.log().contains(pinBefore), qPrintable(hub.log()));
    QCOMPARE(servedName(hub.port()), u"renewed.cloop.test"_s);
    QVERIFY(hub.isRunning());
}

QTEST_GUILESS_MAIN(TestCertificateReload)
#include "tst_certificatereload.moc"
