#include "common/util/subcommands.h"

#include "common/util/commandline.h"
#include "common/util/didyoumean.h"

#include <algorithm>
#include <cstdio>

namespace cloop::util {

namespace {

// Summaries and examples under a command start here.
const QString kIndent = QStringLiteral("      ");
// The overview's summaries start in this column when the command fits.
constexpr qsizetype kOverviewColumn = 30;

// "Usage: PROGRAM <command> [options]", a blank line, the summary.
QString usageHead(const QString &program, const QString &summary)
{
    QString text = QStringLiteral("Usage: %1 <command> [options]\n\n").arg(program);
    if (!summary.isEmpty())
        text += summary + QLatin1Char('\n');
    return text;
}

void printError(const QString &program, const QString &message)
{
    std::fprintf(stderr, "%s: %s\n%s\n", program.toUtf8().constData(), message.toUtf8().constData(),
        usageHint(program).toUtf8().constData());
}

} // namespace

bool hasSubcommand(std::span<const Subcommand> family, const QString &name)
{
    return std::any_of(family.begin(), family.end(),
        [&](const Subcommand &member) { return name == QLatin1String(member.name); });
}

QStringList subcommandNames(std::span<const Subcommand> family)
{
    QStringList names;
    for (const Subcommand &member : family)
        names.append(QLatin1String(member.name));
    return names;
}

QString unknownSubcommand(const QString &typed, std::span<const Subcommand> family)
{
    const QStringList names = subcommandNames(family);
    if (typed.isEmpty())
        return QStringLiteral("expected a command: %1").arg(names.join(QStringLiteral(", ")));
    const QString meant = didYouMean(typed, names);
    if (!meant.isEmpty())
        return QStringLiteral("unknown command \"%1\"%2").arg(typed, meant);
    return QStringLiteral("unknown command \"%1\" (expected %2)")
        .arg(typed, names.join(QStringLiteral(", ")));
}

int runSubcommand(
    const QStringList &arguments, std::span<const Subcommand> family, const QString &summary)
{
    const QString program = arguments.value(0);
    const QString word = arguments.value(1);
    for (const Subcommand &member : family) {
        if (word != QLatin1String(member.name))
            continue;
        const QStringList rest
            = QStringList { program + QLatin1Char(' ') + word } + arguments.mid(2);
        if (member.run)
            return member.run(rest);
        if (member.members)
            return runSubcommand(rest, member.members(), QString::fromUtf8(member.summary));
        // Run by the caller before it comes here (it needs what only the caller has).
        printError(program, QStringLiteral("\"%1\" cannot be run from here").arg(word));
        return kExitFailed;
    }
    if (word == QLatin1String("--help") || word == QLatin1String("-h")
        || word == QLatin1String("help")) {
        std::fputs(familyHelp(program, family, summary).toUtf8().constData(), stdout);
        std::fflush(stdout);
        return kExitOk;
    }
    printError(program, unknownSubcommand(word, family));
    return kExitUsage;
}

QString familyHelp(
    const QString &program, std::span<const Subcommand> family, const QString &summary)
{
    QString text = usageHead(program, summary);
    text += QStringLiteral("\nCommands:\n");
    for (const Subcommand &member : family) {
        text += QStringLiteral("  %1").arg(QLatin1String(member.name));
        if (member.synopsis && *member.synopsis)
            text += QLatin1Char(' ') + QString::fromUtf8(member.synopsis);
        text += QLatin1Char('\n');
        if (member.summary && *member.summary)
            text += kIndent + QString::fromUtf8(member.summary) + QLatin1Char('\n');
        if (member.example && *member.example)
            text += kIndent + QStringLiteral("$ ") + QString::fromUtf8(member.example)
                + QLatin1Char('\n');
    }
    text += QStringLiteral("\nRun '%1 <command> --help' for a command's options.\n").arg(program);
    return text;
}

QString overviewHelp(
    const QString &program, std::span<const Subcommand> families, const QString &summary)
{
    QString text = usageHead(program, summary);
    const auto line = [](const QString &command, const char *what) {
        QString entry = QStringLiteral("  ") + command;
        const QString summaryText = what ? QString::fromUtf8(what) : QString();
        if (summaryText.isEmpty())
            return entry + QLatin1Char('\n');
        if (entry.size() + 2 > kOverviewColumn)
            return entry + QLatin1Char('\n') + QString(kOverviewColumn, u' ') + summaryText
                + QLatin1Char('\n');
        return entry.leftJustified(kOverviewColumn) + summaryText + QLatin1Char('\n');
    };
    for (const Subcommand &family : families) {
        if (family.group)
            text += QStringLiteral("\n%1\n").arg(QString::fromUtf8(family.group));
        const QString name = QString::fromUtf8(family.name);
        if (!family.members) {
            text += line(name, family.summary);
            continue;
        }
        // A family that also runs on its own ("cloop forward [options]").
        if (family.synopsis && *family.synopsis)
            text += line(
                name + QLatin1Char(' ') + QString::fromUtf8(family.synopsis), family.summary);
        for (const Subcommand &member : family.members())
            text += line(name + QLatin1Char(' ') + QString::fromUtf8(member.name), member.summary);
    }
    text += QStringLiteral("\nRun '%1 <command> --help' for its options and an example.\n")
                .arg(program);
    return text;
}

} // namespace cloop::util
