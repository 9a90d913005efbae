#include "hub/serve/memberscommand.h"

#include "common/util/commandline.h"
#include "hub/serve/databaseoption.h"
#include "hub/serve/servecommand.h"
#include "hub/storage/database.h"
#include "hub/storage/memberstore.h"

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

QJsonObject memberJson(const MemberRecord &member, const QDateTime &now)
{
    return { { u"id"_s, member.id }, { u"name"_s, member.name },
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
    if (line.isSet(json)) {
        QJsonArray items;
        for (const MemberRecord &member : *members)
            items.append(memberJson(member, now));
        util::printLine(
            QString::fromUtf8(QJsonDocument(QJsonObject { { u"members"_s, items } }).toJson()));
        return util::kExitOk;
    }
    if (members->isEmpty()) {
        util::printLine(u"no members: no hub has served from these records yet"_s);
        return util::kExitOk;
    }
    util::printLine(u"%1  %2  %3  %4  %5"_s.arg(u"ID"_s, -4)
                        .arg(u"NAME"_s, -28)
                        .arg(u"STATE"_s, -36)
                        .arg(u"START"_s, -5)
                        .arg(u"SOFTWARE"_s));
    for (const MemberRecord &member : *members)
        util::printLine(u"%1  %2  %3  %4  %5"_s.arg(QString::number(member.id), -4)
                            .arg(member.name, -28)
                            .arg(stateText(member, now), -36)
                            .arg(QString::number(member.generation), -5)
                            .arg(member.software));
    return util::kExitOk;
}

} // namespace cloop::hub
