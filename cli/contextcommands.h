#pragma once

#include "common/util/subcommands.h"

#include <span>

namespace cloop::cli {

// `cloop context list|use`: the stored logins, as kubectl's contexts.
std::span<const util::Subcommand> contextCommands();

} // namespace cloop::cli
