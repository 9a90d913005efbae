#pragma once

#include "common/util/subcommands.h"

#include <QString>

#include <span>

namespace cloop::util {

// The completion script of a program whose commands are `families`, for
// bash or zsh (which loads the bash one through bashcompinit): commands and
// their members from the table, and a command's options, once a word starts
// with "-", from its own --help, so that they are never out of date.
// Empty for a shell it does not know.
QString completionScript(
    const QString &shell, const QString &program, std::span<const Subcommand> families);

} // namespace cloop::util
