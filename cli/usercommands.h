#pragma once

#include "common/util/subcommands.h"

#include <span>

namespace cloop::cli {

// `cloop user add|list …` and `cloop token create|list|revoke …`: people
// and their API tokens.
std::span<const util::Subcommand> userCommands();
std::span<const util::Subcommand> tokenCommands();

} // namespace cloop::cli
