#pragma once

#include "common/result.h"

#include <QString>

namespace cloop::util {

// "65536", "512KiB", "64MiB", "4GiB", "1TiB" (K, M, G, T and KB, MB, ... are
// read as the same powers of 1024, the way sizes of logs and disks are
// meant here). At most 2^62 bytes.
Result<qint64> parseByteSize(const QString &text);
// "64 MiB", "1.5 GiB", "512 bytes": for people.
QString formatByteSize(qint64 bytes);

} // namespace cloop::util
