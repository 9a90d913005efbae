#pragma once

#include "common/result.h"

#include <QDateTime>
#include <QList>
#include <QString>

namespace cloop::hub {

class Database;

// A virtual executor: a name for one agent plus the sandbox settings its
// runs get (the OCI runtime). Runs may target it, and a binding narrowed to
// it applies only to runs on it.
struct VirtualExecutorRecord
{
    qint64 id = 0;
    QString name;
    qint64 executorId = 0;
    QString executorName;
    QString runtime; // empty: the agent's default
    QDateTime createdAt;
    QString createdBy;
};

class VirtualExecutorStore
{
public:
    explicit VirtualExecutorStore(Database &db)
        : m_db(db)
    { }

    Result<VirtualExecutorRecord> create(
        const QString &name, qint64 executorId, const QString &runtime, const QString &actor);
    Result<VirtualExecutorRecord> find(const QString &name);
    Result<QList<VirtualExecutorRecord>> list();

private:
    Database &m_db;
};

} // namespace cloop::hub
