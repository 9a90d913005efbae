#include "common/daemon/upgradespool.h"

#include "common/util/atomicfile.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>

namespace cloop::daemon {

using namespace Qt::StringLiterals;

namespace {
constexpr qsizetype kMaxSpoolFile = 4096;
constexpr QLatin1StringView kTargetKey { "target=" };

// Reads a small file of the spool, or nothing when it is absent.
Result<std::optional<QByteArray>> readSmall(const QString &path)
{
    QFile file(path);
    if (!file.exists())
        return std::optional<QByteArray>();
    if (!file.open(QIODevice::ReadOnly))
        return Error::make(
            u"upgrade_spool_unreadable"_s, u"cannot read %1: %2"_s.arg(path, file.errorString()));
    return std::optional<QByteArray>(file.read(kMaxSpoolFile + 1));
}
} // namespace

QString UpgradeSpool::requestPath() const
{
    return m_folder + "/request"_L1;
}

QString UpgradeSpool::stagingFolder() const
{
    return m_folder + "/staging"_L1;
}

QString UpgradeSpool::rejectedFolder() const
{
    return m_folder + "/rejected"_L1;
}

QString UpgradeSpool::keptFolder() const
{
    return m_folder + "/kept"_L1;
}

Status UpgradeSpool::fileRequest(const release::UpgradeTarget &target) const
{
    return util::writeFileAtomically(
        requestPath(), (kTargetKey + target.toString() + u'\n').toUtf8(), 0600);
}

bool UpgradeSpool::hasRequest() const
{
    return QFile::exists(requestPath());
}

Result<std::optional<release::UpgradeTarget>> UpgradeSpool::takeRequest() const
{
    auto bytes = readSmall(requestPath());
    if (!bytes)
        return bytes.error();
    if (!*bytes)
        return std::optional<release::UpgradeTarget>();
    if (!QFile::remove(requestPath()))
        return Error::make(u"upgrade_spool_unwritable"_s,
            u"cannot remove %1, so the request is not applied (it would be again)"_s.arg(
                requestPath()));
    const QByteArray &text = **bytes;
    if (text.size() > kMaxSpoolFile)
        return Error::make(u"upgrade_request_invalid"_s, u"the upgrade request is too long"_s);
    const QList<QByteArray> lines = text.trimmed().split('\n');
    if (lines.size() != 1 || !lines.first().startsWith(kTargetKey.data()))
        return Error::make(u"upgrade_request_invalid"_s,
            u"an upgrade request holds one line, target=…, and nothing else (%1 lines)"_s.arg(
                lines.size()));
    auto target = release::UpgradeTarget::parse(
        QString::fromUtf8(lines.first().mid(kTargetKey.size())).trimmed());
    if (!target)
        return target.error();
    return std::optional<release::UpgradeTarget>(*target);
}

Status UpgradeSpool::writeOutcome(const protocol::UpgradeStatus &outcome) const
{
    return util::writeFileAtomically(
        m_folder + "/outcome"_L1, protocol::serializeControlMessage(outcome) + '\n', 0600);
}

Result<std::optional<protocol::UpgradeStatus>> UpgradeSpool::takeOutcome() const
{
    const QString path = m_folder + "/outcome"_L1;
    auto bytes = readSmall(path);
    if (!bytes)
        return bytes.error();
    if (!*bytes)
        return std::optional<protocol::UpgradeStatus>();
    QFile::remove(path);
    auto message = protocol::parseControlMessage(bytes->value().trimmed());
    const auto *status = message ? std::get_if<protocol::UpgradeStatus>(&*message) : nullptr;
    if (!status)
        return Error::make(u"upgrade_outcome_invalid"_s,
            u"%1 is no upgrade outcome%2"_s.arg(
                path, message ? QString() : u": "_s + message.error().message));
    return std::optional<protocol::UpgradeStatus>(*status);
}

Status UpgradeSpool::markConnected(const QString &version, const QDateTime &at) const
{
    const QJsonObject mark { { u"version"_s, version },
        { u"connected_at_ms"_s, at.toMSecsSinceEpoch() } };
    return util::writeFileAtomically(m_folder + "/connected"_L1,
        QJsonDocument(mark).toJson(QJsonDocument::Compact) + '\n', 0644);
}

std::optional<UpgradeSpool::ConnectedMark> UpgradeSpool::connectedMark() const
{
    auto bytes = readSmall(m_folder + "/connected"_L1);
    if (!bytes || !*bytes)
        return std::nullopt;
    const QJsonObject mark = QJsonDocument::fromJson(bytes->value()).object();
    if (!mark.value("version"_L1).isString())
        return std::nullopt;
    return ConnectedMark { mark.value("version"_L1).toString(),
        QDateTime::fromMSecsSinceEpoch(
            qint64(mark.value("connected_at_ms"_L1).toDouble()), Qt::UTC) };
}

} // namespace cloop::daemon
