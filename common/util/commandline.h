#pragma once

#include <QCommandLineOption>
#include <QCommandLineParser>
#include <QString>
#include <QStringList>

#include <optional>

namespace cloop::util {

// Exit codes every program of cloop shares.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailed = 1;
inline constexpr int kExitUsage = 2;

// One command as a person types it ("cloop hub serve", "cloop forward
// bind"): its options with --help and --version, and how it says what went
// wrong: "NAME: message" on stderr, exit code 2 for bad arguments.
class CommandLine
{
public:
    CommandLine(QString name, const QString &description);

    QCommandLineParser &parser() { return m_parser; }
    const QCommandLineParser &parser() const { return m_parser; }
    void addOptions(const QList<QCommandLineOption> &options) { m_parser.addOptions(options); }

    // A value when the command is already over: --help or --version
    // printed (0), bad arguments reported (2). Without `positionals`, any
    // positional argument is bad.
    std::optional<int> parse(const QStringList &arguments, bool positionals = true);

    bool isSet(const QCommandLineOption &option) const { return m_parser.isSet(option); }
    QString value(const QCommandLineOption &option) const { return m_parser.value(option); }
    QStringList values(const QCommandLineOption &option) const { return m_parser.values(option); }
    const QString &name() const { return m_name; }

    // "NAME: message" on stderr; returns the exit code.
    int fail(const QString &message, int exitCode = kExitFailed) const;
    int usageError(const QString &message) const { return fail(message, kExitUsage); }

private:
    QString m_name;
    QCommandLineParser m_parser;
};

// One line on stdout, flushed.
void printLine(const QString &line);

} // namespace cloop::util
