#pragma once

#include "common/protocol/logrecord.h"
#include "common/result.h"

#include <QList>
#include <QString>

namespace cloop::hub {

// Each run's output on disk, as the agent sent it: the log record stream
// (stdout, stderr and gap records with their offsets) in
// <data>/runs/<id>.log, appended as it arrives.
class RunLogStore
{
public:
    explicit RunLogStore(QString directory) : m_directory(std::move(directory)) { }

    Status append(qint64 runId, const QList<protocol::LogRecord> &records);
    // The records covering [fromOffset, …), at most about maxBytes of payload.
    Result<QList<protocol::LogRecord>> read(qint64 runId, quint64 fromOffset, qsizetype maxBytes) const;

private:
    QString pathOf(qint64 runId) const;

    QString m_directory;
};

} // namespace cloop::hub
