// Integration: the real hub's /metrics, on the address its --metrics-listen
// names, as a scraper reads it while a forwarder connects, the admin API is
// called and the forwarder is revoked.

#include "cloop/commit.h"
#include "support/metricstext.h"
#include "support/testrig.h"

#include <QTest>

using namespace cloop;
using namespace cloop::testing;
using namespace Qt::StringLiterals;

class TestMetricsEndpoint final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void aScraperSeesTheHubAtWork();
    void noMetricsWhenTheAddressIsEmpty();
};

namespace {
QByteArray scrape(const HubProcess &hub)
{
    const HttpResult answer = plainHttp(hub.metricsUrl());
    return answer.status == 200 ? answer.body : QByteArray();
}
} // namespace

void TestMetricsEndpoint::aScraperSeesTheHubAtWork()
{
    TestRig rig;
    QVERIFY2(rig.startHub(), qPrintable(rig.lastError()));
    HubProcess &hub = rig.hub();
    QCOMPARE(hub.metricsUrl().host(), u"127.0.0.1"_s);
    QVERIFY(hub.metricsUrl().port() > 0);

    QByteArray text = scrape(hub);
    QVERIFY2(!text.isEmpty(), "no answer from /metrics");
    QCOMPARE(metricValue(text, u"cloop_forwarders_connected"_s), 0.0);
    QCOMPARE(metricValue(text, u"cloop_build_info"_s,
                 { { u"commit"_s, QString::fromLatin1(buildinfo::kCommit) } }),
        1.0);

    ConnectedForwarder forwarder;
    QVERIFY2(rig.enrollAndConnect(u"bench-7"_s, forwarder), qPrintable(rig.lastError()));
    text = scrape(hub);
    QCOMPARE(metricValue(text, u"cloop_forwarders_connected"_s), 1.0);
    // The enrollment went through the admin API, named by its route.
    const auto enrollments = metricValue(text, u"cloop_api_request_duration_seconds_count"_s,
        { { u"route"_s, u"/api/forwarders"_s }, { u"method"_s, u"POST"_s } });
    QVERIFY2(enrollments && *enrollments >= 1, text.constData());
    const auto statements = metricValue(text, u"cloop_db_statement_duration_seconds_count"_s);
    QVERIFY(statements && *statements > 10);

    CLOOP_COMPARE_EXIT(
        hub.cli({ u"forward"_s, u"revoke"_s, QString::number(forwarder.enrollment.id) }), 0);
    QTRY_COMPARE_WITH_TIMEOUT(metricValue(scrape(hub), u"cloop_forwarders_connected"_s),
        std::optional<double>(0.0), 10000);
    text = scrape(hub);
    QCOMPARE(
        metricValue(text, u"cloop_revocations_total"_s, { { u"kind"_s, u"forwarder"_s } }), 1.0);
    QCOMPARE(
        metricValue(text, u"cloop_revocations_total"_s, { { u"kind"_s, u"executor"_s } }), 0.0);
}

void TestMetricsEndpoint::noMetricsWhenTheAddressIsEmpty()
{
    TestRig rig;
    rig.hub().setServeArguments({ u"--metrics-listen"_s, QString() });
    QVERIFY2(rig.startHub(), qPrintable(rig.lastError()));
    QVERIFY(rig.hub().metricsUrl().isEmpty());
}

QTEST_GUILESS_MAIN(TestMetricsEndpoint)
#include "tst_metricsendpoint.moc"
