#include "common/api/auditlogentry.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QRegularExpression>

namespace cloop::api {

namespace {

QString shownValue(const QJsonValue &value)
{
    static const QRegularExpression plain(QStringLiteral("\\A[^\\s\"=]+\\z"));
    if (value.isString()) {
        QString text = value.toString();
        if (plain.match(text).hasMatch())
            return text;
        return QLatin1Char('"') + text.replace(QLatin1Char('"'), QLatin1String("\\\""))
            + QLatin1Char('"');
    }
    if (value.isBool())
        return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
    if (value.isDouble())
        return QString::number(value.toDouble(), 'g', 17);
    return QString::fromUtf8(value.isArray()
            ? QJsonDocument(value.toArray()).toJson(QJsonDocument::Compact)
            : QJsonDocument(value.toObject()).toJson(QJsonDocument::Compact));
}

void appendPairs(QStringList &parts, const QString &prefix, const QJsonObject &object)
{
    for (auto it = object.begin(); it != object.end(); ++it) {
        const QJsonValue value = it.value();
        if (value.isNull() || value.isUndefined())
            continue;
        const QString key = prefix + it.key();
        if (value.isObject() && !value.toObject().isEmpty())
            appendPairs(parts, key + QLatin1Char('.'), value.toObject());
        else
            parts.append(key + QLatin1Char('=') + shownValue(value));
    }
}

} // namespace

namespace {
QString describeNamed(const QString &written, const QString &name)
{
    if (name.isEmpty())
        return written;
    const qsizetype colon = written.indexOf(QLatin1Char(':'));
    if (colon <= 0)
        return written;
    return QStringLiteral("%1 %2 (#%3)").arg(written.left(colon), name, written.mid(colon + 1));
}
} // namespace

QString AuditLogEntry::describeSubject() const
{
    return describeNamed(subject, subjectName);
}

QString AuditLogEntry::describeActor() const
{
    return describeNamed(actor, actorName);
}

QString describeAuditDetails(const QJsonObject &details)
{
    QStringList parts;
    appendPairs(parts, QString(), details);
    return parts.isEmpty() ? QStringLiteral("-") : parts.join(QLatin1Char(' '));
}

} // namespace cloop::api
