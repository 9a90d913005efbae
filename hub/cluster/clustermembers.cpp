#include "hub/cluster/clustermembers.h"

#include "common/logging.h"
#include "common/util/clock.h"
#include "hub/cluster/memberlease.h"

namespace cloop::hub {

namespace {

// What the daemons and peers are told of a member: a change of anything
// else (a lease renewed) is no news.
bool sameFace(const QList<MemberRecord> &a, const QList<MemberRecord> &b)
{
    if (a.size() != b.size())
        return false;
    for (qsizetype i = 0; i < a.size(); ++i) {
        if (a[i].id != b[i].id || a[i].generation != b[i].generation
            || a[i].daemonUrl != b[i].daemonUrl || a[i].peerUrl != b[i].peerUrl
            || a[i].keyPin != b[i].keyPin)
            return false;
    }
    return true;
}

} // namespace

ClusterMembers::ClusterMembers(MemberStore &store, const MemberLease &lease, const Clock &clock,
    std::chrono::milliseconds refreshEvery, QObject *parent)
    : QObject(parent)
    , m_store(store)
    , m_lease(lease)
    , m_clock(clock)
{
    m_refresh.setInterval(refreshEvery);
    connect(&m_refresh, &QTimer::timeout, this, &ClusterMembers::refresh);
}

void ClusterMembers::start()
{
    refresh();
    m_refresh.start();
}

namespace {

PeerMember peerOf(const MemberRecord &member)
{
    return PeerMember { member.id, member.generation, member.name, QUrl(member.peerUrl),
        member.keyPin };
}

} // namespace

std::optional<PeerMember> ClusterMembers::liveMemberWithPin(const QString &pin)
{
    // Until this member joined, it knows nobody.
    if (!m_lease.isMember())
        return std::nullopt;
    const auto member = otherWithPin(pin);
    return member ? std::optional<PeerMember>(peerOf(*member)) : std::nullopt;
}

std::optional<PeerMember> ClusterMembers::liveMember(qint64 id)
{
    if (!m_lease.isMember())
        return std::nullopt;
    const auto member = other(id);
    return member ? std::optional<PeerMember>(peerOf(*member)) : std::nullopt;
}

void ClusterMembers::refresh()
{
    auto members = m_store.list();
    if (!members) {
        // The last view stands until the records answer again.
        qCDebug(lcHubCluster).noquote() << "cannot read the members:" << members.error().message;
        return;
    }
    const QDateTime now = m_clock.now();
    QList<MemberRecord> others;
    for (const MemberRecord &member : std::as_const(*members)) {
        if (member.id != m_lease.record().id && member.stateAt(now) == MemberRecord::State::Alive)
            others.append(member);
    }
    if (sameFace(others, m_others)) {
        m_others = others;
        return;
    }
    m_others = others;
    QStringList names;
    for (const MemberRecord &member : std::as_const(m_others))
        names.append(member.name);
    qCInfo(lcHubCluster).noquote()
        << "live members beside this one:"
        << (names.isEmpty() ? QStringLiteral("none") : names.join(QStringLiteral(", ")));
    Q_EMIT changed();
}

std::optional<MemberRecord> ClusterMembers::find(
    const std::function<bool(const MemberRecord &)> &matches)
{
    for (int attempt = 0; attempt < 2; ++attempt) {
        for (const MemberRecord &member : std::as_const(m_others))
            if (matches(member) && member.stateAt(m_clock.now()) == MemberRecord::State::Alive)
                return member;
        // A member that joined since the last read.
        if (attempt == 0 && !refreshOnMiss())
            break;
    }
    return std::nullopt;
}

std::optional<MemberRecord> ClusterMembers::otherWithPin(const QString &pin)
{
    return find([&pin](const MemberRecord &member) { return member.keyPin == pin; });
}

std::optional<MemberRecord> ClusterMembers::other(qint64 id)
{
    return find([id](const MemberRecord &member) { return member.id == id; });
}

bool ClusterMembers::refreshOnMiss()
{
    if (m_lastMissRead.isValid() && m_lastMissRead.elapsed() < 1000)
        return false;
    m_lastMissRead.start();
    refresh();
    return true;
}

QStringList ClusterMembers::otherPins() const
{
    QStringList pins;
    for (const MemberRecord &member : m_others)
        if (!pins.contains(member.keyPin))
            pins.append(member.keyPin);
    return pins;
}

QList<QUrl> ClusterMembers::daemonUrls() const
{
    QList<QUrl> urls { QUrl(m_lease.record().daemonUrl) };
    for (const MemberRecord &member : m_others) {
        const QUrl url(member.daemonUrl);
        if (!urls.contains(url))
            urls.append(url);
    }
    return urls;
}

} // namespace cloop::hub
