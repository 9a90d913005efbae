#include "hub/storage/runlogcopy.h"

#include "hub/storage/database.h"
#include "hub/storage/databaserunlogstore.h"
#include "hub/storage/filerunlogstore.h"

#include <QDir>

using namespace Qt::StringLiterals;

namespace cloop::hub {

namespace {

// What is read, and written, at a time.
constexpr qsizetype kPageBytes = 1024 * 1024;

Error copyError(const QString &message)
{
    return Error::make(u"migrate_failed"_s, message);
}

// Copies one run's log from where it starts (what the hub trimmed before
// stays trimmed); the output bytes it holds.
Result<qint64> copyLog(const FileRunLogStore &from, DatabaseRunLogStore &to, qint64 runId)
{
    auto first = from.read(runId, 0, 1);
    if (!first)
        return first.error();
    if (Status begun = to.beginAt(runId, first->trimmedBefore); !begun)
        return begun.error();
    qint64 bytes = 0;
    for (quint64 offset = first->trimmedBefore;;) {
        auto page = from.read(runId, offset, kPageBytes);
        if (!page)
            return page.error();
        if (page->records.isEmpty())
            return bytes;
        if (Status stored = to.append(runId, page->records); !stored)
            return stored.error();
        for (const protocol::LogRecord &record : std::as_const(page->records))
            bytes += record.payload.size();
        offset = page->records.constLast().end();
    }
}

// Both sides from offset 0, page by page: the same records, the same
// trimmed start, the same end.
Status compareLog(FileRunLogStore &from, DatabaseRunLogStore &to, qint64 runId)
{
    const auto differs = [runId](quint64 offset, const QString &what) {
        return copyError(u"the log of run %1 differs in the target at offset %2: %3"_s.arg(runId)
                             .arg(offset)
                             .arg(what));
    };
    for (quint64 offset = 0;;) {
        auto mine = from.read(runId, offset, kPageBytes);
        if (!mine)
            return mine.error();
        auto theirs = to.read(runId, offset, kPageBytes);
        if (!theirs)
            return theirs.error();
        if (mine->trimmedBefore != theirs->trimmedBefore)
            return differs(offset,
                u"it is trimmed before %1, not %2"_s.arg(theirs->trimmedBefore)
                    .arg(mine->trimmedBefore));
        if (mine->records != theirs->records)
            return differs(offset, u"other records"_s);
        if (mine->records.isEmpty())
            break;
        offset = mine->records.constLast().end();
    }
    auto mineEnd = from.endOf(runId);
    if (!mineEnd)
        return mineEnd.error();
    auto theirEnd = to.endOf(runId);
    if (!theirEnd)
        return theirEnd.error();
    if (*mineEnd != *theirEnd)
        return differs(*theirEnd, u"it ends there, not at %1"_s.arg(*mineEnd));
    return {};
}

} // namespace

Result<RunLogCopy::Report> RunLogCopy::copy(const QString &directory, Database &to)
{
    Report report;
    if (!QDir(directory).exists())
        return report;
    // Limits that trim nothing on either side: the logs move as they are.
    auto from = FileRunLogStore::open(directory, RunLogLimits::unbounded(), {});
    if (!from)
        return copyError(
            u"cannot read the run logs in %1: %2"_s.arg(directory, from.error().message));
    auto into = DatabaseRunLogStore::open(to, RunLogLimits::unbounded(), {});
    if (!into)
        return into.error();
    const QList<qint64> runs = (*from)->runIds();
    for (const qint64 runId : runs) {
        auto bytes = copyLog(**from, **into, runId);
        if (!bytes)
            return copyError(
                u"cannot copy the log of run %1: %2"_s.arg(runId).arg(bytes.error().message));
        report.bytes += *bytes;
        ++report.runs;
    }
    for (const qint64 runId : runs) {
        if (Status same = compareLog(**from, **into, runId); !same)
            return same.error();
    }
    return report;
}

} // namespace cloop::hub
