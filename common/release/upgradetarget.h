#pragma once

#include "common/release/releaseversion.h"
#include "common/result.h"

#include <QList>
#include <QString>

#include <optional>

namespace cloop::release {

// The update channel a device follows, set on the device alone (a drop-in
// of its unit, written by its operator's install command).
enum class Channel
{
    Stable, // releases
    Edge, // builds of a commit, and releases
};
QString channelName(Channel channel);
Result<Channel> parseChannel(const QString &name);

// What an upgrade asks for: a release by its version, "latest" (the newest
// release on the device's channel) or "edge:<commit>" (7 to 40 hex digits).
struct UpgradeTarget
{
    enum class Kind
    {
        Release,
        Latest,
        Edge,
    };
    Kind kind = Kind::Latest;
    std::optional<ReleaseVersion> version; // Release
    QString commit; // Edge: lowercase hex

    static Result<UpgradeTarget> parse(const QString &text);
    QString toString() const;

    friend bool operator==(const UpgradeTarget &, const UpgradeTarget &) = default;
};

// A package the hub offers: what its verified signature states.
struct OfferedRelease
{
    ReleaseVersion version;
    Channel channel = Channel::Stable;
    QString commit; // 40 hex digits
};

// What the device's own configuration lets in. Nothing the hub sends can
// change it: the channel and the downgrade permission come from the device.
struct DevicePolicy
{
    Channel channel = Channel::Stable;
    ReleaseVersion installed;
    // Only the operator's own command on the device sets it, for one upgrade.
    bool allowDowngrade = false;
    // How the operator names the device's program in commands ("cloop
    // executor agent", "cloop forward"), for the remedy in a refusal.
    QString program;

    // Refuses, before anything is downloaded, a target this device does not
    // install: an edge target on a stable device, a release older than the
    // installed one (without allowDowngrade), the installed one itself.
    Status admits(const UpgradeTarget &target) const;

    // Of what the hub offers, the one package the target names on this
    // device's channel, admitted as above; an error says what is missing.
    Result<OfferedRelease> choose(
        const UpgradeTarget &target, const QList<OfferedRelease> &offered) const;
};

} // namespace cloop::release
