#pragma once

#include "common/protocol/controlmessage.h"
#include "common/release/upgradetarget.h"
#include "hub/server/api/apirouter.h"

namespace cloop::hub {

class AccessPolicy;
class DeviceUpgrades;
class ReleaseCatalog;
struct EnrolledDaemonRecord;

// /api/releases: what the hub offers, for people (any role) and for the
// devices themselves, which fetch a package and its signature with their
// own credential and check both against their release keys before anything
// is installed.
class ReleaseRoutes
{
public:
    ReleaseRoutes(ReleaseCatalog *catalog, const AccessPolicy &policy)
        : m_catalog(catalog)
        , m_policy(policy)
    { }
    void registerIn(ApiRouter &router);

    // The paths a device's credential reaches, and nothing else.
    static bool isDevicePath(const QByteArray &method, const QString &path);

private:
    ReleaseCatalog *m_catalog;
    const AccessPolicy &m_policy;
};

// POST <prefix>/{id}/upgrade {"target"}: for hub administrators. `find`
// reads the daemon as the caller may (its name, whether it is revoked).
template <typename Find>
void addUpgradeRoute(ApiRouter &router, const QString &prefix, DeviceUpgrades &upgrades, Find find);

Result<release::UpgradeTarget> upgradeTargetOf(const ApiCall &call);
ApiResponse requestUpgrade(DeviceUpgrades &upgrades, const ApiCall &call,
    const EnrolledDaemonRecord &record, const QString &noun);

template <typename Find>
void addUpgradeRoute(ApiRouter &router, const QString &prefix, DeviceUpgrades &upgrades, Find find)
{
    router.add("POST", prefix + QStringLiteral("/{id}/upgrade"),
        [&upgrades, find, noun = prefix.section(QLatin1Char('/'), -1).chopped(1)](
            const ApiCall &call) {
            auto record = find(call.caller, call.id());
            if (!record)
                return ApiResponse::fromError(record.error());
            return requestUpgrade(upgrades, call, *record, noun);
        });
}

} // namespace cloop::hub
