#pragma once

#include "common/daemon/upgradesettings.h"
#include "common/daemon/upgradespool.h"
#include "common/protocol/controlmessage.h"

#include <QFileSystemWatcher>
#include <QObject>
#include <QTimer>

#include <functional>
#include <optional>

namespace cloop::daemon {

// A daemon's side of a remote upgrade. The hub may only ask: this checks
// the request against the device's own settings (remote upgrades allowed,
// its channel, no downgrade), drains the daemon's work, and files the
// request for the root helper, which does the rest. It also tells the hub
// where things stand after each reconnection, including the helper's
// outcome, and leaves the mark by which the helper sees the daemon back.
class UpgradeResponder final : public QObject
{
    Q_OBJECT
    Q_DISABLE_COPY_MOVE(UpgradeResponder)

public:
    struct Options
    {
        UpgradeSettings settings;
        QString program; // "cloop executor agent", for the remedies
        QString spoolFolder;
        QString installedVersion;
        // How much work the daemon has that an upgrade must wait for (an
        // agent's active runs); none when empty.
        std::function<int()> busy;
    };

    explicit UpgradeResponder(Options options, QObject *parent = nullptr);

    void onRequest(const protocol::UpgradeRequest &request);
    // After each welcome: the mark for the helper, then the helper's
    // outcome or the upgrade still under way. The helper leaves its outcome
    // once it has seen the mark, so the folder is watched while connected.
    void onConnected();
    void onDisconnected();
    // While true the daemon takes no new work.
    bool isDraining() const { return m_draining.has_value(); }

    static constexpr int kDrainPollMs = 1000;

Q_SIGNALS:
    void send(const cloop::protocol::ControlMessage &message);

private:
    protocol::UpgradeStatus refusal(const QString &target, const QString &message) const;
    void drainTick();
    void file(const release::UpgradeTarget &target);
    void tellOutcome();
    int busy() const { return m_options.busy ? m_options.busy() : 0; }

    Options m_options;
    UpgradeSpool m_spool;
    std::optional<release::UpgradeTarget> m_draining;
    int m_lastDraining = -1; // the run count last told to the hub
    QTimer m_drainTimer;
    QFileSystemWatcher m_watcher;
    bool m_connected = false;
};

} // namespace cloop::daemon
