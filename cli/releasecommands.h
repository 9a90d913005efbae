#pragma once

#include "common/util/subcommands.h"

#include <span>

namespace cloop::cli {

// `cloop release keygen|sign|verify …`: the release key, and the signature
// beside each package that devices verify before they install it.
std::span<const util::Subcommand> releaseCommands();

} // namespace cloop::cli
