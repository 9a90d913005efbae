#include "common/util/commandline.h"

#include "common/util/didyoumean.h"
#include "common/util/versionreport.h"

#include <QCoreApplication>

#include <cstdio>

namespace cloop::util {

CommandLine::CommandLine(QString name, const QString &description)
    : m_name(std::move(name))
{
    m_parser.setApplicationDescription(description);
    m_parser.addHelpOption();
    m_parser.addVersionOption();
}

void CommandLine::addOptions(const QList<QCommandLineOption> &options)
{
    m_parser.addOptions(options);
    for (const QCommandLineOption &option : options) {
        for (const QString &name : option.names())
            m_optionNames.append(
                (name.size() == 1 ? QStringLiteral("-") : QStringLiteral("--")) + name);
    }
}

QString CommandLine::unknownOptionAsTyped(const QStringList &arguments) const
{
    const QString unknown = m_parser.unknownOptionNames().value(0);
    if (unknown.isEmpty())
        return {};
    // Qt reads "-json" as the short options j, s, o, n: the word as typed
    // is what a person recognises.
    for (const QString &argument : arguments.mid(1)) {
        if (argument == QLatin1String("--"))
            break;
        const QString name = argument.section(QLatin1Char('='), 0, 0);
        if (name == QLatin1String("--") + unknown || name == QLatin1String("-") + unknown
            || (unknown.size() == 1 && name.startsWith(QLatin1String("-") + unknown)
                && !name.startsWith(QLatin1String("--"))))
            return name;
    }
    return (unknown.size() == 1 ? QStringLiteral("-") : QStringLiteral("--")) + unknown;
}

std::optional<int> CommandLine::parse(const QStringList &arguments, bool positionals)
{
    if (!m_parser.parse(arguments)) {
        if (const QString unknown = unknownOptionAsTyped(arguments); !unknown.isEmpty())
            return usageError(QStringLiteral("unknown option %1%2")
                                  .arg(unknown, didYouMean(unknown, m_optionNames)));
        return usageError(m_parser.errorText());
    }
    if (m_parser.isSet(QStringLiteral("help"))) {
        // Qt names the executable's path; a person typed "cloop forward bind".
        QString help = m_parser.helpText();
        const QString program = QCoreApplication::arguments().value(0);
        if (const QString usage = QStringLiteral("Usage: ") + program;
            !program.isEmpty() && help.startsWith(usage))
            help.replace(0, usage.size(), QStringLiteral("Usage: ") + m_name);
        std::fputs(help.toUtf8().constData(), stdout);
        std::fflush(stdout);
        return kExitOk;
    }
    if (m_parser.isSet(QStringLiteral("version"))) {
        printLine(VersionReport::of(m_name).toText());
        return kExitOk;
    }
    if (!positionals && !m_parser.positionalArguments().isEmpty())
        return usageError(QStringLiteral("unexpected argument \"%1\" (see --help)")
                              .arg(m_parser.positionalArguments().constFirst()));
    return std::nullopt;
}

int CommandLine::fail(const QString &message, int exitCode) const
{
    std::fprintf(stderr, "%s: %s\n", m_name.toUtf8().constData(), message.toUtf8().constData());
    return exitCode;
}

int CommandLine::usageError(const QString &message) const
{
    fail(message, kExitUsage);
    std::fprintf(stderr, "%s\n", usageHint(m_name).toUtf8().constData());
    return kExitUsage;
}

QString usageHint(const QString &name)
{
    return QStringLiteral("Run '%1 --help' for usage.").arg(name);
}

void printLine(const QString &line)
{
    std::fputs(line.toUtf8().constData(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

} // namespace cloop::util
