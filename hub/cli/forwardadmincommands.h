#pragma once

#include <QStringList>

namespace cloop::cli {

// `cloop forward enroll|list|revoke …`: administration through the admin API.
bool isForwardAdminCommand(const QString &subcommand);
int runForwardAdminCommand(const QString &subcommand, const QStringList &arguments);

} // namespace cloop::cli
