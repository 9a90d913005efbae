#pragma once

#include "common/protocol/controlmessage.h"
#include "common/result.h"
#include "hub/storage/releasestore.h"

#include <QElapsedTimer>
#include <QList>
#include <QString>

#include <optional>

namespace cloop::hub {

// The releases the hub offers, as the views of version skew and the
// devices' downloads read them. `cloop hub release add` writes them from
// another process, so the list is read again after a few seconds.
class ReleaseCatalog
{
public:
    ReleaseCatalog(ReleaseStore &store, QString folder);

    // The package a daemon of this role runs.
    static QString packageOf(protocol::PeerRole role);

    Result<QList<ReleaseRecord>> list();
    Result<ReleaseRecord> find(qint64 id);
    // Where the hub keeps a release's file (<data>/releases).
    QString pathOf(const ReleaseRecord &record) const;
    // The newest release of `package` a device on `channel` running
    // `installed` would move to with target `latest`; none when it is up to
    // date, its version is unknown, or the hub offers nothing newer.
    std::optional<QString> newerOffered(
        const QString &package, const QString &channel, const QString &installed);

    static constexpr qint64 kRereadAfterMs = 2000;

private:
    ReleaseStore &m_store;
    QString m_folder;
    QList<ReleaseRecord> m_cached;
    QElapsedTimer m_readAt;
};

} // namespace cloop::hub
