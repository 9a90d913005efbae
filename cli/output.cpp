#include "cli/output.h"

#include "common/util/duration.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <cstdio>

namespace cloop::cli {

void printLine(const QString &line)
{
    std::fputs(line.toUtf8().constData(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

void printNote(const QString &line)
{
    std::fputs(line.toUtf8().constData(), stderr);
    std::fputc('\n', stderr);
    std::fflush(stderr);
}

void printJson(const QJsonValue &value)
{
    const QJsonDocument document
        = value.isArray() ? QJsonDocument(value.toArray()) : QJsonDocument(value.toObject());
    std::fputs(document.toJson(QJsonDocument::Indented).constData(), stdout);
    std::fflush(stdout);
}

int fail(const QString &command, const QString &message, int exitCode)
{
    std::fprintf(
        stderr, "cloop %s: %s\n", command.toUtf8().constData(), message.toUtf8().constData());
    return exitCode;
}

void warn(const QString &command, const QString &message)
{
    std::fprintf(stderr, "cloop %s: warning: %s\n", command.toUtf8().constData(),
        message.toUtf8().constData());
}

QString formatTime(const QDateTime &time)
{
    return util::formatUtcTime(time);
}

QString formatDistance(const QDateTime &time)
{
    const qint64 seconds = QDateTime::currentDateTimeUtc().secsTo(time);
    const qint64 magnitude = seconds < 0 ? -seconds : seconds;
    if (magnitude < 5)
        return QStringLiteral("now");
    // To the second under a minute, the minute under two days, the hour beyond.
    qint64 rounded = magnitude;
    if (magnitude >= 2 * 86400)
        rounded = (magnitude + 1800) / 3600 * 3600;
    else if (magnitude >= 60)
        rounded = (magnitude + 30) / 60 * 60;
    const QString amount = util::formatDuration(std::chrono::seconds(rounded));
    return seconds < 0 ? amount + QStringLiteral(" ago") : QStringLiteral("in ") + amount;
}

QString formatTimeAndDistance(const QDateTime &time)
{
    if (!time.isValid())
        return QStringLiteral("-");
    return QStringLiteral("%1 (%2)").arg(formatTime(time), formatDistance(time));
}

QString formatTable(const QStringList &header, const QList<QStringList> &rows)
{
    QList<qsizetype> widths;
    for (const QString &cell : header)
        widths.append(cell.size());
    for (const QStringList &row : rows) {
        for (qsizetype i = 0; i < row.size() && i < widths.size(); ++i)
            widths[i] = std::max(widths[i], row[i].size());
    }
    auto line = [&](const QStringList &cells) {
        QString out;
        for (qsizetype i = 0; i < cells.size(); ++i) {
            if (i + 1 < cells.size())
                out += cells[i].leftJustified(widths[i] + 2);
            else
                out += cells[i];
        }
        return out;
    };
    QStringList lines { line(header) };
    for (const QStringList &row : rows)
        lines.append(line(row));
    return lines.join(QLatin1Char('\n'));
}

QString formatFields(const QList<std::pair<QString, QString>> &fields)
{
    qsizetype width = 0;
    for (const auto &[label, value] : fields)
        width = std::max(width, label.size() + 1);
    QStringList lines;
    for (const auto &[label, value] : fields)
        lines.append((label + QLatin1Char(':')).leftJustified(width + 2) + value);
    return lines.join(QLatin1Char('\n'));
}

QString formatLastSeen(const api::EnrolledDaemon &daemon)
{
    if (daemon.connected)
        return QStringLiteral("now");
    if (!daemon.lastSeen.isValid())
        return QStringLiteral("never");
    if (daemon.lastSeen.secsTo(QDateTime::currentDateTimeUtc()) < 86400)
        return formatDistance(daemon.lastSeen);
    return formatTime(daemon.lastSeen);
}

} // namespace cloop::cli
