#include "common/release/upgradetarget.h"

#include <QRegularExpression>

namespace cloop::release {

namespace {

Error refused(const QString &message)
{
    return Error::make(QStringLiteral("upgrade_refused"), message);
}

bool isBuildOf(const OfferedRelease &release, const QString &commit)
{
    return release.channel == Channel::Edge && release.commit.startsWith(commit);
}

} // namespace

QString channelName(Channel channel)
{
    return channel == Channel::Edge ? QStringLiteral("edge") : QStringLiteral("stable");
}

Result<Channel> parseChannel(const QString &name)
{
    if (name == QLatin1String("stable"))
        return Channel::Stable;
    if (name == QLatin1String("edge"))
        return Channel::Edge;
    return Error::make(QStringLiteral("bad_channel"),
        QStringLiteral("the channel is stable or edge, not \"%1\"").arg(name.left(40)));
}

Result<UpgradeTarget> UpgradeTarget::parse(const QString &text)
{
    UpgradeTarget target;
    if (text == QLatin1String("latest"))
        return target;
    if (text.startsWith(QLatin1String("edge:"))) {
        static const QRegularExpression commit(QStringLiteral("\\A[0-9a-f]{7,40}\\z"));
        const QString hex = text.mid(5);
        if (!commit.match(hex).hasMatch())
            return Error::make(QStringLiteral("bad_target"),
                QStringLiteral("an edge target is edge: and 7 to 40 lowercase hex digits of a "
                               "commit, not \"%1\"")
                    .arg(text.left(64)));
        target.kind = Kind::Edge;
        target.commit = hex;
        return target;
    }
    auto version = ReleaseVersion::parse(text);
    if (!version || version->isEdge())
        return Error::make(QStringLiteral("bad_target"),
            QStringLiteral("\"%1\" is not a target: a release (such as 0.2.0), latest, or "
                           "edge:<commit>")
                .arg(text.left(64)));
    target.kind = Kind::Release;
    target.version = *version;
    return target;
}

QString UpgradeTarget::toString() const
{
    switch (kind) {
    case Kind::Release:
        return version ? version->toString() : QString();
    case Kind::Latest:
        return QStringLiteral("latest");
    case Kind::Edge:
        return QStringLiteral("edge:") + commit;
    }
    return {};
}

Status DevicePolicy::admits(const UpgradeTarget &target) const
{
    if (target.kind == UpgradeTarget::Kind::Edge && channel != Channel::Edge)
        return refused(
            QStringLiteral("this device does not follow the edge channel; its operator opts it "
                           "in on the device, as root: %1 install --upgrade --channel edge")
                .arg(program));
    if (target.kind == UpgradeTarget::Kind::Release) {
        const auto order = *target.version <=> installed;
        if (order == 0)
            return refused(
                QStringLiteral("%1 is the version installed").arg(target.version->toString()));
        if (order < 0 && !allowDowngrade)
            return refused(QStringLiteral("%1 is older than the installed %2: a downgrade is "
                                          "allowed only by the operator's own command on the "
                                          "device (%3 install --upgrade --target %1 "
                                          "--allow-downgrade)")
                               .arg(target.version->toString(), installed.toString(), program));
    }
    return {};
}

Result<OfferedRelease> DevicePolicy::choose(
    const UpgradeTarget &target, const QList<OfferedRelease> &offered) const
{
    if (Status admitted = admits(target); !admitted)
        return admitted.error();
    const OfferedRelease *chosen = nullptr;
    for (const OfferedRelease &release : offered) {
        // A stable device installs releases only, whatever the hub offers.
        if (release.channel == Channel::Edge && channel != Channel::Edge)
            continue;
        switch (target.kind) {
        case UpgradeTarget::Kind::Release:
            if (release.channel == Channel::Stable && release.version == *target.version)
                chosen = &release;
            break;
        case UpgradeTarget::Kind::Edge:
            if (isBuildOf(release, target.commit)) {
                if (chosen)
                    return refused(QStringLiteral("edge:%1 names more than one build: give more "
                                                  "of the commit")
                                       .arg(target.commit));
                chosen = &release;
            }
            break;
        case UpgradeTarget::Kind::Latest:
            // The newest the channel has (an edge device follows releases
            // too); of two builds of one number neither is newer, and the
            // one seen first stays.
            if (!chosen || (release.version <=> chosen->version) > 0)
                chosen = &release;
            break;
        }
    }
    if (!chosen)
        return Error::make(QStringLiteral("no_release"),
            QStringLiteral("the hub offers no %1 for the %2 channel")
                .arg(target.kind == UpgradeTarget::Kind::Latest ? QStringLiteral("release")
                                                                : target.toString(),
                    channelName(channel)));
    if (target.kind != UpgradeTarget::Kind::Release) {
        // What "latest" or a commit came to is admitted like a named release.
        const auto order = chosen->version <=> installed;
        if (order == 0)
            return Error::make(QStringLiteral("up_to_date"),
                QStringLiteral("%1 is %2, the version installed")
                    .arg(target.toString(), installed.toString()));
        if (order < 0 && !allowDowngrade)
            return refused(
                QStringLiteral("%1 (%2) is older than the installed %3")
                    .arg(target.toString(), chosen->version.toString(), installed.toString()));
    }
    return *chosen;
}

} // namespace cloop::release
