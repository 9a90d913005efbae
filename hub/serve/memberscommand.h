#pragma once

#include <QString>
#include <QStringList>

namespace cloop::hub {

// `cloop hub members`: the members of the hub cluster as the records show
// them, each alive (its lease runs), dead (it lapsed) or left.
int runMembersCommand(const QString &name, const QStringList &arguments);

} // namespace cloop::hub
