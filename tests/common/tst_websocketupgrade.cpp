// Tests of a daemon's side of the WebSocket upgrade
// (common/net/websocketupgrade.h): the request it sends and every answer a
// server could give instead of the one RFC 6455 asks for, each read whole
// and byte by byte.

#include "common/net/websocketupgrade.h"

#include <QTest>

using namespace cloop::net::websocket;
using Step = UpgradeResponseReader::Step;

namespace {

// RFC 6455 1.3's own example.
const QByteArray kKey = "dGhlIHNhbXBsZSBub25jZQ==";
const QByteArray kAccept = "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=";

QByteArray switching(const QByteArray &accept = kAccept, const QByteArray &extra = {})
{
    return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
           "Sec-WebSocket-Accept: "
        + accept + "\r\n" + extra + "\r\n";
}

struct Outcome
{
    Step step = Step::NeedMore;
    qsizetype consumed = 0; // in all
    int status = 0;
    QString problem;
};

// What the reader makes of `answer`, fed in pieces of `piece` bytes (0:
// whole), and then told the connection ended when `ends`.
Outcome readAnswer(const QByteArray &answer, qsizetype piece = 0, bool ends = false)
{
    UpgradeResponseReader reader(kKey);
    Outcome outcome;
    const qsizetype step = piece > 0 ? piece : std::max<qsizetype>(answer.size(), 1);
    for (qsizetype at = 0; at < answer.size(); at += step) {
        const auto progress
            = reader.feed(QByteArrayView(answer).sliced(at, std::min(step, answer.size() - at)));
        outcome.consumed += progress.consumed;
        outcome.step = progress.step;
        if (progress.step != Step::NeedMore)
            break;
    }
    if (ends && outcome.step == Step::NeedMore)
        outcome.step = reader.finish().step;
    outcome.status = reader.status();
    outcome.problem = reader.problem();
    return outcome;
}

} // namespace

class TestWebSocketUpgrade final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void theRequestAsksForVersion13()
    {
        const QByteArray request
            = upgradeRequest("hub.example:8443", "/api/forwarders/connect", kKey);
        QVERIFY(request.startsWith("GET /api/forwarders/connect HTTP/1.1\r\n"));
        QVERIFY(request.contains("\r\nHost: hub.example:8443\r\n"));
        QVERIFY(request.contains("\r\nUpgrade: websocket\r\n"));
        QVERIFY(request.contains("\r\nConnection: Upgrade\r\n"));
        QVERIFY(request.contains("\r\nSec-WebSocket-Key: " + kKey + "\r\n"));
        QVERIFY(request.contains("\r\nSec-WebSocket-Version: 13\r\n"));
        QVERIFY(request.endsWith("\r\n\r\n"));
        QVERIFY(upgradeRequest("h", "", kKey).startsWith("GET / HTTP/1.1\r\n"));
    }

    void eachKeyIsFreshAndSixteenBytes()
    {
        const QByteArray one = newClientKey();
        const QByteArray two = newClientKey();
        QCOMPARE(QByteArray::fromBase64(one).size(), 16);
        QVERIFY(one != two);
    }

    void theRightAnswerUpgradesWhateverTheSplit_data()
    {
        QTest::addColumn<qsizetype>("piece");
        QTest::newRow("whole") << qsizetype(0);
        QTest::newRow("byte by byte") << qsizetype(1);
        QTest::newRow("7 at a time") << qsizetype(7);
    }

    void theRightAnswerUpgradesWhateverTheSplit()
    {
        // The first frame of the WebSocket may come in the same read.
        QFETCH(qsizetype, piece);
        const QByteArray head = switching(kAccept, "Server: test\r\n");
        const Outcome outcome = readAnswer(head + "\x81\x02hi", piece);
        QCOMPARE(outcome.step, Step::Upgraded);
        QCOMPARE(outcome.status, 101);
        QCOMPARE(outcome.consumed, head.size());
        QVERIFY(outcome.problem.isEmpty());
    }

    void whatFollowsA101IsTheWebSocketsWhateverItsHeadClaims()
    {
        // A length or a chunked body on a 101 does not make the first
        // frames part of the answer.
        for (const QByteArray &claim :
            { QByteArray("Content-Length: 4\r\n"), QByteArray("Transfer-Encoding: chunked\r\n") }) {
            const QByteArray head = switching(kAccept, claim);
            for (const qsizetype piece : { qsizetype(0), qsizetype(1), qsizetype(5) }) {
                const Outcome outcome = readAnswer(head + "\x81\x02hi", piece);
                QCOMPARE(outcome.step, Step::Upgraded);
                QCOMPARE(outcome.consumed, head.size());
            }
        }
    }

    void headerNamesAndTokensAreCaseInsensitive()
    {
        const QByteArray head = "HTTP/1.1 101 OK\r\nupgrade: WebSocket\r\nCONNECTION: keep-alive, "
                                "upgrade\r\nsec-websocket-accept: "
            + kAccept + "\r\n\r\n";
        QCOMPARE(readAnswer(head).step, Step::Upgraded);
        QCOMPARE(readAnswer(head, 1).step, Step::Upgraded);
    }

    void aWrongUpgradeIsMalformed_data()
    {
        QTest::addColumn<QByteArray>("answer");
        QTest::addColumn<QString>("problem");
        QTest::newRow("another accept")
            << switching("AAAAAAAAAAAAAAAAAAAAAAAAAAA=") << u"Sec-WebSocket-Accept"_qs;
        QTest::newRow("no accept") << QByteArray("HTTP/1.1 101 Switching Protocols\r\nUpgrade: "
                                                 "websocket\r\nConnection: Upgrade\r\n\r\n")
                                   << u"Sec-WebSocket-Accept"_qs;
        QTest::newRow("another protocol") << QByteArray(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: "
            "Upgrade\r\nSec-WebSocket-Accept: "
            + kAccept + "\r\n\r\n") << u"does not upgrade to a WebSocket"_qs;
        QTest::newRow("no connection upgrade") << QByteArray(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: "
            "close\r\nSec-WebSocket-Accept: "
            + kAccept + "\r\n\r\n") << u"Connection header"_qs;
        QByteArray loneCr = switching();
        loneCr.chop(1);
        QTest::newRow("a head ending in a lone CR") << loneCr + "1 Switching" << u"empty line"_qs;
        QTest::newRow("not HTTP") << QByteArray("SSH-2.0-OpenSSH_9.2\r\n")
                                  << u"not an HTTP answer"_qs;
        QTest::newRow("HTTP/2 preface")
            << QByteArray("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") << u"not an HTTP answer"_qs;
        QByteArray longHead = "HTTP/1.1 101 Switching Protocols\r\n";
        while (longHead.size() < 9000)
            longHead += "X-Filler: " + QByteArray(1000, 'x') + "\r\n";
        QTest::newRow("head over 8 KiB") << longHead + "\r\n" << u"longer than 8192 bytes"_qs;
        QByteArray manyHeaders = "HTTP/1.1 101 Switching Protocols\r\n";
        for (int i = 0; i < 65; ++i)
            manyHeaders += "X-" + QByteArray::number(i) + ": 1\r\n";
        QTest::newRow("65 headers") << manyHeaders + "\r\n" << u"more than 64 header fields"_qs;
    }

    void aWrongUpgradeIsMalformed()
    {
        QFETCH(QByteArray, answer);
        QFETCH(QString, problem);
        for (const qsizetype piece : { qsizetype(0), qsizetype(1), qsizetype(100) }) {
            const Outcome outcome = readAnswer(answer, piece);
            QCOMPARE(outcome.step, Step::Malformed);
            QVERIFY2(outcome.problem.contains(problem), qPrintable(outcome.problem));
        }
    }

    void aRefusalSaysTheHubsWords()
    {
        // The hub's refusals carry a JSON error and, when busy, Retry-After.
        const QByteArray body = R"({"error":{"code":"starting","message":"the hub is starting"}})";
        const QByteArray answer = "HTTP/1.1 503 Service Unavailable\r\nContent-Type: "
                                  "application/json\r\nRetry-After: 7\r\nContent-Length: "
            + QByteArray::number(body.size()) + "\r\n\r\n" + body;
        for (const qsizetype piece : { qsizetype(0), qsizetype(1), qsizetype(9) }) {
            const Outcome outcome = readAnswer(answer, piece);
            QCOMPARE(outcome.step, Step::Refused);
            QCOMPARE(outcome.status, 503);
            QCOMPARE(outcome.problem,
                u"the server answered the upgrade with 503 Service Unavailable: the hub is "
                "starting (retry after 7 s)"_qs);
        }
    }

    void aRefusalWaitsForItsBodyOrTheEnd()
    {
        // Half a body is not yet an answer...
        const QByteArray answer = "HTTP/1.1 404 Not Found\r\nContent-Length: 20\r\n\r\nno such";
        QCOMPARE(readAnswer(answer).step, Step::NeedMore);
        // ...nor a body that runs to the end of the connection, until it ends.
        const QByteArray open = "HTTP/1.1 403 Forbidden\r\n\r\n<html>  go\r\n away </html>";
        QCOMPARE(readAnswer(open).step, Step::NeedMore);
        const Outcome ended = readAnswer(open, 0, true);
        QCOMPARE(ended.step, Step::Refused);
        QCOMPARE(ended.problem,
            u"the server answered the upgrade with 403 Forbidden: <html> go away </html>"_qs);
    }

    void aRefusalsBodyIsHeldOnlyInPart()
    {
        const QByteArray body(100'000, 'z');
        const QByteArray answer = "HTTP/1.1 500 Internal Server Error\r\nContent-Length: "
            + QByteArray::number(body.size()) + "\r\n\r\n" + body;
        const Outcome outcome = readAnswer(answer, 4096);
        QCOMPARE(outcome.step, Step::Refused);
        QCOMPARE(outcome.consumed, answer.size());
        // The words are cut to 200 characters of the 2 KiB kept.
        QVERIFY2(outcome.problem.size() < 300, qPrintable(QString::number(outcome.problem.size())));
    }

    void anAnswerCutShortIsMalformed()
    {
        const Outcome silent = readAnswer({}, 0, true);
        QCOMPARE(silent.step, Step::Malformed);
        QVERIFY2(silent.problem.contains(u"without answering"_qs), qPrintable(silent.problem));
        const Outcome cut = readAnswer(switching().left(40), 0, true);
        QCOMPARE(cut.step, Step::Malformed);
        QVERIFY2(cut.problem.contains(u"in the middle of its answer"_qs), qPrintable(cut.problem));
    }

    void nothingIsReadAfterTheVerdict()
    {
        UpgradeResponseReader reader(kKey);
        QCOMPARE(reader.feed(switching()).step, Step::Upgraded);
        const auto again = reader.feed("HTTP/1.1 500 Oops\r\n\r\n");
        QCOMPARE(again.step, Step::Upgraded);
        QCOMPARE(again.consumed, 0);
        QCOMPARE(reader.status(), 101);
    }
};

QTEST_GUILESS_MAIN(TestWebSocketUpgrade)
#include "tst_websocketupgrade.moc"
