#include "common/daemon/upgradesettings.h"

#include "cloop/buildinfo.h"

#include <QRegularExpression>

namespace cloop::daemon {

using namespace Qt::StringLiterals;

release::Channel UpgradeSettings::buildChannel()
{
    return QLatin1StringView(buildinfo::kChannel) == "edge"_L1 ? release::Channel::Edge
                                                               : release::Channel::Stable;
}

Result<UpgradeSettings> UpgradeSettings::fromEnvironment(const QProcessEnvironment &environment)
{
    UpgradeSettings settings;
    const QString channelVariable = QString::fromLatin1(kChannelVariable);
    if (environment.contains(channelVariable)) {
        auto channel = release::parseChannel(environment.value(channelVariable));
        if (!channel)
            return Error::make(u"upgrade_settings_invalid"_s,
                u"%1: %2"_s.arg(channelVariable, channel.error().message));
        settings.channel = *channel;
    }
    const QString remoteVariable = QString::fromLatin1(kRemoteUpgradeVariable);
    if (environment.contains(remoteVariable)) {
        const QString value = environment.value(remoteVariable);
        if (value != "yes"_L1 && value != "no"_L1)
            return Error::make(u"upgrade_settings_invalid"_s,
                u"%1 must be \"yes\" or \"no\", not \"%2\""_s.arg(remoteVariable, value.left(32)));
        settings.remoteUpgrade = value == "yes"_L1;
    }
    return settings;
}

Result<UpgradeSettings> UpgradeSettings::fromDropIn(const QByteArray &text)
{
    // Only the lines toDropIn writes: Environment="NAME=VALUE".
    static const QRegularExpression line(u"\\AEnvironment=\"([A-Z_]+)=([a-z]*)\"\\z"_s);
    QProcessEnvironment environment;
    for (const QByteArray &raw : text.split('\n')) {
        const QString entry = QString::fromUtf8(raw).trimmed();
        if (entry.isEmpty() || entry.startsWith(u'#') || entry == "[Service]"_L1)
            continue;
        const QRegularExpressionMatch match = line.match(entry);
        if (!match.hasMatch())
            return Error::make(u"upgrade_settings_invalid"_s,
                u"the upgrade drop-in has a line it does not write: \"%1\""_s.arg(entry.left(80)));
        environment.insert(match.captured(1), match.captured(2));
    }
    return fromEnvironment(environment);
}

QByteArray UpgradeSettings::toDropIn(const QString &command) const
{
    return u"# Written by `%1 install --upgrade`: the device's own choice, which no hub changes.\n"
           "[Service]\n"
           "Environment=\"%2=%3\"\n"
           "Environment=\"%4=%5\"\n"_s
               .arg(command, QString::fromLatin1(kChannelVariable), release::channelName(channel),
                   QString::fromLatin1(kRemoteUpgradeVariable), remoteUpgrade ? u"yes"_s : u"no"_s)
               .toUtf8();
}

} // namespace cloop::daemon
