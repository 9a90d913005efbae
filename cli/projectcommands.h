#pragma once

#include "common/util/subcommands.h"

#include <span>

namespace cloop::cli {

// `cloop project add|list|grant …`: projects and people's roles in them.
std::span<const util::Subcommand> projectCommands();

} // namespace cloop::cli
