#pragma once

#include "common/util/subcommands.h"

#include <QStringList>

#include <span>

namespace cloop::cli {

// `cloop executor enroll|list|revoke|upgrade|agent|virtual|harness …`
// ("agent" is run by the umbrella, which gives it its kernel).
std::span<const util::Subcommand> executorCommands();

} // namespace cloop::cli
