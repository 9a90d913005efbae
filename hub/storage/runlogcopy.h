#pragma once

#include "common/result.h"

#include <QString>

namespace cloop::hub {

class Database;

// A single hub's run logs (files in its data folder) copied into a
// cluster's database, as part of `cloop hub migrate --to`: each run's log
// as it is, trimmed where it was trimmed and ending where it ended, then
// both read back page by page and compared record by record. Nothing is
// trimmed on the way; the members apply their own limits when they start.
// The target's writes join the caller's open transaction, so a copy that
// fails leaves nothing behind once the caller rolls back.
class RunLogCopy
{
public:
    struct Report
    {
        qint64 runs = 0;
        // The output the copied logs hold, gaps left out.
        qint64 bytes = 0;
    };

    // A folder that does not exist holds no logs.
    static Result<Report> copy(const QString &directory, Database &to);
};

} // namespace cloop::hub
