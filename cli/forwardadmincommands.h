#pragma once

#include <QStringList>

namespace cloop::cli {

// `cloop forward enroll|list|revoke …`: administration through the admin API.
bool isForwardAdminCommand(const QString &subcommand);
// arguments[0] is "forward", arguments[1] the subcommand.
int runForwardAdminCommand(const QStringList &arguments);

} // namespace cloop::cli
