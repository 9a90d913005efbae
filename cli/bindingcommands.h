#pragma once

#include "common/api/binding.h"

#include "common/util/subcommands.h"

#include <QStringList>

#include <span>

namespace cloop::cli {

// `cloop forward bind|bindings|unbind|request …`: lending a forwarder's
// device to a project's runs, directly or by asking an administrator.
std::span<const util::Subcommand> bindingCommands();

// "binding 7: forwarder 3 "lab" → /srv/projects/bench until 2026-11-30 01:34 UTC (in 8h)"
// and, on further lines, what narrows it.
QStringList describeBinding(const api::Binding &binding);
// "eth1 10.77.0.2/24", "-" when a binding or request names no target.
QString targetText(const QString &target, const QString &address);
// The virtual executor, or "any".
QString executorText(const QString &virtualExecutor);

} // namespace cloop::cli
