#pragma once

#include "common/release/upgradetarget.h"
#include "common/result.h"

#include <QList>
#include <QString>

namespace cloop::daemon {

// One package the hub offers, as its release list says (not yet verified:
// only the signature file, checked against the device's keys, is trusted).
struct OfferedPackage
{
    qint64 id = 0;
    QString package;
    QString version;
    QString channel;
    QString commit;
    qint64 sizeBytes = 0;
};

// Where a device's root helper fetches releases from: the hub, over pinned
// HTTPS with the daemon's own credential (HubReleaseSource), or a test's
// folder.
class ReleaseSource
{
public:
    virtual ~ReleaseSource() = default;
    virtual Result<QList<OfferedPackage>> list(const QString &package) = 0;
    // The package file and its signature, written to these paths; a file
    // larger than the list said is refused mid-way.
    virtual Status download(
        const OfferedPackage &offered, const QString &packagePath, const QString &signaturePath)
        = 0;
};

} // namespace cloop::daemon
