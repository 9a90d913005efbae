// Bindings, requests and approvals as docs/api.md describes them, through
// AdminApi::handle, on a ManualClock: time is moved, never waited for.

#include "tests/hub/apiharness.h"

#include "hub/domain/bindingservice.h"
#include "hub/domain/eventbus.h"

#include <QSignalSpy>
#include <QtTest>

#include <atomic>
#include <thread>

using namespace cloop;
using namespace cloop::hub;
using namespace cloop::hub::testing;

namespace {

const QString kP = QStringLiteral("/srv/projects/bench");
const QString kQ = QStringLiteral("/srv/projects/radio");
constexpr qint64 kHour = 3600;
constexpr qint64 kDay = 24 * kHour;

// The audit actions docs/api.md lists under GET /api/audit.
const QStringList kDocumentedAuditActions {
    QStringLiteral("forwarder.enroll"),
    QStringLiteral("forwarder.redeem"),
    QStringLiteral("forwarder.revoke"),
    QStringLiteral("forwarder.bind"),
    QStringLiteral("forwarder.unbind"),
    QStringLiteral("forwarder.binding_expired"),
    QStringLiteral("forwarder.request"),
    QStringLiteral("forwarder.request_expired"),
    QStringLiteral("forwarder.approve"),
    QStringLiteral("forwarder.deny"),
    QStringLiteral("forwarder.request_cancelled"),
    QStringLiteral("project.add"),
    QStringLiteral("project.role"),
    QStringLiteral("user.add"),
    QStringLiteral("token.create"),
    QStringLiteral("token.revoke"),
};

QJsonObject parseObject(const QByteArray &json)
{
    return QJsonDocument::fromJson(json).object();
}

QList<HubEvent> eventsNamed(const QSignalSpy &spy, const QString &name)
{
    QList<HubEvent> out;
    for (const QList<QVariant> &arguments : spy) {
        const auto event = arguments.value(0).value<HubEvent>();
        if (event.name == name)
            out.append(event);
    }
    return out;
}

QJsonObject withId(const QJsonArray &array, qint64 id)
{
    for (const QJsonValue &item : array) {
        if (item.toObject().value(QLatin1String("id")).toInteger() == id)
            return item.toObject();
    }
    return {};
}

QList<qint64> idsIn(const QJsonArray &array)
{
    QList<qint64> ids;
    for (const QJsonValue &item : array)
        ids.append(item.toObject().value(QLatin1String("id")).toInteger());
    return ids;
}

} // namespace

class TestBindings : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    // Binding
    void bindDefaultsTo24Hours();
    void bindTtl_data();
    void bindTtl();
    void targetAndAddress_data();
    void targetAndAddress();
    void bindRefusals_data();
    void bindRefusals();
    void oneActiveBindingPerForwarder();
    void alreadyBoundDoesNotRevealAnotherProject();
    void unbindNeedsAReasonAndEndsOnce();
    void virtualExecutorIsStoredAndShown();

    // Expiry
    void expiredBindingVanishesThenIsSwept();
    void expiryNoticedByAnotherBindIsStillPublished_data();
    void expiryNoticedByAnotherBindIsStillPublished();
    void unbindAfterExpiryIsAlreadyEnded();

    // Revocation
    void revokingEndsBindingAndCancelsRequests();

    // Requests and approvals
    void requestNeedsAReason_data();
    void requestNeedsAReason();
    void requestsReachTheRightInboxes();
    void ownRequestCannotBeDecided();
    void approvalCannotWiden_data();
    void approvalCannotWiden();
    void approvalMayNarrow();
    void approvalOfABoundForwarderChangesNothing();
    void approvedBindingCountsFromTheApproval_data();
    void approvedBindingCountsFromTheApproval();
    void decidedRequestsAreFinal();
    void pendingRequestExpires();
    void concurrentDecisionsHaveOneWinner();

    // Events
    void eventsCarryTheProject();

private:
    void setUpHub(HubCore::Options options = {});
    ApiResponse bind(qint64 forwarderId, QJsonObject body = {}, const QString &token = {});
    ApiResponse file(qint64 forwarderId, QJsonObject body = {}, const QString &token = {});
    ApiResponse approve(qint64 requestId, const QJsonObject &body = {}, const QString &token = {});
    QJsonArray bindings(const QString &token, const QString &query = {});
    QJsonArray requests(const QString &token, const QString &query = {});
    QString now() const { return toDbTime(m_hub->clock.now()); }
    QString later(qint64 seconds) const { return toDbTime(m_hub->clock.now().addSecs(seconds)); }

    std::unique_ptr<ApiHarness> m_hub;
    QString m_admin; // hub administrator
    QString m_padmin; // administrator of P
    QString m_padmin2; // another administrator of P
    QString m_pmaint; // maintainer of P
    QString m_qadmin; // administrator of Q
    qint64 m_p = 0;
    qint64 m_q = 0;
    qint64 m_hsm = 0; // USB
    qint64 m_lab = 0; // segment on eth1
    qint64 m_radio = 0; // USB
};

void TestBindings::init()
{
    m_hub = std::make_unique<ApiHarness>();
    setUpHub();
}

void TestBindings::cleanup()
{
    m_hub.reset();
}

void TestBindings::setUpHub(HubCore::Options options)
{
    Status opened = m_hub->open(options);
    QVERIFY2(opened, qPrintable(failure(opened)));
    auto admin = m_hub->addUser(QStringLiteral("admin"), true);
    auto padmin = m_hub->addUser(QStringLiteral("padmin"));
    auto padmin2 = m_hub->addUser(QStringLiteral("padmin2"));
    auto pmaint = m_hub->addUser(QStringLiteral("pmaint"));
    auto qadmin = m_hub->addUser(QStringLiteral("qadmin"));
    QVERIFY2(admin && padmin && padmin2 && pmaint && qadmin, "adding users");
    m_admin = *admin;
    m_padmin = *padmin;
    m_padmin2 = *padmin2;
    m_pmaint = *pmaint;
    m_qadmin = *qadmin;
    auto p = m_hub->addProject(kP);
    auto q = m_hub->addProject(kQ);
    QVERIFY2(p && q, "adding projects");
    m_p = *p;
    m_q = *q;
    QVERIFY(m_hub->grant(m_p, QStringLiteral("padmin"), ProjectRole::Administrator));
    QVERIFY(m_hub->grant(m_p, QStringLiteral("padmin2"), ProjectRole::Administrator));
    QVERIFY(m_hub->grant(m_p, QStringLiteral("pmaint"), ProjectRole::Maintainer));
    QVERIFY(m_hub->grant(m_q, QStringLiteral("qadmin"), ProjectRole::Administrator));
    auto hsm = m_hub->enrollUsb(QStringLiteral("hsm"), QStringLiteral("1050:0407:A1"));
    auto lab = m_hub->enrollSegment(QStringLiteral("lab"), QStringLiteral("eth1"));
    auto radio = m_hub->enrollUsb(QStringLiteral("radio"), QStringLiteral("1d50:6089"));
    QVERIFY2(hsm && lab && radio, "enrolling forwarders");
    m_hsm = *hsm;
    m_lab = *lab;
    m_radio = *radio;
}

ApiResponse TestBindings::bind(qint64 forwarderId, QJsonObject body, const QString &token)
{
    if (!body.contains(QLatin1String("project")))
        body.insert(QStringLiteral("project"), kP);
    return m_hub->post(QStringLiteral("/api/forwarders/%1/bind").arg(forwarderId),
        token.isEmpty() ? m_admin : token, body);
}

ApiResponse TestBindings::file(qint64 forwarderId, QJsonObject body, const QString &token)
{
    if (!body.contains(QLatin1String("project")))
        body.insert(QStringLiteral("project"), kP);
    if (!body.contains(QLatin1String("reason")))
        body.insert(QStringLiteral("reason"), QStringLiteral("tonight's run"));
    return m_hub->post(QStringLiteral("/api/forwarders/%1/request").arg(forwarderId),
        token.isEmpty() ? m_pmaint : token, body);
}

ApiResponse TestBindings::approve(qint64 requestId, const QJsonObject &body, const QString &token)
{
    return m_hub->post(QStringLiteral("/api/requests/%1/approve").arg(requestId),
        token.isEmpty() ? m_padmin : token, body);
}

QJsonArray TestBindings::bindings(const QString &token, const QString &query)
{
    const ApiResponse response = m_hub->get(QStringLiteral("/api/bindings"), token, query);
    if (response.status != 200)
        qWarning().noquote() << "GET /api/bindings" << query << describe(response);
    return bodyOf(response).value(QLatin1String("bindings")).toArray();
}

QJsonArray TestBindings::requests(const QString &token, const QString &query)
{
    const ApiResponse response = m_hub->get(QStringLiteral("/api/requests"), token, query);
    if (response.status != 200)
        qWarning().noquote() << "GET /api/requests" << query << describe(response);
    return bodyOf(response).value(QLatin1String("requests")).toArray();
}

// ---------------------------------------------------------------- binding

void TestBindings::bindDefaultsTo24Hours()
{
    const qint64 lastAudit = m_hub->lastAuditId();
    const ApiResponse response = bind(m_hsm);
    QVERIFY2(response.status == 201, qPrintable(describe(response)));
    const QJsonObject binding = bodyOf(response);
    QCOMPARE(binding.value(QLatin1String("forwarder_id")).toInteger(), m_hsm);
    QCOMPARE(binding.value(QLatin1String("forwarder")).toString(), QStringLiteral("hsm"));
    QCOMPARE(binding.value(QLatin1String("project")).toString(), kP);
    QCOMPARE(binding.value(QLatin1String("state")).toString(), QStringLiteral("active"));
    QCOMPARE(binding.value(QLatin1String("created_at")).toString(), now());
    QCOMPARE(binding.value(QLatin1String("created_by")).toString(), QStringLiteral("user:admin"));
    QCOMPARE(binding.value(QLatin1String("expires_at")).toString(), later(kDay));
    for (const char *empty : { "virtual_executor", "target", "address", "request_id", "ended_at",
             "ended_by", "end_reason" })
        QVERIFY2(binding.value(QLatin1String(empty)).isNull(), empty);

    const QList<AuditEntry> audit = m_hub->auditSince(lastAudit);
    QCOMPARE(audit.size(), 1);
    QCOMPARE(audit[0].action, QStringLiteral("forwarder.bind"));
    QCOMPARE(audit[0].actor, QStringLiteral("user:admin"));
    QCOMPARE(audit[0].subject, QStringLiteral("forwarder:%1").arg(m_hsm));
    QCOMPARE(audit[0].details.value(QLatin1String("ttl_seconds")).toInteger(), kDay);
    QCOMPARE(audit[0].details.value(QLatin1String("project")).toString(), kP);
}

void TestBindings::bindTtl_data()
{
    QTest::addColumn<QVariant>("ttl");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::addColumn<qint64>("seconds");

    QTest::newRow("8h") << QVariant(QStringLiteral("8h")) << 201 << QString() << 8 * kHour;
    QTest::newRow("1h30m") << QVariant(QStringLiteral("1h30m")) << 201 << QString() << 90 * 60LL;
    QTest::newRow("1s") << QVariant(QStringLiteral("1s")) << 201 << QString() << 1LL;
    QTest::newRow("90d, the longest")
        << QVariant(QStringLiteral("90d")) << 201 << QString() << 90 * kDay;
    QTest::newRow("0s") << QVariant(QStringLiteral("0s")) << 400 << QStringLiteral("invalid_ttl")
                        << 0LL;
    QTest::newRow("91d") << QVariant(QStringLiteral("91d")) << 400 << QStringLiteral("invalid_ttl")
                         << 0LL;
    QTest::newRow("89d24h1s") << QVariant(QStringLiteral("89d24h1s")) << 400
                              << QStringLiteral("invalid_ttl") << 0LL;
    QTest::newRow("soon") << QVariant(QStringLiteral("soon")) << 400
                          << QStringLiteral("invalid_duration") << 0LL;
    QTest::newRow("empty") << QVariant(QStringLiteral("")) << 400
                           << QStringLiteral("invalid_duration") << 0LL;
    QTest::newRow("no unit") << QVariant(QStringLiteral("8")) << 400
                             << QStringLiteral("invalid_duration") << 0LL;
    QTest::newRow("negative") << QVariant(QStringLiteral("-8h")) << 400
                              << QStringLiteral("invalid_duration") << 0LL;
    QTest::newRow("a number") << QVariant(3600) << 400 << QStringLiteral("invalid_duration") << 0LL;
}

void TestBindings::bindTtl()
{
    QFETCH(QVariant, ttl);
    QFETCH(int, status);
    QFETCH(QString, code);
    QFETCH(qint64, seconds);

    const QStringList before = m_hub->fingerprint();
    const ApiResponse response
        = bind(m_hsm, { { QStringLiteral("ttl"), QJsonValue::fromVariant(ttl) } });
    QVERIFY2(response.status == status, qPrintable(describe(response)));
    if (status != 201) {
        QCOMPARE(errorCode(response), code);
        QCOMPARE(m_hub->fingerprint(), before); // nothing stored, nothing audited
        return;
    }
    QCOMPARE(bodyOf(response).value(QLatin1String("expires_at")).toString(), later(seconds));
    const qint64 id = bodyOf(response).value(QLatin1String("id")).toInteger();
    QCOMPARE(m_hub->value(QStringLiteral("SELECT expires_at FROM bindings WHERE id = ?"), { id }),
        later(seconds));
}

void TestBindings::targetAndAddress_data()
{
    QTest::addColumn<bool>("segment");
    QTest::addColumn<QByteArray>("terms");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QString>("target"); // expected; "" for null
    QTest::addColumn<QString>("address");

    QTest::newRow("usb with target") << false << QByteArray(R"({"target":"eth1"})") << 400
                                     << QStringLiteral("not_a_segment") << QString() << QString();
    QTest::newRow("usb with address") << false << QByteArray(R"({"address":"10.77.0.2/24"})") << 400
                                      << QStringLiteral("not_a_segment") << QString() << QString();
    QTest::newRow("usb with both")
        << false << QByteArray(R"({"target":"eth1","address":"10.77.0.2/24"})") << 400
        << QStringLiteral("not_a_segment") << QString() << QString();
    QTest::newRow("space in interface")
        << true << QByteArray(R"({"target":"eth 1"})") << 400 << QStringLiteral("invalid_target")
        << QString() << QString();
    QTest::newRow("slash in interface")
        << true << QByteArray(R"({"target":"a/b"})") << 400 << QStringLiteral("invalid_target")
        << QString() << QString();
    QTest::newRow("colon in interface")
        << true << QByteArray(R"({"target":"eth1:0"})") << 400 << QStringLiteral("invalid_target")
        << QString() << QString();
    QTest::newRow("16-character interface")
        << true << QByteArray(R"({"target":"abcdefghijklmnop"})") << 400
        << QStringLiteral("invalid_target") << QString() << QString();
    QTest::newRow("address without prefix")
        << true << QByteArray(R"({"address":"10.77.0.2"})") << 400
        << QStringLiteral("invalid_address") << QString() << QString();
    QTest::newRow("prefix 33") << true << QByteArray(R"({"address":"10.77.0.2/33"})") << 400
                               << QStringLiteral("invalid_address") << QString() << QString();
    QTest::newRow("not an address") << true << QByteArray(R"({"address":"banana/24"})") << 400
                                    << QStringLiteral("invalid_address") << QString() << QString();
    QTest::newRow("valid target, bad address")
        << true << QByteArray(R"({"target":"eth1","address":"10.77.0.2/33"})") << 400
        << QStringLiteral("invalid_address") << QString() << QString();
    QTest::newRow("address only: target fwd0")
        << true << QByteArray(R"({"address":"10.77.0.2/24"})") << 201 << QString()
        << QStringLiteral("fwd0") << QStringLiteral("10.77.0.2/24");
    QTest::newRow("target and address")
        << true << QByteArray(R"({"target":"eth1","address":"10.77.0.2/24"})") << 201 << QString()
        << QStringLiteral("eth1") << QStringLiteral("10.77.0.2/24");
    QTest::newRow("target only") << true << QByteArray(R"({"target":"lab0"})") << 201 << QString()
                                 << QStringLiteral("lab0") << QString();
    QTest::newRow("IPv6 address") << true << QByteArray(R"({"address":"fd00:77::2/64"})") << 201
                                  << QString() << QStringLiteral("fwd0")
                                  << QStringLiteral("fd00:77::2/64");
    QTest::newRow("segment, neither")
        << true << QByteArray("{}") << 201 << QString() << QString() << QString();
}

void TestBindings::targetAndAddress()
{
    QFETCH(bool, segment);
    QFETCH(QByteArray, terms);
    QFETCH(int, status);
    QFETCH(QString, code);
    QFETCH(QString, target);
    QFETCH(QString, address);

    const QStringList before = m_hub->fingerprint();
    const ApiResponse response = bind(segment ? m_lab : m_hsm, parseObject(terms));
    QVERIFY2(response.status == status, qPrintable(describe(response)));
    if (status != 201) {
        QCOMPARE(errorCode(response), code);
        QCOMPARE(m_hub->fingerprint(), before);
        return;
    }
    const auto textOrEmpty
        = [](const QJsonValue &value) { return value.isNull() ? QString() : value.toString(); };
    const QJsonObject binding = bodyOf(response);
    QCOMPARE(textOrEmpty(binding.value(QLatin1String("target"))), target);
    QCOMPARE(textOrEmpty(binding.value(QLatin1String("address"))), address);
    // The listing shows what was stored.
    const QJsonObject listed
        = withId(bindings(m_pmaint), binding.value(QLatin1String("id")).toInteger());
    QCOMPARE(textOrEmpty(listed.value(QLatin1String("target"))), target);
    QCOMPARE(textOrEmpty(listed.value(QLatin1String("address"))), address);
}

void TestBindings::bindRefusals_data()
{
    QTest::addColumn<QString>("forwarder"); // "hsm", "unknown" or "revoked"
    QTest::addColumn<QVariant>("project"); // invalid QVariant: absent
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");

    QTest::newRow("unknown forwarder")
        << QStringLiteral("unknown") << QVariant(kP) << 404 << QStringLiteral("not_found");
    QTest::newRow("unknown project")
        << QStringLiteral("hsm") << QVariant(QStringLiteral("/srv/projects/none")) << 404
        << QStringLiteral("not_found");
    QTest::newRow("relative project")
        << QStringLiteral("hsm") << QVariant(QStringLiteral("srv/projects/bench")) << 400
        << QStringLiteral("invalid_project");
    QTest::newRow("trailing slash")
        << QStringLiteral("hsm") << QVariant(QStringLiteral("/srv/projects/bench/")) << 400
        << QStringLiteral("invalid_project");
    QTest::newRow("dot-dot") << QStringLiteral("hsm")
                             << QVariant(QStringLiteral("/srv/projects/../projects/bench")) << 400
                             << QStringLiteral("invalid_project");
    QTest::newRow("no project") << QStringLiteral("hsm") << QVariant() << 400
                                << QStringLiteral("invalid_request");
    QTest::newRow("revoked forwarder")
        << QStringLiteral("revoked") << QVariant(kP) << 409 << QStringLiteral("forwarder_revoked");
}

void TestBindings::bindRefusals()
{
    QFETCH(QString, forwarder);
    QFETCH(QVariant, project);
    QFETCH(int, status);
    QFETCH(QString, code);

    qint64 id = m_hsm;
    if (forwarder == QLatin1String("unknown")) {
        id = 999;
    } else if (forwarder == QLatin1String("revoked")) {
        id = m_radio;
        const ApiResponse revoked
            = m_hub->post(QStringLiteral("/api/forwarders/%1/revoke").arg(id), m_admin);
        QVERIFY2(revoked.status == 200, qPrintable(describe(revoked)));
    }
    const QStringList before = m_hub->fingerprint();
    QJsonObject body;
    if (project.isValid())
        body.insert(QStringLiteral("project"), project.toString());
    const ApiResponse response
        = m_hub->post(QStringLiteral("/api/forwarders/%1/bind").arg(id), m_admin, body);
    QVERIFY2(response.status == status, qPrintable(describe(response)));
    QCOMPARE(errorCode(response), code);
    QCOMPARE(m_hub->fingerprint(), before);
}

void TestBindings::oneActiveBindingPerForwarder()
{
    const ApiResponse first = bind(m_hsm);
    QVERIFY2(first.status == 201, qPrintable(describe(first)));
    const qint64 firstId = bodyOf(first).value(QLatin1String("id")).toInteger();

    // A second binding of the same forwarder, to the same or another project.
    const QStringList before = m_hub->fingerprint();
    const ApiResponse again = bind(m_hsm);
    QCOMPARE(again.status, 409);
    QCOMPARE(errorCode(again), QStringLiteral("already_bound"));
    const ApiResponse elsewhere = bind(m_hsm, { { QStringLiteral("project"), kQ } });
    QCOMPARE(elsewhere.status, 409);
    QCOMPARE(errorCode(elsewhere), QStringLiteral("already_bound"));
    QCOMPARE(m_hub->fingerprint(), before);

    // Another forwarder is not affected.
    const ApiResponse other = bind(m_lab);
    QVERIFY2(other.status == 201, qPrintable(describe(other)));

    const ApiResponse unbound = m_hub->post(QStringLiteral("/api/bindings/%1/unbind").arg(firstId),
        m_admin, { { QStringLiteral("reason"), QStringLiteral("moving it") } });
    QVERIFY2(unbound.status == 200, qPrintable(describe(unbound)));
    const ApiResponse next = bind(m_hsm, { { QStringLiteral("project"), kQ } });
    QVERIFY2(next.status == 201, qPrintable(describe(next)));
    QCOMPARE(bodyOf(next).value(QLatin1String("project")).toString(), kQ);
}

void TestBindings::alreadyBoundDoesNotRevealAnotherProject()
{
    // Given the hsm lent to Q, which P's administrator may not list.
    const ApiResponse inQ = bind(m_hsm, { { QStringLiteral("project"), kQ } }, m_qadmin);
    QVERIFY2(inQ.status == 201, qPrintable(describe(inQ)));
    QVERIFY(bindings(m_padmin, QStringLiteral("all=1")).isEmpty());

    // When P's administrator tries to bind it, the refusal is already_bound …
    const ApiResponse refused = bind(m_hsm, {}, m_padmin);
    QCOMPARE(refused.status, 409);
    QCOMPARE(errorCode(refused), QStringLiteral("already_bound"));
    // … and says nothing about Q's binding.
    QVERIFY2(!errorMessage(refused).contains(kQ), qPrintable(errorMessage(refused)));
}

void TestBindings::unbindNeedsAReasonAndEndsOnce()
{
    const ApiResponse created = bind(m_hsm);
    QVERIFY2(created.status == 201, qPrintable(describe(created)));
    const qint64 id = bodyOf(created).value(QLatin1String("id")).toInteger();
    const QString path = QStringLiteral("/api/bindings/%1/unbind").arg(id);

    const QStringList before = m_hub->fingerprint();
    for (const QJsonObject &body :
        { QJsonObject {}, QJsonObject { { QStringLiteral("reason"), QStringLiteral("   ") } } }) {
        const ApiResponse refused = m_hub->post(path, m_padmin, body);
        QCOMPARE(refused.status, 400);
        QCOMPARE(errorCode(refused), QStringLiteral("invalid_request"));
    }
    const ApiResponse unknown = m_hub->post(QStringLiteral("/api/bindings/999/unbind"), m_padmin,
        { { QStringLiteral("reason"), QStringLiteral("x") } });
    QCOMPARE(unknown.status, 404);
    QCOMPARE(m_hub->fingerprint(), before);

    m_hub->clock.advance(600);
    const qint64 lastAudit = m_hub->lastAuditId();
    const ApiResponse unbound = m_hub->post(
        path, m_padmin, { { QStringLiteral("reason"), QStringLiteral("bench needed") } });
    QVERIFY2(unbound.status == 200, qPrintable(describe(unbound)));
    QCOMPARE(bodyOf(unbound).value(QLatin1String("state")).toString(), QStringLiteral("unbound"));
    QCOMPARE(bodyOf(unbound).value(QLatin1String("ended_at")).toString(), now());
    QCOMPARE(
        m_hub->auditActionsSince(lastAudit), QStringList { QStringLiteral("forwarder.unbind") });

    const QStringList afterFirst = m_hub->fingerprint();
    const ApiResponse twice
        = m_hub->post(path, m_padmin, { { QStringLiteral("reason"), QStringLiteral("again") } });
    QCOMPARE(twice.status, 409);
    QCOMPARE(errorCode(twice), QStringLiteral("already_ended"));
    QCOMPARE(m_hub->fingerprint(), afterFirst);

    QVERIFY(withId(bindings(m_padmin), id).isEmpty());
    const QJsonObject history = withId(bindings(m_padmin, QStringLiteral("all=1")), id);
    QCOMPARE(history.value(QLatin1String("state")).toString(), QStringLiteral("unbound"));
    QCOMPARE(history.value(QLatin1String("ended_by")).toString(), QStringLiteral("user:padmin"));
    QCOMPARE(history.value(QLatin1String("end_reason")).toString(), QStringLiteral("bench needed"));
    QCOMPARE(history.value(QLatin1String("ended_at")).toString(), now());
}

void TestBindings::virtualExecutorIsStoredAndShown()
{
    const QStringList before = m_hub->fingerprint();
    const ApiResponse bad
        = bind(m_hsm, { { QStringLiteral("virtual_executor"), QStringLiteral("GPU Runner") } });
    QCOMPARE(bad.status, 400);
    QCOMPARE(errorCode(bad), QStringLiteral("invalid_name"));
    QCOMPARE(m_hub->fingerprint(), before);

    const qint64 lastAudit = m_hub->lastAuditId();
    const ApiResponse response
        = bind(m_hsm, { { QStringLiteral("virtual_executor"), QStringLiteral("gpu-runner") } });
    QVERIFY2(response.status == 201, qPrintable(describe(response)));
    const qint64 id = bodyOf(response).value(QLatin1String("id")).toInteger();
    QCOMPARE(bodyOf(response).value(QLatin1String("virtual_executor")).toString(),
        QStringLiteral("gpu-runner"));
    QCOMPARE(withId(bindings(m_pmaint), id).value(QLatin1String("virtual_executor")).toString(),
        QStringLiteral("gpu-runner"));
    QCOMPARE(
        m_hub->value(QStringLiteral("SELECT virtual_executor FROM bindings WHERE id = ?"), { id }),
        QStringLiteral("gpu-runner"));
    const QList<AuditEntry> audit = m_hub->auditSince(lastAudit);
    QCOMPARE(audit.size(), 1);
    QCOMPARE(audit[0].details.value(QLatin1String("virtual_executor")).toString(),
        QStringLiteral("gpu-runner"));
}

// ---------------------------------------------------------------- expiry

void TestBindings::expiredBindingVanishesThenIsSwept()
{
    QSignalSpy events(&m_hub->core().events(), &EventBus::published);
    const ApiResponse created = bind(m_hsm, { { QStringLiteral("ttl"), QStringLiteral("1h") } });
    QVERIFY2(created.status == 201, qPrintable(describe(created)));
    const qint64 id = bodyOf(created).value(QLatin1String("id")).toInteger();
    const QString expiresAt = bodyOf(created).value(QLatin1String("expires_at")).toString();
    QCOMPARE(idsIn(bindings(m_pmaint)), QList<qint64> { id });

    // A second before the end it is still there; at the end it is gone,
    // before any sweep ran.
    m_hub->clock.advance(kHour - 1);
    QCOMPARE(idsIn(bindings(m_pmaint)), QList<qint64> { id });
    m_hub->clock.advance(2);
    QVERIFY(bindings(m_pmaint).isEmpty());
    QVERIFY(bindings(m_admin, QStringLiteral("project=") + kP).isEmpty());
    QCOMPARE(m_hub->value(QStringLiteral("SELECT ended_at FROM bindings WHERE id = ?"), { id }),
        QStringLiteral("NULL"));
    QCOMPARE(withId(bindings(m_pmaint, QStringLiteral("all=1")), id)
                 .value(QLatin1String("state"))
                 .toString(),
        QStringLiteral("expired"));

    // The sweep marks it once, audited by the hub.
    const qint64 lastAudit = m_hub->lastAuditId();
    Status swept = m_hub->core().bindings().expireDue();
    QVERIFY2(swept, qPrintable(failure(swept)));
    const QList<AuditEntry> audit = m_hub->auditSince(lastAudit);
    QCOMPARE(audit.size(), 1);
    QCOMPARE(audit[0].action, QStringLiteral("forwarder.binding_expired"));
    QCOMPARE(audit[0].actor, QStringLiteral("hub"));
    QCOMPARE(audit[0].details.value(QLatin1String("binding")).toInteger(), id);
    QCOMPARE(m_hub->value(QStringLiteral("SELECT end_kind FROM bindings WHERE id = ?"), { id }),
        QStringLiteral("expired"));
    QCOMPARE(m_hub->value(QStringLiteral("SELECT ended_at FROM bindings WHERE id = ?"), { id }),
        expiresAt);
    const QJsonObject history = withId(bindings(m_pmaint, QStringLiteral("all=1")), id);
    QCOMPARE(history.value(QLatin1String("state")).toString(), QStringLiteral("expired"));
    QCOMPARE(history.value(QLatin1String("ended_by")).toString(), QStringLiteral("hub"));

    const QStringList afterSweep = m_hub->fingerprint();
    swept = m_hub->core().bindings().expireDue();
    QVERIFY2(swept, qPrintable(failure(swept)));
    QCOMPARE(m_hub->fingerprint(), afterSweep);

    const QList<HubEvent> ended = eventsNamed(events, QStringLiteral("binding.ended"));
    QCOMPARE(ended.size(), 1);
    QCOMPARE(ended[0].projectId, std::optional<qint64>(m_p));
    QCOMPARE(ended[0].data.value(QLatin1String("id")).toInteger(), id);
    QCOMPARE(ended[0].data.value(QLatin1String("state")).toString(), QStringLiteral("expired"));

    // The forwarder is free again.
    const ApiResponse again = bind(m_hsm);
    QVERIFY2(again.status == 201, qPrintable(describe(again)));
}

void TestBindings::expiryNoticedByAnotherBindIsStillPublished_data()
{
    QTest::addColumn<bool>("byApproval");
    QTest::newRow("another bind") << false;
    QTest::newRow("an approval") << true;
}

void TestBindings::expiryNoticedByAnotherBindIsStillPublished()
{
    QFETCH(bool, byApproval);

    // Given a binding that ran out, and the sweep timer has not fired yet.
    const ApiResponse created = bind(m_hsm, { { QStringLiteral("ttl"), QStringLiteral("1h") } });
    QVERIFY2(created.status == 201, qPrintable(describe(created)));
    const qint64 id = bodyOf(created).value(QLatin1String("id")).toInteger();
    const ApiResponse filed = file(m_lab);
    QVERIFY2(filed.status == 201, qPrintable(describe(filed)));
    m_hub->clock.advance(2 * kHour);
    QSignalSpy events(&m_hub->core().events(), &EventBus::published);

    // When somebody binds another forwarder (directly or by approving a
    // request), then the sweep runs.
    const ApiResponse other
        = byApproval ? approve(bodyOf(filed).value(QLatin1String("id")).toInteger()) : bind(m_lab);
    QVERIFY2(other.status == (byApproval ? 200 : 201), qPrintable(describe(other)));
    Status swept = m_hub->core().bindings().expireDue();
    QVERIFY2(swept, qPrintable(failure(swept)));

    // Then the expiry is audited once and announced once.
    QCOMPARE(m_hub->value(QStringLiteral("SELECT end_kind FROM bindings WHERE id = ?"), { id }),
        QStringLiteral("expired"));
    QCOMPARE(m_hub->value(QStringLiteral(
                 "SELECT count(*) FROM audit_log WHERE action = 'forwarder.binding_expired'")),
        QStringLiteral("1"));
    int announced = 0;
    for (const HubEvent &event : eventsNamed(events, QStringLiteral("binding.ended")))
        announced += event.data.value(QLatin1String("id")).toInteger() == id ? 1 : 0;
    QCOMPARE(announced, 1);
}

void TestBindings::unbindAfterExpiryIsAlreadyEnded()
{
    const ApiResponse created = bind(m_hsm, { { QStringLiteral("ttl"), QStringLiteral("1h") } });
    QVERIFY2(created.status == 201, qPrintable(describe(created)));
    const qint64 id = bodyOf(created).value(QLatin1String("id")).toInteger();
    m_hub->clock.advance(2 * kHour);
    // The API already shows it as ended …
    QCOMPARE(withId(bindings(m_admin, QStringLiteral("all=1")), id)
                 .value(QLatin1String("state"))
                 .toString(),
        QStringLiteral("expired"));

    // … so ending it again is refused like any other ended binding.
    const ApiResponse late = m_hub->post(QStringLiteral("/api/bindings/%1/unbind").arg(id), m_admin,
        { { QStringLiteral("reason"), QStringLiteral("too late") } });
    QCOMPARE(late.status, 409);
    // Whatever the answer, the record is the expiry, by the hub, once.
    QCOMPARE(m_hub->value(QStringLiteral("SELECT end_kind FROM bindings WHERE id = ?"), { id }),
        QStringLiteral("expired"));
    QCOMPARE(m_hub->value(QStringLiteral("SELECT ended_by FROM bindings WHERE id = ?"), { id }),
        QStringLiteral("hub"));
    QCOMPARE(m_hub->value(QStringLiteral("SELECT count(*) FROM audit_log WHERE action IN "
                                         "('forwarder.unbind', 'forwarder.binding_expired')")),
        QStringLiteral("1"));
}

// ---------------------------------------------------------------- revocation

void TestBindings::revokingEndsBindingAndCancelsRequests()
{
    const ApiResponse bound = bind(m_hsm);
    QVERIFY2(bound.status == 201, qPrintable(describe(bound)));
    const qint64 bindingId = bodyOf(bound).value(QLatin1String("id")).toInteger();
    const ApiResponse onHsm = file(m_hsm);
    const ApiResponse onLab = file(m_lab);
    QVERIFY2(
        onHsm.status == 201 && onLab.status == 201, qPrintable(describe(onHsm) + describe(onLab)));
    const qint64 hsmRequest = bodyOf(onHsm).value(QLatin1String("id")).toInteger();
    const qint64 labRequest = bodyOf(onLab).value(QLatin1String("id")).toInteger();

    QSignalSpy events(&m_hub->core().events(), &EventBus::published);
    const qint64 lastAudit = m_hub->lastAuditId();
    const ApiResponse revoked = m_hub->post(QStringLiteral("/api/forwarders/%1/revoke").arg(m_hsm),
        m_admin, { { QStringLiteral("reason"), QStringLiteral("bench returned") } });
    QVERIFY2(revoked.status == 200, qPrintable(describe(revoked)));
    QCOMPARE(bodyOf(revoked).value(QLatin1String("state")).toString(), QStringLiteral("revoked"));

    // Its binding ended as forwarder_revoked …
    QVERIFY(withId(bindings(m_pmaint), bindingId).isEmpty());
    const QJsonObject binding = withId(bindings(m_pmaint, QStringLiteral("all=1")), bindingId);
    QCOMPARE(binding.value(QLatin1String("state")).toString(), QStringLiteral("forwarder_revoked"));
    QCOMPARE(binding.value(QLatin1String("ended_by")).toString(), QStringLiteral("user:admin"));
    QVERIFY(!binding.value(QLatin1String("end_reason")).toString().isEmpty());
    // … its pending request was cancelled; the other forwarder's was not.
    const QJsonArray mine = requests(m_pmaint, QStringLiteral("mine=1"));
    QCOMPARE(withId(mine, hsmRequest).value(QLatin1String("state")).toString(),
        QStringLiteral("cancelled"));
    QCOMPARE(withId(mine, labRequest).value(QLatin1String("state")).toString(),
        QStringLiteral("pending"));
    QCOMPARE(idsIn(requests(m_padmin)), QList<qint64> { labRequest });
    const ApiResponse late = approve(hsmRequest);
    QCOMPARE(late.status, 409);

    // All of it in the audit log, by the one who revoked.
    const QList<AuditEntry> audit = m_hub->auditSince(lastAudit);
    QStringList actions;
    for (const AuditEntry &entry : audit) {
        actions.append(entry.action);
        QCOMPARE(entry.actor, QStringLiteral("user:admin"));
    }
    QCOMPARE(actions.size(), 3);
    QCOMPARE(actions[0], QStringLiteral("forwarder.revoke"));
    QVERIFY2(actions.contains(QStringLiteral("forwarder.unbind")), qPrintable(actions.join(u' ')));
    QVERIFY2(actions.filter(QStringLiteral("request")).size() == 1, qPrintable(actions.join(u' ')));
    for (const AuditEntry &entry : audit) {
        if (entry.action == QLatin1String("forwarder.unbind")) {
            QCOMPARE(entry.details.value(QLatin1String("binding")).toInteger(), bindingId);
            QCOMPARE(entry.details.value(QLatin1String("how")).toString(),
                QStringLiteral("forwarder_revoked"));
        }
    }

    // Events: the forwarder for everyone, the binding and request for P.
    QCOMPARE(eventsNamed(events, QStringLiteral("forwarder.revoked")).size(), 1);
    const QList<HubEvent> ended = eventsNamed(events, QStringLiteral("binding.ended"));
    QCOMPARE(ended.size(), 1);
    QCOMPARE(ended[0].projectId, std::optional<qint64>(m_p));
    const QList<HubEvent> decided = eventsNamed(events, QStringLiteral("request.decided"));
    QCOMPARE(decided.size(), 1);
    QCOMPARE(decided[0].data.value(QLatin1String("state")).toString(), QStringLiteral("cancelled"));

    // The cancellation's audit action is one docs/api.md names.
    const QString cancelAction = actions.filter(QStringLiteral("request")).value(0);
    QVERIFY2(kDocumentedAuditActions.contains(cancelAction), qPrintable(cancelAction));

    // Nothing new can be asked of it.
    const QStringList beforeRefusals = m_hub->fingerprint();
    const ApiResponse refiled = file(m_hsm);
    QCOMPARE(refiled.status, 409);
    QCOMPARE(errorCode(refiled), QStringLiteral("forwarder_revoked"));
    QCOMPARE(m_hub->fingerprint(), beforeRefusals);

    // Revoked twice: refused, nothing changes.
    const QStringList before = m_hub->fingerprint();
    const ApiResponse twice
        = m_hub->post(QStringLiteral("/api/forwarders/%1/revoke").arg(m_hsm), m_admin);
    QCOMPARE(twice.status, 409);
    QCOMPARE(errorCode(twice), QStringLiteral("already_revoked"));
    QCOMPARE(m_hub->fingerprint(), before);
}

// ---------------------------------------------------------------- requests

void TestBindings::requestNeedsAReason_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("code");
    QTest::newRow("no reason") << QByteArray(R"({"project":"/srv/projects/bench"})")
                               << QStringLiteral("invalid_request");
    QTest::newRow("empty reason") << QByteArray(R"({"project":"/srv/projects/bench","reason":""})")
                                  << QStringLiteral("invalid_request");
    QTest::newRow("blank reason") << QByteArray(
        R"({"project":"/srv/projects/bench","reason":"   "})")
                                  << QStringLiteral("invalid_request");
    QTest::newRow("reason not a string")
        << QByteArray(R"({"project":"/srv/projects/bench","reason":7})")
        << QStringLiteral("invalid_request");
    QTest::newRow("reason too long") << QByteArray(R"({"project":"/srv/projects/bench","reason":")")
            + QByteArray(2001, 'x')
            + QByteArray(R"("})") << QStringLiteral("invalid_request");
    QTest::newRow("bad ttl") << QByteArray(
        R"({"project":"/srv/projects/bench","reason":"x","ttl":"91d"})")
                             << QStringLiteral("invalid_ttl");
    QTest::newRow("target on usb")
        << QByteArray(R"({"project":"/srv/projects/bench","reason":"x","target":"eth1"})")
        << QStringLiteral("not_a_segment");
}

void TestBindings::requestNeedsAReason()
{
    QFETCH(QByteArray, body);
    QFETCH(QString, code);
    const QStringList before = m_hub->fingerprint();
    const ApiResponse response = m_hub->post(
        QStringLiteral("/api/forwarders/%1/request").arg(m_hsm), m_pmaint, parseObject(body));
    QCOMPARE(response.status, 400);
    QCOMPARE(errorCode(response), code);
    QCOMPARE(m_hub->fingerprint(), before);
}

void TestBindings::requestsReachTheRightInboxes()
{
    // A maintainer files for P.
    const qint64 lastAudit = m_hub->lastAuditId();
    const ApiResponse byMaintainer
        = file(m_hsm, { { QStringLiteral("ttl"), QStringLiteral("8h") } });
    QVERIFY2(byMaintainer.status == 201, qPrintable(describe(byMaintainer)));
    const QJsonObject r1 = bodyOf(byMaintainer);
    const qint64 id1 = r1.value(QLatin1String("id")).toInteger();
    QCOMPARE(r1.value(QLatin1String("state")).toString(), QStringLiteral("pending"));
    QCOMPARE(r1.value(QLatin1String("requested_by")).toString(), QStringLiteral("pmaint"));
    QCOMPARE(r1.value(QLatin1String("reason")).toString(), QStringLiteral("tonight's run"));
    QCOMPARE(r1.value(QLatin1String("ttl")).toString(), QStringLiteral("8h"));
    QCOMPARE(r1.value(QLatin1String("ttl_seconds")).toInteger(), 8 * kHour);
    QCOMPARE(r1.value(QLatin1String("created_at")).toString(), now());
    QCOMPARE(r1.value(QLatin1String("expires_at")).toString(),
        later(7 * kDay)); // the default request lifetime
    const QList<AuditEntry> audit = m_hub->auditSince(lastAudit);
    QCOMPARE(audit.size(), 1);
    QCOMPARE(audit[0].action, QStringLiteral("forwarder.request"));
    QCOMPARE(audit[0].actor, QStringLiteral("user:pmaint"));

    // An administrator of P files for P; the hub administrator files for Q.
    const ApiResponse byAdmin = file(m_lab, {}, m_padmin);
    const ApiResponse byHubAdmin = file(m_radio, { { QStringLiteral("project"), kQ } }, m_admin);
    QVERIFY2(byAdmin.status == 201 && byHubAdmin.status == 201,
        qPrintable(describe(byAdmin) + describe(byHubAdmin)));
    const qint64 id2 = bodyOf(byAdmin).value(QLatin1String("id")).toInteger();
    const qint64 id3 = bodyOf(byHubAdmin).value(QLatin1String("id")).toInteger();

    // Inboxes: whoever may decide, never the requester.
    QCOMPARE(idsIn(requests(m_padmin)), QList<qint64> { id1 });
    QCOMPARE(idsIn(requests(m_padmin2)), (QList<qint64> { id1, id2 }));
    QCOMPARE(idsIn(requests(m_admin)), (QList<qint64> { id1, id2 }));
    QCOMPARE(idsIn(requests(m_qadmin)), QList<qint64> { id3 });
    QVERIFY(requests(m_pmaint).isEmpty());
    // Everyone's own, in ?mine=1.
    QCOMPARE(idsIn(requests(m_pmaint, QStringLiteral("mine=1"))), QList<qint64> { id1 });
    QCOMPARE(idsIn(requests(m_padmin, QStringLiteral("mine=1"))), QList<qint64> { id2 });
    QCOMPARE(idsIn(requests(m_admin, QStringLiteral("mine=1"))), QList<qint64> { id3 });
    QVERIFY(requests(m_qadmin, QStringLiteral("mine=1")).isEmpty());
}

void TestBindings::ownRequestCannotBeDecided()
{
    const ApiResponse filedByAdmin = file(m_hsm, {}, m_padmin);
    const ApiResponse filedByHubAdmin = file(m_lab, {}, m_admin);
    QVERIFY2(filedByAdmin.status == 201 && filedByHubAdmin.status == 201,
        qPrintable(describe(filedByAdmin) + describe(filedByHubAdmin)));
    const qint64 own = bodyOf(filedByAdmin).value(QLatin1String("id")).toInteger();
    const qint64 hubOwn = bodyOf(filedByHubAdmin).value(QLatin1String("id")).toInteger();

    const QStringList before = m_hub->fingerprint();
    for (const auto &[id, token] : { std::pair { own, m_padmin }, std::pair { hubOwn, m_admin } }) {
        const ApiResponse approved = approve(id, {}, token);
        QCOMPARE(approved.status, 403);
        QCOMPARE(errorCode(approved), QStringLiteral("own_request"));
        const ApiResponse denied = m_hub->post(QStringLiteral("/api/requests/%1/deny").arg(id),
            token, { { QStringLiteral("reason"), QStringLiteral("changed my mind") } });
        QCOMPARE(denied.status, 403);
        QCOMPARE(errorCode(denied), QStringLiteral("own_request"));
    }
    QCOMPARE(m_hub->fingerprint(), before);

    // Another administrator may.
    const ApiResponse byOther = approve(own, {}, m_padmin2);
    QVERIFY2(byOther.status == 200, qPrintable(describe(byOther)));
    const ApiResponse byPadmin = approve(hubOwn, {}, m_padmin);
    QVERIFY2(byPadmin.status == 200, qPrintable(describe(byPadmin)));
}

void TestBindings::approvalCannotWiden_data()
{
    QTest::addColumn<bool>("segment");
    QTest::addColumn<QByteArray>("asked");
    QTest::addColumn<QByteArray>("approval");
    QTest::addColumn<QString>("code");

    QTest::newRow("longer ttl") << false << QByteArray(R"({"ttl":"8h"})")
                                << QByteArray(R"({"ttl":"9h"})") << QStringLiteral("cannot_widen");
    QTest::newRow("longer than the default")
        << false << QByteArray("{}") << QByteArray(R"({"ttl":"2d"})")
        << QStringLiteral("cannot_widen");
    QTest::newRow("another executor")
        << false << QByteArray(R"({"virtual_executor":"gpu-a"})")
        << QByteArray(R"({"virtual_executor":"gpu-b"})") << QStringLiteral("cannot_widen");
    QTest::newRow("a target") << true << QByteArray(R"({"address":"10.77.0.2/24"})")
                              << QByteArray(R"({"target":"eth9"})")
                              << QStringLiteral("cannot_widen");
    QTest::newRow("an address") << true << QByteArray(R"({"address":"10.77.0.2/24"})")
                                << QByteArray(R"({"address":"10.0.0.2/8"})")
                                << QStringLiteral("cannot_widen");
    QTest::newRow("another project")
        << false << QByteArray("{}") << QByteArray(R"({"project":"/srv/projects/radio"})")
        << QStringLiteral("cannot_widen");
    QTest::newRow("not a duration") << false << QByteArray("{}") << QByteArray(R"({"ttl":"soon"})")
                                    << QStringLiteral("invalid_duration");
    QTest::newRow("zero ttl") << false << QByteArray("{}") << QByteArray(R"({"ttl":"0s"})")
                              << QStringLiteral("invalid_ttl");
}

void TestBindings::approvalCannotWiden()
{
    QFETCH(bool, segment);
    QFETCH(QByteArray, asked);
    QFETCH(QByteArray, approval);
    QFETCH(QString, code);

    const ApiResponse filed = file(segment ? m_lab : m_hsm, parseObject(asked));
    QVERIFY2(filed.status == 201, qPrintable(describe(filed)));
    const qint64 id = bodyOf(filed).value(QLatin1String("id")).toInteger();

    const QStringList before = m_hub->fingerprint();
    const ApiResponse response = approve(id, parseObject(approval));
    QVERIFY2(response.status == 400, qPrintable(describe(response)));
    QCOMPARE(errorCode(response), code);
    QCOMPARE(m_hub->fingerprint(), before);
    QCOMPARE(idsIn(requests(m_padmin)), QList<qint64> { id }); // still pending
}

void TestBindings::approvalMayNarrow()
{
    // Naming an executor where the request named none narrows it.
    const ApiResponse open = file(m_hsm, { { QStringLiteral("ttl"), QStringLiteral("8h") } });
    QVERIFY2(open.status == 201, qPrintable(describe(open)));
    const ApiResponse narrowed = approve(bodyOf(open).value(QLatin1String("id")).toInteger(),
        { { QStringLiteral("virtual_executor"), QStringLiteral("gpu-a") },
            { QStringLiteral("ttl"), QStringLiteral("8h") } });
    QVERIFY2(narrowed.status == 200, qPrintable(describe(narrowed)));
    const QJsonObject binding = bodyOf(narrowed).value(QLatin1String("binding")).toObject();
    QCOMPARE(binding.value(QLatin1String("virtual_executor")).toString(), QStringLiteral("gpu-a"));
    QCOMPARE(binding.value(QLatin1String("expires_at")).toString(), later(8 * kHour));

    // Repeating the executor the request named is allowed; the segment
    // terms of the request carry over to the binding.
    const ApiResponse named = file(m_lab,
        { { QStringLiteral("virtual_executor"), QStringLiteral("gpu-b") },
            { QStringLiteral("address"), QStringLiteral("10.77.0.2/24") } });
    QVERIFY2(named.status == 201, qPrintable(describe(named)));
    const ApiResponse same = approve(bodyOf(named).value(QLatin1String("id")).toInteger(),
        { { QStringLiteral("virtual_executor"), QStringLiteral("gpu-b") } });
    QVERIFY2(same.status == 200, qPrintable(describe(same)));
    const QJsonObject segment = bodyOf(same).value(QLatin1String("binding")).toObject();
    QCOMPARE(segment.value(QLatin1String("virtual_executor")).toString(), QStringLiteral("gpu-b"));
    QCOMPARE(segment.value(QLatin1String("target")).toString(), QStringLiteral("fwd0"));
    QCOMPARE(segment.value(QLatin1String("address")).toString(), QStringLiteral("10.77.0.2/24"));
}

void TestBindings::approvalOfABoundForwarderChangesNothing()
{
    const ApiResponse filed = file(m_hsm);
    QVERIFY2(filed.status == 201, qPrintable(describe(filed)));
    const qint64 id = bodyOf(filed).value(QLatin1String("id")).toInteger();
    const ApiResponse elsewhere = bind(m_hsm, { { QStringLiteral("project"), kQ } });
    QVERIFY2(elsewhere.status == 201, qPrintable(describe(elsewhere)));

    const QStringList before = m_hub->fingerprint();
    const ApiResponse response = approve(id);
    QCOMPARE(response.status, 409);
    QCOMPARE(errorCode(response), QStringLiteral("already_bound"));
    // Neither the decision nor its audit entry survived the failed binding.
    QCOMPARE(m_hub->fingerprint(), before);
    QCOMPARE(idsIn(requests(m_padmin)), QList<qint64> { id });
}

void TestBindings::approvedBindingCountsFromTheApproval_data()
{
    QTest::addColumn<QString>("approvalTtl"); // empty: none given
    QTest::addColumn<qint64>("seconds");
    QTest::newRow("shorter ttl") << QStringLiteral("4h") << 4 * kHour;
    QTest::newRow("the requested ttl") << QString() << 8 * kHour;
    QTest::newRow("the same ttl, spelled differently") << QStringLiteral("480m") << 8 * kHour;
}

void TestBindings::approvedBindingCountsFromTheApproval()
{
    QFETCH(QString, approvalTtl);
    QFETCH(qint64, seconds);

    const QString requestedAt = now();
    const ApiResponse filed = file(m_hsm, { { QStringLiteral("ttl"), QStringLiteral("8h") } });
    QVERIFY2(filed.status == 201, qPrintable(describe(filed)));
    const qint64 id = bodyOf(filed).value(QLatin1String("id")).toInteger();

    // Three hours pass before an administrator gets to it.
    m_hub->clock.advance(3 * kHour);
    const QString approvedAt = now();
    const qint64 lastAudit = m_hub->lastAuditId();
    QJsonObject narrowing;
    if (!approvalTtl.isEmpty())
        narrowing.insert(QStringLiteral("ttl"), approvalTtl);
    const ApiResponse response = approve(id, narrowing);
    QVERIFY2(response.status == 200, qPrintable(describe(response)));

    const QJsonObject binding = bodyOf(response).value(QLatin1String("binding")).toObject();
    const QJsonObject request = bodyOf(response).value(QLatin1String("request")).toObject();
    QCOMPARE(binding.value(QLatin1String("created_at")).toString(), approvedAt);
    QCOMPARE(binding.value(QLatin1String("expires_at")).toString(), later(seconds));
    QVERIFY(binding.value(QLatin1String("expires_at")).toString()
        != toDbTime(QDateTime::fromString(requestedAt, Qt::ISODateWithMs).addSecs(seconds)));
    QCOMPARE(binding.value(QLatin1String("request_id")).toInteger(), id);
    QCOMPARE(binding.value(QLatin1String("created_by")).toString(), QStringLiteral("user:padmin"));
    QCOMPARE(binding.value(QLatin1String("state")).toString(), QStringLiteral("active"));
    QCOMPARE(request.value(QLatin1String("state")).toString(), QStringLiteral("approved"));
    QCOMPARE(request.value(QLatin1String("decided_by")).toString(), QStringLiteral("user:padmin"));
    QCOMPARE(request.value(QLatin1String("decided_at")).toString(), approvedAt);
    QCOMPARE(request.value(QLatin1String("binding_id")).toInteger(),
        binding.value(QLatin1String("id")).toInteger());
    QCOMPARE(m_hub->auditActionsSince(lastAudit),
        (QStringList { QStringLiteral("forwarder.approve"), QStringLiteral("forwarder.bind") }));
    QCOMPARE(idsIn(bindings(m_pmaint)),
        QList<qint64> { binding.value(QLatin1String("id")).toInteger() });
}

void TestBindings::decidedRequestsAreFinal()
{
    const ApiResponse first = file(m_hsm);
    const ApiResponse second = file(m_lab);
    QVERIFY2(first.status == 201 && second.status == 201,
        qPrintable(describe(first) + describe(second)));
    const qint64 approvedId = bodyOf(first).value(QLatin1String("id")).toInteger();
    const qint64 deniedId = bodyOf(second).value(QLatin1String("id")).toInteger();
    const QString denyPath = QStringLiteral("/api/requests/%1/deny").arg(deniedId);

    const ApiResponse approved = approve(approvedId);
    QVERIFY2(approved.status == 200, qPrintable(describe(approved)));

    // Deny needs a reason.
    QStringList before = m_hub->fingerprint();
    for (const QJsonObject &body :
        { QJsonObject {}, QJsonObject { { QStringLiteral("reason"), QStringLiteral(" ") } } }) {
        const ApiResponse noReason = m_hub->post(denyPath, m_padmin, body);
        QCOMPARE(noReason.status, 400);
        QCOMPARE(errorCode(noReason), QStringLiteral("invalid_request"));
    }
    QCOMPARE(m_hub->fingerprint(), before);
    m_hub->clock.advance(60);
    const qint64 lastAudit = m_hub->lastAuditId();
    const ApiResponse denied = m_hub->post(
        denyPath, m_padmin2, { { QStringLiteral("reason"), QStringLiteral("not now") } });
    QVERIFY2(denied.status == 200, qPrintable(describe(denied)));
    QCOMPARE(bodyOf(denied).value(QLatin1String("state")).toString(), QStringLiteral("denied"));
    QCOMPARE(m_hub->auditActionsSince(lastAudit), QStringList { QStringLiteral("forwarder.deny") });

    // Whatever was decided stays decided.
    before = m_hub->fingerprint();
    for (const qint64 id : { approvedId, deniedId }) {
        const ApiResponse again = approve(id, {}, m_admin);
        QCOMPARE(again.status, 409);
        QCOMPARE(errorCode(again), QStringLiteral("already_decided"));
        const ApiResponse deny = m_hub->post(QStringLiteral("/api/requests/%1/deny").arg(id),
            m_admin, { { QStringLiteral("reason"), QStringLiteral("late") } });
        QCOMPARE(deny.status, 409);
        QCOMPARE(errorCode(deny), QStringLiteral("already_decided"));
    }
    QCOMPARE(m_hub->fingerprint(), before);

    // Gone from inboxes, kept in the history.
    QVERIFY(requests(m_admin).isEmpty());
    const QJsonArray history = requests(m_admin, QStringLiteral("all=1"));
    const QJsonObject approvedOne = withId(history, approvedId);
    QCOMPARE(approvedOne.value(QLatin1String("state")).toString(), QStringLiteral("approved"));
    QCOMPARE(
        approvedOne.value(QLatin1String("decided_by")).toString(), QStringLiteral("user:padmin"));
    QVERIFY(!approvedOne.value(QLatin1String("decided_at")).toString().isEmpty());
    QVERIFY(!approvedOne.value(QLatin1String("binding_id")).isNull());
    const QJsonObject deniedOne = withId(history, deniedId);
    QCOMPARE(deniedOne.value(QLatin1String("state")).toString(), QStringLiteral("denied"));
    QCOMPARE(
        deniedOne.value(QLatin1String("decided_by")).toString(), QStringLiteral("user:padmin2"));
    QCOMPARE(deniedOne.value(QLatin1String("decided_at")).toString(), now());
    QCOMPARE(
        deniedOne.value(QLatin1String("decision_reason")).toString(), QStringLiteral("not now"));
    QVERIFY(deniedOne.value(QLatin1String("binding_id")).isNull());
    QCOMPARE(idsIn(requests(m_padmin, QStringLiteral("all=1"))),
        (QList<qint64> { approvedId, deniedId }));
    const QJsonArray mine = requests(m_pmaint, QStringLiteral("mine=1"));
    QCOMPARE(withId(mine, approvedId).value(QLatin1String("state")).toString(),
        QStringLiteral("approved"));
    QCOMPARE(
        withId(mine, deniedId).value(QLatin1String("state")).toString(), QStringLiteral("denied"));
}

void TestBindings::pendingRequestExpires()
{
    m_hub = std::make_unique<ApiHarness>();
    setUpHub(HubCore::Options { std::chrono::hours(1) });
    if (QTest::currentTestFailed())
        return;

    const ApiResponse filed = file(m_hsm);
    QVERIFY2(filed.status == 201, qPrintable(describe(filed)));
    const qint64 id = bodyOf(filed).value(QLatin1String("id")).toInteger();
    QCOMPARE(bodyOf(filed).value(QLatin1String("expires_at")).toString(), later(kHour));
    QCOMPARE(idsIn(requests(m_padmin)), QList<qint64> { id });
    QSignalSpy events(&m_hub->core().events(), &EventBus::published);

    // Past its lifetime it leaves the inbox at once, before any sweep …
    m_hub->clock.advance(kHour + 1);
    QVERIFY(requests(m_padmin).isEmpty());
    QVERIFY(requests(m_admin).isEmpty());
    QCOMPARE(withId(requests(m_padmin, QStringLiteral("all=1")), id)
                 .value(QLatin1String("state"))
                 .toString(),
        QStringLiteral("expired"));
    QCOMPARE(
        m_hub->value(QStringLiteral("SELECT state FROM binding_requests WHERE id = ?"), { id }),
        QStringLiteral("pending"));
    // … and cannot be decided any more.
    QStringList before = m_hub->fingerprint();
    const ApiResponse tooLate = approve(id);
    QCOMPARE(tooLate.status, 409);
    QCOMPARE(errorCode(tooLate), QStringLiteral("already_decided"));
    const ApiResponse denyLate = m_hub->post(QStringLiteral("/api/requests/%1/deny").arg(id),
        m_padmin, { { QStringLiteral("reason"), QStringLiteral("late") } });
    QCOMPARE(denyLate.status, 409);
    QCOMPARE(m_hub->fingerprint(), before);

    // The sweep marks it, once.
    const qint64 lastAudit = m_hub->lastAuditId();
    Status swept = m_hub->core().bindings().expireDue();
    QVERIFY2(swept, qPrintable(failure(swept)));
    const QList<AuditEntry> audit = m_hub->auditSince(lastAudit);
    QCOMPARE(audit.size(), 1);
    QCOMPARE(audit[0].action, QStringLiteral("forwarder.request_expired"));
    QCOMPARE(audit[0].actor, QStringLiteral("hub"));
    QCOMPARE(audit[0].details.value(QLatin1String("request")).toInteger(), id);
    QCOMPARE(
        m_hub->value(QStringLiteral("SELECT state FROM binding_requests WHERE id = ?"), { id }),
        QStringLiteral("expired"));
    before = m_hub->fingerprint();
    swept = m_hub->core().bindings().expireDue();
    QVERIFY2(swept, qPrintable(failure(swept)));
    QCOMPARE(m_hub->fingerprint(), before);
    const QList<HubEvent> decided = eventsNamed(events, QStringLiteral("request.decided"));
    QCOMPARE(decided.size(), 1);
    QCOMPARE(decided[0].projectId, std::optional<qint64>(m_p));
    QCOMPARE(decided[0].data.value(QLatin1String("state")).toString(), QStringLiteral("expired"));

    const ApiResponse afterSweep = approve(id);
    QCOMPARE(afterSweep.status, 409);
    QCOMPARE(errorCode(afterSweep), QStringLiteral("already_decided"));
    QCOMPARE(m_hub->fingerprint(), before);
}

void TestBindings::concurrentDecisionsHaveOneWinner()
{
    const QString path = m_hub->dbPath();
    const Clock &clock = m_hub->clock; // read by both threads, moved by neither
    constexpr int kRounds = 8;

    for (int round = 0; round < kRounds; ++round) {
        // Even rounds: two approvals race. Odd rounds: an approval races a denial.
        const bool againstDenial = round % 2 == 1;
        const ApiResponse filed = file(m_hsm);
        QVERIFY2(filed.status == 201, qPrintable(describe(filed)));
        const qint64 id = bodyOf(filed).value(QLatin1String("id")).toInteger();

        // Two deciders, each with its own connection and its own HubCore,
        // released at the same instant.
        std::atomic<int> ready { 0 };
        std::atomic<bool> go { false };
        QString outcomes[2];
        const QString tokens[2] = { m_padmin, m_admin };
        const auto decider = [&](int index) {
            QString &outcome = outcomes[index];
            auto db = Database::openSqlite(path);
            if (!db) {
                outcome = QStringLiteral("open failed: ") + db.error().message;
                ready.fetch_add(1);
                return;
            }
            HubCore core(std::move(*db), clock, HubCore::Options {});
            auto caller = core.tokens().authenticate(tokens[index]);
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire))
                std::this_thread::yield();
            if (!caller) {
                outcome = QStringLiteral("authenticate failed: ") + caller.error().message;
                return;
            }
            if (index == 1 && againstDenial) {
                auto denied = core.bindings().deny(*caller, id, QStringLiteral("racing"));
                outcome = denied ? QStringLiteral("ok") : denied.error().code;
            } else {
                auto approved = core.bindings().approve(*caller, id, {});
                outcome = approved ? QStringLiteral("ok") : approved.error().code;
            }
        };
        std::thread first(decider, 0);
        std::thread second(decider, 1);
        while (ready.load() < 2)
            std::this_thread::yield();
        go.store(true, std::memory_order_release);
        first.join();
        second.join();

        const QStringList both { outcomes[0], outcomes[1] };
        QVERIFY2(
            both.count(QStringLiteral("ok")) == 1, qPrintable(both.join(QStringLiteral(", "))));
        const QString loser = outcomes[0] == QLatin1String("ok") ? outcomes[1] : outcomes[0];
        QVERIFY2(
            loser == QLatin1String("already_decided") || loser == QLatin1String("already_bound"),
            qPrintable(loser));
        const bool deniedWon = againstDenial && outcomes[1] == QLatin1String("ok");

        QCOMPARE(m_hub->value(
                     QStringLiteral("SELECT count(*) FROM bindings WHERE request_id = ?"), { id }),
            deniedWon ? QStringLiteral("0") : QStringLiteral("1"));
        int approvals = 0;
        int denials = 0;
        int binds = 0;
        for (const AuditEntry &entry : m_hub->auditSince(0)) {
            if (entry.details.value(QLatin1String("request")).toInteger() != id)
                continue;
            approvals += entry.action == QLatin1String("forwarder.approve") ? 1 : 0;
            denials += entry.action == QLatin1String("forwarder.deny") ? 1 : 0;
            binds += entry.action == QLatin1String("forwarder.bind") ? 1 : 0;
        }
        QCOMPARE(approvals, deniedWon ? 0 : 1);
        QCOMPARE(binds, deniedWon ? 0 : 1);
        QCOMPARE(denials, deniedWon ? 1 : 0);
        QCOMPARE(
            m_hub->value(QStringLiteral("SELECT state FROM binding_requests WHERE id = ?"), { id }),
            deniedWon ? QStringLiteral("denied") : QStringLiteral("approved"));

        // Free the forwarder for the next round.
        if (!deniedWon) {
            const QString bindingId = m_hub->value(
                QStringLiteral("SELECT binding_id FROM binding_requests WHERE id = ?"), { id });
            const ApiResponse unbound
                = m_hub->post(QStringLiteral("/api/bindings/%1/unbind").arg(bindingId), m_admin,
                    { { QStringLiteral("reason"), QStringLiteral("next round") } });
            QVERIFY2(unbound.status == 200, qPrintable(describe(unbound)));
        }
    }
}

// ---------------------------------------------------------------- events

void TestBindings::eventsCarryTheProject()
{
    QSignalSpy events(&m_hub->core().events(), &EventBus::published);

    const ApiResponse bound = bind(m_hsm);
    QVERIFY2(bound.status == 201, qPrintable(describe(bound)));
    const ApiResponse unbound
        = m_hub->post(QStringLiteral("/api/bindings/%1/unbind")
                          .arg(bodyOf(bound).value(QLatin1String("id")).toInteger()),
            m_admin, { { QStringLiteral("reason"), QStringLiteral("done") } });
    QVERIFY2(unbound.status == 200, qPrintable(describe(unbound)));
    const ApiResponse toApprove = file(m_hsm);
    const ApiResponse toDeny = file(m_lab);
    QVERIFY2(toApprove.status == 201 && toDeny.status == 201, "filing");
    const ApiResponse approved = approve(bodyOf(toApprove).value(QLatin1String("id")).toInteger());
    QVERIFY2(approved.status == 200, qPrintable(describe(approved)));
    const ApiResponse denied
        = m_hub->post(QStringLiteral("/api/requests/%1/deny")
                          .arg(bodyOf(toDeny).value(QLatin1String("id")).toInteger()),
            m_padmin, { { QStringLiteral("reason"), QStringLiteral("no") } });
    QVERIFY2(denied.status == 200, qPrintable(describe(denied)));
    const ApiResponse inQ = bind(m_radio, { { QStringLiteral("project"), kQ } }, m_qadmin);
    QVERIFY2(inQ.status == 201, qPrintable(describe(inQ)));

    QStringList names;
    for (const QList<QVariant> &arguments : std::as_const(events)) {
        const auto event = arguments.value(0).value<HubEvent>();
        names.append(event.name);
        const bool inProjectQ = event.data.value(QLatin1String("project")).toString() == kQ;
        QVERIFY2(event.projectId.has_value(), qPrintable(event.name));
        QCOMPARE(*event.projectId, inProjectQ ? m_q : m_p);
        QCOMPARE(event.data.value(QLatin1String("project")).toString(), inProjectQ ? kQ : kP);
    }
    QCOMPARE(names,
        (QStringList { QStringLiteral("binding.created"), QStringLiteral("binding.ended"),
            QStringLiteral("request.filed"), QStringLiteral("request.filed"),
            QStringLiteral("request.decided"), QStringLiteral("binding.created"),
            QStringLiteral("request.decided"), QStringLiteral("binding.created") }));
    const auto last = events.last().value(0).value<HubEvent>();
    QCOMPARE(*last.projectId, m_q);
}

QTEST_GUILESS_MAIN(TestBindings)
#include "tst_bindings.moc"
