#pragma once

#include "common/result.h"

#include <QLatin1StringView>
#include <QString>

namespace cloop::agent {

// The one folder of the device where runs keep their files (~/.cloop/work
// by default). The hub names a run's workspace by a path relative to it;
// the hub is not trusted with the filesystem, so every such path is
// resolved here, component by component, and refused when it would leave
// the root by `..`, by an absolute name or through a symlink — including a
// symlink that an earlier workload planted in its own workspace.
//
// When the agent runs as root, a workload must not run as root on the
// host's files: the workspace is handed to a dedicated unprivileged user
// (`cloop-run` unless configured) and workloadUser() says which uid:gid the
// sandbox should use.
class WorkRoot final
{
public:
    // The agent's own records, kept directly in the root: the runs with a
    // sandbox (RunSupervisor) and what is attached (AttachmentLedger). No
    // workspace may take one of these names, or a temporary sibling's.
    static constexpr QLatin1StringView kRunsFile { "agent-runs.json" };
    static constexpr QLatin1StringView kAttachmentsFile { "attachments.json" };

    static QString defaultPath();
    static QString defaultRunUser();

    explicit WorkRoot(QString rootPath = defaultPath(), QString runUser = defaultRunUser());

    const QString &rootPath() const { return m_rootPath; }
    const QString &runUser() const { return m_runUser; }
    // Eight hex digits naming this root on this machine. Sandbox names
    // carry it, so agents sharing a machine (of one hub or of several, whose
    // run ids overlap) never take or remove each other's containers.
    QString sandboxTag() const;

    // Whether `path`, existing or not, is the root or lies beneath it
    // (symlinks resolved as far as the path exists). The agent's credential
    // must not: a workspace would be made of its folder.
    bool contains(const QString &path) const;

    // Creates the root (and missing parents) 0700 and narrows an existing
    // root that is wider; refuses a root owned by another user, because
    // whoever owns it could swap its contents under the agent.
    Status ensureRoot() const;

    // The absolute, symlink-free host path of the run's workspace for
    // `relativeFromHub` ("project-3/run-41"), created if missing, mode 0700,
    // owned by the run user when the agent is root. Refuses absolute paths,
    // `..` components, NUL bytes, empty names, the names of the agent's own
    // records and anything that resolves outside the root, naming the path
    // in the error. Symlinks that stay inside the root are followed.
    Result<QString> runDirectory(const QString &relativeFromHub) const;

    // "uid:gid" of the run user when the agent is root (for RunSpec::user),
    // an empty string otherwise: a non-root agent's workloads already run
    // unprivileged. Fails when the run user does not exist.
    Result<QString> workloadUser() const;

private:
    QString m_rootPath;
    QString m_runUser;
};

} // namespace cloop::agent
