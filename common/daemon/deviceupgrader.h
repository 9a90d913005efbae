#pragma once

#include "common/daemon/releasesource.h"
#include "common/daemon/upgradesettings.h"
#include "common/daemon/upgradespool.h"
#include "common/protocol/controlmessage.h"
#include "common/release/releasesignature.h"
#include "common/util/commandrunner.h"

#include <chrono>
#include <functional>
#include <optional>

namespace cloop::daemon {

// What the root helper does with one upgrade, on the device: check the
// target against the device's own settings before anything is fetched,
// keep the installed version's package for a rollback, fetch and verify the
// new one (a package that fails is kept aside, never installed), install
// it, restart the unit, and wait for the daemon to come back connected on
// the new version; if it does not, put the previous one back. The outcome
// is left in the spool for the daemon to tell the hub.
class DeviceUpgrader
{
public:
    struct Device
    {
        QString package; // cloop-agent
        QString unit; // cloop-agent.service
        QString program; // cloop executor agent
        UpgradeSettings settings; // read from the device's drop-in
    };
    struct Job
    {
        release::UpgradeTarget target;
        // Only from the operator's own command on the device.
        bool allowDowngrade = false;
        bool skipVerification = false;
        std::chrono::milliseconds wait { 120'000 };
    };
    // How the helper waits between looks at the spool; a test's is instant.
    using Sleep = std::function<void(std::chrono::milliseconds)>;

    DeviceUpgrader(Device device, UpgradeSpool spool, const release::ReleaseKeyring &keyring,
        ReleaseSource &source, util::CommandRunner &runner, Sleep sleep);

    // The outcome, also written to the spool. Refused: nothing was fetched
    // or installed; Failed: nothing new is installed; Upgraded; RolledBack.
    protocol::UpgradeStatus run(const Job &job);

private:
    Result<release::ReleaseVersion> installedVersion();
    // The installed version's package, fetched and verified unless the
    // spool keeps it already.
    Result<QString> keepForRollback(
        const release::ReleaseVersion &installed, const QList<OfferedPackage> &offered);
    // Fetched into the staging folder and checked; a package that fails its
    // check goes to the rejected folder and the error says where.
    Result<QString> fetchVerified(const OfferedPackage &offered, bool skipVerification);
    Status install(const QString &packagePath);
    // Restarts the unit and waits for the daemon's mark of `version`, less
    // when the unit keeps restarting the new process.
    Status restartAndWait(const QString &version, std::chrono::milliseconds wait);
    // `name` (dpkg, systemctl) found on the PATH, as the runner finds it.
    Result<util::CommandOutput> runTool(
        const QString &name, const QStringList &arguments, std::chrono::milliseconds timeout);
    // systemd's count of the unit's automatic restarts, if it answers.
    std::optional<int> automaticRestarts();
    protocol::UpgradeStatus finish(protocol::UpgradeStatus outcome);

    Device m_device;
    UpgradeSpool m_spool;
    const release::ReleaseKeyring &m_keyring;
    ReleaseSource &m_source;
    util::CommandRunner &m_runner;
    Sleep m_sleep;
};

} // namespace cloop::daemon
