#include "daemon-agent/sandbox/runspec.h"

#include <QRegularExpression>

namespace cloop::agent {

namespace {

Error invalid(const QString &message)
{
    return Error::make(QStringLiteral("run_spec_invalid"), message, true);
}

bool matches(const QString &pattern, const QString &text)
{
    const QRegularExpression re(QRegularExpression::anchoredPattern(pattern));
    return re.match(text).hasMatch();
}

bool hasNul(const QString &text)
{
    return text.contains(QChar(u'\0'));
}

// podman's own minimum for --memory.
constexpr qint64 kMinimumMemoryBytes = 6LL * 1024 * 1024;

} // namespace

QString RunSpec::defaultImage()
{
    return QStringLiteral("localhost/cloop-busybox:latest");
}

QString RunSpec::defaultRuntime()
{
    // crun refuses this kernel's hybrid cgroup layout unless hugetlb is
    // moved to v1 first; runc works as is.
    return QStringLiteral("runc");
}

QList<Ulimit> RunSpec::defaultUlimits()
{
    return { Ulimit { QStringLiteral("nofile"), 20000, 20000 },
        Ulimit { QStringLiteral("nproc"), 4096, 4096 } };
}

Status RunSpec::validate() const
{
    // Only what a forwarded device needs; everything else stays dropped.
    for (const QString &capability : addedCapabilities) {
        if (capability != QLatin1String("NET_ADMIN") && capability != QLatin1String("NET_RAW"))
            return invalid(QStringLiteral("capability \"%1\" is not one a sandbox may be given")
                               .arg(capability.left(32)));
    }
    // USB device nodes only, named as the kernel names them.
    static const QRegularExpression usbNode(QStringLiteral("\\A/dev/bus/usb/[0-9]{3}/[0-9]{3}\\z"));
    for (const DeviceNode &node : deviceNodes) {
        if (!usbNode.match(node.sandboxPath).hasMatch())
            return invalid(QStringLiteral("device node \"%1\" is not a USB device node")
                               .arg(node.sandboxPath.left(64)));
        if (!node.hostPath.startsWith(QLatin1Char('/')) || node.hostPath.contains(QLatin1Char(':'))
            || node.hostPath.contains(QLatin1Char(',')))
            return invalid(QStringLiteral("device node path \"%1\" is not usable")
                               .arg(node.hostPath.left(128)));
    }
    // podman's container name alphabet; the id also appears in labels.
    if (!matches(QStringLiteral("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}"), runId))
        return invalid(
            QStringLiteral("run id \"%1\" is not usable in a container name").arg(runId));

    // An image that starts with '-' would be parsed as one more option.
    if (image.isEmpty() || image.startsWith(QLatin1Char('-')) || hasNul(image)
        || image.contains(QRegularExpression(QStringLiteral("\\s")))) {
        return invalid(QStringLiteral("image reference \"%1\" is not valid").arg(image));
    }

    if (argv.isEmpty() || argv.constFirst().isEmpty())
        return invalid(QStringLiteral("the command is empty"));
    for (const QString &arg : argv) {
        if (hasNul(arg))
            return invalid(QStringLiteral("a command argument contains a NUL byte"));
    }

    for (auto it = env.cbegin(); it != env.cend(); ++it) {
        if (!matches(QStringLiteral("[A-Z_][A-Z0-9_]*"), it.key()))
            return invalid(
                QStringLiteral("environment name \"%1\" is not [A-Z_][A-Z0-9_]*").arg(it.key()));
        // Values travel in an env file (one variable a line), not on
        // podman's command line where every local user could read them.
        if (hasNul(it.value()) || it.value().contains(QLatin1Char('\n'))) {
            return invalid(QStringLiteral("environment variable %1 contains a NUL byte or a line "
                                          "break, which cannot be passed to the sandbox")
                               .arg(it.key()));
        }
    }

    // ':' and ',' separate fields of podman's --volume syntax.
    if (!workdir.startsWith(QLatin1Char('/')) || hasNul(workdir)
        || workdir.contains(QLatin1Char(':')) || workdir.contains(QLatin1Char(','))
        || workdir.contains(QLatin1Char('\n'))) {
        return invalid(QStringLiteral("workdir \"%1\" must be an absolute host path without ':', "
                                      "',' or line breaks")
                           .arg(workdir));
    }

    if (!matches(QStringLiteral("[A-Za-z0-9][A-Za-z0-9_.-]*|/[A-Za-z0-9_./-]+"), runtime))
        return invalid(QStringLiteral("runtime \"%1\" is not a runtime name").arg(runtime));

    for (const Ulimit &limit : ulimits) {
        if (!matches(QStringLiteral("[a-z]+"), limit.name) || limit.soft < 0
            || limit.hard < limit.soft) {
            return invalid(QStringLiteral("ulimit %1=%2:%3 is not valid")
                               .arg(limit.name)
                               .arg(limit.soft)
                               .arg(limit.hard));
        }
    }

    if (memoryLimitBytes && *memoryLimitBytes < kMinimumMemoryBytes) {
        return invalid(QStringLiteral("memory limit %1 bytes is below podman's minimum of %2")
                           .arg(*memoryLimitBytes)
                           .arg(kMinimumMemoryBytes));
    }
    if (pidsLimit <= 0)
        return invalid(QStringLiteral("pids limit must be positive, not %1").arg(pidsLimit));
    if (tmpSizeBytes <= 0)
        return invalid(QStringLiteral("the /tmp size must be positive"));

    if (!user.isEmpty() && !matches(QStringLiteral("[0-9]+:[0-9]+"), user))
        return invalid(QStringLiteral("user \"%1\" is not uid:gid").arg(user));

    return {};
}

} // namespace cloop::agent
