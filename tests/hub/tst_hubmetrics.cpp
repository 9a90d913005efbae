// Unit: every metric the hub serves, by name, type and value, as Prometheus
// reads it (and promtool checks it), and the endpoint that serves them.

#include "common/api/hubeventname.h"
#include "hub/domain/eventbus.h"
#include "hub/metrics/hubmetrics.h"
#include "hub/metrics/metricsendpoint.h"
#include "support/metricstext.h"

#include <QProcess>
#include <QStandardPaths>
#include <QTcpSocket>
#include <QTest>

using namespace cloop;
using namespace cloop::hub;
using namespace cloop::testing;
using namespace Qt::StringLiterals;
using namespace std::chrono_literals;

class TestHubMetrics final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void everyMetricHasItsNameAndType_data();
    void everyMetricHasItsNameAndType();
    void countersCountWhatHappened();
    void relayedBytesFollowTheStreamsTotals();
    void promtoolFindsNothingToSay();
    void theEndpointServesMetricsAndNothingElse();
};

namespace {

HubMetrics::BuildInfo build()
{
    return { u"1.2.3"_s, u"0123456789abcdef0123456789abcdef01234567"_s, 25 };
}

HubMetrics::Sample someSample()
{
    HubMetrics::Sample sample;
    sample.forwardersConnected = 3;
    sample.executorsConnected = 2;
    sample.deviceStreamsOpen = 1;
    sample.runsQueued = 4;
    sample.relayedByBinding.insert(7, { 100, 40 });
    return sample;
}

QByteArray busyExposition()
{
    HubMetrics metrics(build());
    metrics.setSampler(someSample);
    metrics.recordEvent(HubEvent(QString(api::hubeventname::kForwarderRevoked), {}));
    metrics.recordRequest("GET", u"/api/forwarders/{id}"_s, 3ms);
    metrics.recordStatement(200us);
    metrics.recordRefusal(u"executor_cannot_attach"_s);
    return metrics.scrape();
}

} // namespace

void TestHubMetrics::everyMetricHasItsNameAndType_data()
{
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("type");
    const QList<std::pair<QString, QString>> all {
        { u"cloop_build_info"_s, u"gauge"_s },
        { u"cloop_forwarders_connected"_s, u"gauge"_s },
        { u"cloop_executors_connected"_s, u"gauge"_s },
        { u"cloop_device_streams_open"_s, u"gauge"_s },
        { u"cloop_runs_queued"_s, u"gauge"_s },
        { u"cloop_relayed_bytes_total"_s, u"counter"_s },
        { u"cloop_dispatch_refusals_total"_s, u"counter"_s },
        { u"cloop_revocations_total"_s, u"counter"_s },
        { u"cloop_api_request_duration_seconds"_s, u"histogram"_s },
        { u"cloop_db_statement_duration_seconds"_s, u"histogram"_s },
    };
    for (const auto &[name, type] : all)
        QTest::newRow(qPrintable(name)) << name << type;
}

void TestHubMetrics::everyMetricHasItsNameAndType()
{
    QFETCH(QString, name);
    QFETCH(QString, type);
    const QByteArray exposition = busyExposition();
    QCOMPARE(metricType(exposition, name), type);
    QVERIFY2(exposition.contains("# HELP " + name.toUtf8() + ' '), exposition.constData());
}

void TestHubMetrics::countersCountWhatHappened()
{
    HubMetrics metrics(build());
    metrics.setSampler(someSample);
    // Revocations of each kind start at 0; other events count nothing.
    QByteArray text = metrics.scrape();
    for (const QString &kind : { u"forwarder"_s, u"executor"_s, u"token"_s })
        QCOMPARE(metricValue(text, u"cloop_revocations_total"_s, { { u"kind"_s, kind } }), 0.0);
    metrics.recordEvent(HubEvent(QString(api::hubeventname::kForwarderRevoked), {}));
    metrics.recordEvent(HubEvent(QString(api::hubeventname::kTokenRevoked), {}));
    metrics.recordEvent(HubEvent(QString(api::hubeventname::kTokenRevoked), {}));
    metrics.recordEvent(HubEvent(QString(api::hubeventname::kRunQueued), {}));
    metrics.recordRefusal(u"executor_cannot_attach"_s);
    metrics.recordRefusal(u"executor_cannot_attach"_s);
    metrics.recordRequest("GET", u"/api/forwarders/{id}"_s, 3ms);
    metrics.recordRequest("GET", QString(), 1ms);
    metrics.recordStatement(200us);
    metrics.recordStatement(2ms);
    text = metrics.scrape();
    QCOMPARE(
        metricValue(text, u"cloop_revocations_total"_s, { { u"kind"_s, u"forwarder"_s } }), 1.0);
    QCOMPARE(metricValue(text, u"cloop_revocations_total"_s, { { u"kind"_s, u"token"_s } }), 2.0);
    QCOMPARE(
        metricValue(text, u"cloop_revocations_total"_s, { { u"kind"_s, u"executor"_s } }), 0.0);
    QCOMPARE(metricValue(text, u"cloop_dispatch_refusals_total"_s,
                 { { u"reason"_s, u"executor_cannot_attach"_s } }),
        2.0);
    // Requests by the route's pattern, never by its ids.
    QCOMPARE(metricValue(text, u"cloop_api_request_duration_seconds_count"_s,
                 { { u"route"_s, u"/api/forwarders/{id}"_s }, { u"method"_s, u"GET"_s } }),
        1.0);
    QCOMPARE(metricValue(text, u"cloop_api_request_duration_seconds_count"_s,
                 { { u"route"_s, u"unmatched"_s } }),
        1.0);
    const auto sum = metricValue(text, u"cloop_api_request_duration_seconds_sum"_s,
        { { u"route"_s, u"/api/forwarders/{id}"_s } });
    QVERIFY(sum && qAbs(*sum - 0.003) < 1e-9);
    QCOMPARE(metricValue(text, u"cloop_db_statement_duration_seconds_count"_s), 2.0);
    QCOMPARE(metricValue(text, u"cloop_db_statement_duration_seconds_bucket"_s,
                 { { u"le"_s, u"0.00025"_s } }),
        1.0);
    // Gauges are what the hub says at the scrape.
    QCOMPARE(metricValue(text, u"cloop_forwarders_connected"_s), 3.0);
    QCOMPARE(metricValue(text, u"cloop_executors_connected"_s), 2.0);
    QCOMPARE(metricValue(text, u"cloop_device_streams_open"_s), 1.0);
    QCOMPARE(metricValue(text, u"cloop_runs_queued"_s), 4.0);
    QCOMPARE(metricValue(text, u"cloop_build_info"_s,
                 { { u"version"_s, u"1.2.3"_s }, { u"protocol"_s, u"25"_s },
                     { u"commit"_s, u"0123456789abcdef0123456789abcdef01234567"_s } }),
        1.0);
}

void TestHubMetrics::relayedBytesFollowTheStreamsTotals()
{
    HubMetrics metrics(build());
    HubMetrics::Sample sample;
    metrics.setSampler([&sample] { return sample; });
    QVERIFY(!metricValue(metrics.scrape(), u"cloop_relayed_bytes_total"_s));
    sample.relayedByBinding.insert(7, { 100, 40 });
    QByteArray text = metrics.scrape();
    const QMap<QString, QString> toAgent { { u"binding"_s, u"7"_s },
        { u"direction"_s, u"to_agent"_s } };
    const QMap<QString, QString> toForwarder { { u"binding"_s, u"7"_s },
        { u"direction"_s, u"to_forwarder"_s } };
    QCOMPARE(metricValue(text, u"cloop_relayed_bytes_total"_s, toAgent), 100.0);
    QCOMPARE(metricValue(text, u"cloop_relayed_bytes_total"_s, toForwarder), 40.0);
    sample.relayedByBinding[7] = { 250, 40 };
    sample.relayedByBinding.insert(9, { 1, 2 });
    text = metrics.scrape();
    QCOMPARE(metricValue(text, u"cloop_relayed_bytes_total"_s, toAgent), 250.0);
    QCOMPARE(metricValue(text, u"cloop_relayed_bytes_total"_s, toForwarder), 40.0);
    QCOMPARE(metricValue(text, u"cloop_relayed_bytes_total"_s,
                 { { u"binding"_s, u"9"_s }, { u"direction"_s, u"to_forwarder"_s } }),
        2.0);
    // A counter never goes back, whatever a sample says.
    sample.relayedByBinding[7] = { 10, 10 };
    QCOMPARE(metricValue(metrics.scrape(), u"cloop_relayed_bytes_total"_s, toAgent), 250.0);
}

void TestHubMetrics::promtoolFindsNothingToSay()
{
    const QString promtool = QStandardPaths::findExecutable(u"promtool"_s);
    if (promtool.isEmpty()) {
        if (qEnvironmentVariableIsSet("CLOOP_REQUIRE_PROMTOOL"))
            QFAIL("promtool is not installed (Debian's prometheus package)");
        QSKIP("promtool is not installed (Debian's prometheus package)");
    }
    QProcess check;
    check.start(promtool, { u"check"_s, u"metrics"_s });
    QVERIFY(check.waitForStarted());
    check.write(busyExposition());
    check.closeWriteChannel();
    QVERIFY(check.waitForFinished(30000));
    const QByteArray said = check.readAllStandardOutput() + check.readAllStandardError();
    QVERIFY2(said.trimmed().isEmpty(), said.constData());
    QCOMPARE(check.exitCode(), 0);
}

void TestHubMetrics::theEndpointServesMetricsAndNothingElse()
{
    int scrapes = 0;
    MetricsEndpoint endpoint([&scrapes] {
        ++scrapes;
        return QByteArray("cloop_up 1\n");
    });
    QVERIFY(endpoint.listen(QHostAddress::LocalHost, 0));
    QUrl url(u"http://127.0.0.1/metrics"_s);
    url.setPort(endpoint.port());

    const HttpResult scraped = plainHttp(url);
    QCOMPARE(scraped.status, 200);
    QCOMPARE(scraped.body, QByteArray("cloop_up 1\n"));
    QCOMPARE(scrapes, 1);

    QUrl elsewhere = url;
    elsewhere.setPath(u"/api/health"_s);
    QCOMPARE(plainHttp(elsewhere).status, 404);
    QCOMPARE(plainHttp(url, "POST").status, 405);
    QCOMPARE(plainHttp(url, "DELETE").status, 405);
    QCOMPARE(scrapes, 1);

    // Garbage gets a 400 and the connection's end, not a scrape.
    QTcpSocket raw;
    raw.connectToHost(QHostAddress::LocalHost, endpoint.port());
    QVERIFY(raw.waitForConnected(5000));
    raw.write("NOT HTTP AT ALL\r\n\r\n");
    QByteArray reply;
    QTRY_VERIFY_WITH_TIMEOUT((reply += raw.readAll()).startsWith("HTTP/1.1 400"), 5000);
    QTRY_COMPARE_WITH_TIMEOUT(raw.state(), QAbstractSocket::UnconnectedState, 5000);
    QCOMPARE(scrapes, 1);
}

QTEST_GUILESS_MAIN(TestHubMetrics)
#include "tst_hubmetrics.moc"
