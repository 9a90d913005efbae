#include "daemon-agent/harness/harnesspath.h"

#include <QFileInfo>

namespace cloop::agent {

using namespace Qt::StringLiterals;

QStringList harnessDirectoryCandidates(const QString &home)
{
    QStringList candidates;
    for (const QString &folder :
        { u".local/bin"_s, u".npm-global/bin"_s, u".bun/bin"_s, u".cargo/bin"_s, u".deno/bin"_s })
        candidates.append(home + u'/' + folder);
    return candidates;
}

QStringList existingHarnessDirectories(const QString &home)
{
    QStringList existing;
    if (home.isEmpty())
        return existing;
    for (const QString &folder : harnessDirectoryCandidates(home))
        if (QFileInfo(folder).isDir())
            existing.append(folder);
    return existing;
}

QString prependToPath(const QString &path, const QStringList &directories)
{
    QStringList entries = path.split(u':', Qt::SkipEmptyParts);
    QStringList added;
    for (const QString &directory : directories)
        if (!entries.contains(directory) && !added.contains(directory))
            added.append(directory);
    return (added + entries).join(u':');
}

} // namespace cloop::agent
