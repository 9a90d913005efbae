#pragma once

#include "common/util/subcommands.h"

#include <span>

namespace cloop::cli {

// `cloop approvals list|approve|deny …`: the inbox of binding requests.
std::span<const util::Subcommand> approvalCommands();

} // namespace cloop::cli
