#include "common/api/enrolleddaemon.h"

#include "common/api/recordtables.h"

namespace cloop::api {

void EnrolledDaemon::readFrom(RecordReader &read)
{
    readFields(read, *this, tables::enrolledDaemonFields);
}

void EnrolledDaemon::writeTo(QJsonObject &object) const
{
    writeFields(*this, object, tables::enrolledDaemonFields);
}

} // namespace cloop::api
