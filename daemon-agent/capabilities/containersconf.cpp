#include "daemon-agent/capabilities/containersconf.h"

#include "daemon-agent/agentlogging.h"

#include <QDir>
#include <QFile>

namespace cloop::agent::containersconf {

namespace {

constexpr qsizetype kMaxFileBytes = 1024 * 1024;
const QString kRuntimesTable = QStringLiteral("engine.runtimes");

// One line without its comment, and how many '[' it opens minus the ']' it
// closes, both outside quoted strings.
struct ScannedLine
{
    QString content;
    int bracketBalance = 0;
};

ScannedLine scanLine(QStringView line)
{
    ScannedLine result;
    QChar quote;
    for (qsizetype i = 0; i < line.size(); ++i) {
        const QChar c = line.at(i);
        if (!quote.isNull()) {
            if (quote == QLatin1Char('"') && c == QLatin1Char('\\') && i + 1 < line.size()) {
                result.content += c;
                result.content += line.at(++i);
                continue;
            }
            if (c == quote)
                quote = QChar();
        } else if (c == QLatin1Char('"') || c == QLatin1Char('\'')) {
            quote = c;
        } else if (c == QLatin1Char('#')) {
            break;
        } else if (c == QLatin1Char('[')) {
            ++result.bracketBalance;
        } else if (c == QLatin1Char(']')) {
            --result.bracketBalance;
        }
        result.content += c;
    }
    return result;
}

// The quoted strings in `text`, in order: "basic" ones with backslash
// escapes and 'literal' ones without.
QStringList quotedStrings(QStringView text)
{
    QStringList strings;
    for (qsizetype i = 0; i < text.size(); ++i) {
        const QChar quote = text.at(i);
        if (quote != QLatin1Char('"') && quote != QLatin1Char('\''))
            continue;
        QString value;
        qsizetype j = i + 1;
        for (; j < text.size() && text.at(j) != quote; ++j) {
            if (quote == QLatin1Char('"') && text.at(j) == QLatin1Char('\\') && j + 1 < text.size())
                ++j;
            value += text.at(j);
        }
        if (j >= text.size())
            break; // unterminated: ignore the rest
        strings.append(value);
        i = j;
    }
    return strings;
}

QString keyName(QStringView key)
{
    const QStringView trimmed = key.trimmed();
    if (trimmed.startsWith(QLatin1Char('"')) || trimmed.startsWith(QLatin1Char('\''))) {
        const QStringList strings = quotedStrings(trimmed);
        return strings.isEmpty() ? QString() : strings.first();
    }
    return trimmed.toString();
}

} // namespace

QMap<QString, QStringList> parseRuntimes(QStringView toml)
{
    QMap<QString, QStringList> runtimes;
    QString table;
    QString pendingKey;
    QString pendingValue;
    int pendingBalance = 0;

    const auto finish = [&] {
        if (!pendingKey.isEmpty())
            runtimes.insert(pendingKey, quotedStrings(pendingValue));
        pendingKey.clear();
        pendingValue.clear();
        pendingBalance = 0;
    };

    for (const QStringView line : toml.split(QLatin1Char('\n'))) {
        const ScannedLine scanned = scanLine(line);
        const QString content = scanned.content.trimmed();
        if (!pendingKey.isEmpty()) {
            pendingValue += QLatin1Char(' ') + content;
            pendingBalance += scanned.bracketBalance;
            if (pendingBalance <= 0)
                finish();
            continue;
        }
        if (content.startsWith(QLatin1Char('['))) {
            QString header = content;
            while (header.startsWith(QLatin1Char('[')))
                header.remove(0, 1);
            while (header.endsWith(QLatin1Char(']')))
                header.chop(1);
            table = header.trimmed();
            continue;
        }
        if (table != kRuntimesTable)
            continue;
        const qsizetype equals = content.indexOf(QLatin1Char('='));
        if (equals <= 0)
            continue;
        pendingKey = keyName(QStringView(content).left(equals));
        if (pendingKey.isEmpty())
            continue;
        pendingValue = content.mid(equals + 1);
        pendingBalance = scanLine(pendingValue).bracketBalance;
        if (pendingBalance <= 0)
            finish();
    }
    finish(); // an array left open at the end of the file
    return runtimes;
}

QStringList defaultFiles(bool rootless)
{
    const QString override = qEnvironmentVariable("CONTAINERS_CONF");
    if (!override.isEmpty())
        return { override };

    QStringList files { QStringLiteral("/usr/share/containers/containers.conf") };
    const auto addFolder = [&files](const QString &folder) {
        files.append(folder + QStringLiteral("/containers.conf"));
        const QDir dropIns(folder + QStringLiteral("/containers.conf.d"));
        for (const QString &name :
            dropIns.entryList({ QStringLiteral("*.conf") }, QDir::Files, QDir::Name))
            files.append(dropIns.filePath(name));
    };
    addFolder(QStringLiteral("/etc/containers"));
    if (rootless) {
        QString configHome = qEnvironmentVariable("XDG_CONFIG_HOME");
        if (configHome.isEmpty())
            configHome = QDir::homePath() + QStringLiteral("/.config");
        addFolder(configHome + QStringLiteral("/containers"));
    }
    return files;
}

QMap<QString, QStringList> readRuntimes(const QStringList &files)
{
    QMap<QString, QStringList> runtimes;
    for (const QString &path : files) {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            continue;
        const QByteArray text = file.read(kMaxFileBytes);
        const auto found = parseRuntimes(QString::fromUtf8(text));
        for (auto it = found.cbegin(); it != found.cend(); ++it)
            runtimes.insert(it.key(), it.value());
        qCDebug(lcAgentProbe) << "read" << found.size() << "runtime entries from" << path;
    }
    return runtimes;
}

} // namespace cloop::agent::containersconf
