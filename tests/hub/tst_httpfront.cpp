// The hub's HTTP front in one process, with a service made for the test:
// answers in order on a kept-alive connection, 100 Continue only after the
// head passed, a refusal that ends the connection, and a request the
// service never answers ended with 504 instead of hanging.

#include "common/net/messagesocket.h"
#include "hub/edge/httpfront.h"
#include "hub/edge/httpservice.h"
#include "hub/tls/devcertificate.h"

#include <QSslSocket>
#include <QTemporaryDir>
#include <QWebSocket>
#include <QtTest>

using namespace cloop::hub;
using namespace cloop::hub::edge;

namespace {

// A body far larger than the pieces the front writes at a time, no two
// of its 4 KiB blocks alike, so a piece sent twice, lost or out of order
// shows.
QByteArray largeBody()
{
    QByteArray body;
    for (int block = 0; body.size() < 3 * 1024 * 1024 + 123; ++block)
        body += QByteArray::number(block).rightJustified(8, '0').repeated(512);
    return body;
}

// Answers GET /echo at once with the path, POST /body with the body's size,
// GET /large with largeBody(), and GET /never not at all; refuses
// everything else at the head.
class TestService final : public HttpService
{
public:
    HeadDecision examine(const HttpRequestHead &head, const QHostAddress &) override
    {
        ++heads;
        HeadDecision decision;
        decision.authenticated = true;
        decision.bodyLimit = 1024;
        const QByteArray path = head.path();
        if (path == "/echo" || path == "/body") {
            decision.serve = [](const HttpRequest &request, const HttpResponder &respond) {
                respond(HttpAnswer::json(200,
                    "{\"path\":\"" + request.head.path()
                        + "\",\"body\":" + QByteArray::number(request.body.size()) + "}"));
            };
        } else if (path == "/large") {
            decision.serve = [](const HttpRequest &, const HttpResponder &respond) {
                respond(HttpAnswer::json(200, largeBody()));
            };
        } else if (path == "/never") {
            decision.serve = [this](const HttpRequest &, const HttpResponder &respond) {
                parked.append(respond);
            };
        } else {
            decision.refusal
                = HttpAnswer::error(404, QStringLiteral("not_found"), QStringLiteral("no"));
        }
        return decision;
    }
    bool takesWebSocket(const QByteArray &) const override { return false; }
    void acceptWebSocket(
        std::unique_ptr<cloop::net::MessageSocket>, const QByteArray &, PreAuthPool::Place) override
    { }

    int heads = 0;
    QList<HttpResponder> parked;
};

class Client
{
public:
    explicit Client(quint16 port)
    {
        QSslConfiguration configuration = QSslConfiguration::defaultConfiguration();
        configuration.setPeerVerifyMode(QSslSocket::VerifyNone);
        configuration.setCaCertificates({});
        socket.setSslConfiguration(configuration);
        socket.connectToHostEncrypted(QStringLiteral("127.0.0.1"), port);
    }
    bool encrypted()
    {
        return QTest::qWaitFor([this] { return socket.isEncrypted(); }, 5000);
    }
    // Waits until `count` answers (heads and Content-Length bodies) are in.
    QList<QByteArray> answers(int count, int timeoutMs = 5000)
    {
        (void)QTest::qWaitFor(
            [&] {
                received += socket.readAll();
                return split().size() >= count
                    || socket.state() == QAbstractSocket::UnconnectedState;
            },
            timeoutMs);
        received += socket.readAll();
        return split();
    }
    QList<QByteArray> split() const
    {
        QList<QByteArray> out;
        qsizetype at = 0;
        while (true) {
            const qsizetype end = received.indexOf("\r\n\r\n", at);
            if (end < 0)
                break;
            const QByteArray head = received.mid(at, end - at);
            qsizetype length = 0;
            const qsizetype field = head.toLower().indexOf("content-length:");
            if (field >= 0)
                length = head.mid(field + 15, head.indexOf("\r\n", field) - field - 15)
                             .trimmed()
                             .toLongLong();
            if (received.size() < end + 4 + length)
                break;
            out.append(received.mid(at, end + 4 + length - at));
            at = end + 4 + length;
        }
        return out;
    }

    QSslSocket socket;
    QByteArray received;
};

} // namespace

class TestHttpFront final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void initTestCase();
    void init();
    void cleanup();

    void pipelinedAnswersInOrder();
    void largeAnswersArriveWholeAndInOrder();
    void continueOnlyAfterTheHeadPassed();
    void refusalEndsTheConnection();
    void anUnansweredRequestGets504();

private:
    QTemporaryDir m_dir;
    QSslConfiguration m_tls;
    TestService m_service;
    std::unique_ptr<HttpFront> m_front;
};

void TestHttpFront::initTestCase()
{
    const QString cert = m_dir.filePath(QStringLiteral("cert.pem"));
    const QString key = m_dir.filePath(QStringLiteral("key.pem"));
    QVERIFY(generateDevCertificate(
        DevCertificateRequest { { QStringLiteral("127.0.0.1") }, 1 }, cert, key));
    auto identity = TlsIdentity::load(cert, key);
    QVERIFY(identity);
    m_tls = QSslConfiguration::defaultConfiguration();
    m_tls.setLocalCertificateChain(identity->chain);
    m_tls.setPrivateKey(identity->key);
    m_tls.setPeerVerifyMode(QSslSocket::VerifyNone);
}

void TestHttpFront::init()
{
    HttpFront::Options options;
    options.listen.address = QHostAddress::LocalHost;
    options.tls = m_tls;
    options.limits.serveTimeout = std::chrono::milliseconds(300);
    auto front = HttpFront::start(options, m_service);
    QVERIFY(front);
    m_front = std::move(*front);
    m_service.heads = 0;
    m_service.parked.clear();
}

void TestHttpFront::cleanup()
{
    m_front.reset();
}

void TestHttpFront::pipelinedAnswersInOrder()
{
    Client client(m_front->port());
    QVERIFY(client.encrypted());
    // Three requests in one write, the second with a body
    client.socket.write("GET /echo HTTP/1.1\r\nHost: h\r\n\r\n"
                        "POST /body HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
                        "GET /echo?x=1 HTTP/1.1\r\nHost: h\r\n\r\n");
    const QList<QByteArray> answers = client.answers(3);
    QCOMPARE(answers.size(), 3);
    QVERIFY(answers[0].endsWith("{\"path\":\"/echo\",\"body\":0}"));
    QVERIFY(answers[1].endsWith("{\"path\":\"/body\",\"body\":5}"));
    QVERIFY(answers[2].endsWith("{\"path\":\"/echo\",\"body\":0}"));
    for (const QByteArray &answer : answers)
        QVERIFY(answer.contains("Connection: keep-alive"));
    QCOMPARE(client.socket.state(), QAbstractSocket::ConnectedState);
    QCOMPARE(m_front->connectionCount(), 1);
}

void TestHttpFront::largeAnswersArriveWholeAndInOrder()
{
    Client client(m_front->port());
    QVERIFY(client.encrypted());
    // A small answer between two large ones, the last of which ends the
    // connection: it closes only once the whole of it left.
    client.socket.write("GET /large HTTP/1.1\r\nHost: h\r\n\r\n"
                        "GET /echo HTTP/1.1\r\nHost: h\r\n\r\n"
                        "GET /large HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n");
    const QList<QByteArray> answers = client.answers(3, 30'000);
    QCOMPARE(answers.size(), 3);
    const QByteArray expected = largeBody();
    QVERIFY(answers[0].startsWith("HTTP/1.1 200 OK\r\n"));
    QVERIFY(answers[0].contains("Content-Length: " + QByteArray::number(expected.size())));
    QVERIFY(answers[0].endsWith("\r\n\r\n" + expected));
    QVERIFY(answers[1].endsWith("{\"path\":\"/echo\",\"body\":0}"));
    QVERIFY(answers[2].contains("Connection: close"));
    QVERIFY(answers[2].endsWith("\r\n\r\n" + expected));
    QVERIFY(QTest::qWaitFor(
        [&] {
            client.received += client.socket.readAll();
            return client.socket.state() == QAbstractSocket::UnconnectedState;
        },
        5000));
    QCOMPARE(client.split().size(), 3);
}

void TestHttpFront::continueOnlyAfterTheHeadPassed()
{
    Client client(m_front->port());
    QVERIFY(client.encrypted());
    client.socket.write(
        "POST /body HTTP/1.1\r\nHost: h\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n");
    QVERIFY(QTest::qWaitFor([&] { return client.socket.bytesAvailable() > 0; }, 5000));
    QCOMPARE(client.socket.readAll(), QByteArray("HTTP/1.1 100 Continue\r\n\r\n"));
    client.socket.write("abcd");
    const QList<QByteArray> answers = client.answers(1);
    QCOMPARE(answers.size(), 1);
    QVERIFY(answers[0].endsWith("\"body\":4}"));

    // A declared body over the limit gets no 100, but a 413 at once.
    Client big(m_front->port());
    QVERIFY(big.encrypted());
    big.socket.write(
        "POST /body HTTP/1.1\r\nHost: h\r\nContent-Length: 5000\r\nExpect: 100-continue\r\n\r\n");
    const QList<QByteArray> refused = big.answers(1);
    QCOMPARE(refused.size(), 1);
    QVERIFY2(refused[0].startsWith("HTTP/1.1 413 "), refused[0].constData());
}

void TestHttpFront::refusalEndsTheConnection()
{
    Client client(m_front->port());
    QVERIFY(client.encrypted());
    client.socket.write(
        "GET /nowhere HTTP/1.1\r\nHost: h\r\n\r\nGET /echo HTTP/1.1\r\nHost: h\r\n\r\n");
    const QList<QByteArray> answers = client.answers(2);
    QCOMPARE(answers.size(), 1);
    QVERIFY(answers[0].startsWith("HTTP/1.1 404 "));
    QVERIFY(answers[0].contains("Connection: close"));
    QVERIFY(QTest::qWaitFor(
        [&] { return client.socket.state() == QAbstractSocket::UnconnectedState; }, 5000));
    // The request behind the refused one was never looked at.
    QCOMPARE(m_service.heads, 1);
    QTRY_COMPARE(m_front->connectionCount(), 0);
}

void TestHttpFront::anUnansweredRequestGets504()
{
    Client client(m_front->port());
    QVERIFY(client.encrypted());
    client.socket.write("GET /never HTTP/1.1\r\nHost: h\r\n\r\n");
    const QList<QByteArray> answers = client.answers(1);
    QCOMPARE(answers.size(), 1);
    QVERIFY2(answers[0].startsWith("HTTP/1.1 504 "), answers[0].constData());
    QVERIFY(QTest::qWaitFor(
        [&] { return client.socket.state() == QAbstractSocket::UnconnectedState; }, 5000));
    // An answer that comes after all goes nowhere, and harms nothing.
    QCOMPARE(m_service.parked.size(), 1);
    m_service.parked.first()(HttpAnswer::json(200, "{}"));
    QTRY_COMPARE(m_front->connectionCount(), 0);
}

QTEST_GUILESS_MAIN(TestHttpFront)
#include "tst_httpfront.moc"
