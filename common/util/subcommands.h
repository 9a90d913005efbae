#pragma once

#include <QString>
#include <QStringList>

#include <span>

namespace cloop::util {

// One word of a command line that names what to do ("cloop forward bind",
// "cloop hub serve"): what runs it and how the family's --help shows it.
struct Subcommand
{
    const char *name;
    // arguments[0] is the command as typed so far ("cloop forward bind").
    int (*run)(const QStringList &arguments);
    // Its arguments, after its name: "ID --project DIR [--ttl 24h]".
    const char *synopsis;
    // One line: "Lend a forwarder's device to a project's runs."
    const char *summary;
    // One command a person could type: "cloop forward bind 3 --project …".
    const char *example;
    // When it is a family of its own ("cloop executor virtual …"), its
    // members, for the overview of everything.
    std::span<const Subcommand> (*members)() = nullptr;
    // Where the overview lists it: "Devices"; inherited from the one before.
    const char *group = nullptr;
};

// Runs arguments[1]'s subcommand of `family` (arguments[0] is how the
// person called the family: "cloop forward"). --help and -h print
// familyHelp(); an unknown or missing word says so, with what was likely
// meant and where the usage is, and returns 2.
int runSubcommand(
    const QStringList &arguments, std::span<const Subcommand> family, const QString &summary);
bool hasSubcommand(std::span<const Subcommand> family, const QString &name);
QStringList subcommandNames(std::span<const Subcommand> family);

// "Usage: PROGRAM <command> [options]", the summary, then each member with
// its synopsis, its summary and an example.
QString familyHelp(
    const QString &program, std::span<const Subcommand> family, const QString &summary);
// The two-level overview of a program's families ("cloop --help"): each
// member's member on a line with its summary, under its group's heading.
QString overviewHelp(
    const QString &program, std::span<const Subcommand> families, const QString &summary);

// The error for a word that names no member: "unknown command \"lst\"
// (did you mean \"list\"?)" or the list of those there are.
QString unknownSubcommand(const QString &typed, std::span<const Subcommand> family);

} // namespace cloop::util
