#include "common/util/commandline.h"

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

std::optional<int> CommandLine::parse(const QStringList &arguments, bool positionals)
{
    if (!m_parser.parse(arguments))
        return usageError(m_parser.errorText());
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

void printLine(const QString &line)
{
    std::fputs(line.toUtf8().constData(), stdout);
    std::fputc('\n', stdout);
    std::fflush(stdout);
}

} // namespace cloop::util
