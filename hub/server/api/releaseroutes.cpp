#include "hub/server/api/releaseroutes.h"

#include "common/release/upgradetarget.h"
#include "hub/domain/accesspolicy.h"
#include "hub/domain/releasecatalog.h"
#include "hub/server/deviceupgrades.h"
#include "hub/storage/database.h"
#include "hub/storage/enrolleddaemonstore.h"

#include <QFile>
#include <QJsonArray>
#include <QRegularExpression>

namespace cloop::hub {

using namespace Qt::StringLiterals;

namespace {

QJsonObject releaseJson(const ReleaseRecord &record)
{
    const release::ReleaseStatement &statement = record.statement;
    return { { u"id"_s, record.id }, { u"package"_s, statement.package },
        { u"version"_s, statement.version }, { u"channel"_s, statement.channel },
        { u"commit"_s, statement.commit },
        { u"sha256"_s, QString::fromLatin1(statement.sha256.toHex()) }, { u"key"_s, record.keyId },
        { u"size_bytes"_s, record.sizeBytes }, { u"added_at"_s, toDbTime(record.addedAt) },
        { u"added_by"_s, record.addedBy } };
}

// A device may list and fetch releases; a person needs a role in the hub.
Status mayRead(const AccessPolicy &policy, const ApiPrincipal &caller)
{
    if (!caller.device.isEmpty())
        return {};
    return policy.require(caller, AccessPolicy::HubAction::ListReleases);
}

} // namespace

bool ReleaseRoutes::isDevicePath(const QByteArray &method, const QString &path)
{
    static const QRegularExpression file(
        u"\\A/api/releases/[1-9][0-9]{0,15}/(package|signature)\\z"_s);
    return method == "GET" && (path == "/api/releases"_L1 || file.match(path).hasMatch());
}

void ReleaseRoutes::registerIn(ApiRouter &router)
{
    router.add("GET", u"/api/releases"_s, [this](const ApiCall &call) {
        if (Status allowed = mayRead(m_policy, call.caller); !allowed)
            return ApiResponse::fromError(allowed.error());
        if (!m_catalog)
            return ApiResponse::ok(QJsonObject { { u"releases"_s, QJsonArray() } });
        auto releases = m_catalog->list();
        if (!releases)
            return ApiResponse::fromError(releases.error());
        const QString package = call.queryValue(u"package"_s);
        QJsonArray items;
        for (const ReleaseRecord &record : *releases)
            if (package.isEmpty() || record.statement.package == package)
                items.append(releaseJson(record));
        return ApiResponse::ok(QJsonObject { { u"releases"_s, items } });
    });
    const auto serve = [this](const ApiCall &call, bool package) {
        if (Status allowed = mayRead(m_policy, call.caller); !allowed)
            return ApiResponse::fromError(allowed.error());
        if (!m_catalog)
            return ApiResponse::error(404, u"not_found"_s, u"this hub offers no releases"_s);
        auto record = m_catalog->find(call.id());
        if (!record)
            return ApiResponse::fromError(record.error());
        if (!package)
            return ApiResponse::bytes(record->signatureFile, "text/plain; charset=utf-8");
        QFile file(m_catalog->pathOf(*record));
        if (!file.open(QIODevice::ReadOnly))
            return ApiResponse::error(500, u"release_missing"_s,
                u"the hub lost the file of %1 %2: %3"_s.arg(
                    record->statement.package, record->statement.version, file.errorString()));
        return ApiResponse::bytes(file.readAll(), "application/vnd.debian.binary-package");
    };
    router.add("GET", u"/api/releases/{id}/package"_s,
        [serve](const ApiCall &call) { return serve(call, true); });
    router.add("GET", u"/api/releases/{id}/signature"_s,
        [serve](const ApiCall &call) { return serve(call, false); });
}

Result<release::UpgradeTarget> upgradeTargetOf(const ApiCall &call)
{
    auto text = call.text("target"_L1);
    if (!text)
        return text.error();
    return release::UpgradeTarget::parse(text->isEmpty() ? u"latest"_s : *text);
}

ApiResponse requestUpgrade(DeviceUpgrades &upgrades, const ApiCall &call,
    const EnrolledDaemonRecord &record, const QString &noun)
{
    if (record.isRevoked())
        return ApiResponse::error(409, u"%1_revoked"_s.arg(noun),
            u"%1 %2 (%3) was revoked"_s.arg(noun).arg(record.id).arg(record.name));
    auto target = upgradeTargetOf(call);
    if (!target)
        return ApiResponse::error(400, u"invalid_target"_s, target.error().message);
    return upgrades.request(record.id, record.name, *target, call.caller.actor());
}

} // namespace cloop::hub
