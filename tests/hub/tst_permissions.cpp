// The permission matrix of docs/api.md ("Who may do what"), every action
// against every kind of caller, through AdminApi::handle with no sockets.
// Each row starts from a fresh hub. A refused call must change nothing at
// all, not even the audit log; an allowed change must be audited exactly.

#include "tests/hub/apiharness.h"

#include <QJsonArray>
#include <QtTest>

#include <optional>
#include <tuple>

using namespace cloop;
using namespace cloop::hub;
using namespace cloop::hub::testing;

namespace {

const QString kP = QStringLiteral("/srv/projects/bench");
const QString kQ = QStringLiteral("/srv/projects/radio");

// The callers. The first five hold API tokens.
const QString kHubAdmin = QStringLiteral("hub administrator");
const QString kProjectAdmin = QStringLiteral("administrator of P");
const QString kMaintainer = QStringLiteral("maintainer of P");
const QString kNoRole = QStringLiteral("user without a role");
const QString kOtherAdmin = QStringLiteral("administrator of Q");
const QString kNoToken = QStringLiteral("no token");
const QString kForwarder = QStringLiteral("forwarder credential");

const QHash<QString, QString> kUserOf {
    { kHubAdmin, QStringLiteral("admin") },
    { kProjectAdmin, QStringLiteral("padmin") },
    { kMaintainer, QStringLiteral("pmaint") },
    { kNoRole, QStringLiteral("nobody") },
    { kOtherAdmin, QStringLiteral("qadmin") },
};

struct Outcome
{
    int status = 403;
    QStringList audit; // the audit actions an allowed call adds, in order
    std::optional<QStringList> visible; // what a listing shows (see ActionSpec::listKey)
};

const Outcome kRefused { 403, {}, std::nullopt };

Outcome allowed(int status, QStringList audit = {})
{
    return Outcome { status, std::move(audit), std::nullopt };
}

Outcome showing(QStringList visible)
{
    return Outcome { 200, {}, std::move(visible) };
}

// What one action sends. Paths and bodies may name the fixture's records
// as {free}, {spare}, {binding} and {request}.
struct ActionSpec
{
    QByteArray method;
    QString path;
    QJsonObject body;
    QString query;
    // For listings: the array in the answer and the field of its items
    // whose distinct values are compared; an empty key reads `field` of
    // the answer itself.
    QString listKey;
    QString field;
};

const QHash<QString, ActionSpec> &actions()
{
    static const QHash<QString, ActionSpec> specs {
        { QStringLiteral("enroll forwarder"),
            { "POST", QStringLiteral("/api/forwarders"),
                { { QStringLiteral("name"), QStringLiteral("new-fwd") },
                    { QStringLiteral("usb"), QStringLiteral("1050:0407") } },
                {}, {}, {} } },
        { QStringLiteral("revoke forwarder"),
            { "POST", QStringLiteral("/api/forwarders/{spare}/revoke"),
                { { QStringLiteral("reason"), QStringLiteral("bench returned") } }, {}, {}, {} } },
        { QStringLiteral("list forwarders"),
            { "GET", QStringLiteral("/api/forwarders"), {}, {}, QStringLiteral("forwarders"),
                QStringLiteral("name") } },
        { QStringLiteral("get forwarder"),
            { "GET", QStringLiteral("/api/forwarders/{free}"), {}, {}, {},
                QStringLiteral("name") } },
        { QStringLiteral("bind to P"),
            { "POST", QStringLiteral("/api/forwarders/{free}/bind"),
                { { QStringLiteral("project"), kP },
                    { QStringLiteral("ttl"), QStringLiteral("8h") } },
                {}, {}, {} } },
        { QStringLiteral("unbind a binding of P"),
            { "POST", QStringLiteral("/api/bindings/{binding}/unbind"),
                { { QStringLiteral("reason"), QStringLiteral("bench needed elsewhere") } }, {}, {},
                {} } },
        { QStringLiteral("list bindings of P"),
            { "GET", QStringLiteral("/api/bindings"), {}, QStringLiteral("project=") + kP,
                QStringLiteral("bindings"), QStringLiteral("project") } },
        { QStringLiteral("list bindings"),
            { "GET", QStringLiteral("/api/bindings"), {}, {}, QStringLiteral("bindings"),
                QStringLiteral("project") } },
        { QStringLiteral("request a binding for P"),
            { "POST", QStringLiteral("/api/forwarders/{free}/request"),
                { { QStringLiteral("project"), kP },
                    { QStringLiteral("ttl"), QStringLiteral("4h") },
                    { QStringLiteral("reason"), QStringLiteral("tonight's run") } },
                {}, {}, {} } },
        { QStringLiteral("list requests (inbox)"),
            { "GET", QStringLiteral("/api/requests"), {}, {}, QStringLiteral("requests"),
                QStringLiteral("project") } },
        { QStringLiteral("list requests (history)"),
            { "GET", QStringLiteral("/api/requests"), {}, QStringLiteral("all=1"),
                QStringLiteral("requests"), QStringLiteral("project") } },
        { QStringLiteral("approve a request of P"),
            { "POST", QStringLiteral("/api/requests/{request}/approve"), {}, {}, {}, {} } },
        { QStringLiteral("deny a request of P"),
            { "POST", QStringLiteral("/api/requests/{request}/deny"),
                { { QStringLiteral("reason"), QStringLiteral("not this week") } }, {}, {}, {} } },
        { QStringLiteral("add project"),
            { "POST", QStringLiteral("/api/projects"),
                { { QStringLiteral("path"), QStringLiteral("/srv/projects/new") } }, {}, {}, {} } },
        { QStringLiteral("grant role"),
            { "POST", QStringLiteral("/api/projects/roles"),
                { { QStringLiteral("project"), kP },
                    { QStringLiteral("user"), QStringLiteral("nobody") },
                    { QStringLiteral("role"), QStringLiteral("maintainer") } },
                {}, {}, {} } },
        { QStringLiteral("add user"),
            { "POST", QStringLiteral("/api/users"),
                { { QStringLiteral("name"), QStringLiteral("newbie") } }, {}, {}, {} } },
        { QStringLiteral("create token"),
            { "POST", QStringLiteral("/api/tokens"),
                { { QStringLiteral("user"), QStringLiteral("nobody") },
                    { QStringLiteral("label"), QStringLiteral("laptop") } },
                {}, {}, {} } },
        { QStringLiteral("list users"), { "GET", QStringLiteral("/api/users"), {}, {}, {}, {} } },
        { QStringLiteral("list projects"),
            { "GET", QStringLiteral("/api/projects"), {}, {}, QStringLiteral("projects"),
                QStringLiteral("path") } },
        { QStringLiteral("read audit"), { "GET", QStringLiteral("/api/audit"), {}, {}, {}, {} } },
        { QStringLiteral("whoami"),
            { "GET", QStringLiteral("/api/whoami"), {}, {}, {}, QStringLiteral("user") } },
        { QStringLiteral("start a run of P"),
            { "POST", QStringLiteral("/api/runs"),
                { { QStringLiteral("project"), kP },
                    { QStringLiteral("argv"), QJsonArray { QStringLiteral("true") } } },
                {}, {}, {} } },
        { QStringLiteral("list runs"),
            { "GET", QStringLiteral("/api/runs"), {}, QStringLiteral("all=1"),
                QStringLiteral("runs"), QStringLiteral("project") } },
        { QStringLiteral("read a run of P"),
            { "GET", QStringLiteral("/api/runs/{run}"), {}, {}, {}, QStringLiteral("project") } },
        { QStringLiteral("read the log of a run of P"),
            { "GET", QStringLiteral("/api/runs/{run}/log"), {}, {}, {}, {} } },
        { QStringLiteral("cancel a run of P"),
            { "POST", QStringLiteral("/api/runs/{run}/cancel"), {}, {}, {}, {} } },
    };
    return specs;
}

// The values a listing shows, sorted and distinct.
QStringList visibleIn(const ApiResponse &response, const ActionSpec &spec)
{
    const QJsonObject body = bodyOf(response);
    if (spec.listKey.isEmpty())
        return { body.value(spec.field).toString() };
    return fieldValues(
        body.value(spec.listKey).toArray(), QLatin1StringView(spec.field.toLatin1()));
}

} // namespace

class TestPermissions : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void matrix_data();
    void matrix();

private:
    // Rows for the five callers with tokens as given, and the two without
    // an API token, which are always refused with 401.
    static void addRows(const QString &action, const QHash<QString, Outcome> &outcomes,
        const QString &permission = {});
    QString substitute(QString text) const;

    std::unique_ptr<ApiHarness> m_hub;
    QHash<QString, QString> m_tokens; // caller -> bearer
    qint64 m_free = 0; // a USB forwarder, neither bound nor revoked
    qint64 m_spare = 0; // a USB forwarder nothing refers to
    qint64 m_binding = 0; // an active binding of P
    qint64 m_request = 0; // a pending request of P, filed by another maintainer of P
    qint64 m_run = 0; // a queued run of P, started by another maintainer of P
};

void TestPermissions::init()
{
    m_hub = std::make_unique<ApiHarness>();
    Status opened = m_hub->open();
    QVERIFY2(opened, qPrintable(failure(opened)));

    // Given: two projects with an administrator and a maintainer each, a
    // hub administrator and a user with no role at all.
    const struct
    {
        QString name;
        bool hubAdmin;
    } people[] = { { QStringLiteral("admin"), true }, { QStringLiteral("padmin"), false },
        { QStringLiteral("pmaint"), false }, { QStringLiteral("nobody"), false },
        { QStringLiteral("qadmin"), false }, { QStringLiteral("filer"), false },
        { QStringLiteral("qfiler"), false } };
    QHash<QString, QString> tokenOfUser;
    for (const auto &person : people) {
        auto token = m_hub->addUser(person.name, person.hubAdmin);
        QVERIFY2(token, qPrintable(failure(token)));
        tokenOfUser.insert(person.name, *token);
    }
    m_tokens.clear();
    for (auto it = kUserOf.cbegin(); it != kUserOf.cend(); ++it)
        m_tokens.insert(it.key(), tokenOfUser.value(it.value()));
    m_tokens.insert(kNoToken, QString());

    auto p = m_hub->addProject(kP);
    auto q = m_hub->addProject(kQ);
    QVERIFY2(p && q, qPrintable(failure(p) + failure(q)));
    for (const auto &[project, user, role] :
        { std::tuple { *p, QStringLiteral("padmin"), ProjectRole::Administrator },
            std::tuple { *p, QStringLiteral("pmaint"), ProjectRole::Maintainer },
            std::tuple { *p, QStringLiteral("filer"), ProjectRole::Maintainer },
            std::tuple { *q, QStringLiteral("qadmin"), ProjectRole::Administrator },
            std::tuple { *q, QStringLiteral("qfiler"), ProjectRole::Maintainer } }) {
        Status granted = m_hub->grant(project, user, role);
        QVERIFY2(granted, qPrintable(failure(granted)));
    }

    // Forwarders: one free, one spare (to revoke), one bound to P, one
    // bound to Q, and one whose credential a daemon holds.
    auto free = m_hub->enrollUsb(QStringLiteral("bench-hsm"), QStringLiteral("1050:0407:A1"));
    auto spare = m_hub->enrollUsb(QStringLiteral("spare"), QStringLiteral("0403:6001"));
    auto pLab = m_hub->enrollSegment(QStringLiteral("p-lab"), QStringLiteral("eth1"));
    auto qRadio = m_hub->enrollUsb(QStringLiteral("q-radio"), QStringLiteral("1d50:6089"));
    QVERIFY2(free && spare && pLab && qRadio,
        qPrintable(failure(free) + failure(spare) + failure(pLab) + failure(qRadio)));
    m_free = *free;
    m_spare = *spare;
    auto credential = m_hub->forwarderCredential(QStringLiteral("daemon-fwd"));
    QVERIFY2(credential, qPrintable(failure(credential)));
    QVERIFY(credential->startsWith(QLatin1String("cfc_")));
    m_tokens.insert(kForwarder, *credential);

    const QString admin = tokenOfUser.value(QStringLiteral("admin"));
    const ApiResponse pBound = m_hub->post(QStringLiteral("/api/forwarders/%1/bind").arg(*pLab),
        admin, { { QStringLiteral("project"), kP } });
    QVERIFY2(pBound.status == 201, qPrintable(describe(pBound)));
    m_binding = bodyOf(pBound).value(QLatin1String("id")).toInteger();
    const ApiResponse qBound = m_hub->post(QStringLiteral("/api/forwarders/%1/bind").arg(*qRadio),
        admin, { { QStringLiteral("project"), kQ } });
    QVERIFY2(qBound.status == 201, qPrintable(describe(qBound)));

    // Pending requests: one for P and one for Q, filed by maintainers who
    // are none of the callers under test.
    const ApiResponse pFiled = m_hub->post(QStringLiteral("/api/forwarders/%1/request").arg(m_free),
        tokenOfUser.value(QStringLiteral("filer")),
        { { QStringLiteral("project"), kP },
            { QStringLiteral("reason"), QStringLiteral("p run") } });
    QVERIFY2(pFiled.status == 201, qPrintable(describe(pFiled)));
    m_request = bodyOf(pFiled).value(QLatin1String("id")).toInteger();
    const ApiResponse qFiled = m_hub->post(QStringLiteral("/api/forwarders/%1/request").arg(m_free),
        tokenOfUser.value(QStringLiteral("qfiler")),
        { { QStringLiteral("project"), kQ },
            { QStringLiteral("reason"), QStringLiteral("q run") } });
    QVERIFY2(qFiled.status == 201, qPrintable(describe(qFiled)));

    // Queued runs: one of P and one of Q, started by those maintainers.
    const ApiResponse pRun
        = m_hub->post(QStringLiteral("/api/runs"), tokenOfUser.value(QStringLiteral("filer")),
            { { QStringLiteral("project"), kP },
                { QStringLiteral("argv"), QJsonArray { QStringLiteral("true") } } });
    QVERIFY2(pRun.status == 201, qPrintable(describe(pRun)));
    m_run = bodyOf(pRun).value(QLatin1String("id")).toInteger();
    const ApiResponse qRun
        = m_hub->post(QStringLiteral("/api/runs"), tokenOfUser.value(QStringLiteral("qfiler")),
            { { QStringLiteral("project"), kQ },
                { QStringLiteral("argv"), QJsonArray { QStringLiteral("true") } } });
    QVERIFY2(qRun.status == 201, qPrintable(describe(qRun)));
}

void TestPermissions::cleanup()
{
    m_hub.reset();
}

QString TestPermissions::substitute(QString text) const
{
    return text.replace(QLatin1String("{free}"), QString::number(m_free))
        .replace(QLatin1String("{spare}"), QString::number(m_spare))
        .replace(QLatin1String("{binding}"), QString::number(m_binding))
        .replace(QLatin1String("{request}"), QString::number(m_request))
        .replace(QLatin1String("{run}"), QString::number(m_run));
}

void TestPermissions::addRows(
    const QString &action, const QHash<QString, Outcome> &outcomes, const QString &permission)
{
    for (const QString &caller : { kHubAdmin, kProjectAdmin, kMaintainer, kNoRole, kOtherAdmin }) {
        Q_ASSERT(outcomes.contains(caller));
        const Outcome outcome = outcomes.value(caller);
        QTest::addRow("%s | %s", qPrintable(action), qPrintable(caller))
            << action << caller << outcome.status
            << (outcome.status == 403 ? QStringLiteral("forbidden") : QString()) << outcome.audit
            << outcome.visible.value_or(QStringList()) << outcome.visible.has_value()
            << (outcome.status == 403 ? permission : QString());
    }
    QTest::addRow("%s | %s", qPrintable(action), qPrintable(kNoToken))
        << action << kNoToken << 401 << QStringLiteral("unauthorized") << QStringList()
        << QStringList() << false << QString();
    QTest::addRow("%s | %s", qPrintable(action), qPrintable(kForwarder))
        << action << kForwarder << 401 << QStringLiteral("wrong_credential_type") << QStringList()
        << QStringList() << false << QString();
}

void TestPermissions::matrix_data()
{
    QTest::addColumn<QString>("action");
    QTest::addColumn<QString>("caller");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::addColumn<QStringList>("audit");
    QTest::addColumn<QStringList>("visible");
    QTest::addColumn<bool>("checkVisible");
    QTest::addColumn<QString>("permission"); // named in a 403's message

    const QString manage = QStringLiteral("executor.manage");
    const QStringList names { QStringLiteral("bench-hsm"), QStringLiteral("daemon-fwd"),
        QStringLiteral("p-lab"), QStringLiteral("q-radio"), QStringLiteral("spare") };
    const Outcome seeForwarders = showing(names);
    const Outcome seeFree = showing({ QStringLiteral("bench-hsm") });

    addRows(QStringLiteral("enroll forwarder"),
        { { kHubAdmin, allowed(201, { QStringLiteral("forwarder.enroll") }) },
            { kProjectAdmin, kRefused }, { kMaintainer, kRefused }, { kNoRole, kRefused },
            { kOtherAdmin, kRefused } },
        manage);
    addRows(QStringLiteral("revoke forwarder"),
        { { kHubAdmin, allowed(200, { QStringLiteral("forwarder.revoke") }) },
            { kProjectAdmin, kRefused }, { kMaintainer, kRefused }, { kNoRole, kRefused },
            { kOtherAdmin, kRefused } },
        manage);
    addRows(QStringLiteral("list forwarders"),
        { { kHubAdmin, seeForwarders }, { kProjectAdmin, seeForwarders },
            { kMaintainer, seeForwarders }, { kNoRole, kRefused },
            { kOtherAdmin, seeForwarders } });
    addRows(QStringLiteral("get forwarder"),
        { { kHubAdmin, seeFree }, { kProjectAdmin, seeFree }, { kMaintainer, seeFree },
            { kNoRole, kRefused }, { kOtherAdmin, seeFree } });
    addRows(QStringLiteral("bind to P"),
        { { kHubAdmin, allowed(201, { QStringLiteral("forwarder.bind") }) },
            { kProjectAdmin, allowed(201, { QStringLiteral("forwarder.bind") }) },
            { kMaintainer, kRefused }, { kNoRole, kRefused }, { kOtherAdmin, kRefused } },
        manage);
    addRows(QStringLiteral("unbind a binding of P"),
        { { kHubAdmin, allowed(200, { QStringLiteral("forwarder.unbind") }) },
            { kProjectAdmin, allowed(200, { QStringLiteral("forwarder.unbind") }) },
            { kMaintainer, kRefused }, { kNoRole, kRefused }, { kOtherAdmin, kRefused } },
        manage);
    addRows(QStringLiteral("list bindings of P"),
        { { kHubAdmin, showing({ kP }) }, { kProjectAdmin, showing({ kP }) },
            { kMaintainer, showing({ kP }) }, { kNoRole, kRefused }, { kOtherAdmin, kRefused } });
    addRows(QStringLiteral("list bindings"),
        { { kHubAdmin, showing({ kP, kQ }) }, { kProjectAdmin, showing({ kP }) },
            { kMaintainer, showing({ kP }) }, { kNoRole, kRefused },
            { kOtherAdmin, showing({ kQ }) } });
    addRows(QStringLiteral("request a binding for P"),
        { { kHubAdmin, allowed(201, { QStringLiteral("forwarder.request") }) },
            { kProjectAdmin, allowed(201, { QStringLiteral("forwarder.request") }) },
            { kMaintainer, allowed(201, { QStringLiteral("forwarder.request") }) },
            { kNoRole, kRefused }, { kOtherAdmin, kRefused } });
    // The inbox holds what the caller may decide: nothing, for those who
    // may decide nothing; it is not an error to look.
    addRows(QStringLiteral("list requests (inbox)"),
        { { kHubAdmin, showing({ kP, kQ }) }, { kProjectAdmin, showing({ kP }) },
            { kMaintainer, showing({}) }, { kNoRole, showing({}) },
            { kOtherAdmin, showing({ kQ }) } });
    addRows(QStringLiteral("list requests (history)"),
        { { kHubAdmin, showing({ kP, kQ }) }, { kProjectAdmin, showing({ kP }) },
            { kMaintainer, showing({}) }, { kNoRole, showing({}) },
            { kOtherAdmin, showing({ kQ }) } });
    addRows(QStringLiteral("approve a request of P"),
        { { kHubAdmin,
              allowed(
                  200, { QStringLiteral("forwarder.approve"), QStringLiteral("forwarder.bind") }) },
            { kProjectAdmin,
                allowed(200,
                    { QStringLiteral("forwarder.approve"), QStringLiteral("forwarder.bind") }) },
            { kMaintainer, kRefused }, { kNoRole, kRefused }, { kOtherAdmin, kRefused } },
        manage);
    addRows(QStringLiteral("deny a request of P"),
        { { kHubAdmin, allowed(200, { QStringLiteral("forwarder.deny") }) },
            { kProjectAdmin, allowed(200, { QStringLiteral("forwarder.deny") }) },
            { kMaintainer, kRefused }, { kNoRole, kRefused }, { kOtherAdmin, kRefused } },
        manage);
    const auto hubAdminOnly = [](int status, const QString &audit) {
        return QHash<QString, Outcome> {
            { kHubAdmin, audit.isEmpty() ? allowed(status) : allowed(status, { audit }) },
            { kProjectAdmin, kRefused }, { kMaintainer, kRefused }, { kNoRole, kRefused },
            { kOtherAdmin, kRefused }
        };
    };
    addRows(QStringLiteral("add project"), hubAdminOnly(201, QStringLiteral("project.add")));
    addRows(QStringLiteral("grant role"), hubAdminOnly(200, QStringLiteral("project.role")));
    addRows(QStringLiteral("add user"), hubAdminOnly(201, QStringLiteral("user.add")));
    addRows(QStringLiteral("create token"), hubAdminOnly(201, QStringLiteral("token.create")));
    addRows(QStringLiteral("list users"), hubAdminOnly(200, {}));
    addRows(QStringLiteral("read audit"), hubAdminOnly(200, {}));
    addRows(QStringLiteral("list projects"),
        { { kHubAdmin, showing({ kP, kQ }) }, { kProjectAdmin, showing({ kP }) },
            { kMaintainer, showing({ kP }) }, { kNoRole, showing({}) },
            { kOtherAdmin, showing({ kQ }) } });
    // Runs belong to a project: its members start, read and cancel them.
    addRows(QStringLiteral("start a run of P"),
        { { kHubAdmin, allowed(201, { QStringLiteral("run.start") }) },
            { kProjectAdmin, allowed(201, { QStringLiteral("run.start") }) },
            { kMaintainer, allowed(201, { QStringLiteral("run.start") }) }, { kNoRole, kRefused },
            { kOtherAdmin, kRefused } });
    addRows(QStringLiteral("list runs"),
        { { kHubAdmin, showing({ kP, kQ }) }, { kProjectAdmin, showing({ kP }) },
            { kMaintainer, showing({ kP }) }, { kNoRole, showing({}) },
            { kOtherAdmin, showing({ kQ }) } });
    addRows(QStringLiteral("read a run of P"),
        { { kHubAdmin, showing({ kP }) }, { kProjectAdmin, showing({ kP }) },
            { kMaintainer, showing({ kP }) }, { kNoRole, kRefused }, { kOtherAdmin, kRefused } });
    addRows(QStringLiteral("read the log of a run of P"),
        { { kHubAdmin, allowed(200, {}) }, { kProjectAdmin, allowed(200, {}) },
            { kMaintainer, allowed(200, {}) }, { kNoRole, kRefused }, { kOtherAdmin, kRefused } });
    addRows(QStringLiteral("cancel a run of P"),
        { { kHubAdmin, allowed(200, { QStringLiteral("run.cancel") }) },
            { kProjectAdmin, allowed(200, { QStringLiteral("run.cancel") }) },
            { kMaintainer, allowed(200, { QStringLiteral("run.cancel") }) }, { kNoRole, kRefused },
            { kOtherAdmin, kRefused } });
    addRows(QStringLiteral("whoami"),
        { { kHubAdmin, showing({ QStringLiteral("admin") }) },
            { kProjectAdmin, showing({ QStringLiteral("padmin") }) },
            { kMaintainer, showing({ QStringLiteral("pmaint") }) },
            { kNoRole, showing({ QStringLiteral("nobody") }) },
            { kOtherAdmin, showing({ QStringLiteral("qadmin") }) } });
}

void TestPermissions::matrix()
{
    QFETCH(QString, action);
    QFETCH(QString, caller);
    QFETCH(int, status);
    QFETCH(QString, code);
    QFETCH(QStringList, audit);
    QFETCH(QStringList, visible);
    QFETCH(bool, checkVisible);
    QFETCH(QString, permission);

    QVERIFY(actions().contains(action));
    const ActionSpec &spec = actions().value(action);
    QJsonObject body;
    for (auto it = spec.body.constBegin(); it != spec.body.constEnd(); ++it)
        body.insert(it.key(),
            it.value().isString() ? QJsonValue(substitute(it.value().toString())) : it.value());

    const QStringList before = m_hub->fingerprint();
    const qint64 lastAudit = m_hub->lastAuditId();

    // When: the caller attempts the action.
    const ApiResponse response
        = m_hub->call(spec.method, substitute(spec.path), m_tokens.value(caller), body, spec.query);

    // Then: the answer is the one the table gives.
    QVERIFY2(response.status == status,
        qPrintable(QStringLiteral("expected %1, got %2").arg(status).arg(describe(response))));
    if (status >= 400) {
        QCOMPARE(errorCode(response), code);
        if (!permission.isEmpty())
            QVERIFY2(errorMessage(response).contains(permission),
                qPrintable(QStringLiteral("the refusal should name %1: %2")
                               .arg(permission, errorMessage(response))));
        // A refusal leaves no record of any kind, not even in the audit log.
        QCOMPARE(m_hub->fingerprint(), before);
        return;
    }

    if (checkVisible)
        QCOMPARE(visibleIn(response, spec), visible);

    const QList<AuditEntry> added = m_hub->auditSince(lastAudit);
    QStringList addedActions;
    for (const AuditEntry &entry : added)
        addedActions.append(entry.action);
    QCOMPARE(addedActions, audit);
    for (const AuditEntry &entry : added)
        QCOMPARE(entry.actor, QStringLiteral("user:") + kUserOf.value(caller));
    if (audit.isEmpty())
        QCOMPARE(m_hub->fingerprint(), before); // reading changes nothing
    else
        QVERIFY(m_hub->fingerprint() != before);
}

QTEST_GUILESS_MAIN(TestPermissions)
#include "tst_permissions.moc"
