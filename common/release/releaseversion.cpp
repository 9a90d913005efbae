#include "common/release/releaseversion.h"

#include <QRegularExpression>

namespace cloop::release {

Result<ReleaseVersion> ReleaseVersion::parse(const QString &text)
{
    static const QRegularExpression shape(
        QStringLiteral("\\A(0|[1-9][0-9]{0,5})\\.(0|[1-9][0-9]{0,5})\\.(0|[1-9][0-9]{0,5})"
                       "(?:~git([0-9a-f]{12}))?\\z"));
    const auto match = shape.match(text);
    if (!match.hasMatch())
        return Error::make(QStringLiteral("bad_version"),
            QStringLiteral("\"%1\" is not a version (MAJOR.MINOR.PATCH, or "
                           "MAJOR.MINOR.PATCH~git and 12 hex digits of a commit for an edge "
                           "build)")
                .arg(text.left(64)));
    ReleaseVersion version;
    version.m_major = match.captured(1).toInt();
    version.m_minor = match.captured(2).toInt();
    version.m_patch = match.captured(3).toInt();
    version.m_build = match.captured(4);
    return version;
}

QString ReleaseVersion::toString() const
{
    QString text = QStringLiteral("%1.%2.%3").arg(m_major).arg(m_minor).arg(m_patch);
    if (isEdge())
        text += QStringLiteral("~git") + m_build;
    return text;
}

std::partial_ordering operator<=>(const ReleaseVersion &a, const ReleaseVersion &b)
{
    if (const auto number
        = std::tie(a.m_major, a.m_minor, a.m_patch) <=> std::tie(b.m_major, b.m_minor, b.m_patch);
        number != 0)
        return number;
    if (a.m_build == b.m_build)
        return std::partial_ordering::equivalent;
    if (a.m_build.isEmpty())
        return std::partial_ordering::greater;
    if (b.m_build.isEmpty())
        return std::partial_ordering::less;
    return std::partial_ordering::unordered;
}

} // namespace cloop::release
