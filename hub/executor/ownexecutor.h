#pragma once

#include "common/result.h"
#include "hub/domain/executorservice.h"

#include <QObject>
#include <QThread>
#include <QUrl>

namespace cloop::hub {

class HubCore;

// The hub's own container executor (`cloop hub serve --executor`): an
// executor agent living on a thread of the hub's process, reaching the hub
// the way every agent does, over a pinned tunnel on loopback. Sharing that
// path means its runs are dispatched, streamed, cancelled and reconciled by
// the code that serves every other agent, with the same sandbox driver; the
// thread keeps slow sandbox commands (an image import, a `podman rm`) off
// the hub's event loop.
//
// Its record is the executor named "hub", enrolled by the hub itself; its
// credential is kept in the data folder. A revocation stands: a revoked
// hub executor stays off until its operator deletes that file.
class OwnExecutor final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(OwnExecutor)

public:
    static constexpr QLatin1StringView kName = ExecutorService::kOwnExecutorName;

    struct Options
    {
        int maxConcurrent = 0; // 0: the number of CPUs
        QString workRoot; // default: <data>/executor/work
        qsizetype retainBytes = 1024 * 1024;
    };

    OwnExecutor(HubCore &core, QString dataDir, Options options, QObject *parent = nullptr);
    // Stops the agent (its sandboxes go with it) and waits for its thread.
    ~OwnExecutor() override;

    // Checks the saved credential against the store, or enrolls the
    // executor anew, then starts the agent dialing `hub` (pinned to `pin`).
    // An error (revoked, an unreadable credential) leaves it off.
    Status start(const QUrl &hub, const QString &pin);

    QString credentialPath() const;
    QString workRoot() const;

Q_SIGNALS:
    // The agent ended: refused for good (revoked while serving), or failed.
    void stopped(int exitCode);

private:
    HubCore &m_core;
    QString m_dataDir;
    Options m_options;
    QThread m_thread;
};

} // namespace cloop::hub
