#include "hub/cli/output.h"

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

void printJson(const QJsonValue &value)
{
    const QJsonDocument document = value.isArray() ? QJsonDocument(value.toArray()) : QJsonDocument(value.toObject());
    std::fputs(document.toJson(QJsonDocument::Indented).constData(), stdout);
    std::fflush(stdout);
}

int fail(const QString &command, const QString &message, int exitCode)
{
    std::fprintf(stderr, "cloop %s: %s\n", command.toUtf8().constData(), message.toUtf8().constData());
    return exitCode;
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
    QStringList lines{line(header)};
    for (const QStringList &row : rows)
        lines.append(line(row));
    return lines.join(QLatin1Char('\n'));
}

} // namespace cloop::cli
