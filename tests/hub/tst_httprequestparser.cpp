// The hub's HTTP/1.x request parser: heads and bodies within their limits,
// pipelined requests one at a time, and every kind of bad input refused
// with the status the front answers.

#include "hub/edge/httprequestparser.h"

#include <QtTest>

using cloop::hub::edge::HttpRequestParser;
using Step = HttpRequestParser::Step;

namespace {

// Feeds everything, answering each head with `bodyLimit`; what happened.
struct Outcome
{
    QList<QByteArray> targets;
    QList<QByteArray> bodies;
    int failedWith = 0;
    qsizetype consumed = 0;
};

Outcome feedAll(
    HttpRequestParser &parser, QByteArrayView input, qsizetype bodyLimit, qsizetype chunk = 0)
{
    Outcome outcome;
    qsizetype offset = 0;
    while (offset < input.size() || chunk == 0) {
        const qsizetype size
            = chunk > 0 ? std::min(chunk, input.size() - offset) : input.size() - offset;
        QByteArrayView piece = input.sliced(offset, size);
        offset += size;
        qsizetype used = 0;
        for (;;) {
            const auto progress = parser.feed(piece.sliced(used));
            used += progress.consumed;
            outcome.consumed += progress.consumed;
            if (progress.step == Step::NeedMore)
                break;
            if (progress.step == Step::Failed) {
                outcome.failedWith = parser.error().status;
                return outcome;
            }
            if (progress.step == Step::HeadComplete) {
                outcome.targets.append(parser.head().target);
                parser.setBodyLimit(bodyLimit);
                if (parser.hasFailed()) {
                    outcome.failedWith = parser.error().status;
                    return outcome;
                }
            } else {
                outcome.bodies.append(parser.takeBody());
            }
        }
        if (chunk == 0)
            break;
    }
    return outcome;
}

} // namespace

class TestHttpRequestParser final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void headFields();
    void headStopsBeforeTheBody();
    void bodiesOfDeclaredLength();
    void chunkedBodyCountedAsItComes();
    void pipelinedRequestsOneAtATime();
    void splitAnywhere();
    void upgradeHead();
    void refused_data();
    void refused();
    void headLimitCountsBytesNotChunks();
    void failedStaysFailed();
};

void TestHttpRequestParser::headFields()
{
    HttpRequestParser parser;
    const QByteArray request
        = "GET /api/runs?all=1 HTTP/1.1\r\nHost: hub\r\nAuthorization:  Bearer cat_x  \r\n"
          "X-Empty:\r\nConnection: close\r\n\r\n";
    const auto progress = parser.feed(request);
    QCOMPARE(progress.step, Step::HeadComplete);
    const auto &head = parser.head();
    QCOMPARE(head.method, QByteArray("GET"));
    QCOMPARE(head.target, QByteArray("/api/runs?all=1"));
    QCOMPARE(head.path(), QByteArray("/api/runs"));
    QCOMPARE(head.versionMinor, 1);
    QCOMPARE(head.value("AUTHORIZATION"), QByteArray("Bearer cat_x"));
    QCOMPARE(head.value("x-empty"), QByteArray());
    QCOMPARE(head.headers.size(), 4);
    QCOMPARE(head.headers[0].name, QByteArray("host"));
    QVERIFY(!head.keepAlive);
    QVERIFY(!head.contentLength);
    QVERIFY(!head.announcesBody());
    QCOMPARE(head.size, request.size());
}

void TestHttpRequestParser::headStopsBeforeTheBody()
{
    // Given a head and the first bytes of a huge body
    HttpRequestParser parser;
    const QByteArray head = "POST /api/forwarders HTTP/1.1\r\nContent-Length: 268435456\r\nExpect: "
                            "100-continue\r\n\r\n";
    const QByteArray input = head + QByteArray(4096, 'x');
    // When fed, it stops at the head: not a byte of the body is taken
    const auto progress = parser.feed(input);
    QCOMPARE(progress.step, Step::HeadComplete);
    QVERIFY(progress.consumed <= head.size());
    QVERIFY(progress.consumed >= head.size() - 1);
    QCOMPARE(*parser.head().contentLength, quint64(268435456));
    QVERIFY(parser.head().expectContinue);
    // and a limit under the declared length fails at once, with 413.
    parser.setBodyLimit(1024 * 1024);
    QVERIFY(parser.hasFailed());
    QCOMPARE(parser.error().status, 413);
    QVERIFY(parser.error().reason.contains("268435456"));
}

void TestHttpRequestParser::bodiesOfDeclaredLength()
{
    HttpRequestParser parser;
    const QByteArray input = "POST /api/x HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world";
    const Outcome outcome = feedAll(parser, input, 11);
    QCOMPARE(outcome.failedWith, 0);
    QCOMPARE(outcome.bodies, QList<QByteArray> { "hello world" });
    QCOMPARE(outcome.consumed, input.size());
}

void TestHttpRequestParser::chunkedBodyCountedAsItComes()
{
    const QByteArray input = "POST /api/x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
                             "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
    {
        HttpRequestParser parser;
        const Outcome outcome = feedAll(parser, input, 11);
        QCOMPARE(outcome.failedWith, 0);
        QCOMPARE(outcome.bodies, QList<QByteArray> { "hello world" });
    }
    {
        // One byte over the limit, with no length declared: refused as it passes it.
        HttpRequestParser parser;
        const Outcome outcome = feedAll(parser, input, 10, 7);
        QCOMPARE(outcome.failedWith, 413);
        QVERIFY(outcome.bodies.isEmpty());
    }
}

void TestHttpRequestParser::pipelinedRequestsOneAtATime()
{
    HttpRequestParser parser;
    const QByteArray first = "GET /one HTTP/1.1\r\n\r\n";
    const QByteArray input
        = first + "POST /two HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /three HTTP/1.1\r\n\r\n";
    // The parser stops after the first message: the next one is not read
    // until the caller has answered it.
    auto progress = parser.feed(input);
    QCOMPARE(progress.step, Step::HeadComplete);
    qsizetype used = progress.consumed;
    progress = parser.feed(QByteArrayView(input).sliced(used));
    QCOMPARE(progress.step, Step::MessageComplete);
    used += progress.consumed;
    QCOMPARE(used, first.size());
    QCOMPARE(parser.head().target, QByteArray("/one"));

    HttpRequestParser again;
    const Outcome outcome = feedAll(again, input, 16);
    QCOMPARE(outcome.targets, (QList<QByteArray> { "/one", "/two", "/three" }));
    QCOMPARE(outcome.bodies, (QList<QByteArray> { "", "abc", "" }));
}

void TestHttpRequestParser::splitAnywhere()
{
    const QByteArray input = "POST /api/x HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nabcde"
                             "GET /y HTTP/1.1\r\n\r\n";
    for (qsizetype chunk = 1; chunk <= 9; ++chunk) {
        HttpRequestParser parser;
        const Outcome outcome = feedAll(parser, input, 5, chunk);
        QCOMPARE(outcome.failedWith, 0);
        QCOMPARE(outcome.targets, (QList<QByteArray> { "/api/x", "/y" }));
        QCOMPARE(outcome.bodies, (QList<QByteArray> { "abcde", "" }));
        QCOMPARE(outcome.consumed, input.size());
    }
}

void TestHttpRequestParser::upgradeHead()
{
    HttpRequestParser parser;
    const auto progress
        = parser.feed("GET /api/forwarders/connect HTTP/1.1\r\nUpgrade: websocket\r\n"
                      "Connection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n\x81\x05hello");
    QCOMPARE(progress.step, Step::HeadComplete);
    QVERIFY(parser.head().upgrade);
    QCOMPARE(parser.head().value("upgrade"), QByteArray("websocket"));

    // "Upgrade" without "Connection: upgrade" announces, it does not upgrade.
    HttpRequestParser announce;
    QCOMPARE(
        announce.feed("GET / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n").step, Step::HeadComplete);
    QVERIFY(!announce.head().upgrade);
}

void TestHttpRequestParser::refused_data()
{
    QTest::addColumn<QByteArray>("input");
    QTest::addColumn<int>("status");
    QTest::newRow("garbage") << QByteArray("\x16\x03\x01\x02\x00", 5) << 400;
    QTest::newRow("HTTP/0.9") << QByteArray("GET /\r\n\r\n") << 505;
    QTest::newRow("HTTP/2 preface") << QByteArray("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") << 400;
    QTest::newRow("both lengths") << QByteArray("POST / HTTP/1.1\r\nContent-Length: 3\r\n"
                                                "Transfer-Encoding: chunked\r\n\r\n")
                                  << 400;
    QTest::newRow("two lengths") << QByteArray(
        "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n")
                                 << 400;
    QTest::newRow("length not a number")
        << QByteArray("POST / HTTP/1.1\r\nContent-Length: 3x\r\n\r\n") << 400;
    QTest::newRow("no colon") << QByteArray("GET / HTTP/1.1\r\nNoColonHere\r\n\r\n") << 400;
    QTest::newRow("control character") << QByteArray("GET / HTTP/1.1\r\nX: a\x01z\r\n\r\n") << 400;
    QTest::newRow("head over 16 KiB")
        << "GET / HTTP/1.1\r\nX: " + QByteArray(17 * 1024, 'a') << 431;
    QTest::newRow("request line over 16 KiB") << "GET /" + QByteArray(17 * 1024, 'a') << 431;
    QByteArray manyHeaders = "GET / HTTP/1.1\r\n";
    for (int i = 0; i < 65; ++i)
        manyHeaders += "X-" + QByteArray::number(i) + ": v\r\n";
    QTest::newRow("65 header fields") << manyHeaders + "\r\n" << 431;
}

void TestHttpRequestParser::refused()
{
    QFETCH(QByteArray, input);
    QFETCH(int, status);
    HttpRequestParser parser;
    const Outcome outcome = feedAll(parser, input, 1024, 512);
    QCOMPARE(outcome.failedWith, status);
    QVERIFY(!parser.error().reason.isEmpty());
    // Nothing past the limit is ever taken in.
    QVERIFY(outcome.consumed <= 16 * 1024);
}

void TestHttpRequestParser::headLimitCountsBytesNotChunks()
{
    // A head of exactly the limit passes, one byte more does not, however it
    // is split.
    HttpRequestParser::Limits limits;
    limits.maxHeadBytes = 200;
    const QByteArray start = "GET / HTTP/1.1\r\nX: ";
    const QByteArray end = "\r\n\r\n";
    const QByteArray exact = start + QByteArray(200 - start.size() - end.size(), 'a') + end;
    QCOMPARE(exact.size(), 200);
    for (qsizetype chunk : { qsizetype(1), qsizetype(7), qsizetype(0) }) {
        HttpRequestParser fits(limits);
        QCOMPARE(feedAll(fits, exact, 0, chunk).failedWith, 0);
        HttpRequestParser over(limits);
        const QByteArray tooLong = start + QByteArray(201 - start.size() - end.size(), 'a') + end;
        QCOMPARE(feedAll(over, tooLong, 0, chunk).failedWith, 431);
    }
}

void TestHttpRequestParser::failedStaysFailed()
{
    HttpRequestParser parser;
    QCOMPARE(parser.feed("NOT HTTP\r\n\r\n").step, Step::Failed);
    const auto again = parser.feed("GET / HTTP/1.1\r\n\r\n");
    QCOMPARE(again.step, Step::Failed);
    QCOMPARE(again.consumed, 0);
}

QTEST_GUILESS_MAIN(TestHttpRequestParser)
#include "tst_httprequestparser.moc"
