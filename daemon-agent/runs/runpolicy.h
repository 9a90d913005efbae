#pragma once

#include "common/protocol/agentcapabilities.h"
#include "common/protocol/controlmessage.h"
#include "common/result.h"

#include <QString>

namespace cloop::agent {

// What of a hub's run.start this agent's own configuration allows. The hub
// chooses the command, the image by its registry name and the runtime by
// the name the engine registered; nothing it sends may reach beyond that:
// no image read from a host path (podman's dir:, oci-archive:, ...), no
// runtime binary named by its path, no host-process run where the workload
// could read the agent's credential, no sandboxed run in host mode. The
// workdir is WorkRoot's to confine.
class RunPolicy final
{
public:
    // `agentIsRoot`: whether the agent can run a workload as someone else
    // (the run user) than itself.
    RunPolicy(protocol::AgentCapabilities::Mode mode, bool agentIsRoot);

    // An error ("run_not_allowed") naming what the run asks beyond it.
    Status check(const protocol::RunStart &run) const;

    // A container image reference of a registry ("busybox",
    // "localhost/cloop-busybox:latest", "quay.io/x/y@sha256:…"), never an
    // image transport.
    static Status checkImage(const QString &image);
    // The name of a runtime the engine has registered ("runc", "crun").
    static Status checkRuntime(const QString &runtime);

private:
    protocol::AgentCapabilities::Mode m_mode;
    bool m_agentIsRoot;
};

} // namespace cloop::agent
