#pragma once

#include "common/api/adminrequest.h"
#include "common/daemon/releasesource.h"
#include "common/identity/credentialfile.h"

namespace cloop::daemon {

// The hub's releases, fetched over HTTPS pinned to the hub's key exactly as
// the daemon's tunnel is, with the daemon's own credential: the hub lets a
// device's credential reach the release downloads and nothing else.
class HubReleaseSource final : public ReleaseSource
{
public:
    static Result<HubReleaseSource> fromCredential(const identity::DaemonCredential &credential);

    Result<QList<OfferedPackage>> list(const QString &package) override;
    Status download(const OfferedPackage &offered, const QString &packagePath,
        const QString &signaturePath) override;

private:
    explicit HubReleaseSource(api::AdminEndpoint endpoint)
        : m_endpoint(std::move(endpoint))
    { }
    // GET `path` into `file`, refused past `limit` bytes.
    Status fetch(const QString &path, const QString &file, qint64 limit);

    api::AdminEndpoint m_endpoint;
};

} // namespace cloop::daemon
