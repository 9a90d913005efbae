#include "daemon-agent/runs/runpolicy.h"

#include <QRegularExpression>

namespace cloop::agent {

namespace {
Error notAllowed(const QString &message)
{
    return Error::make(QStringLiteral("run_not_allowed"), message, true);
}

// containers/image's transports: each reads an image from somewhere other
// than a registry, most of them from a host path ("dir:/root").
bool isImageTransport(const QString &name)
{
    static const QStringList transports {
        QStringLiteral("containers-storage"),
        QStringLiteral("dir"),
        QStringLiteral("docker"),
        QStringLiteral("docker-archive"),
        QStringLiteral("docker-daemon"),
        QStringLiteral("oci"),
        QStringLiteral("oci-archive"),
        QStringLiteral("ostree"),
        QStringLiteral("sif"),
        QStringLiteral("tarball"),
    };
    return transports.contains(name);
}
} // namespace

RunPolicy::RunPolicy(protocol::AgentCapabilities::Mode mode, bool agentIsRoot)
    : m_mode(mode)
    , m_agentIsRoot(agentIsRoot)
{ }

Status RunPolicy::checkImage(const QString &image)
{
    // The reference grammar of distribution/reference: [domain[:port]/]path
    // components of lower-case alphanumerics and separators, an optional
    // tag and an optional digest. A transport's "name:/path" never fits it.
    static const QRegularExpression reference(QRegularExpression::anchoredPattern(QStringLiteral(
        "(?:(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])(?:\\.(?:[A-Za-z0-9]|[A-Za-z0-9][A-"
        "Za-z0-9-]*[A-Za-z0-9]))*"
        "(?::[0-9]+)?/)?"
        "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
        "(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?"
        "(?:@[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9A-Fa-f]{32,})?")));
    if (image.size() > 255 || !reference.match(image).hasMatch())
        return notAllowed(
            QStringLiteral("image \"%1\" is not a container image reference (name[:tag][@digest])")
                .arg(image.left(80)));
    // "dir:x" reads like a one-part name with a tag, and is a transport.
    const qsizetype colon = image.indexOf(QLatin1Char(':'));
    if (colon > 0 && !image.left(colon).contains(QLatin1Char('/'))
        && isImageTransport(image.left(colon)))
        return notAllowed(QStringLiteral(
            "image \"%1\" names the image transport \"%2\", which reads an image from "
            "this machine rather than a registry")
                              .arg(image.left(80), image.left(colon)));
    return {};
}

Status RunPolicy::checkRuntime(const QString &runtime)
{
    // By name only: the engine looks a name up in its own configuration,
    // which is this machine's; a path would run any binary as the runtime.
    static const QRegularExpression name(
        QRegularExpression::anchoredPattern(QStringLiteral("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")));
    if (!name.match(runtime).hasMatch())
        return notAllowed(
            QStringLiteral("runtime \"%1\" is not the name of a runtime the container engine has "
                           "registered (a path to a runtime binary is never accepted)")
                .arg(runtime.left(80)));
    return {};
}

Status RunPolicy::check(const protocol::RunStart &run) const
{
    // A sandboxed run needs a container agent; a host-process run an agent
    // its operator started in host mode. Neither falls back to the other.
    const bool hostMode = m_mode == protocol::AgentCapabilities::Mode::Host;
    if (run.hostProcess && !hostMode)
        return notAllowed(
            QStringLiteral("host-process runs need an agent in host mode; this agent runs every "
                           "workload in a sandbox"));
    if (!run.hostProcess && hostMode)
        return notAllowed(
            QStringLiteral("this agent is in host mode and has no sandbox for the run"));
    if (run.hostProcess && !m_agentIsRoot)
        return notAllowed(QStringLiteral(
            "this host-mode agent does not run as root, so a host-process workload would "
            "run as the agent's own user, who can read the agent's credential and act "
            "as this executor; run the agent as root (workloads then run as the "
            "unprivileged run user) or in container mode"));
    // A host-process run uses neither (its image and runtime are ignored).
    if (run.hostProcess)
        return {};
    if (!run.image.isEmpty()) {
        if (Status image = checkImage(run.image); !image)
            return image;
    }
    if (!run.runtime.isEmpty()) {
        if (Status runtime = checkRuntime(run.runtime); !runtime)
            return runtime;
    }
    return {};
}

} // namespace cloop::agent
