#pragma once

#include "common/release/upgradetarget.h"
#include "common/result.h"

#include <QByteArray>
#include <QProcessEnvironment>
#include <QString>

namespace cloop::daemon {

// What a device's operator decided about its upgrades. It lives in a
// drop-in of the daemon's unit (`… install --upgrade` writes it, root's like
// the unit), reaches the daemon as its environment, and is read again from
// the file by the root helper. Nothing the hub sends changes it.
struct UpgradeSettings
{
    release::Channel channel = buildChannel();
    // Whether an administrator of the hub may ask for an upgrade.
    bool remoteUpgrade = false;

    static constexpr const char *kChannelVariable = "CLOOP_CHANNEL";
    static constexpr const char *kRemoteUpgradeVariable = "CLOOP_REMOTE_UPGRADE";
    static constexpr const char *kDropInName = "upgrade.conf";

    // The channel the running build was made for: a device follows it until
    // its operator says otherwise.
    static release::Channel buildChannel();
    // The variables the drop-in sets; absent ones keep the defaults, and a
    // value out of shape is an error naming it.
    static Result<UpgradeSettings> fromEnvironment(const QProcessEnvironment &environment);
    // The drop-in's own text, as toDropIn wrote it.
    static Result<UpgradeSettings> fromDropIn(const QByteArray &text);
    QByteArray toDropIn(const QString &command) const;

    friend bool operator==(const UpgradeSettings &, const UpgradeSettings &) = default;
};

} // namespace cloop::daemon
