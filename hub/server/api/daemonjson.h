#pragma once

#include "common/protocol/controlmessage.h"
#include "common/util/jsonwriter.h"

#include <QDateTime>

namespace cloop::hub {

class DeviceUpgrades;
class ReleaseCatalog;
struct EnrolledDaemonRecord;
struct SessionPlace;

// A time as the API writes it, or null when there is none.
void writeTimeOrNull(util::JsonWriter &out, QLatin1StringView key, const QDateTime &time);

// The fields every enrolled daemon's record shows, forwarder or executor
// (docs/api.md): who it is, whether and where it is connected, when it was
// created, enrolled, revoked and last seen.
void writeDaemonFields(
    util::JsonWriter &out, const EnrolledDaemonRecord &record, const SessionPlace &place);

// What the Forwarders and Executors views show of a device's software: its
// version, protocol and channel, the newer release the hub offers it (the
// skew), and its upgrade's progress.
void writeSoftwareFields(util::JsonWriter &out, protocol::PeerRole role,
    const EnrolledDaemonRecord &record, ReleaseCatalog *catalog, const DeviceUpgrades &upgrades);

} // namespace cloop::hub
