#include "common/net/spkipin.h"
#include "common/net/tlsstream.h"
#include "common/tunneltestsupport.h"

#include <QFile>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QSslSocket>
#include <QTcpServer>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include <netinet/in.h>
#include <sys/socket.h>

using namespace cloop;
using namespace Qt::StringLiterals;

namespace {

// Hands out accepted descriptors as they are, before Qt makes sockets of them.
class DescriptorServer final : public QTcpServer
{
public:
    std::vector<util::Fd> accepted;

protected:
    void incomingConnection(qintptr descriptor) override
    {
        accepted.emplace_back(static_cast<int>(descriptor));
    }
};

QByteArray patterned(qsizetype size)
{
    QByteArray bytes(size, Qt::Uninitialized);
    for (qsizetype i = 0; i < size; ++i)
        bytes[i] = static_cast<char>((i * 131) % 251);
    return bytes;
}

// Everything readable now; false once the stream has ended.
bool drain(net::TlsStream &stream, QByteArray &into)
{
    char buffer[8192];
    for (;;) {
        const qsizetype got = stream.read(buffer, sizeof buffer);
        if (got < 0)
            return false;
        if (got == 0)
            return true;
        into.append(buffer, got);
    }
}

// A blocking connect to the loopback port, handed over as a descriptor.
util::Fd connectedTo(quint16 port)
{
    util::Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in address {};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd.get(), reinterpret_cast<const sockaddr *>(&address), sizeof address) != 0)
        return {};
    return fd;
}

} // namespace

class TestTlsStream : public QObject
{
    Q_OBJECT

private:
    QTemporaryDir m_dir;
    std::optional<hub::TlsIdentity> m_identity;
    std::shared_ptr<const net::TlsContext> m_context;
    DescriptorServer m_server;

    std::unique_ptr<QSslSocket> dial()
    {
        auto client = std::make_unique<QSslSocket>();
        QSslConfiguration tls = QSslConfiguration::defaultConfiguration();
        tls.setPeerVerifyMode(QSslSocket::VerifyNone);
        client->setSslConfiguration(tls);
        client->connectToHostEncrypted(u"127.0.0.1"_s, m_server.serverPort());
        return client;
    }

    std::unique_ptr<net::TlsStream> accept()
    {
        if (!QTest::qWaitFor([this] { return !m_server.accepted.empty(); }, 5000))
            return nullptr;
        util::Fd descriptor = std::move(m_server.accepted.front());
        m_server.accepted.erase(m_server.accepted.begin());
        auto stream = std::make_unique<net::TlsStream>(std::move(descriptor), m_context);
        stream->startServerHandshake();
        return stream;
    }

    // Both ends past the handshake (the client is a turn ahead of us).
    static bool established(const QSslSocket &client, const net::TlsStream &stream)
    {
        return QTest::qWaitFor(
            [&] {
                return client.isEncrypted() && stream.state() == net::TlsStream::State::Encrypted;
            },
            5000);
    }

private Q_SLOTS:
    void initTestCase()
    {
        auto identity = testsupport::makeDevIdentity(m_dir.path(), u"hub"_s, { u"127.0.0.1"_s });
        QVERIFY2(identity, qPrintable(identity ? QString() : identity.error().message));
        m_identity = *identity;
        auto context = net::TlsContext::forServer(m_identity->chain, m_identity->key);
        QVERIFY2(context, qPrintable(context ? QString() : context.error().message));
        m_context = *context;
        QVERIFY(m_server.listen(QHostAddress::LocalHost));
    }

    void aContextNeedsACertificateAndKey()
    {
        const auto noKey = net::TlsContext::forServer(m_identity->chain, QSslKey());
        QVERIFY(!noKey);
        QCOMPARE(noKey.error().code, u"tls_setup"_s);
        const auto noChain = net::TlsContext::forServer({}, m_identity->key);
        QVERIFY(!noChain);
    }

    void bytesCrossBothWaysAndNothingStaysBuffered()
    {
        auto client = dial();
        auto stream = accept();
        QVERIFY(stream);
        QSignalSpy encrypted(stream.get(), &net::TlsStream::encrypted);
        QVERIFY(established(*client, *stream));
        QCOMPARE(encrypted.size(), 1);
        // The client sees the hub's own certificate.
        QCOMPARE(client->peerCertificate(), m_identity->chain.first());
        QCOMPARE(stream->peerAddress(), QHostAddress(QHostAddress::LocalHost));
        QCOMPARE(stream->peerPort(), client->localPort());

        client->write("hello, hub");
        QByteArray received;
        QTRY_VERIFY_WITH_TIMEOUT((drain(*stream, received), received == "hello, hub"), 5000);

        // Writes of one turn leave together; a megabyte arrives whole.
        const QByteArray big = patterned(1024 * 1024);
        stream->write(QByteArrayView(big).first(1000));
        stream->write(QByteArrayView(big).sliced(1000));
        QCOMPARE(stream->bytesToWrite(), big.size());
        QSignalSpy drained(stream.get(), &net::TlsStream::drained);
        QByteArray echoed;
        QTRY_VERIFY_WITH_TIMEOUT((echoed += client->readAll(), echoed.size() >= big.size()), 10000);
        QCOMPARE(echoed, big);
        QTRY_VERIFY(drained.size() >= 1);
        QCOMPARE(stream->bytesToWrite(), 0);
        QCOMPARE(stream->bufferedBytes(), 0);
    }

    void aPausedStreamReadsNothingUntilResumed()
    {
        auto client = dial();
        auto stream = accept();
        QVERIFY(stream);
        QVERIFY(established(*client, *stream));
        stream->setReadPaused(true);
        QSignalSpy readable(stream.get(), &net::TlsStream::readyRead);
        const QByteArray payload = patterned(200 * 1024);
        client->write(payload);
        QTest::qWait(300);
        QCOMPARE(readable.size(), 0);
        stream->setReadPaused(false);
        QByteArray received;
        QTRY_VERIFY_WITH_TIMEOUT(
            (drain(*stream, received), received.size() >= payload.size()), 5000);
        QCOMPARE(received, payload);
    }

    void aCloseDeliversWhatWasQueuedThenEnds()
    {
        auto client = dial();
        auto stream = accept();
        QVERIFY(stream);
        QVERIFY(established(*client, *stream));
        QSignalSpy ended(stream.get(), &net::TlsStream::ended);
        QSignalSpy failed(stream.get(), &net::TlsStream::failed);
        const QByteArray last = patterned(300 * 1024);
        stream->write(last);
        stream->close();
        QCOMPARE(stream->state(), net::TlsStream::State::Closing);
        stream->write("never sent");
        QByteArray received;
        QSignalSpy clientGone(client.get(), &QAbstractSocket::disconnected);
        QTRY_VERIFY_WITH_TIMEOUT((received += client->readAll(), !clientGone.isEmpty()), 5000);
        received += client->readAll();
        QCOMPARE(received, last);
        QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, 5000);
        QVERIFY2(failed.isEmpty(), qPrintable(failed.value(0).value(0).toString()));
        QCOMPARE(stream->state(), net::TlsStream::State::Closed);
        QCOMPARE(stream->descriptor(), -1);
    }

    void aPeerThatGoesIsNoticed()
    {
        auto client = dial();
        auto stream = accept();
        QVERIFY(stream);
        QVERIFY(established(*client, *stream));
        QSignalSpy ended(stream.get(), &net::TlsStream::ended);
        QByteArray received;
        connect(stream.get(), &net::TlsStream::readyRead, this,
            [&, raw = stream.get()] { drain(*raw, received); });
        client->abort();
        QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, 5000);
        QCOMPARE(stream->read(nullptr, 0), -1);
    }

    // Writing to a peer that has gone is an error, not a SIGPIPE that
    // would end the process (this test's too).
    void writingToAVanishedPeerFails()
    {
        auto client = dial();
        auto stream = accept();
        QVERIFY(stream);
        QVERIFY(established(*client, *stream));
        QSignalSpy failed(stream.get(), &net::TlsStream::failed);
        QSignalSpy ended(stream.get(), &net::TlsStream::ended);
        // The test library ignores SIGPIPE; a daemon's process does not.
        const auto previous = std::signal(SIGPIPE, SIG_DFL);
        const auto restore = qScopeGuard([previous] { std::signal(SIGPIPE, previous); });
        // It closes properly and goes: the first write after its FIN is
        // answered with a reset, and the next one would raise SIGPIPE.
        client->disconnectFromHost();
        QTRY_COMPARE_WITH_TIMEOUT(client->state(), QAbstractSocket::UnconnectedState, 5000);
        client.reset();
        for (int i = 0; i < 50 && ended.isEmpty(); ++i) {
            stream->write(patterned(256 * 1024));
            QTest::qWait(20);
        }
        QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, 5000);
        QCOMPARE(failed.size(), 1);
    }

    void somethingThatIsNotTlsFailsTheHandshake_data()
    {
        QTest::addColumn<QByteArray>("sent");
        QTest::addRow("plain HTTP") << "GET / HTTP/1.1\r\nHost: x\r\n\r\n"_ba;
        QTest::addRow("nothing, then gone") << QByteArray();
    }
    void somethingThatIsNotTlsFailsTheHandshake()
    {
        QFETCH(QByteArray, sent);
        QTcpSocket plain;
        plain.connectToHost(QHostAddress::LocalHost, m_server.serverPort());
        QVERIFY(plain.waitForConnected(5000));
        auto stream = accept();
        QVERIFY(stream);
        QSignalSpy failed(stream.get(), &net::TlsStream::failed);
        QSignalSpy ended(stream.get(), &net::TlsStream::ended);
        QSignalSpy encrypted(stream.get(), &net::TlsStream::encrypted);
        if (sent.isEmpty())
            plain.abort();
        else
            plain.write(sent);
        QTRY_COMPARE_WITH_TIMEOUT(ended.size(), 1, 5000);
        QCOMPARE(failed.size(), 1);
        QVERIFY(!failed.first().first().toString().isEmpty());
        QCOMPARE(encrypted.size(), 0);
    }

    void theDescriptorCanBeTakenAway()
    {
        auto client = dial();
        auto stream = accept();
        QVERIFY(stream);
        QVERIFY(established(*client, *stream));
        QSignalSpy ended(stream.get(), &net::TlsStream::ended);
        const int before = stream->descriptor();
        util::Fd taken = stream->takeDescriptor();
        QCOMPARE(taken.get(), before);
        QVERIFY(taken.valid());
        QCOMPARE(stream->descriptor(), -1);
        stream.reset();
        QCOMPARE(ended.size(), 0);
        // Still the connection: raw bytes reach the client (as garbage TLS).
        QCOMPARE(::write(taken.get(), "x", 1), 1);
    }

    void manyStreamsShareOneContext()
    {
        std::vector<std::unique_ptr<QSslSocket>> clients;
        std::vector<std::unique_ptr<net::TlsStream>> streams;
        for (int i = 0; i < 20; ++i) {
            clients.push_back(dial());
            streams.push_back(accept());
            QVERIFY(streams.back());
        }
        for (size_t i = 0; i < clients.size(); ++i)
            QVERIFY(established(*clients[i], *streams[i]));
        for (size_t i = 0; i < streams.size(); ++i) {
            streams[i]->write(QByteArray::number(qulonglong(i)));
            QVERIFY(streams[i]->bufferedBytes() > 0);
        }
        for (size_t i = 0; i < clients.size(); ++i) {
            QByteArray got;
            QTRY_VERIFY_WITH_TIMEOUT((got += clients[i]->readAll(), !got.isEmpty()), 5000);
            QCOMPARE(got, QByteArray::number(qulonglong(i)));
        }
        for (auto &stream : streams)
            QCOMPARE(stream->bufferedBytes(), 0);
    }

    void ourClientSaysWhatIsWrongWithTheCertificate_data()
    {
        QTest::addColumn<QString>("serverName");
        QTest::addColumn<bool>("trustTheCertificate");
        QTest::addColumn<int>("problems"); // 0: none, 1: only "no trusted issuer", 2: others too
        QTest::newRow("unknown issuer") << u"127.0.0.1"_s << false << 1;
        QTest::newRow("trusted, right address") << u"127.0.0.1"_s << true << 0;
        QTest::newRow("trusted, another name") << u"hub.invalid"_s << true << 2;
        QTest::newRow("trusted, another address") << u"10.9.9.9"_s << true << 2;
    }

    void ourClientSaysWhatIsWrongWithTheCertificate()
    {
        QFETCH(QString, serverName);
        QFETCH(bool, trustTheCertificate);
        QFETCH(int, problems);
        // The development certificate is its own issuer: trusting it as a
        // CA makes a chain that verifies.
        const auto context = net::TlsContext::forClient(
            trustTheCertificate ? m_identity->chain : QList<QSslCertificate>());
        QVERIFY2(context, qPrintable(context ? QString() : context.error().message));
        QVERIFY(!(*context)->isServer());
        util::Fd descriptor = connectedTo(m_server.serverPort());
        QVERIFY(descriptor.valid());
        net::TlsStream client(std::move(descriptor), *context);
        client.startClientHandshake(serverName);
        auto server = accept();
        QVERIFY(server);
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == net::TlsStream::State::Encrypted
                && server->state() == net::TlsStream::State::Encrypted,
            5000);

        // The handshake went on whatever was found: the verdict is the
        // owner's, who holds the pins.
        QCOMPARE(client.peerCertificate(), m_identity->chain.first());
        const auto &found = client.certificateProblems();
        bool onlyIssuer = true;
        for (const net::CertificateProblem &problem : found) {
            QVERIFY(!problem.text.isEmpty());
            onlyIssuer = onlyIssuer && problem.noTrustedIssuer;
        }
        QCOMPARE(found.isEmpty() ? 0 : (onlyIssuer ? 1 : 2), problems);

        client.write("from the client");
        QByteArray received;
        QTRY_VERIFY_WITH_TIMEOUT((drain(*server, received), received == "from the client"), 5000);
        server->write("from the server");
        received.clear();
        QTRY_VERIFY_WITH_TIMEOUT((drain(client, received), received == "from the server"), 5000);
    }

    void theSystemsAuthoritiesAreWhereOpenSslLooks()
    {
        // As OpenSSL's tools do, SSL_CERT_FILE names the system's bundle:
        // one holding the development certificate makes it trusted.
        QFile bundle(m_dir.filePath(u"system-bundle.pem"_s));
        QVERIFY(bundle.open(QIODevice::WriteOnly));
        bundle.write(m_identity->chain.first().toPem());
        bundle.close();
        const QByteArray previousFile = qgetenv("SSL_CERT_FILE");
        const QByteArray previousDirectory = qgetenv("SSL_CERT_DIR");
        const auto restore = qScopeGuard([&] {
            qputenv("SSL_CERT_FILE", previousFile);
            qputenv("SSL_CERT_DIR", previousDirectory);
        });
        qputenv("SSL_CERT_FILE", QFile::encodeName(bundle.fileName()));
        qputenv("SSL_CERT_DIR", QFile::encodeName(m_dir.filePath(u"no-such-directory"_s)));
        const auto context = net::TlsContext::forClient({});
        QVERIFY2(context, qPrintable(context ? QString() : context.error().message));

        util::Fd descriptor = connectedTo(m_server.serverPort());
        QVERIFY(descriptor.valid());
        net::TlsStream client(std::move(descriptor), *context);
        client.startClientHandshake(u"127.0.0.1"_s);
        auto server = accept();
        QVERIFY(server);
        QTRY_VERIFY_WITH_TIMEOUT(client.state() == net::TlsStream::State::Encrypted, 5000);
        QVERIFY(client.certificateProblems().isEmpty());
        QCOMPARE(client.peerKeyDigest(), net::PinSet::spkiSha256(m_identity->chain.first()));
    }

    void aClientContextIsNoServersAndTheOtherWayRound()
    {
        const auto clientContext = net::TlsContext::forClient({});
        QVERIFY(clientContext);
        util::Fd descriptor = connectedTo(m_server.serverPort());
        QVERIFY(descriptor.valid());
        net::TlsStream wrong(std::move(descriptor), *clientContext);
        QSignalSpy failed(&wrong, &net::TlsStream::failed);
        wrong.startServerHandshake();
        QVERIFY(failed.wait(5000));
        auto accepted = accept();
        QVERIFY(accepted);
    }

    void withoutAContextBytesGoAsTheyAre()
    {
        util::Fd descriptor = connectedTo(m_server.serverPort());
        QVERIFY(descriptor.valid());
        net::TlsStream client(std::move(descriptor), nullptr);
        QVERIFY(client.isPlaintext());
        QSignalSpy encrypted(&client, &net::TlsStream::encrypted);
        client.startClientHandshake(u"127.0.0.1"_s);
        QVERIFY(encrypted.wait(5000));
        QVERIFY(QTest::qWaitFor([this] { return !m_server.accepted.empty(); }, 5000));
        net::TlsStream server(std::move(m_server.accepted.front()), nullptr);
        m_server.accepted.erase(m_server.accepted.begin());
        server.startClientHandshake(QString());
        QTRY_COMPARE_WITH_TIMEOUT(server.state(), net::TlsStream::State::Encrypted, 5000);

        const QByteArray big = patterned(512 * 1024);
        client.write(big);
        QByteArray received;
        QTRY_VERIFY_WITH_TIMEOUT((drain(server, received), received.size() >= big.size()), 10000);
        QCOMPARE(received, big);
        QTRY_COMPARE(client.bufferedBytes(), 0);

        // A close reaches the other end as the end of the stream.
        QSignalSpy serverEnded(&server, &net::TlsStream::ended);
        QSignalSpy clientEnded(&client, &net::TlsStream::ended);
        client.close();
        QTRY_VERIFY_WITH_TIMEOUT((drain(server, received), serverEnded.size() == 1), 5000);
        QTRY_COMPARE_WITH_TIMEOUT(clientEnded.size(), 1, 5000);
    }
};

QTEST_MAIN(TestTlsStream)
#include "tst_tlsstream.moc"
