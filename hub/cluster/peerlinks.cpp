#include "hub/cluster/peerlinks.h"

#include "common/net/spkipin.h"
#include "common/util/duration.h"
#include "hub/cluster/peerwire.h"

namespace cloop::hub {

namespace {

Error unreachable(const QString &message)
{
    return Error::make(QStringLiteral("peer_unreachable"), message);
}

} // namespace

PeerLinks::PeerLinks(PeerDirectory &directory, const QList<QSslCertificate> &chain,
    const QSslKey &key, Options options, QObject *parent)
    : QObject(parent)
    , m_directory(directory)
    , m_options(std::move(options))
    , m_tls(peerTlsConfiguration(chain, key))
{ }

PeerLinks::~PeerLinks()
{
    const auto links = m_links.values();
    m_links.clear();
    for (PeerLink *link : links) {
        link->disconnect(this);
        link->abort(QStringLiteral("this hub member stopped its peer links"));
    }
}

void PeerLinks::setIdentity(const QList<QSslCertificate> &chain, const QSslKey &key)
{
    m_tls = peerTlsConfiguration(chain, key);
}

bool PeerLinks::isUp(qint64 memberId) const
{
    const PeerLink *link = m_links.value(memberId);
    return link && link->state() == PeerLink::State::Up;
}

const tunnel::ChannelMultiplexer *PeerLinks::channelsTo(qint64 memberId) const
{
    const PeerLink *link = m_links.value(memberId);
    return link ? &link->channels() : nullptr;
}

Result<tunnel::Channel *> PeerLinks::openChannel(qint64 memberId, const QJsonObject &metadata)
{
    PeerLink *link = m_links.value(memberId);
    if (!link || !link->isUsable()) {
        auto dialled = dial(memberId);
        if (!dialled)
            return dialled.error();
        link = *dialled;
    }
    return link->openChannel(metadata);
}

Status PeerLinks::checkBackoff(qint64 memberId) const
{
    const auto it = m_unreachable.constFind(memberId);
    if (it == m_unreachable.cend())
        return {};
    const qint64 left = it->waitMs - it->since.elapsed();
    if (left <= 0)
        return {};
    return unreachable(
        QStringLiteral("%1 (next attempt in %2)").arg(it->reason, util::formatMilliseconds(left)));
}

Result<PeerLink *> PeerLinks::dial(qint64 memberId)
{
    if (memberId == m_options.selfId)
        return Error::make(QStringLiteral("peer_is_self"),
            QStringLiteral("hub member %1 is this member: it has no link to itself").arg(memberId));
    if (Status waiting = checkBackoff(memberId); !waiting)
        return waiting.error();
    // Read at every dial: the member may have died or moved since.
    const std::optional<PeerMember> member = m_directory.liveMember(memberId);
    if (!member)
        return unreachable(QStringLiteral("hub member %1 is not alive").arg(memberId));
    const QUrl &url = member->peerUrl;
    if (!url.isValid() || url.host().isEmpty())
        return unreachable(
            QStringLiteral("%1 has no peer URL in the members table").arg(describeMember(*member)));
    if (url.scheme() != QLatin1String("wss") && url.scheme() != QLatin1String("https"))
        return unreachable(QStringLiteral("%1's peer URL %2 is not wss://: members link only "
                                          "over mutually authenticated TLS")
                               .arg(describeMember(*member), url.toString()));
    const auto pins = net::PinSet::parse(member->keyPin);
    if (!pins || pins->isEmpty())
        return unreachable(QStringLiteral("%1 has no usable key pin in the members table")
                               .arg(describeMember(*member)));

    if (PeerLink *stale = m_links.take(memberId))
        stale->disconnect(this); // closing; it deletes itself once it ended
    auto *link = new PeerLink(*member, m_tls, m_options.link, this);
    m_links.insert(memberId, link);
    connect(link, &PeerLink::up, this, [this, link] {
        m_unreachable.remove(link->member().id);
        Q_EMIT linkUp(link->member());
    });
    connect(link, &PeerLink::ended, this,
        [this, link](const QString &reason, bool wasUp) { onEnded(link, reason, wasUp); });
    connect(link, &PeerLink::ended, link, &QObject::deleteLater);
    link->dial();
    return link;
}

void PeerLinks::onEnded(PeerLink *link, const QString &reason, bool wasUp)
{
    const PeerMember member = link->member();
    if (m_links.value(member.id) == link)
        m_links.remove(member.id);
    if (wasUp) {
        // It was there a moment ago (a restart, a network blip): the next
        // channel may dial again at once.
        m_unreachable.remove(member.id);
        Q_EMIT linkDown(member, reason);
        return;
    }
    auto it = m_unreachable.find(member.id);
    if (it == m_unreachable.end()) {
        Unreachable first;
        first.backoff = net::Backoff(m_options.initialBackoff, m_options.maxBackoff);
        it = m_unreachable.insert(member.id, first);
    }
    it->waitMs = it->backoff.next().count();
    it->since.start();
    it->reason = reason;
    Q_EMIT dialFailed(member, reason);
}

} // namespace cloop::hub
