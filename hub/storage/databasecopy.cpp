#include "hub/storage/databasecopy.h"

#include "common/logging.h"
#include "hub/storage/database.h"
#include "hub/storage/runlogcopy.h"

#include <algorithm>

using namespace Qt::StringLiterals;

namespace cloop::hub {

namespace {

// Rows per INSERT, and per page read back: well inside PostgreSQL's 65,535
// parameters with the widest table.
constexpr int kBatchRows = 200;

Error copyError(const QString &message)
{
    return Error::make(u"migrate_failed"_s, message);
}

struct Shape
{
    QStringList columns;
    QStringList key; // the primary key's columns, in order
    bool integerId = false; // the key is "id": read in pages by it
};

Result<Shape> shapeOf(Database &source, const QString &table)
{
    // cid, name, type, notnull, dflt_value, pk (its position in the key)
    auto rows = source.query(u"PRAGMA table_info(%1)"_s.arg(table));
    if (!rows)
        return rows.error();
    Shape shape;
    QList<std::pair<int, QString>> key;
    while (rows->next()) {
        shape.columns.append(rows->value(1).toString());
        if (const int position = rows->value(5).toInt(); position > 0)
            key.append({ position, rows->value(1).toString() });
    }
    if (shape.columns.isEmpty())
        return copyError(u"the hub's database has no table %1"_s.arg(table));
    std::sort(key.begin(), key.end());
    for (const auto &[position, column] : key)
        shape.key.append(column);
    if (shape.key.isEmpty())
        return copyError(u"table %1 has no primary key to compare its rows by"_s.arg(table));
    shape.integerId = shape.key == QStringList { u"id"_s };
    return shape;
}

// One page of rows in key order: after `afterId` for a table keyed by id,
// else at `offset`.
Result<Rows> page(
    Database &db, const QString &table, const Shape &shape, qint64 afterId, qint64 offset)
{
    const QString columns = shape.columns.join(u", "_s);
    if (shape.integerId)
        return db.query(u"SELECT %1 FROM %2 WHERE id > ? ORDER BY id LIMIT %3"_s.arg(columns, table)
                            .arg(kBatchRows),
            { afterId });
    return db.query(u"SELECT %1 FROM %2 ORDER BY %3 LIMIT %4 OFFSET %5"_s
                        .arg(columns, table, shape.key.join(u", "_s))
                        .arg(kBatchRows)
                        .arg(offset));
}

QList<QVariantList> rowsOf(Rows &rows, int columns)
{
    QList<QVariantList> out;
    while (rows.next()) {
        QVariantList row;
        row.reserve(columns);
        for (int i = 0; i < columns; ++i)
            row.append(rows.value(i));
        out.append(row);
    }
    return out;
}

// Compared as the text either engine gives back: the same for integers
// (BIGINT or INTEGER), text and NULL on both. Raw bytes (a run log's
// records) byte for byte: they need not be text.
bool sameValue(const QVariant &a, const QVariant &b)
{
    if (a.isNull() || b.isNull())
        return a.isNull() == b.isNull();
    if (a.typeId() == QMetaType::QByteArray || b.typeId() == QMetaType::QByteArray)
        return a.toByteArray() == b.toByteArray();
    return a.toString() == b.toString();
}

QString describeKey(const Shape &shape, const QVariantList &row)
{
    QStringList parts;
    for (const QString &column : shape.key)
        parts.append(u"%1 %2"_s.arg(column, row.value(shape.columns.indexOf(column)).toString()));
    return parts.join(u", "_s);
}

Status insertRows(
    Database &target, const QString &table, const Shape &shape, const QList<QVariantList> &rows)
{
    if (rows.isEmpty())
        return {};
    const QString one = u"("_s + QStringList(shape.columns.size(), u"?"_s).join(u", "_s) + u")"_s;
    QVariantList binds;
    for (const QVariantList &row : rows)
        binds.append(row);
    auto inserted
        = target.query(u"INSERT INTO %1 (%2) VALUES %3"_s.arg(table, shape.columns.join(u", "_s),
                           QStringList(rows.size(), one).join(u", "_s)),
            binds);
    if (!inserted)
        return copyError(
            u"cannot write %1 into the target: %2"_s.arg(table, inserted.error().message));
    return {};
}

Result<qint64> copyTable(
    Database &source, Database &target, const QString &table, const Shape &shape)
{
    qint64 copied = 0;
    qint64 lastId = 0;
    for (;;) {
        auto rows = page(source, table, shape, lastId, copied);
        if (!rows)
            return rows.error();
        const QList<QVariantList> batch = rowsOf(*rows, int(shape.columns.size()));
        if (Status written = insertRows(target, table, shape, batch); !written)
            return written.error();
        copied += batch.size();
        if (batch.size() < kBatchRows)
            return copied;
        if (shape.integerId)
            lastId = batch.constLast().value(shape.columns.indexOf(u"id"_s)).toLongLong();
    }
}

// Both sides, page by page in key order: the same rows with the same values.
Status compareTable(
    Database &source, Database &target, const QString &table, const Shape &shape, qint64 expected)
{
    qint64 compared = 0;
    qint64 lastId = 0;
    for (;;) {
        auto fromRows = page(source, table, shape, lastId, compared);
        auto toRows = page(target, table, shape, lastId, compared);
        if (!fromRows)
            return fromRows.error();
        if (!toRows)
            return toRows.error();
        const QList<QVariantList> from = rowsOf(*fromRows, int(shape.columns.size()));
        const QList<QVariantList> to = rowsOf(*toRows, int(shape.columns.size()));
        for (qsizetype i = 0; i < std::min(from.size(), to.size()); ++i) {
            for (qsizetype c = 0; c < shape.columns.size(); ++c) {
                if (!sameValue(from[i][c], to[i][c]))
                    return copyError(u"%1 row %2 differs in the target: %3 is not the same"_s.arg(
                        table, describeKey(shape, from[i]), shape.columns[c]));
            }
        }
        if (from.size() != to.size())
            return copyError(
                u"%1 has %2 rows in the target after row %3 where the hub has %4"_s.arg(table)
                    .arg(to.size())
                    .arg(compared)
                    .arg(from.size()));
        compared += from.size();
        if (from.size() < kBatchRows)
            break;
        if (shape.integerId)
            lastId = from.constLast().value(shape.columns.indexOf(u"id"_s)).toLongLong();
    }
    if (compared != expected)
        return copyError(
            u"%1: %2 rows compared, %3 copied"_s.arg(table).arg(compared).arg(expected));
    return {};
}

// The highest id the source's table ever gave: its AUTOINCREMENT counter
// remembers deleted rows that MAX(id) forgets.
Result<qint64> highestIdEver(Database &source, const QString &table)
{
    auto rows = source.query(u"SELECT MAX(seq) FROM (SELECT seq FROM sqlite_sequence WHERE name "
                             "= ? UNION ALL SELECT MAX(id) FROM %1)"_s.arg(table),
        { table });
    if (!rows)
        return rows.error();
    return rows->next() ? rows->value(0).toLongLong() : 0;
}

Status checkEmpty(Database &target)
{
    for (const QString &table : DatabaseCopy::tablesInOrder()) {
        auto rows = target.query(u"SELECT COUNT(*) FROM %1"_s.arg(table));
        if (!rows)
            return rows.error();
        if (rows->next() && rows->value(0).toLongLong() != 0)
            return copyError(
                u"the target database already holds records (%1 rows in %2): a cluster database "
                "is filled once, from one hub, before its members start"_s.arg(
                    rows->value(0).toString(), table));
    }
    return {};
}

Status checkKnownTables(Database &source)
{
    auto rows = source.query(u"SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT "
                             "LIKE 'sqlite_%' ORDER BY name"_s);
    if (!rows)
        return rows.error();
    const QStringList known = DatabaseCopy::tablesInOrder();
    while (rows->next()) {
        const QString name = rows->value(0).toString();
        if (name != u"meta"_s && !known.contains(name))
            return copyError(u"the hub's database has a table this program does not know "
                             "(%1): migrate with the hub's own version of cloop"_s.arg(name));
    }
    return {};
}

} // namespace

qint64 DatabaseCopy::Report::rows() const
{
    qint64 total = 0;
    for (const Table &table : tables)
        total += table.rows;
    return total;
}

QStringList DatabaseCopy::tablesInOrder()
{
    return { u"users"_s, u"api_tokens"_s, u"forwarders"_s, u"enrollment_tokens"_s,
        u"forwarder_credentials"_s, u"audit_log"_s, u"projects"_s, u"project_roles"_s,
        u"binding_requests"_s, u"bindings"_s, u"executors"_s, u"executor_tokens"_s,
        u"executor_credentials"_s, u"virtual_executors"_s, u"runs"_s, u"releases"_s,
        u"hub_members"_s, u"session_holders"_s, u"cluster_events"_s, u"lent_devices"_s,
        u"run_logs"_s, u"run_log_chunks"_s, u"run_log_totals"_s };
}

Result<DatabaseCopy::Report> DatabaseCopy::copy(
    Database &from, Database &to, const QString &runLogDirectory)
{
    if (from.dialect() != Database::Dialect::Sqlite || to.dialect() != Database::Dialect::Postgres)
        return copyError(
            u"a hub's SQLite records move into a PostgreSQL database, not otherwise"_s);
    if (from.schemaVersion() != to.schemaVersion())
        return copyError(u"the hub's records are at schema %1 and the target at %2"_s.arg(
            QString::number(from.schemaVersion()), QString::number(to.schemaVersion())));
    // Held for writing: a hub still running on the file waits until the
    // copy is done, and nothing it writes is half copied.
    Database::Transaction reading(from);
    if (Status begun = reading.begin(); !begun)
        return copyError(u"cannot hold the hub's database: %1 (is the hub still running?)"_s.arg(
            begun.error().message));
    Database::Transaction writing(to);
    if (Status begun = writing.begin(); !begun)
        return begun.error();
    if (Status known = checkKnownTables(from); !known)
        return known.error();
    if (Status empty = checkEmpty(to); !empty)
        return empty.error();

    Report report;
    QList<Shape> shapes;
    for (const QString &table : tablesInOrder()) {
        auto shape = shapeOf(from, table);
        if (!shape)
            return shape.error();
        auto copied = copyTable(from, to, table, *shape);
        if (!copied)
            return copied.error();
        if (shape->integerId) {
            auto highest = highestIdEver(from, table);
            if (!highest)
                return highest.error();
            if (*highest > 0) {
                auto set = to.query(
                    u"SELECT setval(pg_get_serial_sequence(?, 'id'), ?)"_s, { table, *highest });
                if (!set)
                    return copyError(
                        u"cannot move the id sequence of %1: %2"_s.arg(table, set.error().message));
            }
        }
        report.tables.append(Table { table, *copied });
        shapes.append(*shape);
    }
    for (qsizetype i = 0; i < report.tables.size(); ++i) {
        const Table &table = report.tables.at(i);
        if (Status same = compareTable(from, to, table.name, shapes.at(i), table.rows); !same)
            return same.error();
    }
    if (!runLogDirectory.isEmpty()) {
        // Held for writing, the hub cannot add to its logs meanwhile either.
        auto logs = RunLogCopy::copy(runLogDirectory, to);
        if (!logs)
            return logs.error();
        report.runLogs = logs->runs;
        report.runLogBytes = logs->bytes;
    }
    if (Status committed = writing.commit(); !committed)
        return copyError(u"cannot commit the copy: %1"_s.arg(committed.error().message));
    if (Status released = reading.commit(); !released)
        qCWarning(lcHub).noquote() << "the hub's database:" << released.error().message;
    return report;
}

} // namespace cloop::hub
