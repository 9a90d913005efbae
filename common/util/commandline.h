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

    // For positional arguments and reading; options go through addOptions,
    // which knows them for "did you mean".
    QCommandLineParser &parser() { return m_parser; }
    const QCommandLineParser &parser() const { return m_parser; }
    void addOptions(const QList<QCommandLineOption> &options);

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
    // The same with exit code 2 and, on a line of its own, where the usage is.
    int usageError(const QString &message) const;

private:
    // What a person typed for an option the parser did not know ("--jsn").
    QString unknownOptionAsTyped(const QStringList &arguments) const;

    QString m_name;
    QCommandLineParser m_parser;
    QStringList m_optionNames { QStringLiteral("--help"), QStringLiteral("--version") };
};

// The line after every usage error: "Run 'NAME --help' for usage."
QString usageHint(const QString &name);

// One line on stdout, flushed.
void printLine(const QString &line);

} // namespace cloop::util
