#include "hub/storage/runlogstore.h"

#include "common/logging.h"
#include "common/util/bytesize.h"
#include "hub/storage/database.h"
#include "hub/storage/databaserunlogstore.h"
#include "hub/storage/filerunlogstore.h"

#include <QDir>

#include <algorithm>
#include <limits>

namespace cloop::hub {

using protocol::LogRecord;

RunLogLimits RunLogLimits::unbounded()
{
    constexpr qint64 kEverything = std::numeric_limits<qint64>::max();
    return RunLogLimits { kEverything, kEverything };
}

Status RunLogLimits::check() const
{
    if (perRun < kSmallestPerRun)
        return Error::make(QStringLiteral("usage"),
            QStringLiteral("a run's log cap must be at least %1")
                .arg(util::formatByteSize(kSmallestPerRun)));
    if (total < perRun)
        return Error::make(QStringLiteral("usage"),
            QStringLiteral("the run log budget (%1) must be at least one run's cap (%2)")
                .arg(util::formatByteSize(total), util::formatByteSize(perRun)));
    return {};
}

qint64 RunLogLimits::segmentBytes() const
{
    return std::clamp<qint64>(perRun / 16, 64 * 1024, 4 * kMiB);
}

QList<LogRecord> continuationOf(quint64 end, const QList<LogRecord> &records)
{
    QList<LogRecord> out;
    out.reserve(records.size());
    for (const LogRecord &record : records) {
        if (record.end() <= end)
            continue; // stored already
        if (record.offset > end)
            protocol::appendGapRecords(out, end, record.offset); // lost before it reached the hub
        out.append(record.offset < end ? record.tailFrom(end) : record);
        end = record.end();
    }
    return out;
}

QString runLogDirectory(const QString &dataDir)
{
    return dataDir + QLatin1String("/runs");
}

Result<std::unique_ptr<RunLogStore>> openRunLogStore(Database &records, const QString &dataDir,
    RunLogLimits limits, RunLogStore::ActiveRuns activeRuns)
{
    if (records.dialect() == Database::Dialect::Sqlite) {
        auto files = FileRunLogStore::open(runLogDirectory(dataDir), limits, std::move(activeRuns));
        if (!files)
            return files.error();
        return std::unique_ptr<RunLogStore>(std::move(*files));
    }
    // Files a single hub wrote stay where they are: migrating copied them.
    const QDir folder(runLogDirectory(dataDir));
    if (folder.exists() && !folder.isEmpty(QDir::Files))
        qCInfo(lcHubDb).noquote() << QStringLiteral(
            "run logs are in the database; the files in %1 are left as they are (cloop hub "
            "migrate copies a single hub's logs into the database)")
                                         .arg(folder.path());
    auto shared = DatabaseRunLogStore::open(records, limits, std::move(activeRuns));
    if (!shared)
        return shared.error();
    return std::unique_ptr<RunLogStore>(std::move(*shared));
}

} // namespace cloop::hub
