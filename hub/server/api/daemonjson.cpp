#include "hub/server/api/daemonjson.h"

#include "hub/domain/recordjson.h"
#include "hub/domain/releasecatalog.h"
#include "hub/server/api/sessionplace.h"
#include "hub/server/deviceupgrades.h"
#include "hub/storage/database.h"
#include "hub/storage/enrolleddaemonstore.h"

namespace cloop::hub {

using namespace Qt::StringLiterals;

namespace {

void writeTextOrNull(util::JsonWriter &out, QLatin1StringView key, const QString &text)
{
    if (text.isEmpty())
        out.nullField(key);
    else
        out.field(key, text);
}

} // namespace

void writeTimeOrNull(util::JsonWriter &out, QLatin1StringView key, const QDateTime &time)
{
    if (time.isValid())
        out.field(key, toDbTime(time));
    else
        out.nullField(key);
}

void writeDaemonFields(
    util::JsonWriter &out, const EnrolledDaemonRecord &record, const SessionPlace &place)
{
    const bool connected = place.connected();
    out.field("id"_L1, record.id);
    out.field("name"_L1, record.name);
    out.field(
        "state"_L1, daemonStateName(record.isRevoked(), record.enrolledAt.isValid(), connected));
    out.field("connected"_L1, connected);
    if (connected) {
        out.field("hub_member"_L1, *place.member);
        // A live session is its proof of life: seen now.
        out.field("last_seen"_L1, toDbTime(QDateTime::currentDateTimeUtc()));
    } else {
        out.nullField("hub_member"_L1);
        writeTimeOrNull(out, "last_seen"_L1, record.lastSeenAt);
    }
    writeTimeOrNull(out, "created_at"_L1, record.createdAt);
    out.field("created_by"_L1, record.createdBy);
    writeTimeOrNull(out, "enrolled_at"_L1, record.enrolledAt);
    writeTimeOrNull(out, "revoked_at"_L1, record.revokedAt);
}

void writeSoftwareFields(util::JsonWriter &out, protocol::PeerRole role,
    const EnrolledDaemonRecord &record, ReleaseCatalog *catalog, const DeviceUpgrades &upgrades)
{
    writeTextOrNull(out, "version"_L1, record.software);
    if (record.protocol > 0)
        out.field("protocol"_L1, record.protocol);
    else
        out.nullField("protocol"_L1);
    writeTextOrNull(out, "channel"_L1, record.channel);
    std::optional<QString> newer;
    if (catalog && !record.isRevoked())
        newer = catalog->newerOffered(
            ReleaseCatalog::packageOf(role), record.channel, record.software);
    writeTextOrNull(out, "offered_version"_L1, newer.value_or(QString()));
    out.field("upgrade"_L1, upgrades.toJson(record.id));
    out.field("upgrading"_L1, upgrades.isUpgrading(record.id));
}

} // namespace cloop::hub
