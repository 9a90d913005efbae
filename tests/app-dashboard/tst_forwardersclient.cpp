// The dashboard's forwarder logic against a real hub on 127.0.0.1: the
// asynchronous API client with the hub's pin, the event subscription, and
// the forwarders' client that keeps the forwarder cards' model, through a
// forwarder's whole life (enroll, connect, bind, unbind, test, disconnect, revoke).

#include "app-dashboard/core/eventsubscription.h"
#include "app-dashboard/core/forwardersclient.h"
#include "app-dashboard/core/hubapi.h"
#include "app-dashboard/core/jsonlisting.h"
#include "common/net/spkipin.h"
#include "support/testrig.h"

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTest>

using namespace cloop;
using namespace cloop::testing;
using dashboard::ForwarderListModel;

namespace {

const QString kProject = QStringLiteral("/srv/projects/dashboard");

// What one asynchronous call answered, waited for.
Result<QJsonObject> answerOf(
    const std::function<void(QObject *, dashboard::HubApi::Callback)> &call)
{
    QObject context;
    std::optional<Result<QJsonObject>> answer;
    call(&context, [&answer](const Result<QJsonObject> &result) { answer = result; });
    if (!QTest::qWaitFor([&] { return answer.has_value(); }, kLongWaitMs))
        return Error::make(QStringLiteral("test_timeout"), QStringLiteral("no answer"));
    return *answer;
}

// QVERIFY2 builds its message even when the check passes.
QString failureOf(const Result<QJsonObject> &answer)
{
    return answer ? QString() : answer.error().message;
}

} // namespace

class TestForwardersClient final : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void aCallWithThePinAndTokenIsAnswered();
    void aWrongPinIsRefused();
    void aWrongTokenGetsTheHubsRefusal();
    void plaintextToAnotherMachineIsRefusedWithoutDialing();
    void anAnswerForAContextThatIsGoneIsDropped();
    void theEventStreamRefusesAWrongToken();
    void theEventStreamComesBackWhenTheHubDoes();
    void theClientFollowsAForwarderThroughItsLife();
    void aListingDropsTheAnswerForAListItLeft();
    void trafficIsAskedForQuietlyWhileWatched();

private:
    api::AdminEndpoint endpoint(const QString &token = {}, const QString &pin = {}) const;

    std::unique_ptr<TestRig> m_rig;
};

void TestForwardersClient::init()
{
    m_rig = std::make_unique<TestRig>();
    QVERIFY2(m_rig->startHub(), qPrintable(m_rig->lastError()));
}

void TestForwardersClient::cleanup()
{
    if (QTest::currentTestFailed() && m_rig)
        m_rig->printDiagnostics();
    m_rig.reset();
}

api::AdminEndpoint TestForwardersClient::endpoint(const QString &token, const QString &pin) const
{
    HubProcess &hub = m_rig->hub();
    QUrl url = hub.apiUrl(QStringLiteral("/"));
    url.setPath(QString());
    auto pins = net::PinSet::parse(pin.isEmpty() ? hub.pin() : pin);
    return api::AdminEndpoint { url, token.isEmpty() ? hub.adminToken() : token,
        net::HubTrust(*pins, {}), QStringLiteral("test") };
}

void TestForwardersClient::aCallWithThePinAndTokenIsAnswered()
{
    dashboard::HubApi api;
    api.setEndpoint(endpoint());
    QSignalSpy busy(&api, &dashboard::HubApi::busyChanged);
    const auto answer = answerOf([&](QObject *context, auto done) {
        api.get(QStringLiteral("/api/whoami"), context, done);
    });
    QVERIFY2(answer, qPrintable(failureOf(answer)));
    QCOMPARE(answer->value(QLatin1String("hub_admin")).toBool(), true);
    // Busy while the call was out, idle after.
    QCOMPARE(busy.count(), 2);
    QCOMPARE(busy.at(0).at(0).toBool(), true);
    QCOMPARE(api.pendingCalls(), 0);
}

void TestForwardersClient::aWrongPinIsRefused()
{
    // Another key's pin: the hub's own with its hash changed.
    QString pin = m_rig->hub().pin();
    // A character in the middle: the last ones may be base64 padding bits.
    const qsizetype middle = pin.size() / 2 + 4;
    pin[middle] = pin.at(middle) == QLatin1Char('A') ? QLatin1Char('B') : QLatin1Char('A');
    QVERIFY(net::PinSet::parse(pin));
    QVERIFY(pin != m_rig->hub().pin());
    dashboard::HubApi api;
    api.setEndpoint(endpoint({}, pin));
    const auto answer = answerOf([&](QObject *context, auto done) {
        api.get(QStringLiteral("/api/whoami"), context, done);
    });
    QVERIFY(!answer);
    QCOMPARE(answer.error().code, QStringLiteral("pin_mismatch"));
}

void TestForwardersClient::aWrongTokenGetsTheHubsRefusal()
{
    dashboard::HubApi api;
    api.setEndpoint(endpoint(QStringLiteral("cat_not-a-token")));
    const auto answer = answerOf([&](QObject *context, auto done) {
        api.get(QStringLiteral("/api/forwarders"), context, done);
    });
    QVERIFY(!answer);
    QCOMPARE(answer.error().code, QStringLiteral("unauthorized"));
}

void TestForwardersClient::plaintextToAnotherMachineIsRefusedWithoutDialing()
{
    dashboard::HubApi api;
    api::AdminEndpoint far = endpoint();
    far.url = QUrl(QStringLiteral("ws://192.0.2.1:9"));
    api.setEndpoint(far);
    QElapsedTimer clock;
    clock.start();
    const auto answer = answerOf([&](QObject *context, auto done) {
        api.get(QStringLiteral("/api/whoami"), context, done);
    });
    QVERIFY(!answer);
    QCOMPARE(answer.error().code, QStringLiteral("insecure_url"));
    QVERIFY2(answer.error().message.contains(QLatin1String("192.0.2.1")),
        qPrintable(answer.error().message));
    // Refused before any connection was tried, and nothing was counted as out.
    QCOMPARE(api.pendingCalls(), 0);
}

void TestForwardersClient::anAnswerForAContextThatIsGoneIsDropped()
{
    dashboard::HubApi api;
    api.setEndpoint(endpoint());
    bool called = false;
    {
        QObject context;
        api.get(QStringLiteral("/api/whoami"), &context,
            [&called](const Result<QJsonObject> &) { called = true; });
    }
    QVERIFY(QTest::qWaitFor([&] { return api.pendingCalls() == 0; }, kLongWaitMs));
    QVERIFY(!called);
}

void TestForwardersClient::theEventStreamRefusesAWrongToken()
{
    dashboard::EventSubscription events;
    QSignalSpy subscribed(&events, &dashboard::EventSubscription::subscribed);
    events.start(endpoint(QStringLiteral("cat_not-a-token")));
    QVERIFY(QTest::qWaitFor(
        [&] { return events.state() == dashboard::EventSubscription::State::Refused; },
        kLongWaitMs));
    QCOMPARE(subscribed.count(), 0);
    QVERIFY(!events.lastError().isEmpty());
    // It does not dial again on its own.
    QTest::qWait(1500);
    QCOMPARE(events.state(), dashboard::EventSubscription::State::Refused);
}

void TestForwardersClient::theEventStreamComesBackWhenTheHubDoes()
{
    HubProcess &hub = m_rig->hub();
    const api::AdminEndpoint live = endpoint();
    dashboard::EventSubscription events;
    QSignalSpy subscribed(&events, &dashboard::EventSubscription::subscribed);
    // Started while the hub is down: it keeps dialling.
    QCOMPARE(hub.stop(), 0);
    events.start(live);
    QTest::qWait(1500);
    QCOMPARE(events.state(), dashboard::EventSubscription::State::Connecting);
    QVERIFY(hub.start());
    QVERIFY(QTest::qWaitFor(
        [&] { return events.state() == dashboard::EventSubscription::State::Live; }, kLongWaitMs));
    QCOMPARE(subscribed.count(), 1);
    // The hub goes away under a live stream, and comes back.
    QCOMPARE(hub.stop(), 0);
    QVERIFY(QTest::qWaitFor(
        [&] { return events.state() == dashboard::EventSubscription::State::Connecting; },
        kLongWaitMs));
    QVERIFY(hub.start());
    QVERIFY(QTest::qWaitFor(
        [&] { return events.state() == dashboard::EventSubscription::State::Live; }, kLongWaitMs));
    QCOMPARE(subscribed.count(), 2);
}

void TestForwardersClient::theClientFollowsAForwarderThroughItsLife()
{
    HubProcess &hub = m_rig->hub();
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("project"), QStringLiteral("add"), kProject }), 0);
    dashboard::HubApi api;
    api.setEndpoint(endpoint());
    dashboard::EventSubscription events;
    dashboard::ForwardersClient forwarders(&api, &events);
    ForwarderListModel *model = forwarders.model();
    QAbstractItemModelTester tester(model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    events.start(api.endpoint());
    QVERIFY(QTest::qWaitFor(
        [&] { return events.state() == dashboard::EventSubscription::State::Live; }, kLongWaitMs));
    QVERIFY(QTest::qWaitFor([&] { return !forwarders.isLoading(); }, kLongWaitMs));
    QCOMPARE(model->rowCount(), 0);

    // + Enroll forwarder: the one-time command comes back and the card appears.
    const auto enrolled = answerOf([&](QObject *context, auto done) {
        forwarders.enroll(
            QStringLiteral("bench-hsm"), QStringLiteral("1050:0407"), {}, context, done);
    });
    QVERIFY2(enrolled, qPrintable(failureOf(enrolled)));
    const QString bundle = enrolled->value(QLatin1String("bundle")).toString();
    QVERIFY(enrolled->value(QLatin1String("command")).toString().contains(bundle));
    const qint64 id = enrolled->value(QLatin1String("forwarder"))
                          .toObject()
                          .value(QLatin1String("id"))
                          .toInteger();
    QVERIFY(QTest::qWaitFor([&] { return model->rowOf(id) >= 0; }, kLongWaitMs));
    const auto role = [&](int r) { return model->index(model->rowOf(id)).data(r); };
    QCOMPARE(role(ForwarderListModel::StateRole).toString(), QStringLiteral("awaiting_enrollment"));
    QCOMPARE(role(ForwarderListModel::DeviceRole).toString(), QStringLiteral("usb 1050:0407"));

    // The forwarder connects: the card turns live from the event stream.
    ForwarderProcess &forwarder = m_rig->addForwarder({ QStringLiteral("--bundle"), bundle });
    QVERIFY(forwarder.start());
    QVERIFY2(QTest::qWaitFor(
                 [&] { return role(ForwarderListModel::ConnectedRole).toBool(); }, kLongWaitMs),
        qPrintable(forwarder.describe()));
    // Through which hub: this one, by its public host:port.
    QVERIFY(QTest::qWaitFor(
        [&] { return !role(ForwarderListModel::HubMemberRole).toString().isEmpty(); },
        kLongWaitMs));
    QCOMPARE(role(ForwarderListModel::HubMemberRole).toString(),
        QStringLiteral("127.0.0.1:%1").arg(hub.port()));

    // Bind…: the binding shows on the card.
    dashboard::BindingFields terms;
    terms.project = kProject;
    terms.ttl = QStringLiteral("8h");
    const auto bound
        = answerOf([&](QObject *context, auto done) { forwarders.bind(id, terms, context, done); });
    QVERIFY2(bound, qPrintable(failureOf(bound)));
    QVERIFY(QTest::qWaitFor(
        [&] { return role(ForwarderListModel::BindingProjectRole).toString() == kProject; },
        kLongWaitMs));
    const QDateTime expires = role(ForwarderListModel::BindingExpiresRole).toDateTime();
    const qint64 leftSeconds = QDateTime::currentDateTimeUtc().secsTo(expires);
    QVERIFY2(leftSeconds > 7 * 3600 && leftSeconds <= 8 * 3600,
        qPrintable(expires.toString(Qt::ISODate)));
    QCOMPARE(
        role(ForwarderListModel::BindingCreatedByRole).toString(), QStringLiteral("user:admin"));

    // A second Bind… is refused with the hub's words, and changes nothing.
    const auto again
        = answerOf([&](QObject *context, auto done) { forwarders.bind(id, terms, context, done); });
    QVERIFY(!again);
    QCOMPARE(again.error().code, QStringLiteral("already_bound"));
    const qint64 bindingId = role(ForwarderListModel::BindingIdRole).toLongLong();
    QVERIFY(bindingId > 0);

    // Unbind asks a reason; without one the hub refuses.
    const auto noReason = answerOf([&](QObject *context, auto done) {
        forwarders.unbind(bindingId, QString(), context, done);
    });
    QVERIFY(!noReason);
    QCOMPARE(role(ForwarderListModel::BindingIdRole).toLongLong(), bindingId);
    const auto unbound = answerOf([&](QObject *context, auto done) {
        forwarders.unbind(bindingId, QStringLiteral("the bench is returned"), context, done);
    });
    QVERIFY2(unbound, qPrintable(failureOf(unbound)));
    QVERIFY(QTest::qWaitFor(
        [&] { return role(ForwarderListModel::BindingIdRole).toLongLong() == 0; }, kLongWaitMs));

    // Test: whatever the hub answers lands on the card in words.
    const auto tested
        = answerOf([&](QObject *context, auto done) { forwarders.test(id, context, done); });
    QCOMPARE(role(ForwarderListModel::TestRunningRole).toBool(), false);
    const QString summary = role(ForwarderListModel::TestSummaryRole).toString();
    QVERIFY(!summary.isEmpty());
    if (!tested)
        QVERIFY2(summary.contains(tested.error().message), qPrintable(summary));

    // The forwarder goes away: the card greys out within a second.
    QElapsedTimer clock;
    clock.start();
    QVERIFY(forwarder.kill());
    QVERIFY(QTest::qWaitFor(
        [&] { return !role(ForwarderListModel::ConnectedRole).toBool(); }, kLongWaitMs));
    QVERIFY2(clock.elapsed() < 1000,
        qPrintable(QStringLiteral("greyed out after %1 ms").arg(clock.elapsed())));
    QCOMPARE(role(ForwarderListModel::StateRole).toString(), QStringLiteral("disconnected"));
    QCOMPARE(role(ForwarderListModel::HubMemberRole).toString(), QString());

    // Revoke: the card says so.
    const auto revoked = answerOf([&](QObject *context, auto done) {
        forwarders.revoke(id, QStringLiteral("bench returned"), context, done);
    });
    QVERIFY2(revoked, qPrintable(failureOf(revoked)));
    QVERIFY(QTest::qWaitFor(
        [&] { return role(ForwarderListModel::StateRole).toString() == QLatin1String("revoked"); },
        kLongWaitMs));
    QVERIFY(forwarders.lastError().isEmpty());
}

void TestForwardersClient::aListingDropsTheAnswerForAListItLeft()
{
    HubProcess &hub = m_rig->hub();
    const QString other = QStringLiteral("/srv/projects/other");
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("project"), QStringLiteral("add"), kProject }), 0);
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("project"), QStringLiteral("add"), other }), 0);
    const Enrollment lab = hub.enroll(
        QStringLiteral("lab"), { QStringLiteral("--interface"), QStringLiteral("eth1") });
    QVERIFY(lab.ok);
    CLOOP_COMPARE_EXIT(hub.cli({ QStringLiteral("forward"), QStringLiteral("bind"),
                           QString::number(lab.id), QStringLiteral("--project"), kProject }),
        0);
    dashboard::HubApi api;
    api.setEndpoint(endpoint());
    dashboard::JsonTableModel model(
        { dashboard::textColumn(QStringLiteral("Forwarder"), QStringLiteral("forwarder")) });
    dashboard::JsonListing listing(&api, QStringLiteral("bindings"), &model);
    QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
    QSignalSpy loaded(&listing, &dashboard::JsonListing::loaded);
    // The person picks the bound project, then at once another one.
    listing.setPath(QStringLiteral("/api/bindings"), { { QStringLiteral("project"), kProject } });
    listing.refresh();
    listing.setPath(QStringLiteral("/api/bindings"), { { QStringLiteral("project"), other } });
    listing.refresh();
    QVERIFY(QTest::qWaitFor(
        [&] { return loaded.count() >= 1 && api.pendingCalls() == 0; }, kLongWaitMs));
    // The first project's binding never showed.
    QCOMPARE(inserted.count(), 0);
    QCOMPARE(model.rowCount(), 0);
    // Back to the bound project, it shows.
    listing.setPath(QStringLiteral("/api/bindings"), { { QStringLiteral("project"), kProject } });
    listing.refresh();
    QVERIFY(QTest::qWaitFor([&] { return model.rowCount() == 1; }, kLongWaitMs));
    QCOMPARE(model.index(0, 0).data().toString(), QStringLiteral("lab"));
}

void TestForwardersClient::trafficIsAskedForQuietlyWhileWatched()
{
    HubProcess &hub = m_rig->hub();
    const Enrollment enrolled = hub.enroll(
        QStringLiteral("lab"), { QStringLiteral("--interface"), QStringLiteral("lo") });
    QVERIFY2(enrolled.ok, qPrintable(enrolled.error));
    dashboard::HubApi api;
    api.setEndpoint(endpoint());
    dashboard::ForwardersClient client(&api, nullptr);
    client.refresh();
    QVERIFY(QTest::qWaitFor([&] { return client.model()->rowCount() == 1; }, kLongWaitMs));

    QSignalSpy busy(&api, &dashboard::HubApi::busyChanged);
    QSignalSpy refreshed(&client, &dashboard::ForwardersClient::trafficRefreshed);
    client.setTrafficWatched(true);
    QVERIFY(client.isTrafficWatched());
    QVERIFY(refreshed.wait(kLongWaitMs));
    // The hub's step is 5 s by default; the row holds what it answered.
    const auto history = client.model()
                             ->index(0)
                             .data(ForwarderListModel::TrafficRole)
                             .value<dashboard::TrafficHistory>();
    QCOMPARE(history.stepSeconds, 5);
    // A graph's next step is not busy work: the indicator stays still.
    QCOMPARE(busy.count(), 0);
    client.setTrafficWatched(false);
    QVERIFY(!client.isTrafficWatched());
}

QTEST_GUILESS_MAIN(TestForwardersClient)
#include "tst_forwardersclient.moc"
