#pragma once

#include "common/release/releasesignature.h"
#include "common/result.h"

#include <QDateTime>
#include <QList>
#include <QString>

namespace cloop::hub {

class Database;

// A package the hub offers devices, as its verified signature states it.
struct ReleaseRecord
{
    qint64 id = 0;
    release::ReleaseStatement statement;
    QString keyId;
    QString fileName; // in <data>/releases
    qint64 sizeBytes = 0;
    QByteArray signatureFile; // ReleaseSignature::toFile()
    QDateTime addedAt;
    QString addedBy;
};

class ReleaseStore
{
public:
    explicit ReleaseStore(Database &db)
        : m_db(db)
    { }

    // Refuses a second file for one package and version.
    Result<ReleaseRecord> add(const release::ReleaseSignature &signature, const QString &fileName,
        qint64 sizeBytes, const QString &actor);
    Result<QList<ReleaseRecord>> list();

private:
    Database &m_db;
};

} // namespace cloop::hub
