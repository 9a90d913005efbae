#pragma once

#include "common/net/backoff.h"
#include "common/result.h"
#include "hub/cluster/peerdirectory.h"
#include "hub/cluster/peerlink.h"

#include <QElapsedTimer>
#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>

#include <chrono>

namespace cloop::tunnel {
class Channel;
class ChannelMultiplexer;
} // namespace cloop::tunnel

namespace cloop::hub {

// This member's outgoing links to the other members, one per member,
// dialled when a channel to it is first asked for and closed when it has
// carried nothing for a while. Callers get a channel at once, also while
// its link is still being dialled; if the dial fails or the link drops,
// the channel closes with ConnectionLost and a reason naming the member.
// A member that could not be reached is not dialled again until a short,
// growing backoff has passed; until then channels to it are refused at
// once, with the last reason.
class PeerLinks final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(PeerLinks)

public:
    struct Options
    {
        // This member: it has no link to itself.
        qint64 selfId = 0;
        PeerLink::Options link;
        std::chrono::milliseconds initialBackoff { 1'000 };
        std::chrono::milliseconds maxBackoff { 30'000 };
    };

    // The certificate chain and key are this member's, shown to the others
    // as its client certificate.
    PeerLinks(PeerDirectory &directory, const QList<QSslCertificate> &chain, const QSslKey &key,
        Options options, QObject *parent = nullptr);
    // Every link closes; their channels with ConnectionLost.
    ~PeerLinks() override;

    // A channel to `memberId` with this opening, queued until its link is
    // up (writes wait in it within its caps). Refused at once when the
    // member is this one, not alive, has no peer URL or pin, was
    // unreachable a moment ago, or its link has maxChannels open.
    Result<tunnel::Channel *> openChannel(qint64 memberId, const QJsonObject &metadata);

    // Links dialled from now on show this certificate (a reloaded one).
    void setIdentity(const QList<QSslCertificate> &chain, const QSslKey &key);

    int linkCount() const { return static_cast<int>(m_links.size()); }
    bool isUp(qint64 memberId) const;
    // The link's channels, while there is one (for its counters and caps).
    const tunnel::ChannelMultiplexer *channelsTo(qint64 memberId) const;

Q_SIGNALS:
    void linkUp(const cloop::hub::PeerMember &member);
    // A link that was up ended.
    void linkDown(const cloop::hub::PeerMember &member, const QString &reason);
    // A dial did not get as far as a verified link.
    void dialFailed(const cloop::hub::PeerMember &member, const QString &reason);

private:
    struct Unreachable
    {
        net::Backoff backoff;
        QElapsedTimer since;
        qint64 waitMs = 0;
        QString reason;
    };

    Result<PeerLink *> dial(qint64 memberId);
    Status checkBackoff(qint64 memberId) const;
    void onEnded(PeerLink *link, const QString &reason, bool wasUp);

    PeerDirectory &m_directory;
    Options m_options;
    QSslConfiguration m_tls;
    QHash<qint64, PeerLink *> m_links;
    QHash<qint64, Unreachable> m_unreachable;
};

} // namespace cloop::hub
