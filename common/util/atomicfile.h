#pragma once

#include "common/result.h"

#include <QByteArray>
#include <QString>

namespace cloop::util {

// Replaces `path` with `contents` so that a crash at any moment leaves
// either the old file or the new one, never a torn or world-readable one:
// the temporary file is created with `mode` (never wider), written, fsynced,
// renamed over the target, and the directory fsynced. Missing parent
// directories are created 0700.
Status writeFileAtomically(const QString &path, const QByteArray &contents, int mode = 0600);

// Creates the folder (0700, with missing parents) if needed and proves a
// file can be created in it, so a secret that arrives later can be kept.
Status probeWritableFolder(const QString &folder);

// Permission bits of an existing file, or -1.
int fileMode(const QString &path);

} // namespace cloop::util
