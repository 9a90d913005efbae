#pragma once

#include "common/result.h"

#include <QByteArray>
#include <QMap>
#include <QString>

namespace cloop::hub {

// A hub's SQLite database copied while the hub runs, and put back.
//
// The copy is one consistent moment of the database (VACUUM INTO reads
// one snapshot, so a change the hub makes meanwhile is in it wholly or
// not at all) and carries the files a hub needs beside it to be the same
// hub, its TLS key above all: restored without it, every daemon pinned to
// the hub would refuse it. It is a SQLite file itself (0600: it holds the
// key and credentials' hashes), written under a temporary name and renamed,
// so a backup that failed halfway never looks like one.
class SqliteBackup
{
public:
    using Files = QMap<QString, QByteArray>; // relative path -> content

    // Refuses a `target` that exists: a backup never overwrites anything.
    static Status write(const QString &databasePath, const QString &target, const Files &files);

    // Writes the database of `backup` to `databasePath`, which must not
    // exist, and returns the files it carried; refuses a file that is not
    // a whole cloop backup before writing anything.
    static Result<Files> restore(const QString &backup, const QString &databasePath);
};

} // namespace cloop::hub
