#pragma once

#include "common/result.h"

#include <QString>

namespace cloop::cli {

// Argument values checked before anything is sent, by the hub's own rules,
// so that a typo is a usage error (exit 2) with the rule in the message.

// A record id: a positive integer. `what` names it ("binding id").
Result<qint64> parseId(const QString &text, const QString &what);
// A project's absolute directory on the hub; a trailing slash is dropped.
Result<QString> checkProjectPath(const QString &text);
// A user name: 1-63 characters of a-z 0-9 . _ -.
Status checkUserName(const QString &name);
// A forwarder's or an executor's name, by the same rule; `noun` is whose.
Status checkDaemonName(const QString &name, QLatin1StringView noun);
// The value of a duration option (`option` is "--token-ttl"): 24h, 90m, 1d12h.
Status checkDuration(const QString &text, const QString &option);

} // namespace cloop::cli
