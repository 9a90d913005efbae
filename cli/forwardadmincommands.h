#pragma once

#include "common/util/subcommands.h"

#include <QStringList>

#include <span>

namespace cloop::cli {

// `cloop forward enroll|list|test|revoke|upgrade …`: administration of
// forwarders through the admin API.
std::span<const util::Subcommand> forwardAdminCommands();

} // namespace cloop::cli
