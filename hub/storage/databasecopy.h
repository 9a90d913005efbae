#pragma once

#include "common/result.h"

#include <QList>
#include <QString>
#include <QStringList>

namespace cloop::hub {

class Database;

// One hub's records moved into a cluster database (`cloop hub migrate
// --to`): every table in the order its references need, every id kept,
// then both sides read back in key order and compared row by row, value by
// value. The target must be empty (freshly migrated) and on the same
// schema. The copy is one transaction on each side: the source is held
// for writing meanwhile (a hub still running on it waits), and a copy that
// fails or does not compare leaves the target as empty as it was. Each
// identity sequence of the target starts after the highest id the source
// ever gave, deleted rows included, so no id is used twice. The hub's run
// logs, files beside its database, go into the target's run log tables in
// the same transaction and are compared too (RunLogCopy).
class DatabaseCopy
{
public:
    struct Table
    {
        QString name;
        qint64 rows = 0;
    };
    struct Report
    {
        QList<Table> tables;
        qint64 rows() const;
        // The run logs copied from files.
        qint64 runLogs = 0;
        qint64 runLogBytes = 0;
    };

    // The tables of the current schema, each after those it refers to.
    static QStringList tablesInOrder();

    // `runLogDirectory`: where the hub keeps its run logs; none, no logs.
    static Result<Report> copy(Database &from, Database &to, const QString &runLogDirectory = {});
};

} // namespace cloop::hub
