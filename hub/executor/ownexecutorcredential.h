#pragma once

#include "common/result.h"

#include <QString>
#include <QUrl>

namespace cloop::hub {

class HubCore;

// How the hub's own executor gets in: with the credential saved in the data
// folder (moved to the hub's current address and key, which may have
// changed since), or, when there is none or this database never issued it,
// by a new enrollment of the executor "hub" that first retires an earlier
// one whose credential is gone. A revocation stands: a revoked credential
// is an error, and nothing is enrolled in its place.
class OwnExecutorCredential
{
public:
    OwnExecutorCredential(HubCore &core, QString path)
        : m_core(core)
        , m_path(std::move(path))
    { }

    // The enrollment bundle to start the agent with, or empty when the saved
    // credential is good as it is.
    Result<QString> prepare(const QUrl &hub, const QString &pin);

private:
    HubCore &m_core;
    QString m_path;
};

} // namespace cloop::hub
