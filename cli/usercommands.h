#pragma once

#include <QStringList>

namespace cloop::cli {

// `cloop user add|list …` (arguments[0] is "user") and `cloop token create …`
// (arguments[0] is "token"): people and their API tokens.
int runUserCommand(const QStringList &arguments);
int runTokenCommand(const QStringList &arguments);

} // namespace cloop::cli
