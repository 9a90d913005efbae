#pragma once

#include "common/result.h"

#include <QList>
#include <QString>
#include <QStringList>

#include <optional>

namespace cloop::agent {

// How one harness is installed, as its vendor documents it: the program
// the agent runs (as the workload user) and the name it is then found by.
struct HarnessInstaller
{
    QString name; // on PATH afterwards: "claude"
    QString vendor; // who documents the command
    QStringList command; // argv, run as the workload user
};

// The official installers a hub administrator may ask a device to run; a
// harness without an entry is refused. The device's operator may add
// entries of their own (--harness-table FILE), never the hub.
class HarnessTable
{
public:
    static HarnessTable official();
    // The official entries and those of `file`: a JSON object of name ->
    // {"vendor", "command": [argv]}; an entry out of shape is an error
    // naming it, and a file entry replaces the official one of its name.
    static Result<HarnessTable> withFile(const QString &file);

    std::optional<HarnessInstaller> find(const QString &name) const;
    QStringList names() const;

    static constexpr qsizetype kMaxFileBytes = 64 * 1024;

private:
    QList<HarnessInstaller> m_installers;
};

} // namespace cloop::agent
