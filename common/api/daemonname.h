#pragma once

#include "common/result.h"

#include <QLatin1StringView>
#include <QString>

namespace cloop::api {

// Names of forwarders, executors, virtual executors and users: 1-63
// characters of a-z, 0-9, '.', '_' or '-', starting with a letter or digit.
// `noun` says whose name it is in the refusal. The hub enforces it; the
// command line checks it first, so a bad name is an argument error.
Status validateDaemonName(const QString &name, QLatin1StringView noun);

} // namespace cloop::api
