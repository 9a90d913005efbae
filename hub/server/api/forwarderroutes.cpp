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
#include "hub/server/forwardertraffic.h"
#include "hub/storage/database.h"

#include <QJsonArray>
#include <QSet>

namespace cloop::hub {

ForwarderRoutes::ForwarderRoutes(ForwarderService &service, const DaemonGateway &gateway,
    const SessionHolders *const &holders, const ForwarderTraffic *const &traffic,
    const ForwarderStates &states, const HubIdentity &identity, DeviceTester &tester,
    DeviceUpgrades &upgrades, ReleaseCatalog *releases)
    : m_service(service)
    , m_gateway(gateway)
    , m_holders(holders)
    , m_traffic(traffic)
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
    out.key(QLatin1StringView("device"));
    record.device.writeJson(out);
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
    router.add("GET", QStringLiteral("/api/forwarders/traffic"),
        [this](const ApiCall &call) { return traffic(call); });
    addUpgradeRoute(router, QStringLiteral("/api/forwarders"), m_upgrades,
        [this](const ApiPrincipal &caller, qint64 id) {
            return m_service.findForUpgrade(caller, id);
        });
}
ApiResponse ForwarderRoutes::traffic(const ApiCall &call) const
{
    // What the caller may list is what they may see the traffic of.
    auto visible = m_service.list(call.caller);
    if (!visible)
        return ApiResponse::fromError(visible.error());
    if (!m_traffic)
        return ApiResponse::error(503, QStringLiteral("unavailable"),
            QStringLiteral("this hub does not sample its forwarders' traffic"));
    QSet<qint64> ids;
    for (const ForwarderRecord &record : *visible)
        ids.insert(record.id);
    QByteArray written;
    util::JsonWriter out(written);
    out.beginObject();
    out.field(QLatin1StringView("step_seconds"),
        qint64(std::chrono::duration_cast<std::chrono::seconds>(m_traffic->step()).count()));
    out.field(QLatin1StringView("steps"), m_traffic->stepsHeld());
    if (const QDateTime until = m_traffic->lastSampleAt(); until.isValid())
        out.field(QLatin1StringView("until"), until.toString(Qt::ISODateWithMs));
    else
        out.nullField(QLatin1StringView("until"));
    out.key(QLatin1StringView("items")).beginArray();
    for (const qint64 forwarder : m_traffic->activeForwarders()) {
        if (!ids.contains(forwarder))
            continue;
        const std::vector<ForwarderTraffic::Counts> steps = m_traffic->history(forwarder);
        const auto writeSteps
            = [&out, &steps](QLatin1StringView key, quint64 ForwarderTraffic::Counts::*count) {
                  out.key(key).beginArray();
                  for (const ForwarderTraffic::Counts &step : steps)
                      out.value(qint64(step.*count));
                  out.endArray();
              };
        out.beginObject();
        out.field(QLatin1StringView("forwarder_id"), forwarder);
        writeSteps(QLatin1StringView("to_agent_bytes"), &ForwarderTraffic::Counts::toAgent);
        writeSteps(QLatin1StringView("to_forwarder_bytes"), &ForwarderTraffic::Counts::toForwarder);
        // Frames (or URBs) and drops only where the forwarder says them.
        if (m_traffic->countsFrames(forwarder)) {
            out.field(
                QLatin1StringView("unit"), protocol::counterUnitName(m_traffic->unitOf(forwarder)));
            writeSteps(
                QLatin1StringView("to_agent_frames"), &ForwarderTraffic::Counts::framesToAgent);
            writeSteps(QLatin1StringView("to_forwarder_frames"),
                &ForwarderTraffic::Counts::framesToForwarder);
            writeSteps(
                QLatin1StringView("dropped_to_agent"), &ForwarderTraffic::Counts::droppedToAgent);
            writeSteps(QLatin1StringView("dropped_to_forwarder"),
                &ForwarderTraffic::Counts::droppedToForwarder);
        }
        out.endObject();
    }
    out.endArray();
    out.endObject();
    return ApiResponse::json(written);
}

} // namespace cloop::hub
