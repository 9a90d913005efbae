#include "hub/serve/memberscommand.h"

#include "common/util/commandline.h"
#include "hub/serve/databaseoption.h"
#include "hub/serve/servecommand.h"
#include "hub/storage/database.h"
#include "hub/storage/memberstore.h"
#include "hub/storage/sessionholderstore.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

using namespace Qt::StringLiterals;

namespace cloop::hub {

namespace {

QJsonValue timeOrNull(const QDateTime &time)
{
    return time.isValid() ? QJsonValue(toDbTime(time)) : QJsonValue();
}

// The sessions each live member holds: forwarders and executors.
struct Held
{
    int forwarders = 0;
    int executors = 0;
};

QString heldText(const Held &held)
{
    return u"%1 forwarder(s), %2 executor(s)"_s.arg(held.forwarders).arg(held.executors);
}

QJsonObject memberJson(const MemberRecord &member, const QDateTime &now, const Held &held)
{
    return { { u"holds"_s,
                 QJsonObject {
                     { u"forwarders"_s, held.forwarders }, { u"executors"_s, held.executors } } },
        { u"id"_s, member.id }, { u"name"_s, member.name },
        { u"state"_s, memberStateName(member.stateAt(now)) },
        { u"generation"_s, member.generation }, { u"daemon_url"_s, member.daemonUrl },
        { u"peer_url"_s, member.peerUrl.isEmpty() ? QJsonValue() : QJsonValue(member.peerUrl) },
        { u"key_pin"_s, member.keyPin }, { u"software"_s, member.software },
        { u"started_at"_s, timeOrNull(member.startedAt) },
        { u"lease_until"_s, timeOrNull(member.leaseUntil) },
        { u"left_at"_s, timeOrNull(member.leftAt) } };
}

// "alive, lease 12 s left", "dead for 3 min", "left 2026-…".
QString stateText(const MemberRecord &member, const QDateTime &now)
{
    const MemberRecord::State state = member.stateAt(now);
    switch (state) {
    case MemberRecord::State::Alive:
        return u"alive (lease %1 s)"_s.arg(now.secsTo(member.leaseUntil));
    case MemberRecord::State::Dead:
        return u"dead since %1"_s.arg(member.leaseUntil.toString(Qt::ISODate));
    case MemberRecord::State::Left:
        return u"left %1"_s.arg(member.leftAt.toString(Qt::ISODate));
    }
    return {};
}

} // namespace

int runMembersCommand(const QString &name, const QStringList &arguments)
{
    util::CommandLine line(name,
        u"The hub cluster's members, as the shared records show them: alive while their lease\n"
        "runs, dead once it lapsed (their daemons' sessions are offline), or left."_s);
    const QCommandLineOption json(u"json"_s, u"Print them as JSON."_s);
    auto opened = openRecordsFromCommandLine(line, arguments, { json });
    if (const int *done = std::get_if<int>(&opened))
        return *done;
    Database &records = *std::get<std::unique_ptr<Database>>(opened);
    auto members = MemberStore(records).list();
    if (!members)
        return line.fail(members.error().message);
    const QDateTime now = records.now();
    auto live = SessionHolderStore(records).live(now);
    if (!live)
        return line.fail(live.error().message);
    QHash<qint64, Held> held;
    for (const SessionHolderStore::Holder &holder : *live) {
        Held &counts = held[holder.memberId];
        ++(holder.kind == u"forwarder"_s ? counts.forwarders : counts.executors);
    }
    if (line.isSet(json)) {
        QJsonArray items;
        for (const MemberRecord &member : *members)
            items.append(memberJson(member, now, held.value(member.id)));
        util::printLine(
            QString::fromUtf8(QJsonDocument(QJsonObject { { u"items"_s, items } }).toJson()));
        return util::kExitOk;
    }
    if (members->isEmpty()) {
        util::printLine(u"no members: no hub has served from these records yet"_s);
        return util::kExitOk;
    }
    util::printLine(u"%1  %2  %3  %4  %5  %6"_s.arg(u"ID"_s, -4)
                        .arg(u"NAME"_s, -28)
                        .arg(u"STATE"_s, -36)
                        .arg(u"HOLDS"_s, -32)
                        .arg(u"START"_s, -5)
                        .arg(u"SOFTWARE"_s));
    for (const MemberRecord &member : *members)
        util::printLine(u"%1  %2  %3  %4  %5  %6"_s.arg(QString::number(member.id), -4)
                            .arg(member.name, -28)
                            .arg(stateText(member, now), -36)
                            .arg(heldText(held.value(member.id)), -32)
                            .arg(QString::number(member.generation), -5)
                            .arg(member.software));
    return util::kExitOk;
}

} // namespace cloop::hub
