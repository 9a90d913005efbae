#pragma once

#include <QString>
#include <QStringList>

namespace cloop::agent {

// Where per-user installers put harness programs, under a home folder:
// ~/.local/bin (pip --user, pipx, curl installers), ~/.npm-global/bin (npm
// with that prefix), ~/.bun/bin, ~/.cargo/bin, ~/.deno/bin.
QStringList harnessDirectoryCandidates(const QString &home);
// Of those, the ones that exist now.
QStringList existingHarnessDirectories(const QString &home);

// `path` with `directories` in front, in their order, leaving out any it
// holds already: called twice, the variable does not grow.
QString prependToPath(const QString &path, const QStringList &directories);

} // namespace cloop::agent
