#pragma once

#include "common/util/subcommands.h"

#include <span>

namespace cloop::hub {

// `cloop hub release add|list`: the signed packages the hub offers devices,
// kept in <data>/releases with their signatures in the database.
std::span<const util::Subcommand> releaseSteps();

} // namespace cloop::hub
