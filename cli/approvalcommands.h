#pragma once

#include <QStringList>

namespace cloop::cli {

// `cloop approvals list|approve|deny …`: the inbox of binding requests.
// arguments[0] is "approvals".
int runApprovalCommand(const QStringList &arguments);

} // namespace cloop::cli
