#include "hub/domain/releasecatalog.h"

#include "common/release/upgradetarget.h"

namespace cloop::hub {

using namespace Qt::StringLiterals;

ReleaseCatalog::ReleaseCatalog(ReleaseStore &store, QString folder)
    : m_store(store)
    , m_folder(std::move(folder))
{ }

QString ReleaseCatalog::packageOf(protocol::PeerRole role)
{
    return role == protocol::PeerRole::Forwarder ? u"cloop-forward"_s : u"cloop-agent"_s;
}

Result<QList<ReleaseRecord>> ReleaseCatalog::list()
{
    if (m_readAt.isValid() && m_readAt.elapsed() < kRereadAfterMs)
        return m_cached;
    auto releases = m_store.list();
    if (!releases)
        return releases.error();
    m_cached = *releases;
    m_readAt.start();
    return m_cached;
}

Result<ReleaseRecord> ReleaseCatalog::find(qint64 id)
{
    // Read afresh: a download must never miss a release just added.
    m_readAt.invalidate();
    auto releases = list();
    if (!releases)
        return releases.error();
    for (const ReleaseRecord &record : *releases)
        if (record.id == id)
            return record;
    return Error::make(u"not_found"_s, u"the hub offers no release %1"_s.arg(id));
}

QString ReleaseCatalog::pathOf(const ReleaseRecord &record) const
{
    return m_folder + u'/' + record.fileName;
}

std::optional<QString> ReleaseCatalog::newerOffered(
    const QString &package, const QString &channel, const QString &installed)
{
    auto version = release::ReleaseVersion::parse(installed);
    auto followed = release::parseChannel(channel.isEmpty() ? u"stable"_s : channel);
    auto releases = list();
    if (!version || !followed || !releases)
        return std::nullopt;
    QList<release::OfferedRelease> offered;
    for (const ReleaseRecord &record : *releases) {
        auto offeredVersion = release::ReleaseVersion::parse(record.statement.version);
        auto offeredChannel = release::parseChannel(record.statement.channel);
        if (record.statement.package == package && offeredVersion && offeredChannel)
            offered.append({ *offeredVersion, *offeredChannel, record.statement.commit });
    }
    const release::DevicePolicy policy { *followed, *version, false, QString() };
    auto chosen = policy.choose(release::UpgradeTarget {}, offered);
    if (!chosen)
        return std::nullopt;
    return chosen->version.toString();
}

} // namespace cloop::hub
