#pragma once

// A hub without sockets for the API-level tests: a temporary SQLite file, a
// HubCore over it with a ManualClock, the daemon gateways and the AdminApi,
// plus helpers to add people, projects and forwarders through the stores
// (HubCore::stores(), below the services the API calls) and to read what the
// database holds. Header-only; each test executable that
// includes it gets its own copy.

#include "common/protocol/devicespec.h"
#include "common/result.h"
#include "common/util/clock.h"
#include "hub/domain/eventbus.h"
#include "hub/domain/tokenservice.h"
#include "hub/hubcore.h"
#include "hub/server/adminapi.h"
#include "hub/server/hubgateways.h"
#include "hub/storage/apitokenstore.h"
#include "hub/storage/auditlog.h"
#include "hub/storage/database.h"
#include "hub/storage/forwarderstore.h"
#include "hub/storage/projectstore.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>
#include <QTemporaryDir>
#include <QUrlQuery>

#include <algorithm>
#include <memory>
#include <utility>

namespace cloop::hub::testing {

inline constexpr QLatin1StringView kActor { "test" };

template <typename T> QString failure(const Result<T> &result)
{
    return result.ok() ? QString()
                       : result.error().code + QStringLiteral(": ") + result.error().message;
}

inline QJsonObject bodyOf(const ApiResponse &response)
{
    return response.body.toObject();
}

inline QString errorCode(const ApiResponse &response)
{
    return bodyOf(response)
        .value(QLatin1String("error"))
        .toObject()
        .value(QLatin1String("code"))
        .toString();
}

inline QString errorMessage(const ApiResponse &response)
{
    return bodyOf(response)
        .value(QLatin1String("error"))
        .toObject()
        .value(QLatin1String("message"))
        .toString();
}

// "409 {"error": …}", for failure messages.
inline QString describe(const ApiResponse &response)
{
    const QByteArray json = response.body.isObject()
        ? QJsonDocument(response.body.toObject()).toJson(QJsonDocument::Compact)
        : QByteArray("(no object)");
    return QStringLiteral("%1 %2").arg(response.status).arg(QString::fromUtf8(json));
}

// A fixed, whole-second start close to the real time, so that the audit
// log's own timestamps (real time) and the clock's stay near each other.
inline QDateTime testEpoch()
{
    const QDateTime now = QDateTime::currentDateTimeUtc();
    return QDateTime::fromSecsSinceEpoch(now.toSecsSinceEpoch(), Qt::UTC);
}

class ApiHarness
{
    Q_DISABLE_COPY_MOVE(ApiHarness)

public:
    ApiHarness() = default;
    ~ApiHarness() { close(); }

    ManualClock clock { testEpoch() };

    Status open(HubCore::Options options = {})
    {
        close();
        m_dir = std::make_unique<QTemporaryDir>();
        if (!m_dir->isValid())
            return Error::make(QStringLiteral("test"), QStringLiteral("no temporary folder"));
        auto db = Database::openSqlite(dbPath(), clock);
        if (!db)
            return db.error();
        m_core = std::make_unique<HubCore>(std::move(*db), clock, options);
        m_published.clear();
        QObject::connect(&m_core->events(), &EventBus::published, &m_core->events(),
            [this](const HubEvent &event) { m_published.append(event); });
        m_gateways = std::make_unique<HubGateways>(*m_core, QStringLiteral("0.1.0"));
        m_api = std::make_unique<AdminApi>(*m_core, *m_gateways,
            HubIdentity { QUrl(QStringLiteral("wss://hub.example.test:7443")),
                QStringLiteral("sha256:47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="),
                QStringLiteral("0.1.0") });
        return {};
    }

    void close()
    {
        m_api.reset();
        m_gateways.reset();
        m_core.reset();
        m_dir.reset();
    }

    QString dbPath() const { return m_dir->filePath(QStringLiteral("hub.db")); }
    HubCore &core() { return *m_core; }
    Database &db() { return m_core->stores().database; }
    AdminApi &api() { return *m_api; }

    // One API call as the HTTP server would hand it over. An empty token
    // sends no Authorization header at all.
    ApiResponse call(const QByteArray &method, const QString &path, const QString &token,
        const QJsonObject &body = {}, const QString &query = {})
    {
        ApiRequest request;
        request.method = method;
        request.path = path;
        if (!token.isEmpty())
            request.authorization = "Bearer " + token.toUtf8();
        if (!body.isEmpty())
            request.body = QJsonDocument(body).toJson(QJsonDocument::Compact);
        request.query = QUrlQuery(query);
        ApiResponse response = m_api->handle(request);
        response.body = response.jsonBody();
        return response;
    }
    ApiResponse get(const QString &path, const QString &token, const QString &query = {})
    {
        return call("GET", path, token, {}, query);
    }
    ApiResponse post(const QString &path, const QString &token, const QJsonObject &body = {})
    {
        return call("POST", path, token, body);
    }

    // A user and an API token for them; returns the token.
    Result<QString> addUser(const QString &name, bool hubAdmin = false)
    {
        auto user = m_core->stores().projects.addUser(name, hubAdmin, kActor);
        if (!user)
            return user.error();
        m_userIds.insert(name, user->id);
        return m_core->stores().tokens.createToken(user->id, QStringLiteral("test"), kActor);
    }
    qint64 userId(const QString &name) const { return m_userIds.value(name); }

    // A user and who they are when they call: what a service is given.
    Result<ApiPrincipal> addCaller(const QString &name, bool hubAdmin = false)
    {
        auto token = addUser(name, hubAdmin);
        if (!token)
            return token.error();
        return m_core->tokens().authenticate(*token);
    }

    // What the event bus published since the hub opened or the last call.
    QList<HubEvent> takeEvents() { return std::exchange(m_published, {}); }

    Result<qint64> addProject(const QString &path)
    {
        auto project = m_core->stores().projects.addProject(path, kActor);
        if (!project)
            return project.error();
        return project->id;
    }

    Status grant(qint64 projectId, const QString &user, ProjectRole role)
    {
        auto updated
            = m_core->stores().projects.setRole(projectId, m_userIds.value(user), role, kActor);
        if (!updated)
            return updated.error();
        return {};
    }

    Result<qint64> enrollUsb(const QString &name, const QString &usb = QStringLiteral("1050:0407"))
    {
        auto device = protocol::DeviceSpec::parseUsb(usb);
        if (!device)
            return device.error();
        auto enrollment
            = m_core->stores().forwarders.enroll(name, *device, QStringLiteral("user:admin"));
        if (!enrollment)
            return enrollment.error();
        return enrollment->forwarder.id;
    }

    Result<qint64> enrollSegment(
        const QString &name, const QString &interfaceName = QStringLiteral("eth1"))
    {
        auto device = protocol::DeviceSpec::parseInterface(interfaceName);
        if (!device)
            return device.error();
        auto enrollment
            = m_core->stores().forwarders.enroll(name, *device, QStringLiteral("user:admin"));
        if (!enrollment)
            return enrollment.error();
        return enrollment->forwarder.id;
    }

    // Enrolls a forwarder and redeems its token: the cfc_… credential a
    // daemon would hold.
    Result<QString> forwarderCredential(const QString &name)
    {
        auto device = protocol::DeviceSpec::parseUsb(QStringLiteral("1d50:6089"));
        if (!device)
            return device.error();
        auto enrollment
            = m_core->stores().forwarders.enroll(name, *device, QStringLiteral("user:admin"));
        if (!enrollment)
            return enrollment.error();
        auto redeemed = m_core->stores().forwarders.redeem(enrollment->token);
        if (!redeemed)
            return redeemed.error();
        return redeemed->credential;
    }

    // Everything a refused call must leave as it was: the size and last id
    // of every table and the columns that change state.
    QStringList fingerprint()
    {
        QStringList out;
        const char *const counted[] = { "users", "api_tokens", "forwarders", "enrollment_tokens",
            "forwarder_credentials", "audit_log", "projects", "binding_requests", "bindings",
            "runs", "executors", "virtual_executors" };
        for (const char *table : counted)
            out += rows(3,
                QStringLiteral("SELECT '%1', count(*), coalesce(max(id), 0) FROM %1")
                    .arg(QLatin1String(table)));
        out += rows(4,
            QStringLiteral("SELECT 'role', project_id, user_id, role FROM project_roles "
                           "ORDER BY project_id, user_id"));
        out += rows(4, QStringLiteral("SELECT 'user', id, name, hub_admin FROM users ORDER BY id"));
        out += rows(4,
            QStringLiteral("SELECT 'token', id, user_id, revoked_at FROM api_tokens ORDER BY id"));
        out += rows(6,
            QStringLiteral(
                "SELECT 'forwarder', id, name, enrolled_at, revoked_at, revoked_by FROM forwarders "
                "ORDER BY id"));
        out += rows(4,
            QStringLiteral("SELECT 'enrollment', id, expires_at, redeemed_at FROM "
                           "enrollment_tokens ORDER BY id"));
        out += rows(3,
            QStringLiteral(
                "SELECT 'credential', id, revoked_at FROM forwarder_credentials ORDER BY id"));
        out += rows(9,
            QStringLiteral(
                "SELECT 'binding', id, forwarder_id, project_id, expires_at, ended_at, ended_by, "
                "end_kind, end_reason FROM bindings ORDER BY id"));
        out += rows(7,
            QStringLiteral(
                "SELECT 'request', id, state, decided_by, decided_at, decision_reason, binding_id "
                "FROM binding_requests ORDER BY id"));
        out += rows(4, QStringLiteral("SELECT 'run', id, state, error FROM runs ORDER BY id"));
        return out;
    }

    qint64 lastAuditId()
    {
        auto q = db().query(QStringLiteral("SELECT coalesce(max(id), 0) FROM audit_log"));
        return q && q->next() ? q->value(0).toLongLong() : -1;
    }

    QList<AuditEntry> auditSince(qint64 afterId)
    {
        auto entries = AuditLog(db()).entries();
        QList<AuditEntry> out;
        if (!entries)
            return out;
        for (const AuditEntry &entry : std::as_const(*entries)) {
            if (entry.id > afterId)
                out.append(entry);
        }
        return out;
    }

    QStringList auditActionsSince(qint64 afterId)
    {
        QStringList actions;
        for (const AuditEntry &entry : auditSince(afterId))
            actions.append(entry.action);
        return actions;
    }

    // One column of one row, as text ("" when absent, "NULL" for NULL).
    QString value(const QString &sql, const QVariantList &binds = {})
    {
        auto q = db().query(sql, binds);
        if (!q || !q->next())
            return QString();
        return q->value(0).isNull() ? QStringLiteral("NULL") : q->value(0).toString();
    }

    // Each row's first `columns` columns joined with '|'.
    QStringList rows(int columns, const QString &sql)
    {
        QStringList out;
        auto q = db().query(sql);
        if (!q)
            return { QStringLiteral("query failed: ") + q.error().message };
        while (q->next()) {
            QStringList cells;
            for (int column = 0; column < columns; ++column) {
                const QVariant cell = q->value(column);
                cells.append(cell.isNull() ? QStringLiteral("NULL") : cell.toString());
            }
            out.append(cells.join(QLatin1Char('|')));
        }
        return out;
    }

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    std::unique_ptr<HubCore> m_core;
    std::unique_ptr<HubGateways> m_gateways;
    std::unique_ptr<AdminApi> m_api;
    QHash<QString, qint64> m_userIds;
    QList<HubEvent> m_published;
};

// The sorted, distinct values of `field` of the objects in `array`.
inline QStringList fieldValues(const QJsonArray &array, QLatin1StringView field)
{
    QStringList out;
    for (const QJsonValue &item : array)
        out.append(item.toObject().value(field).toVariant().toString());
    out.sort();
    out.removeDuplicates();
    return out;
}

} // namespace cloop::hub::testing
