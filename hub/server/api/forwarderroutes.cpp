#include "hub/server/api/forwarderroutes.h"

#include "hub/domain/forwarderservice.h"
#include "hub/domain/recordjson.h"
#include "hub/server/api/daemonjson.h"
#include "hub/server/api/enrollmentanswer.h"
#include "hub/server/api/releaseroutes.h"
#include "hub/server/api/sessionplace.h"
#include "hub/server/daemongateway.h"
#include "hub/server/devicetester.h"
#include "hub/server/forwarderstates.h"
#include "hub/storage/database.h"

#include <QJsonArray>

namespace cloop::hub {

ForwarderRoutes::ForwarderRoutes(ForwarderService &service, const DaemonGateway &gateway,
    const SessionHolders *const &holders, const ForwarderStates &states,
    const HubIdentity &identity, DeviceTester &tester, DeviceUpgrades &upgrades,
    ReleaseCatalog *releases)
    : m_service(service)
    , m_gateway(gateway)
    , m_holders(holders)
    , m_states(states)
    , m_identity(identity)
    , m_tester(tester)
    , m_upgrades(upgrades)
    , m_releases(releases)
{ }

void ForwarderRoutes::writeForwarder(util::JsonWriter &out, const ForwarderRecord &record) const
{
    const SessionPlace place = placeOfSession(
        m_gateway, m_holders, m_identity, protocol::PeerRole::Forwarder, record.id);
    out.beginObject();
    writeDaemonFields(out, record, place);
    out.field(QLatin1StringView("device"), record.device.toJson());
    out.field(QLatin1StringView("device_description"), record.device.describe());
    // A USB forwarder's device where it is now: its bus id, empty while
    // unplugged, null while nobody here knows (offline, held by another
    // member, or never said).
    if (const auto device = place.here ? m_states.stateOf(record.id) : std::nullopt;
        device && device->usb)
        out.field(QLatin1StringView("usb_busid"), device->usbBusId);
    else
        out.nullField(QLatin1StringView("usb_busid"));
    writeSoftwareFields(out, protocol::PeerRole::Forwarder, record, m_releases, m_upgrades);
    out.endObject();
}

QJsonObject ForwarderRoutes::forwarderJson(const ForwarderRecord &record) const
{
    return util::writtenObject([&](util::JsonWriter &out) { writeForwarder(out, record); });
}

void ForwarderRoutes::registerIn(ApiRouter &router)
{
    const auto json = [this](util::JsonWriter &out, const ForwarderRecord &record) {
        writeForwarder(out, record);
    };
    addEnrolledDaemonRoutes(router, QStringLiteral("/api/forwarders"),
        QLatin1StringView("forwarders"), m_service, m_identity,
        identity::EnrollmentBundle::Kind::Forwarder, json,
        [](const auto &enrollment) { return enrollment.forwarder; });

    router.add(
        "POST", QStringLiteral("/api/forwarders/{id}/revoke"), [this, json](const ApiCall &call) {
            auto reason = call.text(QLatin1StringView("reason"));
            if (!reason)
                return ApiResponse::fromError(reason.error());
            return ApiResponse::of(m_service.revoke(call.caller, call.id(), *reason), json);
        });

    router.add("POST", QStringLiteral("/api/forwarders/{id}/test"), [this](const ApiCall &call) {
        auto forwarder = m_service.findForTest(call.caller, call.id());
        if (!forwarder)
            return ApiResponse::fromError(forwarder.error());
        return m_tester.test(*forwarder, forwarderJson(*forwarder));
    });
    addUpgradeRoute(router, QStringLiteral("/api/forwarders"), m_upgrades,
        [this](const ApiPrincipal &caller, qint64 id) {
            return m_service.findForUpgrade(caller, id);
        });
}
} // namespace cloop::hub
