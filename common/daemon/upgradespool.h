#pragma once

#include "common/protocol/controlmessage.h"
#include "common/release/upgradetarget.h"
#include "common/result.h"

#include <QDateTime>
#include <QString>

#include <optional>

namespace cloop::daemon {

// The folder where a daemon and its root helper meet (root's, in the
// daemon's state directory): the request the daemon files for the helper,
// the outcome the helper leaves for the daemon to tell the hub, the mark the
// daemon leaves each time it is connected (how the helper knows the new
// version came back), and the packages the helper stages.
class UpgradeSpool
{
public:
    explicit UpgradeSpool(QString folder)
        : m_folder(std::move(folder))
    { }

    const QString &folder() const { return m_folder; }
    QString requestPath() const;
    QString stagingFolder() const; // packages being checked
    QString rejectedFolder() const; // packages that failed their check, kept aside
    QString keptFolder() const; // the installed version's package, for a rollback

    // A request holds a target and nothing else: no channel, no permission.
    Status fileRequest(const release::UpgradeTarget &target) const;
    bool hasRequest() const;
    // Deleted before it is read, so a request that is refused (or that makes
    // the helper fail) is never applied twice. Empty when there is none.
    Result<std::optional<release::UpgradeTarget>> takeRequest() const;

    Status writeOutcome(const protocol::UpgradeStatus &outcome) const;
    // The helper's last outcome, removed once read; a file out of shape is
    // removed too and reported as an error.
    Result<std::optional<protocol::UpgradeStatus>> takeOutcome() const;

    struct ConnectedMark
    {
        QString version;
        QDateTime at;
    };
    Status markConnected(const QString &version, const QDateTime &at) const;
    std::optional<ConnectedMark> connectedMark() const;

private:
    QString m_folder;
};

} // namespace cloop::daemon
