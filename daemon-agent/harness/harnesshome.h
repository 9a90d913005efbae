#pragma once

#include "common/result.h"
#include "daemon-agent/harness/harnesstable.h"

#include <QString>

#include <chrono>

namespace cloop::agent {

// Where harnesses the hub asks for are installed, and how: the workload
// user's home for them (its per-user folders go on PATH), the device's
// installer table and how long one install may take.
struct HarnessInstalls
{
    HarnessTable table = HarnessTable::official();
    QString home = defaultHome();
    std::chrono::seconds timeout { 900 };

    // A root agent's workload user (cloop-run) has no home of its own, and
    // the unit hides /home and /root: harnesses live in the agent's state
    // folder, which that user may traverse. Any other agent's workloads run
    // as itself, whose home is the natural place.
    static QString defaultHome();
};

// Makes `home` (and missing parents, 0755) if needed; when `owner` is a
// "uid:gid" (a root agent's workload user) the home becomes theirs, mode
// 0755 so the programs in it can be run by the agent and by host-process
// workloads. A home that is a symlink or owned by someone else is refused.
Status ensureHarnessHome(const QString &home, const QString &owner);

} // namespace cloop::agent
