#include "common/api/auditlogentry.h"
#include "common/crypto/secrets.h"
#include "common/identity/enrollmentbundle.h"
#include "common/protocol/protocolversion.h"
#include "common/util/clock.h"
#include "hub/hubcore.h"
#include "hub/server/adminapi.h"
#include "hub/server/forwardertraffic.h"
#include "hub/server/hubgateways.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"
#include "hub/storage/forwarderstore.h"
#include "hub/storage/projectstore.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>

using namespace cloop;
using namespace cloop::hub;

class TestAdminApi : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();

    void healthNeedsNoToken();
    void everythingElseNeedsAToken_data();
    void everythingElseNeedsAToken();
    void enrollReturnsARedeemableBundle();
    void bundlesNameTheClustersMembers();
    void enrollRefusesBadBodies_data();
    void enrollRefusesBadBodies();
    void nonAdministratorCannotEnrollOrRevoke();
    void reenrollAnswersANewBundleAndVoidsTheOld();
    void listAndGetShowState();
    void trafficShowsEachForwardersStepsToWhoMayRead();
    void theAuditNamesTheDaemonThatActed();
    void revokeAnswers();
    void unknownRoutesAndMethods();
    void oversizedBodyRefused();

private:
    ApiResponse call(const QByteArray &method, const QString &path, const QJsonObject &body = {},
        const QString &token = {});
    static QString errorCode(const ApiResponse &response)
    {
        return response.body.toObject()
            .value(QLatin1String("error"))
            .toObject()
            .value(QLatin1String("code"))
            .toString();
    }

    std::unique_ptr<QTemporaryDir> m_dir;
    Clock m_clock;
    std::unique_ptr<HubCore> m_core;
    Database *m_db = nullptr;
    ApiTokenStore *m_tokens = nullptr;
    ForwarderStore *m_forwarders = nullptr;
    std::unique_ptr<HubGateways> m_gateways;
    std::unique_ptr<AdminApi> m_api;
    QString m_adminToken;
    QString m_userToken;
    const QUrl m_hubUrl { QStringLiteral("wss://hub.example.test:7443") };
    const QString m_pin = QStringLiteral("sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
};

void TestAdminApi::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    auto db = Database::openSqlite(m_dir->filePath(QStringLiteral("hub.db")));
    QVERIFY(db);
    m_core = std::make_unique<HubCore>(std::move(*db), m_clock, HubCore::Options {});
    m_db = &m_core->stores().database;
    m_tokens = &m_core->stores().tokens;
    m_forwarders = &m_core->stores().forwarders;
    m_gateways = std::make_unique<HubGateways>(*m_core, QStringLiteral("9.9.9"));
    m_api = std::make_unique<AdminApi>(
        *m_core, *m_gateways, HubIdentity { m_hubUrl, m_pin, QStringLiteral("9.9.9") });
    auto adminId = m_tokens->ensureHubAdmin(QStringLiteral("admin"));
    QVERIFY(adminId);
    auto adminToken
        = m_tokens->createToken(*adminId, QStringLiteral("test"), QStringLiteral("test"));
    QVERIFY(adminToken);
    m_adminToken = *adminToken;

    // A user with a role somewhere, but not a hub administrator.
    auto user
        = m_core->stores().projects.addUser(QStringLiteral("maria"), false, QStringLiteral("test"));
    QVERIFY(user);
    auto project = m_core->stores().projects.addProject(
        QStringLiteral("/srv/projects/bench"), QStringLiteral("test"));
    QVERIFY(project);
    QVERIFY(m_core->stores().projects.setRole(
        project->id, user->id, ProjectRole::Maintainer, QStringLiteral("test")));
    auto userToken
        = m_tokens->createToken(user->id, QStringLiteral("test"), QStringLiteral("test"));
    QVERIFY(userToken);
    m_userToken = *userToken;
}

void TestAdminApi::cleanup()
{
    m_api.reset();
    m_gateways.reset();
    m_core.reset();
    m_dir.reset();
}

ApiResponse TestAdminApi::call(
    const QByteArray &method, const QString &path, const QJsonObject &body, const QString &token)
{
    ApiRequest request;
    request.method = method;
    request.path = path;
    const QString bearer = token.isNull() ? m_adminToken : token;
    if (!bearer.isEmpty())
        request.authorization = "Bearer " + bearer.toUtf8();
    if (!body.isEmpty())
        request.body = QJsonDocument(body).toJson();
    ApiResponse response = m_api->handle(request);
    response.body = response.jsonBody();
    return response;
}

void TestAdminApi::healthNeedsNoToken()
{
    const ApiResponse response = call("GET", QStringLiteral("/api/health"), {}, QStringLiteral(""));
    QCOMPARE(response.status, 200);
    QCOMPARE(response.body.toObject().value(QLatin1String("protocol")).toInt(),
        cloop::protocol::kVersion);
    QCOMPARE(response.body.toObject().value(QLatin1String("version")).toString(),
        QStringLiteral("9.9.9"));
}

void TestAdminApi::everythingElseNeedsAToken_data()
{
    QTest::addColumn<QString>("token");
    QTest::addColumn<QString>("code");
    QTest::newRow("none") << QStringLiteral("") << QStringLiteral("unauthorized");
    QTest::newRow("random") << QStringLiteral("hello") << QStringLiteral("unauthorized");
    QTest::newRow("unknown api token")
        << secrets::generate(secrets::SecretKind::ApiToken) << QStringLiteral("unauthorized");
    QTest::newRow("forwarder credential")
        << secrets::generate(secrets::SecretKind::ForwarderCredential)
        << QStringLiteral("wrong_credential_type");
    QTest::newRow("enrollment token")
        << secrets::generate(secrets::SecretKind::ForwarderEnrollmentToken)
        << QStringLiteral("wrong_credential_type");
    QTest::newRow("executor credential") << secrets::generate(secrets::SecretKind::AgentCredential)
                                         << QStringLiteral("wrong_credential_type");
}

void TestAdminApi::everythingElseNeedsAToken()
{
    QFETCH(QString, token);
    QFETCH(QString, code);
    const ApiResponse list = call("GET", QStringLiteral("/api/forwarders"), {}, token);
    QCOMPARE(list.status, 401);
    QCOMPARE(errorCode(list), code);
    const ApiResponse enroll = call("POST", QStringLiteral("/api/forwarders"),
        { { QStringLiteral("name"), QStringLiteral("x") },
            { QStringLiteral("usb"), QStringLiteral("1050:0407") } },
        token);
    QCOMPARE(enroll.status, 401);
    // The refused call left no trace.
    auto forwarders = m_forwarders->list();
    QVERIFY(forwarders);
    QVERIFY(forwarders->isEmpty());
}

void TestAdminApi::enrollReturnsARedeemableBundle()
{
    const ApiResponse response = call("POST", QStringLiteral("/api/forwarders"),
        { { QStringLiteral("name"), QStringLiteral("bench-hsm") },
            { QStringLiteral("usb"), QStringLiteral("1050:0407:A1") },
            { QStringLiteral("token_ttl"), QStringLiteral("2h") } });
    QCOMPARE(response.status, 201);
    const QJsonObject body = response.body.toObject();
    const QString encoded = body.value(QLatin1String("bundle")).toString();
    // The command keeps the bundle off every command line: it goes to a
    // 0600 file by a shell builtin, and the daemon reads it from there.
    QCOMPARE(body.value(QLatin1String("command")).toString(),
        QStringLiteral("(umask 077; printf '%s\\n' '") + encoded
            + QStringLiteral(
                "' > forwarder.bundle) && cloop forward --token-file forwarder.bundle"));
    auto bundle
        = identity::EnrollmentBundle::decode(encoded, identity::EnrollmentBundle::Kind::Forwarder);
    QVERIFY(bundle);
    QCOMPARE(bundle->hub, m_hubUrl);
    QCOMPARE(bundle->hubs(), QList<QUrl> { m_hubUrl });
    QCOMPARE(bundle->pins, m_pin);
    const QJsonObject forwarder = body.value(QLatin1String("forwarder")).toObject();
    QCOMPARE(
        forwarder.value(QLatin1String("state")).toString(), QStringLiteral("awaiting_enrollment"));
    QCOMPARE(forwarder.value(QLatin1String("device_description")).toString(),
        QStringLiteral("usb 1050:0407:A1"));
    const QDateTime expires = QDateTime::fromString(
        body.value(QLatin1String("token_expires_at")).toString(), Qt::ISODateWithMs);
    const qint64 minutesLeft = QDateTime::currentDateTimeUtc().secsTo(expires) / 60;
    QVERIFY(minutesLeft >= 119 && minutesLeft <= 120);

    auto redeemed = m_forwarders->redeem(bundle->token);
    QVERIFY(redeemed);
    QCOMPARE(redeemed->forwarder.id, forwarder.value(QLatin1String("id")).toInteger());
}

void TestAdminApi::bundlesNameTheClustersMembers()
{
    // Given a hub of a cluster whose members daemons reach at two URLs,
    const QList<QUrl> members { QUrl(QStringLiteral("wss://hub-b.example.test:7443")), m_hubUrl };
    m_api->setIdentity(HubIdentity { m_hubUrl, m_pin, QStringLiteral("9.9.9"), members });

    // when a forwarder and an executor are enrolled,
    const ApiResponse forwarder = call("POST", QStringLiteral("/api/forwarders"),
        { { QStringLiteral("name"), QStringLiteral("bench-hsm") },
            { QStringLiteral("usb"), QStringLiteral("1050:0407") } });
    const ApiResponse executor = call("POST", QStringLiteral("/api/executors"),
        { { QStringLiteral("name"), QStringLiteral("box") } });
    QCOMPARE(forwarder.status, 201);
    QCOMPARE(executor.status, 201);

    // then each bundle names both, in the cluster's order.
    const auto forwarderBundle = identity::EnrollmentBundle::decode(
        forwarder.body.toObject().value(QLatin1String("bundle")).toString(),
        identity::EnrollmentBundle::Kind::Forwarder);
    const auto executorBundle = identity::EnrollmentBundle::decode(
        executor.body.toObject().value(QLatin1String("bundle")).toString(),
        identity::EnrollmentBundle::Kind::Executor);
    QVERIFY2(forwarderBundle,
        qPrintable(forwarderBundle.ok() ? QString() : forwarderBundle.error().message));
    QVERIFY2(executorBundle,
        qPrintable(executorBundle.ok() ? QString() : executorBundle.error().message));
    QCOMPARE(forwarderBundle->hubs(), members);
    QCOMPARE(executorBundle->hubs(), members);
}

void TestAdminApi::enrollRefusesBadBodies_data()
{
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("code");
    QTest::newRow("not json") << QByteArray("{name:") << 400 << QStringLiteral("invalid_json");
    QTest::newRow("array") << QByteArray("[]") << 400 << QStringLiteral("invalid_json");
    QTest::newRow("no device") << QByteArray(R"({"name":"a"})") << 400
                               << QStringLiteral("invalid_device");
    QTest::newRow("both devices") << QByteArray(
        R"({"name":"a","usb":"1050:0407","interface":"eth0"})")
                                  << 400 << QStringLiteral("invalid_device");
    QTest::newRow("bad usb") << QByteArray(R"({"name":"a","usb":"10500407"})") << 400
                             << QStringLiteral("invalid_device");
    QTest::newRow("bad interface") << QByteArray(R"({"name":"a","interface":"a/b"})") << 400
                                   << QStringLiteral("invalid_device");
    QTest::newRow("bad name") << QByteArray(R"({"name":"A B","usb":"1050:0407"})") << 400
                              << QStringLiteral("invalid_name");
    QTest::newRow("bad ttl") << QByteArray(R"({"name":"a","usb":"1050:0407","token_ttl":"soon"})")
                             << 400 << QStringLiteral("invalid_duration");
    QTest::newRow("ttl too long") << QByteArray(
        R"({"name":"a","usb":"1050:0407","token_ttl":"30d"})")
                                  << 400 << QStringLiteral("invalid_ttl");
}

void TestAdminApi::enrollRefusesBadBodies()
{
    QFETCH(QByteArray, body);
    QFETCH(int, status);
    QFETCH(QString, code);
    ApiRequest request { "POST", QStringLiteral("/api/forwarders"),
        "Bearer " + m_adminToken.toUtf8(), body, {} };
    const ApiResponse response = m_api->handle(request);
    QCOMPARE(response.status, status);
    QCOMPARE(errorCode(response), code);
    QVERIFY(!response.body.toObject()
                 .value(QLatin1String("error"))
                 .toObject()
                 .value(QLatin1String("message"))
                 .toString()
                 .isEmpty());
    auto forwarders = m_forwarders->list();
    QVERIFY(forwarders && forwarders->isEmpty());
}

void TestAdminApi::nonAdministratorCannotEnrollOrRevoke()
{
    const ApiResponse enroll = call("POST", QStringLiteral("/api/forwarders"),
        { { QStringLiteral("name"), QStringLiteral("x") },
            { QStringLiteral("usb"), QStringLiteral("1050:0407") } },
        m_userToken);
    QCOMPARE(enroll.status, 403);
    QCOMPARE(errorCode(enroll), QStringLiteral("forbidden"));
    QVERIFY(m_forwarders->list()->isEmpty());

    auto enrollment = m_forwarders->enroll(QStringLiteral("bench"),
        *protocol::DeviceSpec::parseUsb(QStringLiteral("1050:0407")), QStringLiteral("user:admin"));
    QVERIFY(enrollment);
    const ApiResponse revoke = call("POST",
        QStringLiteral("/api/forwarders/%1/revoke").arg(enrollment->forwarder.id), {}, m_userToken);
    QCOMPARE(revoke.status, 403);
    QVERIFY(!m_forwarders->find(enrollment->forwarder.id)->isRevoked());
    const ApiResponse reenroll = call("POST",
        QStringLiteral("/api/forwarders/%1/enrollment").arg(enrollment->forwarder.id), {},
        m_userToken);
    QCOMPARE(reenroll.status, 403);
    QCOMPARE(errorCode(reenroll), QStringLiteral("forbidden"));
    // The pending bundle still works: a refused call changed nothing.
    QVERIFY(m_forwarders->redeem(enrollment->token));
    // Reading is allowed to any signed-in user.
    QCOMPARE(call("GET", QStringLiteral("/api/forwarders"), {}, m_userToken).status, 200);
}

void TestAdminApi::reenrollAnswersANewBundleAndVoidsTheOld()
{
    auto enrollment = m_forwarders->enroll(QStringLiteral("bench"),
        *protocol::DeviceSpec::parseUsb(QStringLiteral("1050:0407")), QStringLiteral("user:admin"));
    QVERIFY(enrollment);
    const QString path
        = QStringLiteral("/api/forwarders/%1/enrollment").arg(enrollment->forwarder.id);
    const ApiResponse badTtl = call("POST", path, { { QStringLiteral("token_ttl"), 3 } });
    QCOMPARE(badTtl.status, 400);
    const ApiResponse response
        = call("POST", path, { { QStringLiteral("token_ttl"), QStringLiteral("30m") } });
    QCOMPARE(response.status, 201);
    const QJsonObject body = response.body.toObject();
    QCOMPARE(
        body.value(QLatin1String("forwarder")).toObject().value(QLatin1String("id")).toInteger(),
        enrollment->forwarder.id);
    auto bundle = identity::EnrollmentBundle::decode(body.value(QLatin1String("bundle")).toString(),
        identity::EnrollmentBundle::Kind::Forwarder);
    QVERIFY(bundle);
    QCOMPARE(bundle->pins, m_pin);
    QVERIFY(!m_forwarders->redeem(enrollment->token));
    QVERIFY(m_forwarders->redeem(bundle->token));
    // Once redeemed there is nothing to re-issue.
    const ApiResponse again = call("POST", path);
    QCOMPARE(again.status, 409);
    QCOMPARE(errorCode(again), QStringLiteral("already_enrolled"));
    QCOMPARE(call("POST", QStringLiteral("/api/forwarders/99999/enrollment")).status, 404);

    // The audit log names the forwarder each entry is about, and keeps no secret.
    const ApiResponse audit = call("GET", QStringLiteral("/api/audit"));
    QCOMPARE(audit.status, 200);
    const QJsonArray entries = audit.body.toObject().value(QLatin1String("entries")).toArray();
    int reissues = 0;
    for (const QJsonValue &value : entries) {
        const QJsonObject entry = value.toObject();
        if (entry.value(QLatin1String("subject")).toString()
            == QStringLiteral("forwarder:%1").arg(enrollment->forwarder.id))
            QCOMPARE(
                entry.value(QLatin1String("subject_name")).toString(), QStringLiteral("bench"));
        else
            QVERIFY(!entry.contains(QLatin1String("subject_name"))
                || entry.value(QLatin1String("subject"))
                       .toString()
                       .startsWith(QLatin1String("executor:")));
        if (entry.value(QLatin1String("action")).toString() == QLatin1String("forwarder.reissue")) {
            ++reissues;
            const QByteArray written = QJsonDocument(entry).toJson();
            QVERIFY2(!written.contains(bundle->token.toUtf8()), written.constData());
        }
    }
    QCOMPARE(reissues, 1);
}

void TestAdminApi::listAndGetShowState()
{
    auto first = m_forwarders->enroll(QStringLiteral("one"),
        *protocol::DeviceSpec::parseUsb(QStringLiteral("1050:0407")), QStringLiteral("user:admin"));
    auto second = m_forwarders->enroll(QStringLiteral("two"),
        *protocol::DeviceSpec::parseInterface(QStringLiteral("eth1")),
        QStringLiteral("user:admin"));
    QVERIFY(first && second);
    QVERIFY(m_forwarders->redeem(second->token));

    const ApiResponse list = call("GET", QStringLiteral("/api/forwarders"));
    QCOMPARE(list.status, 200);
    const QJsonArray forwarders = list.body.toObject().value(QLatin1String("forwarders")).toArray();
    QCOMPARE(forwarders.size(), 2);
    QCOMPARE(forwarders.at(0).toObject().value(QLatin1String("state")).toString(),
        QStringLiteral("awaiting_enrollment"));
    QCOMPARE(forwarders.at(1).toObject().value(QLatin1String("state")).toString(),
        QStringLiteral("disconnected"));
    QCOMPARE(forwarders.at(1).toObject().value(QLatin1String("connected")).toBool(), false);
    QCOMPARE(forwarders.at(1)
                 .toObject()
                 .value(QLatin1String("device"))
                 .toObject()
                 .value(QLatin1String("interface"))
                 .toString(),
        QStringLiteral("eth1"));

    const ApiResponse one
        = call("GET", QStringLiteral("/api/forwarders/%1").arg(first->forwarder.id));
    QCOMPARE(one.status, 200);
    QCOMPARE(one.body.toObject().value(QLatin1String("name")).toString(), QStringLiteral("one"));
    QCOMPARE(call("GET", QStringLiteral("/api/forwarders/424242")).status, 404);
}

void TestAdminApi::trafficShowsEachForwardersStepsToWhoMayRead()
{
    // Before the hub samples anything the route says so.
    const ApiResponse unsampled = call("GET", QStringLiteral("/api/forwarders/traffic"));
    QCOMPARE(unsampled.status, 503);

    auto enrollment = m_forwarders->enroll(QStringLiteral("bench"),
        *protocol::DeviceSpec::parseUsb(QStringLiteral("1050:0407")), QStringLiteral("user:admin"));
    QVERIFY(enrollment);
    const qint64 id = enrollment->forwarder.id;
    std::map<qint64, ForwarderTraffic::Totals> totals;
    ForwarderTraffic traffic([&totals] { return totals; }, m_clock, std::chrono::seconds(5), 3);
    traffic.start();
    m_api->setForwarderTraffic(&traffic);
    const ApiResponse empty = call("GET", QStringLiteral("/api/forwarders/traffic"));
    QCOMPARE(empty.status, 200);
    QCOMPARE(empty.body.toObject().value(QLatin1String("step_seconds")).toInt(), 5);
    QVERIFY(empty.body.toObject().value(QLatin1String("until")).isNull());
    QVERIFY(empty.body.toObject().value(QLatin1String("items")).toArray().isEmpty());

    totals[id].counts = { 4096, 512 };
    // A forwarder id the hub does not know (streams counted under a member's
    // id that was since removed) is nobody's to see.
    totals[id + 100].counts = { 1, 1 };
    traffic.sample();
    totals[id].counts = { 6144, 512 };
    traffic.sample();
    for (const QString &token : { m_adminToken, m_userToken }) {
        const ApiResponse answer
            = call("GET", QStringLiteral("/api/forwarders/traffic"), {}, token);
        QCOMPARE(answer.status, 200);
        const QJsonObject body = answer.body.toObject();
        QCOMPARE(body.value(QLatin1String("steps")).toInt(), 2);
        QCOMPARE(QDateTime::fromString(body.value(QLatin1String("until")).toString(), Qt::ISODate),
            traffic.lastSampleAt());
        const QJsonArray items = body.value(QLatin1String("items")).toArray();
        QCOMPARE(items.size(), 1);
        const QJsonObject item = items.first().toObject();
        QCOMPARE(item.value(QLatin1String("forwarder_id")).toInteger(), id);
        QCOMPARE(
            item.value(QLatin1String("to_agent_bytes")).toArray(), (QJsonArray { 4096, 2048 }));
        QCOMPARE(
            item.value(QLatin1String("to_forwarder_bytes")).toArray(), (QJsonArray { 512, 0 }));
    }

    // Someone with no role anywhere sees no forwarder, and no traffic.
    auto stranger
        = m_core->stores().projects.addUser(QStringLiteral("eve"), false, QStringLiteral("test"));
    QVERIFY(stranger);
    auto strangerToken
        = m_tokens->createToken(stranger->id, QStringLiteral("test"), QStringLiteral("test"));
    QVERIFY(strangerToken);
    const ApiResponse refused
        = call("GET", QStringLiteral("/api/forwarders/traffic"), {}, *strangerToken);
    QCOMPARE(refused.status, 403);
    QCOMPARE(errorCode(refused), QStringLiteral("forbidden"));
    QVERIFY(!refused.body.toObject().contains(QLatin1String("items")));
    QCOMPARE(
        call("GET", QStringLiteral("/api/forwarders/traffic"), {}, QStringLiteral("")).status, 401);
    m_api->setForwarderTraffic(nullptr);
}

void TestAdminApi::theAuditNamesTheDaemonThatActed()
{
    auto enrollment = m_forwarders->enroll(QStringLiteral("lab3"),
        *protocol::DeviceSpec::parseInterface(QStringLiteral("eth1")),
        QStringLiteral("user:admin"));
    QVERIFY(enrollment);
    const QString daemon = QStringLiteral("forwarder:%1").arg(enrollment->forwarder.id);
    // As a forwarder's upgrade outcome is recorded: the daemon acts on itself.
    QVERIFY(m_gateways->audit().append(daemon, auditaction::kForwarderUpgradeOutcome, daemon,
        { { QStringLiteral("state"), QStringLiteral("done") } }));
    // An actor that is no daemon, or one since gone, keeps its words.
    QVERIFY(m_gateways->audit().append(QStringLiteral("forwarder:99999"),
        auditaction::kForwarderUpgradeOutcome, QStringLiteral("forwarder:99999"), {}));
    const ApiResponse audit = call("GET", QStringLiteral("/api/audit"));
    QCOMPARE(audit.status, 200);
    int named = 0;
    for (const QJsonValue &value :
        audit.body.toObject().value(QLatin1String("entries")).toArray()) {
        const auto entry = cloop::api::AuditLogEntry::fromJson(value.toObject());
        QVERIFY(entry);
        if (entry->actor == daemon) {
            ++named;
            QCOMPARE(entry->actorName, QStringLiteral("lab3"));
            QCOMPARE(entry->describeActor(),
                QStringLiteral("forwarder lab3 (#%1)").arg(enrollment->forwarder.id));
        } else if (entry->actor == QLatin1String("forwarder:99999")) {
            QCOMPARE(entry->describeActor(), QStringLiteral("forwarder:99999"));
        } else {
            QCOMPARE(entry->describeActor(), entry->actor);
        }
    }
    QCOMPARE(named, 1);
}

void TestAdminApi::revokeAnswers()
{
    auto enrollment = m_forwarders->enroll(QStringLiteral("bench"),
        *protocol::DeviceSpec::parseUsb(QStringLiteral("1050:0407")), QStringLiteral("user:admin"));
    QVERIFY(enrollment);
    const QString path = QStringLiteral("/api/forwarders/%1/revoke").arg(enrollment->forwarder.id);
    const ApiResponse revoked
        = call("POST", path, { { QStringLiteral("reason"), QStringLiteral("returned") } });
    QCOMPARE(revoked.status, 200);
    QCOMPARE(revoked.body.toObject().value(QLatin1String("state")).toString(),
        QStringLiteral("revoked"));
    const ApiResponse again = call("POST", path);
    QCOMPARE(again.status, 409);
    QCOMPARE(errorCode(again), QStringLiteral("already_revoked"));
    QCOMPARE(call("POST", QStringLiteral("/api/forwarders/777/revoke")).status, 404);
}

void TestAdminApi::unknownRoutesAndMethods()
{
    QCOMPARE(call("GET", QStringLiteral("/api/nothing")).status, 404);
    QCOMPARE(call("GET", QStringLiteral("/index.html")).status, 404);
    QCOMPARE(call("DELETE", QStringLiteral("/api/forwarders")).status, 405);
    QCOMPARE(call("GET", QStringLiteral("/api/forwarders/1/revoke")).status, 405);
    QCOMPARE(call("POST", QStringLiteral("/api/health")).status, 405);
    QCOMPARE(call("GET", QStringLiteral("/api/forwarders/99999999999999999999")).status, 404);
}

void TestAdminApi::oversizedBodyRefused()
{
    ApiRequest request { "POST", QStringLiteral("/api/forwarders"),
        "Bearer " + m_adminToken.toUtf8(), QByteArray(AdminApi::kMaxBodySize + 1, ' '), {} };
    const ApiResponse response = m_api->handle(request);
    QCOMPARE(response.status, 413);
    QCOMPARE(errorCode(response), QStringLiteral("body_too_large"));
}

QTEST_GUILESS_MAIN(TestAdminApi)
#include "tst_adminapi.moc"
