#pragma once

#include "common/api/recordfields.h"

namespace cloop::api {

// A name for an agent plus sandbox settings (GET /api/virtual-executors).
struct VirtualExecutor
{
    qint64 id = 0;
    QString name;
    qint64 executorId = 0;
    QString executor; // the agent's name
    QString runtime; // empty: the agent's default OCI runtime
    QDateTime createdAt;
    QString createdBy;

    static Result<VirtualExecutor> fromJson(const QJsonObject &object);
    QJsonObject toJson() const;

    friend bool operator==(const VirtualExecutor &, const VirtualExecutor &) = default;
};

} // namespace cloop::api
